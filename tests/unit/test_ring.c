/*
 * simulate/ring.h: every consumer takes every slot in order and then its
 * end, a slot is never filled again before all have taken it, on one
 * thread and on several; a failed turn stops the producer and every
 * thread, its error kept.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ring.h"

#define MAX_CONSUMERS 5

struct run {
	struct ring ring;
	uint64_t *slots;		/* what the producer put in each */
	uint64_t seen[MAX_CONSUMERS];	/* the next value each consumer expects */
	int ends[MAX_CONSUMERS];
	int out_of_order;
	uint64_t fail_at;		/* a turn on this value fails (UINT64_MAX: none) */
	int busy[MAX_CONSUMERS];	/* threads in a consumer's turn at once */
	int overlapped;
	pthread_t producer;
	int on_producer;		/* turns the producer's thread took */
};

static int turn(void *arg, unsigned consumer, unsigned slot, int last, struct cgt_error *e)
{
	struct run *u = arg;
	if (__atomic_fetch_add(&u->busy[consumer], 1, __ATOMIC_SEQ_CST) != 0)
		u->overlapped = 1;
	if (pthread_equal(pthread_self(), u->producer))
		__atomic_fetch_add(&u->on_producer, 1, __ATOMIC_SEQ_CST);
	int rc = 0;
	if (last) {
		u->ends[consumer]++;
	} else {
		if (u->slots[slot] != u->seen[consumer])
			u->out_of_order = 1;
		if (u->slots[slot] == u->fail_at)
			rc = cgt_fail(e, cgt_err_nomem, "failed at %llu",
				      (unsigned long long)u->slots[slot]);
		u->seen[consumer]++;
	}
	__atomic_fetch_sub(&u->busy[consumer], 1, __ATOMIC_SEQ_CST);
	return rc;
}

/* A thread taking turns beside the producer's. */
struct taker {
	struct ring *ring;
	int rc;
	pthread_t id;
};

static void *take(void *arg)
{
	struct taker *t = arg;
	t->rc = ring_take_turns(t->ring);
	return NULL;
}

/* A ring of n_slots for n_consumers, nothing produced, the producer
   taking turns or not. */
static void start_with(struct run *u, unsigned n_slots, unsigned n_consumers, int producer_turns)
{
	memset(u, 0, sizeof(*u));
	u->fail_at = UINT64_MAX;
	u->producer = pthread_self();
	CHECK(ring_init(&u->ring, n_slots, n_consumers, producer_turns, turn, u) == 0);
	u->slots = calloc(n_slots, sizeof(*u->slots));
	CHECK(u->slots != NULL);
}

static void start(struct run *u, unsigned n_slots, unsigned n_consumers)
{
	start_with(u, n_slots, n_consumers, 1);
}

static void finish(struct run *u)
{
	ring_free(&u->ring);
	free(u->slots);
}

/* The values 0 .. n-1 produced, with n_threads taking turns: ring_publish's
   last answer; *take_rc ring_take_turns's (every thread's the same). */
static int run_all(struct run *u, unsigned n_threads, uint64_t n, int *take_rc)
{
	struct taker takers[8];
	for (unsigned t = 1; t < n_threads; t++) {
		takers[t] = (struct taker){ &u->ring, 0, 0 };
		CHECK(pthread_create(&takers[t].id, NULL, take, &takers[t]) == 0);
	}
	int publish_rc = 0;
	for (uint64_t v = 0; v < n && publish_rc == 0; v++) {
		u->slots[ring_filling(&u->ring)] = v;
		publish_rc = ring_publish(&u->ring);
	}
	ring_produced_all(&u->ring);
	*take_rc = ring_take_turns(&u->ring);
	for (unsigned t = 1; t < n_threads; t++) {
		pthread_join(takers[t].id, NULL);
		CHECK_EQ(takers[t].rc, *take_rc);
	}
	return publish_rc;
}

static void one_thread(void)
{
	struct run u;
	int take_rc;
	start(&u, 3, 2);
	CHECK_EQ(run_all(&u, 1, 10, &take_rc), 0);
	CHECK_EQ(take_rc, 0);
	for (unsigned c = 0; c < 2; c++) {
		CHECK_EQ(u.seen[c], 10);
		CHECK_EQ(u.ends[c], 1);
	}
	CHECK(!u.out_of_order);
	/* a ring of one slot: each published slot taken before the next */
	finish(&u);
	start(&u, 1, 1);
	CHECK_EQ(run_all(&u, 1, 5, &take_rc), 0);
	CHECK_EQ(u.seen[0], 5);
	CHECK_EQ(u.ends[0], 1);
	CHECK(!u.out_of_order);
	finish(&u);
}

static void threads(void)
{
	for (unsigned n_threads = 2; n_threads <= 4; n_threads++) {
		struct run u;
		int take_rc;
		start(&u, 4, MAX_CONSUMERS);
		CHECK_EQ(run_all(&u, n_threads, 20000, &take_rc), 0);
		CHECK_EQ(take_rc, 0);
		for (unsigned c = 0; c < MAX_CONSUMERS; c++) {
			CHECK_EQ(u.seen[c], 20000);
			CHECK_EQ(u.ends[c], 1);
		}
		CHECK(!u.out_of_order);
		CHECK(!u.overlapped);
		finish(&u);
	}
}

/* A consumer kept off the producer's thread: every turn on the other. */
static void no_producer_turns(void)
{
	struct run u;
	int take_rc;
	start_with(&u, 2, 1, 0);
	struct taker t = { &u.ring, 0, 0 };
	CHECK(pthread_create(&t.id, NULL, take, &t) == 0);
	int publish_rc = 0;
	for (uint64_t v = 0; v < 5000 && publish_rc == 0; v++) {
		u.slots[ring_filling(&u.ring)] = v;
		publish_rc = ring_publish(&u.ring);
	}
	ring_produced_all(&u.ring);
	pthread_join(t.id, NULL);
	take_rc = t.rc;
	CHECK_EQ(publish_rc, 0);
	CHECK_EQ(take_rc, 0);
	CHECK_EQ(u.seen[0], 5000);
	CHECK_EQ(u.ends[0], 1);
	CHECK_EQ(u.on_producer, 0);
	CHECK(!u.out_of_order);
	finish(&u);
}

static void failure(void)
{
	for (unsigned n_threads = 1; n_threads <= 3; n_threads += 2) {
		struct run u;
		int take_rc;
		start(&u, 4, 2);
		u.fail_at = 500;
		CHECK_EQ(run_all(&u, n_threads, 1000, &take_rc), -1);
		CHECK_EQ(take_rc, -1);
		CHECK(strcmp(ring_error(&u.ring)->msg, "failed at 500") == 0);
		CHECK(u.seen[0] <= 500 + 4 + 1 && u.seen[1] <= 500 + 4 + 1);
		CHECK_EQ(u.ends[0] + u.ends[1], 0);
		finish(&u);
	}
}

int main(void)
{
	PLAN(4);
	RUN(one_thread);
	RUN(threads);
	RUN(no_producer_turns);
	RUN(failure);
	return CHECK_DONE();
}
