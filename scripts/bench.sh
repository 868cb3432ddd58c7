#!/bin/sh
# make bench: speed and size of recording and simulation against Cachegrind,
# on scripts/bench.c (about 400 million instructions) and, for the
# comparisons with Valgrind, a second program (gzip -6 of 2.7 MB of text,
# about 740 million), of cgtrace report
# against cg_annotate on a 50 MB cachegrind.out (scripts/big_cgout.py), and
# of decoding the same program's (synthesized) Intel PT trace.
# Valgrind 3.19's cg_annotate is the installed one; set BENCH_CG_ANNOTATE to
# the newest (a Python script) to time that too.
#
# The runs are interleaved -- native, Cachegrind, record, simulate, then
# again -- and each time is the median of its rounds (BENCH_RUNS, default
# 5), so that a machine whose speed drifts (a shared VM) affects all alike.
# Peak memory is the largest resident set of any process of a run (for
# record: the Valgrind tool process or cgtrace itself).
set -eu
cd "$(dirname "$0")/.."
B=build/bench
mkdir -p "$B"
cc -O2 -g -o "$B/bench" scripts/bench.c
CFG="--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"
# The second program's input.
seq 1 400000 > "$B/gzip.in"
mkdir -p "$B/report" "$B/sweep"
if [ ! -e "$B/report/big.cgout" ]; then
	(cd "$B/report" && python3 ../../../scripts/big_cgout.py big.cgout 50000000)
fi
# Sources older than the data file, so that no warning is printed.
touch -d 2020-01-01 "$B"/report/src/*
touch "$B/report/big.cgout"

python3 - "${BENCH_RUNS:-5}" "$B" "$CFG" "${BENCH_CG_ANNOTATE:-}" <<'EOF'
import os, statistics, subprocess, sys, time

runs, b, cfg, newest = int(sys.argv[1]), sys.argv[2], sys.argv[3].split(), sys.argv[4]
trace, cg_out, ct_out = f"{b}/trace.zst", f"{b}/cachegrind.out", f"{b}/cgtrace.out"
cgtrace, report_dir = os.path.abspath("cgtrace"), f"{b}/report"
commands = {
    "native": [f"{b}/bench"],
    "cachegrind": ["valgrind", "--tool=cachegrind", "--vex-guest-chase=no", "--cache-sim=yes", "--branch-sim=yes", *cfg,
                   f"--cachegrind-out-file={cg_out}", f"{b}/bench"],
    "record": [cgtrace, "record", "-q", "-o", trace, "--", f"{b}/bench"],
    "simulate": [cgtrace, "simulate", "-q", "--branch-sim=yes", *cfg, "-o", ct_out, trace],
    # The hierarchy engine: one configuration with an L2, and sweeps.
    "simulate --L2": [cgtrace, "simulate", "-q", "--branch-sim=yes", *cfg, "--L2=262144,8,64",
                      "-o", f"{b}/l2.out", trace],
    "sweep 16": [cgtrace, "simulate", "-q", "--branch-sim=yes", "--I1=32768,8,64",
                 "--D1=8k..64k,8,64", "--LL=2M..16M,16,64", "-o", f"{b}/sweep/16.%c", trace],
    "D1 curve 45": [cgtrace, "simulate", "-q", "--branch-sim=yes", "--I1=32768,8,64",
                    "--D1=4k..1M,1..16,64", "--LL=8388608,16,64", "-o", f"{b}/sweep/curve.%c", trace],
    # Call graphs: Callgrind and the replay, with the same simulation.
    "callgrind": ["valgrind", "--tool=callgrind", "--cache-sim=yes", "--branch-sim=yes", *cfg,
                  f"--callgrind-out-file={b}/callgrind.out", f"{b}/bench"],
    "simulate --tool=callgrind": [cgtrace, "simulate", "-q", "--tool=callgrind", "--cache-sim=yes",
                                  "--branch-sim=yes", *cfg, f"--callgrind-out-file={b}/cgtrace.callgrind.out",
                                  trace],
    # Callgrind's write-back and prefetch models, in both profiles.
    "replay wb+hwpref": [cgtrace, "simulate", "-q", "--tool=callgrind", "--cache-sim=yes", "--branch-sim=yes",
                         "--simulate-wb=yes", "--simulate-hwpref=yes", *cfg,
                         f"--callgrind-out-file={b}/cgtrace.wb.callgrind.out", trace],
    "simulate wb+hwpref": [cgtrace, "simulate", "-q", "--branch-sim=yes", "--simulate-wb=yes",
                           "--simulate-hwpref=yes", *cfg, "-o", f"{b}/wb.out", trace],
    # Callgrind's cache use, and the replay's: Callgrind's attribution and
    # the inclusive one.
    "callgrind cacheuse": ["valgrind", "--tool=callgrind", "--cacheuse=yes", "--branch-sim=yes", *cfg,
                           f"--callgrind-out-file={b}/callgrind.use.out", f"{b}/bench"],
    "replay cacheuse": [cgtrace, "simulate", "-q", "--tool=callgrind", "--cacheuse=yes",
                        "--cacheuse-inclusive=no", "--branch-sim=yes", *cfg,
                        f"--callgrind-out-file={b}/cgtrace.use.out", trace],
    "replay cacheuse inclusive": [cgtrace, "simulate", "-q", "--tool=callgrind", "--cacheuse=yes",
                                  "--branch-sim=yes", *cfg,
                                  f"--callgrind-out-file={b}/cgtrace.useinc.out", trace],
    "simulate cacheuse": [cgtrace, "simulate", "-q", "--cacheuse=yes", "--branch-sim=yes", *cfg,
                          "-o", f"{b}/use.out", trace],
    "cg_annotate": ["cg_annotate", "big.cgout"],
    "report": [cgtrace, "report", "big.cgout"],
}
# The second program: what a user would run instead, and the replays.
gzip_cmd, gzip_trace = ["gzip", "-6", "-c", f"{b}/gzip.in"], f"{b}/gzip.zst"
second = {
    "cachegrind": ["valgrind", "--tool=cachegrind", "--vex-guest-chase=no", "--cache-sim=yes",
                   "--branch-sim=yes", *cfg, f"--cachegrind-out-file={b}/gzip.cachegrind.out", *gzip_cmd],
    "simulate": [cgtrace, "simulate", "-q", "--branch-sim=yes", *cfg, "-o", f"{b}/gzip.out", gzip_trace],
    "callgrind": ["valgrind", "--tool=callgrind", "--cache-sim=yes", "--branch-sim=yes", *cfg,
                  f"--callgrind-out-file={b}/gzip.callgrind.out", *gzip_cmd],
    "simulate --tool=callgrind": [cgtrace, "simulate", "-q", "--tool=callgrind", "--cache-sim=yes",
                                  "--branch-sim=yes", *cfg,
                                  f"--callgrind-out-file={b}/gzip.cgtrace.callgrind.out", gzip_trace],
    "replay wb+hwpref": [cgtrace, "simulate", "-q", "--tool=callgrind", "--cache-sim=yes",
                         "--branch-sim=yes", "--simulate-wb=yes", "--simulate-hwpref=yes", *cfg,
                         f"--callgrind-out-file={b}/gzip.wb.callgrind.out", gzip_trace],
    "callgrind cacheuse": ["valgrind", "--tool=callgrind", "--cacheuse=yes", "--branch-sim=yes", *cfg,
                           f"--callgrind-out-file={b}/gzip.callgrind.use.out", *gzip_cmd],
    "replay cacheuse": [cgtrace, "simulate", "-q", "--tool=callgrind", "--cacheuse=yes",
                        "--cacheuse-inclusive=no", "--branch-sim=yes", *cfg,
                        f"--callgrind-out-file={b}/gzip.use.out", gzip_trace],
    "replay cacheuse inclusive": [cgtrace, "simulate", "-q", "--tool=callgrind", "--cacheuse=yes",
                                  "--branch-sim=yes", *cfg,
                                  f"--callgrind-out-file={b}/gzip.useinc.out", gzip_trace],
}
for name, cmd in second.items():
    commands["gzip: " + name] = cmd
if newest:
    commands["newest cg_annotate"] = ["python3", os.path.abspath(newest), "big.cgout"]
in_report_dir = ("cg_annotate", "report", "newest cg_annotate")
times, peak = {}, {}

def measure(cmd, cwd=None):
    """Runs cmd, output discarded: its time and peak memory (KB)."""
    before = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_RDWR)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        if cwd:
            os.chdir(cwd)
        os.execvp(cmd[0], cmd)
    _, status, usage = os.wait4(pid, 0)
    if status != 0:
        sys.exit(f"bench: {' '.join(cmd)} failed")
    # wait4's ru_maxrss: the largest of the process and its waited-for
    # descendants (Valgrind under cgtrace record).
    return time.perf_counter() - before, usage.ru_maxrss

def run(name):
    elapsed, rss = measure(commands[name], report_dir if name in in_report_dir else None)
    times.setdefault(name, []).append(elapsed)
    peak[name] = max(peak.get(name, 0), rss)

# The second program's trace, recorded once (not timed) the way its
# Valgrind runs start: their environment, and with it the stack's layout
# and the program's path through ld.so, is the recording's ("_", which a
# shell sets to the command it runs, differs otherwise).
measure([cgtrace, "record", "-q", "-o", gzip_trace, "--", *gzip_cmd])
for _ in range(runs):
    for name in commands:
        run(name)
best = {name: statistics.median(t) for name, t in times.items()}

ir = int(open(cg_out).read().split("summary: ")[1].split()[0])
size = os.path.getsize(trace)
same = open(cg_out, "rb").read() == open(ct_out, "rb").read()
cg = best["cachegrind"]
print(f"benchmark: scripts/bench.c, {ir:,} instructions; caches {' '.join(cfg)};")
print(f"median of {runs} interleaved rounds")
print(f"{'native':36} {best['native']:6.2f} s")
print(f"{'cachegrind --branch-sim=yes':36} {cg:6.2f} s {'':17} peak {peak['cachegrind'] / 1024:4.0f} MB")
for name, label in (("record", "cgtrace record"), ("simulate", "cgtrace simulate --branch-sim=yes")):
    print(f"{label:36} {best[name]:6.2f} s  {best[name] / cg:5.2f} x cachegrind peak "
          f"{peak[name] / 1024:4.0f} MB")
print(f"{'simulate throughput':36} {ir / best['simulate'] / 1e6:6.0f} M instructions/s")
for name, label in (("simulate --L2", "simulate with --L2=256k (1 config)"),
                    ("sweep 16", "sweep: 4 D1 x 4 LL (16 configs)"),
                    ("D1 curve 45", "sweep: D1 4k..1M x 1..16 (45)")):
    print(f"{label:36} {best[name]:6.2f} s  {best[name] / best['simulate']:5.2f} x simulate  "
          f"peak {peak[name] / 1024:4.0f} MB")
clg = best["callgrind"]
print(f"{'callgrind --cache-sim --branch-sim':36} {clg:6.2f} s {'':17} peak {peak['callgrind'] / 1024:4.0f} MB")
print(f"{'simulate --tool=callgrind (same)':36} {best['simulate --tool=callgrind']:6.2f} s  "
      f"{best['simulate --tool=callgrind'] / clg:5.2f} x callgrind  "
      f"peak {peak['simulate --tool=callgrind'] / 1024:4.0f} MB")
agree = subprocess.run(["python3", "tests/tools/callgrind_compare.py", f"{b}/callgrind.out",
                        f"{b}/cgtrace.callgrind.out"], capture_output=True, text=True)
print(f"simulate --tool=callgrind's profile is Callgrind's: "
      f"{'yes' if agree.returncode == 0 else 'NO: ' + agree.stdout.splitlines()[0] if agree.stdout else 'NO'}")
replay = best["simulate --tool=callgrind"]
ratio = best["replay wb+hwpref"] / replay
print(f"{'the replay, --simulate-wb --simulate-hwpref':36} {best['replay wb+hwpref']:6.2f} s  {ratio:5.2f} x "
      f"the replay without them (target 1.3 x: {'holds' if ratio <= 1.3 else 'NOT MET'})  "
      f"peak {peak['replay wb+hwpref'] / 1024:4.0f} MB")
print(f"{'simulate, --simulate-wb --simulate-hwpref':36} {best['simulate wb+hwpref']:6.2f} s  "
      f"{best['simulate wb+hwpref'] / best['simulate']:5.2f} x simulate  "
      f"peak {peak['simulate wb+hwpref'] / 1024:4.0f} MB")
clu = best["callgrind cacheuse"]
print(f"{'callgrind --cacheuse --branch-sim':36} {clu:6.2f} s {'':17} peak {peak['callgrind cacheuse'] / 1024:4.0f} MB")
ratio = best["replay cacheuse"] / clu
print(f"{'the replay, --cacheuse (self)':36} {best['replay cacheuse']:6.2f} s  {ratio:5.2f} x callgrind "
      f"(target 0.5 x: {'holds' if ratio <= 0.5 else 'NOT MET'})  peak {peak['replay cacheuse'] / 1024:4.0f} MB")
print(f"{'the replay, --cacheuse (inclusive)':36} {best['replay cacheuse inclusive']:6.2f} s  "
      f"{best['replay cacheuse inclusive'] / best['replay cacheuse']:5.2f} x self  "
      f"peak {peak['replay cacheuse inclusive'] / 1024:4.0f} MB")
print(f"{'simulate --cacheuse (per line)':36} {best['simulate cacheuse']:6.2f} s  "
      f"{best['simulate cacheuse'] / clu:5.2f} x callgrind  peak {peak['simulate cacheuse'] / 1024:4.0f} MB")
# (ld.so's start parses LD_PRELOAD with a table on the stack: those two
# functions' use differs from one Callgrind run to the next)
agree = subprocess.run(["python3", "tests/tools/callgrind_compare.py",
                        "--functions=^(?!(strcspn|handle_preload_list)$)", f"{b}/callgrind.use.out",
                        f"{b}/cgtrace.use.out"], capture_output=True, text=True)
print(f"the replay's cache use is Callgrind's, function by function: "
      f"{'yes' if agree.returncode == 0 else 'NO: ' + agree.stdout.splitlines()[0] if agree.stdout else 'NO'}")
print(f"{'trace size':36} {size / 1e6:6.1f} MB, {size / ir:.3f} bytes/instruction")
print(f"simulate's cachegrind.out identical to Cachegrind's: {'yes' if same else 'NO'}")

# The second program: the comparisons with Valgrind, and the profiles'
# agreement.
g = {name: best["gzip: " + name] for name in second}
gpeak = {name: peak["gzip: " + name] for name in second}
gir = int(open(f"{b}/gzip.cachegrind.out").read().split("summary: ")[1].split()[0])
print(f"second program: gzip -6 of 2.7 MB of text (seq 1 400000), {gir:,} instructions")
print(f"{'cachegrind --branch-sim=yes':36} {g['cachegrind']:6.2f} s {'':17} peak {gpeak['cachegrind'] / 1024:4.0f} MB")
print(f"{'cgtrace simulate --branch-sim=yes':36} {g['simulate']:6.2f} s  {g['simulate'] / g['cachegrind']:5.2f} x cachegrind "
      f"peak {gpeak['simulate'] / 1024:4.0f} MB")
print(f"{'callgrind --cache-sim --branch-sim':36} {g['callgrind']:6.2f} s {'':17} peak {gpeak['callgrind'] / 1024:4.0f} MB")
print(f"{'simulate --tool=callgrind (same)':36} {g['simulate --tool=callgrind']:6.2f} s  "
      f"{g['simulate --tool=callgrind'] / g['callgrind']:5.2f} x callgrind  "
      f"peak {gpeak['simulate --tool=callgrind'] / 1024:4.0f} MB")
ratio = g["replay wb+hwpref"] / g["simulate --tool=callgrind"]
print(f"{'the replay, --simulate-wb --simulate-hwpref':36} {g['replay wb+hwpref']:6.2f} s  {ratio:5.2f} x "
      f"the replay without them (target 1.3 x: {'holds' if ratio <= 1.3 else 'NOT MET'})")
print(f"{'callgrind --cacheuse --branch-sim':36} {g['callgrind cacheuse']:6.2f} s")
ratio = g["replay cacheuse"] / g["callgrind cacheuse"]
print(f"{'the replay, --cacheuse (self)':36} {g['replay cacheuse']:6.2f} s  {ratio:5.2f} x callgrind "
      f"(target 0.5 x: {'holds' if ratio <= 0.5 else 'NOT MET'})  peak {gpeak['replay cacheuse'] / 1024:4.0f} MB")
print(f"{'the replay, --cacheuse (inclusive)':36} {g['replay cacheuse inclusive']:6.2f} s  "
      f"{g['replay cacheuse inclusive'] / g['replay cacheuse']:5.2f} x self")
gsame = open(f"{b}/gzip.cachegrind.out", "rb").read() == open(f"{b}/gzip.out", "rb").read()
print(f"gzip: simulate's cachegrind.out identical to Cachegrind's: {'yes' if gsame else 'NO'}")
agree = subprocess.run(["python3", "tests/tools/callgrind_compare.py", f"{b}/gzip.callgrind.out",
                        f"{b}/gzip.cgtrace.callgrind.out"], capture_output=True, text=True)
print(f"gzip: simulate --tool=callgrind's profile is Callgrind's: "
      f"{'yes' if agree.returncode == 0 else 'NO: ' + agree.stdout.splitlines()[0] if agree.stdout else 'NO'}")
size = os.path.getsize(f"{report_dir}/big.cgout")
print(f"report: a {size / 1e6:.0f} MB cachegrind.out (scripts/big_cgout.py)")
for name in ("cg_annotate", "newest cg_annotate"):
    if name in best:
        label = name + (" (Valgrind 3.19)" if name == "cg_annotate" else "")
        print(f"{label:36} {best[name]:6.2f} s {'':17} peak {peak[name] / 1024:4.0f} MB")
for name in ("cg_annotate", "newest cg_annotate"):
    if name in best:
        print(f"{'cgtrace report':36} {best['report']:6.2f} s  {best['report'] / best[name]:5.2f} x {name:11} "
              f"peak {peak['report'] / 1024:4.0f} MB")

# Intel PT: the benchmark's trace turned into the PT trace the pt recorder
# would have written (tests/pt/pt-synth, one memory sample per 1000
# accesses), decoded once by cgtrace (both passes: placing the samples,
# writing the blocks), and the stored decode simulated.
pt, decoded = f"{b}/pt.zst", f"{b}/pt.decoded.zst"
measure(["build/tests/pt/pt-synth", trace, pt, f"{b}/pt.collapsed.zst"])
if os.path.exists(decoded):
    os.unlink(decoded)
decode, decode_peak = measure([cgtrace, "dump", "--limit", "1", pt])
replay, replay_peak = measure([cgtrace, "simulate", "-q", "--branch-sim=yes", *cfg, "-o",
                               f"{b}/pt.out", pt])
info = subprocess.run([cgtrace, "info", pt], capture_output=True, text=True).stdout
insns = int(next(l for l in info.splitlines() if "instructions decoded" in l).split()[2]
            .replace(",", ""))
size = os.path.getsize(pt)
print(f"intel pt (synthesized from the benchmark's trace): {insns:,} instructions, "
      f"{size / 1e6:.1f} MB, {size / insns:.3f} bytes/instruction")
print(f"{'cgtrace: decode once, stored':36} {decode:6.2f} s  {insns / decode / 1e6:5.1f} M instructions/s "
      f"peak {decode_peak / 1024:4.0f} MB")
print(f"{'cgtrace simulate of the decode':36} {replay:6.2f} s  {insns / replay / 1e6:5.1f} M instructions/s "
      f"peak {replay_peak / 1024:4.0f} MB")
EOF
