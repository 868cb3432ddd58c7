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
extra_checks=9
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
