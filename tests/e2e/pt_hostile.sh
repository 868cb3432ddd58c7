# Hostile and awkward Intel PT traces (the reproducers of the reliability
# issue, tests/data/): a trace of 62 KB holding 1 GiB of AUX data is read
# in bounded memory; the stored decode is created exclusively and replaces
# only a stale decode of the same recording; info tells the trace's size
# from its decode's.
source "$(dirname "$0")/../lib.sh"
plan 29

DATA=$ROOT/tests/data
SYNTH=$BUILD_DIR/tests/pt/pt-synth
quiet() { "$@" >/dev/null 2>&1; }
LIMIT_KB=300000		# address space: the 1 GiB of AUX data cannot fit

# ---- 1 GiB of AUX data (PAD packets) in 62 KB ------------------------------
cp "$DATA/pt_aux_bomb_1GiB.zst" bomb.zst
out=$(run_limited $LIMIT_KB "$CGTRACE" info bomb.zst 2>&1)
check_eq "AUX bomb: info within ${LIMIT_KB} KB of address space: exit status 0" 0 "$?"
check_contains "AUX bomb: the 1 GiB of packets is read and skipped, counted" \
	"1 decode error (1,073,726,086 bytes of packets skipped)" "$out"
rm -f bomb.decoded.zst
out=$(run_limited $LIMIT_KB "$CGTRACE" simulate -q -o bomb.out bomb.zst 2>&1)
check_eq "AUX bomb: simulate within ${LIMIT_KB} KB of address space: exit status 0" 0 "$?"
check "AUX bomb: simulate wrote its output" test -s bomb.out

# ---- Windows: a segment longer than a window is cut at a PSB ---------------
clean_env "$CGTRACE" record -q -o loops.zst -- "$PROGS/loops" >/dev/null 2>&1
"$SYNTH" loops.zst loops.pt.zst loops.col.zst 2>/dev/null
whole=$("$CGTRACE" dump loops.pt.zst 2>/dev/null | md5sum)
rm -f loops.pt.decoded.zst
cut=$(CGTRACE_PT_WINDOW=5000 "$CGTRACE" dump loops.pt.zst 2>/dev/null | md5sum)
check_eq "windows of 5000 bytes (PSBs every 4 KiB): the instruction stream of a whole decode" "$whole" "$cut"
rm -f loops.pt.decoded.zst
out=$(CGTRACE_PT_WINDOW=1024 timeout 120 "$CGTRACE" info loops.pt.zst 2>&1)
check_contains "windows smaller than the PSB period: cut where they are, losses counted" "decode errors (" "$out"

# ---- info: the trace's size, and its decode's ------------------------------
out=$("$CGTRACE" info bomb.zst 2>&1)
check_contains "info on a PT trace: the trace's own size" \
	"trace:          bomb.zst ($(stat -c %s bomb.zst) bytes of Intel PT packets and sideband)" "$out"
check_contains "info on a PT trace: the stored decode's size on its own line" \
	"decoded:        bomb.decoded.zst ($(stat -c %s bomb.decoded.zst) bytes, format version" "$out"
out=$("$CGTRACE" info bomb.decoded.zst 2>&1)
check_contains "info on the decode itself: its own size" \
	"trace:          bomb.decoded.zst ($(stat -c %s bomb.decoded.zst) bytes, format version" "$out"

# ---- the stored decode ------------------------------------------------------
# A symlink planted at the old temporary name: its target is left alone.
mkdir s && cp "$DATA/tiny.pt.zst" s/t.zst
echo "victim's file" >s/victim.txt
ln -s victim.txt s/t.decoded.zst.part
out=$(cd s && "$CGTRACE" info t.zst 2>&1)
check_eq "a symlink at FOO.decoded.zst.part: its target is not written" "victim's file" "$(cat s/victim.txt)"
check "a symlink at FOO.decoded.zst.part: the decode is stored" quiet "$CGTRACE" info s/t.decoded.zst
check_eq "a symlink at FOO.decoded.zst.part: no other file left behind" \
	"t.decoded.zst t.decoded.zst.part t.zst victim.txt" "$(cd s && echo *)"

# A symlink at FOO.decoded.zst itself: neither it nor its target replaced.
mkdir l && cp "$DATA/tiny.pt.zst" l/t.zst
echo "victim's file" >l/victim.txt
ln -s victim.txt l/t.decoded.zst
out=$(cd l && "$CGTRACE" info t.zst 2>&1)
check_eq "a symlink at FOO.decoded.zst: info still works" 0 "$?"
check_contains "a symlink at FOO.decoded.zst: says it leaves it alone" \
	"t.decoded.zst is not a decode of t.zst (it is a symbolic link): leaving it alone" "$out"
check "a symlink at FOO.decoded.zst: still the symlink" test -L l/t.decoded.zst
check_eq "a symlink at FOO.decoded.zst: its target is not written" "victim's file" "$(cat l/victim.txt)"

# A file that is not a trace at FOO.decoded.zst.
mkdir f && cp "$DATA/tiny.pt.zst" f/u.zst
echo "my notes" >f/u.decoded.zst
out=$(cd f && "$CGTRACE" info u.zst 2>&1)
check_contains "a text file at FOO.decoded.zst: says it leaves it alone" \
	"u.decoded.zst is not a decode of u.zst (it is not a cgtrace trace): leaving it alone" "$out"
check_eq "a text file at FOO.decoded.zst: unchanged" "my notes" "$(cat f/u.decoded.zst)"
check_contains "a text file at FOO.decoded.zst: the trace is still decoded, for the run" \
	"decoded:        for this run only (" "$out"

# The decode of another recording, even one given the trace's time, is
# not the trace's (size and time alone would not tell).
clean_env "$CGTRACE" record -q -o other.zst -- /bin/true >/dev/null 2>&1
"$SYNTH" other.zst other.pt.zst other.col.zst 2>/dev/null
"$CGTRACE" info other.pt.zst >/dev/null 2>&1
cp other.pt.decoded.zst f/v.decoded.zst
cp "$DATA/tiny.pt.zst" f/v.zst
touch -r f/v.zst f/v.decoded.zst
out=$(cd f && "$CGTRACE" info v.zst 2>&1)
check_contains "another recording's decode at FOO.decoded.zst: left alone" \
	"(it is the decode of another recording): leaving it alone" "$out"
check "another recording's decode at FOO.decoded.zst: unchanged" cmp -s other.pt.decoded.zst f/v.decoded.zst

# A stale decode of the same recording is replaced.
before=$(stat -c %i s/t.decoded.zst)
touch -d "1 minute ago" s/t.zst
out=$(cd s && "$CGTRACE" info t.zst 2>&1)
check_contains "a stale decode of the same recording: decoded again" \
	"t.decoded.zst is out of date (the trace has changed since it was decoded): decoding again" "$out"
check "a stale decode of the same recording: replaced by a new file" \
	test "$(stat -c %i s/t.decoded.zst)" != "$before"
out=$(cd s && "$CGTRACE" info t.zst 2>&1 >/dev/null)
check_empty "a fresh decode: replayed silently" "$out"

# A FIFO at FOO.decoded.zst is not opened (it would block).
mkdir p && cp "$DATA/tiny.pt.zst" p/t.zst && mkfifo p/t.decoded.zst
out=$(cd p && timeout 60 "$CGTRACE" info t.zst 2>&1)
check_eq "a FIFO at FOO.decoded.zst: info does not block" 0 "$?"
check_contains "a FIFO at FOO.decoded.zst: left alone" "(it is not a regular file): leaving it alone" "$out"

# A directory nothing can be written in: decoded into TMPDIR for the run.
mkdir ro tmp && cp "$DATA/tiny.pt.zst" ro/t.zst && chmod 555 ro && chmod 1777 tmp && chmod 755 .
as_user=()
[ "$(id -u)" -eq 0 ] && as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
out=$(TMPDIR=$WORK/tmp "${as_user[@]}" "$CGTRACE" info ro/t.zst 2>&1)
check_eq "a read-only directory: info works" 0 "$?"
check_contains "a read-only directory: says the decode is for this run only" \
	"cannot store the decoded trace beside ro/t.zst (Permission denied): decoding it for this run only" "$out"
check_eq "a read-only directory: nothing left in it or in TMPDIR" "t.zst" "$(ls -A ro; ls -A tmp)"
chmod 755 ro
