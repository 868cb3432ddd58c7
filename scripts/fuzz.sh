#!/bin/sh
# Runs fuzz targets one after another (make fuzz): each for $FUZZ_SECONDS
# on one core, in libFuzzer's fork mode so that a crash, a leak, a hang
# or an out-of-memory is kept and the run goes on.  Then a summary per
# target: executions, coverage (libFuzzer's cov: edges and ft: features,
# from its last status line), corpus size and what was found.
#
#   scripts/fuzz.sh FUZZ-DIR TARGET...
#
# FUZZ-DIR/bin/TARGET      the fuzzer (make fuzz-build)
# FUZZ-DIR/seeds/TARGET    seeds (scripts/fuzz-seeds.sh), read only
# FUZZ-DIR/corpus/TARGET   the corpus, kept from run to run
# FUZZ-DIR/findings/TARGET crash-*, leak-*, timeout-*, oom-* inputs
# FUZZ-DIR/logs/TARGET.log libFuzzer's output
# FUZZ-DIR/logs/TARGET/F.txt the sanitizer's report on finding F, replayed
#                          alone (some need a few runs: a race of the
#                          simulation's threads)
set -u
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
export UBSAN_OPTIONS
DIR=$1
shift
SECONDS_EACH=${FUZZ_SECONDS:-180}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
summary=""
found_any=0
for t in "$@"; do
	bin=$DIR/bin/$t
	corpus=$DIR/corpus/$t
	findings=$DIR/findings/$t
	log=$DIR/logs/$t.log
	mkdir -p "$corpus" "$findings" "$DIR/logs" "$DIR/seeds/$t"
	dict=""
	[ -f "$ROOT/tests/fuzz/$t.dict" ] && dict="-dict=$ROOT/tests/fuzz/$t.dict"
	echo "fuzz: $t for ${SECONDS_EACH}s (log: $log)"
	# The fork mode's child writes its artifacts to the prefix given.
	"$bin" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
		-max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=10 \
		-max_len=65536 -print_final_stats=1 $dict \
		-artifact_prefix="$findings/" "$corpus" "$DIR/seeds/$t" >"$log" 2>&1
	# "#1234: cov: 567 ft: 890 corp: 12 exec/s 100 oom/timeout/crash: 0/0/1 time: 30s ..."
	last=$(grep -E '^#[0-9]+: cov: ' "$log" | tail -1)
	execs=$(echo "$last" | sed -n 's/^#\([0-9]*\):.*/\1/p')
	cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	otc=$(echo "$last" | sed -n 's/.*oom\/timeout\/crash: \([0-9/]*\).*/\1/p')
	n_found=$(ls "$findings" | wc -l)
	[ "$n_found" -gt 0 ] && found_any=1
	mkdir -p "$DIR/logs/$t"
	reports=""
	for f in "$findings"/*; do
		[ -f "$f" ] || continue
		report=$DIR/logs/$t/$(basename "$f").txt
		[ -f "$report" ] || timeout 120 "$bin" -runs=20 -timeout=10 -rss_limit_mb=2048 \
			"$f" >"$report" 2>&1
		what=$(grep -m1 -E '^SUMMARY: |ERROR: libFuzzer' "$report" || true)
		reports="$reports    $(basename "$f"): ${what:-does not fail when replayed alone}
"
	done
	line=$(printf '%-13s %10s execs  cov %6s  ft %7s  corpus %5s  oom/timeout/crash %s  files in findings: %s' \
		"$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$(ls "$corpus" | wc -l)" "${otc:-?}" "$n_found")
	summary="$summary$line
$reports"
done
echo
echo "fuzz summary (${SECONDS_EACH}s each):"
printf '%s' "$summary"
if [ "$found_any" = 1 ]; then
	echo "fuzz: inputs that fail are in $DIR/findings/TARGET/; replay one with"
	echo "      $DIR/bin/TARGET FILE, and keep it as tests/fuzz/findings/TARGET/NAME"
	echo "      (tests/fuzz/README.md)"
fi
