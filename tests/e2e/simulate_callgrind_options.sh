# cgtrace simulate --tool=callgrind with Callgrind's options: each run's
# files compared with a real Callgrind 3.19 run's given the same options
# (tests/tools/callgrind_compare.py); what callgrind_annotate makes of
# them; --threads; and what it refuses.
source "$(dirname "$0")/../lib.sh"

compare=$ROOT/tests/tools/callgrind_compare.py
CACHES="--cache-sim=yes --branch-sim=yes --I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"
# program|options: one comparison (of every file Callgrind writes) each
runs=(
	"recursion|--separate-callers=2"
	"recursion|--separate-recs=1"
	"recursion|--separate-recs=5"
	"recursion|--skip-plt=no"
	"recursion|--skip-direct-rec=yes"
	"recursion|--toggle-collect=fib"
	"recursion|--dump-before=ackermann"
	"recursion|--dump-after=build --zero-before=sum_tree"
	"recursion|--fn-skip=fib"
	"recursion|--combine-dumps=yes --dump-before=build"
	"recursion|--compress-strings=no --compress-pos=no"
	"recursion|--collect-atstart=yes --toggle-collect=fib"
	"recursion|--dump-line=no"
	"callgraph|--dump-instr=yes --collect-jumps=yes"
	"callgraph|--dump-instr=yes --collect-jumps=yes $CACHES"
	"cxx_calls|--dump-instr=yes --collect-jumps=yes --separate-callers=1"
	"cgrequests|--combine-dumps=yes $CACHES"
	"avx2|$CACHES --dump-instr=yes"
)
# program|its arguments|what to compare (callgrind_compare.py's options)|
# a part not compared
more=(
	# its first part holds the worker and the join, whose waits the
	# scheduler decides (Callgrind's runs differ); the parts after it are
	# fixed, and their summaries are what is tested
	"threaddumps|||.1"
	"jitcode||"
	# it reads /proc/self/maps, which differ between two Valgrind tools:
	# the library's functions only
	"reload|$PROGS/libplugin.so|--functions=^plugin"
)
plan $((${#runs[@]} * 2 + ${#more[@]} + 9 + 2 + 8 + 1))

for p in recursion callgraph cxx_calls cgrequests avx2; do
	clean_env "$CGTRACE" record -q -o "$p.zst" -- "$PROGS/$p" >/dev/null 2>&1
done

for i in "${!runs[@]}"; do
	IFS='|' read -r p opts <<<"${runs[$i]}"
	clean_env valgrind --tool=callgrind $opts --callgrind-out-file="r$i.ref" "$PROGS/$p" \
		>/dev/null 2>"r$i.ref.err"
	"$CGTRACE" simulate -q --tool=callgrind $opts --callgrind-out-file="r$i.ct" "$p.zst" 2>"r$i.err"
	ref_files=$(ls "r$i.ref" "r$i.ref".[0-9]* 2>/dev/null | sed "s/^r$i\.ref//" | tr '\n' ' ')
	ct_files=$(ls "r$i.ct" "r$i.ct".[0-9]* 2>/dev/null | sed "s/^r$i\.ct//" | tr '\n' ' ')
	check_eq "$p $opts: the files Callgrind writes (${ref_files:-none})" "${ref_files:-none}" "${ct_files:-none}"
	diffs=""
	for f in "r$i.ref" "r$i.ref".[0-9]*; do
		[ -f "$f" ] || continue
		out=$(python3 "$compare" --max-diffs=10 "$f" "${f/.ref/.ct}" 2>&1) || diffs="$diffs$f: $out"$'\n'
	done
	if [ -z "$diffs" ] && [ -f "r$i.ref" ]; then ok "$p $opts: Callgrind's profile, every file"
	else not_ok "$p $opts: Callgrind's profile, every file"; echo "${diffs:-  Callgrind wrote nothing}" | head -20 | sed 's/^/  /'; fi
done

# Programs a review found differences on: the summary of each part when
# another thread zeroed its costs (every dump moves every thread's last
# dump), code overwritten at one address (a new BB), a library loaded
# again elsewhere (its old code has the new place's lines).
for c in "${more[@]}"; do
	IFS='|' read -r p args copts skip <<<"$c"
	clean_env "$CGTRACE" record -q -o "$p.zst" -- "$PROGS/$p" $args >/dev/null 2>&1
	clean_env valgrind --tool=callgrind --callgrind-out-file="$p.more.ref" "$PROGS/$p" $args \
		>/dev/null 2>&1
	"$CGTRACE" simulate -q --tool=callgrind --callgrind-out-file="$p.more.ct" "$p.zst"
	diffs=""
	for f in "$p.more.ref" "$p.more.ref".[0-9]*; do
		[ -f "$f" ] && [ "$f" != "$p.more.ref$skip" -o -z "$skip" ] || continue
		out=$(python3 "$compare" --max-diffs=10 $copts "$f" "${f/.ref/.ct}" 2>&1) || diffs="$diffs$f: $out"$'\n'
	done
	if [ -z "$diffs" ] && [ -f "$p.more.ref" ]; then ok "$p: Callgrind's profile, every file${skip:+ but $skip}"
	else not_ok "$p: Callgrind's profile, every file"; echo "${diffs:-  Callgrind wrote nothing}" | head -20 | sed 's/^/  /'; fi
done

# callgrind_annotate 3.19 reads our files without a word on stderr, and
# prints for them what it prints for Callgrind's: the same lines (it
# orders equal costs, and names the object of a file:function that two
# objects have, by the order of the file, which is Callgrind's heap's).
annotate() {
	(cd / && callgrind_annotate --auto=no --threshold=100 "$@" 2>"$WORK/annotate.err") |
		grep -v '^Profile data file\|^Profiled target' | sed 's/ \[[^]]*\]$//' | sort
}
for p in recursion callgraph cxx_calls; do
	clean_env valgrind --tool=callgrind --callgrind-out-file="$p.ref" "$PROGS/$p" >/dev/null 2>&1
	"$CGTRACE" simulate -q --tool=callgrind --callgrind-out-file="$p.ct" "$p.zst"
	annotate --inclusive=yes "$WORK/$p.ct" >"$p.ct.inclusive"
	check_empty "$p: callgrind_annotate --inclusive=yes: nothing on stderr" "$(cat annotate.err)"
	annotate --inclusive=yes "$WORK/$p.ref" >"$p.ref.inclusive"
	check_same_file "$p: callgrind_annotate --inclusive=yes prints Callgrind's lines" \
		"$p.ref.inclusive" "$p.ct.inclusive"
	annotate --tree=both "$WORK/$p.ct" >"$p.ct.tree"
	annotate --tree=both "$WORK/$p.ref" >"$p.ref.tree"
	check_same_file "$p: callgrind_annotate --tree=both prints Callgrind's lines" \
		"$p.ref.tree" "$p.ct.tree"
done

# A threaded program: Callgrind's runs differ from one another (the
# scheduler decides where threads switch, and the waits); the replay's
# summary lies within their spread (and 0.01% of it).
clean_env "$CGTRACE" record -q -o threads.zst -- "$PROGS/threads" >/dev/null 2>&1
"$CGTRACE" simulate -q --tool=callgrind --callgrind-out-file=threads.ct threads.zst
samples=()
for i in 1 2 3; do
	clean_env valgrind --tool=callgrind --callgrind-out-file="threads.ref$i" "$PROGS/threads" >/dev/null 2>&1
	samples+=("$(summary_line "threads.ref$i")")
done
check_within_spread "threads: the replay's summary" "$(summary_line threads.ct)" "hi / 10000" "${samples[@]}"

# The replay goes in stream order, the producer ahead on a thread of its
# own or not: any --threads gives the same files.
for t in 1 2 8; do
	"$CGTRACE" simulate -q --tool=callgrind $CACHES --threads=$t --callgrind-out-file="t$t.%p" \
		cgrequests.zst
done
same=yes
for f in t1.*; do cmp -s "$f" "t2${f#t1}" && cmp -s "$f" "t8${f#t1}" || same=no; done
check_eq "--threads=1, 2 and 8: the same files ($(ls t1.* | wc -l) each)" "yes 3" "$same $(ls t1.* | wc -l)"
check_eq "... and not empty" "no" "$(for f in t1.*; do [ -s "$f" ] || echo empty; done | grep -c . | sed 's/^0$/no/')"

# What it refuses: clear messages, Cachegrind's exit statuses.
run() { out=$("$@" 2>&1); rc=$?; }
run "$CGTRACE" simulate --tool=callgrind "$ROOT/tests/data/tiny.zst"
check_eq "a trace of format 2 (no call facts): exit 1" 1 "$rc"
check_contains "... saying what it lacks and how to record one" "calls, returns and stack pointers" "$out"
clean_env "$CGTRACE" record -q --vex-guest-chase=yes -o chased.zst -- "$PROGS/recursion" >/dev/null 2>&1
run "$CGTRACE" simulate --tool=callgrind chased.zst
check_contains "a trace of Cachegrind's translation: refused, saying why" "--vex-guest-chase=yes" "$out"
run "$CGTRACE" simulate --tool=callgrind --no-such-option recursion.zst
check_eq "an unknown option: usage, exit 2" 2 "$rc"
run "$CGTRACE" simulate --tool=callgrind --separate-recs=zero recursion.zst
check_eq "a bad value: exit 2" 2 "$rc"
run "$CGTRACE" simulate --tool=helgrind recursion.zst
check_eq "an unknown tool: exit 2" 2 "$rc"
# A trace cut short (inside calls): what it holds, frames closed at its
# end, exit 3 as for Cachegrind; the file is consistent (the comparator
# reads it, and its totals are the summary).
head -c "$(($(stat -c %s recursion.zst) * 9 / 10))" recursion.zst >cut.zst
run "$CGTRACE" simulate --tool=callgrind --callgrind-out-file=cut.cg cut.zst
check_eq "a trace cut short: exit 3, a file" "3 yes" "$rc $([ -s cut.cg ] && echo yes)"
check_eq "... whose totals are its summary" "$(sed -n 's/^summary: //p' cut.cg)" \
	"$(sed -n 's/^totals: //p' cut.cg)"
