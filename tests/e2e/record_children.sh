# --trace-children=yes: every process gets a trace of its own, with the
# counts Cachegrind gives it under --trace-children=yes.
source "$(dirname "$0")/../lib.sh"
plan 5

script="$PROGS/loops 1 > /dev/null; $PROGS/recursion 18 > /dev/null"
CG_OPTS="--cache-sim=yes --trace-children=yes" cachegrind cg.%p.out sh -c "$script"
clean_env "$CGTRACE" record -q --trace-children=yes -o tr.%p.zst -- sh -c "$script"
check_eq "three processes, three traces" 3 "$(ls tr.*.zst | wc -l)"

# One check per Cachegrind process (three planned): its trace is the one
# whose command is the same; no such trace compares as empty, and fails.
for cg in cg.*.out; do
	cmd=$(sed -n 's/^cmd: //p' "$cg")
	counts=""
	for tr in tr.*.zst; do
		trcmd=$("$CGTRACE" info "$tr" | sed -n 's/^command: *//p')
		[ "$trcmd" = "$cmd" ] && counts=$(info_counts "$tr")
	done
	expected="$(summary_field "$cg" Ir) $(summary_field "$cg" Dr) $(summary_field "$cg" Dw)"
	check_eq "child trace of '${cmd:0:40}': Ir Dr Dw equal Cachegrind's" "$expected" "$counts"
done

out=$("$CGTRACE" record --trace-children=yes -o fixed.zst -- /bin/true 2>&1)
check_contains "--trace-children=yes without %p is refused" "needs %p" "$out"
