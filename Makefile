# cgtrace: one Makefile for the whole tree.
#
#   make          ./cgtrace and the Valgrind tool (lib/cgtrace/)
#   make demo     install missing packages, build, run the bundled example
#   make test     install missing packages, build, run every test
#   make test-pt  the same for the Intel PT tests only
#   make test-asan  every test again, with AddressSanitizer and UBSan
#   make bench    speed and size figures (scripts/bench.sh)

CC      ?= gcc
CFLAGS  ?= -O2 -g
# override: a CFLAGS given on the command line (make test-asan's) keeps these.
override CFLAGS += -std=c11 -Wall -Wextra -MMD -MP
# C11 for the language; the GNU C library for POSIX and Linux interfaces.
CPPFLAGS += -D_GNU_SOURCE -Iformats -Irecord -Idecode -Isimulate -Ireport
PKGS    := libzstd libelf libdw
# libiberty: the C++/Rust demangler Valgrind itself embeds.
LDLIBS  += $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lzstd -ldw -lelf) -ldebuginfod -liberty -lipt -lZydis -lpthread

B := build
# The command-line tool; make test-asan builds its own in its build directory.
BIN := cgtrace
# Objects linked into every program of a sanitized build (make test-asan).
SAN_OBJS :=

# Each stage is a static library with one header as its contract.
FORMATS_SRC := $(wildcard formats/*.c)
RECORD_SRC  := $(wildcard record/*.c record/pt/*.c) \
               $(filter-out record/valgrind/cgt_tool.c,$(wildcard record/valgrind/*.c))
DECODE_SRC  := $(wildcard decode/*.c decode/pt/*.c)
SIM_SRC     := $(wildcard simulate/*.c)
REPORT_SRC  := $(wildcard report/*.c)
CLI_SRC     := $(wildcard cli/*.c)

objs = $(patsubst %.c,$(B)/%.o,$(1))
# In link order: later stages first.
LIBS := $(B)/libreport.a $(B)/libsim.a $(B)/librecord.a $(B)/libdecode.a $(B)/libformats.a

.PHONY: all deps demo test test-pt test-build test-asan bench clean
all: $(BIN) lib/cgtrace/cgtrace-amd64-linux

$(B)/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(B)/libformats.a: $(call objs,$(FORMATS_SRC))
$(B)/librecord.a: $(call objs,$(RECORD_SRC))
$(B)/libdecode.a: $(call objs,$(DECODE_SRC))
$(B)/libsim.a: $(call objs,$(SIM_SRC))
$(B)/libreport.a: $(call objs,$(REPORT_SRC))
$(B)/%.a:
	@rm -f $@
	$(AR) rcs $@ $^

$(BIN): $(call objs,$(CLI_SRC)) $(LIBS) $(SAN_OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Profile-guided optimisation of the hot loops' files: the call-graph
# replay and its producer (simulate/callgraph*.c), simulate's
# workers (simulate/sim.c), the hierarchy engine (simulate/hier.c:
# --L2 and sweeps) and the general model's LRU level (simulate/level_lru.c:
# --simulate-wb, --simulate-hwpref).  Their loops are too large for gcc to place registers
# and spills well without knowing which paths are hot: with a profile,
# simulate --tool=callgrind takes 9% less CPU, simulate 5%, a D1 curve 10%.
# The profile is trained at build time on recordings of programs that are
# not the benchmark (scripts/pgo-train.sh; its log in
# $(B)/pgo/train.log).  PGO=no builds without it (make test-asan does);
# the flags are gcc's.
PGO ?= yes
ifeq ($(PGO),yes)
PGO_DIR := $(B)/pgo
PGO_SRC := $(wildcard simulate/callgraph*.c) simulate/cache_use.c simulate/sim.c simulate/hier.c simulate/level_lru.c
PGO_OBJS := $(call objs,$(PGO_SRC))
# Both compiles of a file under one name: gcc identifies a static
# function's profile by it, and keeps the profile at $(PGO_DIR)/NAME.gcda.
pgo_name = -dumpdir $(PGO_DIR)/ -dumpbase $(basename $(notdir $<))

$(PGO_DIR)/simulate/%.o: simulate/%.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fprofile-generate -fprofile-update=prefer-atomic $(pgo_name) -c $< -o $@
$(PGO_DIR)/libsim.a: $(filter-out $(PGO_OBJS),$(call objs,$(SIM_SRC))) $(patsubst $(B)/%,$(PGO_DIR)/%,$(PGO_OBJS))
$(PGO_DIR)/cgtrace: $(call objs,$(CLI_SRC)) $(subst $(B)/libsim.a,$(PGO_DIR)/libsim.a,$(LIBS))
	$(CC) $(CFLAGS) $(LDFLAGS) -fprofile-generate -o $@ $^ $(LDLIBS)
$(PGO_DIR)/trained: $(PGO_DIR)/cgtrace lib/cgtrace/cgtrace-amd64-linux \
		scripts/pgo-train.sh examples/matrix.c
	@echo "training the profile (scripts/pgo-train.sh)"
	@sh scripts/pgo-train.sh $(PGO_DIR) > $(PGO_DIR)/train.log 2>&1 || \
	  { cat $(PGO_DIR)/train.log >&2; echo "cgtrace: training the profile failed" \
	    "($(PGO_DIR)/train.log); make PGO=no builds without it" >&2; exit 1; }
	@touch $@
$(PGO_OBJS): $(B)/simulate/%.o: simulate/%.c Makefile $(PGO_DIR)/trained
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fprofile-use -fprofile-partial-training $(pgo_name) -c $< -o $@
endif

# The Valgrind tool: compiled against the installed Valgrind's headers and
# linked statically with its core libraries at the tool load address, as
# Valgrind's own Makefile.tool.am does.
VG_INC  := /usr/include/valgrind
VG_LIB  := /usr/lib/x86_64-linux-gnu/valgrind
VG_CFLAGS := -std=gnu11 -O2 -g -m64 -Wall -Wextra -Wno-unused-parameter \
	-fno-strict-aliasing -fno-builtin -fno-stack-protector -fomit-frame-pointer -fno-pie \
	-DVGA_amd64=1 -DVGO_linux=1 -DVGP_amd64_linux=1 -DVGPV_amd64_linux_vanilla=1 \
	-I$(VG_INC) -MMD -MP
VG_LDFLAGS := -m64 -static -nodefaultlibs -nostartfiles -u _start -Wl,--build-id=none \
	-Wl,-Ttext-segment=0x58000000

$(B)/record/valgrind/cgt_tool.o: record/valgrind/cgt_tool.c
	@mkdir -p $(dir $@)
	@test -f $(VG_INC)/pub_tool_basics.h && test -f $(VG_LIB)/libcoregrind-amd64-linux.a || \
	  { echo "cgtrace: Valgrind's tool headers and libraries are missing;" \
	         "install them with 'sudo apt-get install valgrind' (or scripts/install-deps.sh)" >&2; exit 1; }
	$(CC) $(VG_CFLAGS) -c $< -o $@

lib/cgtrace/cgtrace-amd64-linux: $(B)/record/valgrind/cgt_tool.o
	@mkdir -p $(dir $@)
	$(CC) $(VG_LDFLAGS) -o $@ $< $(VG_LIB)/libcoregrind-amd64-linux.a \
	  $(VG_LIB)/libvex-amd64-linux.a -lgcc $(VG_LIB)/libgcc-sup-amd64-linux.a

deps:
	@sh scripts/install-deps.sh

demo: deps
	@$(MAKE) --no-print-directory all
	@sh scripts/demo.sh

# ---- Tests --------------------------------------------------------------

UNIT_SRC  := $(wildcard tests/unit/*.c)
UNIT_BIN  := $(patsubst tests/unit/%.c,$(B)/tests/unit/%,$(UNIT_SRC))
PROG_SRC  := $(wildcard tests/programs/*.c)
PROG_CXX_SRC := $(wildcard tests/programs/*.cpp)
# libplugin.so: the library tests/programs/dlopen loads (its path is its argument).
PLUGIN    := $(B)/tests/programs/libplugin.so
PROG_BIN  := $(patsubst tests/programs/%.c,$(B)/tests/programs/%,$(PROG_SRC)) \
             $(patsubst tests/programs/%.cpp,$(B)/tests/programs/%,$(PROG_CXX_SRC)) $(PLUGIN)

$(B)/tests/unit/%: tests/unit/%.c $(LIBS) $(SAN_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) -o $@ $< $(LIBS) $(SAN_OBJS) $(LDLIBS)

# Test programs: -O1 -g, so that debug information and real code both exist.
PROG_CFLAGS := -O1 -g -std=gnu11 -Wall
$(B)/tests/programs/avx2: PROG_CFLAGS += -mavx2
$(B)/tests/programs/threads: PROG_CFLAGS += -pthread
$(B)/tests/programs/threaddumps: PROG_CFLAGS += -pthread
# its tail call must be a jmp, which -O1 alone does not make
$(B)/tests/programs/callgraph: PROG_CFLAGS += -foptimize-sibling-calls
$(B)/tests/programs/%: tests/programs/%.c
	@mkdir -p $(dir $@)
	$(CC) $(PROG_CFLAGS) -o $@ $<
PROG_CXXFLAGS := -O1 -g -Wall
# .cold parts: a jump into one, a landing pad's jump to one, are calls to Callgrind
$(B)/tests/programs/cxx_calls: PROG_CXXFLAGS += -freorder-blocks-and-partition
$(B)/tests/programs/%: tests/programs/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(PROG_CXXFLAGS) -o $@ $<
$(PLUGIN): tests/programs/plugin/libplugin.c
	@mkdir -p $(dir $@)
	$(CC) $(PROG_CFLAGS) -shared -fPIC -o $@ $<

test: deps
	@$(MAKE) --no-print-directory all test-build
	@sh tests/run-tests.sh

# The PT round trip's tools (tests/pt/): the synthesizer and the verdict.
PT_TOOLS := $(B)/tests/pt/pt-synth $(B)/tests/pt/pt-compare
PT_SYNTH_SRC := tests/pt/pt_synth.c tests/pt/pt_packets.c tests/pt/synth_sideband.c \
	tests/pt/synth_collapsed.c tests/pt/code_bytes.c
PT_COMPARE_SRC := tests/pt/pt_compare.c tests/pt/code_bytes.c
$(B)/tests/pt/pt-synth: $(call objs,$(PT_SYNTH_SRC)) $(LIBS) $(SAN_OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(B)/tests/pt/pt-compare: $(call objs,$(PT_COMPARE_SRC)) $(LIBS) $(SAN_OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(call objs,$(wildcard tests/pt/*.c)): CPPFLAGS += -Itests/pt

test-build: $(UNIT_BIN) $(PROG_BIN) $(PT_TOOLS)

# The Intel PT path alone (also part of make test).
test-pt: deps
	@$(MAKE) --no-print-directory all test-build
	@sh tests/run-tests.sh pt_ perf_pmu x86_insn

# Every test with the project built by AddressSanitizer and UBSan in
# build-asan/ (not the Valgrind tool, which runs inside Valgrind and cannot
# be: the normal one is linked in). Every sanitized process writes its
# reports under build-asan/sanitizer-logs (tests/sanitizer_options.c), and
# the runner fails the test during which one appeared -- whatever exit
# status the test expected of the command. ASAN_TESTS narrows the run.
ASAN := build-asan
ASAN_CFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
test-asan: deps
	@$(MAKE) --no-print-directory lib/cgtrace/cgtrace-amd64-linux
	@$(MAKE) --no-print-directory B=$(ASAN) BIN=$(ASAN)/cgtrace CFLAGS="$(ASAN_CFLAGS)" PGO=no \
	  SAN_OBJS=$(ASAN)/tests/sanitizer_options.o $(ASAN)/cgtrace test-build
	@mkdir -p $(ASAN)/lib/cgtrace
	@ln -sf $(CURDIR)/lib/cgtrace/cgtrace-amd64-linux $(ASAN)/lib/cgtrace/
	@rm -rf $(ASAN)/sanitizer-logs && mkdir -p $(ASAN)/sanitizer-logs
	@BUILD=$(ASAN) CGTRACE=$(CURDIR)/$(ASAN)/cgtrace SANITIZER_LOGS=$(CURDIR)/$(ASAN)/sanitizer-logs \
	  CGTRACE_SANITIZED=1 sh tests/run-tests.sh $(ASAN_TESTS)
$(ASAN)/tests/sanitizer_options.o: tests/sanitizer_options.c Makefile
	@mkdir -p $(dir $@)
	$(CC) -DSANITIZER_LOGS='"$(CURDIR)/$(ASAN)/sanitizer-logs"' $(CFLAGS) -c $< -o $@

bench: deps
	@$(MAKE) --no-print-directory all $(PT_TOOLS)
	@sh scripts/bench.sh

clean:
	rm -rf $(B) $(ASAN) cgtrace lib

-include $(shell find $(B) -name '*.d' 2>/dev/null)

# ---- Fuzzing (tests/fuzz/README.md) ------------------------------------
#
#   make fuzz                 every target for FUZZ_SECONDS (default 180)
#   make fuzz FUZZ_TARGETS=cgout FUZZ_SECONDS=60
#   make fuzz-build           the fuzzers only (build-fuzz/bin/)
#   make fuzz-clean           build-fuzz/ less its corpora
#
# Each target (tests/fuzz/TARGET.c) is built twice: with clang, libFuzzer,
# ASan and UBSan in build-fuzz/ for make fuzz; with $(CC) and the replay
# driver in $(B)/tests/fuzz/ for make test, which replays the committed
# inputs (tests/e2e/fuzz_regressions.sh).  The corpora grow in
# build-fuzz/corpus/TARGET, which make clean leaves alone.

FUZZ_TARGETS ?= trace_file trace_stream events cgout pt elf cache_options archive
FUZZ_SECONDS ?= 180
FZ := build-fuzz
FUZZ_CC := clang
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS := -O1 -g -std=c11 -Wall -Wextra -fno-omit-frame-pointer -MMD -MP \
	$(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZ_ALL := trace_file trace_stream events cgout pt elf cache_options archive
FUZZ_LIBS := $(FZ)/libreport.a $(FZ)/libsim.a $(FZ)/librecord.a $(FZ)/libdecode.a \
	$(FZ)/libformats.a
fuzz_objs = $(patsubst %.c,$(FZ)/obj/%.o,$(1))

.PHONY: fuzz fuzz-build fuzz-deps fuzz-clean

$(FZ)/obj/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) -Itests/fuzz $(FUZZ_CFLAGS) -c $< -o $@

$(FZ)/libformats.a: $(call fuzz_objs,$(FORMATS_SRC))
$(FZ)/librecord.a: $(call fuzz_objs,$(RECORD_SRC))
$(FZ)/libdecode.a: $(call fuzz_objs,$(DECODE_SRC))
$(FZ)/libsim.a: $(call fuzz_objs,$(SIM_SRC))
$(FZ)/libreport.a: $(call fuzz_objs,$(REPORT_SRC))
$(FUZZ_LIBS):
	@rm -f $@
	$(AR) rcs $@ $^

$(FZ)/bin/%: $(FZ)/obj/tests/fuzz/%.o $(FUZZ_LIBS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

# (the targets' objects are kept, so that a second make rebuilds nothing)
.SECONDARY: $(patsubst %,$(FZ)/obj/tests/fuzz/%.o,$(FUZZ_ALL))

fuzz-deps:
	@sh scripts/install-deps.sh fuzz

fuzz-build: fuzz-deps
	@$(MAKE) --no-print-directory $(patsubst %,$(FZ)/bin/%,$(FUZZ_TARGETS))

# Seeds come from the test build: traces recorded, PT traces synthesized.
fuzz: fuzz-deps
	@$(MAKE) --no-print-directory all test-build $(patsubst %,$(FZ)/bin/%,$(FUZZ_TARGETS))
	@sh scripts/fuzz-seeds.sh $(FZ)/seeds
	@FUZZ_SECONDS=$(FUZZ_SECONDS) sh scripts/fuzz.sh $(FZ) $(FUZZ_TARGETS)

fuzz-clean:
	rm -rf $(FZ)/obj $(FZ)/bin $(FZ)/seeds $(FZ)/logs $(FZ)/*.a

# The replay drivers, part of the test build.
FUZZ_REPLAY := $(patsubst %,$(B)/tests/fuzz/%,$(FUZZ_ALL))
$(call objs,$(wildcard tests/fuzz/*.c)): CPPFLAGS += -Itests/fuzz
$(FUZZ_REPLAY): $(B)/tests/fuzz/%: $(B)/tests/fuzz/%.o $(B)/tests/fuzz/replay_main.o $(LIBS) \
		$(SAN_OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)
test-build: $(FUZZ_REPLAY)

-include $(shell find $(FZ) -name '*.d' 2>/dev/null)
