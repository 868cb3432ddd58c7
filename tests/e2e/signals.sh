# Temporaries and signals (DEVELOPERS.md, Conventions): simulate (one
# configuration, a sweep, --tool=callgrind), report --archive, archive,
# info and dump make files for a while -- a result before it is renamed
# into place, an archive unpacked into $TMPDIR, a PT trace's decode.
# (a) Piped, in the background and under timeout each run ends as a plain
# run does, with its outputs and nothing else: its private TMPDIR empty,
# nothing beside its outputs.  (b) SIGINT, SIGTERM or SIGHUP sent while a
# temporary is there (tests/tools/signal_at.py stops the command, sees the
# temporary, signals) ends it with that signal's status and leaves no
# temporary, and nothing new under an output's name: a file the user
# named is as it was.  A reader gone (SIGPIPE) the same.
source "$(dirname "$0")/../lib.sh"
plan 50

SIGNAL_AT=$ROOT/tests/tools/signal_at.py
mkdir src build empty
cp "$ROOT/tests/programs/loops.c" src/
(cd build && cc -O1 -g -o loops ../src/loops.c) || exit 1
# Recorded, archived with its source, then gone: simulate and info unpack
# the archive beside the trace (t.zst.archive) into $TMPDIR for its
# symbols, report --archive for its source.
clean_env "$CGTRACE" record -q -o t.zst -- build/loops 1 >/dev/null
"$CGTRACE" archive -q --sources t.zst || exit 1
rm -r build src
clean_env "$CGTRACE" record -q -o r.zst -- "$PROGS/cgrequests" >/dev/null
# A PT trace, decoded for the run only into $TMPDIR: the name of its
# stored decode is taken by a file that is not one.
clean_env "$CGTRACE" record -q -o l.zst -- "$PROGS/loops" 3 >/dev/null
"$BUILD_DIR/tests/pt/pt-synth" l.zst pt.zst pt.col.zst >/dev/null 2>&1 || exit 1
echo "not a decode" > pt.decoded.zst

# args_for CASE: the command line of a case ($out: its output directory).
args_for() {
	case $1 in
	simulate) args=(simulate -q --build-id-dir="$WORK/empty" -o "$out/c.out" t.zst) ;;
	sweep) args=(simulate -q --build-id-dir="$WORK/empty" --D1=1k..32k,2..4,64 -o "$out/c.%c"
		--sweep-summary="$out/sweep.csv" --plot="$out/sweep.svg" t.zst) ;;
	# (every instruction's costs, uncompressed: a dump long enough to be
	# caught being written)
	callgrind) args=(simulate -q --tool=callgrind --cache-sim=yes --dump-instr=yes
		--compress-strings=no --compress-pos=no --callgrind-out-file="$out/cg" r.zst) ;;
	report) args=(report --archive=t.zst.archive ref.simulate/c.out) ;;
	archive) args=(archive -q -o "$out/a.archive" t.zst) ;;
	info) args=(info --build-id-dir="$WORK/empty" t.zst) ;;
	dump) args=(dump --limit=20000 pt.zst) ;;
	esac
}
# fresh NAME: a new TMPDIR ($tmp) and output directory ($out), both empty.
fresh() {
	tmp=$WORK/tmp.$1 out=$WORK/out.$1
	mkdir "$tmp" "$out"
}
listing() { echo $(ls -A "$1"); }
# The stdout of info names the unpacked archive, which is the run's own.
normalise() { sed -i "s|$tmp/cgtrace-archive\.[^/]*|ARCHIVE|" "$out/stdout"; }

# The reference outputs: each case run plainly.
cases="simulate sweep callgrind report archive info dump"
for c in $cases; do
	fresh "ref.$c"
	mv "$out" "ref.$c"
	out=$WORK/ref.$c
	args_for "$c"
	TMPDIR=$tmp timeout 60 "$CGTRACE" "${args[@]}" >"$out/stdout" 2>"err.ref.$c"
	normalise
done
check_eq "the sweep: twelve cachegrind.out files, a summary, a plot (and stdout)" 15 \
	"$(ls ref.sweep | wc -l)"
check_eq "callgrind: the end and two dumps (and stdout)" "cg cg.1 cg.2 stdout" "$(listing ref.callgrind)"
check_contains "report: loops.c annotated, from the archive" "for (int r = 0; r < reps; r++) {" \
	"$(cat ref.report/stdout)"
check_contains "info: the program's symbols from the archive" "symbols: from the archive, ARCHIVE/" \
	"$(cat ref.info/stdout)"
check_contains "dump: the PT trace decoded for this run only" "decoding for this run only" \
	"$(cat err.ref.dump)"

# (a) outcome CASE: status, outputs as the reference's, what is in TMPDIR.
outcome() {
	normalise
	local same=differ
	diff -r "ref.$1" "$out" >/dev/null && same="as the plain run's"
	echo "status $rc, outputs $same, in TMPDIR: '$(listing "$tmp")'"
}
expected="status 0, outputs as the plain run's, in TMPDIR: ''"
# bounded_wait PID: the status of the background job PID, which is killed
# after 60 s (status 124).  (timeout would not do: it gives the command a
# process group and signal dispositions of its own.)
bounded_wait() {
	local tenths=0
	while kill -0 "$1" 2>/dev/null && [ $tenths -lt 600 ]; do
		sleep 0.1
		tenths=$((tenths + 1))
	done
	kill -KILL "$1" 2>/dev/null && { wait "$1"; return 124; }
	wait "$1"
}
for c in $cases; do
	fresh "piped.$c"
	args_for "$c"
	TMPDIR=$tmp timeout 60 "$CGTRACE" "${args[@]}" 2>/dev/null | cat >"$out/stdout"
	rc=${PIPESTATUS[0]}
	check_eq "$c | cat" "$expected" "$(outcome "$c")"

	fresh "background.$c"
	args_for "$c"
	TMPDIR=$tmp "$CGTRACE" "${args[@]}" >"$out/stdout" 2>/dev/null &
	bounded_wait $!
	rc=$?
	check_eq "$c & wait" "$expected" "$(outcome "$c")"

	fresh "timeout.$c"
	args_for "$c"
	TMPDIR=$tmp timeout 60 "$CGTRACE" "${args[@]}" >"$out/stdout" 2>/dev/null
	rc=$?
	check_eq "timeout 60 $c" "$expected" "$(outcome "$c")"
done

# Its reader gone: "| head -1" stops reading after a line; the run ends
# well if all it wrote fitted the pipe before head exited, else dies of
# SIGPIPE as a plain program does (a pipe closed before the run, below,
# makes the first write fail: always SIGPIPE); either way nothing is left.
for c in report dump; do
	fresh "head.$c"
	args_for "$c"
	got=$(TMPDIR=$tmp timeout 60 "$CGTRACE" "${args[@]}" 2>/dev/null | head -1; echo "${PIPESTATUS[0]}")
	line=$(sed -n 1p <<<"$got") status=$(sed -n 2p <<<"$got")
	case $status in 0 | 141) verdict="0 or 141" ;; *) verdict="$status" ;; esac
	check_eq "$c | head -1: its first line, then status 0 or SIGPIPE's, nothing in TMPDIR" \
		"$(head -1 "ref.$c/stdout") / 0 or 141 / ''" "$line / $verdict / '$(listing "$tmp")'"
done
# closed_pipe COMMAND...: COMMAND with its stdout a pipe nobody reads.
closed_pipe() {
	python3 -c '
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
status = subprocess.call(sys.argv[1:], stdout=w, timeout=60)
sys.exit(128 - status if status < 0 else status)' "$@"
}
for c in report dump; do
	fresh "closed.$c"
	args_for "$c"
	TMPDIR=$tmp closed_pipe "$CGTRACE" "${args[@]}" 2>/dev/null
	rc=$?
	check_eq "$c, its stdout a pipe nobody reads: SIGPIPE (status 141), nothing in TMPDIR" \
		"141 ''" "$rc '$(listing "$tmp")'"
done

# (b) signalled SIGNAL CASE WHAT GLOB [BEFORE]: runs CASE in a fresh
# directory (holding BEFORE, a file the user named, under its output
# name) and sends it SIGNAL while a file matching GLOB (TMP/: in $tmp,
# OUT/: in $out) is there.  Checks that it was, that the run died of
# SIGNAL, and what it left: in TMPDIR nothing; in its output directory,
# for a sweep and callgrind's dumps whole outputs of the plain run (those
# done), else BEFORE as it was.
n_run=0
signalled() {
	local sig=$1 c=$2 what=$3 glob=$4 before=${5:-}
	n_run=$((n_run + 1))
	# A run may end before the watcher sees the temporary (a loaded
	# machine; a dump's is there for a moment): that attempt sent nothing,
	# and the run starts again in a fresh directory, three times at most.
	local attempt pattern=$glob
	for attempt in 1 2 3; do
		fresh "$sig.$c.$n_run.$attempt"
		[ -n "$before" ] && cp "before/$before" "$out/$before"
		args_for "$c"
		glob=${pattern/#TMP/$tmp}
		glob=${glob/#OUT/$out}
		TMPDIR=$tmp python3 "$SIGNAL_AT" "$sig" "$glob" "seen.$n_run" -- \
			"$CGTRACE" "${args[@]}" >"$out/stdout" 2>"err.$n_run"
		rc=$?
		[ -s "seen.$n_run" ] && break
	done
	local status=$((128 + $(kill -l "$sig"))) files expected left f
	files=$(echo $(ls -A "$out" | grep -v -x stdout))
	if [ "$c" = sweep ] || [ "$c" = callgrind ]; then
		expected="only whole outputs of the plain run"
		left=$expected
		for f in $files; do
			cmp -s "$out/$f" "ref.$c/$f" || left="'$files' ($f is not the plain run's)"
		done
	else
		expected="'$before'"
		left="'$files'"
		if [ -n "$before" ] && ! cmp -s "$out/$before" "before/$before"; then
			left="$left ($before changed)"
		fi
	fi
	check_eq "SIG$sig while $what is there: $c dies of it ($status), leaves nothing" \
		"seen, status $status, in its output directory: $expected, in TMPDIR: ''" \
		"$([ -s "seen.$n_run" ] && echo seen || echo "never seen"), status $rc, in its output directory: $left, in TMPDIR: '$(listing "$tmp")'"
}
# Files a user named, there before a run: another configuration's
# cachegrind.out, an older archive.
mkdir before
"$CGTRACE" simulate -q --D1=8192,2,64 -o before/c.out t.zst
cp t.zst.archive before/a.archive

for sig in INT TERM; do
	named=$([ $sig = INT ] && echo named)
	signalled $sig simulate "its unpacked archive" 'TMP/cgtrace-archive.*' ${named:+c.out}
	signalled $sig simulate "c.out's temporary" 'OUT/.cgtrace-out.*' ${named:+c.out}
	signalled $sig sweep "an output's temporary" 'OUT/.cgtrace-out.*'
	signalled $sig callgrind "a dump's temporary" 'OUT/.cgtrace-out.*'
	signalled $sig report "its unpacked archive" 'TMP/cgtrace-archive.*'
	signalled $sig archive "the archive's temporary" 'OUT/.cgtrace-out.*' ${named:+a.archive}
	signalled $sig info "its unpacked archive" 'TMP/cgtrace-archive.*'
	signalled $sig dump "the PT decode" 'TMP/cgtrace-decoded.*'
done
signalled HUP sweep "an output's temporary" 'OUT/.cgtrace-out.*'
signalled HUP dump "the PT decode" 'TMP/cgtrace-decoded.*'

# A signal ignored when the run starts stays ignored (as a shell's
# background job ignores SIGINT): the run goes on to its end.
fresh ignored
args_for simulate
TMPDIR=$tmp python3 "$SIGNAL_AT" INT "$out/.cgtrace-out.*" seen.ignored -- \
	bash -c 'trap "" INT; exec "$@"' _ "$CGTRACE" "${args[@]}" >"$out/stdout" 2>/dev/null
rc=$?
check_eq "SIGINT ignored from the start, sent while c.out's temporary is there: the run ends as a plain one" \
	"seen, status 0, outputs as the plain run's, in TMPDIR: ''" \
	"$([ -s seen.ignored ] && echo seen || echo "never seen"), $(outcome simulate)"

# The PT decode stored beside the trace is made under a temporary name.
fresh stored
cp pt.zst "$out/"
TMPDIR=$tmp python3 "$SIGNAL_AT" TERM "$out/pt.decoded.zst.*.part" seen.stored -- \
	"$CGTRACE" simulate -q -o "$out/pt.out" "$out/pt.zst" 2>/dev/null
rc=$?
check_eq "SIGTERM while the stored decode is made: status 143, beside the trace only the trace, in TMPDIR nothing" \
	"seen, status 143, beside the trace: 'pt.zst', in TMPDIR: ''" \
	"$([ -s seen.stored ] && echo seen || echo "never seen"), status $rc, beside the trace: '$(listing "$out")', in TMPDIR: '$(listing "$tmp")'"
