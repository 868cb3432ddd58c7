# Replacement policies other than LRU (--<L>-replacement=fifo|plru): the totals
# of real programs' traces against the independent reference model
# (tests/tools/refsim.py, a list per set), in small caches where the order
# of replacement matters; a sweep's files their single runs'; the same
# files on any number of threads; the call graph's; what is refused.
source "$(dirname "$0")/../lib.sh"

programs=(loops recursion strings ptrchase)
policies=("--LL-replacement=fifo" "--D1-replacement=fifo --LL-replacement=fifo"
	"--I1-replacement=fifo --D1-replacement=fifo --LL-replacement=fifo"
	"--I1-replacement=plru --D1-replacement=plru --LL-replacement=plru"
	"--D1-replacement=plru --LL-replacement=fifo")
plan $((${#programs[@]} * ${#policies[@]} + 4 + 1 + 2 + 11 + 12))

small="--I1=4096,2,64 --D1=4096,4,64 --LL=65536,4,64"
refsim() { python3 "$ROOT/tests/tools/refsim.py" "$@" | sed 'N; s/\n/ = /'; }
names_and_totals() {
	sed -n 's/^events: *//p; s/^summary: *//p' "$1" 2>/dev/null | sed 's/ *$//' | sed 'N; s/\n/ = /'
}

for p in "${programs[@]}"; do
	clean_env "$CGTRACE" record -q -o $p.zst -- "$PROGS/$p" >/dev/null 2>&1
	"$CGTRACE" dump $p.zst > $p.dump 2>/dev/null
	for pol in "${policies[@]}"; do
		"$CGTRACE" simulate -q $small $pol -o $p.out $p.zst
		check_eq "$p, $pol: the reference model's totals" \
			"$(refsim $small $pol < $p.dump)" "$(names_and_totals $p.out)"
	done
done

# A sweep with a FIFO D1: every file its configuration's run alone.
"$CGTRACE" simulate -q --I1=4096,2,64 --D1=2k..8k,2,64 --LL=65536,4,64 --D1-replacement=fifo \
	-o "sweep.%c" strings.zst
check_eq "a FIFO sweep of 3 D1s: 3 files" 3 "$(ls sweep.* 2>/dev/null | wc -l)"
for d1 in 2048 4096 8192; do
	"$CGTRACE" simulate -q --I1=4096,2,64 --D1=$d1,2,64 --LL=65536,4,64 --D1-replacement=fifo \
		-o "single.$d1" strings.zst
	swept=$(grep -l "^desc: D1 cache: *$d1 B" sweep.* 2>/dev/null | head -n 1)
	check_same_file "the FIFO sweep's D1=$d1 file is its single run's" "single.$d1" "${swept:-none}"
done

for t in 1 8; do
	"$CGTRACE" simulate -q $small --D1-replacement=fifo --LL-replacement=fifo --threads=$t \
		-o "threads$t.out" loops.zst
done
check_same_file "FIFO: --threads=1 and 8, the same file" threads1.out threads8.out

# With Callgrind's write-back and prefetcher, and with cache use: a FIFO
# sweep's files are their single runs' (nothing to compare them with but
# the model's hand-computed cases, test_level's fifo_order).
"$CGTRACE" simulate -q --simulate-wb=yes --simulate-hwpref=yes --LL-replacement=fifo \
	--I1=4096,2,64 --D1=4096,2,64 --LL=64k..128k,4,64 -o "wbsweep.%c" strings.zst
"$CGTRACE" simulate -q --simulate-wb=yes --simulate-hwpref=yes --LL-replacement=fifo \
	--I1=4096,2,64 --D1=4096,2,64 --LL=131072,4,64 -o wbsingle.out strings.zst
check_same_file "FIFO with write-back and prefetch: the sweep's LL=128k file is its single run's" \
	wbsingle.out "$(grep -l '^desc: LL cache: *131072 B' wbsweep.* 2>/dev/null | head -n 1)"
"$CGTRACE" simulate -q --cacheuse=yes --D1-replacement=fifo $small -o usefifo.out strings.zst &&
	"$CGTRACE" simulate -q --cacheuse=yes $small -o uselru.out strings.zst
check "FIFO with cache use: a file, other than LRU's" \
	sh -c '! cmp -s usefifo.out uselru.out && grep -q "^events:.*AcCost1" usefifo.out'

# The call graph: any of I1, D1 and LL FIFO or PLRU (levels there),
# against the reference model.  Callgrind counts a read-modify-write as a write where
# Cachegrind counts a read, so the data misses are compared as sums.
merged() {	# events (a summary's, or refsim's output) -> Ir I1mr ILmr D1 DL
	awk '/^(events:|Ir )/ { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ sub(/^summary: /, ""); split($0, v, " ")
		  print v[c["Ir"]], v[c["I1mr"]], v[c["ILmr"]], v[c["D1mr"]] + v[c["D1mw"]],
			v[c["DLmr"]] + v[c["DLmw"]] }'
}
for pol in "--LL-replacement=fifo" "--I1-replacement=fifo" "--D1-replacement=fifo --LL-replacement=fifo" \
	"--I1-replacement=plru --D1-replacement=plru --LL-replacement=plru"; do
	"$CGTRACE" simulate -q --tool=callgrind $small $pol --callgrind-out-file=policy.cg loops.zst
	check_eq "--tool=callgrind $pol: Ir, I1, LL and the data's misses the reference's" \
		"$(python3 "$ROOT/tests/tools/refsim.py" $small $pol < loops.dump | merged)" \
		"$(sed -n 's/^events: //p; /^summary:/p' policy.cg | merged)"
done
"$CGTRACE" simulate -q --tool=callgrind $small --D1-replacement=fifo --callgrind-out-file=fifo.cg loops.zst
"$CGTRACE" simulate -q --tool=callgrind $small --callgrind-out-file=lru.cg loops.zst
check "--tool=callgrind --D1-replacement=fifo: other misses than LRU's" \
	test -n "$(sed -n 's/^summary: //p' fifo.cg)" -a \
	"$(sed -n 's/^summary: //p' fifo.cg)" != "$(sed -n 's/^summary: //p' lru.cg)"
# PLRU's trees of one way (none) and of sixteen (four levels), in both
# tools
deep="--I1=4096,1,64 --D1=4096,16,64 --LL=65536,16,64"
plru="--I1-replacement=plru --D1-replacement=plru --LL-replacement=plru"
"$CGTRACE" simulate -q $deep $plru -o deep.out strings.zst
"$CGTRACE" dump strings.zst > strings.dump 2>/dev/null
check_eq "PLRU of 1 and 16 ways: the reference model's totals" \
	"$(refsim $deep $plru < strings.dump)" "$(names_and_totals deep.out)"
"$CGTRACE" simulate -q --tool=callgrind $deep $plru --callgrind-out-file=deep.cg strings.zst
check_eq "--tool=callgrind, PLRU of 1 and 16 ways: Ir, I1, LL and the data's misses the reference's" \
	"$(python3 "$ROOT/tests/tools/refsim.py" $deep $plru < strings.dump | merged)" \
	"$(sed -n 's/^events: //p; /^summary:/p' deep.cg | merged)"
# FIFO L1s with Callgrind's write-back and prefetcher: the call graph's
# totals are the cachegrind.out's (hier.c's levels, the same models); any
# number of threads, the same file.
both="--I1-replacement=fifo --D1-replacement=fifo --simulate-wb=yes --simulate-hwpref=yes"
"$CGTRACE" simulate -q $small $both -o wbfifo.out strings.zst
for t in 1 2 8; do
	"$CGTRACE" simulate -q --tool=callgrind --threads=$t $small $both \
		--callgrind-out-file=wbfifo.cg.$t strings.zst
done
dirty() { awk '/^events:/ { for (i = 2; i <= NF; i++) c[$i] = i }
	/^summary:/ { print $c["ILdmr"], $c["DLdmr"] + $c["DLdmw"] }' "$1"; }
check_eq "--tool=callgrind, FIFO L1s, write-back and prefetch: the cachegrind.out's totals" \
	"$(sed -n 's/^events: //p; /^summary:/p' wbfifo.out | merged) $(dirty wbfifo.out)" \
	"$(sed -n 's/^events: //p; /^summary:/p' wbfifo.cg.1 | merged) $(dirty wbfifo.cg.1)"
check_same_file "--tool=callgrind, FIFO L1s, write-back and prefetch: --threads=1 and 2, the same file" \
	wbfifo.cg.1 wbfifo.cg.2
check_same_file "--tool=callgrind, FIFO L1s, write-back and prefetch: --threads=1 and 8, the same file" \
	wbfifo.cg.1 wbfifo.cg.8
# and with cache use: the call graph's summary the cachegrind.out's (its
# use caches, the same levels)
fifos="--I1-replacement=fifo --D1-replacement=fifo"
"$CGTRACE" simulate -q $small --cacheuse=yes $fifos -o usefifos.out strings.zst
"$CGTRACE" simulate -q --tool=callgrind $small --cacheuse=yes $fifos --callgrind-out-file=usefifos.cg \
	strings.zst
use() { awk '/^events:/ { for (i = 2; i <= NF; i++) c[$i] = i }
	/^summary:/ { print $c["AcCost1"], $c["SpLoss1"], $c["AcCost2"], $c["SpLoss2"] }' "$1"; }
check_eq "--tool=callgrind --cacheuse=yes, FIFO L1s: the cachegrind.out's totals" \
	"$(sed -n 's/^events: //p; /^summary:/p' usefifos.out | merged) $(use usefifos.out)" \
	"$(sed -n 's/^events: //p; /^summary:/p' usefifos.cg | merged) $(use usefifos.cg)"

# Refused before any replay, exit 2: an unknown policy, L2's policy, a
# policy with --L2.
refused() {
	local what=$1 expect=$2
	shift 2
	out=$("$CGTRACE" simulate -q "$@" loops.zst 2>&1)
	rc=$?
	check_eq "$what: exit 2" 2 "$rc"
	check_contains "$what: its message" "$expect" "$out"
}
refused "--LL-replacement=lfu" "bad --LL-replacement 'lfu' (expected lru, fifo or plru)" \
	--LL-replacement=lfu -o bad.out
refused "--L2-replacement=fifo" "--L2-replacement: L2 is LRU so far" \
	--L2-replacement=fifo --L2=262144,8,64 -o bad.out
refused "--D1-replacement=plru, 12 ways" \
	"--D1-replacement=plru: D1 (12 ways): a number of ways that is not a power of two" \
	--D1-replacement=plru --D1=49152,12,64 -o bad.out
refused "--LL-replacement=plru with write-back and Callgrind's prefetcher" \
	"--LL-replacement=plru: LL (4 ways): Callgrind's prefetcher with its write-back tags goes with lru or fifo only" \
	--LL-replacement=plru --simulate-wb=yes --simulate-hwpref=yes --LL=65536,4,64 -o bad.out
refused "--tool=callgrind --cacheuse=yes --I1-replacement=plru, 3 ways" \
	"--I1-replacement=plru: I1 (3 ways): a number of ways that is not a power of two" \
	--tool=callgrind --cacheuse=yes --I1-replacement=plru --I1=3072,3,64 --callgrind-out-file=bad.out
refused "--LL-replacement=fifo --L2" "a replacement policy other than lru models I1, D1 and LL: not with --L2" \
	--LL-replacement=fifo --L2=262144,8,64 -o bad.out
