# The call graph's facts in a trace: each block's jumps (call, return, ...)
# and the stack pointer at its entry -- consistent with one another, and
# with the calls Callgrind counts for the same program.
source "$(dirname "$0")/../lib.sh"
plan 8

run() { out=$("$@" 2>&1); rc=$?; }
prog=$PROGS/recursion
clean_env "$CGTRACE" record -q -o rec.zst -- "$prog" 12 >/dev/null
"$CGTRACE" dump rec.zst > rec.dump

# Every return lands where its call would come back to, with the stack
# pointer 8 above the callee's entry; every direct call lands at its
# destination.
read -r calls returns matched elsewhere bad_sp < <(grep '^T1 ' rec.dump | python3 "$ROOT/tests/tools/check_calls.py")
check "recursion: thousands of calls and returns recorded ($calls, $returns)" \
	test "${returns:-0}" -gt 200000 -a "${calls:-0}" -ge "${returns:-0}"
check_eq "every return lands at its call's return address, the stack pointer 8 above the callee's" \
	"$returns" "$matched"
check_eq "every direct call lands at its destination" 0 "$elsewhere"
check_eq "every callee's stack pointer is where its call wrote the return address" 0 "$bad_sp"

# The calls into each function: Callgrind's count (the sum of its calls=
# lines, fib'2 and the like included) is the trace's count of call exits
# to the function's address.
clean_env valgrind --tool=callgrind --callgrind-out-file=cg.out "$prog" 12 >/dev/null 2>&1
"$CGTRACE" info rec.zst > rec.info
nm "$prog" > prog.syms
read -r expected actual < <(python3 - "$prog" <<'PY'
import re, sys
prog = sys.argv[1]
fns = ["fib", "ackermann", "build", "sum_tree", "free_tree"]
# Callgrind: the calls into each function, its recursion clones included.
names, calls, cur = {}, {}, None
for line in open("cg.out"):
    m = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
    if m:
        if m.group(3):
            names[m.group(2)] = m.group(3)
        if m.group(1) == "cfn":
            cur = names[m.group(2)].split("'")[0]
    elif line.startswith("calls=") and cur in fns:
        calls[cur] = calls.get(cur, 0) + int(line[6:].split()[0])
# The trace: call exits to each function's address in the recorded mapping.
base = None
for line in open("rec.info"):
    f = line.split()
    if len(f) == 5 and f[-1] == prog and f[1] == "r-x":
        base = int(f[0].split("-")[0], 16) - int(f[3], 16)
addr = {f[2]: int(f[0], 16) for f in map(str.split, open("prog.syms")) if len(f) == 3}
dump = open("rec.dump").read()
print(",".join(f"{fn}:{calls.get(fn, 0)}" for fn in fns),
      ",".join(f"{fn}:{dump.count(f'-> call {base + addr[fn]:#x}' + chr(10))}" for fn in fns))
PY
)
check_eq "calls into each function: Callgrind's counts" "$expected" "$actual"
check "... which are Callgrind's, not zeros" bash -c '[[ "$1" == fib:465,* ]]' _ "$expected"

# A version 2 trace (no jumps, no stack pointers) still reads.
run "$CGTRACE" dump "$ROOT/tests/data/tiny.zst"
check_eq "a version 2 trace dumps" 0 "$rc"
check "... without jumps or stack pointers" bash -c '! grep -q -- "->\|SP " <<<"$1"' _ "$out"
