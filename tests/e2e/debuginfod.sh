#!/bin/bash
# debuginfod: a stripped program's functions and lines come from a local
# debuginfod (Debian's package) serving its debug file on 127.0.0.1, the
# same as from the debug file found beside it; a wrong file in
# libdebuginfod's cache is replaced by the server's.  (Servers that answer
# badly: debuginfod_hostile.sh.)
source "$(dirname "$0")/../lib.sh"

if ! command -v debuginfod >/dev/null || ! command -v debuginfod-find >/dev/null; then
	plan 1
	echo "# debuginfod is not installed (Debian package debuginfod): skipped"
	ok "skipped: debuginfod is not installed"
	exit 0
fi
plan 10

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

cp "$ROOT/tests/programs/loops.c" prog.c
gcc -O1 -g -o prog.full prog.c
mkdir srv .debug
objcopy --only-keep-debug prog.full srv/prog.debug
cp srv/prog.debug .debug/prog.debug
strip --strip-all -o prog prog.full
objcopy --add-gnu-debuglink=.debug/prog.debug prog
id=$(readelf -n prog | awk '/Build ID/ { print $3 }')
"$CGTRACE" record -q --no-build-id-cache -o prog.zst -- ./prog >/dev/null

# The reference: the debug file found beside the program, as Valgrind
# finds it (.gnu_debuglink in .debug/).
"$CGTRACE" simulate -q -o beside.out prog.zst
check "the debug file beside it: main is named" grep -q '^fn=main$' beside.out
mv .debug hidden-debug
unset DEBUGINFOD_URLS
"$CGTRACE" simulate -q -o plain.out prog.zst
check "no debug file, no debuginfod: main is not named" bash -c '! grep -q "^fn=main$" plain.out && grep -q "^summary:" plain.out'

port=$(free_port)
timeout 300 debuginfod -F -p "$port" -d "$WORK/db.sqlite" "$WORK/srv" >debuginfod.log 2>&1 &
server=$!
export DEBUGINFOD_CACHE_PATH=$WORK/debuginfod-client
url=http://127.0.0.1:$port
for _ in $(seq 60); do
	DEBUGINFOD_URLS=$url debuginfod-find debuginfo "$id" >/dev/null 2>&1 && break
	sleep 0.5
done
rm -rf "$DEBUGINFOD_CACHE_PATH"
DEBUGINFOD_URLS=$url "$CGTRACE" simulate -q -o served.out prog.zst 2>served.err
check "through debuginfod: main is named" grep -q '^fn=main$' served.out
check "through debuginfod: its lines" grep -q '^fl=.*prog\.c$' served.out
check_same_file "through debuginfod: the same as the debug file beside it" beside.out served.out
check_empty "through debuginfod: no warning" "$(cat served.err)"
check_contains "info: the debug file from debuginfod" "with the debug file $DEBUGINFOD_CACHE_PATH/$id/debuginfo" \
	"$(DEBUGINFOD_URLS=$url "$CGTRACE" info prog.zst)"

# A file in libdebuginfod's cache that is not the one asked for (another
# client's): said, removed, and the server asked instead.
rm -f "$DEBUGINFOD_CACHE_PATH/$id/debuginfo"
echo "not an ELF file" >"$DEBUGINFOD_CACHE_PATH/$id/debuginfo"
DEBUGINFOD_URLS=$url "$CGTRACE" simulate -q -o recached.out prog.zst 2>recached.err
check_eq "a wrong file in libdebuginfod's cache: said, and removed" \
	"cgtrace: warning: debuginfod: $DEBUGINFOD_CACHE_PATH/$id/debuginfo, in libdebuginfod's cache for build-id $id, is not an ELF file; removed" \
	"$(cat recached.err)"
check_same_file "a wrong file in libdebuginfod's cache: the server's file used instead" beside.out recached.out
check "a wrong file in libdebuginfod's cache: replaced by the server's" \
	cmp -s srv/prog.debug "$DEBUGINFOD_CACHE_PATH/$id/debuginfo"
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null || true
