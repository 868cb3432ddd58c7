# cgtrace report of a damaged callgrind.out file: "file:line: what was
# expected" and exit status 1, never a crash or an allocation as large as
# a number in the file.  (callgrind_annotate warns "line N malformed,
# ignoring" and goes on, or dies with Perl's errno as its status: our
# rule is the message and 1.)
source "$(dirname "$0")/../lib.sh"

cat >good <<'EOF'
# callgrind format
version: 1
creator: callgrind-3.19.0
events: Ir
fl=(1) a.c
fn=(1) main
3 10
cfn=(2) f
calls=2 5
4 20
fn=(2)
5 20
totals: 30
EOF
# name|how it is made from good|the message expected
cases=(
	"truncated|head -c 60 good|truncated:4: expected a newline at the end of the last line: the file is cut short"
	"cut at a line's end|sed '\$d' good|cut at a line's end:12: expected totals: at the end"
	"garbage line|sed '7a garbage here' good|garbage line:8: expected a cost line"
	"bad calls|sed 's/calls=2 5/calls=x 5/' good|bad calls:9: expected calls=COUNT TARGET"
	"calls without cost|sed '10,\$d' good|calls without cost:9: expected the cost line of the calls="
	"undefined name|sed 's/^fn=(2)\$/fn=(7)/' good|undefined name:11: a compressed name used before its definition"
	"huge count|sed 's/^3 10\$/3 99999999999999999999999/' good|huge count:7: expected a count"
	"too many counts|sed 's/^3 10\$/3 10 20/' good|too many counts:7: too many event counts"
	"no events|sed '/^events:/d' good|no events:4: expected a header line"
	"neither format|printf 'hello\\\\nworld\\\\n'|neither format:1: missing a \`command:\` line"
	"empty|true|empty:1: missing a \`command:\` line"
)
plan $(( ${#cases[@]} + 4 ))

"$CGTRACE" report good >good.out 2>good.err
check_eq "the file they are made from is read" "0 yes" "$? $(grep -c 'a.c:main' good.out | sed 's/^1$/yes/')"

for c in "${cases[@]}"; do
	IFS='|' read -r name make expected <<<"$c"
	eval "$make" >"$name"
	out=$(run_limited 400000 "$CGTRACE" report "$name" 2>&1 >/dev/null)
	rc=$?
	check_contains "$name: exit 1 and the file, line and what was expected (exit $rc)" "$expected" \
		"$([ "$rc" = 1 ] && echo "$out")"
done

# A name number of 400 digits, and a million of them defined: names are
# kept as their text, never an array as long as the number.
huge=$(printf '9%.0s' $(seq 400))
sed "s/(2)/($huge)/g" good >huge_id
"$CGTRACE" report huge_id >huge_id.out 2>&1
check_contains "a name number of 400 digits is a name like another" "a.c:f" "$(cat huge_id.out)"
{ sed -n 1,4p good; echo "fl=(1) a.c"; seq 1 1000000 | sed 's/.*/fn=(&) f&/'; echo "1 1"; echo "totals: 1"; } >many_ids
out=$(run_limited 400000 "$CGTRACE" report many_ids 2>&1)
check_contains "a million compressed names, within 400 MB" "a.c:f1000000" "$out"

# A million calls at one line (stripped code calls from line 0): each is
# found by its caller, callee and line, never by walking the line's list,
# which took minutes; a minute is a hang here.
{ sed -n 1,4p good; echo "fl=a.c"; echo "fn=main"; echo "1 1"
  seq 1 1000000 | sed 's/.*/cfn=f&\ncalls=1 0\n0 1/'; echo "totals: 1000001"; } >many_calls
out=$(timeout -k 5 60 "$CGTRACE" report many_calls 2>&1)
check_eq "a million calls at one line: read within a minute" "0 yes" \
	"$? $(grep -q 'PROGRAM TOTALS' <<<"$out" && echo yes)"
