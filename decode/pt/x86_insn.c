/*
 * Classifying x86-64 instructions with Zydis (x86_insn.h).
 *
 * Accesses follow what Cachegrind sees of VEX's translation: an operand
 * read and written is one MODIFY, or a READ and a MODIFY when locked (a
 * load, then a compare-and-swap); the stack slots of push, pop, call and
 * ret count (Zydis lists them as hidden operands); address computations
 * (lea), prefetches, cache-line flushes and hinting nops touch nothing;
 * a gather reads each element.
 */
#include <Zydis/Zydis.h>
#include <stdio.h>
#include <string.h>

#include "trace.h"
#include "x86_insn.h"

static ZydisDecoder decoder;
static int decoder_ready;

/* Instructions whose memory operand VEX does not turn into an access. */
static int touches_nothing(ZydisMnemonic m)
{
	switch (m) {
	case ZYDIS_MNEMONIC_NOP:
	case ZYDIS_MNEMONIC_PREFETCH:
	case ZYDIS_MNEMONIC_PREFETCHNTA:
	case ZYDIS_MNEMONIC_PREFETCHT0:
	case ZYDIS_MNEMONIC_PREFETCHT1:
	case ZYDIS_MNEMONIC_PREFETCHT2:
	case ZYDIS_MNEMONIC_PREFETCHW:
	case ZYDIS_MNEMONIC_PREFETCHWT1:
	case ZYDIS_MNEMONIC_CLFLUSH:
	case ZYDIS_MNEMONIC_CLFLUSHOPT:
	case ZYDIS_MNEMONIC_CLWB:
	case ZYDIS_MNEMONIC_LEA:
		return 1;
	default:
		return 0;
	}
}

/* Moves whose elements a mask selects (AVX, AVX2 and SSE forms). */
static int is_masked_move(ZydisMnemonic m)
{
	return m == ZYDIS_MNEMONIC_VMASKMOVPS || m == ZYDIS_MNEMONIC_VMASKMOVPD ||
	       m == ZYDIS_MNEMONIC_VPMASKMOVD || m == ZYDIS_MNEMONIC_VPMASKMOVQ ||
	       m == ZYDIS_MNEMONIC_MASKMOVQ || m == ZYDIS_MNEMONIC_MASKMOVDQU ||
	       m == ZYDIS_MNEMONIC_VMASKMOVDQU;
}

static void add(struct x86_insn *out, unsigned kind, uint32_t size)
{
	if (out->n_accesses < X86_MAX_ACCESSES && size > 0)
		out->accesses[out->n_accesses++] = (struct x86_access){ (uint8_t)kind, size };
}

static void classify_branch(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops,
			    uint64_t ip, struct x86_insn *out)
{
	const ZydisDecodedOperand *first = in->operand_count_visible > 0 ? &ops[0] : NULL;
	int direct = first != NULL && first->type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
		     first->imm.is_relative;
	ZyanU64 target = 0;

	if (direct && ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(in, first, ip, &target)))
		out->target = target;
	switch (in->meta.category) {
	case ZYDIS_CATEGORY_COND_BR:
		out->branch = X86_COND;
		break;
	case ZYDIS_CATEGORY_UNCOND_BR:
		out->branch = in->mnemonic == ZYDIS_MNEMONIC_JMP && first != NULL &&
					      first->type == ZYDIS_OPERAND_TYPE_POINTER
				      ? X86_FAR
			      : direct ? X86_JUMP : X86_INDIRECT_JUMP;
		break;
	case ZYDIS_CATEGORY_CALL:
		if (first != NULL && first->type == ZYDIS_OPERAND_TYPE_POINTER) {
			out->branch = X86_FAR;
		} else {
			out->branch = direct ? X86_CALL : X86_INDIRECT_CALL;
			/* libipt (and the hardware) do not track a call to the next
			   instruction, the usual way to read the IP. */
			out->pushes_return = !direct || target != ip + in->length;
		}
		break;
	case ZYDIS_CATEGORY_RET:
		out->branch = in->mnemonic == ZYDIS_MNEMONIC_RET ? X86_RETURN : X86_FAR;
		break;
	case ZYDIS_CATEGORY_SYSCALL:
		out->branch = X86_SYSCALL;
		break;
	case ZYDIS_CATEGORY_INTERRUPT:
	case ZYDIS_CATEGORY_SYSRET:
		out->branch = X86_FAR;
		break;
	default:
		out->branch = X86_NOT_BRANCH;
		break;
	}
}

int x86_insn_decode(const uint8_t *bytes, size_t avail, uint64_t ip, struct x86_insn *out)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];

	memset(out, 0, sizeof(*out));
	if (!decoder_ready) {
		ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
		decoder_ready = 1;
	}
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&decoder, bytes, avail, &in, ops)))
		return -1;
	out->len = in.length;
	snprintf(out->mnemonic, sizeof(out->mnemonic), "%s", ZydisMnemonicGetString(in.mnemonic));
	classify_branch(&in, ops, ip, out);
	if ((in.attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE | ZYDIS_ATTRIB_HAS_REPNE)) &&
	    in.meta.category == ZYDIS_CATEGORY_STRINGOP)
		out->caveat = X86_REP;
	if (touches_nothing(in.mnemonic))
		return 0;
	int masked = is_masked_move(in.mnemonic) ||
		     (in.encoding == ZYDIS_INSTRUCTION_ENCODING_EVEX &&
		      in.avx.mask.mode != ZYDIS_MASK_MODE_DISABLED);
	/* A locked read-modify-write is a load and then a compare-and-swap
	   to VEX, which Cachegrind counts as a read and a modify. */
	int locked = (in.attributes & ZYDIS_ATTRIB_HAS_LOCK) || in.mnemonic == ZYDIS_MNEMONIC_XCHG;

	/* Reads first, then writes: the order of VEX's loads and stores. */
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned i = 0; i < in.operand_count; i++) {
			const ZydisDecodedOperand *op = &ops[i];
			if (op->type != ZYDIS_OPERAND_TYPE_MEMORY || op->actions == 0)
				continue;
			if (op->mem.type != ZYDIS_MEMOP_TYPE_MEM && op->mem.type != ZYDIS_MEMOP_TYPE_VSIB)
				continue;
			int reads = (op->actions & ZYDIS_OPERAND_ACTION_MASK_READ) != 0;
			int writes = (op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) != 0;
			uint32_t size = op->size / 8;
			/* (A REP string operand is conditional too: on the count.) */
			if ((op->actions & (ZYDIS_OPERAND_ACTION_CONDREAD | ZYDIS_OPERAND_ACTION_CONDWRITE) &&
			     !(out->caveat & X86_REP)) ||
			    op->mem.type == ZYDIS_MEMOP_TYPE_VSIB || masked)
				out->caveat |= X86_MASKED;
			if (op->mem.type == ZYDIS_MEMOP_TYPE_VSIB || (masked && op->element_count > 1)) {
				/* A gather or a masked move: one access per element, as
				   VEX splits them (all of them: the mask is unknown). */
				if ((pass == 0 && reads) || (pass == 1 && writes && !reads))
					for (unsigned k = 0; k < op->element_count; k++)
						add(out, reads ? CGT_OP_READ : CGT_OP_WRITE, op->element_size / 8);
				continue;
			}
			if (reads && writes && locked) {
				if (pass == 0) {
					add(out, CGT_OP_READ, size);
					add(out, CGT_OP_MODIFY, size);
				}
			} else if (reads && writes) {
				if (pass == 0)
					add(out, CGT_OP_MODIFY, size);
			} else if (reads && pass == 0) {
				add(out, CGT_OP_READ, size);
			} else if (writes && pass == 1) {
				add(out, CGT_OP_WRITE, size);
			}
		}
	}
	return 0;
}
