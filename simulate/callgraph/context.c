/*
 * The call-graph replay's contexts (a part of callgraph.c; Callgrind's
 * context.c): a function with up to --separate-callers callers, from the
 * thread's function stack, numbered in the order first seen.
 */

/* The context of the function stack's top: the function and up to
   separate_callers callers, not past a handler's marker. */
static uint32_t get_cxt(struct replay *r, struct thread *t)
{
	const uint32_t *stack = &AT(t->fns, uint32_t, 0);
	uint32_t top = stack[t->fn_top];
	if (top == 0)
		return NONE;
	uint32_t size = (uint32_t)FN(r, top).separate_callers + 1, n = 0;
	uint64_t hash = 0;
	while (n < size && n < t->fn_top && stack[t->fn_top - n] != 0)
		hash = (hash * 0x9E3779B97F4A7C15ull) ^ stack[t->fn_top - n++];
	hash ^= 0x5bd1e995ull << 32;
	void *head = cgt_map_get(&r->context_index, hash);
	for (uint32_t i = head ? (uint32_t)(uintptr_t)head - 1 : NONE; i != NONE; i = CXT(r, i).next) {
		struct context *c = &CXT(r, i);
		if (c->n == n) {
			const uint32_t *fns = &AT(r->context_fns, uint32_t, c->first);
			uint32_t k = 0;
			while (k < n && fns[k] == stack[t->fn_top - k])
				k++;
			if (k == n)
				return i;
		}
	}
	long first = vec_extend(&r->context_fns, n);
	long i = vec_push(&r->contexts);
	if (first < 0 || i < 0) {
		r->failed = 1;
		return NONE;
	}
	for (uint32_t k = 0; k < n; k++)
		AT(r->context_fns, uint32_t, first + k) = stack[t->fn_top - k];
	struct context *c = &CXT(r, i);
	c->first = (uint32_t)first;
	c->n = n;
	c->hash = hash;
	c->next = head ? (uint32_t)(uintptr_t)head - 1 : NONE;
	if (cgt_map_put(&r->context_index, hash, (void *)(uintptr_t)(i + 1)) < 0)
		r->failed = 1;
	return (uint32_t)i;
}

/* Enters fn's context (0: a signal handler's marker), saving the one
   before in the next frame's entry. */
void push_cxt(struct replay *r, struct thread *t, uint32_t fn)
{
	struct exec_state *s = state(t);
	if (ensure_calls(r, t, t->sp + 1) < 0)
		return;
	entry(t, t->sp)->cxt = s->cxt;
	entry(t, t->sp)->fn_sp = t->fn_top;
	uint32_t *stack = &AT(t->fns, uint32_t, 0);
	if (fn != 0 && stack[t->fn_top] == fn)
		return;
	if (fn != 0 && stack[t->fn_top] == 0)
		(*active(r, t, fn))++;	/* the first function of a stack */
	if (t->fn_top + 1 >= t->fns.n && vec_push(&t->fns) < 0) {
		r->failed = 1;
		return;
	}
	AT(t->fns, uint32_t, ++t->fn_top) = fn;
	s->cxt = get_cxt(r, t);
}
