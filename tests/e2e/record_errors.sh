# Bad input and failure cases of record, info and dump: a clear message,
# the documented exit status, no crash, nothing of the user's destroyed.
source "$(dirname "$0")/../lib.sh"
plan 46

# run COMMAND...: sets $out (stdout+stderr) and $rc.
run() { out=$("$@" 2>&1); rc=$?; }

run "$CGTRACE" record -- no-such-program-xyz
check_eq "missing program: message" "cgtrace: cannot run 'no-such-program-xyz': No such file or directory" "$out"
check_eq "missing program: exit status 127" 127 "$rc"
check_empty "missing program: no trace left behind" "$(ls)"

printf 'not a program\n' > plain.txt
run "$CGTRACE" record -- ./plain.txt
check_eq "non-executable program: exit status 126" 126 "$rc"
check_contains "non-executable program: message" "cannot run './plain.txt': Permission denied" "$out"
rm -f plain.txt

run "$CGTRACE" record -o /nonexistent-dir/t.zst -- sh -c 'touch ran'
check_eq "unwritable -o: exit status 1" 1 "$rc"
check_contains "unwritable -o: names the path" "cannot write the trace to '/nonexistent-dir/t.zst': No such file or directory" "$out"
check "unwritable -o: the program did not run" test ! -e ran

printf 'precious notes\n' > notes.txt
run "$CGTRACE" record -o notes.txt -- /bin/true
check_contains "non-trace -o: refused" "refusing to overwrite 'notes.txt'" "$out"
check_eq "non-trace -o: file intact" "precious notes" "$(cat notes.txt)"

run "$CGTRACE" record --backend=pt -o pt.zst -- /bin/true
check "--backend=pt without PT: non-zero exit" test "$rc" -ne 0
check_contains "--backend=pt without PT: names Intel PT, suggests valgrind" "Intel Processor Trace" "$out"
check_contains "--backend=pt without PT: suggests --backend=valgrind" "--backend=valgrind" "$out"
check "--backend=pt without PT: no file" test ! -e pt.zst

run "$CGTRACE" record --backend=foo -- /bin/true
check_eq "bad option value: exit status 2" 2 "$rc"
check_contains "bad option value: message" "bad --backend 'foo'" "$out"

run env VALGRIND_LIB="$WORK/no-valgrind" "$CGTRACE" record -o v.zst -- /bin/true
check "Valgrind missing: non-zero exit" test "$rc" -ne 0
check_contains "Valgrind missing: says how to install it" "apt-get install valgrind" "$out"

mkdir alone && cp "$CGTRACE" alone/
run alone/cgtrace record -o v.zst -- /bin/true
check_contains "tool missing: says how to get it" "Valgrind tool" "$out"
check_contains "tool missing: says how to install Valgrind" "apt-get install valgrind" "$out"
rm -rf alone

run make -s -B -C "$ROOT" VG_INC="$WORK/none" B="$WORK/b" "$WORK/b/record/valgrind/cgt_tool.o"
check "tool headers missing: make fails" test "$rc" -ne 0
check_contains "tool headers missing: says how to install them" "apt-get install valgrind" "$out"

# Standard streams and exit status pass through.
run sh -c "echo hello | '$CGTRACE' record -q -o io.zst -- sh -c 'read x; echo got \$x; echo err >&2; exit 3'"
check_eq "exit status passes through" 3 "$rc"
check_eq "stdin and stdout pass through, Valgrind quiet" "got hello
err" "$out"

# Killed by a signal: a complete trace whose end record says so.
run "$CGTRACE" record -q -o killed.zst -- "$PROGS/selfkill"
check_eq "killed program: exit status 128+15" 143 "$rc"
check_contains "killed program: end record says so" "killed by signal 15" "$("$CGTRACE" info killed.zst)"

# The container: a valid zstd stream of our records.
"$CGTRACE" record -q -o good.zst -- "$PROGS/loops" >/dev/null
check "zstd -t passes on a trace" zstd -q -t good.zst
check_eq "zstd -dc yields the record stream" "CGTRACE" "$(zstd -dc good.zst | head -c 7)"

printf 'hello\n' > text.txt
run "$CGTRACE" info text.txt
check_eq "not a trace: message" "cgtrace: text.txt: not a cgtrace trace" "$out"
check_eq "not a trace: exit status 1" 1 "$rc"
run "$CGTRACE" info no-such-file.zst
check_eq "missing trace: message" "cgtrace: no-such-file.zst: No such file or directory" "$out"

zstd -dc good.zst > stream.bin
printf '\143\000\000\000' | dd of=stream.bin bs=1 seek=8 conv=notrunc 2>/dev/null
zstd -q -f stream.bin -o future.zst
run "$CGTRACE" info future.zst
check_contains "unknown version: clear error" "trace format version 99 is not supported" "$out"
check_eq "unknown version: exit status 1" 1 "$rc"

# Truncated: every complete frame is used and the end is reported.
"$CGTRACE" record -q -o big.zst -- "$PROGS/ptrchase" 400000 >/dev/null
size=$(stat -c %s big.zst)
head -c $((size / 2)) big.zst > half.zst
run "$CGTRACE" info half.zst
check_eq "truncated trace: info reads it, exit status 3 (incomplete)" 3 "$rc"
check_contains "truncated trace: warning names the byte offset" "truncated trace: the file ends inside a zstd frame at byte offset" "$out"
check_contains "truncated trace: no end record" "none recorded" "$out"
full_ir=$(info_counts big.zst | cut -d' ' -f1)
half_ir=$(echo "$out" | awk '/instructions \(Ir\)/ { print $3 }' | tr -d ,)
check "truncated trace: the complete frames' instructions are decoded ($half_ir of $full_ir)" \
	test "${half_ir:-0}" -gt 0 -a "${half_ir:-0}" -lt "$full_ir"
check_eq "truncated trace: dump agrees with info" "$half_ir" "$("$CGTRACE" dump half.zst 2>/dev/null | wc -l)"

# Corrupted bytes inside the first frame (the header's, which nothing can
# be read without): an error with an offset, never a crash.  (Damage
# further on is passed over: tests/e2e/trace_damage.sh.)
cp good.zst bad.zst
printf '\377\377\377\377\377\377\377\377' | dd of=bad.zst bs=1 seek=40 conv=notrunc 2>/dev/null
run "$CGTRACE" info bad.zst
check_eq "corrupt trace: exit status 1" 1 "$rc"
check_contains "corrupt trace: names the offset" "byte offset" "$out"

# A well-formed frame whose EVENTS record names a block never defined: the
# error comes from inside a batch (cgt_batch_next), and info, dump and
# simulate each report it with its offset and exit 1.
zstd -q -d -c good.zst > good.raw
python3 - good.raw bad-events.raw <<'PY'
import sys
d = bytearray(open(sys.argv[1], "rb").read())

def varint(p):
    v = s = 0
    while True:
        b = d[p]; p += 1; v |= (b & 0x7F) << s; s += 7
        if b < 0x80:
            return v, p

version = int.from_bytes(d[8:12], "little")
p = 16  # the stream header
while p < len(d):
    kind, (length, payload) = d[p], varint(p + 1)
    if kind == 5 and length > 8:  # EVENTS: a thread id, then executions
        _, first = varint(payload)
        first += 4 if version >= 3 else 0  # their length
        d[first:first + 3] = b"\xff\xff\x7f"  # block id 2^19 - 1
        break
    p = payload + length
open(sys.argv[2], "wb").write(d)
PY
zstd -q -f --check -c bad-events.raw > bad-events.zst
for cmd in info dump "simulate -q -o bad-events.out"; do
	run "$CGTRACE" $cmd bad-events.zst
	check_eq "undefined block in EVENTS: $cmd exits 1" 1 "$rc"
	check_contains "undefined block in EVENTS: $cmd names the record" "EVENTS record: expected a block id below" "$out"
done
