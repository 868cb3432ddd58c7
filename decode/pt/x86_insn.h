/*
 * One x86-64 instruction as the simulator needs it, from its bytes (Zydis):
 * its length, what kind of branch it is, and the data accesses it makes,
 * in the terms of a block's ops (READ, WRITE, MODIFY; sizes in bytes) and
 * in Cachegrind's order (reads before writes).  Which addresses they touch
 * a trace of control flow cannot say.  Internal to decode/ (and the tests'
 * PT synthesizer).
 */
#ifndef CGTRACE_X86_INSN_H
#define CGTRACE_X86_INSN_H

#include <stddef.h>
#include <stdint.h>

enum x86_branch {
	X86_NOT_BRANCH,
	X86_COND,		/* jcc, jrcxz, loop: a TNT bit */
	X86_JUMP,		/* direct: no packet */
	X86_CALL,		/* direct */
	X86_INDIRECT_JUMP,	/* a TIP */
	X86_INDIRECT_CALL,
	X86_RETURN,		/* a TNT bit (compressed) or a TIP */
	X86_SYSCALL,		/* syscall, sysenter: tracing pauses (user only) */
	X86_FAR,		/* int, iret, far transfers: treated like a syscall */
};

/* Why the accesses may differ from what Valgrind's translation makes. */
enum x86_caveat {
	X86_EXACT = 0,
	X86_REP = 1,		/* a REP string op: iterations are one execution */
	X86_MASKED = 2,		/* masked or gathered: elements done are unknown */
};

#define X86_MAX_ACCESSES 32

struct x86_access {
	uint8_t kind;		/* CGT_OP_READ, CGT_OP_WRITE or CGT_OP_MODIFY */
	uint32_t size;
};

struct x86_insn {
	uint8_t len;
	uint8_t branch;		/* enum x86_branch */
	uint8_t caveat;		/* enum x86_caveat */
	uint8_t pushes_return;	/* a call that pushes a return address PT tracks:
				   not a call to the next instruction */
	uint64_t target;	/* direct branches */
	uint32_t n_accesses;
	struct x86_access accesses[X86_MAX_ACCESSES];
	char mnemonic[16];
};

/* Decodes the instruction at ip from bytes (at most avail of them).
   0, or -1 if they are not a valid 64-bit instruction. */
int x86_insn_decode(const uint8_t *bytes, size_t avail, uint64_t ip, struct x86_insn *out);

#endif
