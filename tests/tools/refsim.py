#!/usr/bin/env python3
"""A reference model of Cachegrind's cache hierarchy, to check cgtrace's.

It reads `cgtrace dump TRACE` on stdin and prints the totals of Cachegrind's
cache events: a line of event names, then a line of totals in that order,
comparable with the `summary:` line of a cachegrind.out.

    refsim.py --I1=S,A,L --D1=S,A,L [--L2=S,A,L] --LL=S,A,L
              [--I1-replacement=lru|fifo|plru ...] < dump.txt

It is deliberately independent of simulate/: written from Cachegrind's rules
(../shared/docs/cachegrind.md sections 1 and 2), as plainly as possible and
with no speed-up that could hide a mistake, so that an agreement between the
two means something.  What it models:

- A cache of S bytes, A ways, L-byte lines has S/L/A sets; a block number is
  addr >> log2(L), its set is block & (sets - 1), and the set stores full
  block numbers, every way starting as block 0 (block 0 hits when cold).
- A set is a list, most recently used first: a hit moves the block to the
  front, a miss inserts it there and drops the last (true LRU,
  write-allocate; no dirty bits, no write-backs, no inclusion).  With
  --<level>-replacement=fifo, the list is in the order the blocks came in:
  a hit leaves it as it is.  With plru (tree pseudo-LRU, ways a power of
  two), the set is a list of ways that never move, and a bit for each
  range of ways halved on the way down (the whole set, its halves, their
  halves ...) says which half the next victim is in: a hit or a fill of a
  way points every range holding it at the other half; a miss goes down
  the halves the bits say.  A cold set is as if way 0 had been used last
  (block 0's, which every way holds then: a block that several ways hold
  is the lowest way's).
- A reference of SIZE bytes at ADDR looks up block(ADDR) and, when it
  differs, block(ADDR+SIZE-1) too (both always, each updating LRU): one
  access, which misses if either does.
- Every instruction is one Ir and one fetch of its length through I1; R and
  M (read-modify-write: counted as one read) are Dr through D1, W is Dw
  through D1; a guarded access not made (R-, W-) is nothing.  Data sizes
  are clamped to the smallest line size of the hierarchy.
- A reference that misses its L1 is looked up, same address and size, at
  L2 when there is one; one that misses L2 (or its L1, without L2) at LL.
  Instructions and data share L2 and LL.  Order: lines as they come (one
  cache for all threads), in a line the fetch, then its data in order.
- Not modelled: line sizes above 128 with accesses that big (Cachegrind
  passes sizes as 8-bit values).
"""
import argparse
import sys


class Cache:
    def __init__(self, spec, replacement="lru"):
        size, assoc, line = (int(x) for x in spec.split(","))
        assert replacement in ("lru", "fifo", "plru"), "unknown replacement policy"
        self.fifo = replacement == "fifo"
        self.plru = replacement == "plru"
        assert not self.plru or assoc & (assoc - 1) == 0, "plru: ways not a power of two"
        self.assoc = assoc
        self.line = line
        self.line_bits = line.bit_length() - 1
        self.n_sets = size // line // assoc
        assert line == 1 << self.line_bits and self.n_sets * assoc * line == size
        assert self.n_sets & (self.n_sets - 1) == 0, "set count not a power of two"
        self.sets = [[0] * assoc for _ in range(self.n_sets)]
        # plru: per set, the bit of each range (lo, hi) of ways: 1 if the
        # next victim is in its upper half
        self.halves = [{} for _ in range(self.n_sets)]
        if self.plru:
            for halves in self.halves:
                self.plru_point_away(halves, 0)

    def plru_point_away(self, halves, way):
        lo, hi = 0, self.assoc
        while hi - lo > 1:
            mid = (lo + hi) // 2
            halves[(lo, hi)] = 1 if way < mid else 0
            lo, hi = (lo, mid) if way < mid else (mid, hi)

    def plru_lookup(self, block):
        s = block & (self.n_sets - 1)
        ways, halves = self.sets[s], self.halves[s]
        if block in ways:
            self.plru_point_away(halves, ways.index(block))
            return False
        lo, hi = 0, self.assoc
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if halves.get((lo, hi), 0) else (lo, mid)
        ways[lo] = block
        self.plru_point_away(halves, lo)
        return True

    def lookup(self, block):
        """True on a miss; the block becomes the set's most recently used."""
        if self.plru:
            return self.plru_lookup(block)
        ways = self.sets[block & (self.n_sets - 1)]
        if block in ways:
            if not self.fifo:
                ways.remove(block)
                ways.insert(0, block)
            return False
        ways.pop()
        ways.insert(0, block)
        return True

    def misses(self, addr, size):
        first = addr >> self.line_bits
        last = (addr + size - 1) >> self.line_bits
        assert last - first in (0, 1), "a reference over more than two lines"
        miss = self.lookup(first)
        if last != first:
            miss = self.lookup(last) or miss  # both are always looked up
        return miss


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for level in ("I1", "D1", "L2", "LL"):
        ap.add_argument("--" + level, required=level != "L2", metavar="S,A,L")
        ap.add_argument("--" + level + "-replacement", default="lru", choices=("lru", "fifo", "plru"))
    args = ap.parse_args()
    i1 = Cache(args.I1, args.I1_replacement)
    d1 = Cache(args.D1, args.D1_replacement)
    ll = Cache(args.LL, args.LL_replacement)
    l2 = Cache(args.L2, args.L2_replacement) if args.L2 else None
    min_line = min(c.line for c in (i1, d1, l2, ll) if c is not None)

    # Per kind of reference: the count and the misses at L1, L2 (if any), LL.
    counts = {kind: [0, 0, 0, 0] for kind in ("I", "Dr", "Dw")}

    def reference(kind, l1, addr, size):
        c = counts[kind]
        c[0] += 1
        if not l1.misses(addr, size):
            return
        c[1] += 1
        if l2 is not None:
            if not l2.misses(addr, size):
                return
            c[2] += 1
        if ll.misses(addr, size):
            c[3] += 1

    for line in sys.stdin:
        fields = line.split()
        if fields and fields[0] == "#":  # a client request or a signal
            continue
        if "->" in fields:  # how the block was left: nothing to simulate
            fields = fields[:fields.index("->")]
        if not fields:
            continue
        if not fields[0].startswith("T") or len(fields) % 2 != 1:
            sys.exit("refsim: expected 'T<thread> <address> <length> ...', got: " + line.rstrip())
        reference("I", i1, int(fields[1], 16), int(fields[2]))
        for kind, value in zip(fields[3::2], fields[4::2]):
            if kind in ("R", "M", "W"):
                addr, size = value.split(":")
                reference("Dw" if kind == "W" else "Dr", d1, int(addr, 16),
                          min(int(size), min_line))
            elif kind not in ("R-", "W-", "Bc", "Bi", "SP"):
                sys.exit("refsim: unknown access '%s' in: %s" % (kind, line.rstrip()))

    if l2 is None:
        names = "Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw"
        totals = [counts[k][i] for k in ("I", "Dr", "Dw") for i in (0, 1, 3)]
    else:
        names = "Ir I1mr I2mr ILmr Dr D1mr D2mr DLmr Dw D1mw D2mw DLmw"
        totals = [n for k in ("I", "Dr", "Dw") for n in counts[k]]
    print(names)
    print(" ".join(str(n) for n in totals))


if __name__ == "__main__":
    main()
