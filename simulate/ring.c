/*
 * A ring of slots between a producer and its consumers (ring.h).
 */
#include <stdlib.h>
#include <string.h>

#include "ring.h"

int ring_init(struct ring *r, unsigned n_slots, unsigned n_consumers, int producer_turns,
	      ring_turn_fn *turn, void *arg)
{
	memset(r, 0, sizeof(*r));
	r->n_slots = n_slots;
	r->n_consumers = n_consumers;
	r->producer_turns = producer_turns;
	r->turn = turn;
	r->arg = arg;
	r->unread = calloc(n_slots, sizeof(*r->unread));
	r->consumers = calloc(n_consumers, sizeof(*r->consumers));
	if (r->unread == NULL || r->consumers == NULL) {
		free(r->unread);
		free(r->consumers);
		return -1;
	}
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->changed, NULL);
	return 0;
}

void ring_free(struct ring *r)
{
	pthread_cond_destroy(&r->changed);
	pthread_mutex_destroy(&r->lock);
	free(r->unread);
	free(r->consumers);
}

/* Records the first failure and wakes every thread.  Lock held. */
static void failed(struct ring *r, const struct cgt_error *e)
{
	if (!r->failed) {
		r->failed = 1;
		r->error = *e;
	}
	pthread_cond_broadcast(&r->changed);
}

/* The consumer whose next turn can be taken now, furthest behind; -1 if
   none.  Lock held. */
static int ready(const struct ring *r)
{
	int best = -1;
	for (unsigned c = 0; c < r->n_consumers; c++) {
		const struct ring_consumer *k = &r->consumers[c];
		if (k->busy || k->finished || (k->next == r->produced && !r->produced_all))
			continue;
		if (best < 0 || k->next < r->consumers[best].next)
			best = (int)c;
	}
	return best;
}

/* Consumer c takes its next turn.  Lock held, released meanwhile. */
static void take_turn(struct ring *r, unsigned c)
{
	struct ring_consumer *k = &r->consumers[c];
	const int last = k->next == r->produced;
	const unsigned slot = (unsigned)(k->next % r->n_slots);
	struct cgt_error e;
	k->busy = 1;
	pthread_mutex_unlock(&r->lock);
	int rc = r->turn(r->arg, c, slot, last, &e);
	pthread_mutex_lock(&r->lock);
	k->busy = 0;
	if (rc < 0)
		failed(r, &e);
	if (last) {
		k->finished = 1;
	} else {
		k->next++;
		r->unread[slot]--;
	}
	pthread_cond_broadcast(&r->changed);
}

int ring_publish(struct ring *r)
{
	pthread_mutex_lock(&r->lock);
	r->unread[ring_filling(r)] = r->n_consumers;
	r->produced++;
	pthread_cond_broadcast(&r->changed);
	while (!r->failed && r->unread[ring_filling(r)] > 0) {
		int c = r->producer_turns ? ready(r) : -1;
		if (c >= 0)
			take_turn(r, (unsigned)c);
		else
			pthread_cond_wait(&r->changed, &r->lock);
	}
	int rc = r->failed ? -1 : 0;
	pthread_mutex_unlock(&r->lock);
	return rc;
}

void ring_produced_all(struct ring *r)
{
	pthread_mutex_lock(&r->lock);
	r->produced_all = 1;
	pthread_cond_broadcast(&r->changed);
	pthread_mutex_unlock(&r->lock);
}

void ring_fail(struct ring *r, const struct cgt_error *e)
{
	pthread_mutex_lock(&r->lock);
	failed(r, e);
	pthread_mutex_unlock(&r->lock);
}

int ring_take_turns(struct ring *r)
{
	pthread_mutex_lock(&r->lock);
	for (;;) {
		if (r->failed)
			break;
		int c = ready(r);
		if (c >= 0) {
			take_turn(r, (unsigned)c);
			continue;
		}
		unsigned finished = 0;
		for (unsigned k = 0; k < r->n_consumers; k++)
			finished += (unsigned)r->consumers[k].finished;
		if (finished == r->n_consumers)
			break;
		pthread_cond_wait(&r->changed, &r->lock);
	}
	int rc = r->failed ? -1 : 0;
	pthread_mutex_unlock(&r->lock);
	return rc;
}
