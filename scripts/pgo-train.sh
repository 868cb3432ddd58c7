#!/bin/sh
# Trains the hot loops for profile-guided optimisation (the Makefile's
# PGO): DIR/cgtrace, built with the Makefile's PGO_SRC instrumented,
# records two programs that are not the benchmark -- Debian's sort (calls,
# returns, libc, threads) and examples/matrix.c (loops and cache misses)
# -- and simulates them as Cachegrind (one configuration, an L2, a sweep)
# and as Callgrind with the options people use (cache use too), which
# writes a profile per file, DIR/NAME.gcda.  Usage: pgo-train.sh DIR
set -eu
dir=$1
work=$dir/train
rm -rf "$work" "$dir"/*.gcda
mkdir -p "$work" "$dir/lib/cgtrace"
# the Valgrind tool, where DIR/cgtrace looks for it
ln -sf "$(pwd)/lib/cgtrace/cgtrace-amd64-linux" "$dir/lib/cgtrace/"
cgtrace=$dir/cgtrace

cc -O1 -g -o "$work/matrix" examples/matrix.c
awk 'BEGIN { srand(1); for (i = 0; i < 20000; i++) {
	w = ""; for (k = 0; k < 8; k++) w = w sprintf("%c", 97 + int(rand() * 10));
	printf "%d %s\n", int(rand() * 1e9), w } }' > "$work/words"

LC_ALL=C "$cgtrace" record -q -o "$work/sort.zst" -- sort -k2 "$work/words" > /dev/null
"$cgtrace" record -q -o "$work/matrix.zst" -- "$work/matrix" > /dev/null
for t in sort matrix; do
	"$cgtrace" simulate -q --branch-sim=yes -o "$work/$t.0" "$work/$t.zst"
	"$cgtrace" simulate -q --branch-sim=yes --L2=262144,8,64 -o "$work/$t.l2" "$work/$t.zst"
	"$cgtrace" simulate -q --branch-sim=yes --D1=4k..64k,1..8,64 --LL=2M..8M,16,64 \
		-o "$work/$t.%c" "$work/$t.zst"
	"$cgtrace" simulate -q --tool=callgrind --callgrind-out-file="$work/$t.1" "$work/$t.zst"
	"$cgtrace" simulate -q --tool=callgrind --cache-sim=yes --branch-sim=yes \
		--callgrind-out-file="$work/$t.2" "$work/$t.zst"
	"$cgtrace" simulate -q --tool=callgrind --simulate-wb=yes --simulate-hwpref=yes \
		--branch-sim=yes --callgrind-out-file="$work/$t.3" "$work/$t.zst"
	"$cgtrace" simulate -q --branch-sim=yes --simulate-wb=yes --simulate-hwpref=yes \
		-o "$work/$t.wb" "$work/$t.zst"
	"$cgtrace" simulate -q --tool=callgrind --cacheuse=yes --branch-sim=yes \
		--callgrind-out-file="$work/$t.4" "$work/$t.zst"
	"$cgtrace" simulate -q --cacheuse=yes -o "$work/$t.use" "$work/$t.zst"
done
test -s "$dir/callgraph.gcda"
test -s "$dir/sim.gcda"
test -s "$dir/hier.gcda"
test -s "$dir/level_lru.gcda"
rm -rf "$work"
