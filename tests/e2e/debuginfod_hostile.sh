#!/bin/bash
# debuginfod servers that answer badly (tests/tools/hostile_debuginfod.py,
# on 127.0.0.1): slowly, without end, with a file that is not the one asked
# for (not an ELF file, another program's, cut short), broken off, with
# endless headers or redirections, an error, or not at all.  Each costs
# at most DEBUGINFOD_TIMEOUT seconds and one warning that names the server
# and what it did; the run writes what it writes without debuginfod; and
# nothing of the answer is kept (libdebuginfod's cache, the build-id cache,
# TMPDIR), so that a second run asks the server again.
source "$(dirname "$0")/../lib.sh"
plan 109

HOSTILE=$ROOT/tests/tools/hostile_debuginfod.py
unset DEBUGINFOD_URLS DEBUGINFOD_TIMEOUT DEBUGINFOD_MAXSIZE DEBUGINFOD_MAXTIME DEBUGINFOD_RETRY_LIMIT \
	DEBUGINFOD_CACHE_PATH DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE

# A stripped program (its debug file nowhere), and another program, whose
# files the server sends instead.
cp "$ROOT/tests/programs/loops.c" prog.c
gcc -O1 -g -o prog.full prog.c
objcopy --only-keep-debug prog.full prog.debug
strip --strip-all -o prog prog.full
cp "$ROOT/tests/programs/recursion.c" other.c
gcc -O1 -g -o other other.c
objcopy --only-keep-debug other other.debug
id=$(readelf -n prog | awk '/Build ID/ { print $3 }')
other_id=$(readelf -n other | awk '/Build ID/ { print $3 }')
"$CGTRACE" record -q --no-build-id-cache -o prog.zst -- ./prog >/dev/null
"$CGTRACE" simulate -q -o plain.out prog.zst

# serve MODE [FILE]: the server, in the background ($server), on $port,
# answering badly what is asked for the program's build-id (the rest: not
# found); the requests it took, one a line, in requests.MODE.
serve() {
	rm -f port
	timeout 300 python3 "$HOSTILE" --only "$id" ${2:+--file "$2"} "$1" port >"requests.$1" &
	server=$!
	for _ in $(seq 100); do
		[ -s port ] && break
		sleep 0.1
	done
	port=$(cat port)
}
stop() {
	kill "$server" 2>/dev/null
	wait "$server" 2>/dev/null
}

# ask NAME [VAR=VALUE...] -- CGTRACE-ARGUMENTS...: cgtrace against the
# server with DEBUGINFOD_TIMEOUT=2 and, for NAME, libdebuginfod's cache
# dc.NAME, the build-id cache bic.NAME and TMPDIR tmp.NAME (kept from one
# run to the next); a hang is cut at 30 s.  Its stderr in NAME.err, its
# exit status in $status, its time in $took (ms).
ask() {
	local name=$1 start
	shift
	local settings=()
	while [ "$1" != -- ]; do
		settings+=("$1")
		shift
	done
	shift
	mkdir -p "bic.$name" "tmp.$name"
	start=$(date +%s%N)
	env DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_TIMEOUT=2 DEBUGINFOD_CACHE_PATH="$WORK/dc.$name" \
		TMPDIR="$WORK/tmp.$name" "${settings[@]}" timeout 30 "$CGTRACE" "$@" 2>"$name.err"
	status=$?
	took=$((($(date +%s%N) - start) / 1000000))
}

# kept NAME: what the runs of NAME kept of the bad answers: files in
# libdebuginfod's cache for the program's build-id (or with anything in
# them: the other modules' misses are empty), anything in the build-id
# cache or in TMPDIR.
kept() {
	find "dc.$1" -type f ! -name '*_s' \( -path "*/$id/*" -o -size +0 \) 2>/dev/null
	find "bic.$1" "tmp.$1" -mindepth 1
}

# check_in_time WHAT: the last run ended well within DEBUGINFOD_TIMEOUT
# (2 s), plus libdebuginfod's polling (1 s) and a margin.
check_in_time() { check "$1: done in time, status 0 (${took} ms)" test "$status" -eq 0 -a "$took" -le 4500; }

# check_warning WHAT SUBJECT PROBLEM FILE: FILE is one line, the warning
# "debuginfod: SUBJECT: PROBLEM; not asked again in this run" (regular
# expressions; SUBJECT url is the URL asked, servers the servers and the
# build-id asked for).
check_warning() {
	local subject=$2
	case "$2" in
	url) subject="http://127\.0\.0\.1:$port/buildid/$id/debuginfo" ;;
	servers) subject="DEBUGINFOD_URLS=http://127\.0\.0\.1:$port, asked for the debug file of build-id $id" ;;
	esac
	if [ "$(wc -l <"$4")" -eq 1 ] &&
		grep -Eq "^cgtrace: warning: debuginfod: $subject: $3; not asked again in this run\$" "$4"; then
		ok "$1: one warning, the server's and what it did"
	else
		not_ok "$1: one warning, the server's and what it did"
		head -5 "$4" | sed 's/^/  /'
	fi
}

# hostile MODE FILE SUBJECT PROBLEM [VAR=VALUE...]: simulate twice against
# the server in MODE (sending FILE, if any): each run in time, with its
# warning, the output of a run without debuginfod, nothing kept, and the
# second run asks the server again.
hostile() {
	local mode=$1 file=$2 subject=$3 problem=$4 asked
	shift 4
	serve "$mode" "$file"
	for run in 1 2; do
		ask "$mode" "$@" -- simulate -q --build-id-dir="$WORK/bic.$mode" -o "$mode.$run.out" prog.zst
		check_in_time "$mode, run $run"
		check_warning "$mode, run $run" "$subject" "$problem" "$mode.err"
		check_same_file "$mode, run $run: the output of a run without debuginfod" plain.out "$mode.$run.out"
		check_empty "$mode, run $run: nothing of the answer kept" "$(kept "$mode")"
		[ "$run" = 1 ] && asked=$(wc -l <"requests.$mode")
	done
	check "$mode: the second run asked the server again ($asked, then $(wc -l <"requests.$mode") requests)" \
		test "$(wc -l <"requests.$mode")" -gt "$asked"
	stop
}

hostile slow "" url "still coming after 2 s \(DEBUGINFOD_TIMEOUT\)"
hostile mute "" servers "no answer within 2 s \(DEBUGINFOD_TIMEOUT\)"
# An endless file is given up at DEBUGINFOD_MAXSIZE bytes (tested small:
# the default, 4 GiB, is the disk's to bear), whether its size is said
# (huge) or not (endless).
hostile endless "" url "more than 1048576 bytes \(DEBUGINFOD_MAXSIZE\)" DEBUGINFOD_MAXSIZE=1048576
hostile huge "" url "more than 1048576 bytes \(DEBUGINFOD_MAXSIZE\)" DEBUGINFOD_MAXSIZE=1048576
hostile garbage "" url "refused, not an ELF file"
hostile wrong other.debug url "refused, the file of build-id $other_id"
hostile truncated prog.debug url "refused, an ELF file with no build-id to be read \(cut short\?\)"
hostile short prog.debug url "broken off before the file's end"
# Bounded by libcurl's limit on headers, redirections' included.
hostile headers "" servers "the connection broke, or the answer was malformed"
hostile redirect "" servers "the connection broke, or the answer was malformed"

# No server at all (a port nobody listens on): the first module asked
# for fails.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ask refused -- simulate -q --build-id-dir="$WORK/bic.refused" -o refused.out prog.zst
check_in_time "refused"
check_warning "refused" "DEBUGINFOD_URLS=http://127\.0\.0\.1:$port, asked for the debug file of build-id [0-9a-f]+" \
	"the connection was refused" refused.err
check_same_file "refused: the output of a run without debuginfod" plain.out refused.out
check_empty "refused: nothing kept" "$(kept refused)"

# An error status is to libdebuginfod what "not found" is (it notes the
# miss, empty files, for cache_miss_s): no warning, and no file.
serve error
ask error -- simulate -q --build-id-dir="$WORK/bic.error" -o error.out prog.zst
check_in_time "error"
check_same_file "error: the output of a run without debuginfod" plain.out error.out
check_empty "error: no file kept" "$(find dc.error bic.error tmp.error -type f -size +0 ! -name '*_s')"
stop

# info: the same refusal, and no debug file named.
serve wrong other.debug
ask info -- info --build-id-dir="$WORK/bic.info" prog.zst >info.out
check_in_time "info, a wrong file"
check_warning "info, a wrong file" url "refused, the file of build-id $other_id" info.err
check_eq "info, a wrong file: the program's symbols from its recorded path, no debug file" \
	"from the recorded path" "$(grep -A1 "build-id $id, " info.out | sed -n 's/^ *symbols: //p')"
check_empty "info, a wrong file: nothing kept" "$(kept info)"

# archive: nothing of a wrong answer archived.
ask archive -- archive -q --build-id-dir="$WORK/bic.archive" -o prog.archive prog.zst
check_in_time "archive, a wrong file"
check_warning "archive, a wrong file" url "refused, the file of build-id $other_id" archive.err
check_eq "archive, a wrong file: the program archived, no debug file" "build-id/${id:0:2}/${id:2}/elf" \
	"$(tar --zstd -tf prog.archive | grep "${id:2}")"
stop

# The program gone: the server is asked for the program itself, and its
# answer, another program, is refused.
mv prog prog.gone
"$CGTRACE" simulate -q -o gone.out prog.zst 2>/dev/null
serve wrong other
ask gone -- simulate -q --build-id-dir="$WORK/bic.gone" -o gone.served.out prog.zst
check_in_time "the program gone, another program sent"
grep -v "/prog is missing or unreadable; " gone.err >gone.refused.err
check_warning "the program gone, another program sent" "http://127\.0\.0\.1:$port/buildid/$id/executable" \
	"refused, the file of build-id $other_id" gone.refused.err
check_contains "the program gone, another program sent: why the program is ???" \
	"prog is missing or unreadable; its build-id $id: not in the build-id cache, no archive, and debuginfod failed in this run" \
	"$(cat gone.err)"
check_same_file "the program gone, another program sent: the output of a run without debuginfod" \
	gone.out gone.served.out
check_empty "the program gone, another program sent: nothing kept" "$(kept gone)"
stop
mv prog.gone prog
