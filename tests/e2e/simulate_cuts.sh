# Executions cut short by a fault the program recovers from (its SIGSEGV
# handler makes the access possible): the recording keeps what they did
# up to the fault, and simulate counts what Cachegrind counted of them --
# the events its instrumentation had passed to the simulation before the
# faulting statement, which depend on --cache-sim.  tests/programs/faults
# faults after a side exit, cutfaults after a full queue of events, at a
# read-modify-write, at a write after a read of the same byte, across a
# page boundary, and after an aligned load's check (a side exit); divfault
# at a division (its handler jumps out), which the recorder cannot place.
# (Callgrind's reading of them: tests/e2e/simulate_callgrind.sh.)
source "$(dirname "$0")/../lib.sh"
plan 33

caches="--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"
options=("--cache-sim=yes --branch-sim=yes" "--cache-sim=no" "--cache-sim=no --branch-sim=yes")

for p in faults cutfaults divfault; do
	clean_env "$CGTRACE" record -o $p.zst -- "$PROGS/$p" >/dev/null 2>$p.notes
	for o in "${options[@]}"; do
		rm -f cg.out ct.out
		CG_OPTS="$o $caches" cachegrind cg.out "$PROGS/$p"
		"$CGTRACE" simulate -q $o $caches -o ct.out $p.zst
		check_eq "$p, $o: Cachegrind's totals" "$(summary_line cg.out)" "$(summary_line ct.out)"
		check_same_file "$p, $o: Cachegrind's file, byte for byte" cg.out ct.out
		[ "$o" = "${options[0]}" ] && cp cg.out cg-default.out
	done
	# Every count cgtrace prints is Cachegrind's (its default, with cache
	# simulation), although the trace holds what the cut executions ran.
	check_eq "$p: info's Ir Dr Dw are Cachegrind's" \
		"$(summary_field cg-default.out Ir) $(summary_field cg-default.out Dr) $(summary_field cg-default.out Dw)" \
		"$(info_counts $p.zst)"
	check_eq "$p: record's summary counts Cachegrind's Ir" "$(summary_field cg-default.out Ir)" \
		"$(sed -n 's/^cgtrace: recorded \([0-9,]*\) instructions .*/\1/p' $p.notes | tr -d ,)"
done
check_contains "cutfaults: info says what the cut executions ran that is not counted" \
	"cut short by a fault:    10 executions, which up to the fault also ran" "$("$CGTRACE" info cutfaults.zst)"

dump=$("$CGTRACE" dump cutfaults.zst)
check_eq "cutfaults: ten executions cut short, each at an access" 10 \
	"$(grep -c -- '-> cut short by a fault at its last access$' <<<"$dump")"
check_eq "... each before a SIGSEGV's delivery" 10 \
	"$(grep -A1 -- '-> cut short by a fault' <<<"$dump" | grep -c '^# T1 signal 11 delivered$')"
check_eq "... twice the write after a read of the same byte, the access that faulted" 2 \
	"$(grep -c -- 'R 0x[0-9a-f]*:2  W 0x[0-9a-f]*:2  -> cut short by a fault at its last access$' <<<"$dump")"

# Segments simulated in parallel from unknown states give the same file.
"$CGTRACE" simulate -q --threads=1 --branch-sim=yes $caches -o t1.out cutfaults.zst
"$CGTRACE" simulate -q --threads=8 --branch-sim=yes $caches -o t8.out cutfaults.zst
check_same_file "cutfaults: 1 and 8 threads, the same file" t1.out t8.out
# The hierarchy engine simulates the same references (its L1 misses are
# the plain simulation's).
"$CGTRACE" simulate -q --branch-sim=yes $caches --L2=262144,8,64 -o l2.out cutfaults.zst
check_eq "cutfaults: with --L2, the same D1 misses" "$(summary_field t1.out D1mr) $(summary_field t1.out D1mw)" \
	"$(summary_field l2.out D1mr) $(summary_field l2.out D1mw)"

check_contains "info: format version 4" "format version 4" "$("$CGTRACE" info cutfaults.zst)"


# A fault at no data access (a division's SIGFPE) cannot be placed: the
# recording keeps the execution's entry and says so.
notes=$(clean_env "$CGTRACE" record -o div.zst -- "$PROGS/divfault" 2>&1 >/dev/null)
check_contains "divfault: record warns of the execution it cannot place" \
	"warning: 1 execution cut short by a fault at no data access (a division's SIGFPE): where it stopped is not known, and only its start is in the trace" "$notes"
check_eq "... which the trace holds as cut somewhere after its entry" 1 \
	"$("$CGTRACE" dump div.zst | grep -c -- '-> cut short by a fault somewhere after its entry$')"
