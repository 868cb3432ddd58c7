# Ir, Dr and Dw of a recorded trace equal those of Cachegrind
# (--cache-sim=yes) for the same program, arguments and environment.
source "$(dirname "$0")/../lib.sh"
plan 12

numbers numbers.txt

compare() {
	local name=$1
	shift
	CG_OPTS=--cache-sim=yes cachegrind cg.out "$@"
	local expected="$(summary_field cg.out Ir) $(summary_field cg.out Dr) $(summary_field cg.out Dw)"
	clean_env "$CGTRACE" record -q -o trace.zst -- "$@" >/dev/null
	check_eq "$name: Ir Dr Dw equal Cachegrind's" "$expected" "$(info_counts trace.zst)"
}

for p in loops ptrchase recursion interp strings straddle avx2; do
	compare "$p" "$PROGS/$p"
done
compare "sort (Debian binary)" sort -n --parallel=1 -o sorted.txt numbers.txt
check "sort's output is sorted" bash -c 'test -s sorted.txt && sort -n -c sorted.txt'

# Threads: Valgrind's scheduling varies from run to run; the recorded counts
# must lie within the spread of three Cachegrind runs, widened by 0.05%
# (three runs need not show the whole spread: Dr varies by ~36 in 300,000).
for i in 1 2 3; do
	CG_OPTS=--cache-sim=yes cachegrind cg.$i.out "$PROGS/threads"
done
clean_env "$CGTRACE" record -q -o threads.zst -- "$PROGS/threads" >/dev/null
read -r ir dr dw <<<"$(info_counts threads.zst)"
set -- $ir $dr $dw
for ev in Ir Dr Dw; do
	check_within_spread "threads: $ev" "$1" "hi * 5e-4" \
		$(for i in 1 2 3; do summary_field cg.$i.out $ev; done)
	shift
done
