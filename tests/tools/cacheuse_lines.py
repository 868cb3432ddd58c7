"""Compares a cachegrind.out's costs per source line with a callgrind.out's
self costs summed per source line.

Usage: cacheuse_lines.py [--events=E,E,...] [--except-functions=REGEX]
                         [--where-ir-agrees[=N]] CALLGRIND_OUT CACHEGRIND_OUT

Callgrind charges an event to an instruction in a context; Cachegrind, and
cgtrace's --tool=cachegrind, to the instruction alone.  Summed over every
function, context and instruction of a (file, line), the two agree where
both simulate the same thing -- as cache use does: a line's use is charged
to the instruction that loaded it, whichever call was active.  The
callgrind.out is read by callgrind_compare.py's reader (every function's
self cost per position; calls' inclusive costs are not self costs).

An event may be a sum, "D1mr+D1mw": Callgrind counts a read-modify-write
as a write where Cachegrind counts it as a read.  Lines whose compared
costs are all zero in both files are left out, and so are the lines of
any function whose name matches --except-functions (re.search) in either
file (Callgrind's name, with its suffix: fib'2).  With --where-ir-agrees,
only the lines where both files count the same Ir are compared: where the
two tools ran the same instructions (Callgrind never counts the block its
run ends in, nor a few before it, which Cachegrind counts); with =N, more
than N such lines is a difference too (so that a shift of instructions
between lines cannot empty the comparison).  Prints each difference
(file:line, the expected and the actual costs); exits 0 if none, 1 if
any, 2 if a file cannot be read, or if an event is in neither file's
events: line, or if nothing at all is compared (two empty profiles
never agree).  Default events: AcCost1,SpLoss1,AcCost2,SpLoss2.
"""
import os
import re
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import callgrind_compare  # noqa: E402


def callgrind_lines(path, skip):
    """(events, {(file, line): [cost per event]}) of every part, and the
    lines of the functions skip matches."""
    parts = callgrind_compare.Reader(path, 'auto').read()
    events = parts[0].events
    lines = defaultdict(lambda: [0] * len(events))
    skipped = set()
    for part in parts:
        if part.events != events:
            raise callgrind_compare.Invalid(f"{path}: parts with different events")
        at = part.positions_or_default().index('line') + 1
        for fn, sites in part.self_cost.items():
            for site, cost in sites.items():
                if skip is not None and skip.search(fn[2]):
                    skipped.add((site[0], site[at]))
                acc = lines[(site[0], site[at])]
                for i, v in enumerate(cost):
                    acc[i] += v
    return events, lines, skipped


def cachegrind_lines(path, skip):
    """(events, {(file, line): [cost per event]}) of a cachegrind.out, and
    the lines of the functions skip matches."""
    events, fl, fn = None, None, None
    lines = defaultdict(list)
    skipped = set()
    with open(path) as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip('\n')
            if line.startswith('events:'):
                events = line.split()[1:]
            elif line.startswith('fl='):
                fl = line[3:]
            elif line.startswith('fn='):
                fn = line[3:]
            elif line.startswith(('desc:', 'cmd:', 'summary:', 'totals:')) or not line:
                continue
            elif line[0].isdigit():
                if events is None or fl is None:
                    raise callgrind_compare.Invalid(f"{path}:{n}: a cost line before events: or fl=")
                fields = [int(x) for x in line.split()]
                if skip is not None and fn is not None and skip.search(fn):
                    skipped.add((fl, fields[0]))
                acc = lines[(fl, fields[0])]
                if len(acc) < len(events):
                    acc.extend([0] * (len(events) - len(acc)))
                for i, v in enumerate(fields[1:]):
                    acc[i] += v
            else:
                raise callgrind_compare.Invalid(f"{path}:{n}: not a cachegrind.out line")
    if events is None:
        raise callgrind_compare.Invalid(f"{path}: no events: line")
    return events, lines, skipped


def project(events, wanted, path):
    """For each wanted event (a sum of names), the columns it adds."""
    cols = []
    for w in wanted:
        names = w.split('+')
        missing = [x for x in names if x not in events]
        if missing:
            raise callgrind_compare.Invalid(f"{path}: no event {missing[0]} in its events: line")
        cols.append([events.index(x) for x in names])
    return cols


def values(cost, cols):
    return [sum(cost[i] if i < len(cost) else 0 for i in c) for c in cols]


def main(argv):
    wanted = "AcCost1,SpLoss1,AcCost2,SpLoss2".split(',')
    args = []
    skip = None
    ir_agrees, max_ir_differ = False, None
    for a in argv[1:]:
        if a == '--where-ir-agrees' or a.startswith('--where-ir-agrees='):
            ir_agrees = True
            if '=' in a:
                max_ir_differ = int(a.split('=', 1)[1])
            continue
        if a.startswith('--events='):
            wanted = a[len('--events='):].split(',')
        elif a.startswith('--except-functions='):
            skip = re.compile(a[len('--except-functions='):])
        else:
            args.append(a)
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        cg_events, expected, skipped = callgrind_lines(args[0], skip)
        c_events, actual, c_skipped = cachegrind_lines(args[1], skip)
        skipped |= c_skipped
        exp_cols = project(cg_events, wanted, args[0])
        act_cols = project(c_events, wanted, args[1])
        ir_differ = set()
        if ir_agrees:
            exp_ir = project(cg_events, ['Ir'], args[0])
            act_ir = project(c_events, ['Ir'], args[1])
            for key in set(expected) | set(actual):
                if key not in skipped and \
                   values(expected.get(key, []), exp_ir) != values(actual.get(key, []), act_ir):
                    ir_differ.add(key)
            skipped |= ir_differ
    except (OSError, callgrind_compare.Invalid) as e:
        print(f"cacheuse_lines.py: {e}", file=sys.stderr)
        return 2
    diffs, compared = 0, 0
    for key in sorted(set(expected) | set(actual), key=lambda k: (k[0], k[1])):
        if key in skipped:
            continue
        e = values(expected.get(key, []), exp_cols)
        a = values(actual.get(key, []), act_cols)
        if not any(e) and not any(a):
            continue
        compared += 1
        if e != a:
            diffs += 1
            if diffs <= 40:
                print(f"{key[0]}:{key[1]}: callgrind {e}, cachegrind {a}")
    if compared == 0:
        print("cacheuse_lines.py: no line has any of the events compared", file=sys.stderr)
        return 2
    if diffs > 40:
        print(f"... {diffs - 40} more")
    if max_ir_differ is not None and len(ir_differ) > max_ir_differ:
        diffs += 1
        print(f"{len(ir_differ)} lines count other instructions (Ir) in the two files, more than "
              f"{max_ir_differ}: " + ", ".join(f"{k[0]}:{k[1]}" for k in sorted(ir_differ)[:10]))
    print(f"{compared} lines compared ({','.join(wanted)}), {diffs} differ"
          + (f", {len(skipped)} left out" if skipped else ""))
    return 1 if diffs else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
