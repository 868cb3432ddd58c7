# cgtrace report --format=dot of callgrind.out files (cgtrace's and real
# Callgrind's): Debian's Graphviz renders the graph, and the SVG it draws
# names the program's functions, leaves out those below the thresholds,
# and labels calls with the counts and costs the file's calls= lines give
# (read here by tests/tools/callgrind_compare.py's reader); names that
# DOT must escape; the event chosen; the options' bad values; a write
# that fails.
source "$(dirname "$0")/../lib.sh"
plan 21

# svg_graph SVG: what dot drew, one item a line: "node<TAB>NAME<TAB>REST"
# (a label's first line, then its others) and
# "edge<TAB>CALLER<TAB>CALLEE<TAB>LABEL LINES".
svg_graph() {
	python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
svg = '{http://www.w3.org/2000/svg}'
names = {}
for kind in ('node', 'edge'):
    for g in ET.parse(sys.argv[1]).getroot().iter(svg + 'g'):
        if g.get('class') != kind:
            continue
        title = g.find(svg + 'title').text
        texts = [t.text or '' for t in g.iter(svg + 'text')]
        if kind == 'node':
            names[title] = texts[0]
            print('node\t%s\t%s' % (texts[0], ' '.join(texts[1:])))
        else:
            caller, callee = title.split('->')
            print('edge\t%s\t%s\t%s' % (names[caller], names[callee], ' '.join(texts)))
PY
}

# draw NAME ARGS...: NAME.dot from cgtrace report --format=dot ARGS, NAME.svg
# from dot, NAME.graph from the SVG; the two exit statuses.
draw() {
	local name=$1
	shift
	"$CGTRACE" report --format=dot "$@" >"$name.dot" 2>"$name.err"
	local rc=$?
	dot -Tsvg "$name.dot" >"$name.svg" 2>>"$name.err"
	echo "$rc $?"
	svg_graph "$name.svg" >"$name.graph" 2>>"$name.err"
}

# drawn GRAPH NAMES...: those of NAMES that are nodes of GRAPH
drawn() {
	local graph=$1 name
	shift
	for name in "$@"; do
		name=$name awk -F'\t' '$1 == "node" && $2 == ENVIRON["name"] { print $2; exit }' "$graph"
	done | paste -sd' '
}

# inclusive GRAPH NAME: the inclusive cost on the node's label
inclusive() {
	name=$2 awk -F'\t' '$1 == "node" && $2 == ENVIRON["name"] {
		s = $3; sub(/.*inclusive [0-9.]*% \(/, "", s); sub(/\).*/, "", s); gsub(",", "", s); print s }' "$1"
}

# calls FILE CALLER CALLEE: the calls' count and inclusive cost of the
# first event, every part's calls= lines summed
calls() {
	ROOT=$ROOT python3 - "$@" <<'PY'
import os, sys
sys.path.insert(0, os.environ['ROOT'] + '/tests/tools')
from callgrind_compare import Reader
path, caller, callee = sys.argv[1:]
count = cost = 0
for part in Reader(path, 'auto').read():
    for (a, _, b), (n, c) in part.calls.items():
        if a[2] == caller and b[2] == callee:
            count += n
            cost += c[0] if c else 0
print(count, cost)
PY
}

# label GRAPH CALLER CALLEE: the count and cost of the edge's label
# ("1,234 calls 12.34% (5,678)"; "-" for a call inside a cycle, which
# shows its count only)
label() {
	awk -F'\t' -v a="$2" -v b="$3" '$1 == "edge" && $2 == a && $3 == b {
		gsub(",", "", $4); split($4, w, " "); cost = w[4]; gsub("[()]", "", cost)
		print w[1], cost == "" ? "-" : cost }' "$1"
}

for p in recursion callgraph cxx_calls cgrequests; do
	clean_env "$CGTRACE" record -q -o "$p.zst" -- "$PROGS/$p" >/dev/null 2>&1
done
"$CGTRACE" simulate -q --tool=callgrind --callgrind-out-file=recursion.ct recursion.zst
"$CGTRACE" simulate -q --tool=callgrind --callgrind-out-file=callgraph.ct callgraph.zst
"$CGTRACE" simulate -q --tool=callgrind --cache-sim=yes --callgrind-out-file=cxx_calls.ct \
	cxx_calls.zst
# three parts in one file
"$CGTRACE" simulate -q --tool=callgrind --combine-dumps=yes --callgrind-out-file=cgrequests.ct \
	cgrequests.zst
clean_env valgrind --tool=callgrind --callgrind-out-file=recursion.cg "$PROGS/recursion" \
	>/dev/null 2>&1
clean_env valgrind --tool=callgrind --callgrind-out-file=cxx_calls.cg "$PROGS/cxx_calls" \
	>/dev/null 2>&1

# recursion, from cgtrace and from Callgrind, default thresholds: the
# program's functions (each recursion level below the first is NAME'2),
# and the calls' counts and costs: main's of fib, fib's of fib'2 (fib'2
# calls itself, a cycle: its count only); fib'2's inclusive cost is what
# fib paid for it, not its calls' nested costs added up.
own="main fib fib'2 ackermann ackermann'2 build build'2 sum_tree sum_tree'2 free_tree free_tree'2"
for f in recursion.ct recursion.cg; do
	check_eq "$f: report --format=dot and dot -Tsvg exit 0" "0 0" "$(draw "$f" "$f")"
	check_eq "$f: the SVG names the program's functions" "$own" "$(drawn "$f.graph" $own)"
	expected="$(calls "$f" main fib) $(calls "$f" fib fib\'2) $(calls "$f" fib\'2 fib\'2 | cut -d' ' -f1) -"
	check_eq "$f: main -> fib, fib -> fib'2, fib'2 -> fib'2: the calls= lines' counts and costs" \
		"$expected" "$(label "$f.graph" main fib) $(label "$f.graph" fib fib\'2) $(label "$f.graph" fib\'2 fib\'2)"
	check_eq "$f: fib'2's inclusive cost that of fib's calls of it" \
		"$(calls "$f" fib fib\'2 | cut -d' ' -f2)" "$(inclusive "$f.graph" fib\'2)"
done

# callgraph: its startup in ld.so is most of its cost; main's small
# functions (op_add: 4 instructions) are left out at 0.1%, drawn at 0;
# a call below --edge-threshold goes while its functions stay.
draw cg01 --node-threshold=0.1 callgraph.ct >/dev/null
draw cg0 --node-threshold=0 --edge-threshold=0 callgraph.ct >/dev/null
draw cg0e --node-threshold=0 --edge-threshold=0.05 callgraph.ct >/dev/null
check_eq "--node-threshold=0.1: main and its larger functions drawn" "main do_jump victim work" \
	"$(drawn cg01.graph main do_jump victim work)"
check_eq "... its small ones not (main is: the graph was read)" main \
	"$(drawn cg01.graph main op_add op_mul leaf tailer)"
check_eq "--node-threshold=0: those drawn, and main's calls of op_add (twice)" \
	"op_add op_mul leaf tailer|2" \
	"$(drawn cg0.graph op_add op_mul leaf tailer)|$(label cg0.graph main op_add | cut -d' ' -f1)"
check_eq "--edge-threshold=0.05: op_add still drawn, main -> op_add not, main -> do_jump still" \
	"op_add||1" \
	"$(drawn cg0e.graph op_add)|$(label cg0e.graph main op_add)|$(label cg0e.graph main do_jump | cut -d' ' -f1)"

# cxx_calls' names, as Callgrind writes them (operator"" _cm has quotes;
# <, > and & are the SVG's to escape): the SVG shows them as they are.
mapfile -t names < <(sed -n 's/^c\{0,1\}fn=([0-9]*) //p' cxx_calls.cg |
	grep -F -e 'operator"" _cm' -e 'allocator<char> const&' -e "thrower(int)'2" | sort -u)
draw cxx --node-threshold=0 cxx_calls.cg >/dev/null
check_eq "cxx_calls: names with quotes, <, >, & and ' drawn as the file has them (${#names[@]})" \
	"$(printf '%s\n' "${names[@]}")" "$(for n in "${names[@]}"; do drawn cxx.graph "$n"; done)"

# The event: --sort's first, else --show's first, else the file's first;
# the total, every function's self cost added up, is the file's totals:
# line (one part).
title() { sed -n 's/.*\\l\([A-Za-z0-9]*\): \([0-9,]*\) in all.*/\1 \2/p' "$1" | tr -d ,; }
totals() {
	awk -v ev="$2" '/^events:/ { for (i = 2; i <= NF; i++) if ($i == ev) col = i }
		/^totals:/ { print ev, $col }' "$1"
}
draw ev_default cxx_calls.ct >/dev/null
draw ev_sort --sort=Dw,Ir --show=Dr cxx_calls.ct >/dev/null
draw ev_show --show=Dr,Ir cxx_calls.ct >/dev/null
check_eq "the event: the file's first, --sort's first, --show's first; the total its totals:" \
	"$(totals cxx_calls.ct Ir) $(totals cxx_calls.ct Dw) $(totals cxx_calls.ct Dr)" \
	"$(title ev_default.dot) $(title ev_sort.dot) $(title ev_show.dot)"
"$CGTRACE" report --sort=Nope cxx_calls.ct >/dev/null 2>text.err
rc_text=$?
"$CGTRACE" report --format=dot --sort=Nope cxx_calls.ct >/dev/null 2>dot.err
rc_dot=$?
check_eq "an event not in the file: the text's message and exit status" \
	"$rc_text $(cat text.err)" "$rc_dot $(cat dot.err)"

# Several parts (--combine-dumps=yes): summed, as for the text and JSON;
# the total is the functions' self costs added up as callgrind_annotate
# reads them (whose summary: is the last part's; it reads the cost after
# a calls=0 line, which later parts carry, as the caller's own), and
# main's self cost is the JSON's.
check_eq "three parts: report --format=dot and dot -Tsvg exit 0" "0 0" \
	"$(draw parts cgrequests.ct)"
listed=$(perl /usr/bin/callgrind_annotate --threshold=100 --auto=no cgrequests.ct 2>/dev/null |
	awk '/file:function/ { listing = 1; getline; next } listing && NF { gsub(",", "", $1); s += $1 }
		END { print s }')
main_self=$("$CGTRACE" report --format=json cgrequests.ct | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(*[f["self"][0] for f in d["functions"] if f["function"] == "main"])')
check_eq "... the total callgrind_annotate's function list added up, main's self cost JSON's" \
	"3 Ir $listed $main_self" \
	"$(grep -c '^part:' cgrequests.ct) $(title parts.dot) $(sed -n 's/.*label="main\\n[^"]*\\nself [0-9.]*% (\([0-9,]*\))".*/\1/p' parts.dot | tr -d ,)"

# The thresholds: N or N% (shown in the title); a bad value is refused
# as any bad option: callgrind_annotate's usage and exit status 255.
"$CGTRACE" report --format=dot --node-threshold=5% --edge-threshold=0.25 recursion.ct >pct.dot
check_contains "--node-threshold=5% --edge-threshold=0.25: in the title" \
	"functions from 5% inclusive, calls from 0.25%" "$(sed -n 2p pct.dot)"
"$CGTRACE" report --tree=sideways recursion.ct >/dev/null 2>usage.err
bad=""
for opt in --node-threshold --edge-threshold; do
	for v in abc 101 -1 1.2.3 "" 5%% 1e1; do
		"$CGTRACE" report --format=dot "$opt=$v" recursion.ct >bad.out 2>bad.err
		rc=$?
		if [ "$rc" != 255 ] || ! cmp -s usage.err bad.err || [ -s bad.out ]; then
			bad="$bad $opt=$v (exit $rc)"
		fi
	done
done
check_empty "bad values (abc, 101, -1, 1.2.3, none, 5%%, 1e1): the usage and 255, nothing drawn" "$bad"

# A write that fails: said, exit status 1 (the text's too).
for format in dot text; do
	"$CGTRACE" report --format=$format recursion.ct >/dev/full 2>full.err
	rc=$?
	check_eq "--format=$format >/dev/full: exit 1 and why" \
		"1 cgtrace: cannot write the report: No space left on device" "$rc $(cat full.err)"
done
