# cgtrace simulate --tool=callgrind writes what Callgrind writes: each
# program recorded once, its trace replayed into callgrind.out files, and
# each compared (tests/tools/callgrind_compare.py: the profile, not the
# text) with the file of a real Callgrind run of the same program, with
# the same arguments and environment: without simulation (Callgrind's
# default), then with caches and branch predictors.  faults, cutfaults and
# divfault recover from faults in the middle of blocks: Callgrind counts
# such an execution as left by the last side exit it passed.
#
# Files: every run names its outputs with %p (the recorded program's pid
# for cgtrace), as Callgrind needs for the fork child, which writes a file
# of its own (with the parent's costs from before the fork).  A client
# request dump adds .1, .2, ... (cgrequests: after-region, then a plain
# dump, then the end, three files).  Files pair up by the rank of their
# pid among the tool's files (the parent's is the lower) and that suffix.
# Every trace the recording wrote is simulated: the recorder writes the
# fork child's into a trace of its own, which begins with the parent's up
# to the fork, as Callgrind's child file has the parent's costs.  The
# Valgrind backend records: the
# call graph's facts (stack pointers, client requests, signals) are in its
# traces only.
#
# To keep the files of a run: KEEP_WORK=DIR.
source "$(dirname "$0")/../lib.sh"

configs=("" "--cache-sim=yes --branch-sim=yes --I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64")
config_names=("no simulation" "caches and branches")
source "$ROOT/tests/callgrind_cases.sh"
