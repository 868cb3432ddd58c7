# simulate's options and bad input: Cachegrind's messages and order, the
# event subsets, output naming, truncated and stale inputs.
source "$(dirname "$0")/../lib.sh"
plan 51

run() { out=$("$@" 2>&1); rc=$?; }
clean_env "$CGTRACE" record -q -o loops.zst -- "$PROGS/loops" >/dev/null

# Invalid configurations: Cachegrind's messages (with our name), its exit status.
for opt in --D1=65536,3,64 --D1=65536,8,63 --D1=65536,8,8 --D1=64,1,64 --D1=4096,128,64 \
	--LL=12582912,16,64 --D1=99999999999,8,64 --D1=65536,8,64, --D1=65536,8 --I1=x,2,64; do
	expected=$(valgrind --tool=cachegrind "$opt" /bin/true 2>&1 | sed 's/^valgrind: /cgtrace: /')
	run "$CGTRACE" simulate "$opt" loops.zst
	check_eq "$opt: Cachegrind's messages" "$expected" "$out"
	check_eq "$opt: exit status 1" 1 "$rc"
done
run "$CGTRACE" simulate --I1=32768,0,64 loops.zst
check_contains "zero associativity: the newest Cachegrind's message" "Cache associativity is zero." "$out"
run "$CGTRACE" simulate --D1=65536,2,16 loops.zst
check_contains "lines smaller than a register: refused" \
	"cannot continue: the minimum line size (16)" "$out"
run "$CGTRACE" simulate --D1=32k,8,64 -q -o k.out loops.zst
check_eq "k suffix (an extension) accepted" "desc: D1 cache:         32768 B, 64 B, 8-way associative" \
	"$(grep 'D1 cache' k.out)"
run "$CGTRACE" simulate --cache-sim=maybe loops.zst
check_eq "bad --cache-sim: usage error" 2 "$rc"

# The event subsets, each as Cachegrind writes them.
cfg="--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"
for mode in "--cache-sim=no" "--cache-sim=no --branch-sim=yes" "--cache-sim=yes" "--cache-sim=yes --branch-sim=no"; do
	rm -f cg.out ct.out
	CG_OPTS="$mode $cfg" cachegrind cg.out "$PROGS/loops"
	"$CGTRACE" simulate -q $mode $cfg -o ct.out loops.zst
	check_same_file "$mode: cachegrind.out identical to Cachegrind's" cg.out ct.out
done

# LL's two layouts (simulate/ll_model.h): more than 16 ways; and too few
# sets for 32-bit tags of the stack's addresses (the lanes give way).
l1="--I1=32768,8,64 --D1=32768,8,64"
for ll in --LL=3145728,24,64 --LL=16384,4,64; do
	rm -f cg.out ct.out
	CG_OPTS="--cache-sim=yes $l1 $ll" cachegrind cg.out "$PROGS/loops"
	"$CGTRACE" simulate -q $l1 $ll -o ct.out loops.zst
	check_same_file "$ll: cachegrind.out identical to Cachegrind's" cg.out ct.out
done

# The summary on stderr: Cachegrind's, line for line (its ==pid== prefix too).
clean_env valgrind --tool=cachegrind --vex-guest-chase=no --cache-sim=yes --branch-sim=yes $cfg \
	--cachegrind-out-file=cg.out "$PROGS/loops" 2>cg.err >/dev/null
"$CGTRACE" simulate --branch-sim=yes $cfg -o ct.out loops.zst 2>ct.err
check_eq "the end-of-run summary is Cachegrind's" \
	"$(sed -n '/I   refs/,$p' cg.err | sed 's/^==[0-9]*==//')" \
	"$(sed -n '/I   refs/,$p' ct.err | sed 's/^==[0-9]*==//')"
check_contains "the configuration in use is printed" "D1 32768 B, 64 B, 8-way associative" "$(cat ct.err)"

# Cachegrind 3.19's own cg_annotate reads the file.
run cg_annotate ct.out
check_eq "cg_annotate (Valgrind 3.19) reads it" 0 "$rc"
check "cg_annotate prints a report without a warning" bash -c 'grep -q "PROGRAM TOTALS" <<<"$1" && ! grep -q WARNING <<<"$1"' _ "$out"

# Default name: cachegrind.out.<recorded pid>; %p.
pid=$("$CGTRACE" info loops.zst | awk '/^pid:/ { print $2 }')
"$CGTRACE" simulate -q loops.zst
check "default output: cachegrind.out.<pid of the recorded program>" test -s "cachegrind.out.$pid"
"$CGTRACE" simulate -q --cachegrind-out-file=out.%p loops.zst
check "--cachegrind-out-file with %p" test -s "out.$pid"
desc=$(grep '^desc: D1' "cachegrind.out.$pid")
check_contains "default caches: the recording host's" "desc: D1 cache:" "$desc"

# Unwritable output: an error naming it, nothing written.
run "$CGTRACE" simulate -o /nonexistent-dir/out loops.zst
check_eq "unwritable output: exit status 1" 1 "$rc"
check_contains "unwritable output: names it" "cannot write '/nonexistent-dir/out'" "$out"

# A failed run leaves an earlier result alone.
echo "earlier result" > kept.out
printf 'not a trace\n' > bad.zst
run "$CGTRACE" simulate -o kept.out bad.zst
check_eq "not a trace: message" "cgtrace: bad.zst: not a cgtrace trace" "$out"
check_eq "a failed run keeps the earlier output" "earlier result" "$(cat kept.out)"

# Unknown version.
zstd -dc loops.zst > stream.bin
printf '\143\000\000\000' | dd of=stream.bin bs=1 seek=8 conv=notrunc 2>/dev/null
zstd -q -f stream.bin -o future.zst
run "$CGTRACE" simulate -o f.out future.zst
check_contains "unknown version: clear error" "trace format version 99 is not supported" "$out"
check_eq "unknown version: exit status 1" 1 "$rc"

# Truncated: what is there is simulated, with a warning and exit status 3.
clean_env "$CGTRACE" record -q -o big.zst -- "$PROGS/ptrchase" 400000 >/dev/null
head -c $(($(stat -c %s big.zst) / 2)) big.zst > half.zst
run "$CGTRACE" simulate -o half.out half.zst
check_eq "truncated trace: exit status 3" 3 "$rc"
check_contains "truncated trace: warning with the byte offset" "the file ends inside a zstd frame at byte offset" "$out"
check "truncated trace: a cachegrind.out is written" test -s half.out
check "truncated trace: fewer instructions than the whole" test \
	"$(summary_line half.out | cut -d' ' -f1)" -lt "$("$CGTRACE" info big.zst | awk '/\(Ir\)/ { gsub(",", "", $3); print $3 }')"

# A module that changed since recording: one warning, ??? positions.
cp "$PROGS/loops" ./prog
# Found in no build-id cache (earlier recordings kept the same program in
# the test's): that case is build_id_cache.sh's.
clean_env "$CGTRACE" record -q --no-build-id-cache -o prog.zst -- ./prog >/dev/null
"$CGTRACE" simulate -q -o before.out prog.zst
check "before the change: main is named" grep -q '^fn=main$' before.out
printf 'x' >> prog
"$CGTRACE" simulate --build-id-dir="$WORK/no-cache" -o after.out prog.zst 2>after.err
check_eq "changed module: one warning" 1 "$(grep -c 'prog has changed size since recording' after.err)"
check "changed module: no position from the changed file" bash -c 'grep -q "^summary:" after.out && ! grep -q "^fn=main$" after.out'
rm prog
"$CGTRACE" simulate --build-id-dir="$WORK/no-cache" -o gone.out prog.zst 2>gone.err
check_contains "missing module: warned" "is missing or unreadable" "$(cat gone.err)"
