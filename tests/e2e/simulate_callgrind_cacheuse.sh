# Callgrind's cache use (--cacheuse=yes: AcCost1 SpLoss1 AcCost2 SpLoss2,
# charged to the instruction that loaded a line when it is evicted), on
# every test program against real Callgrind runs (tests/callgrind_cases.sh),
# with small caches (lines evicted often, charged while the run goes on)
# and the recording host's (most lines charged at the end of the run; a
# large LL whose cold ways catch low addresses), with and without branch
# prediction.  Then: the files do not depend on --threads; Callgrind's
# rules for the options beside it; what is refused.
source "$(dirname "$0")/../lib.sh"

small="--I1=4096,2,64 --D1=4096,2,64 --LL=65536,4,64"
configs=(
	"--cacheuse=yes $small"
	"--cacheuse=yes --branch-sim=yes $small"
	"--cacheuse=yes"
)
config_names=("cache use" "cache use, branches" "cache use, the host's caches")
# Callgrind 3.19's attribution (self costs only); cgtrace's own, inclusive,
# is checked below.
cgtrace_opts="--cacheuse-inclusive=no"
extra_checks=$((9 + 2 * 14 - 1 + 5))	# (cgrequests: no balance check, see below)
# Every event but the use ones, whole files (summary and totals too); then
# the use events, function by function, but for two functions of the
# dynamic linker's start, strcspn and handle_preload_list, which parse
# LD_PRELOAD with a table on the stack: their lines' use differs from one
# Callgrind run of a program to the next (the same options, the same
# environment), while every other count agrees.  (So the use columns'
# totals, which hold those two, are not compared.)
split_compare() {
	local events="Ir,Dr,Dw,I1mr,D1mr,D1mw,ILmr,DLmr,DLmw"
	case "$2" in *--branch-sim=yes*) events="$events,Bc,Bcm,Bi,Bim" ;; esac
	case "$1" in
	threads) echo "" ;;
	*)
		echo "--events=$events"
		echo "--events=AcCost1,SpLoss1,AcCost2,SpLoss2 --functions=^(?!(strcspn|handle_preload_list)$)"
		;;
	esac
}
source "$ROOT/tests/callgrind_cases.sh"

# The replay's producer (decoding, caches) on a thread of its own or not:
# the same files.
for t in 1 2 8; do
	"$CGTRACE" simulate -q --tool=callgrind --cacheuse=yes --branch-sim=yes $small --threads=$t \
		--callgrind-out-file="use$t.%p" loops.*.zst
done
check_same_file "cache use: --threads=1 and 2, the same file" use1.* use2.*
check_same_file "cache use: --threads=1 and 8, the same file" use1.* use8.*

# As in Callgrind: --cacheuse=yes turns write-back and prefetch simulation
# off, each with its warning, and positions are instructions.
"$CGTRACE" simulate --tool=callgrind --cacheuse=yes --simulate-wb=yes --simulate-hwpref=yes \
	--branch-sim=yes $small \
	--callgrind-out-file="usewb.%p" loops.*.zst 2>usewb.err
check_same_file "--cacheuse=yes: --simulate-wb and --simulate-hwpref off, the same file" \
	use1.* usewb.*
check_contains "--cacheuse=yes: a warning for the prefetcher" \
	"warning: prefetch simulation can not be used with cache usage" "$(cat usewb.err)"
check_contains "--cacheuse=yes: a warning for write-back" \
	"warning: write-back simulation can not be used with cache usage" "$(cat usewb.err)"
check_contains "--cacheuse=yes: instruction positions" "positions: instr line" "$(cat use1.*)"

# Refused before any replay: a value that is not yes or no, and a cache
# whose ways Callgrind's tags cannot number (exit 2, its message).
out=$("$CGTRACE" simulate -q --tool=callgrind --cacheuse=maybe --callgrind-out-file=bad.out \
	loops.*.zst 2>&1)
rc=$?
check_eq "--cacheuse=maybe: exit 2, the option named" \
	"2 yes" "$rc $(grep -q "bad --cacheuse 'maybe' (expected yes or no)" <<<"$out" && echo yes)"
out=$("$CGTRACE" simulate -q --tool=callgrind --cacheuse=yes --D1=2048,64,32 \
	--callgrind-out-file=bad.out loops.*.zst 2>&1)
rc=$?
check_eq "--cacheuse=yes --D1=2048,64,32: exit 2" 2 "$rc"
check_contains "--cacheuse=yes --D1=2048,64,32: Callgrind's message" \
	"Use associativity < 32 for cache use statistics!" "$out"

# Inclusive attribution (cgtrace's default): on every program, every call's
# cost of every event balances -- the calls into a function cost its self
# cost plus the calls it makes -- wherever Ir does (Callgrind's own files
# do not where code runs under a call without one of its own: Valgrind's
# freeres code under _Exit's); and every event but the use ones is as
# without it, calls and summary included.  Left out: divfault's handler
# leaves by siglongjmp, and Callgrind's call stack then names a call of
# main's on_fpe's, made up after the lines loaded under it; and
# cgrequests, whose dumps split the run: a charge to an instruction whose
# BB has not run since the last dump waits, as Callgrind's self costs do,
# for a dump after it runs again (after an instrumentation switch, never),
# while the calls it reached are written by their callers' BBs, which ran
# (a limit of the per-dump listing: README); and instrumentation starts
# two calls deep there, the returns past that point made-up calls too.
invariant=$ROOT/tests/tools/callgrind_invariant.py
made_up_calls() {
	case "$1" in
	divfault) echo "--except=^on_fpe$" ;;
	esac
}
for c in "${cases[@]}"; do
	IFS='|' read -r name _ _ <<<"$c"
	ok_all=yes same_all=yes why=""
	for t in $(ls "$name".*.zst 2>/dev/null | grep -v '\.decoded\.zst$'); do
		base=${t%.zst}
		"$CGTRACE" simulate -q --tool=callgrind --cacheuse=yes --branch-sim=yes $small \
			--callgrind-out-file="$base.inc" "$t" &&
			"$CGTRACE" simulate -q --tool=callgrind --cacheuse=yes --cacheuse-inclusive=no \
				--branch-sim=yes $small --callgrind-out-file="$base.self" "$t" || ok_all=no
		for f in "$base.inc"*; do
			[ "$name" = cgrequests ] ||
				out=$(python3 "$invariant" --where-balanced=Ir $(made_up_calls "$name") "$f" 2>&1) ||
				{ ok_all=no; why="$why$out"$'\n'; }
			out=$(python3 "$compare" --events=Ir,Dr,Dw,I1mr,D1mr,D1mw,ILmr,DLmr,DLmw,Bc,Bcm,Bi,Bim \
				"${f/.inc/.self}" "$f" 2>&1) || { same_all=no; why="$why$out"$'\n'; }
		done
	done
	[ "$name" = cgrequests ] ||
		check_eq "$name, inclusive: every call balances in every event" yes "$ok_all"
	check_eq "$name, inclusive: the other events as without it" yes "$same_all"
	[ -z "$why" ] || echo "$why" | head -n 10 | sed 's/^/  /'
done

# By hand (tests/programs/lineuse.c): toucher's 64 lines, each used once
# in 2 of its 64 bytes, are evicted under evictor: AcCost1 64 x 1000 and
# SpLoss1 64 x 62 land on main's call of toucher, none on its call of
# evictor, which holds evictor's own.
clean_env "$CGTRACE" record -q --backend=valgrind -o lineuse.%p.zst -- "$PROGS/lineuse" >/dev/null 2>&1
check_eq "lineuse: recorded" 0 "$?"
"$CGTRACE" simulate -q --tool=callgrind --cacheuse=yes $small --callgrind-out-file=lineuse.inc \
	lineuse.*.zst
"$CGTRACE" simulate -q --tool=callgrind --cacheuse=yes --cacheuse-inclusive=no $small \
	--callgrind-out-file=lineuse.self lineuse.*.zst
arcs() {
	python3 - "$1" <<'PY'
import os, sys
sys.path.insert(0, os.environ['ROOT'] + '/tests/tools')
from callgrind_compare import Reader
part = Reader(sys.argv[1], 'auto').read()[0]
ev = part.events
def self_of(name, e):
    return sum(v[ev.index(e)] for f, sites in part.self_cost.items() if f[2] == name
               for v in sites.values() if len(v) > ev.index(e))
def call(caller, callee, e):
    return sum(v[ev.index(e)] for (a, _, b), (n, v) in part.calls.items()
               if a[2] == caller and b[2] == callee and len(v) > ev.index(e))
for fn in ('toucher', 'evictor'):
    print(fn, call('main', fn, 'AcCost1'), self_of(fn, 'AcCost1'), call('main', fn, 'SpLoss1'),
          self_of(fn, 'SpLoss1'))
PY
}
read -r _ t_call t_self t_lcall t_lself <<<"$(ROOT=$ROOT arcs lineuse.inc | grep '^toucher')"
read -r _ e_call e_self _ _ <<<"$(ROOT=$ROOT arcs lineuse.inc | grep '^evictor')"
echo "  main -> toucher: AcCost1 ${t_call:-?} (self ${t_self:-?}), SpLoss1 ${t_lcall:-?} (self ${t_lself:-?})"
check "lineuse: main's call of toucher holds its 64 lines' AcCost1 and SpLoss1" \
	test "${t_call:-0}" -ge 64000 -a "${t_lcall:-0}" -ge $((64 * 62)) -a "$t_call" = "$t_self" \
	-a "$t_lcall" = "$t_lself"
check_eq "lineuse: main's call of evictor holds evictor's own, not toucher's" "$e_self" "$e_call"
read -r _ s_call _ _ _ <<<"$(ROOT=$ROOT arcs lineuse.self | grep '^toucher')"
check_eq "lineuse: without --cacheuse-inclusive, no call holds them (Callgrind's)" 0 "${s_call:-x}"
check_contains "lineuse: the attribution in a desc: line" \
	"desc: Attribution: AcCost1 SpLoss1 AcCost2 SpLoss2 to the instruction" "$(cat lineuse.inc)"
