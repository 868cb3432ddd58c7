/* Executions cut short by faults the program recovers from: each case
   faults once in the middle of a block, its handler makes the access
   possible, and the access is made again.  The cases cover where
   Cachegrind's queued events stand at the fault: a full queue, a
   read-modify-write, a copy whose read of the same bytes succeeds and
   whose write faults, an access that straddles into a page it may not
   touch, and a load after an aligned load's check (a side exit: Callgrind
   takes the execution to have left by it). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static char *pages;	/* two pages */
static _Alignas(16) char aligned[16];

static void on_fault(int sig)
{
	(void)sig;
	mprotect(pages, 8192, PROT_READ | PROT_WRITE);
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fault;
	sigaction(SIGSEGV, &sa, NULL);
	pages = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED)
		return 1;
	unsigned long sum = 0;

	/* A load after twenty instructions: the queue was flushed when full. */
	for (int i = 0; i < 2; i++) {
		unsigned long v = 0;
		mprotect(pages, 8192, PROT_NONE);
		__asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
				 "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
				 "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
				 "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
				 "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
				 "add (%1), %0"
				 : "+r"(v) : "r"(pages) : "memory");
		sum += v;
	}
	/* Stores, then a read-modify-write of a read-only page. */
	for (int i = 0; i < 2; i++) {
		volatile unsigned long a = 1, b = 2;
		mprotect(pages, 8192, PROT_READ);
		__asm__ volatile("addl $1, (%0)" : : "r"(pages + 64) : "memory");
		sum += a + b;
	}
	/* Two bytes copied one byte up within a read-only page: the read
	   of the byte the write faults at succeeds. */
	for (int i = 0; i < 2; i++) {
		void *d = pages + 129, *s = pages + 128;
		mprotect(pages, 8192, PROT_READ);
		__asm__ volatile("movsw" : "+D"(d), "+S"(s) : : "memory");
	}
	/* Four bytes across into a page that may not be touched. */
	for (int i = 0; i < 2; i++) {
		mprotect(pages, 8192, PROT_READ);
		mprotect(pages + 4096, 4096, PROT_NONE);
		sum += *(volatile unsigned *)(pages + 4094);
	}
	/* After an aligned load (VEX checks the alignment with a side exit). */
	for (int i = 0; i < 2; i++) {
		unsigned long v = 0;
		mprotect(pages, 8192, PROT_NONE);
		__asm__ volatile("movaps (%1), %%xmm0\n\tadd $1, %0\n\tadd (%2), %0"
				 : "+r"(v) : "r"(aligned), "r"(pages) : "xmm0", "memory");
		sum += v;
	}
	printf("%lu\n", sum);
	return 0;
}
