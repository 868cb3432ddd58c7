#!/usr/bin/env python3
"""signal_at.py SIGNAL PATTERN SEEN -- COMMAND...

Runs COMMAND and sends it SIGNAL (INT, TERM, HUP ...) at a moment when a
file matching the glob PATTERN exists: it watches for one, stops COMMAND
(SIGSTOP), and only if one still exists then sends SIGNAL and lets it go
on (SIGCONT); else it lets it go on and watches again.  So the signal
arrives while the temporary is there, however short-lived.  The names
that existed then go to the file SEEN, one a line (empty: never seen).

COMMAND starts with SIGINT, SIGTERM, SIGHUP and SIGPIPE at their default
action, whatever this script inherited (a shell's background job ignores
SIGINT).  Exits with COMMAND's status as a shell gives it (128+N when
killed by signal N); 124 if it ran past 60 seconds (then it is killed).
"""
import glob
import os
import signal
import subprocess
import sys
import time

LIMIT = 60


def shell_status(status):
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def main():
    sig = getattr(signal, "SIG" + sys.argv[1])
    pattern, seen_path = sys.argv[2], sys.argv[3]
    if sys.argv[4] != "--":
        sys.exit("usage: signal_at.py SIGNAL PATTERN SEEN -- COMMAND...")
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(s, signal.SIG_DFL)
    open(seen_path, "w").close()
    child = subprocess.Popen(sys.argv[5:])
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline:
        pid, status = os.waitpid(child.pid, os.WNOHANG)
        if pid != 0:
            sys.exit(shell_status(status))
        if not glob.glob(pattern):
            continue
        os.kill(child.pid, signal.SIGSTOP)
        pid, status = os.waitpid(child.pid, os.WUNTRACED)
        if not os.WIFSTOPPED(status):
            sys.exit(shell_status(status))	# it ended meanwhile
        there = glob.glob(pattern)
        if there:
            with open(seen_path, "w") as f:
                f.write("".join(name + "\n" for name in there))
            os.kill(child.pid, sig)
            os.kill(child.pid, signal.SIGCONT)
            pid, status = os.waitpid(child.pid, 0)
            sys.exit(shell_status(status))
        os.kill(child.pid, signal.SIGCONT)
    child.kill()
    child.wait()
    sys.exit(124)


main()
