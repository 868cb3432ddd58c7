# Client requests and signals in a trace (REQUEST and SIGNAL records):
# each at its place among the executions, with its code, text or signal,
# and the handler's code next, on the stack it ran on.
source "$(dirname "$0")/../lib.sh"
plan 9

run() { out=$("$@" 2>&1); rc=$?; }
prog=$PROGS/requests
# stdout to /dev/null, as Cachegrind's run below (a pipe would change
# libc's path, and the counts)
clean_env "$CGTRACE" record -q -o rq.zst -- "$prog" >/dev/null
run clean_env "$CGTRACE" record -q -o rq2.zst -- "$prog"
check_eq "the program prints under the recorder what it prints natively (the requests return 0)" \
	"$("$prog")" "$out"
"$CGTRACE" dump rq.zst > rq.dump
check_eq "the requests and signals, in program order" \
	"# T1 request 0x43540002|# T1 request 0x43540002|# T1 request 0x43540003 after-region|# T1 request 0x43540001|# T1 signal 10 delivered|# T1 signal 10 returned|# T1 signal 12 delivered on the alternate stack|# T1 signal 12 returned|# T1 request 0x43540000" \
	"$(grep '^#' rq.dump | paste -sd'|')"

# What runs after a delivery is the handler, on its stack.
base=$("$CGTRACE" info rq.zst | python3 -c "
import sys
for f in map(str.split, sys.stdin):
    if len(f) == 5 and f[-1] == sys.argv[1] and f[1] == 'r-x':
        print(int(f[0].split('-')[0], 16) - int(f[3], 16))" "$prog")
sym() { printf '%#x' $((base + 0x$(nm "$prog" | awk -v s="$1" '$3 == s { print $1 }'))); }
after() { grep -A1 -- "$1" rq.dump | sed -n 2p; }
check_contains "SIGUSR1's delivery: on_usr1 runs next" "T1 $(sym on_usr1) " "$(after 'signal 10 delivered')"
sp=$(after 'signal 12 delivered' | awk '{ for (i = 1; i < NF; i++) if ($i == "SP") print $(i + 1) }')
alt=$((base + 0x$(nm "$prog" | awk '$3 ~ /^alt/ { print $1 }')))
check_contains "SIGUSR2's delivery: on_usr2 runs next" "T1 $(sym on_usr2) " "$(after 'signal 12 delivered')"
check "... on the alternate stack (SP $sp within the 64 KiB at $(printf '%#x' $alt))" \
	test $((sp)) -gt $alt -a $((sp)) -le $((alt + 65536))

# Cachegrind counts the same with the requests as without (it ignores them).
CG_OPTS="--branch-sim=yes" cachegrind cg.out "$prog"
"$CGTRACE" simulate -q --branch-sim=yes -o ct.out rq.zst
check_eq "simulate: Cachegrind's totals" "$(summary_line cg.out)" "$(summary_line ct.out)"

# A fault after a branch not taken, in the same block (rep movsb into a
# read-only page, which the SIGSEGV handler makes writable): the recording
# goes on (it once stopped with "an execution of an undefined block"), and
# each fault is a signal delivered and returned.
run clean_env "$CGTRACE" record -q -o faults.zst -- "$PROGS/faults"
check_eq "a fault inside a block: recorded, the program's output and status" "x 0" "$(echo $out) $rc"
check_eq "... three SIGSEGVs delivered and returned" "3 3" \
	"$("$CGTRACE" dump faults.zst | grep -c '^# T1 signal 11 delivered$') $("$CGTRACE" dump faults.zst | grep -c '^# T1 signal 11 returned$')"
run "$CGTRACE" simulate -q -o faults.out faults.zst
check_eq "... and it simulates" 0 "$rc"
