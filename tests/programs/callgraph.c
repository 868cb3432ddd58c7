/* Call-graph shapes for Callgrind's replay: mutual recursion (is_even'2),
   calls through function pointers, a tail call compiled to a jmp (the
   Makefile adds -foptimize-sibling-calls), longjmp out of several frames,
   a signal handler that calls a function (a root of its own), and
   recursion many levels deep.  Every call that is not the tail call has
   work after it, so that no other call becomes a jmp. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>

static volatile long sink;
static jmp_buf env;

static int is_odd(int n);

static __attribute__((noinline)) int is_even(int n)
{
	if (n == 0)
		return 1;
	int r = is_odd(n - 1);
	sink += r;
	return r;
}

static __attribute__((noinline)) int is_odd(int n)
{
	if (n == 0)
		return 0;
	int r = is_even(n - 1);
	sink += r;
	return r;
}

static __attribute__((noinline)) long op_add(long a, long b)
{
	return a + b;
}

static __attribute__((noinline)) long op_mul(long a, long b)
{
	return a * b;
}

/* volatile: each call loads its target, an indirect call. */
static long (*volatile ops[2])(long, long) = { op_add, op_mul };

static __attribute__((noinline)) long leaf(long x)
{
	sink += x;
	return x * 3;
}

/* The tail call: "jmp leaf", leaf's frame is tailer's. */
static __attribute__((noinline)) long tailer(long x)
{
	sink = x;
	return leaf(x + 3);
}

static __attribute__((noinline)) void deep(int n)
{
	if (n <= 0) {
		if (n == 0)
			longjmp(env, 1);
		return;
	}
	deep(n - 1);
	sink += n;
}

static __attribute__((noinline)) int do_jump(int n)
{
	if (setjmp(env))
		return 1;
	deep(n);
	return 0;
}

static __attribute__((noinline)) long descend(int n)
{
	if (n == 0)
		return 0;
	long r = descend(n - 1);
	sink += r;
	return r + n;
}

static __attribute__((noinline)) long work(int n)
{
	long s = 0;
	for (int i = 0; i < n; i++)
		s += i ^ (s >> 3);
	return s;
}

static void on_usr1(int sig)
{
	(void)sig;
	sink += work(100);
}

static __attribute__((noinline)) void victim(void)
{
	raise(SIGUSR1);
	sink += work(10);
}

int main(void)
{
	long total = 0;
	struct sigaction sa = { .sa_handler = on_usr1 };

	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		return 1;
	total += is_even(7) + is_odd(6);
	for (int i = 0; i < 4; i++)
		total += ops[i & 1](i, 3);
	total += tailer(1) + tailer(2);
	total += do_jump(5);
	total += descend(20);
	victim();
	printf("%ld\n", total);
	return 0;
}
