#!/usr/bin/env python3
"""callgrind_invariant.py [--events=A,B] [--except=REGEX] [--where-balanced=EVENT] FILE...

Checks the call graph's balance in callgrind.out files: for every
function with callers, and every event (or those given), the cost of the
calls into it equals its self cost plus the cost of the calls it makes --
recursion aside: a call from a function to itself is on neither side.
Functions whose name matches --except are left out (a thread's or a
signal handler's first function is called by none, so it is left out
anyway), and with --where-balanced those whose EVENT does not balance
(Callgrind's own files do not, where code runs under a call without one
of its own: Valgrind's freeres code under _Exit's call).

Reads the files with callgrind_compare.py's reader.  Prints each
imbalance and exits 1 if there is one, 0 if none, 2 if a file cannot be
read.
"""
import os
import re
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from callgrind_compare import Reader, Invalid, WRAP  # noqa: E402


def imbalances(part, only, skip, where):
    events = part.events
    cols = [i for i, e in enumerate(events) if not only or e in only]
    self_cost = defaultdict(lambda: [0] * len(events))
    into = defaultdict(lambda: [0] * len(events))
    out_of = defaultdict(lambda: [0] * len(events))
    called = set()
    for f, sites in part.self_cost.items():
        for vec in sites.values():
            for i, v in enumerate(vec[:len(events)]):
                self_cost[f][i] = (self_cost[f][i] + v) % WRAP
    for (caller, _site, callee), (count, vec) in part.calls.items():
        if caller == callee:
            continue
        called.add(callee)
        for i, v in enumerate(vec[:len(events)]):
            into[callee][i] = (into[callee][i] + v) % WRAP
            out_of[caller][i] = (out_of[caller][i] + v) % WRAP
    def balanced(f, i):
        return into[f][i] == (self_cost[f][i] + out_of[f][i]) % WRAP

    for f in sorted(called):
        if skip and skip.search(f[2]):
            continue
        if where is not None and where in events and not balanced(f, events.index(where)):
            continue
        for i in cols:
            lhs, rhs = into[f][i], (self_cost[f][i] + out_of[f][i]) % WRAP
            if lhs != rhs:
                yield f"{f[2]} [{f[0]}]: {events[i]}: calls into it {lhs}, self {self_cost[f][i]} " \
                      f"+ calls it makes {out_of[f][i]} = {rhs}"


def main(argv):
    only, skip, where, files = None, None, None, []
    for a in argv:
        if a.startswith('--where-balanced='):
            where = a[len('--where-balanced='):]
        elif a.startswith('--events='):
            only = set(a[len('--events='):].split(','))
        elif a.startswith('--except='):
            skip = re.compile(a[len('--except='):])
        else:
            files.append(a)
    if not files:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    bad = 0
    for path in files:
        try:
            parts = Reader(path, 'auto').read()
        except (Invalid, OSError) as e:
            print(f"callgrind_invariant.py: {e}", file=sys.stderr)
            return 2
        for p in parts:
            for line in imbalances(p, only, skip, where):
                print(f"{path} part {p.index}: {line}")
                bad += 1
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
