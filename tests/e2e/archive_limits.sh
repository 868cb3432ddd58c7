# What a run unpacks of an archive: only the members it needs -- the
# modules it looks up, the sources report annotates -- and never more than
# an archive may hold.  A zstd bomb (64 MiB of zeros in a few kilobytes,
# with a test limit of 1 MiB; a header claiming 9 GiB, with the default of
# 8 GiB) is read no further, with a warning naming the archive, the member
# and the limit, and what it holds before is used.  What reaches the
# scratch directory is counted from strace's log of the writes into it;
# TMPDIR holds nothing of ours afterwards.
source "$(dirname "$0")/../lib.sh"
plan 21

run() { out=$("$@" 2>&1); rc=$?; }
mkdir -p src build elsewhere empty tmp tree
# Another machine: another home, no cache, TMPDIR of its own.
elsewhere() {
	env -i PATH=/usr/bin:/bin HOME="$WORK/elsewhere" XDG_CACHE_HOME="$WORK/elsewhere/cache" \
		TMPDIR="$WORK/tmp" LANG=C ASAN_OPTIONS=detect_leaks=0 "$@"
}
# traced COMMAND...: COMMAND elsewhere, under strace, each thread's log in
# st/log.TID (none interleaved).
traced() {
	rm -rf st && mkdir st
	elsewhere strace -f -ff -y -qq -s 0 -e trace=openat,mkdirat,write -o "$WORK/st/log" "$@"
}
# The bytes written into files of an archive's scratch directory.
scratch_bytes() {
	cat st/log.* | awk '/^write\([0-9]+<[^>]*\/cgtrace-archive\.[^>]*>/ { sum += $NF }
		END { print sum + 0 }'
}
size() { stat -c %s "$1"; }

cp "$ROOT/tests/programs/loops.c" src/
(cd build && cc -O1 -g -o loops ../src/loops.c && objcopy --only-keep-debug loops loops.debug &&
	objcopy --strip-debug --add-gnu-debuglink=loops.debug loops) || exit 1
id=$(readelf -n build/loops | awk '/Build ID/ { print $3 }')
member=build-id/${id:0:2}/${id:2}
clean_env "$CGTRACE" record -q -o t.zst -- build/loops 1 >/dev/null
clean_env "$CGTRACE" simulate -q -o before.out t.zst
clean_env "$CGTRACE" report before.out >report.before 2>&1
clean_env "$CGTRACE" archive -q --sources t.zst
tar --zstd -xf t.zst.archive -C tree
source_member=sources$WORK/src/loops.c
test -f "tree/$member/debug" && test -f "tree/$source_member" || exit 1
rm -rf src build

# A bomb in the debug file's place, after the program: with a limit of
# 1 MiB, the program is used and the bomb never written.
mkdir -p "bomb/$member"
cp "tree/$member/elf" "bomb/$member/elf"
truncate -s 64M "bomb/$member/debug"
tar --zstd -cf bomb.archive -C bomb "$member/elf" "$member/debug"
run traced env CGTRACE_ARCHIVE_MAX_BYTES=1M "$CGTRACE" simulate -q \
	--build-id-dir="$WORK/empty" -o bomb.out --archive=bomb.archive t.zst
check_eq "a bomb: exit status 3" 3 "$rc"
check_contains "a bomb: the archive, the member and the limit" \
	"cgtrace: warning: bomb.archive: member $member/debug (67108864 bytes, at byte " "$out"
check_contains "a bomb: what the limit is" \
	"goes past the limit of 1048576 bytes an archive may hold; it and the rest are not used; what it holds whole is used" \
	"$out"
check_eq "a bomb: only the program reached the scratch directory" "$(size "tree/$member/elf")" \
	"$(scratch_bytes)"
check "a bomb: the program read from the archive" grep -q '^fn=main$' bomb.out
check_empty "a bomb: nothing left in TMPDIR" "$(ls -A tmp)"

# A header that claims 9 GiB: past the default limit, said as it is read.
python3 - <<'EOF'
import tarfile, io, subprocess
info = tarfile.TarInfo("build-id/00/claim/elf")
info.size = 9 << 30
head = info.tobuf(tarfile.PAX_FORMAT)
with open("claim.archive", "wb") as f:
    f.write(subprocess.run(["zstd", "-c"], input=head + bytes(4096), capture_output=True).stdout)
EOF
run elsewhere "$CGTRACE" simulate -q --build-id-dir="$WORK/empty" -o claim.out \
	--archive=claim.archive t.zst
check_eq "a claim of 9 GiB: exit status 3" 3 "$rc"
check_contains "a claim of 9 GiB: past the default limit" \
	"cgtrace: warning: claim.archive: member build-id/00/claim/elf (9663676416 bytes, at byte 1536 of the tar stream) goes past the limit of 8589934592 bytes an archive may hold" \
	"$out"
check_empty "a claim of 9 GiB: nothing left in TMPDIR" "$(ls -A tmp)"

# An archive with members no run here needs, before and after the ones it
# does: a module's 4 MiB and a source's 1 MiB are never written.
unrelated=build-id/ee/eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee/elf
mkdir -p "tree/${unrelated%/elf}" tree/sources/unrelated
head -c 4194304 /dev/urandom >"tree/$unrelated"
head -c 1048576 /dev/urandom >tree/sources/unrelated/big.c
(cd tree && { echo "$unrelated"; find build-id sources -type f ! -path '*/ee/*' ! -path '*unrelated*';
	echo sources/unrelated/big.c; } | tar --zstd -cf ../big.archive -T -)
run traced "$CGTRACE" simulate -q --build-id-dir="$WORK/empty" -o big.out \
	--archive=big.archive t.zst
check_eq "an archive of more: exit status 0" 0 "$rc"
check_same_file "an archive of more: the cachegrind.out simulated before" before.out big.out
check_eq "an archive of more: only the program and its debug file were unpacked" \
	"$(($(size "tree/$member/elf") + $(size "tree/$member/debug")))" "$(scratch_bytes)"
check_empty "an archive of more: the others never touched" \
	"$(cat st/log.* | grep -E 'eeeeeeee|unrelated')"
check_empty "an archive of more: nothing left in TMPDIR" "$(ls -A tmp)"

# report --archive: the source it annotates, and nothing else.
run traced "$CGTRACE" report --archive=big.archive before.out
check_eq "report --archive: exit status 0" 0 "$rc"
check_eq "report --archive: as before, the source read from the archive" \
	"$(grep -v '^Invocation:' report.before)" "$(echo "$out" | grep -v '^Invocation:')"
check_eq "report --archive: only the source annotated was unpacked" \
	"$(size "tree/$source_member")" "$(scratch_bytes)"
check_empty "report --archive: no module, nothing else touched" \
	"$(cat st/log.* | grep -E 'eeeeeeee|unrelated|build-id/')"
check_empty "report --archive: nothing left in TMPDIR" "$(ls -A tmp)"

# The bomb for report: the same limit, the same message.
run elsewhere env CGTRACE_ARCHIVE_MAX_BYTES=1M "$CGTRACE" report --archive=bomb.archive before.out
check_eq "report, a bomb: exit status 3" 3 "$rc"
check_contains "report, a bomb: the archive, the member and the limit" \
	"cgtrace: warning: bomb.archive: member $member/debug (67108864 bytes, at byte " "$out"
