/* Many system calls: each pauses a user-only Intel PT trace (TIP.PGD,
   then TIP.PGE where the program resumes). */
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	long sum = 0;
	for (int i = 0; i < 2000; i++) {
		sum += syscall(SYS_getppid) & 1;
		sum += getpid() & 1;
	}
	printf("%ld\n", sum);
	return 0;
}
