# Callgrind's cache models beyond Cachegrind's: --simulate-wb=yes (a
# write-back LL; ILdmr DLdmr DLdmw count the misses whose fill evicted a
# dirty line) and --simulate-hwpref=yes (its LL stream prefetcher), alone
# and together, with and without branch prediction, on every test program
# against real Callgrind runs (tests/callgrind_cases.sh).  Small caches,
# so that lines are evicted dirty and prefetches displace lines.  Then:
# the files do not depend on --threads; what is refused.
source "$(dirname "$0")/../lib.sh"

small="--I1=4096,2,64 --D1=4096,2,64 --LL=65536,4,64"
configs=(
	"--simulate-wb=yes $small"
	"--simulate-wb=yes --branch-sim=yes $small"
	"--simulate-hwpref=yes $small"
	"--simulate-hwpref=yes --branch-sim=yes $small"
	"--simulate-wb=yes --simulate-hwpref=yes $small"
	"--simulate-wb=yes --simulate-hwpref=yes --branch-sim=yes $small"
)
config_names=("write-back" "write-back, branches" "prefetch" "prefetch, branches"
	"write-back and prefetch" "write-back, prefetch, branches")
extra_checks=10
source "$ROOT/tests/callgrind_cases.sh"

# The replay's producer (decoding, caches) on a thread of its own or not:
# the same files.
both="--simulate-wb=yes --simulate-hwpref=yes --branch-sim=yes $small"
for t in 1 2 8; do
	"$CGTRACE" simulate -q --tool=callgrind $both --threads=$t --callgrind-out-file="wbt$t.%p" \
		loops.*.zst
done
check_same_file "write-back and prefetch: --threads=1 and 2, the same file" wbt1.* wbt2.*
check_same_file "write-back and prefetch: --threads=1 and 8, the same file" wbt1.* wbt8.*

# What is refused, before any replay: a value that is not yes or no (exit
# 2, the option named), as Callgrind refuses it.
for opt in simulate-wb simulate-hwpref; do
	out=$("$CGTRACE" simulate -q --tool=callgrind --$opt=maybe --callgrind-out-file=bad.out \
		loops.*.zst 2>&1)
	rc=$?
	check_eq "--$opt=maybe: exit 2" 2 "$rc"
	check_contains "--$opt=maybe: the option named" "bad --$opt 'maybe' (expected yes or no)" "$out"
done
# The level options: an unknown policy refused; --LL-prefetch=callgrind is
# --simulate-hwpref=yes.
out=$("$CGTRACE" simulate -q --tool=callgrind --LL-replacement=lfu --callgrind-out-file=bad.out \
	loops.*.zst 2>&1)
rc=$?
check_eq "--LL-replacement=lfu: exit 2" 2 "$rc"
check_contains "--LL-replacement=lfu: the option named" "bad --LL-replacement 'lfu' (expected lru, fifo or plru)" \
	"$out"
out=$("$CGTRACE" simulate -q --tool=callgrind --I1-prefetch=callgrind --callgrind-out-file=bad.out \
	loops.*.zst 2>&1)
check_contains "--I1-prefetch=callgrind: refused, LL's alone" \
	"--I1-prefetch=callgrind: Callgrind's stream prefetcher is LL's alone" "$out"
"$CGTRACE" simulate -q --tool=callgrind --LL-prefetch=callgrind $small --callgrind-out-file=llpf.%p \
	loops.*.zst
"$CGTRACE" simulate -q --tool=callgrind --simulate-hwpref=yes $small --callgrind-out-file=hwpref.%p \
	loops.*.zst
check_same_file "--LL-prefetch=callgrind: the same file as --simulate-hwpref=yes" hwpref.* llpf.*
