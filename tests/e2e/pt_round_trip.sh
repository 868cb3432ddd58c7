# The Intel PT path without Intel PT hardware (make test-pt): each program
# is recorded exactly with the Valgrind backend, turned by pt-synth into the
# trace the pt recorder would have written for the same execution (and into
# the collapsed source: REP iterations as one execution, as PT reports
# them), and the PT trace goes through cgtrace's own decoder.  The decoded
# instruction stream must equal the collapsed source's; simulating both must
# give the same Ir I1mr Bc Bcm Bi Bim; every Dr/Dw difference must have a
# cause (pt-compare).  ILmr too is exact when every access is sampled; with
# fewer samples it moves a little, as LL holds data (estimated) and code
# alike.  Then the estimator's error, damaged traces, and the recorder's
# refusal on this PT-less host.
source "$(dirname "$0")/../lib.sh"
plan 57

SYNTH=$BUILD_DIR/tests/pt/pt-synth
COMPARE=$BUILD_DIR/tests/pt/pt-compare
CFG="--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64 --branch-sim=yes"
declare -A ORDER=([Ir]=1 [I1mr]=2 [ILmr]=3 [Dr]=4 [D1mr]=5 [DLmr]=6 [Dw]=7 [D1mw]=8 [DLmw]=9
	[Bc]=10 [Bcm]=11 [Bi]=12 [Bim]=13)

# fields FILE EVENT...: those totals of a cachegrind.out file.
fields() {
	local file=$1
	shift
	local line
	line=$(summary_line "$file")
	[ -n "$line" ] || return # no file: nothing to compare, and check_eq fails
	for ev in "$@"; do
		echo "$line" | awk -v k="${ORDER[$ev]}" '{ printf "%s ", $k }'
	done
}

numbers numbers.txt
# round_trip NAME PERIOD PROG ARGS...: with one memory sample per PERIOD
# accesses.
round_trip() {
	local name=$1 period=$2
	shift 2
	clean_env "$CGTRACE" record -q -o "$name.zst" -- "$@" >/dev/null 2>&1
	"$SYNTH" --mem-period="$period" "$name.zst" "$name.pt.zst" "$name.col.zst" 2>/dev/null
	if "$COMPARE" "$name" "$name.col.zst" "$name.pt.zst" >"$name.verdict" 2>/dev/null; then
		ok "$name: decoded stream equals the collapsed source; every Dr/Dw difference explained"
	else
		not_ok "$name: decoded stream equals the collapsed source; every Dr/Dw difference explained"
	fi
	sed 's/^/# /' "$name.verdict"
	"$CGTRACE" simulate -q $CFG -o "$name.col.out" "$name.col.zst" 2>/dev/null
	"$CGTRACE" simulate -q $CFG -o "$name.pt.out" "$name.pt.zst" 2>/dev/null
	check_eq "$name: Ir I1mr Bc Bcm Bi Bim from the PT trace" \
		"$(fields "$name.col.out" Ir I1mr Bc Bcm Bi Bim)" \
		"$(fields "$name.pt.out" Ir I1mr Bc Bcm Bi Bim)"
	local exact mine
	exact=$(fields "$name.col.out" ILmr | tr -d ' ')
	mine=$(fields "$name.pt.out" ILmr | tr -d ' ')
	if [ "$period" = 1 ]; then
		check_eq "$name: ILmr, every access sampled" "$exact" "$mine"
	else
		check "$name: ILmr $mine within 1% of $exact, one access in $period sampled" \
			awk -v a="$exact" -v b="$mine" 'BEGIN { d = a - b; exit !(a != "" && b != "" && d * d <= (a / 100) ^ 2) }'
	fi
}

for p in loops ptrchase recursion interp strings straddle avx2 threads selfkill syscalls; do
	round_trip "$p" 1 "$PROGS/$p"
done
round_trip sort 1000 sort -n --parallel=1 -o sorted.txt numbers.txt

# Encodings the decoder must follow as well.
for opt in --retcomp=no --tnt64 --psb-period=256 --tsc-every=0; do
	"$SYNTH" "$opt" loops.zst v.pt.zst v.col.zst 2>/dev/null
	check "loops $opt: decoded stream equals the source" "$COMPARE" loops v.col.zst v.pt.zst >/dev/null 2>&1
	rm -f v.*
done

# Damage: decoded past with the loss counted, never a crash.
instructions() { "$CGTRACE" info "$1" 2>/dev/null | awk '/instructions decoded/ { gsub(",", "", $3); print $3 }'; }
total=$(instructions loops.pt.zst)
"$SYNTH" --overflow-at=500000 loops.zst ovf.pt.zst ovf.col.zst 2>/dev/null
out=$("$CGTRACE" simulate -q -o ovf.out ovf.pt.zst 2>&1)
check_eq "an overflow mid-trace: simulated (exit status 0)" 0 "$?"
check_contains "an overflow mid-trace: reported" "(overflows: 1, decode errors: 0, lost pieces: 0)" "$out"
check "an overflow mid-trace: the ~1000 instructions of the gap are lost, no more" \
	awk -v n="$(instructions ovf.pt.zst)" -v t="$total" 'BEGIN { exit !(n < t - 900 && n > t - 1200) }'
"$SYNTH" --truncate-aux-at=300000 loops.zst cut.pt.zst cut.col.zst 2>/dev/null
check_contains "a truncated AUX piece: counted" "1 lost piece of trace" "$("$CGTRACE" info cut.pt.zst 2>&1)"
"$SYNTH" --corrupt-at=200000 loops.zst bad.pt.zst bad.col.zst 2>/dev/null
out=$("$CGTRACE" info bad.pt.zst 2>&1)
check_contains "garbage in the packets: a decode error, resynced at the next PSB" "1 decode error (" "$out"
check "garbage in the packets: most of the trace still decoded" \
	awk -v n="$(instructions bad.pt.zst)" -v t="$total" 'BEGIN { exit !(n > t * 0.99) }'

head -c 5000000 sort.pt.zst >cutfile.pt.zst
out=$("$CGTRACE" simulate -q -o cutfile.out cutfile.pt.zst 2>&1)
check_eq "a PT trace file cut short: simulated, exit status 3" 3 "$?"
check_contains "a PT trace file cut short: says where it ends" "ends inside a zstd frame at byte offset" "$out"
out=$("$CGTRACE" simulate -q -o cutfile.out cutfile.pt.zst 2>&1)
check_contains "a PT trace file cut short: its stored decode says so again" "the trace has no end record" "$out"

# The decode is stored beside the trace and replayed; a changed trace is
# decoded again; where nothing can be written, it is decoded for the run.
rm -f loops.pt.decoded.zst
out=$("$CGTRACE" simulate -q -o a.out loops.pt.zst 2>&1)
check_contains "first simulate: decodes and stores" "decoded the Intel PT trace into loops.pt.decoded.zst" "$out"
out=$("$CGTRACE" simulate -q -o b.out loops.pt.zst 2>&1)
check_empty "second simulate: replays the stored decode, silently" "$out"
check_same_file "the replay gives the same results" a.out b.out
touch -d "1 minute ago" loops.pt.zst
check_contains "a changed trace: decoded again" "is out of date (the trace has changed" \
	"$("$CGTRACE" simulate -q -o c.out loops.pt.zst 2>&1)"
# (root writes anywhere: as root, the check runs as nobody)
mkdir ro outdir && cp loops.pt.zst ro/ && chmod 555 ro && chmod 777 outdir
as_user=()
if [ "$(id -u)" -eq 0 ]; then
	chmod 755 "$WORK"
	as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
fi
check_contains "a read-only directory: decoded for this run" "decoding it for this run only" \
	"$("${as_user[@]}" "$CGTRACE" simulate -q -o outdir/d.out ro/loops.pt.zst 2>&1)"
# A sweep's second pass replays that decode too: decoded once, the files
# those of single runs, nothing left in TMPDIR.
mkdir scratch && chmod 777 scratch
out=$(TMPDIR=$WORK/scratch "${as_user[@]}" "$CGTRACE" simulate -q -o 'outdir/s.%c' \
	--D1=32k..64k,8,64 ro/loops.pt.zst 2>&1)
check_eq "a read-only directory, a sweep: decoded once, for this run" 1 \
	"$(grep -c "decoding it for this run only" <<<"$out")"
# The single run as the same user: where the clone is not readable by
# nobody (a mktemp -d parent), both decodes lose the same code bytes.
TMPDIR=$WORK/scratch "${as_user[@]}" "$CGTRACE" simulate -q --D1=65536,8,64 -o outdir/single.out \
	ro/loops.pt.zst 2>/dev/null
check_same_file "a read-only directory, a sweep: a file as its single run's" outdir/single.out \
	outdir/s.D1-65536-8-64
check_empty "a read-only directory, a sweep: nothing left in TMPDIR" "$(ls -A scratch)"
chmod 755 ro

# The estimator: D1 and LL misses from one access in N sampled, against the
# exact ones of the collapsed source.
for p in loops ptrchase; do
	read -r -a exact <<<"$(fields "$p.col.out" D1mr DLmr D1mw DLmw)"
	for period in 1 10 100 1000; do
		"$SYNTH" --mem-period=$period "$p.zst" est.pt.zst est.col.zst 2>/dev/null
		"$CGTRACE" simulate -q $CFG -o est.out est.pt.zst 2>/dev/null
		read -r -a got <<<"$(fields est.out D1mr DLmr D1mw DLmw)"
		line=$(awk -v e="${exact[*]}" -v g="${got[*]}" 'BEGIN {
			split(e, x); split(g, y); split("D1mr DLmr D1mw DLmw", name)
			for (i = 1; i <= 4; i++) {
				err = x[i] ? (y[i] - x[i]) * 100 / x[i] : 0
				printf "%s %s vs %s (%+.1f%%)  ", name[i], y[i], x[i], err
				if (err > worst || -err > worst) worst = err < 0 ? -err : err
			}
			printf "| %.1f", worst }')
		echo "# estimate $p, one access in $period: ${line%|*}"
		if [ "$period" = 1 ]; then
			check "$p: every access sampled, misses within 1% of the exact ones" \
				awk -v w="${line##*| }" -v n="${#exact[@]} ${#got[@]}" 'BEGIN { exit !(n == "4 4" && w <= 1) }'
		fi
		rm -f est.*
	done
done

# This host has no Intel PT: the pt backend refuses at once.
out=$("$CGTRACE" record --backend=pt -o pt.zst -- /bin/true 2>&1)
check_eq "record --backend=pt without Intel PT: exit status 1" 1 "$?"
check_contains "record --backend=pt without Intel PT: says why and what to use" \
	"needs Intel Processor Trace, which this host does not have" "$out"
check_contains "record --backend=pt without Intel PT: suggests the valgrind backend" "--backend=valgrind" "$out"
check "record --backend=pt without Intel PT: no file left behind" test ! -e pt.zst
out=$("$CGTRACE" record -o auto.zst -- /bin/true 2>&1)
check_contains "record --backend=auto: picks valgrind" "recording with the valgrind backend" "$out"

# The verdicts, one line per program.
for f in loops ptrchase recursion interp strings straddle avx2 threads selfkill syscalls sort; do
	tail -n 1 "$f.verdict" | sed 's/^/# /'
done
