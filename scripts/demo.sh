#!/bin/sh
# make demo: record the bundled example once, ask "what if the L1 data cache
# were bigger?" without running it again, and read the answer line by line
# with cgtrace report.
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
echo "== cgtrace report --show=Dr,D1mr --sort=D1mr --threshold=1 cachegrind.out.small"
../../cgtrace report --show=Dr,D1mr --sort=D1mr --threshold=1 cachegrind.out.small
echo
echo "== cgtrace report --diff --show=D1mr --sort=D1mr --no-annotate cachegrind.out.large cachegrind.out.small"
echo "   (what the smaller cache costs: small minus large)"
../../cgtrace report --diff --show=D1mr --sort=D1mr --no-annotate cachegrind.out.large cachegrind.out.small
