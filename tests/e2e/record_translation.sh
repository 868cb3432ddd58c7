# The valgrind backend's translation: Callgrind's by default (no chasing,
# no unrolling), Cachegrind's default on request; each trace simulates to
# the file of the Cachegrind run that translates alike, and says which it
# is.
source "$(dirname "$0")/../lib.sh"
plan 14

run() { out=$("$@" 2>&1); rc=$?; }
cfg="--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"

for p in loops interp; do
	clean_env "$CGTRACE" record -q -o "$p.no.zst" -- "$PROGS/$p" >/dev/null
	clean_env "$CGTRACE" record -q --vex-guest-chase=yes -o "$p.yes.zst" -- "$PROGS/$p" >/dev/null
	CG_OPTS="--branch-sim=yes $cfg" cachegrind "cg.$p.no" "$PROGS/$p"
	CG_CHASE=yes CG_OPTS="--branch-sim=yes $cfg" cachegrind "cg.$p.yes" "$PROGS/$p"
	"$CGTRACE" simulate -q --branch-sim=yes $cfg -o "ct.$p.no" "$p.no.zst"
	"$CGTRACE" simulate -q --branch-sim=yes $cfg -o "ct.$p.yes" "$p.yes.zst"
	check_same_file "$p, recorded by default: Cachegrind --vex-guest-chase=no's file, byte for byte" \
		"cg.$p.no" "ct.$p.no"
	check_same_file "$p, recorded with --vex-guest-chase=yes: plain Cachegrind's file, byte for byte" \
		"cg.$p.yes" "ct.$p.yes"
	# Chasing counts code that did not run: the two must differ, or the
	# option changed nothing.
	check "$p: the two translations count differently" \
		test "$(summary_line "ct.$p.no")" != "$(summary_line "ct.$p.yes")"
done

run "$CGTRACE" info loops.no.zst
check_contains "info: a default trace has Callgrind's translation" \
	"translation:    Callgrind's (--vex-guest-chase=no --vex-iropt-unroll-thresh=0 --vex-guest-max-insns=" "$out"
run "$CGTRACE" info loops.yes.zst
check_contains "info: --vex-guest-chase=yes gives Cachegrind's default" \
	"translation:    Cachegrind's default (--vex-guest-chase=yes --vex-iropt-unroll-thresh=120" "$out"
run "$CGTRACE" info "$ROOT/tests/data/tiny.zst"
check_contains "info: a trace of an older cgtrace says it has no record of it" \
	"translation:    not recorded" "$out"

# Children translate as their parent: Valgrind passes its options on.
clean_env "$CGTRACE" record -q --trace-children=yes -o child.%p.zst -- sh -c "$PROGS/loops 1 >/dev/null"
said=$(for t in child.*.zst; do "$CGTRACE" info "$t" | grep -c "translation:    Callgrind's"; done | sort -u)
check_eq "--trace-children=yes: both processes' traces have Callgrind's translation" \
	"2 1" "$(ls child.*.zst | wc -l) $said"

run "$CGTRACE" record --vex-guest-chase=maybe -- /bin/true
check_eq "bad --vex-guest-chase: usage error" 2 "$rc"
check_contains "bad --vex-guest-chase: says what it expected" \
	"bad --vex-guest-chase 'maybe' (expected yes or no)" "$out"
run "$CGTRACE" record --backend=pt --vex-guest-chase=no -o never.zst -- /bin/true
check_eq "--vex-guest-chase with the pt backend: refused" 1 "$rc"
check_contains "--vex-guest-chase with the pt backend: says why" \
	"--vex-guest-chase is for the valgrind backend" "$out"
