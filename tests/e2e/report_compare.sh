# cgtrace report --compare: three simulations of one trace with D1 caches
# of different sizes, side by side -- against their summary: lines and
# cg_annotate's per-function counts; ordering, --top, --show, JSON, and
# the inputs it refuses.
source "$(dirname "$0")/../lib.sh"
plan 33

run() { out=$("$@" 2>err); rc=$?; }
clean_env "$CGTRACE" record -q -o t.zst -- "$PROGS/ptrchase" >/dev/null
files=()
for size in 4096 16384 65536; do
	f=cachegrind.out.1234.D1-$size-8-64.LL-8388608-16-64
	"$CGTRACE" simulate -q --D1=$size,8,64 --LL=8388608,16,64 -o "$f" t.zst
	files+=("$f")
done

# A section's rows: the counts (separators dropped), the change, the name.
section() { awk -v s="-- $1" 'index($0, s) == 1 { on = 1; getline; next } /^$/ { on = 0 } on' | tr -d ,; }
# The names of section's rows: what follows the counts and the change.
names_of() { sed 's/^ *[-0-9]*  *[-0-9]*  *[-0-9]*  *[-+0-9]*\( ([-+0-9.]*%)\)\{0,1\}  //'; }
counts_of() { awk -v n="$1" '{ for (i = 1; i <= n; i++) printf "%s%s", $i, i < n ? " " : "\n" }'; }
# cg_annotate (3.19) on one file: "count<TAB>file:function" for every function.
cga_functions() {
	cg_annotate --show="$2" --threshold=0 --auto=no "$1" | sed -n '/file:function/,$p' |
		sed -n 's/^ *\([0-9][0-9,]*\)\( *( *[0-9.]*%)\)\{0,1\}  *\([^ ].*\)$/\1\t\3/p' | tr -d ,
}
cga_count() { cga_functions "$1" "$2" | awk -F '\t' -v k="$3" '$2 == k { print $1 }'; }

run "$CGTRACE" report --compare "${files[@]}"
check_eq "three files: exit 0, nothing on stderr" "0 " "$rc $(cat err)"
echo "$out" >default.txt
check_eq "default event: the miss event the sweep changed most" "Event:  D1mr" "$(head -1 default.txt)"
check_eq "columns headed by what the names do not share" "D1-4096-8-64 D1-16384-8-64 D1-65536-8-64 change" \
	"$(grep -A1 '^-- Program totals' default.txt | tail -1 | tr -s ' ' | sed 's/^ //')"

totals=$(section "Program totals" <default.txt)
expected_totals="$(summary_field "${files[0]}" D1mr) $(summary_field "${files[1]}" D1mr) $(summary_field "${files[2]}" D1mr)"
check_eq "totals row: each file's summary: D1mr" "$expected_totals" "$(echo "$totals" | counts_of 3)"
check_eq "totals row: the change from the first to the last, and its percentage" \
	"$(echo "$expected_totals" | awk '{ d = $3 - $1; printf "%+d (%+.1f%%)", d, 100 * d / $1 }')" \
	"$(echo "$totals" | awk '{ print $4, $5 }')"

fns=$(section "Functions" <default.txt)
for name in "$ROOT/tests/programs/ptrchase.c:main" "./elf/./elf/dl-lookup.c:do_lookup_x"; do
	check_eq "$name: each file's count as cg_annotate's" \
		"$(for f in "${files[@]}"; do cga_count "$f" D1mr "$name"; done | xargs)" \
		"$(echo "$fns" | grep -F "  $name" | counts_of 3)"
done
# The ranking cg_annotate's counts give: the largest in any file first,
# then by file and function.
for f in "${files[@]}"; do cga_functions "$f" D1mr; done >cga.tsv
expected_order=$(python3 -c '
import sys
best = {}
for line in open("cga.tsv"):
    count, name = line.rstrip("\n").split("\t")
    best[name] = max(best.get(name, 0), int(count))
ranked = sorted((n for n in best if best[n]), key=lambda n: (-best[n], n.split(":", 1)))
print("\n".join(ranked[:20]))')
check_eq "functions: the 20 with the largest count in any file, as cg_annotate's counts rank them" \
	"$expected_order" "$(echo "$fns" | names_of)"
check_eq "functions: the section says how many of how many" \
	"-- Functions: the 20 of $(python3 -c 'import sys; print(len({l.split("\t")[1] for l in open("cga.tsv") if int(l.split("\t")[0])}))') with the most D1mr in any file" \
	"$(grep '^-- Functions' default.txt)"

lines=$(section "Lines" <default.txt)
check_eq "lines: 20 rows" 20 "$(echo "$lines" | grep -c .)"
check_eq "lines: by the largest count in any file, descending" \
	"$(echo "$lines" | awk '{ m = $1; for (i = 2; i <= 3; i++) if ($i > m) m = $i; print m }' | sort -rn)" \
	"$(echo "$lines" | awk '{ m = $1; for (i = 2; i <= 3; i++) if ($i > m) m = $i; print m }')"
# The top line's counts, summed from each file's own (fl, fn, line) entries.
top_line=$(echo "$lines" | head -1 | names_of)
check_eq "lines: the top line's counts are those of its entries in each file" \
	"$(for f in "${files[@]}"; do awk -v want="$top_line" '
		/^events:/ { for (i = 2; i <= NF; i++) if ($i == "D1mr") col = i }
		/^fl=/ { fl = substr($0, 4) } /^fn=/ { fn = substr($0, 4) }
		/^[0-9]/ && fl ":" $1 " " fn == want { s += $col } END { print s + 0 }' "$f"; done | xargs)" \
	"$(echo "$lines" | head -1 | counts_of 3)"
check_contains "lines: the program's hottest loop is among them" "$ROOT/tests/programs/ptrchase.c:" "$lines"

# --top, --show.
run "$CGTRACE" report --compare --top=3 "${files[@]}"
check_eq "--top=3: the first 3 functions" "$(echo "$fns" | head -3)" "$(echo "$out" | section Functions)"
check_eq "--top=3: the first 3 lines" "$(echo "$lines" | head -3)" "$(echo "$out" | section Lines)"
run "$CGTRACE" report --compare --show=D1mr "${files[@]}"
check_eq "--show=D1mr: the default's output" "$(cat default.txt)" "$out"
run "$CGTRACE" report --compare --show=DLmr "${files[@]}"
check_eq "--show=DLmr: that event" "Event:  DLmr" "$(echo "$out" | head -1)"
check_eq "--show=DLmr: totals row: each file's summary: DLmr" \
	"$(for f in "${files[@]}"; do summary_field "$f" DLmr; done | xargs)" \
	"$(echo "$out" | section "Program totals" | counts_of 3)"
top_fn=$(echo "$out" | section Functions | head -1 | names_of)
check_eq "--show=DLmr: the top function's counts as cg_annotate's" \
	"$(for f in "${files[@]}"; do cga_count "$f" DLmr "$top_fn"; done | xargs)" \
	"$(echo "$out" | section Functions | head -1 | counts_of 3)"

# JSON: the text's data.
run "$CGTRACE" report --compare --format=json "${files[@]}"
echo "$out" >compare.json
check_eq "JSON: exit 0, and it parses" "0 ok" "$rc $(python3 -c 'import json; json.load(open("compare.json")); print("ok")')"
check_eq "JSON: agrees with the text" "agree" "$(python3 -c '
import json
j = json.load(open("compare.json"))
text = open("default.txt").read().split("\n")
def rows(title):
    i = next(k for k, l in enumerate(text) if l.startswith("-- " + title)) + 2
    out = []
    while text[i]:
        f = text[i].replace(",", "").split(None, 4)
        name = f[4].split(")  ", 1)[1] if f[4].startswith("(") else f[4].lstrip()
        out.append(([int(x) for x in f[:3]], name))
        i += 1
    return out
want = (["D1mr"], [rows("Program totals")[0][0]],
        rows("Functions"), rows("Lines"))
got = ([j["event"]], [j["totals"]],
       [(r["counts"], r["file"] + ":" + r["name"]) for r in j["functions"]],
       [(r["counts"], "%s:%d %s" % (r["file"], r["line"], r["function"])) for r in j["lines"]])
print("agree" if want == got and len(got[2]) == 20 else "differ: %r\n%r" % (want, got))')"
check_eq "JSON: files and labels" \
	"${files[*]}|D1-4096-8-64 D1-16384-8-64 D1-65536-8-64" \
	"$(python3 -c 'import json; j = json.load(open("compare.json")); print(" ".join(j["files"]) + "|" + " ".join(j["labels"]))')"

# What it refuses: a message naming the problem, a non-zero exit, no output.
run "$CGTRACE" report --compare "${files[0]}"
check_eq "one file: usage error (2), nothing on stdout" "2 " "$rc $out"
check_contains "one file: says two or more are needed" "--compare: two or more cachegrind-out-files" "$(cat err)"
run "$CGTRACE" report --compare "${files[0]}" missing.out
check_eq "a missing file: exit 1, nothing on stdout" "1 " "$rc $out"
check_contains "a missing file: named" "No such file or directory: 'missing.out'" "$(cat err)"
"$CGTRACE" simulate -q --D1=4096,8,64 --LL=8388608,16,64 --branch-sim=yes -o branches.out t.zst
run "$CGTRACE" report --compare "${files[0]}" branches.out
check_eq "other events: exit 1, nothing on stdout" "1 " "$rc $out"
check_contains "other events: the file and both events lines named" \
	"branches.out: its events (Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw Bc Bcm Bi Bim) are not those of ${files[0]} (Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw)" \
	"$(cat err)"
run "$CGTRACE" report --compare --show=Bcm "${files[@]}"
check_eq "an event not in the files: exit 1, nothing on stdout" "1 " "$rc $out"
check_contains "an event not in the files: named, with the files' events" \
	"no event \`Bcm\` in ${files[0]}: its events are Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw" "$(cat err)"
run "$CGTRACE" report --compare --show=D1mr,DLmr "${files[@]}"
check_eq "--show with a list: usage error (2)" "2 " "$rc $out"
run "$CGTRACE" report --compare --sort=Ir "${files[@]}"
check_contains "an option of the annotation refused" "argument --compare: not allowed with argument --sort" "$(cat err)"
run "$CGTRACE" report --top=3 "${files[0]}"
check_eq "--top without --compare: usage error (2)" "2 " "$rc $out"
