/* Instruction classes and accesses from bytes, as Cachegrind would count
   them after VEX. */
#include <string.h>

#include "check.h"
#include "pt/x86_insn.h"
#include "trace.h"

#define IP 0x401000

static struct x86_insn decode(const char *bytes, size_t n)
{
	struct x86_insn in;
	if (x86_insn_decode((const uint8_t *)bytes, n, IP, &in) < 0)
		memset(&in, 0xff, sizeof(in));
	return in;
}

#define DECODE(lit) decode(lit, sizeof(lit) - 1)

static int accesses(const struct x86_insn *in, const char *expected)
{
	char got[256] = "";
	for (unsigned k = 0; k < in->n_accesses; k++) {
		static const char kinds[] = "?RWM";
		size_t n = strlen(got);
		snprintf(got + n, sizeof(got) - n, "%s%c%u", k ? " " : "", kinds[in->accesses[k].kind],
			 in->accesses[k].size);
	}
	if (strcmp(got, expected) != 0)
		printf("  %s: accesses '%s', expected '%s'\n", in->mnemonic, got, expected);
	return strcmp(got, expected) == 0;
}

static void loads_stores_and_modifies(void)
{
	struct x86_insn in = DECODE("\x48\x8b\x07");	/* mov (%rdi),%rax */
	CHECK(accesses(&in, "R8"));
	CHECK_EQ(in.len, 3);
	in = DECODE("\x48\x89\x07");	/* mov %rax,(%rdi) */
	CHECK(accesses(&in, "W8"));
	in = DECODE("\x48\x01\x07");	/* add %rax,(%rdi) */
	CHECK(accesses(&in, "M8"));
	in = DECODE("\xf0\x48\x01\x07");	/* lock add: a load, then a CAS */
	CHECK(accesses(&in, "R8 M8"));
	in = DECODE("\x48\x87\x07");	/* xchg with memory: locked */
	CHECK(accesses(&in, "R8 M8"));
	in = DECODE("\x48\x8d\x07");	/* lea: no access */
	CHECK(accesses(&in, ""));
	in = DECODE("\x0f\x18\x07");	/* prefetchnta: VEX drops it */
	CHECK(accesses(&in, ""));
}

static void stack_operands(void)
{
	struct x86_insn in = DECODE("\x50");	/* push %rax */
	CHECK(accesses(&in, "W8"));
	in = DECODE("\x58");	/* pop %rax */
	CHECK(accesses(&in, "R8"));
	in = DECODE("\xff\x37");	/* push (%rdi): the read, then the push */
	CHECK(accesses(&in, "R8 W8"));
}

static void branches(void)
{
	struct x86_insn in = DECODE("\x74\x05");	/* je +5 */
	CHECK_EQ(in.branch, X86_COND);
	CHECK_EQ(in.target, IP + 7);
	in = DECODE("\xe8\x10\x00\x00\x00");	/* call +0x10 */
	CHECK_EQ(in.branch, X86_CALL);
	CHECK_EQ(in.target, IP + 0x15);
	CHECK_EQ(in.pushes_return, 1);
	CHECK(accesses(&in, "W8"));
	in = DECODE("\xe8\x00\x00\x00\x00");	/* call to the next instruction */
	CHECK_EQ(in.pushes_return, 0);
	in = DECODE("\xff\x17");	/* call *(%rdi) */
	CHECK_EQ(in.branch, X86_INDIRECT_CALL);
	CHECK(accesses(&in, "R8 W8"));
	in = DECODE("\xff\xe0");	/* jmp *%rax */
	CHECK_EQ(in.branch, X86_INDIRECT_JUMP);
	in = DECODE("\xc3");	/* ret */
	CHECK_EQ(in.branch, X86_RETURN);
	CHECK(accesses(&in, "R8"));
	in = DECODE("\x0f\x05");	/* syscall */
	CHECK_EQ(in.branch, X86_SYSCALL);
	in = DECODE("\x48\x89\xc0");	/* mov %rax,%rax */
	CHECK_EQ(in.branch, X86_NOT_BRANCH);
}

static void caveats(void)
{
	struct x86_insn in = DECODE("\xf3\xa4");	/* rep movsb */
	CHECK_EQ(in.caveat, X86_REP);
	CHECK(accesses(&in, "R1 W1"));
	in = DECODE("\xa4");	/* movsb, no rep */
	CHECK_EQ(in.caveat, X86_EXACT);
	in = DECODE("\xc4\xe2\x7d\x2c\x07");	/* vmaskmovps (%rdi),%ymm0,%ymm0 */
	CHECK_EQ(in.caveat, X86_MASKED);
	CHECK(accesses(&in, "R4 R4 R4 R4 R4 R4 R4 R4"));
}

static void invalid_bytes(void)
{
	struct x86_insn in;
	CHECK_EQ(x86_insn_decode((const uint8_t *)"\xff\xff", 2, IP, &in), -1);
	CHECK_EQ(x86_insn_decode((const uint8_t *)"\x48\x8b", 2, IP, &in), -1);	/* cut short */
}

int main(void)
{
	PLAN(5);
	RUN(loads_stores_and_modifies);
	RUN(stack_operands);
	RUN(branches);
	RUN(caveats);
	RUN(invalid_bytes);
	return CHECK_DONE();
}
