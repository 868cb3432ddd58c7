/*
 * How the cgtrace Valgrind tool hands its trace to cgtrace, which turns it
 * into trace records (record/valgrind/vg_stream.c).  Private to the
 * Valgrind backend: nothing outside record/valgrind/ reads it.
 *
 * Included both by the tool (built against Valgrind's headers, no libc)
 * and by cgtrace, so it uses only preprocessor constants.
 *
 * Transport: a shared memory file (memfd) of CGT_RAW_BUFFERS buffers of
 * CGT_RAW_BUFFER_SIZE bytes, two pipes and a control socket.  The tool fills the buffers in
 * turn; when one is full it writes {u32 buffer index, u32 byte count} to
 * the ready pipe and moves on to the next, first waiting on the free pipe
 * (which carries the u32 index of each buffer cgtrace has finished with)
 * if all buffers are in flight.  A buffer holds whole items only.  The
 * ready pipe's end of file ends the stream.
 *
 * Fork: the child's stream goes on a transport of its own, made by the
 * parent before the fork.  After the fork the parent sends cgtrace's ends
 * of it -- the ready pipe's read end, the free pipe's write end, the
 * memfd and a control socket -- as SCM_RIGHTS on the control socket (with
 * one byte), then the FORK item, and hands its buffer over at once.  The
 * child's stream starts with the magic and goes on from the state of the
 * parent's at the FORK item (same block ids, threads, mappings).
 *
 * All integers are little-endian and unaligned.  The stream starts with
 * the 8 bytes CGT_RAW_MAGIC, then a sequence of items.  Each item starts
 * with a u32:
 *
 *   value < CGT_RAW_CONTROL   one execution of the block with that id:
 *                             its dynamic slots follow, in the order of the
 *                             block's ops, up to and including the first
 *                             exit whose guard byte is 1 (or all of them).
 *   CGT_RAW_THREAD            u32 tid: the following executions belong to
 *                             Valgrind thread tid.
 *   CGT_RAW_UNMAP             u64 start, u64 length.
 *   CGT_RAW_HELLO, _BLOCK,    u32 payload length, then the payload
 *   _MAP, _FINI, _REQUEST     (layouts below).
 *   CGT_RAW_SIGNAL            u32 tid, u32 signal number, u8 1 delivered
 *                             (then u8 1 on an alternate stack) or 2
 *                             returned (then u8 0).
 *   CGT_RAW_FORK              u32 the child's pid (above).
 *   CGT_RAW_CUT               u32 payload length, then u32 tid, u32 signal
 *                             number, i32 si_code, u32 the protection of
 *                             the fault address (1 read, 2 write; 0 if
 *                             unmapped), u64 the fault address (si_addr;
 *                             0 and si_code 0 if unknown), then an
 *                             execution cut short by that fault: the
 *                             block id and all its slots, those the
 *                             execution did not reach holding garbage.
 *                             A SIGNAL item (delivered) follows.
 *   CGT_RAW_EXEC              nothing: the program calls execve; the stream
 *                             ends here if it succeeds (the new program, if
 *                             Valgrind follows it, has a stream of its own).
 *
 * Dynamic slots per op kind:
 *   INSN                      none
 *   READ, WRITE, MODIFY       u64 address
 *   READ_GUARDED,             u8 guard, u64 address (the address is
 *   WRITE_GUARDED             written even when the guard is 0)
 *   EXIT, COND, COND_INV      u8 guard (1: the exit was taken)
 *   INDIRECT                  u64 target
 *   SP                        u64 the stack pointer
 *
 * HELLO payload: u32 protocol version, u32 largest guest register size
 *   (bytes), then how VEX makes blocks: u32 guest max instructions, u32
 *   chasing (1: on), u32 unrolling threshold; then the Valgrind version
 *   string (rest of payload).
 * BLOCK payload: u32 id, u32 n_insns, u32 n_ops,
 *   n_insns x { u64 address, u8 length },
 *   n_ops   x { u8 kind, u8 reserved, u16 insn index, u32 size },
 *   then the jumps of the block's end and of each exit op, in order:
 *   (1 + exits) x { u8 jump kind, u8 1 if the destination is known,
 *   u64 destination }.
 * MAP payload: u64 start, u64 length, u64 file offset, u32 prot
 *   (1 read, 2 write, 4 exec), then the path (rest of payload).
 * FINI payload: u32 1 if the program called exit or exit_group, else 0
 *   (it was killed by a signal); i32 the code it passed.
 * REQUEST payload: u32 tid, u32 the request's code (Callgrind's and
 *   Cachegrind's: 'C','T' and 'C','G'), then its text (rest of payload:
 *   CALLGRIND_DUMP_STATS_AT's string, else empty).
 */
#ifndef CGTRACE_VG_PROTOCOL_H
#define CGTRACE_VG_PROTOCOL_H

#define CGT_RAW_MAGIC       "CGTRAW\0\1"
#define CGT_RAW_MAGIC_LEN   8
#define CGT_RAW_VERSION     4

#define CGT_RAW_CONTROL     0xFFFFFF00u
#define CGT_RAW_THREAD      0xFFFFFF01u
#define CGT_RAW_HELLO       0xFFFFFF02u
#define CGT_RAW_BLOCK       0xFFFFFF03u
#define CGT_RAW_MAP         0xFFFFFF04u
#define CGT_RAW_UNMAP       0xFFFFFF05u
#define CGT_RAW_FINI        0xFFFFFF06u
#define CGT_RAW_REQUEST     0xFFFFFF07u
#define CGT_RAW_REQUEST_TEXT_MAX  4096   /* bytes of a request's text */
#define CGT_RAW_SIGNAL      0xFFFFFF08u
#define CGT_RAW_FORK        0xFFFFFF09u
#define CGT_RAW_EXEC        0xFFFFFF0Au
#define CGT_RAW_CUT         0xFFFFFF0Bu
/* The descriptors a FORK sends, in this order. */
#define CGT_RAW_FORK_FDS    4

/* Op kinds; the same numbering is used in the trace file (TRACE-FORMAT.md). */
#define CGT_RAW_OP_INSN           0
#define CGT_RAW_OP_READ           1
#define CGT_RAW_OP_WRITE          2
#define CGT_RAW_OP_MODIFY         3
#define CGT_RAW_OP_READ_GUARDED   4
#define CGT_RAW_OP_WRITE_GUARDED  5
#define CGT_RAW_OP_EXIT           6   /* side exit that is not a branch */
#define CGT_RAW_OP_COND           7   /* conditional branch: taken = guard */
#define CGT_RAW_OP_COND_INV       8   /* conditional branch: taken = !guard */
#define CGT_RAW_OP_INDIRECT       9   /* indirect jump or call at block end */
#define CGT_RAW_OP_SP            10   /* the stack pointer at block entry */

/* Jump kinds, numbered as in the trace file. */
#define CGT_RAW_JUMP_BORING       0
#define CGT_RAW_JUMP_CALL         1
#define CGT_RAW_JUMP_RETURN       2
#define CGT_RAW_JUMP_SYSCALL      3
#define CGT_RAW_JUMP_CLIENT_REQ   4
#define CGT_RAW_JUMP_OTHER        5

/* Upper bound of one block's definition and of one execution record;
   the tool keeps this much slack in its buffer. */
#define CGT_RAW_MAX_ITEM    (256 * 1024)

#define CGT_RAW_BUFFERS     4
#define CGT_RAW_BUFFER_SIZE (8 * 1024 * 1024)

#endif
