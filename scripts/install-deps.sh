#!/bin/sh
# Installs the Debian packages cgtrace needs to build, test and run, if any
# are missing.  Idempotent and quiet when everything is present.
#
#   gcc make pkg-config        build
#   g++                        the C++ test program (tests/programs/*.cpp)
#   libzstd-dev                trace container (formats/)
#   libelf-dev libdw-dev       build-ids (record), symbols and lines (report)
#   libdebuginfod-dev          modules' files from debuginfod servers (report)
#   debuginfod                 a local server for the test of that
#   libiberty-dev              C++/Rust demangling, the demangler Valgrind embeds
#   libipt-dev libzydis-dev    Intel PT decoding (decode/pt)
#   valgrind                   the Valgrind backend: tool headers, static core
#                              libraries, launcher; Cachegrind for the tests
#   zstd                       the zstd CLI, used by the tests (zstd -t)
#   python3                    small helpers in the test suite
#   strace                     the tests count the threads simulate starts
#   librsvg2-bin               rsvg-convert: tests/tools/check_plot.py renders
#                              sweep plots (--plot) to PNG, so an SVG that a
#                              real renderer rejects fails the tests
#   graphviz                   dot: tests/e2e/report_callgrind_dot.sh renders
#                              report --format=dot's call graphs to SVG and
#                              reads what was drawn from it, so a graph
#                              Graphviz rejects fails the tests
#
# With the argument "fuzz" (make fuzz), also:
#   clang libclang-rt-N-dev    clang and its libFuzzer and sanitizer runtimes
#                              (N: clang's major version; a recommendation
#                              of clang that --no-install-recommends skips)
set -eu

PACKAGES="gcc g++ make pkg-config libzstd-dev libelf-dev libdw-dev libdebuginfod-dev debuginfod libiberty-dev libipt-dev libzydis-dev valgrind zstd python3 strace librsvg2-bin graphviz"
if [ "${1:-}" = fuzz ]; then
	PACKAGES="$PACKAGES clang"
	if command -v clang >/dev/null 2>&1; then
		PACKAGES="$PACKAGES libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev"
	fi
fi

missing=""
for p in $PACKAGES; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$status" in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done
if [ -z "$missing" ]; then
	exit 0
fi

echo "install-deps: installing:$missing"
if [ "$(id -u)" -eq 0 ]; then
	SUDO=""
elif command -v sudo >/dev/null 2>&1; then
	SUDO="sudo"
else
	echo "install-deps: these packages are missing:$missing" >&2
	echo "install-deps: run this script as root, or install sudo, or install them yourself:" >&2
	echo "    apt-get install$missing" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1; then
	# A fresh machine may have no package lists yet.
	$SUDO apt-get update -q >/dev/null
	$SUDO apt-get install -y -q --no-install-recommends $missing >/dev/null
fi
# clang was missing: now that it is here, its runtimes.
if [ "${1:-}" = fuzz ] && ! dpkg-query -W -f='${Status}' \
	"libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev" 2>/dev/null | grep -q ' installed'; then
	exec sh "$0" fuzz
fi
