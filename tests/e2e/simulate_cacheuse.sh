# Callgrind's cache use in --tool=cachegrind (simulate --cacheuse=yes):
# AcCost1 SpLoss1 AcCost2 SpLoss2 per source line, charged to the
# instruction that loaded each line.  Against real Callgrind runs of the
# same programs (--cacheuse=yes --skip-plt=no: Callgrind writes a skipped
# PLT stub's costs at its caller's line), summed per line over functions
# and contexts (tests/tools/cacheuse_lines.py): the use columns and the
# misses, which are Callgrind's cache-use simulation's.  Then: --threads
# and sweeps (each file its single run's), cg_annotate reading the file,
# Callgrind's rules for the options beside it, and what is refused.
source "$(dirname "$0")/../lib.sh"

lines=$ROOT/tests/tools/cacheuse_lines.py
small="--I1=4096,2,64 --D1=4096,2,64 --LL=65536,4,64"
configs=("$small" "")
config_names=("small caches" "the host's caches")
cases=(
	"lineuse|$PROGS/lineuse"
	"loops|$PROGS/loops"
	"strings|$PROGS/strings"
	"recursion|$PROGS/recursion"
	"callgraph|$PROGS/callgraph"
	"sort|sort -n --parallel=1 -o sorted.txt numbers.txt"
)
plan $((${#cases[@]} * (1 + 4 * ${#configs[@]}) + 3 + 4 + 2 + 3 + 8))

numbers all-numbers.txt
head -n 2000 all-numbers.txt > numbers.txt

# Left out of the comparison: strcspn and handle_preload_list (the dynamic
# linker parses LD_PRELOAD with a table on the stack: their lines' use
# differs between Callgrind runs), and the lines where the two tools ran
# different instructions -- Callgrind never counts the block its run ends
# in (in _Exit), nor a couple before it, which Cachegrind counts, and with
# them the charges of the lines they loaded: three lines at most.
except='--except-functions=^(strcspn|handle_preload_list)$ --where-ir-agrees=3'
for c in "${cases[@]}"; do
	IFS='|' read -r name cmd <<<"$c"
	read -r -a argv <<<"$cmd"
	clean_env "$CGTRACE" record -q --backend=valgrind -o "$name.zst" -- "${argv[@]}" \
		>/dev/null 2>"$name.record.err"
	check_eq "$name: recorded" 0 "$?"
	for i in "${!configs[@]}"; do
		what="$name, ${config_names[$i]}"
		clean_env valgrind --tool=callgrind --cacheuse=yes --skip-plt=no ${configs[$i]} \
			--callgrind-out-file="$name.c$i.ref" "${argv[@]}" >/dev/null 2>"$name.c$i.ref.err"
		check_eq "$what: Callgrind ran" 0 "$?"
		timeout -k 5 300 "$CGTRACE" simulate -q --cacheuse=yes ${configs[$i]} \
			-o "$name.c$i.out" "$name.zst" 2>"$name.c$i.err"
		check_eq "$what: cgtrace simulate --cacheuse=yes exits 0" 0 "$?"
		for events in AcCost1,SpLoss1,AcCost2,SpLoss2 I1mr,ILmr,D1mr+D1mw,DLmr+DLmw; do
			out=$(python3 "$lines" --events="$events" $except "$name.c$i.ref" "$name.c$i.out" 2>&1)
			rc=$?
			if [ "$rc" = 0 ]; then
				ok "$what: $events per line, Callgrind's"
			else
				not_ok "$what: $events per line, Callgrind's"
				echo "$out" | head -n 12 | sed 's/^/  /'
			fi
		done
	done
done

# The same file on any number of threads.
for t in 1 2 8; do
	"$CGTRACE" simulate -q --cacheuse=yes $small --threads=$t -o "use$t.out" loops.zst
done
check_same_file "--cacheuse=yes: --threads=1 and 2, the same file" use1.out use2.out
check_same_file "--cacheuse=yes: --threads=1 and 8, the same file" use1.out use8.out
# several configurations, parts shared out among the threads
for t in 1 3; do
	"$CGTRACE" simulate -q --cacheuse=yes --I1=4096,2,64 --D1=2k..8k,1..2,64 --LL=65536,4,64 \
		--threads=$t -o "parts$t.%c" loops.zst
done
same=yes
for f in parts1.*; do cmp -s "$f" "parts3.${f#parts1.}" || same=no; done
check_eq "--cacheuse=yes: a sweep of 6 on 1 and 3 threads, the same files ($(ls parts1.* | wc -l))" \
	"yes (6)" "$same ($(ls parts3.* 2>/dev/null | wc -l))"

# A sweep: each configuration's file is its single run's.
"$CGTRACE" simulate -q --cacheuse=yes --I1=4096,2,64 --D1=2k..8k,2,64 --LL=65536,4,64 \
	-o "sweep.%c" strings.zst
n_files=$(ls sweep.* 2>/dev/null | wc -l)
check_eq "a --cacheuse=yes sweep of 3 D1s: 3 files" 3 "$n_files"
for d1 in 2048 4096 8192; do
	"$CGTRACE" simulate -q --cacheuse=yes --I1=4096,2,64 --D1=$d1,2,64 --LL=65536,4,64 \
		-o "single.$d1" strings.zst
	swept=$(grep -l "^desc: D1 cache: *$d1 B" sweep.* 2>/dev/null | head -n 1)
	check_same_file "the sweep's D1=$d1 file is its single run's" "single.$d1" "${swept:-none}"
done

# cg_annotate reads it, the use columns among its events.
out=$(cg_annotate use1.out 2>&1)
check_eq "cg_annotate reads a --cacheuse=yes cachegrind.out" 0 "$?"
check_contains "cg_annotate shows the use events" "AcCost1" "$out"

# As in Callgrind: write-back and prefetch simulation off, each with its
# warning.
"$CGTRACE" simulate --cacheuse=yes --simulate-wb=yes --simulate-hwpref=yes $small \
	--threads=1 -o usewb.out loops.zst 2>usewb.err
check_same_file "--cacheuse=yes: --simulate-wb and --simulate-hwpref off, the same file" \
	use1.out usewb.out
check_contains "--cacheuse=yes: a warning for the prefetcher" \
	"warning: prefetch simulation can not be used with cache usage" "$(cat usewb.err)"
check_contains "--cacheuse=yes: a warning for write-back" \
	"warning: write-back simulation can not be used with cache usage" "$(cat usewb.err)"

# Refused before any replay, exit 2: a value that is not yes or no, a cache
# whose ways Callgrind's tags cannot number (its message), an L2, and no
# cache simulation.
refused() {
	local what=$1 expect=$2
	shift 2
	out=$("$CGTRACE" simulate -q "$@" -o bad.out loops.zst 2>&1)
	rc=$?
	check_eq "$what: exit 2, no file" "2 no" "$rc $([ -e bad.out ] && echo yes || echo no)"
	check_contains "$what: its message" "$expect" "$out"
}
refused "--cacheuse=maybe" "bad --cacheuse 'maybe' (expected yes or no)" --cacheuse=maybe
refused "--cacheuse=yes --D1=2048,64,32" "Use associativity < 32 for cache use statistics!" \
	--cacheuse=yes --D1=2048,64,32
refused "--cacheuse=yes --L2" "--cacheuse=yes models Callgrind's I1, D1 and LL: not with --L2" \
	--cacheuse=yes --L2=262144,8,64
refused "--cacheuse=yes --cache-sim=no" "--cacheuse=yes models caches: not with --cache-sim=no" \
	--cacheuse=yes --cache-sim=no
