# The test harness can fail: tests/run-tests.sh, tests/unit/check.h and
# tests/lib.sh run on fake tests that crash, stop early, exit non-zero,
# print no plan, hang or compare nothing, and each must be counted failed.
source "$(dirname "$0")/../lib.sh"
plan 19

mkdir -p b/tests/unit e2e
unit() { # NAME C-BODY-OF-MAIN: a unit test built with check.h
	printf '#include <signal.h>\n#include "check.h"\nstatic void passes(void) { CHECK(1); }\nstatic void fails(void) { CHECK(0); }\nint main(void)\n{\n%s\n}\n' "$2" >"$1.c"
	cc -I"$ROOT/tests/unit" -o "b/tests/unit/$1" "$1.c"
}
unit crash 'PLAN(2); RUN(passes); raise(SIGSEGV); RUN(passes); return CHECK_DONE();'
unit short 'PLAN(3); RUN(passes); return CHECK_DONE();'
unit failing 'PLAN(2); RUN(passes); RUN(fails); return CHECK_DONE();'
unit good 'PLAN(1); RUN(passes); return CHECK_DONE();'

script() { # NAME BODY: an e2e script using tests/lib.sh
	printf 'source "%s/tests/lib.sh"\n%s\n' "$ROOT" "$2" >"e2e/$1.sh"
}
script noplan 'ok "a check without a plan"'
script exits 'plan 1; ok "passes, then"; exit 2'
script empty 'plan 4
touch e1 e2
check_eq "two empty strings" "" ""
check_same_file "two empty files" e1 e2
check_same_file "a missing file" e1 missing
check_within_spread "no count" "" "0" 5 6'
script hangs 'plan 1; ok "passes, then"; sleep 60'
script good 'plan 2; check_eq "equal" a a; check_empty "nothing" ""'

BUILD=$WORK/b E2E=$WORK/e2e TEST_TIMEOUT=3 sh "$ROOT/tests/run-tests.sh" >run.out 2>&1
rc=$?
sed 's/^/  | /' run.out
check_eq "the run fails" 1 "$rc"
last=$(tail -n 1 run.out)
check_eq "the closing line counts every failure" "9 passed, 12 failed" "$last"
expect() { check "$1" grep -qF -- "$2" run.out; }
expect "a crash after 'ok 1' is a failure" "not ok - unit/crash: killed by signal 11 (SEGV)"
expect "a crashed test's missing checks are a failure" "not ok - unit/crash: ran 1 of 2 planned checks"
expect "fewer checks than planned is a failure" "not ok - unit/short: ran 1 of 3 planned checks"
expect "CHECK_DONE fails a test short of its plan" "not ok - unit/short: exited with status 1"
expect "a failed CHECK is reported" "not ok 2 - fails"
check "a test's own failure is not counted twice" bash -c '! grep -q "unit/failing:" run.out'
expect "no plan is a failure" "not ok - e2e/noplan: printed 0 plan lines"
expect "a non-zero exit after passing checks is a failure" "not ok - e2e/exits: exited with status 2"
expect "two empty strings are not equal" "not ok 1 - two empty strings"
expect "two empty files are not the same" "not ok 2 - two empty files"
expect "a missing file is not the same" "not ok 3 - a missing file"
expect "an empty count is not within any spread" "not ok 4 - no count"
expect "a hang is a failure" "not ok - e2e/hangs: timed out after 3 s"

# lib.sh: a script with a failed check exits 1.
bash e2e/empty.sh >/dev/null 2>&1
check_eq "a script with a failed check exits 1" 1 "$?"
bash e2e/good.sh >/dev/null 2>&1
check_eq "a script whose checks pass exits 0" 0 "$?"

BUILD=$WORK/b E2E=$WORK/e2e sh "$ROOT/tests/run-tests.sh" good >good.out 2>&1
check_eq "passing tests: the run passes" "0 3 passed, 0 failed" "$? $(tail -n 1 good.out)"
BUILD=$WORK/b E2E=$WORK/e2e sh "$ROOT/tests/run-tests.sh" nothing-matches >none.out 2>&1
check_eq "no test run: the run fails" "1 0 passed, 0 failed" "$? $(tail -n 1 none.out)"
