#!/bin/sh
# make demo: record the bundled example once, then look at it.
set -e
cd "$(dirname "$0")/.."
mkdir -p build/demo
cc -O1 -g -o build/demo/matrix examples/matrix.c
cd build/demo
rm -f matrix.zst
echo "== cgtrace record -o matrix.zst -- ./matrix"
../../cgtrace record -o matrix.zst -- ./matrix
echo
echo "== cgtrace info matrix.zst"
../../cgtrace info matrix.zst
