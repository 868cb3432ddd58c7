# --trace-children=yes: every process gets a trace of its own, with the
# counts Cachegrind gives it under --trace-children=yes.  A process that
# calls execve goes on as the new program, with its pid: that program's
# trace takes the name, and the first process has none, as it has no
# Cachegrind file.
source "$(dirname "$0")/../lib.sh"
plan 9

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

# sh forks env, which execs sh, which execs true: Cachegrind writes files
# for the first sh and for true.
script='/usr/bin/env A=1 /bin/sh -c "exec /bin/true"; true'
CG_OPTS="--trace-children=yes" cachegrind ex.cg.%p /bin/sh -c "$script"
clean_env "$CGTRACE" record -q --trace-children=yes -o ex.%p.zst -- /bin/sh -c "$script" 2>ex.err
check_eq "execve: the programs Cachegrind profiles, one trace each" \
	"$(sed -n 's/^cmd: //p' ex.cg.* | sort)" \
	"$(for t in ex.*.zst; do "$CGTRACE" info "$t" | sed -n 's/^command: *//p'; done | sort)"
ends=$(for t in ex.*.zst; do "$CGTRACE" info "$t" 2>&1 | sed -n 's/^end: *//p'; done | sort -u)
check_eq "execve: every trace whole (none written over by the next program's)" \
	"exited with status 0" "$ends"
check_empty "execve: no temporary file left" "$(ls -A | grep cgtrace-out)"

# Without --trace-children the new program runs unrecorded: said so.
out=$(clean_env "$CGTRACE" record -q -o noex.zst -- /bin/sh -c 'exec /bin/true' 2>&1)
check_contains "execve without --trace-children=yes: says the new program is not recorded" \
	"called execve" "$out"
