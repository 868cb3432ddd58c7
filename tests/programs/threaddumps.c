/* Dumps after another thread zeroed its costs: each dump moves every
   thread's "last dump" cost (Callgrind's summary: line of each part).
   (No stop and start: the summary after one wraps around by the costs
   before it, which the scheduler's waits decide.) */
#include <pthread.h>
#include <stdio.h>
#include <valgrind/callgrind.h>

static volatile long sink;

static __attribute__((noinline)) long work(int n)
{
	long s = 0;
	for (int i = 0; i < n; i++)
		s += i * 3;
	sink = s;
	return s;
}

static void *worker(void *arg)
{
	(void)arg;
	work(100);
	CALLGRIND_ZERO_STATS;
	work(200);
	return NULL;
}

int main(void)
{
	pthread_t t;
	work(50);
	if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 1;
	CALLGRIND_DUMP_STATS_AT("after-join");
	work(60);
	CALLGRIND_DUMP_STATS_AT("again");
	work(70);
	printf("%ld\n", sink);
	return 0;
}
