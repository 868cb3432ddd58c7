# record waits for what it started, not for the children a shell hands
# it: bash makes a process substitution or a background job and then execs
# the command, which inherits them.  Each command runs under timeout, so
# that a recorder that waits for them fails here instead of hanging.
source "$(dirname "$0")/../lib.sh"
plan 18

# A process substitution reading stderr: cgtrace waited for the cat, which
# waited for cgtrace's stderr to close, for ever.
timeout 60 bash -c "exec \"\$0\" record -o sub.zst -- /bin/true 2> >(cat > sub.err)" "$CGTRACE"
check_eq "stderr to a process substitution: record finishes with the program's status" 0 "$?"
check_contains "... the trace is whole" "exited with status 0" "$("$CGTRACE" info sub.zst 2>&1)"
for _ in $(seq 50); do grep -q recorded sub.err && break; sleep 0.1; done
check_contains "... its summary went to the substitution" "recorded" "$(cat sub.err)"

# A background job that outlives the program by far.
timeout 60 bash -c "sleep 75 >/dev/null & echo \$! > sleep.pid; exec \"\$0\" record -q -o bg.zst -- sh -c 'exit 3'" "$CGTRACE"
check_eq "a background job handed over: record finishes with the program's status" 3 "$?"
check_contains "... the trace is whole" "exited with status 3" "$("$CGTRACE" info bg.zst 2>&1)"
kill "$(cat sleep.pid)" 2>/dev/null

# --trace-children=yes makes cgtrace a subreaper: the sinks of traced
# children reach it as orphans and are waited for; the cat is not.
timeout 60 bash -c "exec \"\$0\" record --trace-children=yes -o 'tc.%p.zst' -- sh -c '/bin/true; true' 2> >(cat > tc.err)" "$CGTRACE"
check_eq "--trace-children=yes, stderr to a process substitution: record finishes" 0 "$?"
check_eq "... the traces of both processes are there" 2 "$(ls tc.*.zst | wc -l)"
ends=$(for t in tc.*.zst; do "$CGTRACE" info "$t" 2>&1 | sed -n 's/^end: *//p'; done | sort -u)
check_eq "... and whole when it returns (the child's sink was waited for)" "exited with status 0" "$ends"

# A fork child's sink is cgtrace's own child: still waited for.
timeout 60 bash -c "sleep 75 >/dev/null & echo \$! > sleep.pid; exec \"\$0\" record -q -o fork.%p.zst -- \"\$1\"" "$CGTRACE" "$PROGS/forkchild" >/dev/null
check_eq "a fork child, with a job handed over: record finishes" 0 "$?"
check_eq "... both traces are there" 2 "$(ls fork.*.zst | wc -l)"
ends=$(for t in fork.*.zst; do "$CGTRACE" info "$t" 2>&1 | sed -n 's/^end: *//p'; done | sort -u)
check_eq "... and whole when it returns" "exited with status 0" "$ends"
kill "$(cat sleep.pid)" 2>/dev/null

# Children that outlive the program: their traces are finished before
# record returns.  (A fork child's sink is cgtrace's own child; the sink
# of a process of a --trace-children=yes run reaches it as an orphan.)
timeout 60 bash -c "exec \"\$0\" record -q -o orphan.%p.zst -- \"\$1\" orphan 2> >(cat >/dev/null)" "$CGTRACE" "$PROGS/forks"
check_eq "a fork child that outlives the program: record finishes" 0 "$?"
ends=$(for t in orphan.*.zst; do "$CGTRACE" info "$t" 2>&1 | sed -n 's/^end: *//p'; done | sort | uniq -c | tr -s ' ')
check_eq "... both traces are whole when it returns" " 2 exited with status 0" "$ends"
timeout 60 bash -c "exec \"\$0\" record -q --trace-children=yes -o 'tcorphan.%p.zst' -- sh -c '(sleep 1; /bin/true) & exit 0' 2> >(cat >/dev/null)" "$CGTRACE"
check_eq "--trace-children=yes, a process that outlives the program: record finishes" 0 "$?"
ends=$(for t in tcorphan.*.zst; do "$CGTRACE" info "$t" 2>&1 | sed -n 's/^end: *//p'; done | sort | uniq -c | tr -s ' ')
check_eq "... every trace is whole when it returns" " 3 exited with status 0" "$ends"

# A shell that ignores SIGCHLD hands that on through exec: the kernel
# would reap the program unasked, and its exit status would be lost.
ignoring_sigchld() {
	timeout 60 python3 -c 'import os, signal, sys
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
os.execv(sys.argv[1], sys.argv[1:])' "$@"
}
ignoring_sigchld "$CGTRACE" record -q -o ign.zst -- sh -c 'exit 3'
check_eq "SIGCHLD ignored: the program's exit status" 3 "$?"
ignoring_sigchld "$CGTRACE" record -q -o ignsig.zst -- "$PROGS/selfkill" >/dev/null 2>&1
check_eq "SIGCHLD ignored: a program killed by SIGTERM" 143 "$?"
ignoring_sigchld "$CGTRACE" record -q --trace-children=yes -o 'ign.%p.zst' -- sh -c '/bin/true; exit 4'
check_eq "SIGCHLD ignored, --trace-children=yes: the program's exit status" 4 "$?"
