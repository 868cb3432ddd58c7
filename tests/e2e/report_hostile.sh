# cgtrace report on hostile cachegrind.out files and options: texts longer
# than any buffer, numbers at the 64-bit limits, sizes the file does not
# justify.  Each is read as cg_annotate reads it, or refused with a message
# and exit status 1: never a crash, never quadratic.
source "$(dirname "$0")/../lib.sh"
plan 19

REPRO=$ROOT/tests/report/repro

# cg_annotate's cell: the count and percentage right-justified in the
# event name's width, then a space; the suffix after one more space.
cell() { printf '%*s ' "$1" "$2"; }

# An event name of 400 characters (a 256-byte stack buffer overflowed).
"$CGTRACE" report "$REPRO/long_event.cgout" >long.report 2>long.err
check_eq "an event name of 400 characters: exit 0, no message" "0 " "$? $(cat long.err)"
check_contains "an event name of 400 characters: the total in a cell of its width" \
	"$(cell 400 '10 (100.0%)') PROGRAM TOTALS" "$(cat long.report)"
e255=$(printf 'E%.0s' $(seq 255))
printf 'cmd: p\nevents: %s Ir\nfl=a.c\nfn=f\n1 10 3\nsummary: 10 3\n' "$e255" >e255.cgout
"$CGTRACE" report e255.cgout >e255.report 2>e255.err
check_eq "an event name of 255 characters: exit 0, no message" "0 " "$? $(cat e255.err)"
check_contains "an event name of 255 characters: both cells of their widths" \
	"$(cell 255 '10 (100.0%)')$(cell 10 '3 (100.0%)') PROGRAM TOTALS" "$(cat e255.report)"

# A file name of 5,000 characters: the titles and lists naming it are whole
# (they were cut at 4,199 characters).
long_name=$(printf 'd%.0s' $(seq 5000)).c
printf 'cmd: p\nevents: Ir\nfl=%s\nfn=f\n1 10\nsummary: 10\n' "$long_name" >longname.cgout
"$CGTRACE" report longname.cgout >longname.report 2>&1
check_contains "a file name of 5,000 characters: the whole name in its title" \
	"-- Annotated source file: $long_name
" "$(cat longname.report)"

# Line numbers and --context at the 64-bit limits (signed overflows).
printf 'one\ntwo\nthree\nfour\nfive\n' >five.c
printf 'cmd: p\nevents: Ir\nfl=five.c\nfn=f\n2 10\n4 20\nsummary: 30\n' >five.cgout
"$CGTRACE" report --context=9223372036854775807 five.cgout >ctxmax.report 2>&1
# Cells: the count and the percentage each right-justified in its column.
check_contains "--context=2^63-1: the whole source, as one range" \
	" .          one
10 (33.3%)  two
 .          three
20 (66.7%)  four
 .          five

" "$(sed -n '/^-- Annotated source file: five.c/,$p' ctxmax.report)"
printf 'cmd: p\nevents: Ir\nfl=five.c\nfn=f\n2 10\n9223372036854775807 20\nsummary: 30\n' >linemax.cgout
"$CGTRACE" report --context=9223372036854775807 linemax.cgout >linemax.report 2>&1
check_contains "line 2^63-1 with --context=2^63-1: the source, then the bogus line" \
	" .          five

20 (66.7%)  <bogus line 9223372036854775807>" "$(cat linemax.report)"
# Python's negative context: every range starts past the end of the file.
"$CGTRACE" report --context=-9223372036854775808 five.cgout >ctxmin.report 2>&1
check_contains "--context=-2^63: every line past the end, no line markers" \
	"Ir________ 


10 (33.3%)  <bogus line 2>
20 (66.7%)  <bogus line 4>" "$(cat ctxmin.report)"

# Options longer than a buffer: Python's float() and int() read them whole.
"$CGTRACE" report --threshold=0.$(printf '0%.0s' $(seq 300))5 five.cgout >thr.report 2>&1
check_contains "--threshold of 303 characters: read whole (5e-301, not 0)" \
	"Threshold:        5e-301%" "$(cat thr.report)"
"$CGTRACE" report --context=$(printf '0%.0s' $(seq 100))1 five.cgout >ctx.report 2>&1
check_contains "--context of 101 digits: read whole (1)" " .          five
-- line 5 --" "$(cat ctx.report)"

# Sizes the file does not justify: 200,000 events (their --show/--sort
# indices were found in quadratic time), 50,000 events on lines that give
# one count each (every line stands for 50,000 counts the report adds up
# and keeps: 4 GB from a 400 KB file), a pipe (its size says 0), no events.
python3 -c "
events = ' '.join('e%d' % i for i in range(200000))
open('many_events.cgout', 'w').write('cmd: p\\nevents: %s\\nfl=a.c\\nfn=f\\n1 1\\nsummary: 1\\n' % events)
events = ' '.join('e%d' % i for i in range(50000))
lines = ''.join('%d 1\\n' % i for i in range(1, 10001))
open('sparse_lines.cgout', 'w').write('cmd: p\\nevents: %s\\nfl=a.c\\nfn=f\\n%ssummary: 10000\\n' % (events, lines))"
timeout 60 "$CGTRACE" report many_events.cgout >many.report 2>many.err
check_eq "200,000 events: read in linear time (within 60 s), exit 0" "0 " "$? $(cat many.err)"
timeout 60 "$CGTRACE" report sparse_lines.cgout >/dev/null 2>sparse.err
check_eq "50,000 events on 10,000 lines of one count: refused at once, exit 1" \
	"1 cg_annotate: error: sparse_lines.cgout:152: too many lines for 50000 events: they stand for 7500000 counts, more than 8 a byte of this file's 407826 bytes (the missing counts are zeros, which Cachegrind writes)" \
	"$? $(cat sparse.err)"
check_contains "a cachegrind.out file through a pipe: read whole" "30 (100.0%)  PROGRAM TOTALS" \
	"$("$CGTRACE" report <(cat five.cgout) 2>&1)"
printf 'cmd: p\nevents: \nfl=a.c\nfn=f\n1\nsummary: \n' >no_events.cgout
"$CGTRACE" report no_events.cgout >/dev/null 2>no_events.err
check_eq "no events: refused with a message, exit 1 (a heap overflow ranking by none)" \
	"1 cg_annotate: error: no_events.cgout:2: no events in the \`events:\` line" "$? $(cat no_events.err)"

# A million file names that --mod-filename makes one: each fl= line looked
# for its name among all those before (quadratic: minutes).
python3 -c "
open('many_files.cgout', 'w').write('cmd: p\\nevents: Ir\\n' + ''.join('fl=f%d.c\\nfn=f\\n1 1\\n' % i for i in range(1000000)) + 'summary: 1000000\\n')"
timeout 60 "$CGTRACE" report --mod-filename='s/.*/one.c/' many_files.cgout >many_files.report 2>&1
check_eq "a million file names made one by --mod-filename: within 60 s, each listed once" \
	"0 1000000 - f999999.c" "$? $(grep -c '^- f' many_files.report) $(grep '^- f999999.c$' many_files.report)"

# Leaks, under Valgrind's memcheck (any definitely or indirectly lost
# block fails): the per-file line maps, the map of lines and the inner map
# used before the first fl=, record's Valgrind command line and
# environment ("_" set to cgtrace, as a shell sets it, is replaced).
no_leaks() {
	env _="$CGTRACE" valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
		"$@" >/dev/null 2>leaks.err
	if [ $? -eq 99 ]; then grep -E 'lost|^==[0-9]+== +(at|by) ' leaks.err | head -12 | sed 's/^/  /'; return 1; fi
}
"$CGTRACE" report "$REPRO/leak_report.cgout" >/dev/null 2>leak.err
check_eq "the leak reproducer: cg_annotate's message, exit 1" \
	"1 cg_annotate: error: $REPRO/leak_report.cgout:6: missing \`summary:\` line, aborting" "$? $(cat leak.err)"
check "the leak reproducer: no leak (memcheck)" no_leaks "$CGTRACE" report "$REPRO/leak_report.cgout"
printf 'cmd: p\nevents: Ir\n1 1\nfn=g\n2 3\nfl=five.c\nfn=f\n2 10\nsummary: 14\n' >unfiled.cgout
check "counts and fn= before the first fl=, a source annotated: no leak (memcheck)" \
	no_leaks "$CGTRACE" report unfiled.cgout
check "record -- /bin/true: no leak (memcheck)" no_leaks "$CGTRACE" record -q -o true.zst -- /bin/true
