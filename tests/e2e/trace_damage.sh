# Damaged traces (formats/TRACE-FORMAT.md, "Damage"): one byte changed in
# a trace of 21 segments, in 100 places -- the first frame (the header's:
# an error, but for its checksum flag), frame headers, block headers,
# checksums, segment markers, the last frame, and 69 random places.  Every variation is simulated on 1 and
# 3 threads, every fifth also on 2, 8 and 16: never a crash or a hang, exit
# status 0, 1 or 3, and the same cachegrind.out and messages on every
# thread count.  Then info, dump and simulate on one damaged trace agree.
source "$(dirname "$0")/../lib.sh"
plan 37

# The sort trace of simulate_exact.sh: 21 segments, one frame each.
numbers numbers.txt
clean_env "$CGTRACE" record -q -o sort.zst -- sort -n --parallel=1 -o sorted.txt numbers.txt >/dev/null
segments=$(($(grep -a -o CGTSEGMT sort.zst | wc -l) + 1))
check "the trace has 20 segments or more ($segments)" test "$segments" -ge 20

# Its frames: "kind offset length header-length checksum-offset
# last-block-header-offset".
python3 - sort.zst >frames.txt <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
p = 0
while p < len(d):
    magic = struct.unpack_from("<I", d, p)[0]
    if magic & 0xFFFFFFF0 == 0x184D2A50:
        n = 8 + struct.unpack_from("<I", d, p + 4)[0]
        print("marker" if d[p + 8:p + 16] == b"CGTSEGMT" else "skippable", p, n, 8, -1, -1)
        p += n
        continue
    fhd = d[p + 4]
    single = fhd >> 5 & 1
    h = 5 + (1 - single) + [0, 1, 2, 4][fhd & 3] + [single, 2, 4, 8][fhd >> 6]
    q = p + h
    while True:
        last_block = q
        b = d[q] | d[q + 1] << 8 | d[q + 2] << 16
        q += 3 + (1 if (b >> 1 & 3) == 1 else b >> 3)
        if b & 1:
            break
    csum = fhd >> 2 & 1
    print("frame", p, q + 4 * csum - p, h, q if csum else -1, last_block)
    p = q + 4 * csum
PY
check_eq "the frames tile the file" "$(stat -c %s sort.zst)" "$(awk '{ end = $2 + $3 } END { print end }' frames.txt)"

# The undamaged trace: the same file on every thread count.
for t in 1 2 3 8 16; do
	"$CGTRACE" simulate -q --threads=$t -o good.$t.out sort.zst 2>good.$t.err
	echo $? >>good.status
done
check_eq "undamaged: exit status 0 on 1, 2, 3, 8 and 16 threads" "0 0 0 0 0" "$(echo $(cat good.status))"
for t in 2 3 8 16; do
	check_same_file "undamaged: $t threads give 1 thread's cachegrind.out" good.1.out good.$t.out
done
good_ir=$(summary_line good.1.out | cut -d' ' -f1)

# The 100 variations: "offset xor what", 30 chosen, 70 random (seeded).
python3 - frames.txt >variations.txt <<'PY'
import random, sys
rows = [l.split() for l in open(sys.argv[1])]
frames = [(int(r[1]), int(r[2]), int(r[3]), int(r[4])) for r in rows if r[0] == "frame"]
markers = [int(r[1]) for r in rows if r[0] == "marker"]
size = int(rows[-1][1]) + int(rows[-1][2])
rng = random.Random(20240)
out = []
def add(off, what, x=None):
    out.append((off, x if x is not None else rng.randrange(1, 256), what))
f0, f1, mid, last = frames[0], frames[1], frames[len(frames) // 2], frames[-1]
add(f0[0] + 2, "first frame: magic")
add(f0[0] + f0[1] // 2, "first frame: content")
add(f0[3] + 1, "first frame: checksum")
add(f0[0] + 4, "first frame: checksum flag", 4)
for name, (o, n, h, c) in (("second frame", f1), ("middle frame", mid)):
    add(o, name + ": magic", 1)
    add(o + 4, name + ": checksum flag", 4)
    add(o + 4, name + ": size flags", 0xc0)
    add(o + h - 1, name + ": declared size")
    add(o + h, name + ": first block header")
    add(o + h + 2, name + ": first block size", 0x10)
    add(o + n // 2, name + ": content")
    add(c, name + ": checksum")
m1, mlast = markers[0], markers[-1]
add(m1, "first marker: magic, still skippable", 1)
add(m1 + 2, "first marker: magic")
add(m1 + 4, "first marker: length", 0x40)
add(m1 + 7, "first marker: length, high byte", 0x10)
add(m1 + 12, "first marker: CGTSEGMT")
add(mlast + 1, "last marker: magic")
add(last[0], "last frame: magic", 1)
add(last[0] + last[1] // 2, "last frame: content")
add(last[3], "last frame: checksum")
add(last[0] + last[1] - 1, "last frame: its last byte")
while len(out) < 100:
    add(rng.randrange(size), "random")
for off, x, what in out:
    print(off, x, what)
PY
check_eq "100 variations" 100 "$(wc -l <variations.txt)"

# flip FILE OFFSET XOR: a copy of sort.zst with that byte changed.
flip() {
	cp sort.zst "$1"
	python3 -c "
import sys
f = open(sys.argv[1], 'r+b'); f.seek(int(sys.argv[2])); b = f.read(1)[0]
f.seek(int(sys.argv[2])); f.write(bytes([b ^ int(sys.argv[3])]))" "$1" "$2" "$3"
}

first_end=$(awk '$1 == "frame" { print $2 + $3; exit }' frames.txt)
i=0 runs_1=0 runs_3=0 runs_more=0
bad_status="" differ="" bad_clean="" bad_warn="" bad_error=""
while read -r off x what; do
	i=$((i + 1))
	flip v.zst "$off" "$x"
	threads="1 3"
	[ $((i % 5)) -eq 1 ] && threads="1 2 3 8 16"
	for t in $threads; do
		rm -f v.$t.out
		timeout -k 5 120 "$CGTRACE" simulate -q --threads=$t -o v.$t.out v.zst 2>v.$t.err
		echo $? >v.$t.status
		case $t in 1) runs_1=$((runs_1 + 1)) ;; 3) runs_3=$((runs_3 + 1)) ;; *) runs_more=$((runs_more + 1)) ;; esac
	done
	rc=$(cat v.1.status)
	for t in $threads; do
		s=$(cat v.$t.status)
		case $s in 0 | 1 | 3) ;; *) bad_status="$bad_status [$i $what, $t threads: status $s]" ;; esac
		if [ "$s" != "$rc" ] || ! cmp -s v.1.err v.$t.err ||
			{ [ -e v.1.out ] && ! cmp -s v.1.out v.$t.out; } || { [ ! -e v.1.out ] && [ -e v.$t.out ]; }; then
			differ="$differ [$i $what, $t threads]"
		fi
	done
	echo "$i $off $x $rc $what" >>outcomes.txt
	case $rc in
	0)	# undamaged after all (a skippable frame, a flag that does not matter)
		cmp -s v.1.out good.1.out && [ ! -s v.1.err ] || bad_clean="$bad_clean [$i $what]" ;;
	3)	grep -q "damaged trace: in all" v.1.err && grep -q "simulated only what the trace holds" v.1.err &&
			[ -s v.1.out ] || bad_warn="$bad_warn [$i $what]"
		cp v.1.out "out.$i"; cp v.1.err "err.$i" ;;
	1)	# only a damaged first frame (the stream header's) is an error
		[ "$off" -lt "$first_end" ] && [ ! -e v.1.out ] && [ "$(wc -l <v.1.err)" = 1 ] &&
			grep -q "byte offset\|not a cgtrace trace" v.1.err || bad_error="$bad_error [$i $what: $(cat v.1.err)]" ;;
	esac
done <variations.txt
check_eq "runs on 1, 3, and 2+8+16 threads" "100 100 60" "$runs_1 $runs_3 $runs_more"
check_empty "never a crash or a hang: exit status 0, 1 or 3" "$bad_status"
check_empty "the same status, messages and cachegrind.out on every thread count" "$differ"
check_empty "status 0: byte for byte the undamaged file, no warning" "$bad_clean"
check_empty "status 3: a cachegrind.out and the damage reported" "$bad_warn"
check_empty "status 1: only for the first frame, one message (its offset, or not a trace)" "$bad_error"

# field N WHAT: field N of the variation WHAT's line in outcomes.txt.
field() { awk -v f="$1" -v w="$2" '{ s = $5; for (j = 6; j <= NF; j++) s = s " " $j } s == w { print $f }' outcomes.txt; }
outcome() { field 4 "$1"; }
number() { field 1 "$1"; }
check_eq "the first frame damaged: an error, three ways" "1 1 1" \
	"$(echo $(outcome "first frame: magic") $(outcome "first frame: content") $(outcome "first frame: checksum"))"
k=$(number "middle frame: content")
# What is lost with the middle frame: it and the frames after it in its
# segment, all of the segment if it is the segment's first frame.  Which
# frame is in the middle, and how many frames its segment has, depend on
# where the recorder's timed flushes fell (a slower build makes longer
# segments).
mid_loss=$(awk 'BEGIN { first = 1 } $1 == "marker" { segment++; first = 1 }
	$1 == "frame" { start[n] = $2; end[n] = $2 + $3; seg[n] = segment + 1; first_of[n] = first; first = 0; n++ }
	END {
		m = int(n / 2); last = m
		while (last + 1 < n && seg[last + 1] == seg[m]) last++
		frames = last - m + 1
		printf "lost: the executions in bytes %d-%d (%d frame%s): %s segment %d", start[m], end[last],
			frames, frames == 1 ? "" : "s", first_of[m] ? "all of" : "the rest of", seg[m]
	}' frames.txt)
check_contains "middle frame content: its bytes and segment named" "$mid_loss of $segments" "$(cat err.$k)"
check "middle frame content: fewer instructions than the undamaged trace" \
	test "$(summary_line out.$k | cut -d' ' -f1)" -lt "$good_ir"
k=$(number "second frame: magic")
check_contains "second frame's header: the stretch up to the next marker passed over" \
	"where no frame could be read; read on at the segment marker after them" "$(cat err.$k)"
k=$(number "last frame: content")
check_contains "last frame: the END record is lost with it" "the trace has no end record" "$(cat err.$k)"
check_eq "a marker's text damaged: the segments merge, nothing lost" 0 "$(outcome "first marker: CGTSEGMT")"
# A frame's checksum flag cleared: its 4 checksum bytes are passed over,
# too few to hold a frame, whether a segment marker follows them or (the
# first frame's, a slower build's segments of several frames) a frame of
# the same segment.
for frame in first middle; do
	k=$(number "$frame frame: checksum flag")
	check_contains "$frame frame's checksum flag cleared: only its 4 checksum bytes are not used" \
		"in all, 4 of $(stat -c %s sort.zst) bytes in 1 place" "$(cat err.$k)"
	check_same_file "... and the undamaged trace's cachegrind.out" good.1.out out.$k
done

# Two bytes: the middle frame lost, and the marker after it no longer a
# marker, so the next segment's frame (which begins with its SEGMENT
# record) counts as the lost segment's: decoding resumes inside a frame
# being skipped, with the values of every block applied so far.
mid=$(awk '$1 == "frame" { f[n++] = $2 } END { print f[int(n / 2)] }' frames.txt)
marker=$(awk -v m="$mid" '$1 == "marker" && $2 > m { print $2; exit }' frames.txt)
flip two-bytes.zst "$(awk -v m="$mid" '$1 == "frame" && $2 == m { print $2 + int($3 / 2) }' frames.txt)" 85
python3 -c "
import sys
f = open('two-bytes.zst', 'r+b'); f.seek(int(sys.argv[1]) + 8); f.write(b'X')" "$marker"
statuses=""
for t in 1 3 8; do
	timeout -k 5 120 "$CGTRACE" simulate -q --threads=$t -o tb.$t.out two-bytes.zst 2>tb.$t.err
	statuses="$statuses $?"
done
check_eq "a lost frame and the next marker's text: exit status 3 on 1, 3 and 8 threads" " 3 3 3" "$statuses"
check "... the same file on 1, 3 and 8 threads" bash -c 'test -s tb.1.out && cmp -s tb.1.out tb.3.out && cmp -s tb.1.out tb.8.out'

# One byte: the last block of the middle segment's last frame made 11 bytes
# longer, so that the frame runs into the segment marker after it and
# leaves 5 of the marker's bytes before the next frame.  That frame is
# lost, and the next segment is one of its own: not read as the lost
# one's continuation.
python3 - sort.zst run-in.zst frames.txt <<'PY' >run-in.txt
import sys
d = bytearray(open(sys.argv[1], "rb").read())
rows = [l.split() for l in open(sys.argv[3])]
frames = [i for i, r in enumerate(rows) if r[0] == "frame"]
k = frames[len(frames) // 2]
while rows[k + 1][0] != "marker":
    k += 1
start, length, block = int(rows[k][1]), int(rows[k][2]), int(rows[k][5])
b = d[block] | d[block + 1] << 8 | d[block + 2] << 16
b += 11 << 3
d[block:block + 3] = bytes([b & 255, b >> 8 & 255, b >> 16 & 255])
open(sys.argv[2], "wb").write(d)
print(start, start + length)
PY
timeout -k 5 120 "$CGTRACE" simulate -q -o run-in.out run-in.zst 2>run-in.err
check_eq "a frame run into the marker after it: exit status 3" 3 "$?"
check_contains "... that frame's executions lost, and only them" \
	"lost: the executions in bytes $(cut -d' ' -f1 run-in.txt)-" "$(cat run-in.err)"
check "... the next segment read as one of its own" \
	bash -c '! grep -q "frames)" run-in.err && grep -q "(1 frame)" run-in.err'

# info, dump and simulate on one damaged trace: the same report, status 3,
# and the same instructions (a smaller trace of two segments, for dump).
clean_env "$CGTRACE" record -q -o two.zst -- "$PROGS/ptrchase" 60000 >/dev/null
check_contains "the trace for info, dump and simulate has two segments" ", 2 segments)" \
	"$("$CGTRACE" info two.zst | head -1)"
second=$(python3 -c "
import sys
d = open('two.zst', 'rb').read(); m = d.index(b'CGTSEGMT')
print(m + 8 + 1000)")
cp two.zst two-bad.zst
# flipped, not overwritten: a byte written might be the one already there
python3 -c "
import sys
f = open('two-bad.zst', 'r+b'); f.seek(int(sys.argv[1])); b = f.read(1)[0]
f.seek(int(sys.argv[1])); f.write(bytes([b ^ 0x55]))" "$second"
check "... one byte of it damaged" bash -c '! cmp -s two.zst two-bad.zst'
"$CGTRACE" info two-bad.zst >info.txt 2>info.err
info_rc=$?
"$CGTRACE" dump two-bad.zst 2>dump.err | wc -l >dump.lines
dump_rc=${PIPESTATUS[0]}
"$CGTRACE" simulate -q -o two.out two-bad.zst 2>sim.err
sim_rc=$?
check_eq "info, dump, simulate: exit status 3" "3 3 3" "$info_rc $dump_rc $sim_rc"
check_contains "info: the segment lost named" "all of segment 2 of 2" "$(cat info.err)"
check_same_file "dump warns as info does" info.err dump.err
check_same_file "simulate warns as info does, then says what it simulated" info.err <(grep -v "simulated only" sim.err)
info_ir=$(awk '/instructions \(Ir\)/ { gsub(",", "", $3); print $3 }' info.txt)
check_eq "dump prints the instructions info counts ($info_ir)" "$info_ir" "$(cat dump.lines)"
check_eq "simulate simulates them" "$info_ir" "$(summary_line two.out | cut -d' ' -f1)"
