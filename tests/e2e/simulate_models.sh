# cgtrace simulate (Cachegrind's profile) with Callgrind's cache models:
# --simulate-wb=yes and --simulate-hwpref=yes, alone and together.
#  - Against real Callgrind runs with the same models and caches: the
#    totals of every fetch column (Ir I1mr ILmr ILdmr) and the sums of the
#    data ones (Callgrind counts a read-modify-write as a write, Cachegrind
#    as a read: D1mr + D1mw, DLmr + DLmw, DLdmr + DLdmw, Dr + Dw).  (Not
#    on programs that fault mid-block, whose cut executions the two tools
#    count apart: simulate_cuts.sh.)
#  - A sweep: every configuration's file the same as its run alone (a
#    sweep with these models takes neither shared stacks nor forests,
#    which know no dirty lines), on 1 and 8 threads.
#  - What is refused, before any replay.
source "$(dirname "$0")/../lib.sh"

programs=(loops recursion strings ptrchase)
models=("--simulate-wb=yes" "--simulate-hwpref=yes" "--simulate-wb=yes --simulate-hwpref=yes")
plan $((${#programs[@]} * ${#models[@]} + 9 + 16))

small="--I1=4096,2,64 --D1=4096,2,64 --LL=65536,4,64"
# sums FILE: the totals as compared (see above), from a cachegrind.out or
# callgrind.out file's events and summary lines
sums() {
	awk '/^events:/ { for (i = 2; i <= NF; i++) ev[i] = $i }
	     /^summary:/ { for (i = 2; i <= NF; i++) v[ev[i]] = $i }
	     END { print v["Ir"] + 0, v["I1mr"] + 0, v["ILmr"] + 0, v["ILdmr"] + 0,
		   v["D1mr"] + v["D1mw"], v["DLmr"] + v["DLmw"], v["DLdmr"] + v["DLdmw"],
		   v["Dr"] + v["Dw"] }' "$1"
}
for p in "${programs[@]}"; do
	clean_env "$CGTRACE" record -q -o $p.zst -- "$PROGS/$p" >/dev/null 2>&1
	for m in "${models[@]}"; do
		clean_env valgrind --tool=callgrind $m $small --callgrind-out-file=$p.cg "$PROGS/$p" \
			>/dev/null 2>&1
		"$CGTRACE" simulate -q $m $small -o $p.out $p.zst
		check_eq "$p, $m: Callgrind's totals" "$(sums $p.cg)" "$(sums $p.out)"
	done
done
check_contains "the dirty-miss events follow Cachegrind's" \
	"events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw ILdmr DLdmr DLdmw" "$(cat loops.out)"

# A sweep of D1 (which without these models takes a forest of LL caches)
# and of LL.
sweep="--simulate-wb=yes --simulate-hwpref=yes --I1=4096,2,64 --D1=4k..16k,1..2,64 --LL=64k..128k,4,64"
for t in 1 8; do
	mkdir t$t
	"$CGTRACE" simulate -q $sweep --threads=$t -o "t$t/%c" loops.zst
done
n=$(ls t1 | wc -l)
check_eq "the sweep: twelve files" 12 "$n"
same=0
for f in t1/*; do
	label=$(basename "$f")
	d1=$(sed -n 's/.*D1-\([0-9]*\)-\([0-9]*\)-64.*/\1,\2,64/p' <<<"$label")
	ll=$(sed -n 's/.*LL-\([0-9]*\)-\([0-9]*\)-64.*/\1,\2,64/p' <<<"$label")
	"$CGTRACE" simulate -q --simulate-wb=yes --simulate-hwpref=yes --I1=4096,2,64 --D1=$d1 --LL=$ll \
		-o alone.out loops.zst
	cmp -s alone.out "$f" && same=$((same + 1))
done
check_eq "the sweep: every file the same as its configuration's run alone" 12 "$same"
check_empty "the sweep on 8 threads: the same files as on 1" "$(diff -r t1 t8 2>&1)"
check_contains "... and the files are write-back's" "DLdmw" "$(cat t1/*D1-4096-1-64*)"
# One configuration, on 1 and 8 threads.
"$CGTRACE" simulate -q --simulate-wb=yes $small --threads=1 -o one1.out strings.zst
"$CGTRACE" simulate -q --simulate-wb=yes $small --threads=8 -o one8.out strings.zst
check_same_file "one configuration: --threads=1 and 8, the same file" one1.out one8.out
# The level options: --LL-prefetch=callgrind is --simulate-hwpref=yes, and
# the last of them says; the default policy and prefetcher named change
# nothing.
"$CGTRACE" simulate -q --simulate-hwpref=yes $small -o hwpref.out strings.zst
"$CGTRACE" simulate -q --LL-prefetch=callgrind $small -o llpf.out strings.zst
"$CGTRACE" simulate -q --simulate-hwpref=yes --LL-prefetch=none --I1-replacement=lru \
	--D1-replacement=lru --LL-replacement=lru --D1-prefetch=none $small -o none.out strings.zst
"$CGTRACE" simulate -q $small -o plain.out strings.zst
check_same_file "--LL-prefetch=callgrind: the same file as --simulate-hwpref=yes" hwpref.out llpf.out
check_same_file "--LL-prefetch=none after --simulate-hwpref=yes, lru named: Cachegrind's model" \
	plain.out none.out

# Refused, exit 2, the option named, nothing written.
refused() {
	local what=$1 expect=$2
	shift 2
	out=$("$CGTRACE" simulate -q "$@" -o refused.out loops.zst 2>&1)
	rc=$?
	check_eq "$what: exit 2" 2 "$rc"
	check_contains "$what: says why" "$expect" "$out"
}
refused "--simulate-wb=maybe" "bad --simulate-wb 'maybe' (expected yes or no)" --simulate-wb=maybe
refused "--simulate-hwpref=1" "bad --simulate-hwpref '1' (expected yes or no)" --simulate-hwpref=1
refused "--simulate-wb=yes with --L2" "--simulate-wb=yes models Callgrind's I1, D1 and LL: not with --L2" \
	--simulate-wb=yes --L2=262144,8,64
refused "--simulate-hwpref=yes with --cache-sim=no" "not with --cache-sim=no" \
	--simulate-hwpref=yes --cache-sim=no
refused "--LL-replacement=lfu" "bad --LL-replacement 'lfu' (expected lru, fifo or plru)" --LL-replacement=lfu
refused "--D1-prefetch=stride" "bad --D1-prefetch 'stride' (expected none or callgrind)" \
	--D1-prefetch=stride
refused "--D1-prefetch=callgrind" \
	"--D1-prefetch=callgrind: Callgrind's stream prefetcher is LL's alone" --D1-prefetch=callgrind
refused "--LL-prefetch=callgrind with --L2" "not with --L2" --LL-prefetch=callgrind --L2=262144,8,64
check_empty "nothing written when refused" "$(ls refused.out 2>/dev/null)"
