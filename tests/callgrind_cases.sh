# Sourced by the tests that compare cgtrace simulate --tool=callgrind with
# real Callgrind runs of every test program (simulate_callgrind.sh,
# simulate_callgrind_models.sh), after lib.sh, with configs (Callgrind's
# options of each configuration), config_names and, if the caller adds
# checks of its own after these, extra_checks set; cgtrace_opts, if set,
# are cgtrace's alone, given after each configuration's.  It plans, records each
# program once and compares every file of every configuration; see
# simulate_callgrind.sh for what is compared and why.
compare=$ROOT/tests/tools/callgrind_compare.py
# program name, the number of files Callgrind writes for it, command
cases=(
	"callgraph|1|$PROGS/callgraph"
	"cxx_calls|1|$PROGS/cxx_calls"
	"dlopen|1|$PROGS/dlopen $PROGS/libplugin.so"
	"cgrequests|3|$PROGS/cgrequests"
	"forkchild|2|$PROGS/forkchild"
	"recursion|1|$PROGS/recursion"
	"loops|1|$PROGS/loops"
	"interp|1|$PROGS/interp"
	"strings|1|$PROGS/strings"
	"faults|1|$PROGS/faults"
	"cutfaults|1|$PROGS/cutfaults"
	"divfault|1|$PROGS/divfault"
	"threads|1|$PROGS/threads"
	"sort|1|sort -n --parallel=1 -o sorted.txt numbers.txt"
)
# per case: recorded; per configuration: Callgrind's file count,
# simulate's exit status, the same files, then one check per file
checks=0
for c in "${cases[@]}"; do
	IFS='|' read -r _ files _ <<<"$c"
	checks=$((checks + 1 + ${#configs[@]} * (3 + files)))
done
plan "$((checks + ${extra_checks:-0}))"

numbers all-numbers.txt
head -n 2000 all-numbers.txt > numbers.txt

# Threads: Valgrind runs one thread at a time and switches where the
# scheduler's timing says, so the interleaving -- of a recorded run, of
# each Callgrind run -- varies: waits in pthread_join and the mutex (which
# functions run, how often), and with it the inclusive costs above them,
# the summary, and the misses and mispredictions of every thread (one
# cache and one predictor for all).  Fixed are each thread's own
# instructions: main's and worker's self costs, Ir Dr Dw Bc Bi
# (callgrind-callgraph.md 4.1).  Only those are compared.
compare_opts() {
	case "$1,$2" in
	threads,) echo "--functions=^(main|worker)$" ;;
	threads,*--branch-sim=yes*) echo "--functions=^(main|worker)$ --events=Ir,Dr,Dw,Bc,Bi" ;;
	threads,*) echo "--functions=^(main|worker)$ --events=Ir,Dr,Dw" ;;
	esac
}
compare_what() {
	case "$1" in
	threads) echo " (main's and worker's self costs, as far as scheduling fixes them)" ;;
	esac
}
# A caller may compare some events apart: it defines split_compare NAME
# CONFIG, which prints the options of two comparisons of each file, on two
# lines; both must agree (compare_opts's come first on each).
compare_file() {
	local name=$1 config=$2 rfile=$3 afile=$4 pass
	local -a passes=("") opts
	declare -F split_compare >/dev/null && mapfile -t passes < <(split_compare "$name" "$config")
	for pass in "${passes[@]}"; do
		read -r -a opts <<<"$(compare_opts "$name" "$config") $pass"	# (no globbing)
		python3 "$compare" --max-diffs=15 "${opts[@]}" "$rfile" "$afile" || return 1
	done
}

# files PREFIX: "KEY path" per file PREFIX.<pid>[.<n>], sorted; KEY is
# p<the pid's rank among them, from 1>[.<n>].
files() {
	local prefix=$1
	local pids
	pids=$(ls | sed -n "s/^${prefix//./\\.}\.\([0-9][0-9]*\)\(\.[0-9][0-9]*\)\{0,1\}\$/\1/p" | sort -nu)
	local rank=1 pid f
	for pid in $pids; do
		for f in "$prefix.$pid" "$prefix.$pid".*; do
			[ -f "$f" ] || continue
			echo "p$rank${f#"$prefix.$pid"} $f"
		done
		rank=$((rank + 1))
	done | sort
}

# keys KEY-PATH...: the keys, or "none"
keys() {
	if [ $# -eq 0 ]; then echo none; else printf '%s\n' "${@%% *}" | tr '\n' ' '; fi
}

first_line() { grep -v '^$' "$1" 2>/dev/null | head -n 1; }

for c in "${cases[@]}"; do
	IFS='|' read -r name nfiles cmd <<<"$c"
	read -r -a argv <<<"$cmd"
	clean_env "${argv[@]}" >/dev/null 2>&1
	exit_status=$?
	clean_env "$CGTRACE" record -q --backend=valgrind -o "$name.%p.zst" -- "${argv[@]}" \
		>/dev/null 2>"$name.record.err"
	rc=$?
	traces=$(ls "$name".*.zst 2>/dev/null | grep -v '\.decoded\.zst$')
	check_eq "$name: recorded (the program's exit status, a trace)" "$exit_status yes" \
		"$rc $([ -n "$traces" ] && echo yes || echo no)"
	[ "$rc" = 0 ] || sed 's/^/  /' "$name.record.err" | head -n 5

	for i in "${!configs[@]}"; do
		what="$name, ${config_names[$i]}"
		ref=$name.c$i.ref
		act=$name.c$i.ct
		clean_env valgrind --tool=callgrind ${configs[$i]} --callgrind-out-file="$ref.%p" \
			"${argv[@]}" >/dev/null 2>"$ref.err"
		mapfile -t ref_files < <(files "$ref")
		check_eq "$what: Callgrind wrote $nfiles file(s)" "$nfiles" "${#ref_files[@]}"

		# No replay may hang the test: five minutes each.
		status=""
		for t in $traces; do
			timeout -k 5 300 "$CGTRACE" simulate -q --tool=callgrind ${configs[$i]} ${cgtrace_opts:-} \
				--callgrind-out-file="$act.%p" "$t" >/dev/null 2>"$act.err"
			rc=$?
			status="$status$rc "
			[ "$rc" = 0 ] || echo "  $t: exit $rc$([ "$rc" = 124 ] && echo ' (timed out)'): $(first_line "$act.err")"
		done
		check_eq "$what: cgtrace simulate --tool=callgrind exits 0 on each trace" \
			"$(for t in $traces; do echo -n "0 "; done)" "$status"
		mapfile -t act_files < <(files "$act")
		check_eq "$what: cgtrace wrote the files Callgrind wrote (p<process>.<dump>)" \
			"$(keys "${ref_files[@]}")" "$(keys "${act_files[@]}")"

		# One check per file Callgrind should have written: a missing file
		# on either side fails.
		for ((k = 0; k < nfiles; k++)); do
			r=${ref_files[$k]:-}
			key=${r%% *}
			rfile=${r#* }
			afile=""
			for a in "${act_files[@]}"; do
				[ "${a%% *}" = "$key" ] && afile=${a#* }
			done
			desc="$what, file $((k + 1)) of $nfiles${key:+ ($key)}: Callgrind's profile$(compare_what "$name")"
			if [ -z "$r" ]; then
				not_ok "$desc"; echo "  Callgrind wrote no file $((k + 1)): $(first_line "$ref.err")"
			elif [ -z "$afile" ]; then
				not_ok "$desc"; echo "  cgtrace wrote no file for Callgrind's $rfile"
			else
				out=$(compare_file "$name" "${configs[$i]}" "$rfile" "$afile" 2>&1)
				rc=$?
				if [ "$rc" = 0 ]; then ok "$desc"; else not_ok "$desc"; echo "$out" | head -n 24 | sed 's/^/  /'; fi
			fi
		done
	done
done

if [ -n "${KEEP_WORK:-}" ]; then
	mkdir -p "$KEEP_WORK" && cp -- *.zst *.ref.* *.ct.* *.err "$KEEP_WORK"/ 2>/dev/null
fi
