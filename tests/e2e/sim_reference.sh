# The simulator against an independent reference model of Cachegrind's
# caches (tests/tools/refsim.py, a plain LRU list per set): the totals of
# the cache events of real programs' traces, in small caches (where the
# replacement order matters), with two levels and with --L2.
source "$(dirname "$0")/../lib.sh"
plan 32

# refsim ARGS...: the reference model's event names and totals, on one
# line: "Ir I1mr ... = 9 3 ...".
refsim() { python3 "$ROOT/tests/tools/refsim.py" "$@" | sed 'N; s/\n/ = /'; }

# names_and_totals FILE: a cachegrind.out's event names and summary totals,
# the same way.
names_and_totals() {
	sed -n 's/^events: *//p; s/^summary: *//p' "$1" 2>/dev/null | sed 's/ *$//' | sed 'N; s/\n/ = /'
}

# The model itself, on a hand-made dump.  Caches (32-byte lines but LL's,
# so data accesses are clamped to 32 bytes): I1 2 sets x 2 ways; D1 2 sets
# x 1 way; L2 2 sets x 2 ways; LL 2 sets x 2 ways of 64 bytes.  A block is
# addr >> 5 (LL: >> 6), its set the block's lowest bit; every way starts
# holding block 0.  Per line, the references and their fate (I1/D1, L2, LL):
#  1 fetch 0x1000:4, block 80      miss   miss      miss 40   -> LL s0 [40 0]
#    R 0x8:4, block 0              hit (block 0 is there when cold)
#    W 0x2000:8, block 100         miss   miss      miss 80   -> LL s0 [80 40]
#                                  (D1 s0 [100], L2 s0 [100 80])
#  2 R 0x2040:4, block 102         miss   miss      miss 81   (L2 s0 [102 100])
#  3 R 0x2000:4, block 100         miss   hit, moved to the front: [100 102]
#  4 M 0x201c:8 (one read), blocks 100 and 101, straddling at 32 bytes:
#                   100 hits, 101 misses: one miss; L2 100 hit, 101 miss:
#                   one miss; LL 80 only (no straddle at 64): hit
#  5 R- and Bc: nothing
#  6 W 0x3000:40, clamped to 32 bytes: block 180 only (unclamped it would
#                   also bring 181 into D1 s1)
#                                  miss   miss      miss c0   -> LL s0 [c0 80]
#                                  (L2 s0 [180 100]: LRU dropped 102)
#  7 R 0x2020:4, block 101         hit (D1 s1 still holds 101)
#    R 0x2000:4, block 100         miss   hit (FIFO would have dropped 100)
#  8 fetch 0x101e:4, blocks 80 and 81: I1 80 hits, 81 misses: one miss;
#                   L2 s0 [100 180]: 80 misses, 81 misses: one miss;
#                   LL 40 (no straddle): misses (c0 evicted it at line 6)
#  9 fetch 0x2020:2, block 101     miss   hit: data and fetches share L2
#                                  (L2 s1 [101 81])
#    R 0x1020:4, block 81          miss   hit (had line 8 not looked up 81
#                   at L2 after 80 missed there, it would miss)
# 10 R 0x3008:4, block 180         miss   miss      hit c0 (LL s0 [40 c0]:
#                   had the L2 hits of lines 3, 4 and 7 gone on to LL, line 8
#                   would have dropped c0 instead of 80)
# Ir 10: I1mr 3, I2mr 2, ILmr 2; Dr 8 (lines 1, 2, 3, 4, 7, 7, 9, 10): D1mr 6
# (lines 2, 3, 4, 7, 9, 10), D2mr 3 (2, 4, 10), DLmr 1 (2); Dw 2: D1mw 2,
# D2mw 2, DLmw 2.
# Without L2, LL sees every L1 miss: 40 miss, 80 miss, 81 miss, 80 hit
# (line 3), 80 hit (4), c0 miss ([c0 80]), 80 hit (7: [80 c0]), 40 miss
# (8: LRU drops c0: [40 80]), 80 hit (9; FIFO would have dropped 80),
# 40 hit (9), c0 miss (10): ILmr 2, DLmr 2, DLmw 2.
cat > hand.txt <<'EOF'
T1 0x1000 4  R 0x8:4  W 0x2000:8
T1 0x1004 4  R 0x2040:4
T1 0x1008 4  R 0x2000:4
T1 0x100c 4  M 0x201c:8
T1 0x1010 4  R- :4  Bc taken
T2 0x1014 4  W 0x3000:40
T2 0x1018 4  R 0x2020:4  R 0x2000:4  Bi 0x1000
T1 0x101e 4
T1 0x2020 2  R 0x1020:4
T1 0x1024 4  R 0x3008:4
EOF
check_eq "refsim, by hand, with L2" \
	"Ir I1mr I2mr ILmr Dr D1mr D2mr DLmr Dw D1mw D2mw DLmw = 10 3 2 2 8 6 3 1 2 2 2 2" \
	"$(refsim --I1=128,2,32 --D1=64,1,32 --L2=128,2,32 --LL=256,2,64 < hand.txt)"
check_eq "refsim, by hand, without L2" \
	"Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw = 10 3 2 8 6 2 2 2 2" \
	"$(refsim --I1=128,2,32 --D1=64,1,32 --LL=256,2,64 < hand.txt)"

# Two levels: small caches; 32-byte lines (fetches straddle more often);
# a direct-mapped I1, a fully associative D1 and 128-byte LL lines; an LL
# of more ways than simulate/ll_model.h keeps in one lane.
two_level=(
	"--I1=1024,2,64 --D1=2048,2,64 --LL=16384,4,64"
	"--I1=2048,1,32 --D1=1024,16,64 --LL=32768,8,128"
	"--I1=4096,4,64 --D1=2048,4,32 --LL=24576,24,64"
)
# Three levels: L2 4-way; L2 direct-mapped; LL of bigger lines than L2.
three_level=(
	"--I1=1024,2,64 --D1=2048,2,64 --L2=8192,4,64 --LL=32768,8,64"
	"--I1=1024,2,64 --D1=2048,2,64 --L2=4096,1,64 --LL=32768,8,64"
	"--I1=2048,2,32 --D1=2048,2,64 --L2=8192,4,64 --LL=65536,8,128"
)

# Small runs (200,000 to 400,000 instructions, most of them the loader's):
# unaligned and straddling loads; random pointer chasing; AVX2 with guarded
# and 32-byte accesses; REP string instructions; an interpreter.
for prog in "straddle 1" "ptrchase 2000" "avx2 1" "strings 1" "interp 500"; do
	name=${prog%% *}
	clean_env "$CGTRACE" record -q -o "$name.zst" -- "$PROGS"/$prog >/dev/null 2>&1
	"$CGTRACE" dump "$name.zst" > "$name.txt"
	for cfg in "${two_level[@]}" "${three_level[@]}"; do
		rm -f out
		"$CGTRACE" simulate -q $cfg -o out "$name.zst" 2>sim.err
		[ -s sim.err ] && sed 's/^/  /' sim.err
		check_eq "$name $cfg: simulate's totals are the reference model's" \
			"$(refsim $cfg < "$name.txt")" "$(names_and_totals out)"
	done
done
