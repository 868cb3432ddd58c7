# Many configurations in one replay (--I1/--D1/--L2/--LL given several
# times or as ranges): every configuration's file is the one a run with
# that configuration alone writes, whatever the thread count; the summary
# (CSV, JSON), the plot and the stderr table agree with the files; bad
# sweeps are refused with a clear message before anything is written.
source "$(dirname "$0")/../lib.sh"
plan 149

run() { out=$("$@" 2>&1); rc=$?; }

# labels SPEC...: the labels of the cross product of SPECs ("LEVEL SIZES
# ASSOCS LINE", sizes and associativities space-separated lists), in the
# order a sweep simulates them: the first level outermost, sizes before
# associativities.
labels() {
	if [ $# -eq 0 ]; then echo; return; fi
	local level sizes assocs line s a rest
	read -r level sizes assocs line <<<"$1"
	IFS=, read -r -a sizes <<<"$sizes"
	IFS=, read -r -a assocs <<<"$assocs"
	shift
	for s in "${sizes[@]}"; do
		for a in "${assocs[@]}"; do
			while read -r rest; do
				echo "$level-$s-$a-$line${rest:+.$rest}"
			done < <(labels "$@")
		done
	done
}

# options_of LABEL: the options of that single configuration.
options_of() {
	local part level size assoc line parts
	IFS=. read -r -a parts <<<"$1"
	for part in "${parts[@]}"; do
		IFS=- read -r level size assoc line <<<"$part"
		printf -- '--%s=%s,%s,%s ' "$level" "$size" "$assoc" "$line"
	done
}

# table_labels ERRFILE: the first column of the stderr table's rows.
table_labels() { awk 'rows && NF { print $1 } /^configuration / { rows = 1 }' "$1"; }

# csv_vs_files CSV PREFIX: for each CSV row, its event totals against the
# summary: line of PREFIX<label>; prints "N rows agree" or the mismatches.
csv_vs_files() {
	python3 - "$1" "$2" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = []
for row in rows:
    lines = open(sys.argv[2] + row["label"]).read().splitlines()
    events = next(l for l in lines if l.startswith("events:")).split()[1:]
    totals = next(l for l in lines if l.startswith("summary:")).split()[1:]
    mine = [row[e] for e in events]
    if mine != totals:
        bad.append("%s: csv %s, file %s" % (row["label"], mine, totals))
print("\n".join(bad) if bad else "%d rows agree" % len(rows))
EOF
}

# same_across DIR1 DIR2 LABELS...: every label's file byte for byte the same
# in both directories: prints "N identical" or what differs.
same_across() {
	local a=$1 b=$2 l bad="" count=0
	shift 2
	for l in "$@"; do
		if [ -s "$a/o.$l" ] && cmp -s "$a/o.$l" "$b/o.$l"; then count=$((count + 1)); else bad="$bad $l"; fi
	done
	if [ -n "$bad" ]; then echo "differ:$bad"; else echo "$count identical"; fi
}

d1ll=(--D1=4k..32k,2..4,64 --LL=64k..128k,8,64)
mapfile -t d1ll_labels < <(labels "D1 4096,8192,16384,32768 2,4 64" "LL 65536,131072 8 64")
progs=(ptrchase strings interp)

for p in "${progs[@]}"; do
	clean_env "$CGTRACE" record -q -o "$p.zst" -- "$PROGS/$p" >/dev/null
	mkdir "$p.t1" "$p.t2" "$p.t8" "$p.single"
	"$CGTRACE" simulate --threads=2 "${d1ll[@]}" -o "$p.t2/o.%c" --sweep-summary="$p.csv" \
		"$p.zst" 2>"$p.err"
	"$CGTRACE" simulate -q --threads=1 "${d1ll[@]}" -o "$p.t1/o.%c" "$p.zst"
	"$CGTRACE" simulate -q --threads=8 "${d1ll[@]}" -o "$p.t8/o.%c" "$p.zst"

	# Each configuration alone, from its label.
	for l in "${d1ll_labels[@]}"; do
		"$CGTRACE" simulate -q $(options_of "$l") -o "$p.single/o.$l" "$p.zst"
		check_same_file "$p, $l: the sweep's file is the single run's" "$p.single/o.$l" "$p.t2/o.$l"
	done
	check_eq "$p: the files, one per configuration and no other" \
		"$(printf 'o.%s\n' "${d1ll_labels[@]}" | sort)" "$(ls "$p.t2" | sort)"
	check_eq "$p: 1 and 2 threads give the same files" "16 identical" \
		"$(same_across "$p.t1" "$p.t2" "${d1ll_labels[@]}")"
	check_eq "$p: 8 and 2 threads give the same files" "16 identical" \
		"$(same_across "$p.t8" "$p.t2" "${d1ll_labels[@]}")"
	check_eq "$p: the stderr table, one row per configuration in the given order" \
		"$(printf '%s\n' "${d1ll_labels[@]}")" "$(table_labels "$p.err")"
	check_eq "$p: the CSV, one row per configuration in the given order" \
		"$(printf '%s\n' "${d1ll_labels[@]}")" "$(tail -n +2 "$p.csv" | cut -d, -f1)"
	check_eq "$p: each CSV row's totals are its file's summary: line" "16 rows agree" \
		"$(csv_vs_files "$p.csv" "$p.t2/o.")"
done

# The stderr table's numbers are the CSV's (commas aside), row for row.
check_eq "ptrchase: the stderr table's totals are the CSV's" \
	"$(tail -n +2 ptrchase.csv | cut -d, -f1,14-22 | tr , ' ')" \
	"$(awk 'rows && NF { print $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 } /^configuration / { rows = 1 }' ptrchase.err | tr -d ,)"
check_contains "ptrchase: the table says how many were simulated" \
	"16 cache configurations, simulated in one replay" "$(cat ptrchase.err)"

# I1 and L2 in a sweep (events with I2mr, D2mr, D2mw), on strings.
il2=(--I1=16k..32k,8,64 --D1=16k,4..8,64 --L2=128k..256k,8,64)
mapfile -t il2_labels < <(labels "I1 16384,32768 8 64" "D1 16384 4,8 64" "L2 131072,262144 8 64")
mkdir l2.t1 l2.t2 l2.single
"$CGTRACE" simulate --threads=2 "${il2[@]}" -o "l2.t2/o.%c" --sweep-summary=l2.csv \
	--plot=l2.svg strings.zst 2>l2.err
"$CGTRACE" simulate -q --threads=1 "${il2[@]}" -o "l2.t1/o.%c" --sweep-summary=l2.json strings.zst
for l in "${il2_labels[@]}"; do
	"$CGTRACE" simulate -q $(options_of "$l") -o "l2.single/o.$l" strings.zst
	check_same_file "strings, $l: the sweep's file is the single run's" "l2.single/o.$l" "l2.t2/o.$l"
done
check_eq "strings, I1/D1/L2 sweep: 1 and 2 threads give the same files" "8 identical" \
	"$(same_across l2.t1 l2.t2 "${il2_labels[@]}")"
check_eq "strings, I1/D1/L2 sweep: the files carry the L2 events" \
	"events: Ir I1mr I2mr ILmr Dr D1mr D2mr DLmr Dw D1mw D2mw DLmw" \
	"$(sed -n 's/ *$//; /^events:/p' "l2.t2/o.${il2_labels[0]}")"
check_eq "strings, I1/D1/L2 sweep: the stderr table in the given order" \
	"$(printf '%s\n' "${il2_labels[@]}")" "$(table_labels l2.err)"
check_eq "strings, I1/D1/L2 sweep: each CSV row's totals are its file's summary: line" "8 rows agree" \
	"$(csv_vs_files l2.csv l2.t2/o.)"

# Only D1 varying: the LL caches of a part are one forest (hier.c's struct
# forest), a follower's sets its leader's until they differ.  A small LL of
# 64-bit tags, where sets part and join often, and one of 16 ways of 32-bit
# tags (looked up all at once where the host has AVX-512), each against
# the single runs, on 1, 2 and 8 threads (the forests differ with the
# parts).
for ll in 16384,4,64 2097152,16,64; do
	mapfile -t d1_labels < <(labels "D1 1024,2048,4096,8192 1,2,4 64" "LL ${ll//,/ }")
	for p in ptrchase strings; do
		dir="$p.d1.$ll"
		mkdir "$dir.t1" "$dir.t2" "$dir.t8" "$dir.single"
		for t in 1 2 8; do
			"$CGTRACE" simulate -q --threads=$t --D1=1k..8k,1..4,64 --LL=$ll -o "$dir.t$t/o.%c" "$p.zst"
		done
		for l in "${d1_labels[@]}"; do
			"$CGTRACE" simulate -q $(options_of "$l") -o "$dir.single/o.$l" "$p.zst"
		done
		for t in 1 2 8; do
			check_eq "$p, D1 alone varying, LL $ll, $t threads: every file is the single run's" \
				"12 identical" "$(same_across "$dir.single" "$dir.t$t" "${d1_labels[@]}")"
		done
	done
done

# The JSON summary parses and says what the CSV says (same sweep, other run).
json_vs_csv() {
	python3 - "$1" "$2" <<'EOF'
import csv, json, sys
doc = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
confs = doc["configurations"]
bad = []
if len(confs) != len(rows):
    bad.append("%d configurations in JSON, %d rows in CSV" % (len(confs), len(rows)))
for conf, row in zip(confs, rows):
    if conf["label"] != row["label"]:
        bad.append("label %s vs %s" % (conf["label"], row["label"]))
    for ev in doc["events"]:
        if str(conf["totals"][ev]) != row[ev]:
            bad.append("%s %s: %s vs %s" % (row["label"], ev, conf["totals"][ev], row[ev]))
    for level, cache in conf["caches"].items():
        for field in ("size", "assoc", "line"):
            if str(cache[field]) != row["%s_%s" % (level, field)]:
                bad.append("%s %s_%s" % (row["label"], level, field))
    for level, mpki in conf["mpki"].items():
        if abs(mpki - float(row[level + "_mpki"])) > 1e-4:
            bad.append("%s %s_mpki" % (row["label"], level))
print("\n".join(bad) if bad else "%d configurations agree" % len(rows))
EOF
}
check_eq "the JSON summary parses and agrees with the CSV" "8 configurations agree" \
	"$(json_vs_csv l2.json l2.csv 2>&1)"
check_eq "the JSON names the 12 events" "Ir I1mr I2mr ILmr Dr D1mr D2mr DLmr Dw D1mw D2mw DLmw" \
	"$(python3 -c 'import json, sys; print(" ".join(json.load(open(sys.argv[1]))["events"]))' l2.json)"

# The plots against their CSVs (tests/tools/check_plot.py, which renders
# them with rsvg-convert when it is installed).
"$CGTRACE" simulate -q "${d1ll[@]}" -o "ptrchase.t1/p.%c" --plot=ptrchase.svg ptrchase.zst
for plot in ptrchase:ptrchase l2:l2; do
	run python3 "$ROOT/tests/tools/check_plot.py" "${plot%%:*}.svg" "${plot#*:}.csv"
	check_eq "check_plot.py passes on ${plot%%:*}.svg" "0 1" "$rc $(echo "$out" | grep -c ' series, as ')"
	if command -v rsvg-convert >/dev/null; then
		check "${plot%%:*}.svg: rendered by rsvg-convert" bash -c '! grep -q "not installed" <<<"$1"' _ "$out"
	else
		ok "# SKIP rsvg-convert is not installed"
	fi
done

# Bad sweeps: a message with its key words, a non-zero exit status, and
# nothing written (no output file, summary or plot).  The trace's last
# frame is cut short: reading it would warn that the file ends inside a
# frame, so no such warning means the sweep was refused before its frames
# were read.
head -c $(($(stat -c %s interp.zst) - 100)) interp.zst > half.zst
bad() {
	local what=$1 words=$2
	shift 2
	rm -rf bad && mkdir bad
	run "$CGTRACE" simulate -o 'bad/o.%c' --sweep-summary=bad/s.csv --plot=bad/p.svg "$@" half.zst
	check_contains "$what: the message" "$words" "$out"
	check "$what: exit status non-zero, not a replay's ($rc)" \
		bash -c '[ "$1" -ne 0 ] && ! grep -q "ends inside" <<<"$2"' _ "$rc" "$out"
	check_empty "$what: nothing written" "$(ls -A bad)"
}
bad "empty range" "empty range 64k..4k" --D1=64k..4k,8,64
bad "a range's end not a power of two" "3k is not a power of two" --D1=3k..64k,8,64
bad "an associativity range's end not a power of two" "3 is not a power of two" --D1=4k..64k,3..4,64
bad "more than 1024 configurations" "at most 1024" --D1=1k..1M,1..16,64 --LL=1M..32M,1..16,64
bad "two configurations, one output name" "two configurations would get one output name" \
	--D1=32k,8,64 --D1=32768,8,64
rm -rf bad && mkdir bad
run "$CGTRACE" simulate -o bad/o.out --D1=32k,8,64 --D1=64k,8,64 --sweep-summary=bad/s.csv half.zst
check_contains "several configurations, -o without %c: the message" "must contain %c" "$out"
check "several configurations, -o without %c: exit status non-zero, not a replay's ($rc)" \
	bash -c '[ "$1" -ne 0 ] && ! grep -q "ends inside" <<<"$2"' _ "$rc" "$out"
check_empty "several configurations, -o without %c: nothing written" "$(ls -A bad)"
bad "smallest line sizes differ" "smallest line sizes differ" --D1=32k,8,32 --D1=32k,8,64
bad "L2 smaller than D1" "L2 (16384 B) is smaller than D1 (32768 B)" --D1=32k,8,64 --L2=16k,8,64
bad "L2 smaller than D1 in one configuration of a range" "is smaller than D1" \
	--D1=4k..64k,2,64 --L2=32k..64k,4,64
bad "L2 lines shorter than D1's" "L2's lines (32 B) are shorter than D1's (64 B)" --D1=32k,8,64 --L2=64k,8,32
bad "L2 larger than LL" "is smaller than L2" --L2=1M,8,64 --LL=512k,8,64
# Two outputs of one run that are one file: refused before the replay, and
# nothing written (the same name, a link to it, a cachegrind.out name).
rm -rf bad && mkdir bad
collide() {
	local what=$1 words=$2
	shift 2
	run "$CGTRACE" simulate "$@" half.zst
	check_contains "$what: the message" "$words" "$out"
	check "$what: exit status non-zero, not a replay's ($rc)" \
		bash -c '[ "$1" -ne 0 ] && ! grep -q "ends inside" <<<"$2"' _ "$rc" "$out"
	check_empty "$what: nothing written" "$(find bad -type f)"
}
collide "summary and plot, one name" "--plot 'bad/s.csv' names the same file as --sweep-summary 'bad/s.csv'" \
	-o 'bad/o.%c' --D1=32k..64k,8,64 --sweep-summary=bad/s.csv --plot=bad/s.csv
ln -s s.csv bad/link.csv
collide "summary through a link to the plot's name" \
	"--plot 'bad/./s.csv' names the same file as --sweep-summary 'bad/link.csv'" \
	-o 'bad/o.%c' --D1=32k..64k,8,64 --sweep-summary=bad/link.csv --plot=bad/./s.csv
collide "plot and a cachegrind.out, one name" \
	"--plot 'bad/o.D1-65536-8-64' names the same file as the output file 'bad/o.D1-65536-8-64'" \
	-o 'bad/o.%c' --D1=32k..64k,8,64 --plot=bad/o.D1-65536-8-64
collide "summary and the one cachegrind.out" "--sweep-summary 'bad/o.json' names the same file as the output file" \
	-o bad/o.json --sweep-summary=bad/o.json
rm -rf bad && mkdir bad
run "$CGTRACE" simulate -o 'bad/o.%c' --D1=32k..64k,8,64 --sweep-summary=bad/s.txt half.zst
check_contains "bad --sweep-summary extension: the message" "expected a name ending in .csv or .json" "$out"
check_eq "bad --sweep-summary extension: usage error" 2 "$rc"
check_empty "bad --sweep-summary extension: nothing written" "$(ls -A bad)"
run "$CGTRACE" simulate -o 'bad/o.%c' --caches=bogus half.zst
check_contains "--caches=bogus: the message" "bad --caches 'bogus' (expected host)" "$out"
check_eq "--caches=bogus: usage error" 2 "$rc"
check_empty "--caches=bogus: nothing written" "$(ls -A bad)"
