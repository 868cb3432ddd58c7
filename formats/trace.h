/*
 * cgtrace trace files: the container and its records.
 *
 * A trace file is a sequence of independent zstd frames; decompressed, the
 * frames form one stream: the 16-byte stream header, then records.  No
 * record spans two frames, so a reader can use every complete frame of a
 * truncated file.  formats/TRACE-FORMAT.md is the specification.
 *
 * Conventions: functions return 0 (or a positive count) on success and a
 * negative cgt_status on failure, with a message (naming the file, the byte
 * offset and what was expected) in the caller's struct cgt_error.
 */
#ifndef CGTRACE_TRACE_H
#define CGTRACE_TRACE_H

#include <stddef.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "varint.h"

#define CGT_TRACE_MAGIC      "CGTRACE\n"
#define CGT_TRACE_MAGIC_LEN  8
#define CGT_TRACE_VERSION    4	/* written; versions 1 to 3 are still read */
#define CGT_STREAM_HEADER_LEN 16

/* Bounds every reader enforces (and every writer respects). */
#define CGT_FRAME_MAX        (4u << 20)	/* decompressed bytes per frame */
#define CGT_RECORD_MAX       (1u << 20)	/* payload bytes per record */
/* A writer begins a new segment at the first segment point after this
   many bytes of records; with records flushed at well under 1 MiB, a
   segment fits one frame. */
#define CGT_SEGMENT_TARGET   (3u << 20)

/* What one record may claim, from what the producers can write: the
   Valgrind tool asserts at most 512 instructions and 4096 ops per block
   (record/valgrind/cgt_tool.c; VEX itself stops a superblock at 100
   guest instructions), the PT decode writes at most 64 instructions and
   64 x 33 + 1 ops (decode/pt/pt_convert.c).  Exits are ops, so at most
   4096 per block too.  Paths are at most PATH_MAX (the tool cuts them
   there), a command-line argument at most MAX_ARG_STRLEN (Linux). */
#define CGT_BLOCK_MAX_INSNS  512u
#define CGT_BLOCK_MAX_OPS    4096u
#define CGT_PATH_MAX         4096u
#define CGT_ARG_MAX          (128u << 10)

/* What a reader may keep for the whole trace (block definitions, module
   mappings) grows with the trace, but no faster than its compressed
   bytes can justify: at most CGT_MEMORY_BASE plus CGT_MEMORY_PER_BYTE
   bytes per byte of the file up to the end of the frame being read.
   Recorded traces need under 10: block definitions take about 12 bytes
   per byte of their BLOCKS records, which compress 2.5 to 3 times, and
   EVENTS come between them (at most 8.6 bytes per byte of file at any
   point of a cc1 run of 192,000 blocks, 5.5 for perl; BLOCKS alone
   would need 37).  A trace that needs more than 256 was made to exhaust
   memory, and is refused. */
#define CGT_MEMORY_BASE      (16u << 20)
#define CGT_MEMORY_PER_BYTE  256u

enum cgt_status {
	cgt_ok = 0,
	cgt_err_io = 1,		/* read or write failed */
	cgt_err_not_trace,	/* not a cgtrace trace (or archive) at all */
	cgt_err_version,	/* a format version this build cannot read */
	cgt_err_corrupt,	/* a length, count or value out of bounds */
	cgt_err_nomem,
	cgt_err_invalid,	/* a bad argument from the caller */
	cgt_err_not_found,	/* a program to run is not there (a shell's 127) */
	cgt_err_not_executable,	/* ... is there but cannot be executed (a shell's 126) */
};

struct cgt_error {
	int status;
	char msg[768];
};

/* Sets e (if not NULL) and returns -status. printf-style. */
int cgt_fail(struct cgt_error *e, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

enum cgt_record_type {
	CGT_REC_HEADER = 1,
	CGT_REC_MODULE = 2,
	CGT_REC_UNMAP = 3,
	CGT_REC_BLOCKS = 4,
	CGT_REC_EVENTS = 5,
	CGT_REC_END = 6,
	/* The pt backend's (trace_pt.c) */
	CGT_REC_PT_CONFIG = 7,
	CGT_REC_SIDEBAND = 8,
	CGT_REC_AUX = 9,
	CGT_REC_IMAGE = 10,
	CGT_REC_SEGMENT = 11,	/* version 2: a segment begins (delta state reset) */
	CGT_REC_REQUEST = 12,	/* version 3: a client request */
	CGT_REC_SIGNAL = 13,	/* version 3: a signal delivered or returned from */
};

/* ---- Record payloads --------------------------------------------------- */

enum cgt_cache_type { CGT_CACHE_DATA = 1, CGT_CACHE_INSN = 2, CGT_CACHE_UNIFIED = 3 };

struct cgt_cache_geom {
	uint32_t level;		/* 1, 2, 3 ... */
	uint32_t type;		/* enum cgt_cache_type */
	uint64_t size;		/* bytes */
	uint32_t assoc;		/* ways; equal to size/line for fully associative */
	uint32_t line;		/* bytes */
};

#define CGT_MAX_CACHES 8

/* A trace of blocks and executions decoded from a pt trace (decode/pt/):
   where it came from, what was lost, how data addresses were estimated. */
struct cgt_pt_decoded {
	uint32_t present;
	uint32_t decoder_version;	/* a change invalidates stored decodes */
	uint64_t source_size;		/* of the pt trace decoded */
	int64_t source_mtime_ns;
	uint64_t insns;			/* decoded */
	uint64_t errors;		/* decode errors, each a resync at a PSB */
	uint64_t bytes_skipped;		/* of packets, by those resyncs */
	uint64_t overflows;		/* the CPU's internal overflows */
	uint64_t breaks;		/* lost or truncated pieces of trace */
	uint64_t modules_left_out;	/* changed since recording: not decoded */
	uint64_t sideband_lost;		/* sideband records the kernel dropped */
	uint64_t mem_period;		/* one memory sample per N accesses; 0: none */
	uint64_t samples;		/* memory samples of the program */
	uint64_t samples_placed;	/* matched to an instruction execution */
};

/* How Valgrind's VEX cut the program into blocks, which decides the
   counts: Callgrind's translation (no chasing, no unrolling) counts what
   the CPU executed; Cachegrind's default chases, and may count code that
   did not run. */
struct cgt_vex_translation {
	int present;		/* 0: not recorded (the pt backend, older traces) */
	uint32_t guest_chase;	/* 1: --vex-guest-chase=yes */
	uint32_t unroll_thresh;	/* --vex-iropt-unroll-thresh */
	uint32_t max_insns;	/* --vex-guest-max-insns */
};

struct cgt_trace_header {
	char *backend;		/* "valgrind" or "pt" */
	uint32_t argc;
	char **argv;		/* the recorded program and its arguments */
	char *cwd;
	uint64_t pid;
	char *cpu_vendor;	/* CPUID vendor string, e.g. "AuthenticAMD" */
	char *cpu_name;		/* brand string */
	uint32_t cpu_family, cpu_model, cpu_stepping;
	uint32_t n_caches;
	struct cgt_cache_geom caches[CGT_MAX_CACHES];
	uint32_t page_size;
	uint64_t start_time_ns;	/* Unix time */
	char *recorder;		/* e.g. "valgrind-3.19.0" */
	uint32_t max_access_size; /* largest guest register in bytes */
	struct cgt_pt_decoded decoded;	/* a pt trace decoded into blocks */
	struct cgt_vex_translation vex;	/* the valgrind backend's */
	uint64_t forked_from;	/* a fork child's trace: its parent's pid; else 0 */
};

struct cgt_module {
	uint64_t start, size;	/* the executable mapping */
	uint64_t file_offset;
	uint32_t prot;		/* 1 read, 2 write, 4 exec */
	char *path;
	uint8_t build_id[64];
	uint32_t build_id_len;	/* 0: none found */
	uint64_t file_size;	/* at record time; 0 if the file was unreadable */
	int64_t mtime_ns;
};

enum cgt_end_kind {
	CGT_END_EXIT = 1,	/* exited with code */
	CGT_END_SIGNAL = 2,	/* killed by signal code */
	CGT_END_LOST = 3,	/* the recorder lost the program's stream */
};

struct cgt_trace_counts {
	uint64_t insns;		/* executed instructions (Cachegrind's Ir) */
	uint64_t reads;		/* plain and guarded-taken reads */
	uint64_t writes;	/* plain and guarded-taken writes */
	uint64_t modifies;	/* read-modify-write (Cachegrind counts them as reads) */
	uint64_t conds;		/* conditional branches (Bc) */
	uint64_t indirects;	/* indirect jumps and calls (Bi) */
	uint64_t block_execs;
	uint64_t blocks;	/* distinct block definitions */
	uint64_t threads;
};

struct cgt_trace_end {
	uint32_t kind;		/* enum cgt_end_kind */
	int32_t code;
	struct cgt_trace_counts counts;
};

/* Blocks: a block is the static description of a piece of code that
   executes as a unit; each execution is a prefix of its ops. */
enum cgt_op_kind {
	CGT_OP_INSN = 0,	/* an instruction begins: fetch insns[insn] */
	CGT_OP_READ = 1,
	CGT_OP_WRITE = 2,
	CGT_OP_MODIFY = 3,	/* read and write of one address: one access */
	CGT_OP_READ_GUARDED = 4,	/* happens only when its guard holds */
	CGT_OP_WRITE_GUARDED = 5,
	CGT_OP_EXIT = 6,	/* the block may end here; not a branch */
	CGT_OP_COND = 7,	/* conditional branch, may end the block */
	CGT_OP_COND_INV = 8,	/* same, taken when the exit is not */
	CGT_OP_INDIRECT = 9,	/* indirect jump or call, last op */
	/* the stack pointer at the block's entry, op 1: its values are a
	   stream of their own (cgt_events_sp) */
	CGT_OP_SP = 10,
	CGT_OP_KIND_COUNT
};

/* How an exit leaves its block, as Valgrind's VEX classed it: what a call
   graph is made of. */
enum cgt_jump_kind {
	CGT_JUMP_BORING = 0,	/* a jump, a branch, or the fall-through */
	CGT_JUMP_CALL = 1,
	CGT_JUMP_RETURN = 2,
	CGT_JUMP_SYSCALL = 3,
	CGT_JUMP_CLIENT_REQUEST = 4,	/* Valgrind's client request sequence */
	CGT_JUMP_OTHER = 5,	/* a fault, an emulation warning, ... */
	CGT_JUMP_KIND_COUNT
};

/* An exit's jump: its kind and, when the code fixes it, its destination. */
struct cgt_jump {
	uint64_t dst;
	uint8_t kind;		/* enum cgt_jump_kind */
	uint8_t dst_known;	/* 0: computed at run time (a return, an indirect jump) */
};

static inline int cgt_op_is_exit(unsigned kind)
{
	return kind >= CGT_OP_EXIT && kind <= CGT_OP_COND_INV;
}

static inline int cgt_op_is_guarded(unsigned kind)
{
	return kind == CGT_OP_READ_GUARDED || kind == CGT_OP_WRITE_GUARDED;
}

/* Ops whose executions carry a value in the events stream. */
static inline int cgt_op_has_value(unsigned kind)
{
	return (kind >= CGT_OP_READ && kind <= CGT_OP_WRITE_GUARDED) || kind == CGT_OP_INDIRECT;
}

struct cgt_insn {
	uint64_t addr;
	uint32_t len;
};

struct cgt_op {
	uint8_t kind;		/* enum cgt_op_kind */
	uint8_t reserved;
	uint16_t insn;		/* index into the block's insns */
	uint32_t size;		/* data ops: bytes accessed (not clamped) */
};

/* The events of an executed prefix of a block, guarded accesses aside. */
struct cgt_prefix_counts {
	uint32_t insns, reads, writes, modifies, conds, indirects;
};

struct cgt_block {
	uint32_t id;
	uint32_t n_insns, n_ops;
	uint32_t n_exits, n_values;
	uint32_t n_guarded;	/* guarded accesses among the ops */
	uint32_t map_epoch;	/* module-map records seen before this block */
	struct cgt_insn *insns;
	struct cgt_op *ops;
	uint32_t *exit_ops;	/* op index of each exit, in order */
	uint32_t *value_ops;	/* op index of each op with a value, in order */
	uint64_t *last_value;	/* codec state: previous value of each value op */
	/* [0]: ran to the end; [k]: left by exit k (1-based) */
	struct cgt_prefix_counts *prefix_counts;
	uint32_t *values_in_prefix;	/* same indexing: value ops executed */
	uint32_t *ops_in_prefix;	/* same indexing: ops executed */
	/* same indexing: the outcomes of the prefix's conditional branches
	   (the last 64), the last in bit 0 */
	uint64_t *cond_outcomes;
	/* Same indexing: how each exit jumps, [0] the block's end; NULL where
	   the trace does not say (version 2 and older, the pt backend). */
	struct cgt_jump *jumps;
	uint64_t last_sp_change;	/* encoder: the stack pointer's, see cgt_events_sp */
	uint32_t segment;	/* encoder: last_value belongs to this segment */
	uint8_t has_sp;		/* ops[1] is CGT_OP_SP */
	/* A block cut short by a fault (version 4): what an execution of block
	   cut_from did before the fault stopped it (cut_kind says where).
	   Its instructions and ops are a prefix of that block's.  NULL: an
	   ordinary block. */
	const struct cgt_block *cut_from;
	uint8_t cut_kind;	/* enum cgt_cut_kind */
};

enum cgt_cut_kind {
	/* up to the instruction that faulted, whose last op is the access
	   that faulted (it did not complete) */
	CGT_CUT_AT_ACCESS = 1,
	/* where is not known (no access faulted: a division's SIGFPE): only
	   the block's entry, its first instruction's op and the stack
	   pointer, is kept */
	CGT_CUT_UNPLACED = 2,
};

/* Marks a guarded access whose guard was false in a decoded value array. */
#define CGT_NO_ACCESS UINT64_MAX

/* ---- Growable arrays (array.c) ----------------------------------------- */

/* Every growable array grows here, so that one rule (doubling, overflow
   checks) holds for all.  array is the address of the array's pointer (of
   any type) and *cap its capacity in elements of size bytes: makes room for
   len + n elements and returns 0, or -1 if out of memory or the size
   overflows, the array and *cap untouched.  Callers compare len + n with
   their capacity inline first, so that appending costs a call only when the
   array must grow. */
int cgt_array_grow(void *array, size_t *cap, size_t len, size_t n, size_t size);

/* The encoders' byte array. */
struct cgt_buf {
	uint8_t *data;
	size_t len, cap;
};

/* Grows b to hold n more bytes; returns a pointer to them or NULL. */
uint8_t *cgt_buf_grow(struct cgt_buf *b, size_t n);
void cgt_buf_free(struct cgt_buf *b);

/* Makes room for n more bytes; returns a pointer to them or NULL. */
static inline uint8_t *cgt_buf_reserve(struct cgt_buf *b, size_t n)
{
	return b->len + n <= b->cap ? b->data + b->len : cgt_buf_grow(b, n);
}

/* ---- Writer ----------------------------------------------------------- */

struct cgt_writer;
struct cgt_block_table;

/* Writes to fd (not closed by the writer); compression runs on a thread of
   its own.  path is used in messages only. */
int cgt_writer_open(struct cgt_writer **w, int fd, const char *path, struct cgt_error *e);
int cgt_writer_put(struct cgt_writer *w, unsigned type, const uint8_t *payload, size_t len,
		   struct cgt_error *e);
/* Ends the frame being filled (if any) and hands it to the thread, so
   that it reaches the file soon: what a recorder killed later leaves. */
int cgt_writer_flush(struct cgt_writer *w, struct cgt_error *e);
/* Compressed bytes written so far (completed frames). */
uint64_t cgt_writer_bytes(const struct cgt_writer *w);
/* A point where the producer has put every EVENTS payload it encoded with
   t: once CGT_SEGMENT_TARGET bytes of records were put since the last
   segment began, begins a new one -- a new frame after a segment marker,
   starting with a SEGMENT record of t's branch history -- and resets t's
   delta state. */
int cgt_writer_segment_point(struct cgt_writer *w, struct cgt_block_table *t,
			     struct cgt_error *e);
/* Hands the frame being filled to the thread and waits until every frame
   is in the file; *end is then the file's size (-1: not a regular file). */
int cgt_writer_sync(struct cgt_writer *w, int64_t *end, struct cgt_error *e);
/* After a sync: leaves n bytes for the caller to fill later (pwrite);
   the frames that follow go after them. */
int cgt_writer_skip(struct cgt_writer *w, uint64_t n, struct cgt_error *e);
/* In a process forked after a sync, where the thread did not come along:
   frees w without writing anything. */
void cgt_writer_forsake(struct cgt_writer *w);
/* Writes the last frame, joins the thread and frees w. */
int cgt_writer_close(struct cgt_writer *w, struct cgt_error *e);

/* ---- Reader ----------------------------------------------------------- */

struct cgt_reader;

struct cgt_record {
	unsigned type;
	const uint8_t *payload;
	size_t len;
	uint64_t stream_offset;	/* of the payload, in the decompressed stream */
	uint64_t frame_offset;	/* file offset of the frame that holds it */
	const char *path;	/* the trace file, for messages */
	uint64_t frame_size;	/* compressed bytes of that frame */
};

/* The memory a reader may hold for the trace up to rec's frame
   (CGT_MEMORY_BASE, CGT_MEMORY_PER_BYTE). */
static inline uint64_t cgt_memory_allowed(const struct cgt_record *rec)
{
	return CGT_MEMORY_BASE + CGT_MEMORY_PER_BYTE * (rec->frame_offset + rec->frame_size);
}

/* Opens a trace and checks its stream header. */
int cgt_reader_open(struct cgt_reader **r, const char *path, struct cgt_error *e);
/* The same, for a reader that survives damage (TRACE-FORMAT.md, "Damage"):
   a stretch of the file where no whole frame can be found is passed over
   to the next segment marker (or, too short to hold a frame, to the zstd
   frame after it) and noted (cgt_reader_damage) instead of being an
   error. */
int cgt_reader_open_skipping(struct cgt_reader **r, const char *path, struct cgt_error *e);
uint32_t cgt_reader_version(const struct cgt_reader *r);

/* Reading record by record: 1, a record; 0: end of the trace; negative:
   error.  The record stays valid until the next call. */
int cgt_reader_next(struct cgt_reader *r, struct cgt_record *rec, struct cgt_error *e);

/* Reading frame by frame, from several threads: the frames in file order,
   each decompressed and read by whoever took it.  A frame begins a segment
   (TRACE-FORMAT.md, "Segments") or continues the one before it. */
struct cgt_frame {
	uint64_t index;			/* 0, 1, ... in file order */
	uint64_t file_offset;
	uint64_t stream_offset;		/* of its content in the stream */
	int starts_segment;		/* the first frame, or one after a marker */
	int segment_continues;		/* the next frame continues the segment */
	size_t damage_before;		/* stretches of damage passed over before it
					   that may have held frames */
	uint8_t *compressed;
	size_t compressed_len, compressed_cap;
	uint8_t *data;			/* content (CGT_FRAME_MAX bytes of room) */
	size_t len, pos;		/* content length; next record */
	int decompressed;
	const char *path;
	void *dctx;
};

/* Frame 0, decompressed (open read its stream header), for a look at its
   records before anyone takes it; NULL once taken.  The caller reads a
   copy of it and frees nothing. */
const struct cgt_frame *cgt_reader_first_frame(const struct cgt_reader *r);
/* The next frame, compressed: 1, 0 at the end of the trace, negative on
   error.  Thread-safe.  f is reused from call to call. */
int cgt_reader_take_frame(struct cgt_reader *r, struct cgt_frame *f, struct cgt_error *e);
/* Decompresses f and points its record cursor at its first record. */
int cgt_frame_decompress(struct cgt_frame *f, struct cgt_error *e);
/* Its next record: 1, 0 after the last, negative if malformed. */
int cgt_frame_next_record(struct cgt_frame *f, struct cgt_record *rec, struct cgt_error *e);
/* Back to the first record. */
void cgt_frame_rewind(struct cgt_frame *f);
void cgt_frame_free(struct cgt_frame *f);
/* After the end: a message if the file ended in an incomplete frame
   (truncated), else NULL. */
const char *cgt_reader_truncation(const struct cgt_reader *r);

/* A stretch of a damaged trace that could not be used. */
struct cgt_damage {
	uint64_t start, end;	/* file offsets: [start, end) */
	uint64_t frames;	/* zstd frames whose executions are lost (0: unknown) */
	uint64_t segment;	/* the segment it cuts short or loses (-1: unknown) */
	int whole_segment;	/* nothing of that segment was used */
	char why[768];		/* the first thing found wrong, with its offset */
	int frame_follows;	/* a stretch too short to hold a frame: read on at
				   the zstd frame after it, in the same segment */
};
/* The stretches passed over so far, in file order (cgt_reader_open_skipping). */
size_t cgt_reader_damage(const struct cgt_reader *r, const struct cgt_damage **d);
uint64_t cgt_reader_file_size(const struct cgt_reader *r);
uint64_t cgt_reader_file_offset(const struct cgt_reader *r);	/* consumed so far */
void cgt_reader_close(struct cgt_reader *r);

/* Quick check used before overwriting a file: 1 if path starts like a
   cgtrace trace, 0 if not, negative if it cannot be read. */
int cgt_file_is_trace(const char *path);

/* Moves the file from to the name to, never replacing what is there:
   0, or -1 with errno (EEXIST: to exists). */
int cgt_rename_noreplace(const char *from, const char *to);

/* ---- Temporaries removed when a signal ends the run (temporaries.c) --- */

/*
 * A file or directory made for a while -- a result before it is renamed
 * into place, a decode or an archive unpacked for this run -- is
 * registered as soon as it is made and unregistered once it is renamed or
 * removed, so that the CLI's handler of a signal that ends the run can
 * remove what is left (cgt_temporaries_remove_all).  The registry keeps
 * the pointer, not a copy: path must stay as it is until unregistered.
 * Any thread may register and unregister at any time, also while a
 * handler runs; a thread that does so once the removal has begun waits
 * for the process to die (having removed a path it registered, which the
 * removal may have missed).  At most CGT_TEMPORARIES_MAX at once: a path
 * beyond them is not removed by a signal (a run makes a few, a PT decode
 * one more per IMAGE record, which a trace has at most 256 of).
 */
#define CGT_TEMPORARIES_MAX 1024
void cgt_temporary_register(const char *path);
void cgt_temporary_unregister(const char *path);
/* For a signal handler (async-signal-safe): removes every registered path
   -- a file, or a directory with all in it, never following a symbolic
   link -- and returns; in a second caller (a signal on another thread), it
   waits for the process to die instead.  */
void cgt_temporaries_remove_all(void);
/* Waits for the process to die if a removal has begun on another thread,
   so that a run that ends meanwhile exits with the signal's status. */
void cgt_temporaries_wait_if_removing(void);
/* The signals that end a run and remove its temporaries: SIGINT, SIGTERM,
   SIGHUP and SIGPIPE (the CLI handles these). */
sigset_t cgt_temporaries_signals(void);
/* Between making a temporary and registering it, a signal would leave it:
   hold blocks those signals in the calling thread (*was: its mask
   before), release restores the mask, and a signal held meanwhile is
   taken then, the temporary registered.  Threads the stages start take
   none of them (cgt_thread_create), so a held thread holds off the
   handler. */
void cgt_temporaries_hold(sigset_t *was);
void cgt_temporaries_release(const sigset_t *was);
/* pthread_create, the new thread with those signals blocked: the thread
   that began the run takes them. */
int cgt_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg);

/* ---- Payload codecs (trace_records.c) -------------------------------- */

int cgt_header_encode(struct cgt_buf *b, const struct cgt_trace_header *h);
int cgt_header_decode(struct cgt_trace_header *h, const struct cgt_record *rec, struct cgt_error *e);
void cgt_header_free(struct cgt_trace_header *h);

int cgt_module_encode(struct cgt_buf *b, const struct cgt_module *m);
int cgt_module_decode(struct cgt_module *m, const struct cgt_record *rec, struct cgt_error *e);
void cgt_module_free(struct cgt_module *m);

int cgt_unmap_encode(struct cgt_buf *b, uint64_t start, uint64_t size);
int cgt_unmap_decode(uint64_t *start, uint64_t *size, const struct cgt_record *rec,
		     struct cgt_error *e);

int cgt_end_encode(struct cgt_buf *b, const struct cgt_trace_end *end);
int cgt_end_decode(struct cgt_trace_end *end, const struct cgt_record *rec, struct cgt_error *e);

/* Something that happened to a thread between two of its executions, in
   stream order: a client request (Callgrind's or Cachegrind's) or a
   signal handler's start or end. */
enum cgt_mark_kind {
	CGT_MARK_NONE = 0,
	CGT_MARK_REQUEST = 1,
	CGT_MARK_SIGNAL_DELIVERED = 2,	/* its handler runs next */
	CGT_MARK_SIGNAL_RETURNED = 3,	/* the interrupted code goes on */
};

#define CGT_REQUEST_TEXT_MAX 4096

struct cgt_mark {
	enum cgt_mark_kind kind;
	uint32_t tid;
	uint32_t code;		/* a request's: 0x4354nnnn Callgrind's, 0x4347nnnn Cachegrind's */
	uint32_t signo;		/* a signal's */
	int alt_stack;		/* a delivered signal's handler runs on the alternate stack */
	char *text;		/* a request's string (CALLGRIND_DUMP_STATS_AT's), else ""; malloc'd */
};

int cgt_mark_encode(struct cgt_buf *b, const struct cgt_mark *m);
/* A REQUEST or SIGNAL record into *m (whose text it frees first). */
int cgt_mark_decode(struct cgt_mark *m, const struct cgt_record *rec, struct cgt_error *e);
void cgt_mark_free(struct cgt_mark *m);
/* The record type that holds m. */
static inline unsigned cgt_mark_record_type(const struct cgt_mark *m)
{
	return m->kind == CGT_MARK_REQUEST ? CGT_REC_REQUEST : CGT_REC_SIGNAL;
}

const char *cgt_record_type_name(unsigned type);

/* ---- The pt backend's records (trace_pt.c) --------------------------- */

enum cgt_pt_event_kind {
	CGT_PT_EVENT_TRACE = 1,		/* the intel_pt event: AUX data and sideband */
	CGT_PT_EVENT_MEM_LOADS = 2,	/* load samples (PEBS) */
	CGT_PT_EVENT_MEM_STORES = 3,	/* store samples */
};

#define CGT_PT_MAX_EVENTS 8
#define CGT_PT_MAX_IDS 4096

/* One kind of perf event the recorder opened (one per CPU): what a reader
   needs to parse its SIDEBAND records. */
struct cgt_pt_event {
	uint32_t kind;		/* enum cgt_pt_event_kind */
	uint32_t perf_type;	/* perf_event_attr.type */
	uint64_t config, config1;
	uint64_t sample_type;	/* perf_event_attr.sample_type */
	uint64_t period;	/* sampling period (memory events) */
	uint32_t n_ids;
	uint64_t *ids;		/* the events' perf ids, as in PERF_SAMPLE_IDENTIFIER */
};

struct cgt_pt_config {
	uint32_t mtc_period;		/* the MTC rate field of the PT config */
	uint32_t cpuid15_eax, cpuid15_ebx;	/* TSC/ART ratio (CPUID 0x15) */
	uint32_t nom_freq;		/* max_nonturbo_ratio */
	/* perf time <-> TSC (struct perf_event_mmap_page) */
	uint32_t time_shift, time_mult, cap_user_time_zero;
	uint64_t time_zero;
	uint32_t n_events;
	struct cgt_pt_event events[CGT_PT_MAX_EVENTS];
	char *samples_missing;		/* why there are no memory samples; NULL if there are */
};

int cgt_pt_config_encode(struct cgt_buf *b, const struct cgt_pt_config *c);
int cgt_pt_config_decode(struct cgt_pt_config *c, const struct cgt_record *rec,
			 struct cgt_error *e);
void cgt_pt_config_free(struct cgt_pt_config *c);

/* SIDEBAND: one perf record (struct perf_event_header and its body, as the
   kernel wrote it) from the ring of cpu. */
int cgt_sideband_encode(struct cgt_buf *b, uint32_t cpu, const void *perf_record, size_t len);
int cgt_sideband_decode(uint32_t *cpu, const uint8_t **perf_record, size_t *len,
			const struct cgt_record *rec, struct cgt_error *e);

/* AUX: bytes of cpu's Intel PT stream, starting at offset in it. */
int cgt_aux_encode(struct cgt_buf *b, uint32_t cpu, uint64_t offset, const void *data, size_t len);
int cgt_aux_decode(uint32_t *cpu, uint64_t *offset, const uint8_t **data, size_t *len,
		   const struct cgt_record *rec, struct cgt_error *e);

/* ---- perf records inside SIDEBAND (perf_records.c) ------------------ */

/* The sample_id every sideband record ends with (sample_id_all), for the
   sample_type it was written with: which fields are present. */
struct cgt_perf_sample_id {
	uint32_t pid, tid;
	uint64_t time;		/* perf time, ns */
	uint32_t cpu;
	uint64_t id;		/* the event's id (PERF_SAMPLE_IDENTIFIER) */
};

struct cgt_perf_mmap2 {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t prot, flags;
	uint8_t build_id[20];
	uint32_t build_id_len;	/* 0 unless the kernel sent one */
	const char *filename;	/* within the record */
};

/* A PERF_RECORD_SAMPLE of a memory event (its sample_type must be a
   subset of IDENTIFIER IP TID TIME ADDR CPU WEIGHT DATA_SRC). */
struct cgt_perf_sample {
	uint64_t id, ip;
	uint32_t pid, tid;
	uint64_t time, addr;
	uint32_t cpu;
	uint64_t weight, data_src;
};

/* The perf record's type (PERF_RECORD_*), or -1 if it is not one. */
int cgt_perf_record_type(const uint8_t *rec, size_t len);
/* Every record but SAMPLE: its trailing sample_id.  0, or -1 if too short. */
int cgt_perf_sample_id_parse(const uint8_t *rec, size_t len, uint64_t sample_type,
			     struct cgt_perf_sample_id *out);
/* The event id of any record, given PERF_SAMPLE_IDENTIFIER.  0 or -1. */
int cgt_perf_record_id(const uint8_t *rec, size_t len, uint64_t *id);
int cgt_perf_mmap2_parse(const uint8_t *rec, size_t len, struct cgt_perf_mmap2 *out);
int cgt_perf_sample_parse(const uint8_t *rec, size_t len, uint64_t sample_type,
			  struct cgt_perf_sample *out);

/* IMAGE: code bytes that live in no file, mapped at start (the vdso). */
int cgt_image_encode(struct cgt_buf *b, uint64_t start, const char *name, const void *data,
		     size_t len);
int cgt_image_decode(uint64_t *start, char **name, const uint8_t **data, size_t *len,
		     const struct cgt_record *rec, struct cgt_error *e);

/* ---- A hash map from 64-bit keys to non-NULL values (key_map.c) ------- */

struct cgt_map_slot {
	uint64_t key;
	void *value;	/* NULL: a free slot */
};

struct cgt_map {
	struct cgt_map_slot *slots;
	size_t cap, n;
};

/* A text's key for the map: FNV-1a from h (0xcbf29ce484222325 is its
   start; another start keeps texts of different kinds apart). */
static inline uint64_t cgt_hash_text(const char *s, uint64_t h)
{
	for (; *s != '\0'; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

void *cgt_map_get(const struct cgt_map *m, uint64_t key);
/* Adds or replaces; 0, or -1 if out of memory. */
int cgt_map_put(struct cgt_map *m, uint64_t key, void *value);
void cgt_map_free(struct cgt_map *m);
/* Iterating: for (size_t i = 0; i < m.cap; i++) if (m.slots[i].value) ... */

/* ---- Text (text.c) ---------------------------------------------------- */

#define CGT_COUNT_TEXT 32

/* v with thousands separators ("1,234,567"), as Valgrind's %'u; returns buf. */
const char *cgt_format_count(uint64_t v, char buf[CGT_COUNT_TEXT]);
/* Python's repr of a list of integers, "[1, -2, 3]", cut short to fit cap. */
void cgt_format_int_list(const int64_t *v, unsigned n, char *buf, size_t cap);

/* ---- Module files (module_identity.c) -------------------------------- */

struct Elf;

/* The GNU build-id of an ELF file: its length (0 if none or longer than
   cap) with the bytes in id. */
size_t cgt_elf_build_id(struct Elf *elf, uint8_t *id, size_t cap);

/* Fills m's build-id, file size and mtime from the file at m->path (zeros
   when it cannot be read). */
void cgt_module_identify(struct cgt_module *m);
/* 1 if the file at m->path is still the one recorded, else 0 with why set
   (e.g. "has changed size since recording"). */
int cgt_module_matches_file(const struct cgt_module *m, const char **why);

/* Writes all n bytes of buf to fd, across short writes and EINTR: 0, or -1
   with errno set (trace_writer.c). */
int cgt_write_all(int fd, const void *buf, size_t n);

/* ---- The build-id cache (build_id_cache.c) --------------------------- */

/* $XDG_CACHE_HOME/cgtrace/build-id, else $HOME/.cache/cgtrace/build-id
   (malloc'd); NULL if neither is set. */
char *cgt_build_id_dir_default(void);
/* id in lower-case hex into out (cap bytes, terminated): its length. */
size_t cgt_build_id_hex(const uint8_t *id, size_t len, char *out, size_t cap);
/* dir/ab/cdef.../kind for build-id ab cd ef ... (malloc'd); NULL if the
   id is shorter than 2 or longer than 64 bytes, or out of memory. */
char *cgt_build_id_path(const char *dir, const uint8_t *id, size_t len, const char *kind);
/* 1 if the ELF file at path has build-id id, 0 if not (or not ELF), -1 if
   it cannot be opened. */
int cgt_file_has_build_id(const char *path, const uint8_t *id, size_t len);
/* What storing added to a cache: files, and the bytes of those copied
   (a hard link takes none). */
struct cgt_build_id_added {
	uint64_t files, bytes_copied;
};
/* Keeps m's file ("elf") and its separate debug file under
   /usr/lib/debug/.build-id ("debug") in the cache at dir, each only if it
   has m's build-id and is not there yet: a hard link where the file
   system allows, else a copy; counted in *added.  0, or an error (the
   directory cannot be made or written). */
int cgt_build_id_cache_store(const char *dir, const struct cgt_module *m,
			     struct cgt_build_id_added *added, struct cgt_error *e);
/* The cache's file of kind ("elf", "debug") for build-id id, if it is
   there and has that build-id (malloc'd); else NULL, with *foreign set
   (malloc'd) to the path of a file there that is not the one. */
char *cgt_build_id_cache_find(const char *dir, const uint8_t *id, size_t len, const char *kind,
			      char **foreign);

/* ---- Archives (archive.c) -------------------------------------------- */

/*
 * An archive carries what a trace's symbols and lines need to another
 * machine: a zstd-compressed POSIX ustar stream (tar --zstd lists and
 * extracts it) of regular files, mode 0644, with their mtimes.  Members:
 *
 *   build-id/ab/cdef.../elf     a module file     (the build-id cache's
 *   build-id/ab/cdef.../debug   its debug file     layout, under build-id/)
 *   sources/usr/src/foo.c       /usr/src/foo.c, a source file a line
 *                               table names
 *
 * A name longer than ustar's 100 bytes, a size from 8 GiB or an mtime
 * outside 0 .. 8^11 - 1 is given by a pax extended header.  Member names
 * are relative paths of plain components (no "", ".", "..") of at most
 * CGT_ARCHIVE_NAME_MAX bytes.
 */
#define CGT_ARCHIVE_NAME_MAX (CGT_PATH_MAX + 64)

struct cgt_archive_writer;

/* Starts an archive written to fd (which stays the caller's);
   path_for_messages names it in messages. */
int cgt_archive_create(struct cgt_archive_writer **w, int fd, const char *path_for_messages,
		       struct cgt_error *e);
/* Adds the regular file at src_path as member_name, read a piece at a
   time: 1 when added, 0 when the archive already has that name (nothing
   is read), negative on error.  A file that cannot be opened or is not a
   regular file leaves the archive as it was, one that fails or shrinks
   while read is there filled with zeros: either way the caller may go on,
   unless writing the archive failed (cgt_archive_broken). */
int cgt_archive_add(struct cgt_archive_writer *w, const char *member_name, const char *src_path,
		    struct cgt_error *e);
/* 1 once a write of the archive failed: every later call fails. */
int cgt_archive_broken(const struct cgt_archive_writer *w);
/* The bytes of member data added so far (before compression). */
uint64_t cgt_archive_data_bytes(const struct cgt_archive_writer *w);
/* The member name of the source file at the absolute path: "sources/"
   and the path without its leading slash, "." and empty components, and
   with each ".." taking the component before it (malloc'd); NULL if path
   is not absolute, goes above the root, or is too long. */
char *cgt_archive_source_member(const char *path);
/* Writes the end-of-archive blocks and ends the zstd frame: 0 or an error. */
int cgt_archive_finish(struct cgt_archive_writer *w, struct cgt_error *e);
/* Frees w, finished or not (an unfinished archive is incomplete). */
void cgt_archive_free(struct cgt_archive_writer *w);

/*
 * What one archive may hold: its tar stream (headers, data, padding) up
 * to max_bytes, and up to max_members members; 0: the default.  A zstd
 * bomb -- a member of gigabytes of zeros in a few kilobytes -- is read no
 * further than the limit, and what is unpacked of an archive never takes
 * more than max_bytes of the scratch directory.  Each member held costs
 * 40 bytes of memory while the archive is open (twice that at most while
 * it is read through).
 *
 * The defaults: an archive holds a program's modules and their debug
 * files, at most a few GiB (the debug files of the largest programs, a
 * browser's or a compiler's debug build, are about 2 to 4 GiB), and the
 * sources their line tables name, tens of thousands of files for the
 * largest: twice and some ten times that, for an index of 40 MB at most.
 */
struct cgt_archive_limits {
	uint64_t max_bytes;
	uint32_t max_members;
};
#define CGT_ARCHIVE_MAX_BYTES (8ull << 30)
#define CGT_ARCHIVE_MAX_MEMBERS 1000000u

struct cgt_archive;

/*
 * Opens the archive at path: reads it through once (memory stays bounded
 * whatever the sizes it claims), noting where each regular member it
 * holds whole is; the members are unpacked later, when asked for
 * (cgt_archive_unpack_member), into a new directory under scratch_dir
 * (NULL: the archive is only read through, for what it would say).
 * limits: NULL, the defaults.
 * Returns 0; 1 if the archive is truncated or damaged (the members before
 * the damage are held), goes past a limit (the members before it are
 * held) or has members it will not unpack (absolute names, ".."
 * components, links, devices ...), with e->msg saying what and where
 * ("FILE: truncated at byte offset N (compressed) in member NAME ...");
 * negative if path is not an archive at all (cgt_err_not_trace: not zstd,
 * or no ustar header) or on an I/O error, *a then NULL.
 */
int cgt_archive_open(struct cgt_archive **a, const char *path, const char *scratch_dir,
		     const struct cgt_archive_limits *limits, struct cgt_error *e);
/*
 * Unpacks the member named name (as cgt_archive_add names members; of
 * several of that name, the last), the first time it is asked for, never
 * following a symlink in the directory; a member is written under a
 * temporary name and renamed into place when whole, so a name there
 * always holds a complete member.  1 with its path in *path (malloc'd);
 * 0 if the archive holds no such member whole (*path NULL); negative on
 * an error (it cannot be written, the archive changed since it was
 * opened, scratch_dir was NULL).
 */
int cgt_archive_unpack_member(struct cgt_archive *a, const char *name, char **path,
			      struct cgt_error *e);
/* Removes what was unpacked and frees a (NULL: nothing). */
void cgt_archive_close(struct cgt_archive *a);

/* ---- Blocks and events (trace_blocks.c, trace_events.c) -------------- */

/* All blocks defined so far, indexed by id (ids are dense, from 0). */
struct cgt_block_table {
	struct cgt_block **blocks;
	uint32_t n;
	size_t cap;
	/* Encoder state: the segment being written (blocks' last_value from
	   earlier segments count as zeros) and the outcomes of the last 64
	   conditional branches encoded, the last in bit 0. */
	uint32_t segment;
	uint64_t cond_history;
	uint8_t cachegrind_instr;	/* the last CACHEGRIND_START/STOP request: enum cgt_cachegrind_instr */
	/* The EVENTS record being written: its stack pointers (a stream of
	   their own, appended by cgt_events_finish), the last of them, and
	   where the length of its executions goes. */
	struct cgt_buf sp_stream;
	uint64_t last_sp;
	size_t exec_bytes_at;
	uint64_t bytes;		/* the memory its blocks take */
};

void cgt_block_table_free(struct cgt_block_table *t);

/* Validates a block description and adds a copy with id t->n.  jumps:
   n_exits + 1 of them ([0] the block's end, [k] exit k), or NULL. */
int cgt_block_table_add(struct cgt_block_table *t, const struct cgt_insn *insns, uint32_t n_insns,
			const struct cgt_op *ops, uint32_t n_ops, const struct cgt_jump *jumps,
			uint32_t map_epoch, const char **why);

/* Makes block t->blocks[id] one cut from block from (cut_from and
   cut_kind, enum cgt_cut_kind): NULL, or why it cannot be (its
   instructions and ops are not a prefix of from's, or they are not what
   kind says they are). */
const char *cgt_block_mark_cut(struct cgt_block_table *t, uint32_t id, uint32_t from, unsigned kind);

/* How many of the ops of a block cut short by a fault (blk->cut_from)
   Cachegrind counted, all of an ordinary block's.  Its instrumentation
   queues events -- the instruction fetches if ir, the data references
   if data, and branches -- 16 at most, and calls its helpers for the
   queued ones before the statement that adds a 17th, before a side exit
   (its branch included, so branches never wait) and before a guarded
   access (whose own helper follows at once).  The fault stops everything
   from the faulting statement on, so the events queued since the last of
   those are lost, the faulting instruction's own among them.  Callgrind
   queues alike, without fetches unless it simulates caches.  (Both also
   call the helpers at a load-linked, which amd64 code has none of.) */
uint32_t cgt_block_counted_ops(const struct cgt_block *blk, int ir, int data);

/* Appends the definition of block id to a BLOCKS payload. */
int cgt_blocks_encode(struct cgt_buf *b, const struct cgt_block *blk);
/* Decodes a BLOCKS payload of a trace of format version into t; map_epoch
   is stamped on each block. */
int cgt_blocks_decode(struct cgt_block_table *t, const struct cgt_record *rec, uint32_t version,
		      uint32_t map_epoch, struct cgt_error *e);

/* One execution, as the events codec sees it. */
struct cgt_exec {
	const struct cgt_block *block;
	uint32_t n_ops;		/* ops executed: block->ops[0 .. n_ops) */
	uint32_t exit;		/* 0: ran to the end; k: left by exit k */
	uint32_t n_values;	/* block->values_in_prefix[exit] */
	uint32_t tid;
	/* block->id, here so that a consumer on another thread need not read
	   the block while the decoder updates its codec state */
	uint32_t block_id;
	/* values[j]: the value of op block->value_ops[j] -- an address
	   (CGT_NO_ACCESS: its guard was false) or a target -- for the value
	   ops executed, block->values_in_prefix[exit] of them. */
	const uint64_t *values;
};

/* Whether the conditional branch at op k (executed, COND or COND_INV) was
   taken: its exit was taken exactly when it is the execution's last op
   and the execution left by an exit. */
static inline int cgt_exec_branch_taken(const struct cgt_exec *x, uint32_t k)
{
	int exit_taken = x->exit != 0 && k + 1 == x->n_ops;
	return exit_taken ^ (x->block->ops[k].kind == CGT_OP_COND_INV);
}

/* Starts an EVENTS payload for thread tid. */
int cgt_events_begin(struct cgt_buf *b, struct cgt_block_table *t, uint32_t tid);
/* The stack pointer of the execution just encoded, whose block has_sp:
   in a stream of its own, which simulating for Cachegrind never reads --
   the change since the record's last stack pointer, from that change at
   the block's last execution: mostly 0, where the stack pointer itself
   varies with the call depth.  Inline: once per execution. */
static inline int cgt_events_encode_sp(struct cgt_block_table *t, struct cgt_block *blk, uint64_t sp)
{
	uint8_t *q = cgt_buf_reserve(&t->sp_stream, CGT_VARINT_MAX);
	if (q == NULL)
		return -cgt_err_nomem;
	uint64_t change = sp - t->last_sp;
	q = cgt_put_svarint(q, (int64_t)(change - blk->last_sp_change));
	t->sp_stream.len = (size_t)(q - t->sp_stream.data);
	t->last_sp = sp;
	blk->last_sp_change = change;
	return 0;
}
/* Completes the EVENTS payload begun in b: before it is written, and
   before the next cgt_events_begin with t. */
int cgt_events_finish(struct cgt_buf *b, struct cgt_block_table *t);
/* Appends one execution of blk (a block of t) that ended at exit number
   exit_ord (1-based among the block's exits; 0: ran to its end).
   values[j] is the value of value op j of the executed prefix
   (CGT_NO_ACCESS for a false guard). */
int cgt_events_encode(struct cgt_buf *b, struct cgt_block_table *t, struct cgt_block *blk,
		      uint32_t exit_ord, const uint64_t *values);

/* SEGMENT: the outcomes of the 64 conditional branches before it. */
/* Cachegrind's instrumentation requests (CACHEGRIND_START/STOP_INSTRUMENTATION,
   Valgrind 3.22's cachegrind.h): which came last. */
enum cgt_cachegrind_instr { CGT_CG_INSTR_NONE, CGT_CG_INSTR_START, CGT_CG_INSTR_STOP };
#define CGT_REQUEST_CACHEGRIND_START 0x43470000u
#define CGT_REQUEST_CACHEGRIND_STOP 0x43470001u

/* What a segment starts from, of the stream before it. */
struct cgt_segment_state {
	/* the outcomes of the 64 conditional branches before it, the last
	   in bit 0 */
	uint64_t cond_history;
	uint8_t cachegrind_instr;	/* enum cgt_cachegrind_instr: the last request before it */
};

/* Returns the state after a client request mark of this code. */
static inline uint8_t cgt_cachegrind_instr_after(uint8_t before, uint32_t code)
{
	return code == CGT_REQUEST_CACHEGRIND_START ? CGT_CG_INSTR_START
	       : code == CGT_REQUEST_CACHEGRIND_STOP ? CGT_CG_INSTR_STOP : before;
}

int cgt_segment_encode(struct cgt_buf *b, const struct cgt_segment_state *s);
int cgt_segment_decode(struct cgt_segment_state *s, const struct cgt_record *rec, struct cgt_error *e);

/* The delta state of one decoder of EVENTS: the previous values of every
   block's value ops.  Threads decoding different segments each have one. */
#define CGT_SLOW_EXIT 0xFF
struct cgt_events_state {
	struct cgt_events_slot {
		uint64_t *last;		/* [blk->n_values]; valid in segment `segment` */
		const struct cgt_block *blk;
		uint32_t segment;
		/* By the exit number in an execution's first byte: the counts
		   of a small block without guarded values (most are), at hand
		   in 32 bytes; CGT_SLOW_EXIT when the block or the exit is
		   not such (exit 3 always is: more follows). */
		uint8_t values_in_prefix[4], ops_in_prefix[4];
	} *slots;			/* by block id */
	uint32_t n_slots;		/* blocks this decoder may use */
	size_t cap_slots;
	uint32_t segment;		/* counts segments begun, from 1 */
	uint32_t version;		/* of the trace format: how EVENTS are laid out */
};

/* Lets s use t's blocks (all of them: the caller makes sure t does not
   change meanwhile).  0, or -cgt_err_nomem. */
int cgt_events_state_sync(struct cgt_events_state *s, const struct cgt_block_table *t);
/* A segment begins: every delta restarts from zero. */
static inline void cgt_events_state_reset(struct cgt_events_state *s)
{
	s->segment++;
}
void cgt_events_state_free(struct cgt_events_state *s);

/* Decoding an EVENTS payload, one execution at a time: cgt_events_next
   (trace_events_next.h) is inline, so that a consumer's loop and the
   decoding compile into one loop with no array between them. */
struct cgt_events_cursor {
	const uint8_t *p, *end;
	/* the delta state's, as at the open: a payload defines no blocks */
	struct cgt_events_slot *slots;
	uint32_t n_slots, segment;
	uint32_t tid;
	/* The record's stack pointers (version 3): the next, the end. */
	const uint8_t *sp_p, *sp_end;
	uint64_t last_sp;
	/* room for the values of any block, for an execution whose values
	   are not just the delta state's (guards, the payload's end) */
	uint64_t *scratch;
	const struct cgt_record *rec;
};

/* s: the delta state the payload's executions continue (cgt_events_next
   updates it).  scratch: room for the most values any block of s has. */
int cgt_events_open(struct cgt_events_cursor *c, const struct cgt_record *rec,
		    struct cgt_events_state *s, uint64_t *scratch, struct cgt_error *e);

#include "trace_events_next.h"

/* Adds one execution to counts (the totals an END record carries). */
void cgt_counts_add_exec(struct cgt_trace_counts *counts, const struct cgt_exec *x);
/* Its two halves, for a producer that counts executions by exit and adds
   them once (the recorder): times executions of blk left by exit, guarded
   accesses aside; and the guarded accesses one execution made (values as
   cgt_exec's). */
void cgt_counts_add_exits(struct cgt_trace_counts *counts, const struct cgt_block *blk,
			  uint32_t exit, uint64_t times);
void cgt_counts_add_guarded(struct cgt_trace_counts *counts, const struct cgt_block *blk,
			    uint32_t exit, const uint64_t *values);
/* What executions of a block cut short by a fault ran that Cachegrind
   does not count (its ops past cgt_block_counted_ops(blk, 1, 1), the
   rule of simulate's default, with cache simulation): times executions
   of blk into uncounted, whose block_execs counts them.  The counts above
   hold what ran; whoever prints them takes these off, so that every
   count cgtrace prints is Cachegrind's.  Nothing for an ordinary block. */
void cgt_counts_add_uncounted(struct cgt_trace_counts *uncounted, const struct cgt_block *blk,
			      uint64_t times);

/* ---- cachegrind.out files (cgout_write.c) ----------------------------- */

/* One cost line: the counts of one (file, function, line). */
struct cgt_cgout_line {
	const char *file;
	const char *fn;
	int32_t line;
	const uint64_t *counts;	/* one per event */
};

struct cgt_cgout {
	const char *const *desc;	/* "desc:" texts, e.g. "I1 cache:         ..." */
	unsigned n_desc;
	const char *cmd;
	const char *const *events;
	unsigned n_events;
	int events_trailing_space;	/* Cachegrind's cache-only "events:" line has one */
};

/*
 * Writes a cachegrind.out file as Cachegrind does: desc: lines, cmd:,
 * events:, then the lines sorted by file, function (byte order) and line,
 * with fl= on every new file and fn= on every new function or file, and
 * summary: the column sums.  Sorts lines in place.  Returns 0 or an error.
 */
int cgt_cgout_write(const char *path, const struct cgt_cgout *out, struct cgt_cgout_line *lines,
		    size_t n_lines, struct cgt_error *e);

/* ---- Reading cachegrind.out files (cgout_read.c) ---------------------- */

/*
 * Reads a cachegrind.out file (Cachegrind's, any version from 3.19 on, or
 * cgtrace's) as strictly as the newest cg_annotate does, with its messages:
 * "FILE:LINE: what is wrong".  Lines end in \n, \r\n or \r.  Counts are
 * Python integers (sign, digits, single underscores between digits) within
 * 64 bits; missing trailing counts are zero.  Each summary: line must equal
 * the sum of the count lines before it.  The absolute values of all counts
 * must sum to at most 2^63 - 1, so that no sum of them overflows.
 */
enum cgt_cgout_item_kind {
	CGT_CGOUT_FL = 1,	/* name */
	CGT_CGOUT_FN,		/* name */
	CGT_CGOUT_COUNTS,	/* line, counts */
	CGT_CGOUT_SUMMARY,	/* counts */
};

struct cgt_cgout_item {
	unsigned kind;
	const char *name;	/* the text after "fl=" or "fn=" less its last character,
				   as cg_annotate takes it */
	int64_t line;
	const int64_t *counts;	/* one per event */
};

struct cgt_cgout_reader;

/* Opens path and reads its desc:, cmd: and events: lines. */
int cgt_cgout_open(struct cgt_cgout_reader **r, const char *path, struct cgt_error *e);
/* Each desc: text followed by a newline, all concatenated ("" if none). */
const char *cgt_cgout_desc(const struct cgt_cgout_reader *r);
const char *cgt_cgout_cmd(const struct cgt_cgout_reader *r);
unsigned cgt_cgout_n_events(const struct cgt_cgout_reader *r);
const char *const *cgt_cgout_events(const struct cgt_cgout_reader *r);
/* 1: *item filled (valid until the next call); 0: end of file; negative:
   an error, also a missing summary: line at the end. */
int cgt_cgout_next(struct cgt_cgout_reader *r, struct cgt_cgout_item *item, struct cgt_error *e);
/* The sum of the absolute values of the counts read so far. */
uint64_t cgt_cgout_magnitude(const struct cgt_cgout_reader *r);
void cgt_cgout_close(struct cgt_cgout_reader *r);

#endif
