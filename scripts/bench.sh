#!/bin/sh
# make bench: speed and size of recording and simulation against Cachegrind,
# on scripts/bench.c (about 400 million instructions).
#
# The runs are interleaved -- native, Cachegrind, record, simulate, then
# again -- and each time is the best of its rounds (BENCH_RUNS, default 5),
# so that a machine whose speed drifts (a shared VM) affects all alike.
# Peak memory is the largest resident set of any process of a run (for
# record: the Valgrind tool process or cgtrace itself).
set -eu
cd "$(dirname "$0")/.."
B=build/bench
mkdir -p "$B"
cc -O2 -g -o "$B/bench" scripts/bench.c
CFG="--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"

python3 - "${BENCH_RUNS:-5}" "$B" "$CFG" <<'EOF'
import os, sys, time

runs, b, cfg = int(sys.argv[1]), sys.argv[2], sys.argv[3].split()
trace, cg_out, ct_out = f"{b}/trace.zst", f"{b}/cachegrind.out", f"{b}/cgtrace.out"
commands = {
    "native": [f"{b}/bench"],
    "cachegrind": ["valgrind", "--tool=cachegrind", "--cache-sim=yes", "--branch-sim=yes", *cfg,
                   f"--cachegrind-out-file={cg_out}", f"{b}/bench"],
    "record": ["./cgtrace", "record", "-q", "-o", trace, "--", f"{b}/bench"],
    "simulate": ["./cgtrace", "simulate", "-q", "--branch-sim=yes", *cfg, "-o", ct_out, trace],
}
best, peak = {}, {}

def run(name):
    before = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_RDWR)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.execvp(commands[name][0], commands[name])
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.perf_counter() - before
    if status != 0:
        sys.exit(f"bench: {' '.join(commands[name])} failed")
    best[name] = min(best.get(name, elapsed), elapsed)
    # wait4's ru_maxrss: the largest of the process and its waited-for
    # descendants (Valgrind under cgtrace record).
    peak[name] = max(peak.get(name, 0), usage.ru_maxrss)

for _ in range(runs):
    for name in commands:
        run(name)

ir = int(open(cg_out).read().split("summary: ")[1].split()[0])
size = os.path.getsize(trace)
same = open(cg_out, "rb").read() == open(ct_out, "rb").read()
cg = best["cachegrind"]
print(f"benchmark: scripts/bench.c, {ir:,} instructions; caches {' '.join(cfg)};")
print(f"best of {runs} interleaved rounds")
print(f"{'native':36} {best['native']:6.2f} s")
print(f"{'cachegrind --branch-sim=yes':36} {cg:6.2f} s {'':17} peak {peak['cachegrind'] / 1024:4.0f} MB")
for name, label in (("record", "cgtrace record"), ("simulate", "cgtrace simulate --branch-sim=yes")):
    print(f"{label:36} {best[name]:6.2f} s  {best[name] / cg:5.2f} x cachegrind peak "
          f"{peak[name] / 1024:4.0f} MB")
print(f"{'simulate throughput':36} {ir / best['simulate'] / 1e6:6.0f} M instructions/s")
print(f"{'trace size':36} {size / 1e6:6.1f} MB, {size / ir:.3f} bytes/instruction")
print(f"simulate's cachegrind.out identical to Cachegrind's: {'yes' if same else 'NO'}")
EOF
