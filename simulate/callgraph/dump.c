/*
 * The call-graph replay's dumps (a part of callgraph.c; Callgrind's dump.c):
 * a struct cgt_cg_profile built from the BBCCs and arcs, in Callgrind's
 * order, for the options' dump callback; what it takes is zeroed, as
 * Callgrind's printing zeroes what it prints.  And zeroing without a dump
 * (ZERO_STATS, --zero-before).
 */

static int is_zero(const uint64_t *c, unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		if (c[k] != 0)
			return 0;
	return 1;
}

static struct thread *main_thread(struct replay *r)
{
	return get_thread(r, 1);
}

/* Callgrind sorts by its nodes' addresses (dump.c my_cmp); ours are
   numbered in the order first seen, which is what it allocates in. */
static const struct replay *sorting;

static int compare_centres(const void *pa, const void *pb)
{
	const struct replay *r = sorting;
	const struct bbcc *a = &BBCC(r, *(const uint32_t *)pa), *b = &BBCC(r, *(const uint32_t *)pb);
	const struct context *ca = &CXT(r, a->cxt), *cb = &CXT(r, b->cxt);
	const uint32_t *fa = &AT(r->context_fns, uint32_t, ca->first),
		       *fb = &AT(r->context_fns, uint32_t, cb->first);
	const struct name_node *na = &AT(r->fn_names, struct name_node, fa[0]),
			       *nb = &AT(r->fn_names, struct name_node, fb[0]);
	uint32_t oa = AT(r->files, struct name_node, na->parent).parent,
		 ob = AT(r->files, struct name_node, nb->parent).parent;
	if (oa != ob)
		return oa < ob ? -1 : 1;
	if (na->parent != nb->parent)
		return na->parent < nb->parent ? -1 : 1;
	if (fa[0] != fb[0])
		return fa[0] < fb[0] ? -1 : 1;
	if (a->rec != b->rec)
		return a->rec < b->rec ? -1 : 1;
	for (uint32_t k = 1; k < ca->n && k < cb->n; k++) {
		uint32_t xa = AT(r->files, struct name_node, AT(r->fn_names, struct name_node, fa[k]).parent).parent;
		uint32_t xb = AT(r->files, struct name_node, AT(r->fn_names, struct name_node, fb[k]).parent).parent;
		if (xa != xb)
			return xa < xb ? -1 : 1;
		if (fa[k] != fb[k])
			return fa[k] < fb[k] ? -1 : 1;
	}
	if (ca->n != cb->n)
		return ca->n < cb->n ? -1 : 1;
	if (BB(r, a->bb).offset != BB(r, b->bb).offset)
		return BB(r, a->bb).offset < BB(r, b->bb).offset ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* What a dump writes: built from the BBCCs, which it zeroes as Callgrind's
   printing does. */
struct dump_build {
	struct vec list;	/* uint32_t BBCCs */
	struct vec centres;	/* struct cgt_cg_centre, cost fields as offsets */
	struct vec arcs;	/* struct cgt_cg_arc, cost as offsets */
	struct vec costs;	/* uint64_t */
	struct vec objs, files, fns, contexts;
};

static int listed(struct replay *r, struct dump_build *db, uint32_t c)
{
	if (BBCC(r, c).listed)
		return 0;
	long k = vec_push(&db->list);
	if (k < 0)
		return -1;
	AT(db->list, uint32_t, k) = c;
	BBCC(r, c).listed = 1;
	return 0;
}

static int keep_cost(struct replay *r, struct dump_build *db, const uint64_t *cost, size_t *at)
{
	long k = vec_extend(&db->costs, r->n_ev);
	if (k < 0)
		return -1;
	memcpy(&AT(db->costs, uint64_t, k), cost, r->n_ev * sizeof(uint64_t));
	*at = (size_t)k;
	return 0;
}

/* One arc if it is written (dump.c fprint_bbcc, fprint_jcc): a call that
   got cost, a jump taken; then zeroed. */
static int arc_out(struct replay *r, struct dump_build *db, uint32_t a, uint32_t insn, int at_end,
		   uint64_t executed)
{
	struct arc *arc = &ARC(r, a);
	int is_call = arc->kind == CGT_CG_CALL;
	uint64_t *cost = U64(r, arc->cost);
	if (is_call ? is_zero(cost, r->n_ev) : arc->call_counter == 0)
		return 0;
	long k = vec_push(&db->arcs);
	if (k < 0)
		return -1;
	struct cgt_cg_arc *out = &AT(db->arcs, struct cgt_cg_arc, k);
	const struct bbcc *to = &BBCC(r, arc->to);
	out->insn = insn;
	out->kind = arc->kind;
	out->at_end = (uint8_t)at_end;
	out->to_context = to->cxt;
	out->to_rec = to->rec;
	out->to_obj = BB(r, to->bb).obj;
	out->to_addr = BB(r, to->bb).addr;
	out->to_offset = BB(r, to->bb).offset;
	out->to_map_epoch = BB(r, to->bb).map_epoch;
	out->count = arc->call_counter;
	out->executed = executed;
	out->cost = NULL;
	if (is_call) {
		size_t at;
		if (keep_cost(r, db, cost, &at) < 0)
			return -1;
		out->cost = (const uint64_t *)(uintptr_t)(at + 1);
		memset(cost, 0, r->n_ev * sizeof(uint64_t));
	}
	arc->call_counter = 0;
	return 0;
}

/* A BBCC's events per instruction (into out, [n_insns][n_ev]): those
   charged as they happened, and those of every execution by each exit --
   then zeroed, as Callgrind's printing zeroes what it prints. */
static void charged_costs(struct replay *r, struct bbcc *c, uint64_t *out)
{
	const struct bb *bb = &BB(r, c->bb);
	const struct cgt_block *blk = bb->blk;
	size_t n = (size_t)bb->n_insns * r->n_ev;
	memcpy(out, U64(r, c->cost), n * sizeof(uint64_t));
	memset(U64(r, c->cost), 0, n * sizeof(uint64_t));
	uint64_t *by_exit = U64(r, c->charged);
	for (uint32_t p = 0; p <= bb->cjmp_count; p++) {
		uint64_t times = by_exit[p];
		by_exit[p] = 0;
		if (times == 0)
			continue;
		uint32_t end = blk->ops_in_prefix[trace_exit_of(bb, p)];
		for (uint32_t k = 0; k < end; k++) {
			const struct cgt_op *op = &blk->ops[k];
			int col = event_column(r, op->kind);
			if (col >= 0 && op->insn < bb->n_insns)
				out[(size_t)op->insn * r->n_ev + (size_t)col] += times;
		}
	}
}

static int centre_out(struct replay *r, struct dump_build *db, uint32_t ci)
{
	struct bbcc *c = &BBCC(r, ci);
	const struct bb *bb = &BB(r, c->bb);
	const struct bb_jmp *jmps = &AT(r->bb_jmps, struct bb_jmp, bb->jmp);
	long k = vec_push(&db->centres);
	long costs = vec_extend(&db->costs, (size_t)bb->n_insns * r->n_ev);
	if (k < 0 || costs < 0)
		return -1;
	struct cgt_cg_centre *out = &AT(db->centres, struct cgt_cg_centre, k);
	out->context = c->cxt;
	out->rec = c->rec;
	out->addr = bb->addr;
	out->offset = bb->offset;
	out->obj = bb->obj;
	out->map_epoch = bb->map_epoch;
	out->n_insns = bb->n_insns;
	out->insns = bb->insns;
	out->cost = (const uint64_t *)(uintptr_t)(costs + 1);
	out->first_arc = (uint32_t)db->arcs.n;

	if (c->cost != 0)
		charged_costs(r, c, &AT(db->costs, uint64_t, costs));
	uint64_t ecounter = c->ecounter_sum;
	uint32_t jmp = 0;
	for (uint32_t i = 0; i < bb->n_insns; i++) {
		uint64_t *out_cost = &AT(db->costs, uint64_t, costs + (size_t)i * r->n_ev);
		/* without cache simulation: the executions that reached it */
		if (!r->o->cache_sim)
			out_cost[0] = ecounter;
		if (jmps[jmp].instr == i)
			for (uint32_t a = *U32(r, c->jcc_heads + jmp); a != NONE; a = ARC(r, a).next_from)
				if (arc_out(r, db, a, i, 0, ecounter) < 0)
					return -1;
		if (jmp < bb->cjmp_count && jmps[jmp].instr == i) {
			ecounter -= *U64(r, c->exits + jmp);
			jmp++;
		}
	}
	out = &AT(db->centres, struct cgt_cg_centre, k);
	out->skipped = NULL;
	if (c->skipped != 0 && !is_zero(U64(r, c->skipped), r->n_ev)) {
		size_t at;
		if (keep_cost(r, db, U64(r, c->skipped), &at) < 0)
			return -1;
		out = &AT(db->centres, struct cgt_cg_centre, k);
		out->skipped = (const uint64_t *)(uintptr_t)(at + 1);
		memset(U64(r, c->skipped), 0, r->n_ev * sizeof(uint64_t));
	}
	uint32_t last = bb->n_insns ? bb->n_insns - 1 : 0;
	for (uint32_t a = *U32(r, c->jcc_heads + jmp); a != NONE; a = ARC(r, a).next_from)
		if (arc_out(r, db, a, last, 1, ecounter) < 0)
			return -1;
	out = &AT(db->centres, struct cgt_cg_centre, k);
	out->n_arcs = (uint32_t)db->arcs.n - out->first_arc;

	c->ecounter_sum = 0;
	c->ret_counter = 0;
	memset(U64(r, c->exits), 0, (bb->cjmp_count + 1) * sizeof(uint64_t));
	return 0;
}

static int names_out(const struct vec *nodes, struct vec *out)
{
	for (size_t i = 0; i < nodes->n; i++) {
		long k = vec_push(out);
		if (k < 0)
			return -1;
		AT(*out, struct cgt_cg_name, k).name = AT(*nodes, struct name_node, i).name;
		AT(*out, struct cgt_cg_name, k).parent = AT(*nodes, struct name_node, i).parent;
	}
	return 0;
}

static void dump_build_free(struct dump_build *db)
{
	free(db->list.v);
	free(db->centres.v);
	free(db->arcs.v);
	free(db->costs.v);
	free(db->objs.v);
	free(db->files.v);
	free(db->fns.v);
	free(db->contexts.v);
}

int dump_profile(struct replay *r, const char *trigger, struct cgt_error *e)
{
	struct dump_build db = {
		.list.size = sizeof(uint32_t),
		.centres.size = sizeof(struct cgt_cg_centre),
		.arcs.size = sizeof(struct cgt_cg_arc),
		.costs.size = sizeof(uint64_t),
		.objs.size = sizeof(struct cgt_cg_name),
		.files.size = sizeof(struct cgt_cg_name),
		.fns.size = sizeof(struct cgt_cg_name),
		.contexts.size = sizeof(struct cgt_cg_context),
	};
	int rc = -1;
	r->dumps++;

	/* BBCCs that ran, were returned into, or are calling now; the calls
	   open now get their cost so far.  With inclusive cache use, the calls
	   that the charges made since reached (each charge passed on to every
	   call active at its line's load, whether they have returned or not:
	   so a dump's calls hold what its instructions do). */
	if (r->use.backdate != NULL)
		backdate_settle(&r->backdate, r->u64s.v);
	for (size_t i = 0; i < r->bbccs.n; i++)
		if ((BBCC(r, i).ecounter_sum > 0 || BBCC(r, i).ret_counter > 0) && listed(r, &db, (uint32_t)i) < 0)
			goto out;
	/* the callers of the calls that back-dated charges reached */
	for (size_t i = 0; i < r->backdate.n_arcs; i++)
		if (listed(r, &db, ARC(r, r->backdate.arcs[i]).from) < 0)
			goto out;
	r->backdate.n_arcs = 0;
	for (uint32_t tid = 0; tid < r->n_threads; tid++) {
		struct thread *t = r->threads[tid];
		if (t == NULL)
			continue;
		for (uint32_t i = 0; i < t->sp; i++) {
			struct call_entry *c = entry(t, i);
			if (c->arc == NONE)
				continue;
			add_diff(U64(r, ARC(r, c->arc).cost), c->enter_cost, state(t)->cost, r->n_ev);
			if (listed(r, &db, ARC(r, c->arc).from) < 0)
				goto out;
		}
	}
	sorting = r;
	if (db.list.n > 0)	/* an empty list's array is NULL, which qsort must not get */
		qsort(db.list.v, db.list.n, sizeof(uint32_t), compare_centres);
	for (size_t i = 0; i < db.list.n; i++) {
		BBCC(r, AT(db.list, uint32_t, i)).listed = 0;
		if (centre_out(r, &db, AT(db.list, uint32_t, i)) < 0)
			goto out;
	}
	/* offsets, now that nothing moves */
	for (size_t i = 0; i < db.centres.n; i++) {
		struct cgt_cg_centre *c = &AT(db.centres, struct cgt_cg_centre, i);
		c->cost = &AT(db.costs, uint64_t, (uintptr_t)c->cost - 1);
		if (c->skipped != NULL)
			c->skipped = &AT(db.costs, uint64_t, (uintptr_t)c->skipped - 1);
	}
	for (size_t i = 0; i < db.arcs.n; i++) {
		struct cgt_cg_arc *a = &AT(db.arcs, struct cgt_cg_arc, i);
		if (a->cost != NULL)
			a->cost = &AT(db.costs, uint64_t, (uintptr_t)a->cost - 1);
	}
	if (names_out(&r->objs, &db.objs) < 0 || names_out(&r->files, &db.files) < 0 ||
	    names_out(&r->fn_names, &db.fns) < 0)
		goto out;
	for (size_t i = 0; i < r->contexts.n; i++) {
		long k = vec_push(&db.contexts);
		if (k < 0)
			goto out;
		AT(db.contexts, struct cgt_cg_context, k).first = CXT(r, i).first;
		AT(db.contexts, struct cgt_cg_context, k).n = CXT(r, i).n;
	}

	struct cgt_cg_profile p = { 0 };
	p.events = r->events;
	p.objs = db.objs.v;
	p.obj_bias = r->obj_bias.v;
	p.files = db.files.v;
	p.fns = db.fns.v;
	p.n_objs = (uint32_t)db.objs.n;
	p.n_files = (uint32_t)db.files.n;
	p.n_fns = (uint32_t)db.fns.n;
	p.contexts = db.contexts.v;
	p.context_fns = r->context_fns.v;
	p.centres = db.centres.v;
	p.n_centres = db.centres.n;
	p.arcs = db.arcs.v;
	for (uint32_t tid = 0; tid < r->n_threads; tid++) {
		struct thread *t = r->threads[tid];
		if (t == NULL)
			continue;
		/* Callgrind's add_diff_cost: the difference, and the last
		   dump's cost moved up to now (dump.c new_dumpfile) */
		add_diff(p.summary, t->lastdump_cost, AT(t->states, struct exec_state, 0).cost,
			 r->n_ev);
	}
	/* with inclusive attribution, the use charges are the calls' cost too:
	   the summary holds them (none of the threads' counters does) */
	if (r->use.backdate != NULL) {
		for (int c = 0; c < USE_COLUMNS; c++)
			p.summary[r->use.column[c]] += r->use.charged[c];
		memset(r->use.charged, 0, sizeof(r->use.charged));
	}
	p.part = r->dumps;
	p.final = trigger == NULL;
	p.trigger = trigger;
	p.blocks_from = r->bbs_done;
	p.blocks_to = r->bb_executions;
	p.map_epoch = r->map_epoch;
	p.mappings = r->mappings.v;
	p.n_mappings = r->mappings.n;
	rc = r->o->dump(r->o->dump_arg, &p, e);

	struct thread *t1 = main_thread(r);
	if (t1 == NULL)
		r->failed = 1;
	else
		memcpy(t1->lastdump_cost, state(t1)->cost, sizeof(t1->lastdump_cost));
	r->bbs_done = r->bb_executions++;
out:
	if (rc < 0 && e->status == 0)
		rc = cgt_fail(e, cgt_err_nomem, "out of memory");
	dump_build_free(&db);
	return rc;
}

static void zero_all_cost(struct replay *r, struct thread *t)
{
	struct exec_state *s = state(t);
	for (uint32_t i = 0; i < t->sp; i++) {
		struct call_entry *c = entry(t, i);
		if (c->arc == NONE)
			continue;
		memcpy(c->enter_cost, s->cost, sizeof(c->enter_cost));
		ARC(r, c->arc).call_counter = 0;
	}
	for (size_t i = 0; i < r->bbccs.n; i++) {
		struct bbcc *c = &BBCC(r, i);
		if (c->ecounter_sum == 0 && c->ret_counter == 0)
			continue;
		uint32_t jmps = BB(r, c->bb).cjmp_count + 1;
		memset(U64(r, c->exits), 0, jmps * sizeof(uint64_t));
		if (c->cost != 0) {
			memset(U64(r, c->cost), 0, (size_t)BB(r, c->bb).n_insns * r->n_ev * sizeof(uint64_t));
			memset(U64(r, c->charged), 0, jmps * sizeof(uint64_t));
		}
		for (uint32_t j = 0; j < jmps; j++)
			for (uint32_t a = *U32(r, c->jcc_heads + j); a != NONE; a = ARC(r, a).next_from) {
				memset(U64(r, ARC(r, a).cost), 0, r->n_ev * sizeof(uint64_t));
				ARC(r, a).call_counter = 0;
			}
		c->ecounter_sum = c->ret_counter = 0;
	}
	memcpy(t->lastdump_cost, s->cost, sizeof(t->lastdump_cost));
	memset(r->use.charged, 0, sizeof(r->use.charged));
}
