#!/bin/sh
# make demo: record the bundled example once, then ask "what if the L1 data
# cache were bigger?" without running it again.
set -e
cd "$(dirname "$0")/.."
mkdir -p build/demo
cc -O1 -g -o build/demo/matrix examples/matrix.c
cd build/demo
rm -f matrix.zst cachegrind.out.small cachegrind.out.large
CACHES="--I1=32768,8,64 --LL=8388608,16,64"

echo "== cgtrace record -o matrix.zst -- ./matrix      (once)"
../../cgtrace record -o matrix.zst -- ./matrix
echo
echo "== cgtrace simulate --D1=32768,8,64 matrix.zst   (a 32 KiB L1 data cache)"
../../cgtrace simulate $CACHES --D1=32768,8,64 -o cachegrind.out.small matrix.zst
echo
echo "== cgtrace simulate --D1=131072,8,64 matrix.zst  (128 KiB: one column's lines fit)"
../../cgtrace simulate $CACHES --D1=131072,8,64 -o cachegrind.out.large matrix.zst
echo
echo "== D1 read misses per function, 32 KiB vs 128 KiB"
for f in cachegrind.out.small cachegrind.out.large; do
	awk -v file="$f" '/^events:/ { for (i = 2; i <= NF; i++) if ($i == "D1mr") col = i }
		/^fn=/ { fn = substr($0, 4) } /^[0-9]/ { m[fn] += $col }
		END { for (fn in m) if (m[fn] >= 1000) printf "  %-26s %-16s %10d\n", file, fn, m[fn] }' "$f"
done | sort -k2,2 -k1,1
