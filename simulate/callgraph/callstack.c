/*
 * The call-graph replay's call stacks, signal handlers and threads
 * (a part of callgraph.c; Callgrind's callstack.c, threads.c and bbcc.c's
 * handleUnderflow): per thread, the frames of the calls made (each with
 * its arc and the thread's cost when it was entered), the exec states of
 * the signal handlers running, and the activations of each function.
 */

uint32_t *grow_active(struct replay *r, struct thread *t, uint32_t fn)
{
	while (t->active.n <= fn)
		if (vec_push(&t->active) < 0) {
			r->failed = 1;
			static uint32_t scratch;
			return &scratch;
		}
	return &AT(t->active, uint32_t, fn);
}

/* ---- The call stack (callstack.c) ---------------------------------------------- */

static void function_entered(struct replay *r, struct thread *t, uint32_t fn, struct cgt_error *e)
{
	struct fn_node *f = &FN(r, fn);
	if (f->dump_before) {
		char trigger[512];
		snprintf(trigger, sizeof(trigger), "--dump-before=%s",
			 AT(r->fn_names, struct name_node, fn).name);
		if (dump_profile(r, trigger, e) < 0)
			r->failed = FAIL_DUMP;
	} else if (f->zero_before) {
		zero_all_cost(r, t);
	}
	if (f->toggle_collect)
		state(t)->collect = !state(t)->collect;
}

static void function_left(struct replay *r, struct thread *t, uint32_t fn, struct cgt_error *e)
{
	struct fn_node *f = &FN(r, fn);
	if (f->dump_after) {
		char trigger[512];
		snprintf(trigger, sizeof(trigger), "--dump-after=%s",
			 AT(r->fn_names, struct name_node, fn).name);
		if (dump_profile(r, trigger, e) < 0)
			r->failed = FAIL_DUMP;
	}
	if (f->toggle_collect)
		state(t)->collect = !state(t)->collect;
}

void push_call_stack(struct replay *r, struct thread *t, uint32_t from, uint32_t jmp,
		     uint32_t to, uint64_t sp, int skip, struct cgt_error *e)
{
	struct exec_state *s = state(t);
	if (ensure_calls(r, t, t->sp + 2) < 0)
		return;
	uint32_t a = NONE;
	if (!skip) {
		uint32_t to_fn = cxt_fn(r, BBCC(r, to).cxt);
		memcpy(entry(t, t->sp)->enter_cost, s->cost, sizeof(s->cost));
		a = get_jcc(r, from, jmp, to);
		if (a == NONE)
			return;
		uint32_t *depth = active(r, t, to_fn);
		if (!r->o->skip_direct_rec || cxt_fn(r, BBCC(r, from).cxt) != to_fn)
			(*depth)++;
		ARC(r, a).call_counter++;
		if (*depth == 1)
			function_entered(r, t, to_fn, e);
	}
	const struct bb *fb = &BB(r, BBCC(r, from).bb);
	const struct bb_jmp *j = &AT(r->bb_jmps, struct bb_jmp, fb->jmp + jmp);
	struct call_entry *c = entry(t, t->sp);
	c->arc = a;
	c->sp = sp;
	c->ret_addr = j->kind == JK_CALL ? fb->insns[j->instr].addr + fb->insns[j->instr].len : 0;
	c->nonskipped = s->nonskipped;
	c->node = NO_NODE;
	t->sp++;
	entry(t, t->sp)->cxt = NONE;
	if (!skip) {
		s->nonskipped = NONE;
	} else if (s->nonskipped == NONE) {
		/* a call from a counted function into a skipped one */
		s->nonskipped = from;
		if (BBCC(r, from).skipped == 0) {
			long k = vec_extend(&r->u64s, r->n_ev);
			if (k < 0 || r->u64s.n > UINT32_MAX)
				r->failed = 1;
			else
				BBCC(r, from).skipped = (uint32_t)k;
		}
	}
}

void pop_call_stack(struct replay *r, struct thread *t, struct cgt_error *e)
{
	struct exec_state *s = state(t);
	if (s->sig > 0 && t->sp == s->call_stack_bottom) {
		/* leaving a handler without its return: longjmp */
		post_signal(r, t, e);
		s = state(t);
	}
	if (t->sp == 0)
		return;
	struct call_entry *c = entry(t, t->sp - 1);
	uint32_t a = c->arc;
	s->nonskipped = c->nonskipped;
	if (a != NONE) {
		struct arc *arc = &ARC(r, a);
		uint32_t to_fn = cxt_fn(r, BBCC(r, arc->to).cxt);
		uint32_t *depth = active(r, t, to_fn);
		if (!r->o->skip_direct_rec || cxt_fn(r, BBCC(r, arc->from).cxt) != to_fn)
			(*depth)--;
		uint32_t left = *depth;
		if (add_diff(U64(r, arc->cost), c->enter_cost, s->cost, r->n_ev))
			BBCC(r, arc->from).ret_counter++;
		s->cxt = c->cxt;
		t->fn_top = c->fn_sp;
		if (left == 0)
			function_left(r, t, to_fn, e);
	}
	entry(t, t->sp - 1)->cxt = NONE;
	if (c->node != NO_NODE) {
		backdate_returned(&r->backdate, c->node, r->u64s.v);
		c->node = NO_NODE;
	}
	t->sp--;
}

/* ---- Signals and threads (threads.c) ------------------------------------------ */

static void init_exec_state(struct replay *r, struct exec_state *s)
{
	s->collect = r->o->collect_atstart;
	s->cxt = s->bbcc = s->nonskipped = NONE;
	s->passed = 0;
}

struct thread *get_thread(struct replay *r, uint32_t tid)
{
	if (tid >= MAX_TID)
		return NULL;
	if (tid >= r->n_threads) {
		size_t n = r->n_threads;
		if (cgt_array_grow(&r->threads, &n, 0, (size_t)tid + 1, sizeof(*r->threads)) < 0)
			return NULL;
		memset(r->threads + r->n_threads, 0, (n - r->n_threads) * sizeof(*r->threads));
		r->n_threads = n;
	}
	if (r->threads[tid] == NULL) {
		struct thread *t = calloc(1, sizeof(*t));
		if (t == NULL)
			return NULL;
		t->tid = tid;
		t->states.size = sizeof(struct exec_state);
		t->calls.size = sizeof(struct call_entry);
		t->fns.size = t->active.size = sizeof(uint32_t);
		r->threads[tid] = t;
		if (vec_push(&t->states) < 0 || vec_push(&t->fns) < 0 || ensure_calls(r, t, 1) < 0)
			return NULL;
		t->current = &AT(t->states, struct exec_state, 0);
		init_exec_state(r, state(t));
		entry(t, 0)->cxt = NONE;
	}
	return r->threads[tid];
}

static void pre_signal(struct replay *r, struct thread *t, uint32_t signo)
{
	uint32_t bottom = t->sp;
	long k = vec_push(&t->states);
	if (k < 0) {
		r->failed = 1;
		return;
	}
	struct exec_state *s = t->current = &AT(t->states, struct exec_state, k);
	init_exec_state(r, s);
	s->sig = signo;
	s->call_stack_bottom = bottom;
	push_cxt(r, t, 0);
}

static void post_signal(struct replay *r, struct thread *t, struct cgt_error *e)
{
	struct exec_state *s = state(t);
	if (t->states.n < 2 || s->sig == 0)
		return;
	while (t->sp > s->call_stack_bottom) {
		uint32_t sp = t->sp;
		s->sig = 0;	/* no post_signal from inside the pops */
		pop_call_stack(r, t, e);
		s = state(t);
		s->sig = 1;
		if (t->sp == sp)
			break;
	}
	if (s->cxt != NONE)
		(*active(r, t, cxt_fn(r, s->cxt)))--;
	uint32_t *stack = &AT(t->fns, uint32_t, 0);
	if (t->fn_top > 0) {
		if (stack[t->fn_top] != 0)
			t->fn_top--;
		if (t->fn_top > 0)
			t->fn_top--;
	}
	for (unsigned k = 0; k < r->n_ev; k++)
		t->sighandler_cost[k] += s->cost[k];
	t->states.n--;
	t->current = &AT(t->states, struct exec_state, t->states.n - 1);
}

static void unwind_thread(struct replay *r, struct thread *t, struct cgt_error *e)
{
	while (t->states.n > 1)
		post_signal(r, t, e);
	while (t->sp > 0)
		pop_call_stack(r, t, e);
	init_exec_state(r, state(t));
	t->fn_top = 0;
}

/* ---- A return past the first frame (bbcc.c handleUnderflow) ------------------- */

static void handle_underflow(struct replay *r, struct thread *t, uint32_t bb, struct cgt_error *e)
{
	struct exec_state *s = state(t);
	/* Callgrind makes a BB at the return address - 1, without
	   instructions, whose BBCC stands for the call it never saw. */
	uint64_t addr = BB(r, bb).addr - 1;
	uint32_t src_bb = NONE;
	void *head = cgt_map_get(&r->bb_index, addr);
	for (uint32_t i = head ? (uint32_t)(uintptr_t)head - 1 : NONE; i != NONE; i = BB(r, i).next)
		if (BB(r, i).obj == BB(r, bb).obj)
			src_bb = i;
	int seen_before = src_bb != NONE;
	if (!seen_before) {
		long jmp = vec_extend(&r->bb_jmps, 1);
		long i = vec_push(&r->bbs);
		if (jmp < 0 || i < 0 || cgt_map_put(&r->bb_index, addr, (void *)(uintptr_t)(i + 1)) < 0) {
			r->failed = 1;
			return;
		}
		struct bb *b = &BB(r, i);
		*b = BB(r, bb);
		b->addr = addr;
		b->offset--;
		b->n_insns = 0;
		b->insns = NULL;
		b->cjmp_count = 0;
		b->jmp = (uint32_t)jmp;
		b->is_entry = 0;
		b->bbcc_list = b->last_bbcc = NONE;
		b->next = head ? (uint32_t)(uintptr_t)head - 1 : NONE;
		src_bb = (uint32_t)i;
	}
	uint32_t source = BB(r, src_bb).bbcc_list;
	if (source == NONE) {
		source = new_bbcc(r, src_bb, NONE, 0);
		if (source == NONE)
			return;
		BBCC(r, source).next_bbcc = NONE;
		BB(r, src_bb).bbcc_list = BB(r, src_bb).last_bbcc = source;
	}
	if (!seen_before)
		BBCC(r, source).ecounter_sum = s->collect ? 1 : 0;
	else if (s->collect)
		BBCC(r, source).ecounter_sum++;

	/* a new top context: the function returned to */
	uint32_t caller = BB(r, bb).fn;
	if (t->fn_top > 0)
		t->fn_top--;
	s->cxt = NONE;
	push_cxt(r, t, caller);
	if (!seen_before) {
		int recs = FN(r, caller).separate_recs > 0 ? FN(r, caller).separate_recs : 1;
		long a = vec_extend(&r->u32s, (size_t)recs);
		if (a < 0) {
			r->failed = 1;
			return;
		}
		for (int k = 0; k < recs; k++)
			*U32(r, a + k) = NONE;
		*U32(r, a) = source;
		BBCC(r, source).rec_array = (uint32_t)a;
		BBCC(r, source).cxt = s->cxt;
	}
	/* the returning function: a frame from that call, closed by the
	   caller at once, charged with the cost since the last dump (in a
	   handler, since it began) */
	uint32_t returning = cxt_fn(r, BBCC(r, s->bbcc).cxt);
	(*active(r, t, returning))--;
	s->nonskipped = NONE;
	push_cxt(r, t, returning);
	push_call_stack(r, t, source, 0, s->bbcc, UINT64_MAX, 0, e);
	if (r->failed || t->sp == 0)
		return;
	struct call_entry *c = entry(t, t->sp - 1);
	if (s->sig == 0)
		memcpy(c->enter_cost, t->lastdump_cost, sizeof(c->enter_cost));
	else
		memset(c->enter_cost, 0, sizeof(c->enter_cost));
}
