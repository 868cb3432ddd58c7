# Shared helpers of the end-to-end tests (bash).  A script calls "plan N"
# first (TAP's "1..N": tests/run-tests.sh fails a script that runs another
# number of checks); each check prints "ok N - what" or "not ok N - what".
# A script with a failed check exits 1.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# BUILD: the build directory (make test-asan uses another); CGTRACE the
# binary under test.
BUILD_DIR=$ROOT/${BUILD:-build}
CGTRACE=${CGTRACE:-$ROOT/cgtrace}
PROGS=$BUILD_DIR/tests/programs
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cgtrace-test.XXXXXX")
n=0
n_failed=0
trap 'status=$?; rm -rf "$WORK"; [ "$status" -eq 0 ] && [ "$n_failed" -gt 0 ] && status=1; exit "$status"' EXIT
cd "$WORK" || exit 1
# Recordings keep their modules in a build-id cache: the test's own, never
# the user's.
export XDG_CACHE_HOME=$WORK/.cache

plan() { echo "1..$1"; }
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); n_failed=$((n_failed + 1)); echo "not ok $n - $*"; }

# check DESCRIPTION COMMAND...: ok if the command succeeds.
check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else not_ok "$what"; fi
}

# check_eq DESCRIPTION EXPECTED ACTUAL: ok if equal and not empty (an
# empty side is a command that failed or printed nothing: never a match).
check_eq() {
	if [ -z "$2" ] || [ -z "$3" ]; then
		not_ok "$1"; echo "  expected: '$2'"; echo "  actual:   '$3'"; echo "  (an empty side never matches)"
	elif [ "$2" = "$3" ]; then ok "$1"
	else not_ok "$1"; echo "  expected: $2"; echo "  actual:   $3"; fi
}

# check_empty DESCRIPTION ACTUAL: ok if ACTUAL is empty (no output, no file).
check_empty() {
	if [ -z "$2" ]; then ok "$1"; else not_ok "$1"; echo "  expected nothing, got: $2"; fi
}

# check_same_file DESCRIPTION EXPECTED-FILE ACTUAL-FILE: ok if both can be
# read, are byte for byte the same and are not empty (either may be a pipe).
check_same_file() {
	local a=$WORK/.same.a b=$WORK/.same.b
	if ! cat "$2" >"$a" 2>/dev/null || ! cat "$3" >"$b" 2>/dev/null; then
		not_ok "$1"; echo "  cannot read $2 or $3"
	elif [ ! -s "$a" ]; then
		not_ok "$1"; echo "  $2 is empty"
	elif cmp -s "$a" "$b"; then ok "$1"
	else not_ok "$1"; diff "$a" "$b" | head -10 | sed 's/^/  /'; fi
	rm -f "$a" "$b"
}

# check_contains DESCRIPTION NEEDLE HAYSTACK (NEEDLE not empty)
check_contains() {
	if [ -z "$2" ]; then not_ok "$1"; echo "  empty needle"; return; fi
	case "$3" in
	*"$2"*) ok "$1" ;;
	*) not_ok "$1"; echo "  expected to contain: $2"; echo "  actual: $3" ;;
	esac
}

# A fixed environment, so that Cachegrind and cgtrace runs see the same one.
clean_env() { env -i PATH=/usr/bin:/bin HOME="$WORK" LANG=C "$@"; }

# run_limited KB COMMAND...: COMMAND with its memory limited to KB KiB: its
# address space (ulimit -v); in a sanitized build (make test-asan), whose
# shadow memory alone takes terabytes of address space, its resident memory
# instead, which AddressSanitizer enforces with a report that fails the test
# (three times the limit: room for ASan's own overhead).
run_limited() {
	local kb=$1
	shift
	if [ -n "${CGTRACE_SANITIZED:-}" ]; then
		ASAN_OPTIONS=hard_rss_limit_mb=$((kb * 3 / 1024)) "$@"
	else
		(ulimit -v "$kb" && exec "$@")
	fi
}

# numbers FILE: 20,000 pseudo-random numbers, one a line, always the same.
numbers() {
	python3 -c "
import random
random.seed(7)
print(''.join('%d\\n' % random.randrange(10**9) for _ in range(20000)), end='')" > "$1"
}

# cachegrind OUTFILE PROG ARGS...: runs Cachegrind (3.19 defaults: cache
# simulation on) with extra options from $CG_OPTS, translating as a trace
# recorded by default does (--vex-guest-chase=no), or with Cachegrind's
# default chasing if CG_CHASE=yes.
cachegrind() {
	local out=$1
	shift
	clean_env valgrind --tool=cachegrind --vex-guest-chase="${CG_CHASE:-no}" \
		--cachegrind-out-file="$out" ${CG_OPTS:-} "$@" >/dev/null 2>&1
}

# summary_field FILE EVENT: the total of EVENT in a cachegrind.out file.
summary_field() {
	awk -v ev="$2" '/^events:/ { for (i = 2; i <= NF; i++) if ($i == ev) col = i }
		/^summary:/ { print $col }' "$1"
}

# info_counts TRACE: "Ir Dr Dw" from cgtrace info.
info_counts() {
	"$CGTRACE" info "$1" | awk '/instructions \(Ir\)/ { ir = $3 } /data reads \(Dr\)/ { dr = $4 }
		/data writes \(Dw\)/ { dw = $4 } END { print ir, dr, dw }' | tr -d ,
}

# per_function FILE: "file:function count count ..." per function, sorted.
per_function() {
	awk '/^fl=/ { fl = substr($0, 4) } /^fn=/ { fn = substr($0, 4) }
		/^[0-9]/ { key = fl ":" fn; n[key] = NF - 1; for (i = 2; i <= NF; i++) s[key, i] += $i }
		END { for (k in n) { line = k; for (i = 2; i <= n[k] + 1; i++) line = line " " s[k, i]; print line } }' "$1" | sort
}

# summary_line FILE: the counts of the summary: line.
summary_line() { sed -n 's/^summary: //p' "$1"; }

# check_within_spread WHAT VALUE MARGIN SAMPLE...: ok if VALUE lies within
# the samples' range widened by MARGIN (an awk expression of hi, the
# largest sample) -- for counts that vary from run to run, as threaded
# programs' do under Valgrind.
check_within_spread() {
	local what=$1 value=$2 margin=$3
	shift 3
	local sorted lo hi sample
	for sample in "$value" "$@"; do
		if ! [[ $sample =~ ^[0-9]+$ ]]; then
			not_ok "$what '$value' within Cachegrind's runs: not a count: '$sample' (of $# samples)"
			return
		fi
	done
	if [ $# -eq 0 ]; then not_ok "$what: no sample"; return; fi
	sorted=$(printf '%s\n' "$@" | sort -n)
	lo=$(echo "$sorted" | head -1)
	hi=$(echo "$sorted" | tail -1)
	if awk -v v="$value" -v lo="$lo" -v hi="$hi" "BEGIN { t = $margin; exit !(v >= lo - t && v <= hi + t) }"; then
		ok "$what $value within Cachegrind's runs [$lo, $hi]"
	else
		not_ok "$what $value within Cachegrind's runs [$lo, $hi]"
	fi
}
