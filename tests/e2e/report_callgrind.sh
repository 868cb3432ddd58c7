# cgtrace report of callgrind.out files prints what callgrind_annotate
# 3.19 (/usr/bin/callgrind_annotate) prints for them, byte for byte, and
# exits as it does: on cgtrace's files of several programs (simulated
# with Callgrind's options) and on real Callgrind's, for each option set
# of the table below.
#
# callgrind_annotate orders callers and callees of equal cost, and the
# files it annotates, by its Perl hashes, whose order changes from run
# to run (PERL_HASH_SEED); cgtrace report orders them by name.  The
# reference is therefore a copy of the script made here whose hash
# iterations go in name order (`sort keys`), run with the same perl; the
# first check shows that the substitutions took.
source "$(dirname "$0")/../lib.sh"

# options|source files (after the profile): one check each, over every file
sets=(
	"|"
	"--inclusive=yes|"
	"--tree=caller|"
	"--tree=calling --inclusive=yes|"
	"--tree=both --threshold=100|"
	"--threshold=50 --show-percs=no --tree=both|"
	"--show=Ir --sort=Ir:90|"
	"--sort=Ir:50,Ir --auto=no|"
	"--auto=no|tests/programs/recursion.c"
	"--context=3|"
	"--context=2.5 --threshold=80|"
	"-I=/nonexistent --include=$ROOT/tests/programs/|callgraph.c"
	"--threshold=0|"
)
programs=(recursion callgraph cxx_calls cgrequests loops)
# cgtrace simulate --tool=callgrind's options, one run of each program each
cgtrace_configs=(
	""
	"--cache-sim=yes --branch-sim=yes --dump-instr=yes --collect-jumps=yes"
	"--cacheuse=yes --simulate-wb=yes"
	"--combine-dumps=yes --dump-instr=yes --compress-pos=no"
)
callgrind_configs=(
	""
	"--cache-sim=yes --branch-sim=yes --dump-instr=yes --collect-jumps=yes --combine-dumps=yes"
)
plan $((1 + ${#sets[@]} + 6))

sorted=$WORK/callgrind_annotate.sorted
sed -e 's/} keys %\$tmp\([12]\{0,1\}\);/} sort keys %$tmp\1;/' \
	-e 's/foreach my \$src_file (keys %all_ann_files)/foreach my $src_file (sort keys %all_ann_files)/' \
	-e 's/my @user_ann_files = keys %user_ann_files;/my @user_ann_files = sort keys %user_ann_files;/' \
	/usr/bin/callgrind_annotate >"$sorted"
check_eq "the reference: callgrind_annotate with its five hash iterations in name order" \
	5 "$(diff /usr/bin/callgrind_annotate "$sorted" | grep -c '^> .*sort keys')"

mkdir files
for p in "${programs[@]}"; do
	clean_env "$CGTRACE" record -q -o "$p.zst" -- "$PROGS/$p" >/dev/null 2>&1
	for i in "${!cgtrace_configs[@]}"; do
		"$CGTRACE" simulate -q --tool=callgrind ${cgtrace_configs[$i]} \
			--callgrind-out-file="files/$p.ct$i" "$p.zst" 2>>simulate.err
	done
	for i in "${!callgrind_configs[@]}"; do
		clean_env valgrind --tool=callgrind ${callgrind_configs[$i]} \
			--callgrind-out-file="files/$p.cg$i" "$PROGS/$p" >/dev/null 2>&1
	done
done
# a threaded program's files, one per thread (callgrind.out-01, -02, ...)
clean_env valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file=files/threads.cg \
	"$PROGS/threads" >/dev/null 2>&1
# (Callgrind leaves the file without a thread's suffix empty)
mapfile -t files < <(find "$WORK/files" -type f -size +0 | sort)
n_cgtrace=$(ls files/*.ct* | wc -l)
n_callgrind=$(ls files/*.cg* | wc -l)
# cgrequests dumps three times: two more files without --combine-dumps
check_eq "the files: cgtrace's, Callgrind's (of which cgrequests' dumps and threads' files)" \
	"$(( ${#programs[@]} * ${#cgtrace_configs[@]} + 2 * 3 )) yes" \
	"$n_cgtrace $([ "$n_callgrind" -ge $(( ${#programs[@]} * 2 + 4 )) ] && echo yes)"

# compare OPTIONS SOURCES FILE: empty if both print the same and exit
# alike (callgrind_annotate's 25 is its die() after a failed isatty, for
# an event not in the file: cgtrace says it and exits 1), else the
# difference.  Run from the top of the tree, whose path callgrind_annotate
# takes off file names (so the sources are found by relative names).
compare() {
	local opts=$1 srcs=$2 f=$3 rc_ref rc_ours
	(cd "$ROOT" && perl "$sorted" $opts "$f" $srcs >"$WORK/ref.out" 2>"$WORK/ref.err")
	rc_ref=$?
	(cd "$ROOT" && "$CGTRACE" report $opts "$f" $srcs >"$WORK/ours.out" 2>"$WORK/ours.err")
	rc_ours=$?
	[ "$rc_ref" = 25 ] && rc_ref=1
	if ! cmp -s "$WORK/ref.out" "$WORK/ours.out" || [ "$rc_ref" != "$rc_ours" ]; then
		echo "$f ($opts $srcs): exit $rc_ref, cgtrace $rc_ours"
		diff "$WORK/ref.out" "$WORK/ours.out" | head -n 6
		head -n 2 "$WORK/ours.err"
	fi
}

for set in "${sets[@]}"; do
	opts=${set%%|*}
	srcs=${set#*|}
	diffs=""
	for f in "${files[@]}"; do
		diffs=$diffs$(compare "$opts" "$srcs" "$f")
	done
	if [ -z "$diffs" ]; then ok "'$opts' $srcs: the same output and exit status on ${#files[@]} files"
	else not_ok "'$opts' $srcs: the same output and exit status on ${#files[@]} files"
		echo "$diffs" | head -n 20 | sed 's/^/  /'; fi
done

# Source annotation's warnings: a source newer than the profile, and one
# shorter than the lines the profile has (lines past its end).
mkdir -p old/tests/programs
sed "s|$ROOT/||" files/recursion.ct0 >old/recursion.ct
head -n 30 "$ROOT/tests/programs/recursion.c" >old/tests/programs/recursion.c
touch -d 2001-01-01 old/recursion.ct
(cd old && perl "$sorted" recursion.ct >../ref.out 2>/dev/null; "$CGTRACE" report recursion.ct >../ours.out)
check_same_file "a source newer than the profile and shorter than its lines: callgrind_annotate's warnings" \
	ref.out ours.out
check_contains "... which are there" "Information recorded about lines past the end of 'tests/programs/recursion.c'" \
	"$(grep -A3 'more recent than input file' ours.out; grep 'past the end' ours.out)"

# A bad option: callgrind_annotate's usage (with cgtrace's name) and 255.
perl "$sorted" --tree=sideways files/recursion.ct0 >/dev/null 2>ref.err
rc_ref=$?
"$CGTRACE" report --tree=sideways files/recursion.ct0 >/dev/null 2>ours.err
rc_ours=$?
sed -i '1s/callgrind_annotate/cgtrace report/' ref.err
check_same_file "a bad option: its usage message" ref.err ours.err
check_eq "... and its exit status" "$rc_ref" "$rc_ours"

# --format=json: the same data; the program totals and the first function
# of the text, and every call's count summed as the calls= lines say.
json=$("$CGTRACE" report --format=json files/recursion.cg0 | python3 -c '
import json, sys
d = json.load(sys.stdin)
first = d["functions"][d["ranked"][0]]
print(d["program_totals"][0], first["name"], first["self"][0], sum(c["count"] for c in d["calls"]))')
text=$("$CGTRACE" report files/recursion.cg0 | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); t = $1 }
	/file:function/ { getline; getline; gsub(",", "", $1); print t, $3, $1; exit }')
calls=$(awk -F'[= ]' '/^calls=/ { n += $2 } END { print n }' files/recursion.cg0)
check_eq "--format=json: the program totals, the first function and its self cost, the calls" \
	"$text $calls" "$json"
