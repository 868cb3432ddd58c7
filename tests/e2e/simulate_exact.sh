# cgtrace simulate gives exactly Cachegrind's 13 totals and per-function
# counts (--cache-sim=yes --branch-sim=yes) for every test program and four
# cache configurations -- each program recorded once, its trace simulated
# with every configuration, each compared with a Cachegrind run of its own.
source "$(dirname "$0")/../lib.sh"
plan 116

configs=(
	"--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"
	"--I1=32768,8,64 --D1=32768,1,64 --LL=8388608,16,64"
	"--I1=32768,8,64 --D1=49152,12,64 --LL=8388608,16,64"
	"--I1=32768,8,128 --D1=32768,8,128 --LL=8388608,16,128"
)
names=("32K 8-way I1/D1, 8M 16-way LL" "direct-mapped D1" "48K 12-way D1" "128-byte lines")

numbers numbers.txt

compare() {
	local name=$1
	shift
	clean_env "$CGTRACE" record -q -o rec.zst -- "$@" >/dev/null
	for i in "${!configs[@]}"; do
		rm -f cg.out ct.out
		CG_OPTS="--cache-sim=yes --branch-sim=yes ${configs[$i]}" cachegrind cg.out "$@"
		"$CGTRACE" simulate -q --branch-sim=yes ${configs[$i]} -o ct.out rec.zst
		check_eq "$name, ${names[$i]}: the 13 totals" "$(summary_line cg.out)" "$(summary_line ct.out)"
		check_eq "$name, ${names[$i]}: per-function counts" "$(per_function cg.out)" "$(per_function ct.out)"
		check_same_file "$name, ${names[$i]}: the whole cachegrind.out is Cachegrind's, byte for byte" cg.out ct.out
	done
}

for p in loops ptrchase recursion interp strings straddle avx2; do
	compare "$p" "$PROGS/$p"
done
compare "sort" sort -n --parallel=1 -o sorted.txt numbers.txt

# The sort trace has some 20 segments (formats/TRACE-FORMAT.md), simulated
# in parallel from unknown states and joined: any number of threads gives
# Cachegrind's file, the segments joined in whatever order they finish.
segments=$(grep -a -o CGTSEGMT rec.zst | wc -l)
check "sort: its trace has many segments ($segments)" test "$segments" -ge 10
for i in 0 1; do
	rm -f cg.out
	CG_OPTS="--cache-sim=yes --branch-sim=yes ${configs[$i]}" cachegrind cg.out sort -n --parallel=1 -o sorted.txt numbers.txt
	for threads in 1 3 8; do
		rm -f ct.out
		"$CGTRACE" simulate -q --threads=$threads --branch-sim=yes ${configs[$i]} -o ct.out rec.zst
		check_same_file "sort, ${names[$i]}, $threads threads: Cachegrind's file, byte for byte" cg.out ct.out
	done
done

# Threads: each count within the spread of five Cachegrind runs (plus
# 0.5% and 4), Valgrind's thread scheduling varying from run to run: eight
# runs of this program span 0.2% in D1mw and 0.4% in Bcm, and a few runs
# can all land on one side of that.
cfg=${configs[0]}
clean_env "$CGTRACE" record -q -o threads.zst -- "$PROGS/threads" >/dev/null
"$CGTRACE" simulate -q --branch-sim=yes $cfg -o ct.threads threads.zst
for i in 1 2 3 4 5; do
	CG_OPTS="--cache-sim=yes --branch-sim=yes $cfg" cachegrind cg.threads.$i "$PROGS/threads"
done
read -r -a mine <<<"$(summary_line ct.threads)"
events=(Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw Bc Bcm Bi Bim)
for k in "${!events[@]}"; do
	check_within_spread "threads: ${events[$k]}" "${mine[$k]}" "hi * 0.005 + 4" \
		$(for i in 1 2 3 4 5; do read -r -a s <<<"$(summary_line cg.threads.$i)"; echo "${s[$k]}"; done)
done
