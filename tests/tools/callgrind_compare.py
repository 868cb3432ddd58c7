"""Compares two callgrind.out files as profiles, not as text.

Usage: callgrind_compare.py [options] EXPECTED ACTUAL

Each file is read as callgrind-format.md describes the format: name
compression in three pools (ob cob | fl fi fe cfi cfl jfi | fn cfn jfn),
each part's own (KCachegrind's loader forgets every "(N) name" at a new
part, and Callgrind defines them again in each part it appends),
"(N) name" definitions anywhere, positions "+N", "-N", "*" relative to
the current position, "positions: line", "instr line" or "instr", fi=/fe=
switching the file inside a function (fn= goes back to the last fl=),
calls= followed by the call's inclusive cost line, jump=/jcnd= followed
by their source position, several parts in one file (--combine-dumps).
Where Callgrind's own writer means something else than the readers read
(which position a relative one is relative to after a call, which file a
call without cfi= goes to: class Where), a file Callgrind wrote is read
as Callgrind meant it, any other as the readers read it (--semantics=).
Each part becomes a normal form that does not depend on the order of
blocks, on name compression or on how positions are written:

  - the events line, the positions line, the part number and the dump's
    "desc: Trigger:" (never pid:, cmd:, creator:, version: or the other
    desc: lines, which say where and when, not what);
  - summary: and totals:;
  - per function -- (ob, fl, fn) as written, fn with its recursion or
    caller suffix (fib'2) -- the self cost per (file, position), the file
    being fi=/fe='s where one is in force;
  - per call arc -- (caller, call-site file and position, callee's cob,
    cfi/cfl and cfn, cob defaulting to ob, cfi to the current file) -- the
    summed call count and the summed inclusive cost (calls=0 lines, which
    later parts of --combine-dumps carry, add their cost);
  - per jump -- (function, source file and position, target function,
    file and position, jump= or jcnd=) -- the summed counts.

Entries whose counts are all zero are dropped.  Parts are compared in
order.  Prints each difference on a line of its own (the first
--max-diffs, then how many more of each kind) and exits 0 if the
profiles are equal, 1 if they differ, 2 if either file cannot be read or
is not a usable callgrind.out: malformed lines, undefined or redefined
compressed names, a calls= or jump line without the line that must
follow it, more costs than events -- and, so that two empty or broken
files never agree, a part without an events line, a file without a cost
line, a part without a summary: line or with a summary of zeros.

Options:
  --max-diffs=N      print at most N differences [40]
  --events=A,B,...   compare only these events (each must be in both files)
  --functions=REGEX  compare only the functions whose name (fn, with its
                     suffix) matches REGEX (re.search), and the call arcs
                     and jumps between two of them; summary:/totals: are
                     not compared then (they count every function)
  --semantics=auto|callgrind|readers
                     how a file's positions and default files are read
                     where Callgrind's writer and the readers differ (see
                     Where below): as Callgrind's writer means them, as
                     the readers read them, or [auto] the first for a
                     file whose creator: is callgrind-*, the second for
                     any other; the lines read otherwise are listed after
                     the differences
  --normal-form      print each file's normal form instead (one line per
                     entry, sorted) and exit 0 -- to diff by hand
"""
import re
import sys
from collections import defaultdict

POOLS = {'ob': 'ob', 'cob': 'ob',
         'fl': 'fl', 'fi': 'fl', 'fe': 'fl', 'cfi': 'fl', 'cfl': 'fl', 'jfi': 'fl',
         'fn': 'fn', 'cfn': 'fn', 'jfn': 'fn'}
HEADER_KEYS = ('version', 'creator', 'pid', 'thread', 'part', 'cmd', 'desc', 'positions',
               'event', 'events', 'summary', 'totals')
NAME_LINE = re.compile(r'(ob|cob|fl|fi|fe|cfi|cfl|jfi|fn|cfn|jfn)=(.*)$')
COMPRESSED = re.compile(r'\((\d+)\)(?:\s+(.*))?$')
SUBPOS = re.compile(r'(\*|[+-]\d+|0x[0-9a-fA-F]+|\d+)$')


class Invalid(Exception):
    pass


class Part:
    def __init__(self, index):
        self.index = index          # 1, 2, ... in the file
        self.number = None          # the part: line's value
        self.thread = None
        self.trigger = None
        self.positions = None
        self.events = None
        self.summary = None
        self.totals = None
        self.cost_lines = 0
        # function -> (file, position...) -> cost
        self.self_cost = defaultdict(lambda: defaultdict(list))
        # (caller, (file, position...), callee) -> [count, cost]
        self.calls = {}
        # (function, (file, position...), kind, target function, (file, position...)) -> [counts]
        self.jumps = {}

    def positions_or_default(self):
        return self.positions if self.positions is not None else ['line']


# Callgrind's counters are 64-bit and wrap (an inclusive cost that
# starts before a STOP_INSTRUMENTATION, a summary: after one): sums too.
WRAP = 1 << 64


def add_into(acc, values):
    if len(acc) < len(values):
        acc.extend([0] * (len(values) - len(acc)))
    for i, v in enumerate(values):
        acc[i] = (acc[i] + v) % WRAP


class Where:
    """The current file and position, kept two ways.

    The readers (KCachegrind, callgrind_annotate; callgrind-format.md
    section 5): the file is the last fl=, fi= or fe= (fn= goes back to
    fl=), and every cost line, call cost line and jump source line sets
    the position.  Callgrind's writer (dump.c: fprint_bbcc, fprint_jcc)
    remembers the file and position of the last *cost* line only (at fn=,
    the function's file): a call cost line's or jump source line's
    position does not move it, a fi=/fe= printed for a call site does not
    change it, and cfi=/jfi= are left out when the callee's file is that
    remembered one.  Callgrind's own files mean what its writer meant; the
    readers read a few places of them otherwise (a call reached with
    instrumentation or collection off, code whose debug information was
    dropped by dlclose), e.g. callgrind_annotate's "<bogus line>"s."""

    def __init__(self):
        self.file = None      # readers
        self.pos = None
        self.w_file = None    # Callgrind's writer: the last cost line's file
        self.w_named = None   # ... a fi=/fe= given since that line
        self.w_fresh = False  # ... and no call or jump since that fi=/fe=
        self.w_pos = None

    def fi(self, name):
        self.file = self.w_named = name
        self.w_fresh = True

    def fn(self, fl):
        self.file = self.w_file = fl
        self.w_named = None

    def site_file(self):
        """A call's or jump's site: fi=/fe= is printed before its group."""
        return self.file, self.w_named or self.w_file

    def cost_file(self):
        """A cost line: a fi=/fe= right before it, else the last one's file."""
        return self.file, self.w_named if self.w_fresh and self.w_named else self.w_file

    def default_file(self):
        """The file of a call's or jump's target without cfi=/jfi=."""
        return self.file, self.w_file


class Reader:
    def __init__(self, path, semantics):
        self.path = path
        self.semantics = semantics    # 'auto', 'callgrind' or 'readers'
        self.parts = []
        self.lineno = 0
        self.creator = None
        # Lines the readers and Callgrind's writer read differently.
        self.ambiguous = []

    def fail(self, why):
        raise Invalid(f"{self.path}:{self.lineno}: {why}")

    def name(self, key, value):
        """The name a name line gives, with its compression resolved."""
        pool = self.pools[POOLS[key]]
        m = COMPRESSED.match(value) if value.startswith('(') and value[1:2].isdigit() else None
        if m is None:
            if value == '':
                self.fail(f"'{key}=' without a name")
            return value
        ident, name = m.group(1), m.group(2)
        if name is None or name == '':
            if ident not in pool:
                self.fail(f"'{key}=({ident})' refers to an undefined {POOLS[key]} name")
            return pool[ident]
        if ident in pool and pool[ident] != name:
            self.fail(f"'{key}=({ident}) {name}' redefines {POOLS[key]} name ({ident}), "
                      f"which was '{pool[ident]}'")
        pool[ident] = name
        return name

    def resolve(self, fields, what, cur, strict):
        """Subpositions: absolute, hex, or relative to cur; None where they
        cannot be resolved and not strict."""
        out = []
        for i, f in enumerate(fields):
            if not SUBPOS.match(f):
                self.fail(f"bad {what} '{f}'")
            if f == '*' or f[0] in '+-':
                if cur is None or i >= len(cur):
                    if strict:
                        self.fail(f"relative {what} '{f}' where none can be")
                    return None
                v = cur[i] + (0 if f == '*' else int(f))
                if v < 0:
                    if strict:
                        self.fail(f"{what} '{f}' makes a negative position ({v})")
                    return None
            else:
                v = int(f, 16) if f.startswith('0x') else int(f)
            out.append(v)
        return out

    def both(self, fields, what, where):
        """The position as the readers and as Callgrind's writer read it."""
        w = self.writer
        r = self.resolve(fields, what, where.pos, not w)
        c = self.resolve(fields, what, where.w_pos, w)
        return r, c

    def pick(self, readers, callgrind, what):
        """The chosen reading; the line is noted when the two differ."""
        if readers != callgrind and (not self.ambiguous or self.ambiguous[-1][0] != self.lineno):
            self.ambiguous.append((self.lineno, what, readers, callgrind))
        return callgrind if self.writer else readers

    def costs(self, fields, part):
        out = []
        for f in fields:
            if not f.isdigit():
                self.fail(f"bad cost '{f}' (decimal counts only)")
            out.append(int(f))
        if len(out) > len(part.events):
            self.fail(f"{len(out)} costs for {len(part.events)} events")
        return out

    def read(self):
        try:
            with open(self.path, encoding='utf-8', errors='surrogateescape') as f:
                lines = f.read().split('\n')
        except OSError as e:
            raise Invalid(f"{self.path}: {e.strerror}")
        creator = next((ln[len('creator:'):].strip() for ln in lines[:20]
                        if ln.startswith('creator:')), None)
        self.creator = creator
        if self.semantics == 'auto':
            self.writer = creator is not None and creator.startswith('callgrind-')
        else:
            self.writer = self.semantics == 'callgrind'
        part = None
        ob = fl = fn = None   # current object, function's file, function
        where = Where()
        call_ob = call_fl = call_fn = None
        jump_fl = jump_fn = None
        pending = None        # ('call', count, callee) or ('jump', kind, counts, target fn, target)

        def new_part():
            nonlocal part, fn
            part = Part(len(self.parts) + 1)
            self.parts.append(part)
            self.pools = {'ob': {}, 'fl': {}, 'fn': {}}
            where.pos = where.w_pos = None
            fn = None

        new_part()
        for raw in lines:
            self.lineno += 1
            line = raw.rstrip('\r')
            if pending is not None:
                kind = pending[0]
                fields = line.split()
                if line[:1] in (' ', '\t') or not fields or not SUBPOS.match(fields[0]):
                    self.fail(f"a {'calls=' if kind == 'call' else 'jump'} line must be followed by "
                              f"its {'cost line' if kind == 'call' else 'source position line'}, "
                              f"not {repr(line) if line else 'an empty line'}")
                npos = len(part.positions_or_default())
                if len(fields) < npos:
                    self.fail(f"'{line}': {npos} subpositions expected")
                r, c = self.both(fields[:npos], 'position', where)
                rf, cf = where.site_file()
                site = self.pick((rf,) + tuple(r or ()), (cf,) + tuple(c or ()),
                                 'call site' if kind == 'call' else 'jump source')
                where.pos = r
                where.w_fresh = False
                if kind == 'call':
                    cost = self.costs(fields[npos:], part)
                    key = (fn, site, pending[2])
                    acc = part.calls.setdefault(key, [0, []])
                    acc[0] += pending[1]
                    add_into(acc[1], cost)
                else:
                    if len(fields) > npos:
                        self.fail(f"'{line}': a jump's source line has no costs")
                    _, jkind, counts, target_fn, target = pending
                    key = (fn, site, jkind, target_fn, target)
                    acc = part.jumps.setdefault(key, [0] * len(counts))
                    add_into(acc, counts)
                pending = None
                continue
            if line == '' or line.startswith('#'):
                continue
            if line[:1] in (' ', '\t'):
                self.fail(f"a line starting with white space: '{line}'")
            m = re.match(r'([a-z]+):(.*)$', line)
            if m and m.group(1) in HEADER_KEYS:
                key, value = m.group(1), m.group(2).strip()
                if key in ('summary', 'totals'):
                    if part.events is None:
                        self.fail(f"'{key}:' before the events: line")
                    vals = self.costs(value.split(), part)
                    if getattr(part, key) is not None:
                        self.fail(f"a second '{key}:' line in part {part.index}")
                    setattr(part, key, vals)
                    continue
                if key in ('part', 'thread', 'positions', 'events', 'pid') and part.events is not None:
                    new_part()
                if key == 'part':
                    part.number = value
                elif key == 'thread':
                    part.thread = value
                elif key == 'desc':
                    if value.startswith('Trigger:'):
                        part.trigger = value[len('Trigger:'):].strip()
                elif key == 'positions':
                    pos = value.split()
                    if pos not in (['instr'], ['line'], ['instr', 'line']):
                        self.fail(f"unsupported positions: '{value}'")
                    part.positions = pos
                elif key == 'events':
                    ev = value.split()
                    if not ev:
                        self.fail("an empty events: line")
                    if len(set(ev)) != len(ev):
                        self.fail(f"an event named twice in 'events: {value}'")
                    part.events = ev
                continue
            if part.events is None:
                self.fail(f"'{line}' before the events: line")
            m = NAME_LINE.match(line)
            if m:
                key, name = m.group(1), self.name(m.group(1), m.group(2))
                if key == 'ob':
                    ob, fn = name, None
                elif key == 'fl':
                    fl = name
                    where.fi(name)
                elif key in ('fi', 'fe'):
                    if fn is None:
                        self.fail(f"'{key}=' outside a function")
                    where.fi(name)
                elif key == 'fn':
                    if ob is None or fl is None:
                        self.fail("'fn=' before any ob= and fl=")
                    fn = (ob, fl, name)
                    where.fn(fl)
                elif key == 'cob':
                    call_ob = name
                elif key in ('cfi', 'cfl'):
                    call_fl = name
                elif key == 'cfn':
                    call_fn = name
                elif key == 'jfi':
                    jump_fl = name
                elif key == 'jfn':
                    jump_fn = name
                continue
            m = re.match(r'(calls|jump|jcnd)=(\S+)((?:\s+\S+)*)\s*$', line)
            if m:
                if fn is None:
                    self.fail(f"'{m.group(1)}=' outside a function")
                npos = len(part.positions_or_default())
                target_fields = m.group(3).split()
                if len(target_fields) > npos:
                    self.fail(f"'{line}': more than {npos} target subpositions")
                r, c = self.both(target_fields, 'target position', where)
                rf, cf = where.default_file()
                if m.group(1) == 'calls':
                    if not m.group(2).isdigit():
                        self.fail(f"bad call count in '{line}'")
                    if call_fn is None:
                        self.fail("'calls=' without a cfn= line before it")
                    callee_ob = call_ob if call_ob is not None else ob
                    callee_fl = call_fl if call_fl is not None else \
                        self.pick(rf, cf, "callee's file (no cfi=)")
                    pending = ('call', int(m.group(2)), (callee_ob, callee_fl, call_fn))
                    call_ob = call_fl = call_fn = None
                else:
                    if m.group(1) == 'jump':
                        if not m.group(2).isdigit():
                            self.fail(f"bad jump count in '{line}'")
                        counts = [int(m.group(2))]
                    else:
                        cnt = re.match(r'(\d+)/(\d+)$', m.group(2))
                        if cnt is None:
                            self.fail(f"'{line}': jcnd= needs <followed>/<executed>")
                        counts = [int(cnt.group(1)), int(cnt.group(2))]
                        if counts[0] > counts[1]:
                            self.fail(f"'{line}': followed more often than executed")
                    if len(target_fields) != npos:
                        self.fail(f"'{line}': {npos} target subpositions expected")
                    target_fn = (fn[0], fn[1], jump_fn) if jump_fn is not None else fn
                    target = self.pick(
                        (jump_fl if jump_fl is not None else rf,) + tuple(r or ()),
                        (jump_fl if jump_fl is not None else cf,) + tuple(c or ()),
                        'jump target')
                    pending = ('jump', m.group(1), counts, target_fn, target)
                    jump_fl = jump_fn = None
                continue
            fields = line.split()
            if not SUBPOS.match(fields[0]):
                self.fail(f"not a line of the format: '{line}'")
            if fn is None:
                self.fail(f"a cost line outside a function: '{line}'")
            npos = len(part.positions_or_default())
            if len(fields) < npos:
                self.fail(f"'{line}': {npos} subpositions expected")
            r, c = self.both(fields[:npos], 'position', where)
            rf, cf = where.cost_file()
            site = self.pick((rf,) + tuple(r or ()), (cf,) + tuple(c or ()), 'cost line')
            where.pos, where.w_pos = r, c
            where.w_file, where.w_named = cf, None
            cost = self.costs(fields[npos:], part)
            part.cost_lines += 1
            add_into(part.self_cost[fn][site], cost)
        if pending is not None:
            self.fail(f"the file ends after a {pending[0]} line")
        self.lineno = 0
        for p in self.parts:
            where_ = f"part {p.index}" if len(self.parts) > 1 else "the file"
            if p.events is None:
                self.fail(f"{where_} has no events: line")
            if p.summary is None:
                self.fail(f"{where_} has no summary: line")
            if not any(p.summary):
                self.fail(f"{where_} has a summary: of zeros")
        if not any(p.cost_lines for p in self.parts):
            self.fail("no cost line")
        return self.parts


# ---- Comparing ----------------------------------------------------------------

def short_fn(f):
    ob, fl, name = f
    return f"{name} [ob={ob.rsplit('/', 1)[-1]} fl={fl}]"


def fmt_pos(site, positions):
    file, rest = site[0], site[1:]
    parts = []
    for kind, v in zip(positions, rest):
        parts.append(f"{v:#x}" if kind == 'instr' else f"line {v}")
    return f"{file} " + ' '.join(parts)


class Projection:
    """Events and positions both files have: which columns, which subpositions."""

    def __init__(self, exp, act, only_events):
        names = [e for e in exp.events if e in act.events]
        if only_events:
            names = [e for e in names if e in only_events]
        self.events = names
        self.exp_cols = [exp.events.index(e) for e in names]
        self.act_cols = [act.events.index(e) for e in names]
        ep, ap = exp.positions_or_default(), act.positions_or_default()
        self.positions = [p for p in ep if p in ap]
        self.exp_pos = [ep.index(p) + 1 for p in self.positions]
        self.act_pos = [ap.index(p) + 1 for p in self.positions]

    def cost(self, vec, side):
        cols = self.exp_cols if side == 0 else self.act_cols
        return tuple(vec[c] if c < len(vec) else 0 for c in cols)

    def site(self, site, side):
        idx = self.exp_pos if side == 0 else self.act_pos
        return (site[0],) + tuple(site[i] for i in idx)


def normal_form(part, proj, side, fn_filter):
    """The part's entries keyed for comparison, zero entries dropped."""
    def keep(f):
        return fn_filter is None or fn_filter.search(f[2])
    selfc = defaultdict(lambda: defaultdict(lambda: None))
    for f, sites in part.self_cost.items():
        if not keep(f):
            continue
        for site, vec in sites.items():
            s = proj.site(site, side)
            c = proj.cost(vec, side)
            old = selfc[f][s]
            selfc[f][s] = c if old is None else tuple((a + b) % WRAP for a, b in zip(old, c))
    selfc = {f: {s: c for s, c in sites.items() if any(c)} for f, sites in selfc.items()}
    selfc = {f: sites for f, sites in selfc.items() if sites}
    calls = {}
    for (caller, site, callee), (count, vec) in part.calls.items():
        if not (keep(caller) and keep(callee)):
            continue
        key = (caller, proj.site(site, side), callee)
        c = proj.cost(vec, side)
        old = calls.get(key, (0, tuple(0 for _ in c)))
        calls[key] = (old[0] + count, tuple((a + b) % WRAP for a, b in zip(old[1], c)))
    calls = {k: v for k, v in calls.items() if v[0] or any(v[1])}
    jumps = {}
    for (f, site, kind, tfn, target), counts in part.jumps.items():
        if not (keep(f) and keep(tfn)):
            continue
        key = (f, proj.site(site, side), kind, tfn, proj.site(target, side))
        old = jumps.get(key, [0] * len(counts))
        jumps[key] = [a + b for a, b in zip(old, counts)]
    jumps = {k: tuple(v) for k, v in jumps.items() if any(v)}
    return selfc, calls, jumps


class Diffs:
    def __init__(self):
        self.lines = []
        self.kinds = defaultdict(int)

    def add(self, kind, text):
        self.kinds[kind] += 1
        self.lines.append((kind, text))


def cost_diff(events, a, b):
    return ', '.join(f"{e} {x} vs {y}" for e, x, y in zip(events, a, b) if x != y)


def cost_str(events, c):
    shown = [f"{e}={v}" for e, v in zip(events, c) if v]
    return ' '.join(shown) if shown else 'zero'


def compare_part(exp, act, label, d, only_events, fn_filter):
    for what, x, y in (('part number', exp.number, act.number),
                       ('desc: Trigger:', exp.trigger, act.trigger),
                       ('thread:', exp.thread, act.thread)):
        if x != y:
            d.add('header', f"{label}{what} expected {x!r}, actual {y!r}")
    if exp.events != act.events:
        d.add('header', f"{label}events: expected '{' '.join(exp.events)}', "
                        f"actual '{' '.join(act.events)}' (the events both have are compared)")
    if exp.positions_or_default() != act.positions_or_default():
        d.add('header', f"{label}positions: expected '{' '.join(exp.positions_or_default())}', "
                        f"actual '{' '.join(act.positions_or_default())}' (compared by the "
                        f"positions both have)")
    proj = Projection(exp, act, only_events)
    ev = proj.events
    if not ev:
        d.add('header', f"{label}no event to compare")
        return
    if fn_filter is None:
        for key in ('summary', 'totals'):
            a, b = getattr(exp, key), getattr(act, key)
            if a is None or b is None:
                if (a is None) != (b is None):
                    d.add(key, f"{label}{key}: only in {'expected' if b is None else 'actual'}")
                continue
            a, b = proj.cost(a, 0), proj.cost(b, 1)
            if a != b:
                d.add(key, f"{label}{key}: {cost_diff(ev, a, b)} (expected vs actual)")
    es, ec, ej = normal_form(exp, proj, 0, fn_filter)
    as_, ac, aj = normal_form(act, proj, 1, fn_filter)

    # Self costs, function by function.
    by_name = defaultdict(list)
    for f in set(es) | set(as_):
        by_name[f[2]].append(f)
    for f in sorted(set(es) | set(as_), key=lambda f: (f[2], f[0], f[1])):
        if f not in as_ or f not in es:
            side, other = ('expected', as_) if f not in as_ else ('actual', es)
            sites = es.get(f) or as_.get(f)
            total = tuple(sum(col) % WRAP for col in zip(*sites.values()))
            hint = [g for g in by_name[f[2]] if g != f and g in other]
            more = f"; the other file has {', '.join(short_fn(g) for g in hint)}" if hint else ""
            d.add('function', f"{label}function {short_fn(f)} only in {side} "
                              f"(self {cost_str(ev, total)}, {len(sites)} positions){more}")
            continue
        a, b = es[f], as_[f]
        for s in sorted(set(a) | set(b), key=lambda s: (s[0], s[1:])):
            x, y = a.get(s), b.get(s)
            zero = tuple(0 for _ in ev)
            only = '' if x and y else f", only in {'expected' if x else 'actual'}"
            if x != y:
                d.add('self', f"{label}{short_fn(f)}: self cost at {fmt_pos(s, proj.positions)}: "
                              f"{cost_diff(ev, x or zero, y or zero)} (expected vs actual{only})")

    # Call arcs.
    def arc(k):
        caller, site, callee = k
        return f"call {short_fn(caller)} -> {short_fn(callee)} at {fmt_pos(site, proj.positions)}"
    for k in sorted(set(ec) | set(ac), key=lambda k: (k[0][2], k[2][2], k[0], k[2], k[1])):
        x, y = ec.get(k), ac.get(k)
        if x is None or y is None:
            c = x or y
            d.add('call', f"{label}{arc(k)} only in {'expected' if y is None else 'actual'} "
                          f"(calls={c[0]}, inclusive {cost_str(ev, c[1])})")
            continue
        if x[0] != y[0]:
            d.add('call', f"{label}{arc(k)}: calls={x[0]} expected, calls={y[0]} actual")
        if x[1] != y[1]:
            d.add('call', f"{label}{arc(k)}: inclusive cost {cost_diff(ev, x[1], y[1])} "
                          f"(expected vs actual)")

    # Jumps.
    def jump(k):
        f, site, kind, tfn, target = k
        to = '' if tfn == f else f" into {short_fn(tfn)}"
        return (f"{kind} in {short_fn(f)} from {fmt_pos(site, proj.positions)} to "
                f"{fmt_pos(target, proj.positions)}{to}")
    for k in sorted(set(ej) | set(aj), key=lambda k: (k[0][2], k[0], k[1], k[2], k[3], k[4])):
        x, y = ej.get(k), aj.get(k)
        if x != y:
            fmt = (lambda c: 'absent' if c is None else '/'.join(map(str, c)))
            d.add('jump', f"{label}{jump(k)}: {fmt(x)} expected, {fmt(y)} actual")


def print_normal_form(path, parts, fn_filter):
    for p in parts:
        proj = Projection(p, p, None)
        print(f"== {path} part {p.index}: part={p.number} trigger={p.trigger!r} thread={p.thread}")
        print(f"events: {' '.join(p.events)}")
        print(f"positions: {' '.join(p.positions_or_default())}")
        print(f"summary: {' '.join(map(str, p.summary or []))}")
        print(f"totals: {' '.join(map(str, p.totals or []))}")
        selfc, calls, jumps = normal_form(p, proj, 0, fn_filter)
        for f in sorted(selfc, key=lambda f: (f[2], f[0], f[1])):
            for s in sorted(selfc[f], key=lambda s: (s[0], s[1:])):
                print(f"self {short_fn(f)} {fmt_pos(s, proj.positions)}: "
                      f"{' '.join(map(str, selfc[f][s]))}")
        for k in sorted(calls, key=lambda k: (k[0][2], k[2][2], k[0], k[2], k[1])):
            print(f"call {short_fn(k[0])} -> {short_fn(k[2])} at "
                  f"{fmt_pos(k[1], proj.positions)}: calls={calls[k][0]} "
                  f"{' '.join(map(str, calls[k][1]))}")
        for k in sorted(jumps, key=lambda k: (k[0][2], k[0], k[1], k[2], k[3], k[4])):
            print(f"{k[2]} {short_fn(k[0])} {fmt_pos(k[1], proj.positions)} -> "
                  f"{short_fn(k[3])} {fmt_pos(k[4], proj.positions)}: "
                  f"{'/'.join(map(str, jumps[k]))}")


def ambiguity_notes(reader, examples):
    """Where the readers and Callgrind's writer read the file differently."""
    if not reader.ambiguous:
        return []
    how = "as Callgrind's writer means it" if reader.writer else "as the readers read it"
    out = [f"note: {reader.path} (creator: {reader.creator}) was read {how} "
           f"(--semantics=); {len(reader.ambiguous)} lines read otherwise by "
           f"{'the readers' if reader.writer else 'Callgrind'}:"]
    for lineno, what, readers, callgrind in reader.ambiguous[:examples]:
        out.append(f"  line {lineno}: {what}: readers {readers}, Callgrind {callgrind}")
    return out


def usage(msg):
    sys.stderr.write(f"callgrind_compare.py: {msg}\n"
                     "usage: callgrind_compare.py [--max-diffs=N] [--events=A,B] "
                     "[--functions=REGEX] [--semantics=auto|callgrind|readers] "
                     "[--normal-form] EXPECTED ACTUAL\n")
    sys.exit(2)


def main(argv):
    limit, only_events, fn_filter, normal, semantics = 40, None, None, False, 'auto'
    files = []
    for a in argv:
        if a.startswith('--max-diffs='):
            try:
                limit = int(a.split('=', 1)[1])
            except ValueError:
                usage(f"bad {a}")
        elif a.startswith('--events='):
            only_events = [e for e in a.split('=', 1)[1].split(',') if e]
            if not only_events:
                usage("--events= needs event names")
        elif a.startswith('--functions='):
            try:
                fn_filter = re.compile(a.split('=', 1)[1])
            except re.error as e:
                usage(f"bad --functions regex: {e}")
        elif a == '--normal-form':
            normal = True
        elif a.startswith('--semantics='):
            semantics = a.split('=', 1)[1]
            if semantics not in ('auto', 'callgrind', 'readers'):
                usage(f"bad {a}")
        elif a.startswith('--'):
            usage(f"unknown option {a}")
        else:
            files.append(a)
    if normal:
        if not files:
            usage("no file")
    elif len(files) != 2:
        usage("two files are compared")
    try:
        readers = [Reader(f, semantics) for f in files]
        parsed = [r.read() for r in readers]
    except Invalid as e:
        sys.stderr.write(f"callgrind_compare.py: {e}\n")
        return 2
    if only_events:
        for f, parts in zip(files, parsed):
            for p in parts:
                missing = [e for e in only_events if e not in p.events]
                if missing:
                    sys.stderr.write(f"callgrind_compare.py: {f}: no event {', '.join(missing)}\n")
                    return 2
    if normal:
        for r, parts in zip(readers, parsed):
            print_normal_form(r.path, parts, fn_filter)
            for line in ambiguity_notes(r, 1000):
                print(line)
        return 0
    exp, act = parsed
    d = Diffs()
    if len(exp) != len(act):
        d.add('parts', f"{len(exp)} parts expected, {len(act)} actual (the first "
                       f"{min(len(exp), len(act))} compared)")
    for i, (e, a) in enumerate(zip(exp, act)):
        label = f"part {i + 1}: " if max(len(exp), len(act)) > 1 else ""
        compare_part(e, a, label, d, only_events, fn_filter)
    if not d.lines:
        return 0
    print(f"{files[0]} and {files[1]} differ: {len(d.lines)} differences "
          f"({', '.join(f'{n} {k}' for k, n in sorted(d.kinds.items()))})")
    for _, line in d.lines[:limit]:
        print(f"  {line}")
    if len(d.lines) > limit:
        rest = defaultdict(int)
        for kind, _ in d.lines[limit:]:
            rest[kind] += 1
        print(f"  ... and {len(d.lines) - limit} more "
              f"({', '.join(f'{n} {k}' for k, n in sorted(rest.items()))})")
    for r in readers:
        for line in ambiguity_notes(r, 3):
            print(line)
    return 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
