/* A fault inside a block that has a branch before it: rep movsb into a
   read-only page (its "count is zero" exit comes first), the SIGSEGV
   handler makes the page writable, and the copy goes on. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static char *page;

static void on_segv(int sig)
{
	(void)sig;
	mprotect(page, 4096, PROT_READ | PROT_WRITE);
}

int main(void)
{
	struct sigaction sa;
	char src[64];

	page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sigaction(SIGSEGV, &sa, NULL);
	memset(src, 'x', sizeof(src));
	for (int i = 0; i < 3; i++) {
		mprotect(page, 4096, PROT_READ);
		void *d = page;
		const void *s = src;
		volatile unsigned long count = sizeof(src);
		unsigned long n = count;
		__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	}
	printf("%c\n", page[0]);
	return 0;
}
