/*
 * The call-graph replay's BBCCs and arcs (a part of callgraph.c; Callgrind's
 * bbcc.c and jumps.c): a BB's costs in a context at a recursion level, and
 * the calls and jumps from a BBCC's exit to another BBCC.
 */

/* ---- BBCCs (bbcc.c) -------------------------------------------------------- */

static uint32_t new_bbcc(struct replay *r, uint32_t bb, uint32_t cxt, uint32_t rec)
{
	uint32_t jmps = BB(r, bb).cjmp_count + 1;
	long exits = vec_extend(&r->u64s, jmps);
	long heads = vec_extend(&r->u32s, jmps);
	long i = vec_push(&r->bbccs);
	if (exits < 0 || heads < 0 || i < 0 || r->u64s.n > UINT32_MAX / 2 || r->u32s.n > UINT32_MAX / 2) {
		r->failed = 1;
		return NONE;
	}
	long cost = 0, charged = 0;
	if (r->charged && BB(r, bb).n_insns > 0 &&
	    ((cost = vec_extend(&r->u64s, (size_t)BB(r, bb).n_insns * r->n_ev)) < 0 ||
	     (charged = vec_extend(&r->u64s, jmps)) < 0)) {
		r->failed = 1;
		return NONE;
	}
	for (uint32_t k = 0; k < jmps; k++)
		*U32(r, heads + k) = NONE;
	struct bbcc *c = &BBCC(r, i);
	c->cost = (uint32_t)cost;
	c->charged = (uint32_t)charged;
	c->bb = bb;
	c->cxt = cxt;
	c->rec = rec;
	c->rec_array = NONE;
	c->lru_next = NONE;
	c->exits = (uint32_t)exits;
	c->jcc_heads = (uint32_t)heads;
	c->order = (uint32_t)i;
	return (uint32_t)i;
}

/* A rec 0 BBCC of bb in context cxt, with room for its recursion levels. */
uint32_t new_rec0_bbcc(struct replay *r, uint32_t bb, uint32_t cxt, int recs)
{
	uint32_t c = new_bbcc(r, bb, cxt, 0);
	long a = c == NONE ? -1 : vec_extend(&r->u32s, (size_t)recs);
	if (a < 0) {
		r->failed = 1;
		return NONE;
	}
	for (int k = 0; k < recs; k++)
		*U32(r, a + k) = NONE;
	*U32(r, a) = c;
	BBCC(r, c).rec_array = (uint32_t)a;
	BBCC(r, c).next_bbcc = BB(r, bb).bbcc_list;
	BB(r, bb).bbcc_list = c;
	return c;
}

/* ---- Arcs (jumps.c) ----------------------------------------------------- */

static uint32_t get_jcc(struct replay *r, uint32_t from, uint32_t jmp, uint32_t to)
{
	uint32_t *head = U32(r, BBCC(r, from).jcc_heads + jmp);
	for (uint32_t a = *head; a != NONE; a = ARC(r, a).next_from)
		if (ARC(r, a).to == to)
			return a;
	long cost = vec_extend(&r->u64s, r->n_ev);
	long a = vec_push(&r->arcs);
	if (cost < 0 || a < 0 || r->u64s.n > UINT32_MAX) {
		r->failed = 1;
		return NONE;
	}
	head = U32(r, BBCC(r, from).jcc_heads + jmp);
	struct arc *arc = &ARC(r, a);
	arc->from = from;
	arc->jmp = jmp;
	arc->to = to;
	arc->kind = CGT_CG_CALL;
	arc->cost = (uint32_t)cost;
	arc->next_from = *head;
	*head = (uint32_t)a;
	return (uint32_t)a;
}
