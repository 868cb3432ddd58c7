# Memory bombs: valid-looking traces whose records claim far more memory
# than a recording can produce.  info, dump and simulate refuse each with
# the file, the byte offset and the limit, exit status 1, and stay within
# a memory limit the bombs used to exceed many times over.
source "$(dirname "$0")/../lib.sh"
plan 14

DATA=$ROOT/tests/data
LIMIT_KB=$((384 * 1024))	# address space: the bombs took 1 GB and more

# bomb KIND FILE [ARGS]: writes a crafted trace (stream header, HEADER,
# then the records of KIND) as zstd frames of at most 4 MiB of whole
# records, each declaring its size.
cat > bomb.py <<'EOF'
import struct, subprocess, sys

def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7f) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)

def string(b):
    return varint(len(b)) + b

def record(t, payload):
    return bytes([t]) + varint(len(payload)) + payload

def header():
    def field(k, body):
        return varint(k) + varint(len(body)) + body
    return record(1, field(1, b"valgrind") + field(2, varint(1) + string(b"bomb")))

def module(start, size, path):
    return record(2, varint(start) + varint(size) + varint(0) + varint(5) + string(path)
                  + string(b"") + varint(0) + varint(0))

def blocks(n_blocks, n_exits):
    """BLOCKS records of at most 1 MiB: blocks of one instruction and
    n_exits exits."""
    recs, payload = [], bytearray()
    for i in range(n_blocks):
        b = (varint(i) + varint(1) + varint(1 + n_exits) + varint(0x1000) + b"\x04\x00"
             + b"\x06" * n_exits)
        if len(payload) + len(b) > 1 << 20:
            recs.append(record(4, bytes(payload)))
            payload = bytearray()
        payload += b
    recs.append(record(4, bytes(payload)))
    return recs

def write(path, records):
    frames, cur = [], bytearray(b"CGTRACE\n" + struct.pack("<II", 2, 0))
    for r in records:
        if len(cur) + len(r) > 4 << 20:
            frames.append(bytes(cur))
            cur = bytearray()
        cur += r
    frames.append(bytes(cur))
    with open(path, "wb") as out:
        for f in frames:
            out.write(subprocess.run(["zstd", "-q", "-c", "--stream-size=%d" % len(f)], input=f,
                                     stdout=subprocess.PIPE, check=True).stdout)

kind, path = sys.argv[1], sys.argv[2]
if kind == "exits":
    # 5,000 blocks of 4,095 exits: 20 MB of stream, 1 GB of block table
    write(path, [header()] + blocks(5000, 4095))
elif kind == "long-path":
    write(path, [header(), module(0x400000, 0x1000, b"/" * 4097)])
elif kind == "unmaps":
    # a mapping of a 4096-byte path, then 100,000 UNMAPs of one byte each
    # splitting what is left of it: two new mappings each, 800 MB
    start = 0x10000000
    recs = [header(), module(start, 0x10000000, b"/" * 4096)]
    recs += [record(3, varint(start + 2 * i + 1) + varint(1)) for i in range(100000)]
    write(path, recs)
elif kind == "idle-unmaps":
    # 20,000 mappings, then 200,000 UNMAPs that end none of them: each
    # UNMAP looks at every mapping, 4 billion looks in all
    recs = [header()] + [module(0x10000000 + i * 0x2000, 0x1000, b"/m") for i in range(20000)]
    recs += [record(3, varint(0x100 + i) + varint(1)) for i in range(200000)]
    write(path, recs)
EOF
bomb() { python3 bomb.py "$@"; }

# limited COMMAND...: runs it with its memory limited to LIMIT_KB
# (run_limited); prints its standard error and exit status.
limited() {
	local out rc
	out=$(run_limited "$LIMIT_KB" "$@" 2>&1 >/dev/null)
	rc=$?
	echo "$out"
	echo "exit $rc"
}

# check_refused WHAT MESSAGE OUTPUT: ok if OUTPUT (of limited) says
# MESSAGE and ends in exit status 1.
check_refused() {
	case "$3" in
	*"$2"*"exit 1") ok "$1" ;;
	*) not_ok "$1"; echo "  expected: $2, then exit 1"; echo "  actual: $3" ;;
	esac
}

# refused WHAT TRACE MESSAGE: info, dump and simulate each say MESSAGE and
# exit with status 1, within the memory limit.
refused() {
	local what=$1 trace=$2 message=$3 cmd out
	for cmd in info dump simulate; do
		if [ "$cmd" = simulate ]; then
			out=$(limited "$CGTRACE" simulate --threads=2 -o sim.out "$trace")
		else
			out=$(limited "$CGTRACE" "$cmd" "$trace")
		fi
		check_refused "$what: $cmd refuses it" "$message" "$out"
	done
}

# The control: a real trace goes through within the limit.
out=$(limited "$CGTRACE" simulate --threads=2 -o tiny.out "$DATA/tiny.zst")
check_eq "a real trace simulates within the memory limit" "exit 0" "$(echo "$out" | tail -1)"

# The reproducer: 300 blocks of 65,535 exit ops in 4 KB.
refused "300 blocks of 65,535 ops" "$DATA/blockbomb300.zst" \
	"blockbomb300.zst: stream offset 2812 (frame at byte offset 688): BLOCKS record: expected an op count (at most 4096)"

# Blocks as large as producers make them, but 5,000 of them in 22 KB.
bomb exits exits.zst
refused "5,000 blocks of 4,095 exits" exits.zst \
	"exits.zst: stream offset 344692 (frame at byte offset 0): BLOCKS record: expected block definitions that fit the memory a trace of this size can need"

# A module path longer than PATH_MAX.
bomb long-path long-path.zst
check_refused "a path of 4097 bytes: info refuses it" \
	"long-path.zst: stream offset 47 (frame at byte offset 0): MODULE record: expected a module path of at most 4096 bytes" \
	"$(limited "$CGTRACE" info long-path.zst)"

# Mappings split by UNMAPs, each piece with its own copy of the path.
bomb unmaps unmaps.zst
refused "100,000 UNMAPs splitting a mapping" unmaps.zst \
	"UNMAP record: expected module mappings that fit the memory a trace of this size can need"

# UNMAPs that each look at every mapping: refused before they take time
# the file's size cannot justify.
bomb idle-unmaps idle-unmaps.zst
check_refused "200,000 UNMAPs past 20,000 mappings: info refuses them" \
	"UNMAP record: expected no more mapping changes than a trace of this size can make" \
	"$(limited "$CGTRACE" info idle-unmaps.zst)"

# Decompression bombs: a frame of 1 GiB of zeros (32 KB), declaring its
# size or not.
head -c 1G /dev/zero | zstd -q -c --stream-size=1073741824 > zeros.zst
check_refused "a frame of 1 GiB: info refuses it by its declared size" \
	"zeros.zst: byte offset 0: zstd frame declares a bad size (expected a declared size of at most 4194304 bytes)" \
	"$(limited "$CGTRACE" info zeros.zst)"
head -c 1G /dev/zero | zstd -q -c > zeros-unsized.zst
check_refused "a frame of 1 GiB, size undeclared: info refuses it" \
	"zeros-unsized.zst: byte offset 0: zstd frame does not declare its size" \
	"$(limited "$CGTRACE" info zeros-unsized.zst)"
