/* Code written at run time, then overwritten with other code at the same
   address: the second is another block (Callgrind discards the first's
   translation and makes a new BB). */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

typedef long (*fn_t)(long);

int main(void)
{
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* lea rax, [rdi+1]; ret */
	static const unsigned char first[] = { 0x48, 0x8d, 0x47, 0x01, 0xc3 };
	/* mov rax, rdi; add rax, rax (three times); inc rax; ret */
	static const unsigned char second[] = { 0x48, 0x89, 0xf8, 0x48, 0x01, 0xc0, 0x48, 0x01,
						0xc0, 0x48, 0x01, 0xc0, 0x48, 0xff, 0xc0, 0xc3 };
	long t = 0;
	if (code == MAP_FAILED)
		return 1;
	memcpy(code, first, sizeof(first));
	for (int i = 0; i < 10; i++)
		t += ((fn_t)code)(i);
	memcpy(code, second, sizeof(second));
	for (int i = 0; i < 10; i++)
		t += ((fn_t)code)(i);
	printf("%ld\n", t);
	return 0;
}
