/* pthreads: workers summing slices of an array, a mutex and atomics. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4
#define N (1 << 18)

static int data[N];
static long total;
static long atomic_total;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
	long id = (long)arg, sum = 0;

	for (int i = (int)id; i < N; i += THREADS)
		sum += data[i];
	pthread_mutex_lock(&lock);
	total += sum;
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < 1000; i++)
		__atomic_fetch_add(&atomic_total, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];

	for (int i = 0; i < N; i++)
		data[i] = i & 1023;
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("%ld %ld\n", total, atomic_total);
	return 0;
}
