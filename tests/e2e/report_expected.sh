# cgtrace report against outputs of the newest cg_annotate: the shared
# golden cases (tests/report/golden, as received) and our own
# (tests/report/cases, see its README).  Output must match byte for byte
# apart from the Invocation: line, which names the program; stderr and the
# exit status too, except that for option errors (status 2) only the final
# "error:" line is compared, since the usage text before it is argparse's.
source "$(dirname "$0")/../lib.sh"

# The plan: per case its exit status, then its option error (status 2) or
# its stdout and stderr.
planned=0
for args in "$ROOT"/tests/report/golden/*.args "$ROOT"/tests/report/cases/*.args; do
	name=${args%.args}
	if [ "$(cat "$name.status" 2>/dev/null)" = 2 ]; then
		planned=$((planned + 2))
	else
		planned=$((planned + 3))
	fi
done
plan "$planned"

# run_cases DIR: runs every NAME.args in a copy of DIR.
run_cases() {
	local dir=$WORK/$(basename "$1") args name want_status status
	cp -r "$1" "$dir"
	# cg_annotate warns about sources newer than the data file; only
	# src/newer.c is meant to be.
	touch -d 2020-01-01 "$dir"/src/*
	touch -d 2021-01-01 "$dir"/*.cgout
	[ -e "$dir/src/newer.c" ] && touch -d 2022-01-01 "$dir/src/newer.c"
	for args in "$dir"/*.args; do
		name=$(basename "$args" .args)
		if [ -e "$dir/$name.status" ]; then
			want_status=$(cat "$dir/$name.status")
		elif [ -s "$dir/$name.out" ]; then
			want_status=0
		else
			want_status=1 # the golden error case
		fi
		# shellcheck disable=SC2046 # the arguments are words
		(cd "$dir" && "$CGTRACE" report $(cat "$args") >"$name.got" 2>"$name.goterr")
		status=$?
		check_eq "$name: exit status" "$want_status" "$status"
		if [ "$want_status" = 2 ]; then
			check_eq "$name: option error" "$(sed 's/^[^:]*: error: //' "$dir/$name.err")" \
				"$(tail -n1 "$dir/$name.goterr" | sed 's/^[^:]*: error: //')"
			continue
		fi
		if diff <(grep -v '^Invocation:' "$dir/$name.out") <(grep -v '^Invocation:' "$dir/$name.got") >"$dir/$name.diff"; then
			ok "$name: stdout as cg_annotate's ($(cat "$args"))"
		else
			not_ok "$name: stdout as cg_annotate's ($(cat "$args"))"
			head -20 "$dir/$name.diff" | sed 's/^/  /'
		fi
		check "$name: stderr as cg_annotate's" cmp -s "$dir/$name.err" "$dir/$name.goterr"
	done
}

run_cases "$ROOT/tests/report/golden"
run_cases "$ROOT/tests/report/cases"
