# cgtrace report on real inputs: Cachegrind 3.19's files and cgtrace's,
# sources relative to the current directory, the default input, colour,
# JSON, and malformed files (never a crash).
source "$(dirname "$0")/../lib.sh"
plan 23

without_invocation() { grep -v '^Invocation:' "$@"; }
# Counts of a report's "PROGRAM TOTALS" line, percentages dropped.
totals() { grep 'PROGRAM TOTALS' | sed 's/([^)]*)//g; s/PROGRAM TOTALS//' | tr -d ', ' ; }

cfg="--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64 --branch-sim=yes"
clean_env "$CGTRACE" record -q -o strings.zst -- "$PROGS/strings" >/dev/null
"$CGTRACE" simulate -q $cfg -o ct.out strings.zst
CG_OPTS="$cfg" cachegrind cg.out "$PROGS/strings"

# Cachegrind's file and cgtrace's read alike; 3.19's cg_annotate agrees on
# the totals.
"$CGTRACE" report cg.out >cg.report 2>cg.err
check_eq "Cachegrind 3.19's file: read, exit 0" "0 " "$? $(cat cg.err)"
"$CGTRACE" report ct.out >ct.report 2>ct.err
check_eq "cgtrace's file: read, exit 0" "0 " "$? $(cat ct.err)"
check_same_file "the two reports are identical" <(without_invocation cg.report) <(without_invocation ct.report)
check_eq "the totals are those of cg_annotate 3.19" "$(cg_annotate cg.out | totals)" "$(totals <cg.report)"
check_contains "the program's own source is annotated" \
	"-- Annotated source file: $ROOT/tests/programs/strings.c" "$(cat ct.report)"

# Sources are found relative to the current directory, not the data file.
cp -r "$ROOT/tests/report/cases" cases
(cd cases && "$CGTRACE" report c01.cgout >../here.report)
"$CGTRACE" report cases/c01.cgout >elsewhere.report
check_contains "relative source from its directory: annotated" "<bogus line 40>" "$(cat here.report)"
check_contains "relative source from elsewhere: unreadable, as in cg_annotate" \
	"Unannotated because one or more of these original files are unreadable:
- src/small.c" "$(cat elsewhere.report)"

# With no file, the newest cachegrind.out.* here.
mkdir pick && cd pick || exit 1
out=$("$CGTRACE" report 2>&1)
check_eq "no file and none here: exit status 2" 2 "$?"
check_contains "no file and none here: says so" "no cachegrind.out.* file here" "$out"
sed 's/^cmd: .*/cmd: older run/' ../cases/c01.cgout >cachegrind.out.200
sed 's/^cmd: .*/cmd: newer run/' ../cases/c01.cgout >cachegrind.out.100
touch -d 2021-01-01 cachegrind.out.200
touch -d 2022-01-01 cachegrind.out.100
check_contains "no file: the newest cachegrind.out.* is read" "Command:          newer run" \
	"$("$CGTRACE" report --no-annotate)"
cd "$WORK" || exit 1

# Colour: escapes only when asked (or on a terminal), the text otherwise
# unchanged.
(cd cases && "$CGTRACE" report --color=always c01.cgout >../color.report)
check_contains "--color=always: ANSI colour escapes" $'\e[' "$(cat color.report)"
check_same_file "--color=always: without its escapes, the plain text" \
	<(without_invocation here.report) <(sed 's/\x1b\[[0-9;]*m//g' color.report | without_invocation)
(cd cases && "$CGTRACE" report c01.cgout >../auto.report && "$CGTRACE" report --color=never c01.cgout >../never.report)
check_same_file "--color=auto into a file: no escapes" here.report auto.report
check_same_file "--color=never: no escapes" <(without_invocation here.report) <(without_invocation never.report)
script -qec "cd cases && $CGTRACE report c01.cgout" /dev/null >tty.report
check_contains "--color=auto on a terminal: colour" $'\e[' "$(cat tty.report)"
out=$("$CGTRACE" report --color=sometimes cg.out 2>&1)
check_eq "--color=sometimes: usage error" 2 "$?"

# JSON: valid, and its numbers are the data file's (with no threshold,
# every inner entry is there to add up).
"$CGTRACE" report --format=json --threshold=0 ct.out >ct.json
check "--format=json: valid JSON whose sums agree with the data file" python3 - ct.json ct.out <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
lines = open(sys.argv[2]).read().splitlines()
events = next(l for l in lines if l.startswith('events:')).split()[1:]
summary = [int(x) for x in next(l for l in lines if l.startswith('summary:')).split()[1:]]
assert d['format'] == 'cgtrace-report' and d['version'] == 1
assert d['events'] == events and d['summary'] == summary
for section, inner in (('files', 'functions'), ('functions', 'files')):
    for e in d[section]:
        assert len(e['counts']) == len(events)
        assert [sum(c) for c in zip(*(i['counts'] for i in e[inner]))] == e['counts'], e['name']
s = d['annotation_summary']
assert [sum(c) for c in zip(*s.values())] == summary
EOF
(cd cases && "$CGTRACE" report --format=json --no-annotate c01.cgout >../small.json)
check_eq "--format=json --no-annotate: the File:function data" \
	"src/small.c [270, 84, 45] main,cube,square | ??? [11, 3, 2] ??? | no annotations" \
	"$(python3 -c "
import json, sys
d = json.load(open('small.json'))
print(' | '.join('%s %s %s' % (f['name'], f['counts'], ','.join(g['name'] for g in f['functions'])) for f in d['files']),
      '| no annotations' if 'annotations' not in d else '')")"
printf 'cmd: p\xff\nevents: Ir\nfl=a\xe9.c\nfn=f\x01\n1 5\nsummary: 5\n' >bytes.cgout
check "--format=json: names that are not UTF-8 still give valid JSON" \
	python3 -c "import json, sys; json.load(sys.stdin)" < <("$CGTRACE" report --format=json bytes.cgout)

# Malformed files: cg_annotate's message (or ours for a NUL byte or a
# number beyond 64 bits), exit status 1, never a crash -- whatever the
# damage.
python3 - cases/c01.cgout <<'EOF'
import random
random.seed(11)
base = open(__import__('sys').argv[1], 'rb').read()
for i in range(200):
    b = bytearray(base)
    for _ in range(random.randint(1, 4)):
        op = random.randrange(4)
        at = random.randrange(len(b) + 1)
        if op == 0:
            del b[at:at + random.randint(1, 40)]
        elif op == 1 and at < len(b):
            b[at] = random.choice(b'0123456789 -_\n\r\tx=:\xff')
        elif op == 2:
            b[at:at] = random.choice([b'\n', b' 99999999999999999999', b'fl=', b'summary: 1\n', b'\x00'])
        else:
            b = b[:at]
    open('fuzz%03d.cgout' % i, 'wb').write(bytes(b))
EOF
bad=0
for f in fuzz*.cgout; do
	(cd cases && "$CGTRACE" report "../$f") >/dev/null 2>fuzz.err
	rc=$?
	if [ "$rc" -ne 0 ] && { [ "$rc" -ne 1 ] || ! grep -q "^cg_annotate: error: " fuzz.err; }; then
		bad=$((bad + 1))
		echo "  $f: exit $rc: $(head -c 200 fuzz.err)"
	fi
done
check_eq "200 damaged files: each read or refused with a message" "0 of 200" "$bad of $(ls fuzz*.cgout | wc -l)"

# A write that fails (a full disk): said, exit status 1, in each form
# (cg_annotate's prefix, but --compare's, which is cgtrace's own).
for args in "c01.cgout" "--format=json c01.cgout" "--compare c01.cgout c01.cgout"; do
	(cd cases && "$CGTRACE" report $args) >/dev/full 2>full.err
	rc=$?
	prefix="cg_annotate: error:"
	case "$args" in --compare*) prefix="cgtrace:" ;; esac
	check_eq "report $args >/dev/full: exit 1 and why" \
		"1 $prefix cannot write the report: No space left on device" "$rc $(cat full.err)"
done
