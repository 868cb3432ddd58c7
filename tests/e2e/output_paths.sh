# Where simulate's and record's output goes: devices and FIFOs written
# through, symlinks followed, regular files replaced whole, the trace and
# other files refused before simulating, the default name never replacing
# an earlier result, errors naming the path given, --threads by affinity.
# Device nodes are made here with mknod (as root): never the system's.
source "$(dirname "$0")/../lib.sh"
plan 50

run() { out=$("$@" 2>&1); rc=$?; }
skip() { ok "$1 # skip $2"; }
root=0
[ "$(id -u)" = 0 ] && mknod -m 666 null c 1 3 && mknod -m 666 full c 1 7 && root=1

clean_env "$CGTRACE" record -q -o t.zst -- "$PROGS/loops" >/dev/null
cp t.zst t.copy
pid=$("$CGTRACE" info t.zst | awk '/^pid:/ { print $2 }')
cfg="--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"
"$CGTRACE" simulate -q $cfg -o ref.out t.zst

# Devices: written to, never replaced.
if [ $root = 1 ]; then
	run "$CGTRACE" simulate -q $cfg -o null t.zst
	check_eq "-o a null device: exit status 0" 0 "$rc"
	check "-o a null device: still the device" test -c null
	run "$CGTRACE" simulate -q $cfg -o full t.zst
	check_eq "-o a full device: exit status 1" 1 "$rc"
	check_eq "-o a full device: the message" "cgtrace: cannot write 'full': No space left on device" "$out"
	check "-o a full device: still the device" test -c full
	ln -s null to-null
	run "$CGTRACE" simulate -q $cfg -o to-null t.zst
	check "-o a symlink to a device: written through, link and device stay" \
		test "$rc" = 0 -a -L to-null -a -c null
else
	for what in "null device: status" "null device: kept" "full device: status" \
		"full device: message" "full device: kept" "symlink to a device"; do
		skip "-o a $what" "mknod needs root"
	done
fi

# A FIFO: its reader gets the file (a reader with a timeout: no hang).
mkfifo fifo
timeout 60 cat fifo > from-fifo &
reader=$!
run timeout 60 "$CGTRACE" simulate -q $cfg -o fifo t.zst
wait $reader
check_eq "-o a FIFO: exit status 0" 0 "$rc"
check "-o a FIFO: still a FIFO" test -p fifo
check_same_file "-o a FIFO: the reader got the cachegrind.out" ref.out from-fifo

# A symlink: what it points to is replaced whole, the link stays.
"$CGTRACE" simulate -q $cfg -o a.out t.zst
ln -s a.out link.out
run "$CGTRACE" simulate -q --I1=32768,8,64 --D1=16384,4,64 --LL=8388608,16,64 -o link.out t.zst
check_eq "-o a symlink: exit status 0" 0 "$rc"
check "-o a symlink: still a symlink" test -L link.out
check_contains "-o a symlink: its target has the new results" "16384 B, 64 B, 4-way" "$(grep '^desc: D1' a.out)"
ln -s made.out dangling.out
"$CGTRACE" simulate -q $cfg -o dangling.out t.zst
check "-o a dangling symlink: the link stays" test -L dangling.out
check_same_file "-o a dangling symlink: its target is made" ref.out made.out

# Regular files: replaced whole and keeping their permissions.
chmod 640 a.out
"$CGTRACE" simulate -q $cfg -o a.out t.zst
check_same_file "-o an existing cachegrind.out: replaced" ref.out a.out
check_eq "-o an existing cachegrind.out: its permissions kept" 640 "$(stat -c %a a.out)"
: > empty.out
"$CGTRACE" simulate -q $cfg -o empty.out t.zst
check_same_file "-o an empty file: written" ref.out empty.out

# The input and other traces: refused before simulating, untouched.
run "$CGTRACE" simulate $cfg -o t.zst t.zst
check_eq "-o the trace: exit status 1" 1 "$rc"
check_eq "-o the trace: the message, and nothing simulated" \
	"cgtrace: refusing to overwrite 't.zst': it is the input 't.zst' (choose another -o)" \
	"$(grep -v '^cgtrace: I1 ' <<<"$out")"
check_same_file "-o the trace: the trace intact" t.copy t.zst
ln t.zst hard.zst
run "$CGTRACE" simulate -q $cfg -o hard.zst t.zst
check_contains "-o a hard link of the trace: refused" "'hard.zst': it is the input 't.zst'" "$out"
ln -s t.zst soft.zst
run "$CGTRACE" simulate -q $cfg -o soft.zst t.zst
check_contains "-o a symlink to the trace: refused" "'soft.zst': it is the input 't.zst'" "$out"
run "$CGTRACE" simulate -q $cfg -o soft.zst ./soft.zst
check_contains "the trace through a symlink, -o the trace: refused" "'soft.zst': it is the input './soft.zst'" "$out"
check_same_file "the trace, after all that: intact" t.copy t.zst
cp t.zst other.zst
run "$CGTRACE" simulate -q $cfg -o other.zst t.zst
check_eq "-o another trace: refused" \
	"1 cgtrace: refusing to overwrite 'other.zst': it is a cgtrace trace (choose another -o)" "$rc $out"
check_same_file "-o another trace: intact" t.copy other.zst
run "$CGTRACE" simulate -q --tool=callgrind --callgrind-out-file=t.zst t.zst
check_eq "--tool=callgrind --callgrind-out-file=the trace: refused, naming that option" \
	"1 cgtrace: refusing to overwrite 't.zst': it is the input 't.zst' (choose another --callgrind-out-file)" \
	"$rc $out"
echo precious > notes.txt
run "$CGTRACE" simulate -q $cfg -o notes.txt t.zst
check_contains "-o a file that is not a cachegrind.out: refused" \
	"refusing to overwrite 'notes.txt': it is not a cachegrind.out file" "$out"
ln -s notes.txt notes.link
run "$CGTRACE" simulate -q $cfg -o notes.link t.zst
check_eq "-o a symlink to such a file: refused, file and link intact" "1 precious link" \
	"$rc $(cat notes.txt) $(test -L notes.link && echo link)"
mkdir dir.out
run "$CGTRACE" simulate -q $cfg -o dir.out t.zst
check_eq "-o a directory: refused" "1 cgtrace: cannot write 'dir.out': it is a directory" "$rc $out"

# A write that fails names the path given, not the temporary file, and
# leaves the earlier result.
run bash -c 'ulimit -f 0; trap "" XFSZ; exec "$@"' _ "$CGTRACE" simulate -q $cfg -o a.out t.zst
check_eq "a failed write: the message names -o's path" "1 cgtrace: cannot write 'a.out': File too large" "$rc $out"
check_same_file "a failed write: the earlier result intact" ref.out a.out
check_empty "a failed write: no temporary file left" "$(ls -A | grep cgtrace-out)"

# Without -o, nothing is replaced: every what-if run keeps its results.
mkdir what-if && cd what-if
"$CGTRACE" simulate -q --D1=32768,8,64 ../t.zst
run "$CGTRACE" simulate --D1=16384,4,64 ../t.zst
check_contains "second default run: says where its results went" \
	"cachegrind.out.$pid exists: wrote cachegrind.out.$pid.1" "$out"
"$CGTRACE" simulate -q --D1=8192,2,64 ../t.zst
check_eq "three default runs: three files" "cachegrind.out.$pid cachegrind.out.$pid.1 cachegrind.out.$pid.2" \
	"$(echo $(ls))"
check_eq "three default runs: each with its own D1" "32768 16384 8192" \
	"$(for f in cachegrind.out.$pid cachegrind.out.$pid.1 cachegrind.out.$pid.2; do
		awk '/^desc: D1/ { printf "%s ", $4 }' $f; done | sed 's/ $//')"
check_contains "report with no file: the newest" "8192 B, 64 B, 2-way associative" \
	"$("$CGTRACE" report 2>/dev/null | grep 'D1 cache')"
cd ..

# The same for callgrind.out, whose dumps are parts NAME.1, NAME.2: a run
# whose name is taken takes NAME-2, never NAME.1, another run's part.
mkdir parts && cd parts
clean_env "$CGTRACE" record -q -o r.zst -- "$PROGS/cgrequests" >/dev/null
rpid=$("$CGTRACE" info r.zst | awk '/^pid:/ { print $2 }')
"$CGTRACE" simulate -q --tool=callgrind r.zst
run "$CGTRACE" simulate --tool=callgrind r.zst
check_contains "--tool=callgrind, second default run: says where its results went" \
	"callgrind.out.$rpid exists: writing callgrind.out.$rpid-2" "$out"
check_eq "--tool=callgrind, two default runs: each run's three files under a name of its own" \
	"callgrind.out.$rpid callgrind.out.$rpid-2 callgrind.out.$rpid-2.1 callgrind.out.$rpid-2.2 callgrind.out.$rpid.1 callgrind.out.$rpid.2 r.zst" \
	"$(echo $(ls))"
cd ..

# --threads: the CPUs the process may run on (taskset), not all online.
if [ "$(nproc --all)" -ge 2 ] && command -v strace >/dev/null; then
	# (LeakSanitizer cannot run under ptrace: make test-asan's build would fail)
	threads_made() {
		ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=clone,clone3 -o st.log "$@" >/dev/null 2>&1
		grep -c CLONE_THREAD st.log
	}
	one=$(threads_made "$CGTRACE" simulate -q --threads=1 -o x.out t.zst)
	two=$(threads_made "$CGTRACE" simulate -q --threads=2 -o x.out t.zst)
	check "--threads=2 makes more threads than --threads=1 (the measure works)" test "$two" -gt "$one"
	check_eq "taskset -c 0: one thread's worth, as --threads=1" "$one" \
		"$(threads_made taskset -c 0 "$CGTRACE" simulate -q -o x.out t.zst)"
	check_eq "taskset -c 0,1: two threads' worth, as --threads=2" "$two" \
		"$(threads_made taskset -c 0,1 "$CGTRACE" simulate -q -o x.out t.zst)"
else
	for what in "more threads" "taskset -c 0" "taskset -c 0,1"; do
		skip "--threads: $what" "needs 2 CPUs and strace"
	done
fi

# record -o: devices, FIFOs and symlinks the same way; the program refused.
if [ $root = 1 ]; then
	run clean_env "$CGTRACE" record -q -o null -- "$PROGS/loops"
	check "record -o a null device: exit status 0, still the device" test "$rc" = 0 -a -c null
	run clean_env "$CGTRACE" record -q -o full -- "$PROGS/loops"
	check_eq "record -o a full device: exit status 1" 1 "$rc"
	check_contains "record -o a full device: the message" "No space left on device" "$out"
else
	for what in "null device" "full device: status" "full device: message"; do
		skip "record -o a $what" "mknod needs root"
	done
fi
timeout 60 cat fifo > trace-from-fifo &
reader=$!
run timeout 60 env -i PATH=/usr/bin:/bin HOME="$WORK" LANG=C "$CGTRACE" record -q -o fifo -- "$PROGS/loops"
wait $reader
check "record -o a FIFO: exit status 0, still a FIFO" test "$rc" = 0 -a -p fifo
run "$CGTRACE" simulate -q -o fifo.out trace-from-fifo
check_eq "record -o a FIFO: the reader got a whole trace (simulate: exit status 0)" 0 "$rc"
cp t.zst r.zst
ln -s r.zst r.link
run clean_env "$CGTRACE" record -q -o r.link -- "$PROGS/loops"
check "record -o a symlink to a trace: the link stays, its target is new" \
	bash -c 'test -L r.link && ! cmp -s r.zst t.copy'
run "$CGTRACE" simulate -q -o r.out r.link
check_eq "record -o a symlink to a trace: the target is a whole trace (simulate: exit status 0)" 0 "$rc"
cp "$PROGS/loops" prog
run "$CGTRACE" record -q -o prog -- ./prog
check_eq "record -o the program: refused, intact" \
	"1 cgtrace: refusing to overwrite 'prog': it is not a cgtrace trace (remove it or choose another -o) same" \
	"$rc $out $(cmp -s prog "$PROGS/loops" && echo same)"
