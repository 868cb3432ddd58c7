#!/bin/sh
# Runs every test: the unit test programs ($BUILD/tests/unit/*) and the
# end-to-end scripts (tests/e2e/*.sh).  Each test prints a plan line, "1..N"
# as TAP does, and one line per check, "ok N - what" or "not ok N - what".
# This script counts the checks and ends with "N passed, N failed".
#
# A test's own "not ok" lines are failures; so is, counted once more under
# the test's name, a test that
#   - exits non-zero without having reported a failed check,
#   - is killed by a signal (a crash) or runs past TEST_TIMEOUT seconds,
#   - prints no plan, a plan of no check, or a number of checks other
#     than its plan,
#   - made a sanitizer write a report into $SANITIZER_LOGS (make test-asan).
#
# Usage: tests/run-tests.sh [NAME-FILTER...]: the tests whose name contains
# any of the filters (all without one).  BUILD (default build) is the build
# directory whose unit tests run; the e2e scripts take it from the
# environment too (tests/lib.sh).  E2E (default tests/e2e) is the directory
# of the scripts, TEST_TIMEOUT (default 1200) each test's limit in seconds.
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
export BUILD
E2E=${E2E:-tests/e2e}
TEST_TIMEOUT=${TEST_TIMEOUT:-1200}
filters="$*"
log=$(mktemp)
out=$(mktemp)
trap 'rm -f "$log" "$out"' EXIT
tests_run=0

# harness_fail NAME WHY: a failure found by this script rather than the test.
harness_fail() {
	echo "not ok - $1: $2" | tee -a "$log"
}

run() {
	name=$1
	shift
	if [ -n "$filters" ]; then
		match=0
		for f in $filters; do
			case "$name" in *"$f"*) match=1 ;; esac
		done
		[ "$match" = 1 ] || return
	fi
	tests_run=$((tests_run + 1))
	echo "# $name"
	timeout -k 10 "$TEST_TIMEOUT" "$@" >"$out" 2>&1 </dev/null
	status=$?
	cat "$out" >>"$log"
	grep -E '^(not ok|ok) |^#|^  ' "$out"

	planned=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$out")
	plans=$(grep -c '^1\.\.[0-9][0-9]*$' "$out")
	checks=$(grep -cE '^(ok|not ok) ' "$out")
	failed=$(grep -c '^not ok ' "$out")
	if [ "$status" -eq 124 ]; then
		harness_fail "$name" "timed out after $TEST_TIMEOUT s"
	elif [ "$status" -gt 128 ]; then
		harness_fail "$name" "killed by signal $((status - 128)) ($(kill -l "$((status - 128))" 2>/dev/null))"
	elif [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
		harness_fail "$name" "exited with status $status"
		tail -n 5 "$out" | sed 's/^/  | /'
	fi
	if [ -n "${SANITIZER_LOGS:-}" ]; then
		for report in "$SANITIZER_LOGS"/*; do
			case "$report" in *.seen) continue ;; esac
			[ -f "$report" ] || continue
			harness_fail "$name" "sanitizer report $(basename "$report")"
			head -n 30 "$report" | sed 's/^/  | /'
			mv "$report" "$report.seen"
		done
	fi
	if [ "$plans" -ne 1 ]; then
		harness_fail "$name" "printed $plans plan lines (expected one '1..N')"
	elif [ "$planned" -eq 0 ]; then
		harness_fail "$name" "plans no check"
	elif [ "$checks" -ne "$planned" ]; then
		harness_fail "$name" "ran $checks of $planned planned checks"
	fi
}

for t in "$BUILD"/tests/unit/*; do
	[ -f "$t" ] && [ -x "$t" ] && run "unit/$(basename "$t")" "$t"
done
for t in "$E2E"/*.sh; do
	run "e2e/$(basename "$t" .sh)" bash "$t"
done

passed=$(grep -c '^ok ' "$log")
failed=$(grep -c '^not ok ' "$log")
if [ "$failed" -gt 0 ]; then
	echo
	echo "failed:"
	grep '^not ok ' "$log"
fi
if [ "$tests_run" -eq 0 ]; then
	echo "no test matched: $filters" >&2
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
