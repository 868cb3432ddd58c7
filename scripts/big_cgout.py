# make bench's input for cgtrace report: a synthetic cachegrind.out of
# TARGET bytes -- thousands of files of 20 functions of 30 lines, 13 events,
# a few files hot -- and, under src/, the sources of some of them, hot ones
# included.  Usage: big_cgout.py OUT TARGET (run where src/ should be).
import os, random, sys
random.seed(3)
out, target = sys.argv[1], int(sys.argv[2])
os.makedirs("src", exist_ok=True)
events = "Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw Bc Bcm Bi Bim".split()
total = [0] * 13
size = 0
with open(out, "w") as f:
    f.write("desc: I1 cache:         32768 B, 64 B, 8-way associative\n")
    f.write("cmd: ./big\nevents: " + " ".join(events) + "\n")
    i = 0
    while size < target:
        name = f"src/file{i}.c"
        if i % 50 == 0 or i < 10:
            with open(name, "w") as s:
                s.write("".join(f"int line{n} = {n};\n" for n in range(1, 2001)))
        lines = [f"fl={name}\n"]
        for fn in range(20):
            lines.append(f"fn=func{i}_{fn}\n")
            for line in sorted(random.sample(range(1, 2000), 30)):
                cc = [random.randrange(10**random.randrange(1, 7)) * max(1, 2000 // (i + 1)) for _ in range(13)]
                total = [a + b for a, b in zip(total, cc)]
                lines.append(f"{line} " + " ".join(map(str, cc)) + "\n")
        chunk = "".join(lines)
        f.write(chunk)
        size += len(chunk)
        i += 1
    f.write("summary: " + " ".join(map(str, total)) + "\n")
