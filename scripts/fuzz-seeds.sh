#!/bin/sh
# Makes the fuzzers' seeds (make fuzz) from what the tests build, in
# OUT/TARGET/: traces recorded by ./cgtrace record, PT traces synthesized
# from them by pt-synth, the cachegrind.out files of tests/report/, the
# test programs' ELF files; and the committed corpus (tests/fuzz/corpus/).
# Traces are cut to their first records (and END) to stay small: a fuzzer
# runs faster on small inputs, and mutates what is there.
#
#   scripts/fuzz-seeds.sh OUT
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$1
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=$OUT/work
PROGS=$ROOT/build/tests/programs
rm -rf "$WORK"
mkdir -p "$WORK" "$OUT/trace_file" "$OUT/trace_stream" "$OUT/events" "$OUT/cgout" "$OUT/pt" "$OUT/elf"

# trim STREAM OUT BYTES [SEGMENT]: the stream header, the records that fit
# in BYTES, and the END record; SEGMENT: a second segment begins halfway
# (fuzz.h's "@@SEGMT@" and a SEGMENT record), as the writer begins one.
trim() {
	python3 - "$@" <<'PY'
import sys
src, out, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
segment = len(sys.argv) > 4
data = open(src, 'rb').read()
def varint(p):
    v = s = 0
    while True:
        b = data[p]; p += 1
        v |= (b & 0x7f) << s; s += 7
        if b < 0x80:
            return v, p
p, recs = 16, []
while p < len(data):
    t = data[p]
    n, q = varint(p + 1)
    recs.append((t, data[p:q + n]))
    p = q + n
keep, size = [], 0
for t, r in recs:
    if t == 6:
        continue
    if size + len(r) > limit:
        break
    keep.append((t, r))
    size += len(r)
if segment:
    # after an EVENTS record in the middle: the deltas restart there
    ev = [i for i, (t, _) in enumerate(keep) if t == 5]
    if ev:
        i = ev[len(ev) // 2] + 1
        keep.insert(i, (11, b'@@SEGMT@' + bytes([11, 1, 0])))
end = [r for t, r in recs if t == 6]
with open(out, 'wb') as f:
    f.write(data[:16] + b''.join(r for _, r in keep) + b''.join(end))
PY
}

numbers() {
	python3 -c "
import random
random.seed(7)
print(''.join('%d\\n' % random.randrange(10**9) for _ in range(200)), end='')" > "$1"
}

cd "$WORK"
numbers numbers.txt
record() {
	name=$1
	shift
	env -i PATH=/usr/bin:/bin HOME="$WORK" LANG=C "$ROOT/cgtrace" record -q -o "$name.zst" -- "$@" \
		>/dev/null 2>&1 </dev/null || true
	[ -s "$name.zst" ] || { echo "fuzz-seeds: recording $name failed" >&2; exit 1; }
	zstd -q -dc "$name.zst" > "$name.stream"
}
record loops "$PROGS/loops" 0
record threads "$PROGS/threads"
record avx2 "$PROGS/avx2"
record strings "$PROGS/strings" numbers.txt
for name in loops threads; do
	"$ROOT/build/tests/pt/pt-synth" --aux-chunk=2048 --mem-period=20 "$name.zst" "$name.pt.zst" \
		"$name.col.zst" 2>/dev/null
	zstd -q -dc "$name.pt.zst" > "$name.pt.stream"
done

for name in loops threads avx2 strings; do
	trim "$name.stream" "$OUT/trace_stream/$name" 12000
	trim "$name.stream" "$OUT/trace_stream/$name-segments" 24000 segment
	trim "$name.stream" "$OUT/events/$name" 30000
	trim "$name.stream" "$name.small" 12000
	zstd -q -c --check "$name.small" > "$OUT/trace_file/$name"
done
cp loops.zst "$OUT/trace_file/loops-whole"
for name in loops threads; do
	trim "$name.pt.stream" "$OUT/pt/$name" 16000
	trim "$name.pt.stream" "$OUT/trace_stream/$name.pt" 8000
	zstd -q -c --check "$OUT/pt/$name" > "$OUT/trace_file/$name.pt"
done
for f in "$ROOT"/tests/report/cases/*.cgout "$ROOT"/tests/report/golden/*.cgout; do
	cp "$f" "$OUT/cgout/$(basename "$f" .cgout)"
done
for p in loops threads recursion; do
	cp "$PROGS/$p" "$OUT/elf/$p"
done
# The committed seeds too (tests/fuzz/corpus/TARGET/).
for d in "$ROOT"/tests/fuzz/corpus/*/; do
	mkdir -p "$OUT/$(basename "$d")"
	cp "$d"* "$OUT/$(basename "$d")/"
done
rm -rf "$WORK"
for t in trace_file trace_stream events cgout pt elf cache_options archive; do
	echo "fuzz-seeds: $t: $(ls "$OUT/$t" | wc -l) seeds, $(du -sk "$OUT/$t" | cut -f1) KiB"
done
