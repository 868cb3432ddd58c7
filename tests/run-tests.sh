#!/bin/sh
# Runs every test: the unit test programs (build/tests/unit/*) and the
# end-to-end scripts (tests/e2e/*.sh).  Each prints one line per check,
# "ok N - what" or "not ok N - what"; this script counts them and ends with
# "N passed, N failed".  Usage: tests/run-tests.sh [NAME-FILTER...]: the
# tests whose name contains any of the filters (all without one).
cd "$(dirname "$0")/.." || exit 1
filters="$*"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

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
	echo "# $name"
	"$@" 2>&1 | tee -a "$log" | grep -E '^(not ok|ok) |^#|^  ' || true
}

for t in build/tests/unit/*; do
	[ -x "$t" ] && run "unit/$(basename "$t")" "$t"
done
for t in tests/e2e/*.sh; do
	run "e2e/$(basename "$t" .sh)" bash "$t"
done

passed=$(grep -c '^ok ' "$log")
failed=$(grep -c '^not ok ' "$log")
if [ "$failed" -gt 0 ]; then
	echo
	echo "failed:"
	grep '^not ok ' "$log"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
