# The fuzz targets' committed inputs, replayed (tests/fuzz/README.md): the
# seeds of tests/fuzz/corpus/TARGET/ and every input that once failed,
# tests/fuzz/regressions/TARGET/.  Each runs in a process of its own with a
# time limit (build/tests/fuzz/TARGET, the replay driver); a check fails
# when the input crashes, hangs or aborts (a target's own check).  Inputs
# still failing wait in tests/fuzz/findings/, not replayed here.
source "$(dirname "$0")/../lib.sh"

FUZZ=$ROOT/tests/fuzz
TARGETS="trace_file trace_stream events cgout pt elf cache_options archive"
inputs() { find "$FUZZ/corpus/$1" "$FUZZ/regressions/$1" -type f ! -name README 2>/dev/null; }
total=0
for t in $TARGETS; do
	total=$((total + $(inputs "$t" | wc -l)))
done
plan "$total"

for t in $TARGETS; do
	files=$(inputs "$t" | sort)
	[ -n "$files" ] || continue
	# The driver's TAP, renumbered into ours; its "not ok" details kept.
	# shellcheck disable=SC2086
	while IFS= read -r line; do
		case "$line" in
		"ok "*) ok "$t: ${line#* - $FUZZ/}" ;;
		"not ok "*) not_ok "$t: ${line#* - $FUZZ/}" ;;
		"  "*) echo "$line" ;;
		esac
	done < <("$BUILD_DIR/tests/fuzz/$t" $files 2>/dev/null)
done
