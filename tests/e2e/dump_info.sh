# cgtrace dump and info on real traces.
source "$(dirname "$0")/../lib.sh"
plan 14

clean_env "$CGTRACE" record -q -o true.zst -- /bin/true
read -r ir dr dw <<<"$(info_counts true.zst)"
check_eq "dump prints one line per instruction" "$ir" "$("$CGTRACE" dump true.zst | wc -l)"
check_eq "dump's reads and writes add up to info's" "$((dr + dw))" \
	"$("$CGTRACE" dump true.zst | grep -oE '  [RWM] 0x' | wc -l)"
lines=$("$CGTRACE" dump --limit 5 true.zst)
check_eq "dump --limit 5 prints 5 lines" 5 "$(echo "$lines" | wc -l)"
check "dump lines have thread, address and length" \
	bash -c '! echo "$1" | grep -vqE "^T1 0x[0-9a-f]+ [0-9]+( |$)"' _ "$lines"
out=$("$CGTRACE" dump --limit=x true.zst 2>&1)
check_eq "dump --limit=x is a usage error" 2 "$?"

# rep movsb: one instruction execution per iteration, each with its accesses.
clean_env "$CGTRACE" record -q -o strings.zst -- "$PROGS/strings" 1 >/dev/null
# (the program copies 1000 bytes with it, after libc's own string functions)
# Its run-time address: the load bias (mapping start - file offset, from
# the module map) plus its address in the file.
offset=$(objdump -d "$PROGS/strings" | awk '/rep movsb/ { sub(":", "", $1); print $1; exit }')
bias=$("$CGTRACE" info strings.zst | awk -v p="$PROGS/strings" '$NF == p && $2 ~ /x/ {
	split($1, r, "-"); print r[1], $4; exit }')
movsb=$(printf '0x%x' $((0x${bias% *} - ${bias#* } + 0x$offset)))
check "the rep movsb instruction was found" test -n "$offset" -a -n "$bias"
reps=$("$CGTRACE" dump strings.zst | grep -c "^T1 $movsb ")
check_eq "rep movsb of 1000 bytes: 1001 executions (as Cachegrind counts)" 1001 "$reps"
check_eq "each rep movsb iteration reads and writes one byte" 1000 \
	"$("$CGTRACE" dump strings.zst | grep "^T1 $movsb " | grep -cE '  Bc taken  R 0x[0-9a-f]*:1  W 0x[0-9a-f]*:1( |$)')"

info=$("$CGTRACE" info true.zst)
check_contains "info names the backend" "backend:        valgrind (valgrind-3.19.0)" "$info"
check_contains "info gives the format version and the segments" "format version 4, 1 segment)" "$info"
check_contains "info lists the program's module" "/usr/bin/true" "$info"
check_contains "info shows the host's caches" "L1d" "$info"
check_contains "info shows how the program ended" "exited with status 0" "$info"

# The recorder's counts (the END record: executions counted by exit, the
# guarded accesses one by one) are the decoded events' -- on a program with
# masked loads and stores.
clean_env "$CGTRACE" record -q -o avx2.zst -- "$PROGS/avx2" >/dev/null
info=$("$CGTRACE" info avx2.zst)
check "avx2: the END record's counts are the decoded events'" \
	bash -c 'grep -q "instructions (Ir)" <<<"$1" && ! grep -q "counts differ" <<<"$1"' _ "$info"
