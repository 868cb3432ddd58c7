# Faults while recording: cgtrace, the traced program or Valgrind killed
# with SIGKILL, a full disk, the file size limit.  Each leaves a trace that
# is usable up to its last complete frame and says how it ended, nothing
# running, and no temporary files (README: "When recording fails").
source "$(dirname "$0")/../lib.sh"
plan 46

# Our temporary files, apart from everyone's.
export TMPDIR=$WORK/tmp
mkdir "$TMPDIR"

# run COMMAND...: sets $out (stdout+stderr) and $rc.
run() { out=$("$@" 2>&1); rc=$?; }

# alive PID: the process exists and is no zombie.
alive() {
	local state
	state=$(ps -o stat= -p "$1" 2>/dev/null) && [ -n "$state" ] && [ "${state#Z}" = "$state" ]
}

# gone PID: it is not running, or stops within 5 seconds.
gone() {
	for _ in $(seq 50); do
		alive "$1" || return 0
		sleep 0.1
	done
	return 1
}

# wait_for FILE: until the program has written its pid there (20 s at most).
wait_for() {
	for _ in $(seq 200); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# trace_pid TRACE: the recorded process, from the trace's header.
trace_pid() { "$CGTRACE" info "$1" 2>/dev/null | awk '/^pid:/ { print $2 }'; }

# ir INFO-OUTPUT: its instruction count.
ir() { echo "$1" | awk '/instructions \(Ir\)/ { print $3 }' | tr -d ,; }

# check_cut_short WHAT TRACE: usable, but without an end, as info and
# simulate say.
check_cut_short() {
	run "$CGTRACE" info "$2"
	check_eq "$1: info reads it, exit status 3 (incomplete)" 3 "$rc"
	check_contains "$1: info says it was cut short" "end:            none recorded: the recording was cut short" "$out"
	local insns
	insns=$(ir "$out")
	check "$1: the trace holds instructions (${insns:-none})" test "${insns:-0}" -gt 0
	run "$CGTRACE" simulate -q -o "$2.out" "$2"
	check_eq "$1: simulate exits 3 (only what the trace holds)" 3 "$rc"
}

no_temporary_files() { [ -z "$(ls -A "$TMPDIR")" ]; }

# (a) cgtrace itself killed: the program goes with it; the frames written
# up to then are the trace.  A slow program, so that only the periodic
# flushes put anything in the file.
"$CGTRACE" record -q -o a.zst -- "$PROGS/spin" a.pid slow 2>/dev/null &
recorder=$!
check "(a) the program started" wait_for a.pid
sleep 3.5
kill -9 "$recorder"
wait "$recorder" 2>/dev/null
check "(a) cgtrace killed: the program dies with it" gone "$(cat a.pid)"
check "(a) cgtrace killed: no temporary files left" no_temporary_files
check_cut_short "(a) cgtrace killed" a.zst

# (b) the program kills itself with SIGKILL: Valgrind sees the kill system
# call and ends the run as for any fatal signal -- a complete trace.
run "$CGTRACE" record -q -o b.zst -- "$PROGS/spin" b.pid selfkill
check_eq "(b) program kills itself: its status passes through" 137 "$rc"
run "$CGTRACE" info b.zst
check_contains "(b) program kills itself: the end record says so" "end:            killed by signal 9" "$out"
run "$CGTRACE" simulate -q -o b.out b.zst
check_eq "(b) program kills itself: simulate exits 0" 0 "$rc"
check "(b) program kills itself: no temporary files left" no_temporary_files

# (c) the Valgrind process (that is, the program: they are one process)
# killed from outside: its tool's last buffer is lost, so no END record.
"$CGTRACE" record -q -o c.zst -- "$PROGS/spin" c.pid slow > c.log 2>&1 &
recorder=$!
check "(c) the program started" wait_for c.pid
sleep 3.5
kill -9 "$(cat c.pid)"
wait "$recorder"
rc=$?
check_eq "(c) Valgrind killed: the status passes through" 137 "$rc"
check_contains "(c) Valgrind killed: cgtrace says the stream ended early" "the program's stream ended early (killed by signal 9" "$(cat c.log)"
check "(c) Valgrind killed: no temporary files left (no Valgrind FIFOs either)" no_temporary_files
check_cut_short "(c) Valgrind killed" c.zst

# A full disk: a small tmpfs where we may mount one (root, as in CI), else
# the file size limit.
full_disk() {
	local dir=$WORK/full
	mkdir -p "$dir"
	if mount -t tmpfs -o size=4m tmpfs "$dir" 2>/dev/null; then
		trap 'umount "$WORK/full" 2>/dev/null; rm -rf "$WORK"' EXIT
		disk_error="No space left on device"
		"$CGTRACE" record -q -o "$dir/t.zst" -- "$PROGS/spin" full.pid > full.log 2>&1
	else
		echo "# cannot mount a tmpfs: the file size limit stands in for a full disk"
		disk_error="File too large"
		(ulimit -f 36864 && "$CGTRACE" record -q -o "$dir/t.zst" -- "$PROGS/spin" full.pid > full.log 2>&1)
	fi
}
started=$SECONDS
full_disk
rc=$?
took=$((SECONDS - started))
check_eq "full disk: exit status 1" 1 "$rc"
check_contains "full disk: the message names the file" "cgtrace: cannot write '$WORK/full/t.zst': $disk_error" "$(cat full.log)"
check_contains "full disk: says the program was stopped" "stopped the program" "$(cat full.log)"
check "full disk: the program is stopped" gone "$(cat full.pid)"
check "full disk: stopped at once (after ${took}s; it runs 60s)" test "$took" -lt 30
check "full disk: no temporary files left" no_temporary_files
check "full disk: the file ends after a whole frame (zstd -t)" zstd -q -t "$WORK/full/t.zst"
cp "$WORK/full/t.zst" full.zst
check_cut_short "full disk" full.zst
rm -f "$WORK/full/t.zst"

# The file size limit (bash's ulimit -f counts KiB) below the shared buffers: a message, not SIGXFSZ.
run bash -c "ulimit -f 20480 && '$CGTRACE' record -q -o small.zst -- sh -c 'touch ran'"
check_eq "ulimit -f 20480: exit status 1" 1 "$rc"
check_contains "ulimit -f 20480: says why" "cannot create the 32 MiB of buffers shared with Valgrind: File too large (the file size limit, ulimit -f" "$out"
check "ulimit -f 20480: the program did not run" test ! -e ran
check "ulimit -f 20480: no temporary files left" no_temporary_files

# A trace that outgrows the limit: EFBIG, the program stopped.
run bash -c "ulimit -f 36864 && '$CGTRACE' record -q -o big.zst -- '$PROGS/ptrchase' 2000000"
check_eq "trace outgrows ulimit -f: exit status 1" 1 "$rc"
check_contains "trace outgrows ulimit -f: the message names the file" "cgtrace: cannot write 'big.zst': File too large" "$out"
check_contains "trace outgrows ulimit -f: says the program was stopped" "stopped the program" "$out"
pid=$(trace_pid big.zst)
check "trace outgrows ulimit -f: the program is stopped" gone "${pid:-1}"
check "trace outgrows ulimit -f: no temporary files left" no_temporary_files
check "trace outgrows ulimit -f: the file ends after a whole frame (zstd -t)" zstd -q -t big.zst
check_cut_short "trace outgrows ulimit -f" big.zst

# Directories left by a cgtrace killed while it started: removed once
# their owner is dead, kept while it lives.
sh -c 'exit 0' &
dead=$!
wait "$dead"
for d in cgtrace-dead00:"$dead" cgtrace-alive0:$$; do
	mkdir "$TMPDIR/${d%%:*}"
	ln -s /usr/bin/valgrind "$TMPDIR/${d%%:*}/valgrind"
	echo "${d#*:}" > "$TMPDIR/${d%%:*}/pid"
done
"$CGTRACE" record -q -o sweep.zst -- /bin/true
check "stale private directory (owner dead): removed" test ! -e "$TMPDIR/cgtrace-dead00"
check "private directory of a live cgtrace: kept" test -e "$TMPDIR/cgtrace-alive0/pid"
