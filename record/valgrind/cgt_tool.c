/*
 * cgtrace's Valgrind tool: streams the executed instruction and
 * data-address trace of the client to cgtrace over a pipe.
 *
 * Where and how events are generated follows Cachegrind (cg_main.c of the
 * installed Valgrind) rule for rule, because the counts a trace produces
 * must equal Cachegrind's: instrumentation of the optimised IR, one
 * instruction per IMark, loads/stores/dirty-helper accesses/CAS/LL/SC as
 * data events, a write merged into the immediately preceding queued read of
 * the same instruction, size and address atom as one "modify", guarded
 * accesses reported with their guard, every side exit with its guard, the
 * fall-through inversion of conditional branches, and an indirect branch at
 * the end of a block whose next address is not a constant.
 *
 * Unlike Cachegrind the tool does not call a helper per event: at
 * translation time it sends the block's static description (the "ops"),
 * and the instrumented code stores only the dynamic values (addresses,
 * guards, targets) straight into a buffer with inline IR stores.  A
 * guarded helper call at block entry writes the buffer to the pipe when it
 * is nearly full.  See vg_protocol.h for the byte layout.
 */
#include "config.h"
#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_options.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_transtab.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"

#include "libvex_guest_amd64.h"
#include "callgrind.h"   /* its request codes */
#include "vg_protocol.h"

/* Not in the pub_tool headers: moving a descriptor into Valgrind's
   reserved range (close-on-exec, invisible and untouchable for the
   client), as the core does for its log file; and mapping a shared file
   into Valgrind's part of the address space, as the core does for vgdb. */
extern Int VG_(safe_fd)(Int oldfd);
/* Set by the scheduler while the client's translations run: a signal
   delivered then is a fault of theirs, not one between two blocks. */
extern Bool VG_(in_generated_code);
extern SysRes VG_(am_shared_mmap_file_float_valgrind)(SizeT length, UInt prot, Int fd,
                                                       Off64T offset);
/* The core's raw system call, for those the tool headers do not wrap
   (socketpair, memfd_create, ftruncate, sendmsg). */
extern SysRes VG_(do_syscall)(UWord sysno, RegWord a1, RegWord a2, RegWord a3, RegWord a4,
                              RegWord a5, RegWord a6, RegWord a7, RegWord a8);
#define SYSCALL4(n, a, b, c, d) \
   VG_(do_syscall)((n), (RegWord)(a), (RegWord)(b), (RegWord)(c), (RegWord)(d), 0, 0, 0, 0)

/* ------------------------------------------------------------------ */
/* Output buffers (the transport is described in vg_protocol.h)      */
/* ------------------------------------------------------------------ */

/* The generated code stores at out_ptr and calls at_limit at block entry
   once out_ptr has passed out_limit; every item is smaller than the slack
   left above out_limit.  out_limit advances through a shared buffer in
   steps: at each, a buffer that has been filling for HANDOVER_MS goes to
   cgtrace even if not full, so that a program killed mid-run (SIGKILL,
   which no tool can see coming) loses at most that much of its trace. */
#define STEP_BYTES (1024 * 1024)
#define HANDOVER_MS 1000
/* Where the generated code writes once recording has stopped (a forked
   child, or cgtrace gone) or before it starts: a private buffer that is
   just reset. */
static UChar  discard_buf[2 * CGT_RAW_MAX_ITEM];
static UChar* out_ptr = discard_buf;
static UChar* out_limit = discard_buf + CGT_RAW_MAX_ITEM;
static UChar* full_limit = discard_buf + CGT_RAW_MAX_ITEM;  /* the buffer's last step */
static UInt   filling_since;       /* when the buffer began to fill (ms) */
static UChar* buffers;             /* CGT_RAW_BUFFERS shared buffers */
static UInt   current;             /* the buffer being filled */
static UInt   in_flight;           /* handed to cgtrace, not yet given back */
static Int    ready_fd = -1, free_fd = -1;  /* -1: recording stopped */

static Int    ctl_fd = -1;         /* the control socket: a fork's descriptors */
static Long   clo_ready_fd = -1, clo_free_fd = -1, clo_shm_fd = -1, clo_ctl_fd = -1;
static UInt   next_block_id = 0;
static ThreadId last_tid = 0;       /* 0 is never a valid Valgrind tid */
static Bool   exit_called = False;  /* the client called exit or exit_group */
static Int    exit_code = 0;

/* A fault inside a block: its execution, cut short, is the block id at
   out_ptr and the slots written until the faulting statement (each slot
   is stored before its statement).  It is sent as a CUT item, then the
   signal's delivery, once the handler's frame holds the siginfo (its
   fault address says which access faulted): at the next block entry,
   which out_limit is lowered to catch, or at the next item from C code. */
static struct {
   Bool     active;
   ThreadId tid;
   Int      signo;
   Bool     alt_stack;
   UChar*   saved_limit;
   UInt     len;             /* of the execution record in bytes */
   UChar    bytes[CGT_RAW_MAX_ITEM];
} cut;
static UInt*  record_len;     /* by block id: an execution's bytes */
static UInt   record_len_cap;

static void use_buffer(UChar* start, SizeT size)
{
   out_ptr = start;
   full_limit = start + size - CGT_RAW_MAX_ITEM;
   out_limit = size > STEP_BYTES + CGT_RAW_MAX_ITEM ? start + STEP_BYTES : full_limit;
   filling_since = VG_(read_millisecond_timer)();
}

static void stop_recording(const HChar* why, Int err)
{
   if (why != NULL)
      VG_(umsg)("cgtrace: %s (error %d); recording stops\n", why, err);
   if (ready_fd >= 0)
      VG_(close)(ready_fd);
   if (free_fd >= 0)
      VG_(close)(free_fd);
   if (ctl_fd >= 0)
      VG_(close)(ctl_fd);
   ready_fd = free_fd = ctl_fd = -1;
   cut.active = False;
   use_buffer(discard_buf, sizeof(discard_buf));
}

static VG_REGPARM(0) void flush_buffer(void)
{
   if (ready_fd < 0) {
      use_buffer(discard_buf, sizeof(discard_buf));
      return;
   }
   UChar* start = buffers + (SizeT)current * CGT_RAW_BUFFER_SIZE;
   UInt msg[2] = { current, (UInt)(out_ptr - start) };
   Int w = VG_(write)(ready_fd, msg, sizeof(msg));
   if (w != (Int)sizeof(msg)) {
      /* cgtrace is gone (killed): nobody to report to; let the program
         run to its end. */
      stop_recording("the trace pipe closed", -w);
      return;
   }
   in_flight++;
   current = (current + 1) % CGT_RAW_BUFFERS;
   if (in_flight == CGT_RAW_BUFFERS) {
      UInt freed;
      Int r = VG_(read)(free_fd, &freed, sizeof(freed));
      if (r != (Int)sizeof(freed)) {
         stop_recording("the trace pipe closed", -r);
         return;
      }
      in_flight--;
   }
   use_buffer(buffers + (SizeT)current * CGT_RAW_BUFFER_SIZE, CGT_RAW_BUFFER_SIZE);
}

static void send_signal(ThreadId tid, Int signo, UInt what, Bool alt_stack);
static void send_cut(void);

/* out_ptr has passed out_limit: the next step, or hand the buffer over. */
static VG_REGPARM(0) void at_limit(void)
{
   if (cut.active) {
      send_cut();
      if (out_ptr <= out_limit)
         return;
   }
   if (out_limit < full_limit &&
       VG_(read_millisecond_timer)() - filling_since < HANDOVER_MS) {
      out_limit = out_limit + STEP_BYTES < full_limit ? out_limit + STEP_BYTES : full_limit;
      return;
   }
   flush_buffer();
}

/* Room for n more bytes, written by C code (control items). */
static UChar* reserve(UInt n)
{
   tl_assert(n <= CGT_RAW_MAX_ITEM);
   if (out_ptr > out_limit || cut.active)
      at_limit();
   UChar* p = out_ptr;
   out_ptr += n;
   return p;
}

static UChar* put_u8(UChar* p, UInt v)   { p[0] = (UChar)v; return p + 1; }
static UChar* put_u16(UChar* p, UInt v)  { p[0] = v; p[1] = v >> 8; return p + 2; }
static UChar* put_u32(UChar* p, UInt v)
{
   p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24;
   return p + 4;
}
static UChar* put_u64(UChar* p, ULong v)
{
   p = put_u32(p, (UInt)v);
   return put_u32(p, (UInt)(v >> 32));
}

/* ------------------------------------------------------------------ */
/* Static description of a block, built at translation time           */
/* ------------------------------------------------------------------ */

#define MAX_INSNS 512
#define MAX_OPS   4096

typedef struct {
   UChar    kind;
   UShort   insn;
   UInt     size;      /* access size in bytes (unclamped) */
   IRExpr*  value;     /* address, exit guard or branch target */
   IRExpr*  guard;     /* guarded accesses only */
   Int      stmt;      /* index in sbIn of the statement it belongs to;
                          sbIn->stmts_used for the end-of-block branch */
   UInt     offset;    /* offset of its slot in the execution record */
} Op;

typedef struct {
   Addr  addr;
   UChar len;
} Insn;

/* How an exit jumps: the facts a call graph is made of. */
typedef struct {
   UChar kind;         /* CGT_RAW_JUMP_* */
   UChar dst_known;
   Addr  dst;
} Jump;

typedef struct {
   Insn n_insn_buf[MAX_INSNS];
   Op   ops[MAX_OPS];
   Jump jumps[MAX_OPS + 1];   /* [0] the block's end, [k] exit k */
   Int  n_insns, n_ops, n_exits;
   Int  last_queued;   /* Cachegrind's last queued event, -1 after a flush */
} BlockDesc;

static BlockDesc desc;   /* translation is single-threaded */

static Op* add_op(UChar kind, Int stmt, UInt size, IRExpr* value)
{
   tl_assert(desc.n_ops < MAX_OPS);
   tl_assert(desc.n_insns > 0);
   Op* op = &desc.ops[desc.n_ops++];
   op->kind  = kind;
   op->insn  = desc.n_insns - 1;
   op->size  = size;
   op->value = value;
   op->guard = NULL;
   op->stmt  = stmt;
   op->offset = 0;
   return op;
}

/* Cachegrind's event queue matters only for its merging rule: a write
   becomes a modify when the last event queued since the last flush is a
   read by the same instruction of the same size at the same atom.  Queue
   overflow flushes before adding, after the merge test, so it never splits
   a pair; exits, guarded accesses and load-linked flush explicitly. */
static void add_read(Int stmt, UInt size, IRExpr* ea)
{
   add_op(CGT_RAW_OP_READ, stmt, size, ea);
   desc.last_queued = desc.n_ops - 1;
}

static void add_write(Int stmt, UInt size, IRExpr* ea)
{
   if (desc.last_queued >= 0) {
      Op* last = &desc.ops[desc.last_queued];
      if (last->kind == CGT_RAW_OP_READ && last->size == size
          && last->insn == desc.n_insns - 1 && eqIRAtom(last->value, ea)) {
         last->kind = CGT_RAW_OP_MODIFY;
         return;
      }
   }
   add_op(CGT_RAW_OP_WRITE, stmt, size, ea);
   desc.last_queued = desc.n_ops - 1;
}

static void add_guarded(Int stmt, UInt size, IRExpr* ea, IRExpr* guard, Bool is_write)
{
   Op* op = add_op(is_write ? CGT_RAW_OP_WRITE_GUARDED : CGT_RAW_OP_READ_GUARDED,
                   stmt, size, ea);
   op->guard = guard;
   desc.last_queued = -1;
}

static UInt slot_size(UChar kind)
{
   switch (kind) {
   case CGT_RAW_OP_INSN:          return 0;
   case CGT_RAW_OP_READ:
   case CGT_RAW_OP_WRITE:
   case CGT_RAW_OP_MODIFY:
   case CGT_RAW_OP_INDIRECT:
   case CGT_RAW_OP_SP:            return 8;
   case CGT_RAW_OP_READ_GUARDED:
   case CGT_RAW_OP_WRITE_GUARDED: return 9;
   default:                       return 1;   /* exits: guard byte */
   }
}

static UChar jump_kind(IRJumpKind jk)
{
   switch (jk) {
   case Ijk_Boring:       return CGT_RAW_JUMP_BORING;
   case Ijk_Call:         return CGT_RAW_JUMP_CALL;
   case Ijk_Ret:          return CGT_RAW_JUMP_RETURN;
   case Ijk_ClientReq:    return CGT_RAW_JUMP_CLIENT_REQ;
   case Ijk_Sys_syscall:
   case Ijk_Sys_int32:
   case Ijk_Sys_int128:
   case Ijk_Sys_int129:
   case Ijk_Sys_int130:
   case Ijk_Sys_int145:
   case Ijk_Sys_int210:
   case Ijk_Sys_sysenter: return CGT_RAW_JUMP_SYSCALL;
   default:               return CGT_RAW_JUMP_OTHER;
   }
}

static Jump jump_to(IRJumpKind jk, const IRExpr* dst)
{
   Jump j = { jump_kind(jk), 0, 0 };
   if (dst->tag == Iex_Const) {
      j.dst_known = 1;
      j.dst = (Addr)dst->Iex.Const.con->Ico.U64;
   }
   return j;
}

static void describe_block(IRSB* sbIn, Int first, Addr block_addr)
{
   IRTypeEnv* tyenv = sbIn->tyenv;
   desc.n_insns = 0;
   desc.n_ops = 0;
   desc.n_exits = 0;
   desc.last_queued = -1;
   Addr cia = 0;
   UInt isize = 0;

   for (Int i = first; i < sbIn->stmts_used; i++) {
      IRStmt* st = sbIn->stmts[i];
      switch (st->tag) {
      case Ist_IMark:
         cia = st->Ist.IMark.addr;
         isize = st->Ist.IMark.len;
         if (isize == 0)
            isize = VG_MIN_INSTR_SZB;   /* undecodable: as Cachegrind */
         tl_assert(desc.n_insns < MAX_INSNS);
         desc.n_insn_buf[desc.n_insns].addr = cia;
         desc.n_insn_buf[desc.n_insns].len = (UChar)isize;
         desc.n_insns++;
         add_op(CGT_RAW_OP_INSN, i, 0, NULL);
         desc.last_queued = desc.n_ops - 1;
         /* Read before the first instruction changes it: where the
            replay's call stack stands (Callgrind reads it at every
            block's entry). */
         if (desc.n_insns == 1)
            add_op(CGT_RAW_OP_SP, i, 0, NULL);
         break;
      case Ist_WrTmp: {
         IRExpr* data = st->Ist.WrTmp.data;
         if (data->tag == Iex_Load)
            add_read(i, sizeofIRType(data->Iex.Load.ty), data->Iex.Load.addr);
         break;
      }
      case Ist_Store:
         add_write(i, sizeofIRType(typeOfIRExpr(tyenv, st->Ist.Store.data)),
                   st->Ist.Store.addr);
         break;
      case Ist_StoreG: {
         IRStoreG* sg = st->Ist.StoreG.details;
         add_guarded(i, sizeofIRType(typeOfIRExpr(tyenv, sg->data)), sg->addr,
                     sg->guard, True);
         break;
      }
      case Ist_LoadG: {
         IRLoadG* lg = st->Ist.LoadG.details;
         IRType loaded = Ity_INVALID, widened = Ity_INVALID;
         typeOfIRLoadGOp(lg->cvt, &widened, &loaded);
         add_guarded(i, sizeofIRType(loaded), lg->addr, lg->guard, False);
         break;
      }
      case Ist_Dirty: {
         IRDirty* d = st->Ist.Dirty.details;
         /* The size is kept unclamped: Cachegrind clamps it to the smallest
            configured line size, which only the simulator knows. */
         if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify)
            add_read(i, d->mSize, d->mAddr);
         if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify)
            add_write(i, d->mSize, d->mAddr);
         break;
      }
      case Ist_CAS: {
         IRCAS* cas = st->Ist.CAS.details;
         UInt size = sizeofIRType(typeOfIRExpr(tyenv, cas->dataLo));
         if (cas->dataHi != NULL)
            size *= 2;
         add_read(i, size, cas->addr);
         add_write(i, size, cas->addr);
         break;
      }
      case Ist_LLSC:
         if (st->Ist.LLSC.storedata == NULL) {
            add_read(i, sizeofIRType(typeOfIRTemp(tyenv, st->Ist.LLSC.result)),
                     st->Ist.LLSC.addr);
            desc.last_queued = -1;
         } else {
            add_write(i, sizeofIRType(typeOfIRExpr(tyenv, st->Ist.LLSC.storedata)),
                      st->Ist.LLSC.addr);
         }
         break;
      case Ist_Exit: {
         IRJumpKind jk = st->Ist.Exit.jk;
         UChar kind = CGT_RAW_OP_EXIT;
         if (jk == Ijk_Boring || jk == Ijk_Call || jk == Ijk_Ret) {
            /* The optimiser inverts a branch when it follows the taken
               path; Cachegrind detects that by the exit going to the
               fall-through address. */
            Addr sea = (Addr)st->Ist.Exit.dst->Ico.U64;
            kind = (sea == cia + isize) ? CGT_RAW_OP_COND_INV : CGT_RAW_OP_COND;
         }
         add_op(kind, i, 0, st->Ist.Exit.guard);
         desc.jumps[++desc.n_exits] = jump_to(jk, IRExpr_Const(st->Ist.Exit.dst));
         desc.last_queued = -1;
         break;
      }
      default:
         break;
      }
   }

   if ((sbIn->jumpkind == Ijk_Boring || sbIn->jumpkind == Ijk_Call)
       && sbIn->next->tag == Iex_RdTmp)
      add_op(CGT_RAW_OP_INDIRECT, sbIn->stmts_used, 0, sbIn->next);
   desc.jumps[0] = jump_to(sbIn->jumpkind, sbIn->next);

   UInt offset = 4;   /* after the block id */
   for (Int k = 0; k < desc.n_ops; k++) {
      desc.ops[k].offset = offset;
      offset += slot_size(desc.ops[k].kind);
   }
   tl_assert(offset <= CGT_RAW_MAX_ITEM);
   (void)block_addr;
}

static void send_block(UInt id)
{
   UInt len = 12 + desc.n_insns * 9 + desc.n_ops * 8 + (desc.n_exits + 1) * 10;
   UChar* p = reserve(8 + len);
   p = put_u32(p, CGT_RAW_BLOCK);
   p = put_u32(p, len);
   p = put_u32(p, id);
   p = put_u32(p, desc.n_insns);
   p = put_u32(p, desc.n_ops);
   for (Int i = 0; i < desc.n_insns; i++) {
      p = put_u64(p, desc.n_insn_buf[i].addr);
      p = put_u8(p, desc.n_insn_buf[i].len);
   }
   for (Int k = 0; k < desc.n_ops; k++) {
      p = put_u8(p, desc.ops[k].kind);
      p = put_u8(p, 0);
      p = put_u16(p, desc.ops[k].insn);
      p = put_u32(p, desc.ops[k].size);
   }
   for (Int k = 0; k <= desc.n_exits; k++) {
      p = put_u8(p, desc.jumps[k].kind);
      p = put_u8(p, desc.jumps[k].dst_known);
      p = put_u64(p, desc.jumps[k].dst);
   }
}

/* ------------------------------------------------------------------ */
/* Instrumentation                                                    */
/* ------------------------------------------------------------------ */

static IRExpr* c64(ULong v) { return IRExpr_Const(IRConst_U64(v)); }

static IRTemp assign(IRSB* sb, IRType ty, IRExpr* e)
{
   IRTemp t = newIRTemp(sb->tyenv, ty);
   addStmtToIRSB(sb, IRStmt_WrTmp(t, e));
   return t;
}

static IRExpr* slot_addr(IRSB* sb, IRTemp base, UInt offset)
{
   return IRExpr_RdTmp(assign(sb, Ity_I64,
                              IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(base), c64(offset))));
}

static void store_slot(IRSB* sb, IRTemp base, UInt offset, IRExpr* value)
{
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, slot_addr(sb, base, offset), value));
}

static void store_guard(IRSB* sb, IRTemp base, UInt offset, IRExpr* guard)
{
   IRTemp g8 = assign(sb, Ity_I8, IRExpr_Unop(Iop_1Uto8, guard));
   store_slot(sb, base, offset, IRExpr_RdTmp(g8));
}

static void commit_bytes(IRSB* sb, IRTemp base, UInt n)
{
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&out_ptr),
                                  slot_addr(sb, base, n)));
}

/* The guest state's offset of the stack pointer. */
static Int sp_offset;

static void emit_op_stores(IRSB* sb, IRTemp base, const Op* op)
{
   switch (op->kind) {
   case CGT_RAW_OP_INSN:
      break;
   case CGT_RAW_OP_SP: {
      IRTemp sp = assign(sb, Ity_I64, IRExpr_Get(sp_offset, Ity_I64));
      store_slot(sb, base, op->offset, IRExpr_RdTmp(sp));
      break;
   }
   case CGT_RAW_OP_READ:
   case CGT_RAW_OP_WRITE:
   case CGT_RAW_OP_MODIFY:
   case CGT_RAW_OP_INDIRECT:
      store_slot(sb, base, op->offset, op->value);
      break;
   case CGT_RAW_OP_READ_GUARDED:
   case CGT_RAW_OP_WRITE_GUARDED:
      store_guard(sb, base, op->offset, op->guard);
      store_slot(sb, base, op->offset + 1, op->value);
      break;
   default: {
      /* An exit: record its guard and, if it is taken, commit everything
         up to here, as the block ends at this statement.  Not taken,
         nothing is committed: an instruction after it that faults (a
         signal handler then runs) leaves no half-written execution for
         the next item to follow. */
      store_guard(sb, base, op->offset, op->value);
      IRTemp to = assign(sb, Ity_I64, IRExpr_ITE(op->value, slot_addr(sb, base, op->offset + 1),
                                                 IRExpr_RdTmp(base)));
      addStmtToIRSB(sb, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&out_ptr),
                                     IRExpr_RdTmp(to)));
      break;
   }
   }
}

static IRSB* cgt_instrument(VgCallbackClosure* closure, IRSB* sbIn,
                            const VexGuestLayout* layout,
                            const VexGuestExtents* vge,
                            const VexArchInfo* archinfo_host,
                            IRType gWordTy, IRType hWordTy)
{
   (void)vge; (void)archinfo_host;
   sp_offset = layout->offset_SP;
   if (gWordTy != Ity_I64 || hWordTy != Ity_I64)
      VG_(tool_panic)("cgtrace supports 64-bit guests only");

   IRSB* sbOut = deepCopyIRSBExceptStmts(sbIn);
   Int i = 0;
   while (i < sbIn->stmts_used && sbIn->stmts[i]->tag != Ist_IMark)
      addStmtToIRSB(sbOut, sbIn->stmts[i++]);
   tl_assert(i < sbIn->stmts_used);

   describe_block(sbIn, i, (Addr)closure->readdr);
   if (next_block_id >= CGT_RAW_CONTROL)
      VG_(tool_panic)("cgtrace: too many translations for one trace");
   UInt id = next_block_id++;
   send_block(id);

   /* Entry: make room, then write the block id. */
   IRTemp cur = assign(sbOut, Ity_I64,
                       IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&out_ptr)));
   IRTemp limit = assign(sbOut, Ity_I64,
                         IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&out_limit)));
   IRTemp full = assign(sbOut, Ity_I1,
                        IRExpr_Binop(Iop_CmpLT64U, IRExpr_RdTmp(limit), IRExpr_RdTmp(cur)));
   IRDirty* di = unsafeIRDirty_0_N(0, "cgt_at_limit",
                                   VG_(fnptr_to_fnentry)(&at_limit),
                                   mkIRExprVec_0());
   di->guard = IRExpr_RdTmp(full);
   di->mFx = Ifx_Modify;   /* it rewrites out_ptr: no load may be reused */
   di->mAddr = mkIRExpr_HWord((HWord)&out_ptr);
   di->mSize = sizeof(out_ptr);
   addStmtToIRSB(sbOut, IRStmt_Dirty(di));
   IRTemp base = assign(sbOut, Ity_I64,
                        IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&out_ptr)));
   addStmtToIRSB(sbOut, IRStmt_Store(Iend_LE, IRExpr_RdTmp(base),
                                     IRExpr_Const(IRConst_U32(id))));

   Int k = 0;
   for (; i < sbIn->stmts_used; i++) {
      while (k < desc.n_ops && desc.ops[k].stmt == i)
         emit_op_stores(sbOut, base, &desc.ops[k++]);
      addStmtToIRSB(sbOut, sbIn->stmts[i]);
   }
   UInt total = 4;
   for (; k < desc.n_ops; k++)
      emit_op_stores(sbOut, base, &desc.ops[k]);
   if (desc.n_ops > 0) {
      const Op* last = &desc.ops[desc.n_ops - 1];
      total = last->offset + slot_size(last->kind);
   }
   commit_bytes(sbOut, base, total);
   if (id >= record_len_cap) {
      record_len_cap = record_len_cap ? 2 * record_len_cap : 4096;
      record_len = VG_(realloc)("cgtrace.record_len", record_len,
                                record_len_cap * sizeof(*record_len));
   }
   record_len[id] = total;
   return sbOut;
}

/* ------------------------------------------------------------------ */
/* Threads, mappings, process events                                  */
/* ------------------------------------------------------------------ */

static void on_start_client_code(ThreadId tid, ULong blocks_done)
{
   (void)blocks_done;
   if (tid == last_tid)
      return;
   last_tid = tid;
   UChar* p = reserve(8);
   p = put_u32(p, CGT_RAW_THREAD);
   put_u32(p, tid);
}

/* Bounds of this tool's own image, from the linker. */
extern char __executable_start[], _end[];

static void send_map(Addr a, SizeT len)
{
   NSegment const* seg = VG_(am_find_nsegment)(a);
   if (seg == NULL || seg->kind != SkFileC)
      return;
   /* Valgrind shows the client its trampoline page, which lies in our own
      image; Cachegrind has no debug information for it ("???"), and
      neither shall we. */
   if (a >= (Addr)__executable_start && a < (Addr)_end)
      return;
   const HChar* path = VG_(am_get_filename)(seg);
   if (path == NULL)
      return;
   UInt plen = VG_(strlen)(path);
   if (plen > 4096)
      plen = 4096;
   UInt prot = (seg->hasR ? 1 : 0) | (seg->hasW ? 2 : 0) | (seg->hasX ? 4 : 0);
   UInt len_payload = 28 + plen;
   UChar* p = reserve(8 + len_payload);
   p = put_u32(p, CGT_RAW_MAP);
   p = put_u32(p, len_payload);
   p = put_u64(p, a);
   p = put_u64(p, len);
   p = put_u64(p, seg->offset + (a - seg->start));
   p = put_u32(p, prot);
   VG_(memcpy)(p, path, plen);
}

static void on_new_mem(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di_handle)
{
   (void)rr; (void)ww; (void)di_handle;
   if (xx)
      send_map(a, len);
}

static void on_mprotect(Addr a, SizeT len, Bool rr, Bool ww, Bool xx)
{
   (void)rr; (void)ww;
   if (xx)
      send_map(a, len);
}

static void on_munmap(Addr a, SizeT len)
{
   UChar* p = reserve(20);
   p = put_u32(p, CGT_RAW_UNMAP);
   p = put_u64(p, a);
   put_u64(p, len);
}

/* fork: the child is recorded into a trace of its own that begins with
   its parent's up to the fork, as Cachegrind's and Callgrind's child
   profiles begin with the parent's costs.  The parent makes the child's
   transport before the fork; after it, it sends cgtrace's ends with a
   FORK item (vg_protocol.h), and cgtrace forks a sink for the child from
   its state at that item.  The child, a copy of us, goes on where the
   parent was, on the new transport. */
typedef struct {
   Int ready[2], freed[2], ctl[2], shm;   /* as struct vg_transport */
} Transport;

static Transport next_child = { { -1, -1 }, { -1, -1 }, { -1, -1 }, -1 };
static Bool      next_child_made = False;
static Bool      forked = False;   /* the parent, from fork until its system call returns */

static void close_if_open(Int* fd)
{
   if (*fd >= 0)
      VG_(close)(*fd);
   *fd = -1;
}

static void drop_next_child(void)
{
   close_if_open(&next_child.ready[0]);
   close_if_open(&next_child.ready[1]);
   close_if_open(&next_child.freed[0]);
   close_if_open(&next_child.freed[1]);
   close_if_open(&next_child.ctl[0]);
   close_if_open(&next_child.ctl[1]);
   close_if_open(&next_child.shm);
   next_child_made = False;
}

static void on_fork_pre(ThreadId tid)
{
   (void)tid;
   drop_next_child();   /* made for a fork that failed */
   if (ready_fd < 0 || ctl_fd < 0)
      return;           /* not recording */
   Transport* t = &next_child;
   Int sv[2] = { -1, -1 };
   Bool ok = VG_(pipe)(t->ready) == 0;
   ok = ok && VG_(pipe)(t->freed) == 0;
   ok = ok && !sr_isError(SYSCALL4(__NR_socketpair, VKI_AF_UNIX, VKI_SOCK_STREAM, 0, (Addr)sv));
   t->ctl[0] = sv[0];
   t->ctl[1] = sv[1];
   SysRes m = SYSCALL4(__NR_memfd_create, (Addr)"cgtrace-buffers", 0, 0, 0);
   t->shm = ok && !sr_isError(m) ? (Int)sr_Res(m) : -1;
   /* Among the program's descriptors until the system call returns, in
      which time the program does not run: the child moves its own into
      Valgrind's range, where there is room for those of one transport. */
   ok = ok && t->shm >= 0 &&
        !sr_isError(SYSCALL4(__NR_ftruncate, t->shm,
                             (ULong)CGT_RAW_BUFFERS * CGT_RAW_BUFFER_SIZE, 0, 0));
   if (!ok) {
      VG_(umsg)("cgtrace: cannot make a transport for the child of this fork; "
                "it is not recorded\n");
      drop_next_child();
      return;
   }
   next_child_made = True;
}

static void on_fork_parent(ThreadId tid)
{
   (void)tid;
   forked = True;
}

/* In the parent once fork has returned the child's pid. */
static void send_fork(Int pid)
{
   Transport* t = &next_child;
   Int fds[CGT_RAW_FORK_FDS] = { t->ready[0], t->freed[1], t->shm, t->ctl[0] };
   UChar byte = 'F';
   struct vki_iovec iov = { &byte, 1 };
   union {
      struct vki_cmsghdr h;
      UChar space[VKI_CMSG_ALIGN(sizeof(struct vki_cmsghdr)) + VKI_CMSG_ALIGN(sizeof(fds))];
   } control;
   VG_(memset)(&control, 0, sizeof(control));
   struct vki_msghdr msg;
   VG_(memset)(&msg, 0, sizeof(msg));
   msg.msg_iov = &iov;
   msg.msg_iovlen = 1;
   msg.msg_control = control.space;
   msg.msg_controllen = sizeof(control.space);
   struct vki_cmsghdr* c = VKI_CMSG_FIRSTHDR(&msg);
   c->cmsg_len = VKI_CMSG_ALIGN(sizeof(struct vki_cmsghdr)) + sizeof(fds);
   c->cmsg_level = VKI_SOL_SOCKET;
   c->cmsg_type = VKI_SCM_RIGHTS;
   VG_(memcpy)(VKI_CMSG_DATA(c), fds, sizeof(fds));
   /* The descriptors first: cgtrace takes them when it reads the item. */
   SysRes r = SYSCALL4(__NR_sendmsg, ctl_fd, (Addr)&msg, 0, 0);
   if (sr_isError(r)) {
      VG_(umsg)("cgtrace: cannot hand over the child of this fork (error %lu); it is not "
                "recorded\n", sr_Err(r));
      return;
   }
   UChar* p = reserve(8);
   p = put_u32(p, CGT_RAW_FORK);
   put_u32(p, (UInt)pid);
   /* Now, not when the buffer is full: the child's stream waits for it. */
   flush_buffer();
}

static void on_fork_child(ThreadId tid)
{
   (void)tid;
   stop_recording(NULL, 0);   /* the parent's transport is the parent's */
   if (!next_child_made)
      return;
   Transport* t = &next_child;
   SysRes r = VG_(am_shared_mmap_file_float_valgrind)(
                 (SizeT)CGT_RAW_BUFFERS * CGT_RAW_BUFFER_SIZE,
                 VKI_PROT_READ | VKI_PROT_WRITE, t->shm, 0);
   if (sr_isError(r)) {
      VG_(umsg)("cgtrace: cannot map the child's shared buffers (error %lu); it is not "
                "recorded\n", sr_Err(r));
      drop_next_child();
      return;
   }
   /* The parent sends cgtrace's ends; ours become the transport, in the
      room the parent's left in Valgrind's range. */
   ready_fd = VG_(safe_fd)(t->ready[1]);
   free_fd = VG_(safe_fd)(t->freed[0]);
   ctl_fd = VG_(safe_fd)(t->ctl[1]);
   t->ready[1] = t->freed[0] = t->ctl[1] = -1;
   drop_next_child();
   buffers = (UChar*)sr_Res(r);
   current = 0;
   in_flight = 0;
   use_buffer(buffers, CGT_RAW_BUFFER_SIZE);
   UChar* p = reserve(CGT_RAW_MAGIC_LEN);
   VG_(memcpy)(p, CGT_RAW_MAGIC, CGT_RAW_MAGIC_LEN);
}

/* Valgrind passes no exit status to a tool's fini; the exit system calls
   carry it.  Without one, the program was killed by a signal. */
static void on_pre_syscall(ThreadId tid, UInt syscallno, UWord* args, UInt nArgs)
{
   (void)tid; (void)nArgs;
   if (syscallno == __NR_exit_group || syscallno == __NR_exit) {
      exit_called = True;
      exit_code = (Int)(args[0] & 0xff);
   }
   if ((syscallno == __NR_execve || syscallno == __NR_execveat) && ready_fd >= 0) {
      /* If it succeeds, this process's stream ends here: cgtrace must
         see the item before the pipes close. */
      put_u32(reserve(4), CGT_RAW_EXEC);
      flush_buffer();
   }
}

static void on_post_syscall(ThreadId tid, UInt syscallno, UWord* args, UInt nArgs,
                            SysRes res)
{
   (void)tid; (void)syscallno; (void)args; (void)nArgs;
   if (forked && !sr_isError(res) && next_child_made)
      send_fork((Int)sr_Res(res));
   forked = False;
   if (next_child_made)
      drop_next_child();   /* sent, or for a fork that failed */
}

/* Client requests and signals: where they happened in the stream, for
   the replay (Callgrind dumps, zeroes and toggles at its requests, and
   gives a signal handler a call stack of its own). */


/* Copies the client's string at a (up to CGT_RAW_REQUEST_TEXT_MAX bytes) into to,
   as far as it is readable: its length. */
static UInt client_string(Addr a, HChar* to)
{
   UInt n = 0;
   while (n < CGT_RAW_REQUEST_TEXT_MAX) {
      if ((n == 0 || ((a + n) & 0xfff) == 0)
          && !VG_(am_is_valid_for_client)(a + n, 1, VKI_PROT_READ))
         break;
      HChar c = *(const HChar*)(a + n);
      if (c == '\0')
         break;
      to[n++] = c;
   }
   return n;
}

static Bool on_client_request(ThreadId tid, UWord* args, UWord* ret)
{
   if (!VG_IS_TOOL_USERREQ('C', 'T', args[0]) && !VG_IS_TOOL_USERREQ('C', 'G', args[0]))
      return False;
   static HChar text[CGT_RAW_REQUEST_TEXT_MAX];
   UInt n = args[0] == VG_USERREQ__DUMP_STATS_AT && args[1] != 0
            ? client_string((Addr)args[1], text) : 0;
   UChar* p = reserve(16 + n);
   p = put_u32(p, CGT_RAW_REQUEST);
   p = put_u32(p, 8 + n);
   p = put_u32(p, tid);
   p = put_u32(p, (UInt)args[0]);
   VG_(memcpy)(p, text, n);
   *ret = 0;
   return True;
}

static void send_signal(ThreadId tid, Int signo, UInt what, Bool alt_stack)
{
   UChar* p = reserve(14);
   p = put_u32(p, CGT_RAW_SIGNAL);
   p = put_u32(p, tid);
   p = put_u32(p, (UInt)signo);
   p = put_u8(p, what);
   put_u8(p, alt_stack ? 1 : 0);
}

static void on_signal_delivered(ThreadId tid, Int signo, Bool alt_stack)
{
   if (VG_(in_generated_code) && ready_fd >= 0 && !cut.active) {
      UInt id = out_ptr[0] | out_ptr[1] << 8 | out_ptr[2] << 16 | (UInt)out_ptr[3] << 24;
      if (id < next_block_id) {
         cut.active = True;
         cut.tid = tid;
         cut.signo = signo;
         cut.alt_stack = alt_stack;
         cut.len = record_len[id];
         VG_(memcpy)(cut.bytes, out_ptr, cut.len);
         cut.saved_limit = out_limit;
         out_limit = NULL;   /* the next block entry calls at_limit */
         return;
      }
   }
   send_signal(tid, signo, 1, alt_stack);
}

/* The cut execution and the signal's delivery (on_signal_delivered). */
static void send_cut(void)
{
   cut.active = False;
   out_limit = cut.saved_limit;
   /* The handler has not run: its first argument registers hold the
      signal number and the siginfo's address, and the fault address's
      protection is still the one the access met. */
   ULong signo = 0, info = 0;
   VG_(get_shadow_regs_area)(cut.tid, (UChar*)&signo, 0,
                             offsetof(VexGuestAMD64State, guest_RDI), sizeof(signo));
   VG_(get_shadow_regs_area)(cut.tid, (UChar*)&info, 0,
                             offsetof(VexGuestAMD64State, guest_RSI), sizeof(info));
   Int si_code = 0;
   Addr si_addr = 0;
   UInt prot = 0;
   if (signo == (ULong)cut.signo && VG_(am_is_valid_for_client)(info, 24, VKI_PROT_READ)) {
      const vki_siginfo_t* si = (const vki_siginfo_t*)info;
      si_code = si->si_code;
      si_addr = (Addr)si->_sifields._sigfault._addr;
      NSegment const* seg = VG_(am_find_nsegment)(si_addr);
      if (seg != NULL && seg->kind != SkFree && seg->kind != SkResvn)
         prot = (seg->hasR ? 1 : 0) | (seg->hasW ? 2 : 0);
   }
   UChar* p = reserve(8 + 24 + cut.len);
   p = put_u32(p, CGT_RAW_CUT);
   p = put_u32(p, 24 + cut.len);
   p = put_u32(p, cut.tid);
   p = put_u32(p, (UInt)cut.signo);
   p = put_u32(p, (UInt)si_code);
   p = put_u32(p, prot);
   p = put_u64(p, si_addr);
   VG_(memcpy)(p, cut.bytes, cut.len);
   send_signal(cut.tid, cut.signo, 1, cut.alt_stack);
}

static void on_signal_returned(ThreadId tid, Int signo)
{
   send_signal(tid, signo, 2, False);
}

/* ------------------------------------------------------------------ */
/* Start-up and shut-down                                             */
/* ------------------------------------------------------------------ */

static Bool cgt_process_cmd_line_option(const HChar* arg)
{
   const HChar* ignored;
   (void)ignored;
   if VG_INT_CLO(arg, "--cgtrace-fd", clo_ready_fd) {}
   else if VG_INT_CLO(arg, "--cgtrace-free-fd", clo_free_fd) {}
   else if VG_INT_CLO(arg, "--cgtrace-shm-fd", clo_shm_fd) {}
   else if VG_INT_CLO(arg, "--cgtrace-ctl-fd", clo_ctl_fd) {}
   /* Options meant for cgtrace's launcher when it starts a traced child
      (they travel in Valgrind's argument list): accepted, unused here. */
   else if VG_STR_CLO(arg, "--cgtrace-pipe", ignored) {}
   else if VG_STR_CLO(arg, "--cgtrace-out", ignored) {}
   else if VG_STR_CLO(arg, "--cgtrace-quiet", ignored) {}
   else if VG_STR_CLO(arg, "--cgtrace-build-id-dir", ignored) {}
   else
      return False;
   return True;
}

static void cgt_print_usage(void)
{
   VG_(printf)("    --cgtrace-fd=<n> --cgtrace-free-fd=<n> --cgtrace-shm-fd=<n> --cgtrace-ctl-fd=<n>\n"
               "                      the transport to cgtrace (set by cgtrace record)\n");
}

static void cgt_print_debug_usage(void)
{
   VG_(printf)("    (none)\n");
}

static Int take_fd(Long fd, const HChar* what)
{
   Int safe = fd >= 0 ? VG_(safe_fd)((Int)fd) : -1;
   if (safe < 0) {
      VG_(umsg)("cgtrace: cannot use the %s (fd %lld); this tool is started by "
                "'cgtrace record'.\n", what, fd);
      VG_(exit)(1);
   }
   return safe;
}

static void cgt_post_clo_init(void)
{
   ready_fd = take_fd(clo_ready_fd, "ready pipe");
   free_fd = take_fd(clo_free_fd, "free pipe");
   ctl_fd = take_fd(clo_ctl_fd, "control socket");
   Int shm = take_fd(clo_shm_fd, "shared buffers");
   SysRes r = VG_(am_shared_mmap_file_float_valgrind)(
                 (SizeT)CGT_RAW_BUFFERS * CGT_RAW_BUFFER_SIZE,
                 VKI_PROT_READ | VKI_PROT_WRITE, shm, 0);
   if (sr_isError(r)) {
      VG_(umsg)("cgtrace: cannot map the shared buffers (error %lu)\n", sr_Err(r));
      VG_(exit)(1);
   }
   VG_(close)(shm);
   buffers = (UChar*)sr_Res(r);
   current = 0;
   use_buffer(buffers, CGT_RAW_BUFFER_SIZE);

   const HChar* version = VERSION;
   UInt vlen = VG_(strlen)(version);
   UChar* p = reserve(CGT_RAW_MAGIC_LEN + 8 + 20 + vlen);
   VG_(memcpy)(p, CGT_RAW_MAGIC, CGT_RAW_MAGIC_LEN);
   p += CGT_RAW_MAGIC_LEN;
   p = put_u32(p, CGT_RAW_HELLO);
   p = put_u32(p, 20 + vlen);
   p = put_u32(p, CGT_RAW_VERSION);
   p = put_u32(p, VG_(machine_get_size_of_largest_guest_register)());
   p = put_u32(p, VG_(clo_vex_control).guest_max_insns);
   p = put_u32(p, VG_(clo_vex_control).guest_chase ? 1 : 0);
   p = put_u32(p, (UInt)VG_(clo_vex_control).iropt_unroll_thresh);
   VG_(memcpy)(p, version, vlen);
}

static void cgt_fini(Int exitcode)
{
   (void)exitcode;   /* always 0 in Valgrind 3.19 */
   UChar* p = reserve(16);
   p = put_u32(p, CGT_RAW_FINI);
   p = put_u32(p, 8);
   p = put_u32(p, exit_called ? 1 : 0);
   put_u32(p, (UInt)exit_code);
   flush_buffer();
   stop_recording(NULL, 0);
}

static void cgt_pre_clo_init(void)
{
   VG_(details_name)            ("cgtrace");
   VG_(details_version)         (NULL);
   VG_(details_description)     ("the cgtrace execution recorder");
   VG_(details_copyright_author)("cgtrace developers");
   VG_(details_bug_reports_to)  ("the cgtrace developers");
   /* Same as Cachegrind, so that the translation cache behaves alike. */
   VG_(details_avg_translation_sizeB)(500);

   /* The IR we instrument must be the IR Cachegrind instruments: it sets
      this, and it decides which loads survive the optimiser. */
   VG_(clo_vex_control).iropt_register_updates_default
      = VG_(clo_px_file_backed)
      = VexRegUpdSpAtMemAccess;

   VG_(basic_tool_funcs)(cgt_post_clo_init, cgt_instrument, cgt_fini);
   VG_(needs_command_line_options)(cgt_process_cmd_line_option,
                                   cgt_print_usage, cgt_print_debug_usage);
   VG_(track_start_client_code)(on_start_client_code);
   VG_(track_new_mem_startup)(on_new_mem);
   VG_(track_new_mem_mmap)(on_new_mem);
   VG_(track_change_mem_mprotect)(on_mprotect);
   VG_(track_die_mem_munmap)(on_munmap);
   VG_(atfork)(on_fork_pre, on_fork_parent, on_fork_child);
   VG_(needs_client_requests)(on_client_request);
   VG_(track_pre_deliver_signal)(on_signal_delivered);
   VG_(track_post_deliver_signal)(on_signal_returned);
   VG_(needs_syscall_wrapper)(on_pre_syscall, on_post_syscall);
}

VG_DETERMINE_INTERFACE_VERSION(cgt_pre_clo_init)
