# --tool=cachegrind honours the program's CACHEGRIND_STOP_INSTRUMENTATION
# and _START_ requests and --instr-at-start=no as Cachegrind 3.22 does:
# while stopped nothing is simulated or counted, and what ran only then is
# not listed.  Debian's Cachegrind (3.19) ignores these requests, so its
# counts of what ran outside the stopped stretch are the reference; for
# the stopped stretch, nothing.  Callgrind ignores them too, and so does
# --tool=callgrind.
source "$(dirname "$0")/../lib.sh"
plan 14

prog=$PROGS/cgstartstop
clean_env "$CGTRACE" record -q -o ss.zst -- "$prog" >/dev/null
check "the stopped stretch spans segments (several in the trace)" \
	bash -c '[ "$(sed -n "s/.*format version 4, \([0-9]*\) segments.*/\1/p" <<<"$("$1" info ss.zst)")" -ge 3 ]' _ "$CGTRACE"
clean_env valgrind --tool=cachegrind --vex-guest-chase=no --cache-sim=no --cachegrind-out-file=cg.out \
	"$prog" >/dev/null 2>&1
"$CGTRACE" simulate -q --cache-sim=no -o ct.out ss.zst
# fn_lines FILE FN: FN's cost lines
fn_lines() { awk -v fn="fn=$2" '/^fn=/ { on = $0 == fn; next } on && /^[0-9]/' "$1"; }
check_eq "Cachegrind 3.19 counts the stopped function" "yes" "$(fn_lines cg.out hidden | grep -q . && echo yes)"
check_empty "stopped: its function is not listed" "$(fn_lines ct.out hidden)"
check_eq "before the stop: Cachegrind's lines" "$(fn_lines cg.out counted)" "$(fn_lines ct.out counted)"
check_eq "after the start: Cachegrind's lines" "$(fn_lines cg.out counted_after)" \
	"$(fn_lines ct.out counted_after)"
check_eq "the dynamic linker's start-up: Cachegrind's lines" "$(fn_lines cg.out _dl_map_object_deps)" \
	"$(fn_lines ct.out _dl_map_object_deps)"
"$CGTRACE" simulate -q --cache-sim=no --threads=1 -o ct1.out ss.zst
"$CGTRACE" simulate -q --cache-sim=no --threads=4 -o ct4.out ss.zst
check_same_file "1 and 4 threads: the same file" ct1.out ct4.out
check_same_file "... and the default's" ct.out ct1.out
"$CGTRACE" simulate -q --L2=262144,8,64 -o l2.out ss.zst
check_empty "the hierarchy engine (--L2) stops too" "$(fn_lines l2.out hidden)"
# The level-1 caches see the same references with an L2 and without: the
# same misses, the stopped stretch's not among them.
"$CGTRACE" simulate -q -o l1.out ss.zst
l1_misses() {
	python3 - "$1" <<'PY'
import sys
ev = s = None
for line in open(sys.argv[1]):
    if line.startswith("events: "): ev = line.split()[1:]
    if line.startswith("summary: "): s = dict(zip(ev, line.split()[1:]))
print(" ".join(f"{k}={s[k]}" for k in ("I1mr", "D1mr", "D1mw")))
PY
}
check_eq "... its level-1 misses are the one-level run's" "$(l1_misses l1.out)" "$(l1_misses l2.out)"
"$CGTRACE" simulate -q --cache-sim=no --instr-at-start=no -o late.out ss.zst
check_empty "--instr-at-start=no: nothing before the start request" \
	"$(fn_lines late.out counted)$(fn_lines late.out hidden)$(fn_lines late.out _dl_map_object_deps)"
check_eq "... and from it on, Cachegrind's lines" "$(fn_lines cg.out counted_after)" \
	"$(fn_lines late.out counted_after)"
clean_env valgrind --tool=callgrind --callgrind-out-file=clg.ref "$prog" >/dev/null 2>&1
"$CGTRACE" simulate -q --tool=callgrind --callgrind-out-file=clg.ct ss.zst
check "--tool=callgrind ignores them, as Callgrind does: Callgrind's profile" \
	python3 "$ROOT/tests/tools/callgrind_compare.py" clg.ref clg.ct
out=$("$CGTRACE" simulate --instr-at-start=maybe ss.zst 2>&1)
check_eq "a bad --instr-at-start: exit 2" 2 "$?"
