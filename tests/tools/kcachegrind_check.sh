#!/bin/bash
# Loads callgrind.out files in Debian's KCachegrind, on a virtual X server,
# and fails if its loader warns about any line of them.  Not part of
# `make test`: KCachegrind is a large optional dependency.
#
#   apt-get install -y --no-install-recommends kcachegrind xvfb xdotool imagemagick
#   tests/tools/kcachegrind_check.sh [--screenshots=DIR] [--events=A,B]
#       [--function=NAME] FILE...
#
# Each FILE is loaded as a user loads it, by its name alone, so that its
# later dumps and threads (FILE.1, FILE.2, ..., FILE-01, FILE.1-01, ...)
# are loaded with it as parts; nothing else beside it is.  KCachegrind's
# loader reports a line it cannot read through Qt's warning or critical
# message, "Loading <file> : <line> : <what>"; those are printed, and any
# of them fails the check (exit 1), as does a file that does not load.
# Before the files, a small profile with a line KCachegrind cannot read is
# loaded, and its message must be seen: otherwise the messages are not
# reaching us and the check could not fail (exit 1 too).
#
# --screenshots=DIR: a screenshot of each file loaded, DIR/<its name>.png,
# with the event types A (the flat profile's and the views') and B (the
# call lists' second column) chosen: by default AcCost1,SpLoss1 where the
# file has cache-use events, KCachegrind's first otherwise; the function
# NAME (default main) is selected, the Types tab above (its costs of
# every event type) and the Callees tab below.
# Exit status: 0 clean, 1 a warning (or no window, or the canary unseen),
# 2 usage or a missing program.
set -u

usage() {
	sed -n '2,/^# Exit status/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

if [ "${1:-}" = --inside ]; then
	inside=yes
	shift
else
	inside=no
fi

# Inside the X server and the D-Bus session: kcachegrind_one DIR NAME
# CONFIG_HOME OUT PNG: KCachegrind loads DIR/NAME with its configuration
# in CONFIG_HOME, its messages go to OUT, the screen to PNG (if not
# empty); OUT.missing says why, if no window showed the file loaded.
kcachegrind_one() {
	local dir=$1 name=$2 config_home=$3 out=$4 png=$5 pid window="" deadline=$((SECONDS + 60))
	XDG_CONFIG_HOME=$config_home kcachegrind "$dir/$name" >"$out" 2>&1 &
	pid=$!
	# The title names the file once it is loaded (KCachegrind sets it
	# after the loader has returned); DIR's name is unique and has no
	# character special in a regular expression.  A search fails now and
	# then, when a window it looks at goes away meanwhile: searched again.
	while [ -z "$window" ] && [ "$SECONDS" -lt "$deadline" ] && kill -0 "$pid" 2>/dev/null; do
		sleep 0.5
		window=$(xdotool search --all --onlyvisible --pid "$pid" --name "${dir##*/}/" \
			2>/dev/null | head -n 1)
	done
	if [ -z "$window" ]; then
		{
			echo "no window with the file loaded within 60 s; its windows:"
			for window in $(xdotool search --pid "$pid" '' 2>/dev/null); do
				echo "  '$(xdotool getwindowname "$window")'"
			done
			kill -0 "$pid" 2>/dev/null || echo "  (it had ended)"
		} >"$out.missing"
	elif [ -n "$png" ]; then
		xdotool windowsize "$window" 100% 100%
		sleep 2	# (it lays out and paints after the resize)
		import -window root "$png"
	fi
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	[ ! -e "$out.missing" ]
}

if [ "$inside" = yes ]; then
	# Arguments: lines of "DIR NAME CONFIG_HOME OUT PNG" on stdin.
	status=0
	while read -r dir name config_home out png; do
		[ "$png" = - ] && png=""
		kcachegrind_one "$dir" "$name" "$config_home" "$out" "$png" || status=1
	done
	exit "$status"
fi

screenshots="" events="" function=main
files=()
for arg in "$@"; do
	case "$arg" in
	--screenshots=*) screenshots=${arg#*=} ;;
	--events=*) events=${arg#*=} ;;
	--function=*) function=${arg#*=} ;;
	-h | --help | -*) usage ;;
	*) files+=("$arg") ;;
	esac
done
[ "${#files[@]}" -gt 0 ] || usage
for f in "${files[@]}"; do
	[ -f "$f" ] || { echo "kcachegrind_check: $f: no such file" >&2; exit 2; }
done
needed="kcachegrind xvfb-run dbus-run-session xdotool"
[ -n "$screenshots" ] && needed="$needed import"
for program in $needed; do
	command -v "$program" >/dev/null || {
		echo "kcachegrind_check: $program is missing; apt-get install -y --no-install-recommends kcachegrind xvfb xdotool imagemagick" >&2
		exit 2
	}
done
if [ -n "$screenshots" ]; then
	mkdir -p "$screenshots" || exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/kcachegrind_check.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP
mkdir -m 700 "$work/run" "$work/home"

# config FILE CONFIG_HOME: KCachegrind's settings for FILE: no tip of the
# day, absolute costs, the event types, the function and the tabs.
config() {
	local file=$1 config_home=$2 first second
	first=${events%%,*} second=""
	[ "$events" = "${events#*,}" ] || second=${events#*,}
	if [ -z "$events" ] && grep -q '^events:.* AcCost1\b' "$file"; then
		first=AcCost1 second=SpLoss1
	fi
	mkdir -p "$config_home"
	{
		printf '[TipOfDay]\nRunOnStart=false\n\n[GeneralSettings]\nShowPercentage=false\n\n'
		printf '[CurrentState]\n'
		[ -z "$first" ] || printf 'EventType=%s\n' "$first"
		[ -z "$second" ] || printf 'EventType2=%s\n' "$second"
		printf '\n[MainView-TabView-1]\nActiveTop=EventTypeView\nActiveBottom=CalleeView\n'
		printf 'ActiveItemType=Function\nActiveItemName=%s\n' "$function"
	} >"$config_home/kcachegrindrc"
}

# add_case N FILE PNG: a directory of its own for FILE and its dumps, named
# so that the window's title can be found, and the line for --inside.
add_case() {
	local n=$1 file=$2 png=$3 name dump
	local dir=$work/case$n
	name=${file##*/}
	mkdir "$dir"
	ln -s "$(realpath "$file")" "$dir/$name"
	for dump in "$file".* "$file"-*; do
		[[ "${dump#"$file"}" =~ ^(\.[0-9]+)?(-[0-9]+)?$ ]] &&
			ln -s "$(realpath "$dump")" "$dir/${dump##*/}"
	done
	config "$file" "$work/config$n"
	echo "$dir $name $work/config$n $work/out$n ${png:--}"
}

# The canary: a profile whose line 7 no loader reads.
canary=$work/canary.out
printf '%s\n' '# callgrind format' 'version: 1' 'cmd: canary' 'positions: line' 'events: Ir' \
	'summary: 1' 'this line is not callgrind' 'fn=main' '1 1' >"$canary"
canary_line=7
{
	add_case 0 "$canary" ""
	for i in "${!files[@]}"; do
		png=""
		[ -z "$screenshots" ] || png=$(realpath "$screenshots")/${files[$i]##*/}.png
		add_case $((i + 1)) "${files[$i]}" "$png"
	done
} >"$work/cases"

# (Without Qt's OpenGL integration, which loads Mesa's software renderer
# and LLVM with it for nothing: the slowest part of a start.)
env -i PATH=/usr/bin:/bin HOME="$work/home" XDG_RUNTIME_DIR="$work/run" LANG=C.UTF-8 \
	QT_MESSAGE_PATTERN='%{type}: %{message}' QT_XCB_GL_INTEGRATION=none \
	QT_LOGGING_RULES='default.warning=true;default.critical=true' \
	xvfb-run -a -s '-screen 0 1600x1000x24' dbus-run-session -- "$0" --inside \
	<"$work/cases" >"$work/session.out" 2>&1
session=$?

# loader_messages N: KCachegrind's messages about lines of case N's files.
loader_messages() {
	grep -E '^(warning|critical): Loading ' "$work/out$1"
}

# loaded N: whether case N's files were loaded; if not, why not.
loaded() {
	[ -e "$work/out$1" ] && [ ! -e "$work/out$1.missing" ] && return
	sed 's/^/  /' "$work/out$1.missing" "$work/out$1" "$work/session.out" 2>/dev/null
	return 1
}

status=0
why=$(loaded 0) || { echo "FAIL canary: not loaded"; echo "$why"; exit 1; }
if [ "$(loader_messages 0 | grep -c ": $canary_line :  \"Invalid line 'this line is not callgrind'\"")" != 1 ]; then
	echo "FAIL canary: KCachegrind's message about line $canary_line of a damaged profile was not seen:"
	sed 's/^/  /' "$work/out0" "$work/session.out"
	exit 1
fi
echo "ok   canary: line $canary_line of a damaged profile: $(loader_messages 0 | sed "s|$work/case0/||")"
for i in "${!files[@]}"; do
	n=$((i + 1))
	parts=$(ls "$work/case$n" | wc -l)
	if ! why=$(loaded "$n"); then
		echo "FAIL ${files[$i]}: not loaded"
		echo "$why"
		status=1
	elif loader_messages "$n" >/dev/null; then
		echo "FAIL ${files[$i]} ($parts file(s)): KCachegrind's loader warns:"
		loader_messages "$n" | sed "s|$work/case$n/||; s/^/  /"
		status=1
	else
		echo "ok   ${files[$i]} ($parts file(s)): loaded, no warning"
	fi
done
[ "$session" = 0 ] || [ "$status" = 1 ] || {
	echo "FAIL the X session ended with status $session:"
	sed 's/^/  /' "$work/session.out"
	status=1
}
exit "$status"
