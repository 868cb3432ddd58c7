#!/bin/sh
# make bench: speed and size of recording and simulation against Cachegrind,
# on scripts/bench.c (about 400 million instructions).  Every time is the
# best of three runs; peak memory is the largest resident set of any
# process of the run (for record: the Valgrind tool process or cgtrace).
set -eu
cd "$(dirname "$0")/.."
B=build/bench
mkdir -p "$B"
cc -O2 -g -o "$B/bench" scripts/bench.c
CFG="--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"
RUNS=${BENCH_RUNS:-3}

# measure NAME COMMAND...: best wall time and peak RSS of RUNS runs, in
# $B/NAME.time as "seconds kilobytes".
measure() {
	name=$1
	shift
	python3 - "$RUNS" "$@" > "$B/$name.time" <<'EOF'
import resource, subprocess, sys, time
runs, cmd = int(sys.argv[1]), sys.argv[2:]
best = None
for _ in range(runs):
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    elapsed = time.perf_counter() - start
    best = elapsed if best is None else min(best, elapsed)
print("%.3f %d" % (best, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
EOF
}
seconds() { cut -d' ' -f1 "$B/$1.time"; }
megabytes() { awk '{ printf "%.0f", $2 / 1024 }' "$B/$1.time"; }
ratio() { awk -v a="$(seconds "$1")" -v b="$(seconds "$2")" 'BEGIN { printf "%.2f", a / b }'; }

rm -f "$B/trace.zst"
measure native "$B/bench"
measure cachegrind valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes $CFG \
	--cachegrind-out-file="$B/cachegrind.out" "$B/bench"
measure record ./cgtrace record -q -o "$B/trace.zst" -- "$B/bench"
measure simulate ./cgtrace simulate -q --branch-sim=yes $CFG -o "$B/cgtrace.out" "$B/trace.zst"

ir=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$B/cachegrind.out")
size=$(stat -c %s "$B/trace.zst")
same=no
cmp -s "$B/cachegrind.out" "$B/cgtrace.out" && same=yes

echo "benchmark: scripts/bench.c, $ir instructions; caches $CFG; best of $RUNS"
printf '%-34s %7.2f s\n' "native" "$(seconds native)"
printf '%-34s %7.2f s %16s peak %4s MB\n' "cachegrind --branch-sim=yes" "$(seconds cachegrind)" "" "$(megabytes cachegrind)"
printf '%-34s %7.2f s  %5s x cachegrind peak %4s MB\n' "cgtrace record" "$(seconds record)" "$(ratio record cachegrind)" "$(megabytes record)"
printf '%-34s %7.2f s  %5s x cachegrind peak %4s MB\n' "cgtrace simulate --branch-sim=yes" "$(seconds simulate)" "$(ratio simulate cachegrind)" "$(megabytes simulate)"
awk -v ir="$ir" -v s="$(seconds simulate)" 'BEGIN { printf "%-34s %7.0f M instructions/s\n", "simulate throughput", ir / s / 1e6 }'
awk -v ir="$ir" -v size="$size" 'BEGIN { printf "%-34s %7.1f MB, %.3f bytes/instruction\n", "trace size", size / 1e6, size / ir }'
echo "simulate's cachegrind.out identical to Cachegrind's: $same"
