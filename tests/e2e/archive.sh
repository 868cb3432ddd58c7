# Archives (cgtrace archive): a program built here with -g is recorded and
# archived with its sources; then, with the program, its build directory
# and its sources gone and no build-id cache to fall back on, simulate
# with the archive writes the cachegrind.out simulated before, and report
# with it annotates the sources as before.  A truncated archive and files
# that are not archives are said clearly, with a non-zero exit; the
# archive never replaces the trace or a file that is not an archive.
source "$(dirname "$0")/../lib.sh"
plan 54

run() { out=$("$@" 2>&1); rc=$?; }
# Another machine: another home, no cache, nothing but PATH.
elsewhere() { env -i PATH=/usr/bin:/bin HOME="$WORK/elsewhere" XDG_CACHE_HOME="$WORK/elsewhere/cache" LANG=C "$@"; }
mkdir -p src build elsewhere empty
cp "$ROOT/tests/programs/loops.c" src/
# Built from its own directory, so that the line table names the source
# through it (build/../src/loops.c), as many builds do; its debug
# information in a file of its own, found by its .gnu_debuglink.
(cd build && cc -O1 -g -o loops ../src/loops.c && objcopy --only-keep-debug loops loops.debug &&
	objcopy --strip-debug --add-gnu-debuglink=loops.debug loops) || exit 1
id=$(readelf -n build/loops | awk '/Build ID/ { print $3 }')

clean_env "$CGTRACE" record -q -o t.zst -- build/loops 1 >/dev/null
cp t.zst t.copy
clean_env "$CGTRACE" simulate -q -o before.out t.zst
clean_env "$CGTRACE" report before.out >report.before 2>&1
check_contains "before: loops.c annotated from the source tree" \
	"Annotated source file: $WORK/build/../src/loops.c" "$(cat report.before)"

run clean_env "$CGTRACE" archive --sources t.zst
check_eq "archive --sources: exit status 0" 0 "$rc"
check_contains "archive --sources: the summary" "cgtrace: archived 4 modules (" "$out"
check_contains "archive --sources: the summary names the file" "in t.zst.archive (" "$out"
listing=$(tar --zstd -tf t.zst.archive)
check_contains "tar lists the program by its build-id" "build-id/${id:0:2}/${id:2}/elf" "$listing"
check_contains "tar lists its debug file" "build-id/${id:0:2}/${id:2}/debug" "$listing"
check_contains "tar lists its source, the path made plain" "sources${WORK}/src/loops.c" "$listing"
check_eq "every member is a module, a debug file or a source" "x" \
	"$(echo "$listing" | grep -Ev '^(build-id/[0-9a-f]{2}/[0-9a-f]+/(elf|debug)|sources/.+)$')x"
mkdir untarred
tar --zstd -xf t.zst.archive -C untarred
check_same_file "tar extracts the program as it was" build/loops "untarred/build-id/${id:0:2}/${id:2}/elf"
check_same_file "tar extracts its debug file as it was" build/loops.debug "untarred/build-id/${id:0:2}/${id:2}/debug"

# The program where it was, its debug file gone: that from the archive.
mv build/loops.debug loops.debug.away
run elsewhere "$CGTRACE" simulate -q --build-id-dir="$WORK/empty" -o nodebug.out --archive=t.zst.archive t.zst
check_eq "the debug file gone from beside the program: exit status 0" 0 "$rc"
check_same_file "the debug file gone: read from the archive, the cachegrind.out as before" \
	before.out nodebug.out

# The other machine: the trace and its archive, nothing else.
mkdir other
cp t.zst t.zst.archive other/
rm -rf src build untarred
cd other || exit 1

run elsewhere "$CGTRACE" simulate -q --build-id-dir="$WORK/empty" -o none.out --archive=/dev/null t.zst
check_eq "--archive=/dev/null: exit status 1" 1 "$rc"
check_eq "--archive=/dev/null: the message" \
	"cgtrace: /dev/null: not a cgtrace archive: it is empty, expected a zstd frame (bytes 28 b5 2f fd) at byte offset 0" "$out"
check "--archive=/dev/null: no output" test ! -e none.out

run elsewhere "$CGTRACE" simulate -q --build-id-dir="$WORK/empty" -o after.out --archive=t.zst.archive t.zst
check_eq "--archive: exit status 0" 0 "$rc"
check_empty "--archive: no warning" "$out"
check_same_file "--archive: the cachegrind.out simulated before" ../before.out after.out
run elsewhere "$CGTRACE" simulate -q -o beside.out t.zst
check_eq "the archive beside the trace: exit status 0" 0 "$rc"
check_same_file "the archive beside the trace: the cachegrind.out simulated before" ../before.out beside.out

run elsewhere "$CGTRACE" info --build-id-dir="$WORK/empty" t.zst
check_eq "info, the archive beside the trace: exit status 0" 0 "$rc"
check_contains "info says where the program is read from" "symbols: from the archive, " "$out"

mv t.zst.archive loops.archive
run elsewhere "$CGTRACE" simulate -q -o without.out t.zst
check_eq "without the archive: exit status 0" 0 "$rc"
check_contains "without the archive: the program is missing" "$WORK/build/loops is missing" "$out"
check "without the archive: ??? instead" grep -q '^fn=???' without.out

run elsewhere "$CGTRACE" report --archive=loops.archive ../before.out
check_eq "report --archive: exit status 0" 0 "$rc"
check_eq "report --archive: as before, the source read from the archive" \
	"$(grep -v '^Invocation:' ../report.before)" "$(echo "$out" | grep -v '^Invocation:')"
run elsewhere "$CGTRACE" report ../before.out
check_contains "report without it: the source is unreadable" \
	"Unannotated because one or more of these original files are unreadable:" "$out"

# Truncated: what it holds whole is used, with a warning and status 3.
size=$(stat -c %s loops.archive)
head -c $((size / 2)) loops.archive > cut.archive
run elsewhere "$CGTRACE" simulate -q --build-id-dir="$WORK/empty" -o cut.out --archive=cut.archive t.zst
check_eq "a truncated archive: simulate's exit status 3" 3 "$rc"
check_contains "a truncated archive: where" "cgtrace: warning: cut.archive: truncated at byte offset $((size / 2)) (compressed) in member " "$out"
check_contains "a truncated archive: what is used" "; what it holds whole is used" "$out"
check "a truncated archive: still an output" test -s cut.out
run elsewhere "$CGTRACE" report --archive=cut.archive ../before.out
check_eq "a truncated archive: report's exit status 3" 3 "$rc"
check_contains "a truncated archive: report says where" "cut.archive: truncated at byte offset" "$out"

# Not archives: a trace (zstd, but not tar), a text file.
run elsewhere "$CGTRACE" simulate -q -o t2.out --archive=t.zst t.zst
check_eq "a trace as the archive: exit status 1" 1 "$rc"
check_contains "a trace as the archive: the message" \
	"cgtrace: t.zst: not a cgtrace archive: the zstd data does not begin with a tar (ustar) header" "$out"
echo "not an archive" > text.archive
run elsewhere "$CGTRACE" report --archive=text.archive ../before.out
check_eq "a text file as the archive: report's exit status 1" 1 "$rc"
check_eq "a text file as the archive: the message" \
	"cgtrace: text.archive: not a cgtrace archive: no zstd magic, expected a zstd frame (bytes 28 b5 2f fd) at byte offset 0" "$out"
# found beside the trace, it is only not used
cp text.archive t.zst.archive
run elsewhere "$CGTRACE" simulate -q -o t3.out t.zst
check_eq "a text file beside the trace: exit status 0" 0 "$rc"
check_contains "a text file beside the trace: said, not used" \
	"cgtrace: warning: t.zst.archive: not a cgtrace archive: no zstd magic, expected a zstd frame (bytes 28 b5 2f fd) at byte offset 0; not used" "$out"
rm t.zst.archive

# What an archive may be written over.
run elsewhere "$CGTRACE" archive -o t.zst t.zst
check_eq "archive -o the trace: exit status 1" 1 "$rc"
check_eq "archive -o the trace: the message" \
	"cgtrace: refusing to overwrite 't.zst': it is the input 't.zst' (choose another -o)" "$out"
check_same_file "archive -o the trace: the trace unchanged" ../t.copy t.zst
run elsewhere "$CGTRACE" archive -o text.archive t.zst
check_eq "archive -o a file that is not an archive: exit status 1" 1 "$rc"
check_contains "archive -o a file that is not an archive: the message" \
	"cgtrace: refusing to overwrite 'text.archive': it is not a cgtrace archive (remove it or choose another -o)" "$out"
check_eq "archive -o a file that is not an archive: unchanged" "not an archive" "$(cat text.archive)"

# Here the program is nowhere: a warning, and the rest is archived.
run elsewhere "$CGTRACE" archive --build-id-dir="$WORK/empty" -o loops.archive t.zst
check_eq "archive over an archive, a module nowhere: exit status 0" 0 "$rc"
check_contains "a module nowhere: one warning" \
	"cgtrace: warning: $WORK/build/loops: not found (" "$out"
check_contains "a module nowhere: the summary" "cgtrace: archived 3 modules (" "$out"
check_contains "a module nowhere: counted" "; 1 not found" "$out"
check "a module nowhere: the archive lists the others" \
	sh -c "tar --zstd -tf loops.archive | grep -q '^build-id/.*/elf'"

# The default name is never replaced.
cp loops.archive t.zst.archive
run elsewhere "$CGTRACE" archive -q --build-id-dir="$WORK/empty" t.zst
check_eq "the default name taken: exit status 0" 0 "$rc"
check_same_file "the default name taken: kept" loops.archive t.zst.archive
check "the default name taken: written beside it" test -s t.zst.archive.1
