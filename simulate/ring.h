/*
 * A ring of slots between a producer and its consumers: the driver that
 * the hierarchy engine (hier.c: the decoding thread's bunches, taken by
 * every part) and the call-graph replay (callgraph.c: the producer's
 * chunks, taken by the replay) share.  Internal to simulate/.
 *
 * The producer fills the slots in order and publishes each; every
 * consumer takes every slot, in order, a turn at a time; a slot is free
 * again once all have taken it.  Any thread may take any consumer's next
 * turn, one thread at a time per consumer: so however many threads there
 * are, each is busy while a consumer has a slot to take, and on one
 * thread the producer takes the turns itself whenever the ring is full
 * -- unless the ring is told that the producer takes none (a consumer
 * that must stay on the threads that take turns, the caller's).
 * After the last slot, each consumer takes one last turn (its end: what
 * it kept back).
 */
#ifndef CGTRACE_RING_H
#define CGTRACE_RING_H

#include <pthread.h>
#include <stdint.h>

#include "sim.h"

/* A consumer's turn: take slot (last 0), or its end (last 1, slot
   meaningless).  0, or an error's negative status (e set): every thread
   stops. */
typedef int ring_turn_fn(void *arg, unsigned consumer, unsigned slot, int last, struct cgt_error *e);

struct ring {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	unsigned n_slots, n_consumers;
	int producer_turns;	/* the producer takes turns while it waits */
	ring_turn_fn *turn;
	void *arg;
	/* under lock: */
	unsigned *unread;	/* by slot: consumers yet to take it (0: free) */
	struct ring_consumer {
		uint64_t next;	/* the slot it takes next, counted from the first */
		int busy, finished;
	} *consumers;
	uint64_t produced;	/* slots published; the producer fills produced % n_slots */
	int produced_all;
	int failed;
	struct cgt_error error;	/* the first failure's */
};

/* A ring of n_slots for n_consumers, whose turns turn(arg, ...) takes,
   the producer among them while it waits if producer_turns.  0, or -1 if
   out of memory. */
int ring_init(struct ring *r, unsigned n_slots, unsigned n_consumers, int producer_turns,
	      ring_turn_fn *turn, void *arg);
void ring_free(struct ring *r);

/* The slot the producer fills (the producer's to call). */
static inline unsigned ring_filling(const struct ring *r)
{
	return (unsigned)(r->produced % r->n_slots);
}

/* The producer publishes the slot it filled and waits for the next to be
   free, taking consumers' turns meanwhile.  0, or -1 once anything failed
   (ring_error). */
int ring_publish(struct ring *r);

/* The producer is done: nothing more is published. */
void ring_produced_all(struct ring *r);

/* The producer failed (e): every thread stops. */
void ring_fail(struct ring *r, const struct cgt_error *e);

/* Takes consumers' turns until every consumer has taken its end, or
   anything failed.  0, or -1 if anything failed (ring_error); then other
   threads may still be in a turn: join them before anything is freed. */
int ring_take_turns(struct ring *r);

/* The first failure (after ring_publish or ring_take_turns gave -1). */
static inline const struct cgt_error *ring_error(const struct ring *r)
{
	return &r->error;
}

#endif
