# A child made by fork() without exec gets a trace of its own, which begins
# with its parent's trace up to the fork: simulated, it gives what
# Cachegrind gives the child process (Cachegrind's child profile holds the
# parent's costs up to the fork).  Children that call execve are not
# profiled by Valgrind's tools, nor recorded; one killed mid-run keeps
# what arrived.  (tests/e2e/simulate_callgrind.sh checks a fork child
# against Callgrind.)
source "$(dirname "$0")/../lib.sh"
plan 41

CFG="--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"
FORKS=$PROGS/forks

# tree: 20 children and a grandchild, 22 processes.
CG_OPTS="$CFG --branch-sim=yes" cachegrind cg.%p "$FORKS" tree
clean_env "$CGTRACE" record -q -o tree.%p.zst -- "$FORKS" tree >/dev/null 2>tree.err
check_eq "tree: recorded, a trace per process" "0 22" "$? $(ls tree.*.zst | wc -l)"
for t in tree.*.zst; do
	"$CGTRACE" simulate -q $CFG --branch-sim=yes --cachegrind-out-file="ct.${t#tree.}" "$t" \
		2>>simulate.err || echo "  $t: simulate failed: $(head -n 1 simulate.err)"
done
# One check per Cachegrind file: an identical file of ours, each used once
# (the files name no pid: the same program, the same command line).
for cg in cg.*; do
	match=""
	for ct in ct.*; do
		if [ -f "$ct" ] && cmp -s "$cg" "$ct"; then
			match=$ct
			break
		fi
	done
	check "tree: Cachegrind's $(grep -c . "$cg")-line file of process ${cg#cg.} has its equal among ours" \
		[ -n "$match" ]
	[ -n "$match" ] && rm -f "$match"
done
check_empty "tree: no file of ours left without its equal" "$(ls ct.* 2>/dev/null)"
forked=$(for t in tree.*.zst; do "$CGTRACE" info "$t" | grep -c 'forked by'; done | paste -sd+ | bc)
check_eq "tree: info says 21 traces were forked" 21 "$forked"
parent=$(ls tree.*.zst | sort -t. -k2 -n | head -n 1)
check_eq "tree: every trace has its parent's permissions" \
	"$(ls tree.*.zst | wc -l)" "$(stat -c %a tree.*.zst | grep -cx "$(stat -c %a "$parent")")"

# system(): the shell children call execve; Valgrind follows them only with
# --trace-children=yes, and then into traces of their own.
clean_env "$CGTRACE" record -q -o sys.%p.zst -- "$FORKS" system 2>sys.err
check_eq "system: the parent's trace only" "0 1" "$? $(ls sys.*.zst | wc -l)"
check_empty "system: no temporary file left" "$(ls -A | grep cgtrace-out)"
clean_env "$CGTRACE" record -q --trace-children=yes -o kids.%p.zst -- "$FORKS" system 2>kids.err
check_eq "system --trace-children=yes: the parent's trace and the three shells'" \
	"0 4" "$? $(ls kids.*.zst | wc -l)"
ends=$(for t in kids.*.zst; do "$CGTRACE" info "$t" | sed -n 's/^end: *//p'; done | sort | uniq -c | sed 's/^ *//')
check_eq "system --trace-children=yes: every trace whole, its program exited" "4 exited with status 0" "$ends"

# A program a shell starts (whose sink the launcher starts) forks too.
clean_env "$CGTRACE" record -q --trace-children=yes -o sh.%p.zst -- /bin/sh -c "$FORKS tree; true" \
	2>sh.err
check_eq "--trace-children=yes, the tree started by a shell: a trace per process" "0 23" \
	"$? $(ls sh.*.zst | wc -l)"
ends=$(for t in sh.*.zst; do "$CGTRACE" info "$t" 2>&1 | sed -n 's/^end: *//p'; done | sort | uniq -c | sed 's/^ *//')
check_eq "--trace-children=yes, the tree started by a shell: every trace whole" \
	"23 exited with status 0" "$ends"

# kill: the child's trace ends where its stream did.
clean_env "$CGTRACE" record -q -o kill.%p.zst -- "$FORKS" kill 2>kill.err
check_eq "kill: recorded, two traces" "0 2" "$? $(ls kill.*.zst | wc -l)"
check_contains "kill: says the child's stream ended early" "ended early" "$(cat kill.err)"
child=$(ls kill.*.zst | sort -t. -k2 -n | tail -n 1)
"$CGTRACE" simulate -q --cachegrind-out-file=kill.out "$child" 2>/dev/null
check_eq "kill: the child's trace simulates what it holds (exit status 3)" 3 "$?"
check "kill: ... which holds the child's loop (over 10 million instructions)" \
	[ "$(summary_field kill.out Ir)" -gt 10000000 ]

# noexec: execve fails and the child goes on: recorded.
CG_OPTS="$CFG" cachegrind noexec.cg.%p "$FORKS" noexec
clean_env "$CGTRACE" record -q -o noexec.%p.zst -- "$FORKS" noexec 2>noexec.err
check_eq "noexec: recorded, two traces" "0 2" "$? $(ls noexec.*.zst | wc -l)"
child=$(ls noexec.*.zst | sort -t. -k2 -n | tail -n 1)
"$CGTRACE" simulate -q $CFG --cachegrind-out-file=noexec.ct "$child"
check_same_file "noexec: the child's cachegrind.out is Cachegrind's" \
	"$(ls noexec.cg.* | sort -t. -k3 -n | tail -n 1)" noexec.ct

# Without %p a child's trace would replace its parent's: not recorded.
clean_env "$CGTRACE" record -q -o fixed.zst -- "$FORKS" noexec 2>fixed.err
check_eq "no %p: the program runs as ever, one trace" "0 1" "$? $(ls fixed*.zst | wc -l)"
check_contains "no %p: says why the child is not recorded" "the output name has no %p" \
	"$(cat fixed.err)"
clean_env "$CGTRACE" record -q -o fixed-sys.zst -- "$FORKS" system 2>fixed-sys.err
check_empty "no %p: children that call execve, not profiled anyway, are not mentioned" \
	"$(cat fixed-sys.err)"
