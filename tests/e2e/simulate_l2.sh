# --L2 (a unified level between the L1s and LL) and --caches=host: the
# file's desc: and events: lines, the stderr summary's L2 lines against
# the file's totals, cg_annotate and cgtrace report reading the file, the
# recording host's hierarchy (also of hosts with other caches, made by
# rewriting a trace's header), and runs without --L2 still Cachegrind's.
source "$(dirname "$0")/../lib.sh"
plan 45

run() { out=$("$@" 2>&1); rc=$?; }
events12="Ir I1mr I2mr ILmr Dr D1mr D2mr DLmr Dw D1mw D2mw DLmw"

clean_env "$CGTRACE" record -q -o ptrchase.zst -- "$PROGS/ptrchase" >/dev/null
"$CGTRACE" simulate --L2=256k,8,64 -o l2.out ptrchase.zst 2>l2.err

check_eq "--L2: desc: lines I1, D1, L2, LL in that order" \
	"$(printf 'desc: %s cache:\n' I1 D1 L2 LL)" "$(grep '^desc:' l2.out | cut -c1-15)"
check_eq "--L2: the L2 desc: line" "desc: L2 cache:         262144 B, 64 B, 8-way associative" \
	"$(grep '^desc: L2' l2.out)"
check_eq "--L2: the 12-event events: line" "events: $events12" "$(sed -n 's/ *$//; /^events:/p' l2.out)"
read -r Ir I1mr I2mr ILmr Dr D1mr D2mr DLmr Dw D1mw D2mw DLmw extra <<<"$(summary_line l2.out)"
check_eq "--L2: 12 totals, Ir Dr Dw those of cgtrace info" "$(info_counts ptrchase.zst) -" \
	"$Ir $Dr $Dw ${extra:--}"
check_eq "--L2: the cost lines add up to the summary: line" "$(summary_line l2.out)" \
	"$(awk '/^[0-9]/ { for (i = 2; i <= NF; i++) s[i] += $i; n = NF }
		END { for (i = 2; i <= n; i++) printf "%s%d", (i > 2 ? " " : ""), s[i] }' l2.out)"

# err_numbers LABEL: the counts of the stderr summary's line LABEL (total,
# then rd and wr where there are), without the thousands separators.
err_numbers() {
	sed -n "s/^==[0-9]*== $1: *//p" l2.err | sed 's/[0-9.]*%//g' | grep -o '[0-9,]\+' | tr -d , | paste -sd' '
}
check_eq "stderr: I refs = Ir" "$Ir" "$(err_numbers 'I   refs')"
check_eq "stderr: I1 misses = I1mr" "$I1mr" "$(err_numbers 'I1  misses')"
check_eq "stderr: I2 misses = I2mr" "$I2mr" "$(err_numbers 'I2  misses')"
check_eq "stderr: LLi misses = ILmr" "$ILmr" "$(err_numbers 'LLi misses')"
check_eq "stderr: D refs = Dr + Dw" "$((Dr + Dw)) $Dr $Dw" "$(err_numbers 'D   refs')"
check_eq "stderr: D1 misses = D1mr + D1mw" "$((D1mr + D1mw)) $D1mr $D1mw" "$(err_numbers 'D1  misses')"
check_eq "stderr: D2 misses = D2mr + D2mw" "$((D2mr + D2mw)) $D2mr $D2mw" "$(err_numbers 'D2  misses')"
check_eq "stderr: LLd misses = DLmr + DLmw" "$((DLmr + DLmw)) $DLmr $DLmw" "$(err_numbers 'LLd misses')"
check_eq "stderr: L2 refs = I1mr + D1mr + D1mw" "$((I1mr + D1mr + D1mw)) $((I1mr + D1mr)) $D1mw" \
	"$(err_numbers 'L2 refs')"
check_eq "stderr: L2 misses = I2mr + D2mr + D2mw" "$((I2mr + D2mr + D2mw)) $((I2mr + D2mr)) $D2mw" \
	"$(err_numbers 'L2 misses')"
check_eq "stderr: LL refs = L2 misses" "$(err_numbers 'L2 misses')" "$(err_numbers 'LL refs')"
check_eq "stderr: LL misses = ILmr + DLmr + DLmw" "$((ILmr + DLmr + DLmw)) $((ILmr + DLmr)) $DLmw" \
	"$(err_numbers 'LL misses')"
check_contains "stderr: the configuration names the L2" "L2 262144 B, 64 B, 8-way associative" "$(cat l2.err)"

# Valgrind 3.19's cg_annotate and cgtrace report read the file.
run cg_annotate l2.out
check_eq "cg_annotate reads the L2 file" 0 "$rc"
check_eq "cg_annotate: the 12 events" "Events recorded:  $events12" "$(grep '^Events recorded:' <<<"$out")"
check_eq "cg_annotate: its program totals are the summary: line, without a warning" \
	"$(summary_line l2.out) 0" \
	"$(grep 'PROGRAM TOTALS' <<<"$out" | sed 's/([^)]*)//g; s/PROGRAM TOTALS//' | tr -d , | xargs) $(grep -c WARNING <<<"$out")"
run "$CGTRACE" report l2.out
check_eq "cgtrace report reads the L2 file" 0 "$rc"
check_eq "cgtrace report: the 12 events in its header" "Events recorded:  $events12" \
	"$(grep '^Events recorded:' <<<"$out")"
check_eq "cgtrace report: the L2 cache in its header" \
	"L2 cache:         262144 B, 64 B, 8-way associative" "$(grep '^L2 cache:' <<<"$out")"

# --caches=host: what cgtrace info says of the recording host's caches
# gives the expected desc: lines -- I1 and D1 its level-1 caches; with an
# L3, L2 its L2 and LL its L3; with two levels, no L2 and LL its L2; LL
# adjusted by Cachegrind's rule when its set count is not a power of two
# (then "adjusted" on the last line).
host_expect() {
	"$CGTRACE" info "$1" | python3 -c '
import re, sys
units = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
caches = {}
for line in sys.stdin:
    m = re.match(r"\s+(L1d|L1i|L2|L3)\s+(\d+) (B|KiB|MiB|GiB)\s+(\d+)-way, (\d+)-byte lines", line)
    if m:
        caches[m[1]] = [int(m[2]) * units[m[3]], int(m[4]), int(m[5])]
def desc(name, c):
    return "desc: %s cache:         %d B, %d B, %s" % (
        name, c[0], c[2], "direct-mapped" if c[1] == 1 else "%d-way associative" % c[1])
def tweak(size, assoc, line):  # Cachegrind maybe_tweak_LLc
    sets = size // (assoc * line)
    if sets & (sets - 1) == 0:
        return [size, assoc, line], False
    new_sets = 1 << (sets.bit_length() - 1)
    new_assoc = int(0.5 + sets / new_sets * assoc)
    return [line * new_assoc * new_sets, new_assoc, line], True
print(desc("I1", caches["L1i"]))
print(desc("D1", caches["L1d"]))
if "L3" in caches:
    print(desc("L2", caches["L2"]))
ll, adjusted = tweak(*caches["L3" if "L3" in caches else "L2"])
print(desc("LL", ll))
print("adjusted" if adjusted else "as is")'
}
# with_caches IN OUT "LEVEL,TYPE,SIZE,ASSOC,LINE"...: the trace IN with its
# header's cache fields (formats/TRACE-FORMAT.md section 4, key 8) replaced:
# the stream rewritten into a single zstd frame (the trace is small enough),
# compressed from a file so that the frame declares its size.
with_caches() {
	local in=$1 outf=$2
	shift 2
	zstd -q -dc "$in" | python3 -c '
import sys
def uv(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 127) << s; s += 7
        if c < 128: return v, i
def ev(v):
    o = bytearray()
    while True:
        c = v & 127; v >>= 7
        o.append(c | (128 if v else 0))
        if not v: return bytes(o)
data = sys.stdin.buffer.read()
assert data[:8] == b"CGTRACE\n" and data[16] == 1
length, p = uv(data, 17)
end = p + length
header = bytearray()
while p < end:
    key, p = uv(data, p); size, p = uv(data, p)
    if key != 8:
        header += ev(key) + ev(size) + data[p:p + size]
    p += size
for spec in sys.argv[1:]:
    body = b"".join(ev(int(x)) for x in spec.split(","))
    header += ev(8) + ev(len(body)) + body
sys.stdout.buffer.write(data[:17] + ev(len(header)) + header + data[end:])' "$@" >"$outf.stream"
	zstd -q --rm "$outf.stream" -o "$outf"
}
with_caches ptrchase.zst two_levels.zst 1,1,32768,8,64 1,2,32768,8,64 2,3,1048576,8,64
with_caches ptrchase.zst l3_12m.zst 1,1,32768,8,64 1,2,32768,8,64 2,3,1048576,8,64 3,3,12582912,16,64
check_contains "rewritten header: cgtrace info shows a 12 MiB L3" "L3       12 MiB  16-way" \
	"$("$CGTRACE" info l3_12m.zst)"
for t in ptrchase two_levels l3_12m; do
	"$CGTRACE" simulate --caches=host -o "host.$t" "$t.zst" 2>"host.$t.err"
	expected=$(host_expect "$t.zst")
	check_eq "--caches=host, $t: the desc: lines from cgtrace info's caches" \
		"$(sed '$d' <<<"$expected")" "$(grep '^desc:' "host.$t")"
	if grep -q '^desc: L2' <<<"$expected"; then events=$events12; else events="Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw"; fi
	check_eq "--caches=host, $t: the events: line" "events: $events" "$(sed -n 's/ *$//; /^events:/p' "host.$t")"
	if [ "$(tail -1 <<<"$expected")" = adjusted ]; then
		check_contains "--caches=host, $t: the LL adjustment is warned of" \
			"warning: simulated LL cache: line_size" "$(cat "host.$t.err")"
	else
		check "--caches=host, $t: no LL adjustment, no warning of one" \
			bash -c '[ -s "$1" ] && ! grep -q "simulated LL cache" "$2"' _ "host.$t" "host.$t.err"
	fi
done
check_eq "--caches=host, two levels: no L2, LL the host's L2" \
	"desc: LL cache:         1048576 B, 64 B, 8-way associative" "$(grep '^desc: L2\|^desc: LL' host.two_levels)"
check_eq "--caches=host, a 12 MiB 16-way L3: LL 24-way (12288 sets made 8192), warned" \
	"desc: LL cache:         12582912 B, 64 B, 24-way associative 2" \
	"$(grep '^desc: LL' host.l3_12m) $(grep -c 'LL cache: line_size 64  assoc \(16\|24\)  total_size 12,582,912' host.l3_12m.err)"

# Without --L2 nothing changed: Cachegrind's file byte for byte, and no L2
# line on stderr or in the file.
cfg="--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"
clean_env "$CGTRACE" record -q -o loops.zst -- "$PROGS/loops" >/dev/null
CG_OPTS="--cache-sim=yes $cfg" cachegrind cg.out "$PROGS/loops"
"$CGTRACE" simulate $cfg -o ct.out loops.zst 2>ct.err
check_same_file "without --L2: Cachegrind's file, byte for byte" cg.out ct.out
check_empty "without --L2: no I2, D2 or L2 line on stderr" "$(grep 'I2 \|D2 \|L2 ' ct.err)"
"$CGTRACE" simulate -q -o default.out loops.zst
check_empty "without --L2 or --caches=host: no L2 of the host's" "$(grep '^desc: L2' default.out)"

# An L2 as large as LL, with LL's lines: allowed.
run "$CGTRACE" simulate --L2=8M,16,64 --LL=8M,16,64 -o same.out ptrchase.zst
check_eq "L2 as large as LL: accepted" 0 "$rc"
check_eq "L2 as large as LL: both desc: lines" \
	"$(printf 'desc: %s cache:         8388608 B, 64 B, 16-way associative\n' L2 LL)" \
	"$(grep '^desc: L2\|^desc: LL' same.out)"
run "$CGTRACE" simulate --L2=8M,16,128 --LL=8M,16,64 -o longer.out ptrchase.zst
check "L2 with longer lines than LL: refused, nothing written" \
	bash -c '[ "$1" -eq 1 ] && [ ! -e longer.out ] && grep -q "shorter than L2" <<<"$2"' _ "$rc" "$out"

# --L2 without cache simulation: only Ir.
run "$CGTRACE" simulate --L2=256k,8,64 --cache-sim=no -o nosim.out ptrchase.zst
check_eq "--L2 with --cache-sim=no: accepted" 0 "$rc"
check_eq "--L2 with --cache-sim=no: only Ir" "events: Ir" "$(sed -n 's/ *$//; /^events:/p' nosim.out)"
check_eq "--L2 with --cache-sim=no: Ir the trace's" "$(info_counts ptrchase.zst | cut -d' ' -f1)" \
	"$(summary_line nosim.out)"
