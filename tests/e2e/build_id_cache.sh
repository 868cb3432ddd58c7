#!/bin/bash
# The build-id cache: a recording keeps its modules by build-id, so that a
# trace simulated after the program was rebuilt (or removed) keeps every
# position; a second recording adds nothing; a file in the cache that is
# not the one its build-id names is refused with a warning; a cache that
# cannot be written costs a warning, not the recording.
source "$(dirname "$0")/../lib.sh"
plan 22

CACHE=$XDG_CACHE_HOME/cgtrace/build-id
cp "$ROOT/tests/programs/loops.c" prog.c
gcc -O1 -g -o prog prog.c

"$CGTRACE" record -o prog.zst -- ./prog >/dev/null 2>record.err
check_contains "record: the summary says what the cache took" "build-id cache $CACHE: " \
	"$(cat record.err)"
id=$(readelf -n prog | awk '/Build ID/ { print $3 }')
check "record: the program is in the cache under its build-id" \
	test -f "$CACHE/${id:0:2}/${id:2}/elf"
check "record: the cache's file is the program" cmp -s prog "$CACHE/${id:0:2}/${id:2}/elf"

"$CGTRACE" simulate -q -o before.out prog.zst 2>before.err
check "before the rebuild: main is named with its lines" grep -q '^fn=main$' before.out
check_empty "before the rebuild: no warning" "$(cat before.err)"

# The same program again: nothing new.
"$CGTRACE" record -o again.zst -- ./prog >/dev/null 2>again.err
check_contains "a second recording adds nothing" "build-id cache $CACHE: 0 new files" \
	"$(cat again.err)"

# Rebuilt with a change (every line moves down): the old trace's positions
# come from the cache, exactly as before, without a word.
{ echo '/* a comment that moves every line */'; cat "$ROOT/tests/programs/loops.c"; } >prog.c
gcc -O1 -g -o prog prog.c
check "the rebuild has another build-id" test "$(readelf -n prog | awk '/Build ID/ { print $3 }')" != "$id"
"$CGTRACE" simulate -q -o rebuilt.out prog.zst 2>rebuilt.err
check_same_file "after the rebuild: the same positions" before.out rebuilt.out
check_empty "after the rebuild: no warning" "$(cat rebuilt.err)"
check_contains "info: the program's symbols come from the cache" \
	"symbols: from the build-id cache, $CACHE/${id:0:2}/${id:2}/elf" "$("$CGTRACE" info prog.zst)"

# Without the cache (another, empty one): ??? and one warning saying where
# it looked and what would help.
"$CGTRACE" simulate -q --build-id-dir="$WORK/empty" -o nocache.out prog.zst 2>nocache.err
check_eq "no cache: one warning" 1 "$(grep -c 'prog .*; its build-id .*: not in the build-id cache' nocache.err)"
check_contains "no cache: the warning says what would help" "record with the build-id cache" \
	"$(cat nocache.err)"
check "no cache: no position from the rebuilt program" \
	bash -c '! grep -q "^fn=main$" nocache.out && grep -q "^summary:" nocache.out'

# A foreign file filed under the program's build-id: refused, said, unused.
elf=$CACHE/${id:0:2}/${id:2}/elf
rm "$elf"	# the hard link: the original program is gone anyway
cp /bin/true "$elf"
"$CGTRACE" simulate -q -o foreign.out prog.zst 2>foreign.err
check_contains "a foreign file in the cache: warned" \
	"$elf is not the file of build-id it is filed under; ignored" "$(cat foreign.err)"
check "a foreign file in the cache: never used" \
	bash -c '! grep -q "^fn=main$" foreign.out && grep -q "^summary:" foreign.out'

# A corrupt one (the program cut short): the same.
head -c 200 prog >"$elf"
"$CGTRACE" simulate -q -o corrupt.out prog.zst 2>corrupt.err
check_contains "a corrupt file in the cache: warned" \
	"$elf is not the file of build-id it is filed under; ignored" "$(cat corrupt.err)"
check_same_file "a corrupt file in the cache: never used" foreign.out corrupt.out

# A cache that cannot be made (its place is a file): the recording goes
# on, with one warning.
touch notadir
XDG_CACHE_HOME=$WORK/notadir "$CGTRACE" record -o unwritable.zst -- ./prog >/dev/null 2>unwritable.err
status=$?
check_eq "an unwritable cache: record still succeeds" 0 "$status"
check_eq "an unwritable cache: one warning" 1 \
	"$(grep -c 'warning: the modules were not kept in the build-id cache' unwritable.err)"
check "an unwritable cache: the trace is whole" bash -c "'$CGTRACE' info unwritable.zst | grep -q 'exited with status 0'"

# --no-build-id-cache and --build-id-dir
"$CGTRACE" record --no-build-id-cache -o none.zst -- ./prog >/dev/null 2>none.err
check "--no-build-id-cache: no cache in the summary" bash -c '! grep -q "build-id cache" none.err'
"$CGTRACE" record --build-id-dir="$WORK/mine" -o mine.zst -- ./prog >/dev/null 2>/dev/null
new=$(readelf -n prog | awk '/Build ID/ { print $3 }')
check "--build-id-dir: the program is kept there" test -f "$WORK/mine/${new:0:2}/${new:2}/elf"
