# tests/tools/callgrind_compare.py, the judge of cgtrace's Callgrind
# output, on real Callgrind files: a file equals itself and any rewriting
# of it that keeps its meaning (blocks in another order, names written
# out); one count changed anywhere makes it differ, naming the function;
# a file that is empty or broken is refused (exit 2), so that two of them
# never agree.
source "$(dirname "$0")/../lib.sh"
plan 38

compare=$ROOT/tests/tools/callgrind_compare.py
run() { out=$("$@" 2>&1); rc=$?; }
prog=$PROGS/callgraph
callgrind() {
	local out=$1
	shift
	clean_env valgrind --tool=callgrind --callgrind-out-file="$out" "$@" >/dev/null 2>&1
}
callgrind plain.cg "$prog"
callgrind instr.cg --dump-instr=yes --collect-jumps=yes --cache-sim=yes --branch-sim=yes "$prog"
# three parts in one file: a named dump, a dump, the end
callgrind parts.cg --combine-dumps=yes "$PROGS/cgrequests"
# the same program's three files
callgrind split.cg "$PROGS/cgrequests"

# rewrite SRC DST: the same profile written otherwise: every compressed
# name written out, every function block under its own ob=/fl=, the
# blocks of each part in reverse order.
rewrite() {
	python3 - "$1" "$2" <<'PY'
import re, sys
src, dst = sys.argv[1:]
pool_of = {'ob': 'ob', 'cob': 'ob', 'fl': 'fl', 'fi': 'fl', 'fe': 'fl', 'cfi': 'fl',
           'cfl': 'fl', 'jfi': 'fl', 'fn': 'fn', 'cfn': 'fn', 'jfn': 'fn'}
names = {'ob': {}, 'fl': {}, 'fn': {}}
out, blocks, block = [], [], None
ob = fl = None
def flush():
    out.extend(line for b in reversed(blocks) for line in b)
    blocks.clear()
for line in open(src).read().split('\n'):
    m = re.match(r'(\w+)=\((\d+)\)(?: (.*))?$', line)
    if m and m.group(1) in pool_of:
        pool = names[pool_of[m.group(1)]]
        if m.group(3) is not None:
            pool[m.group(2)] = m.group(3)
        line = f"{m.group(1)}={pool[m.group(2)]}"
    key = line.split('=', 1)[0] if '=' in line else None
    if key == 'ob':
        ob = line[3:]
        continue
    if key == 'fl':
        fl = line[3:]
        continue
    if key == 'fn':
        block = [f"ob={ob}", f"fl={fl}", line]
        blocks.append(block)
        continue
    if re.match(r'(totals|part|summary|events|positions|desc|pid|cmd):', line):
        flush()
        block = None
        out.append(line)
        continue
    (block if block is not None else out).append(line)
flush()
open(dst, 'w').write('\n'.join(out))
PY
}

# mutate SRC DST FUNCTION WHAT: SRC with one count in FUNCTION's block
# one higher: WHAT is self (its first cost line's first event), calls (its
# first calls= count), inclusive (that call's first event) or jcnd (its
# first conditional jump's taken count).
mutate() {
	python3 - "$@" <<'PY'
import re, sys
src, dst, target, what = sys.argv[1:]
fns, current, after_call, done, npos = {}, None, False, False, 1
lines = open(src).read().split('\n')
for i, line in enumerate(lines):
    if line.startswith('positions:'):
        npos = len(line.split()) - 1
    m = re.match(r'(c?fn|jfn)=\((\d+)\)(?: (.*))?$', line)
    if m and m.group(3) is not None:
        fns[m.group(2)] = m.group(3)
    if m and m.group(1) == 'fn':
        current = fns[m.group(2)]
    if done or current != target:
        after_call = line.startswith('calls=')
        continue
    f = line.split()
    if what == 'self' and re.match(r'[0-9+*-]', line) and not after_call:
        f[npos] = str(int(f[npos]) + 1)
    elif what == 'calls' and line.startswith('calls='):
        f[0] = 'calls=%d' % (int(f[0][6:]) + 1)
    elif what == 'inclusive' and after_call:
        f[npos] = str(int(f[npos]) + 1)
    elif what == 'jcnd' and line.startswith('jcnd='):
        taken, executed = map(int, f[0][5:].split('/'))
        f[0] = 'jcnd=%d/%d' % (taken - 1 if taken == executed else taken + 1, executed)
    else:
        after_call = line.startswith('calls=')
        continue
    lines[i], done = ' '.join(f), True
if not done:
    sys.exit(f"mutate: no {what} line in {target}'s block")
open(dst, 'w').write('\n'.join(lines))
PY
}

# A file equals itself: the default, the instruction-level one with jumps
# and every cache and branch event, the one of three parts.
for f in plain instr parts; do
	run python3 "$compare" $f.cg $f.cg
	check_eq "$f: equals itself" "0" "$rc"
done
for i in 1 2; do
	run python3 "$compare" split.cg.$i split.cg.$i
	check_eq "dump $i of three files: equals itself" "0" "$rc"
done

# ... and the same profile written otherwise.
for f in plain instr parts; do
	rewrite $f.cg $f.rewritten
	blocks_before=$(grep -c '^fn=' $f.cg)
	check "$f: the rewriting wrote every name out ($blocks_before blocks)" \
		bash -c '! grep -q "^c\?fn=([0-9]" "$1" && [ "$(grep -c "^fn=" "$1")" = "$2" ]' _ $f.rewritten "$blocks_before"
	run python3 "$compare" $f.cg $f.rewritten
	check_eq "$f: equals itself with blocks reversed and names written out" "0" "$rc"
	[ "$rc" = 0 ] || echo "$out" | head -5 | sed 's/^/  /'
done

# Callgrind writes the same profile otherwise itself: names and positions
# written out.  Its files mean what its writer (dump.c) means: a relative
# position after a call line is relative to the last cost line's, which
# cgrequests has (a call of outer made with instrumentation off); the
# readers read that otherwise.
callgrind plain.uncompressed --compress-strings=no --compress-pos=no "$prog"
run python3 "$compare" plain.cg plain.uncompressed
check_eq "plain: equals Callgrind's file of it without name and position compression" "0" "$rc"
callgrind split.uncompressed --compress-pos=no "$PROGS/cgrequests"
run python3 "$compare" split.cg split.uncompressed
check_eq "cgrequests: equals Callgrind's file of it without position compression" "0" "$rc"
run python3 "$compare" --semantics=readers split.cg split.uncompressed
check_eq "... which the readers read otherwise" "1" "$rc"

# pid:, cmd:, creator:, version: and desc: lines other than the trigger
# say nothing about the profile.
sed -e 's/^pid: .*/pid: 1/' -e 's/^cmd: .*/cmd: other/' -e 's/^desc: Timerange: .*/desc: Timerange: 0 - 1/' \
	-e 's/^desc: I1 cache: .*/desc: I1 cache: other/' plain.cg > plain.other-run
run python3 "$compare" plain.cg plain.other-run
check_eq "another pid, command, time range: still equal" "0" "$rc"

# One count changed by one: exit 1, and the message names the function.
mutate plain.cg plain.self "descend'2" self
run python3 "$compare" plain.cg plain.self
check_eq "a self cost one higher: they differ" "1" "$rc"
check_contains "... and the message names the function and the count" "descend'2 [ob=callgraph" "$out"
check_contains "... and the line's position and cost" "self cost at $ROOT/tests/programs/callgraph.c line" "$out"
mutate plain.cg plain.calls is_odd calls
run python3 "$compare" plain.cg plain.calls
check_eq "a calls= count one higher: they differ" "1" "$rc"
check_contains "... and the message names the arc" "call is_odd [ob=callgraph" "$out"
mutate plain.cg plain.inclusive main inclusive
run python3 "$compare" plain.cg plain.inclusive
check_eq "a call's inclusive cost one higher: they differ" "1" "$rc"
check_contains "... and the message names the caller and says inclusive" "call main [ob=callgraph" "$out"
check_contains "... (inclusive)" "inclusive cost Ir" "$out"
mutate instr.cg instr.jcnd descend jcnd
run python3 "$compare" instr.cg instr.jcnd
check_eq "a conditional jump's count changed: they differ" "1" "$rc"
check_contains "... and the message names the jump's function" "jcnd in descend [ob=callgraph" "$out"
mutate parts.cg parts.self hwork self
run python3 "$compare" parts.cg parts.self
check_eq "a self cost of the first of three parts: they differ" "1" "$rc"
check_contains "... in part 1" "part 1: hwork [ob=cgrequests" "$out"
sed 's/^desc: Trigger: Client Request: after-region/desc: Trigger: Client Request: elsewhere/' parts.cg > parts.trigger
run python3 "$compare" parts.cg parts.trigger
check_eq "another dump trigger: they differ" "1" "$rc"

# Many differences: the first few, then how many more.
run python3 "$compare" --max-diffs=3 plain.cg instr.cg
check_contains "many differences: three shown, the rest counted" "  ... and " "$out"

# Callgrind's writer does not move its position at a call line (dump.c),
# the readers do; main's call of hwork(100), after the call of outer
# made while instrumentation was off, is on hwork(100)'s line as
# Callgrind means it.
line=$(grep -n 'hwork(100)' "$ROOT/tests/programs/cgrequests.c" | cut -d: -f1)
out=$(python3 "$compare" --normal-form split.cg | grep -e '^call main .* -> hwork ' -e '^note: ')
check_contains "Callgrind's file read as Callgrind meant it: hwork(100) called from line $line" \
	"-> hwork [ob=cgrequests fl=$ROOT/tests/programs/cgrequests.c] at $ROOT/tests/programs/cgrequests.c line $line: calls=1" "$out"
check_contains "... with a note of the lines the readers read otherwise" "read otherwise by the readers" "$out"

# Refused, each for its reason: empty files, no cost line, a summary of
# zeros, an undefined name, a calls= line without its cost line.
refused() {
	local what=$1 why=$2
	shift 2
	run python3 "$compare" "$@"
	if [ "$rc" = 2 ] && [[ $out == *"$why"* ]]; then
		ok "$what"
	else
		not_ok "$what"; echo "  expected exit 2 and '$why', got exit $rc: $out" | head -3
	fi
}
: > empty.cg
refused "two empty files: refused, not equal" "empty.cg:0: the file has no events: line" empty.cg empty.cg
refused "a file and an empty one: refused" "empty.cg:0: the file has no events: line" plain.cg empty.cg
sed '/^summary:/q' plain.cg > header-only.cg
refused "a header and no cost line: refused" "header-only.cg:0: no cost line" header-only.cg header-only.cg
sed 's/^summary: .*/summary: 0/' plain.cg > zero.cg
refused "a summary of zeros: refused" "zero.cg:0: the file has a summary: of zeros" zero.cg zero.cg
first_ref=$(grep -m1 -n '^cfn=([0-9]*)$' plain.cg | cut -d: -f1)
sed "${first_ref:-1}s/^cfn=(\([0-9]*\))\$/cfn=(99999)/" plain.cg > undefined.cg
refused "an undefined compressed name: refused" "undefined.cg:${first_ref:-?}: 'cfn=(99999)' refers to an undefined fn name" \
	plain.cg undefined.cg
# A part's names are its own (KCachegrind's loader forgets them at a new
# part; Callgrind defines them again in each): a later part that only
# refers to a name an earlier part defined is refused.
sed '/^part: 2$/,$ s/^\([a-z]*=([0-9]*)\) .*/\1/' parts.cg > parts-undefined.cg
first_use=$(awk '/^part: 2$/ { p = 1 } p && /^[a-z]+=\([0-9]+\)$/ { print NR ": '\''" $0 "'\''"; exit }' \
	parts-undefined.cg)
refused "a later part using a name only an earlier part defined: refused" \
	"parts-undefined.cg:${first_use:-?} refers to an undefined" parts.cg parts-undefined.cg
first_call=$(grep -m1 -n '^calls=' plain.cg | cut -d: -f1)
head -n "${first_call:-0}" plain.cg > truncated.cg
refused "a calls= line at the end, without its cost line: refused" "a calls= line must be followed by its cost line" \
	plain.cg truncated.cg
