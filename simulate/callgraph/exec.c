/*
 * The call-graph replay's executions (a part of callgraph.c): a chunk
 * replayed in stream order (replay_chunk), each execution's BBCC found as
 * Callgrind's setup_bbcc finds it (bbcc.c), from the exit the block
 * before took and the stack pointer, and its events charged as
 * Callgrind's instrumentation charges them (sim.c log_*).
 *
 * Without cache simulation Callgrind counts a block's instructions when
 * the next block starts (the exit taken says how many ran), and that is
 * all it counts: events "Ir".
 *
 * The replay's hot loop, in one file: setup_bbcc and charge_exec run for
 * every execution, and only here, where they are static and called once,
 * does gcc inline them into the loop (the build has no LTO).
 */

/* ---- Each block's start (bbcc.c setup_bbcc) ------------------------------------ */

static void setup_bbcc(struct replay *r, struct thread *t, uint32_t bb, uint64_t sp,
		       struct cgt_error *e)
{
	struct exec_state *s = state(t);
	uint32_t last_bbcc = s->bbcc, passed = 0;
	const struct bb *last_bb = last_bbcc != NONE ? &BB(r, BBCC(r, last_bbcc).bb) : NULL;
	int jmpkind = JK_NONE, is_cond = 0, call_emulation = 0, delayed_push = 0, skip = 0;
	int ret_without_call = 0, popcount_on_return = 1;

	if (last_bb != NULL) {
		passed = s->passed;
		const struct bb_jmp *j = &AT(r->bb_jmps, struct bb_jmp, last_bb->jmp + passed);
		jmpkind = j->kind;
		is_cond = passed < last_bb->cjmp_count;
		if (s->collect) {
			/* without cache simulation, the instructions that ran
			   are counted now */
			uint64_t ir = r->o->cache_sim ? 0 : j->instr + 1;
			if (s->nonskipped == NONE) {
				BBCC(r, last_bbcc).ecounter_sum++;
				(*U64(r, BBCC(r, last_bbcc).exits + passed))++;
			} else {
				U64(r, BBCC(r, s->nonskipped).skipped)[0] += ir;
			}
			s->cost[0] += ir;
		}
	}

	uint32_t csp = t->sp;
	/* a return that matches no frame is a jump */
	if (jmpkind == JK_RETURN && csp > 0) {
		uint32_t up = csp - 1;
		struct call_entry *top = entry(t, up);
		if (sp < top->sp) {
			popcount_on_return = 0;
		} else if (top->sp == sp) {
			for (;;) {
				if (top->ret_addr == BB(r, bb).addr)
					break;
				if (up > 0) {
					top = entry(t, --up);
					if (top->sp == sp) {
						popcount_on_return++;
						continue;
					}
				}
				popcount_on_return = 0;
				break;
			}
		}
		if (popcount_on_return == 0) {
			jmpkind = JK_JUMP;
			ret_without_call = 1;
		}
	}

	/* a jump to a function's entry, another object or section kind is
	   a call */
	if (jmpkind != JK_RETURN && jmpkind != JK_CALL && last_bb != NULL) {
		const struct bb *b = &BB(r, bb);
		if (ret_without_call || b->is_entry || last_bb->sect_kind != b->sect_kind ||
		    last_bb->obj != b->obj) {
			if (FN(r, last_bb->fn).pop_on_jump && csp > 0) {
				struct call_entry *top = entry(t, csp - 1);
				if (top->arc != NONE) {
					/* the resolver's jump: a call from the original site */
					s->bbcc = ARC(r, top->arc).from;
					sp = top->sp;
					passed = ARC(r, top->arc).jmp;
					pop_call_stack(r, t, e);
					s = state(t);
				}
			}
			jmpkind = JK_CALL;
			call_emulation = 1;
		}
	}

	if (jmpkind == JK_CALL)
		skip = FN(r, BB(r, bb).fn).skip;

	if (jmpkind == JK_RETURN) {
		/* on an empty stack or at a handler's marker: an underflow */
		const uint32_t *stack = &AT(t->fns, uint32_t, 0);
		if (csp == 0 || (t->fn_top > 0 && stack[t->fn_top - 1] == 0)) {
			handle_underflow(r, t, bb, e);
			pop_call_stack(r, t, e);
		} else {
			unwind_call_stack(r, t, sp, popcount_on_return, e);
		}
	} else {
		if (unwind_call_stack(r, t, sp, 0, e) > 0)
			jmpkind = JK_RETURN;
		if (jmpkind == JK_CALL) {
			delayed_push = 1;
			if (call_emulation && t->sp > 0)
				sp = entry(t, t->sp - 1)->sp;
		}
	}
	s = state(t);

	if ((delayed_push && !skip) || s->cxt == NONE)
		push_cxt(r, t, BB(r, bb).fn);
	if (s->cxt == NONE) {
		if (!r->failed)
			r->failed = FAIL_STATE;
		return;
	}

	/* the BBCC of this block in this context */
	uint32_t c = NONE;
	if (BB(r, bb).bbcc_list == NONE) {
		int recs = FN(r, AT(t->fns, uint32_t, t->fn_top)).separate_recs;
		c = new_rec0_bbcc(r, bb, s->cxt, recs > 0 ? recs : 1);
		if (c == NONE)
			return;
		BB(r, bb).last_bbcc = c;
	} else {
		if (last_bbcc != NONE) {
			c = BBCC(r, last_bbcc).lru_next;
			if (c != NONE && (BBCC(r, c).bb != bb || BBCC(r, c).cxt != s->cxt))
				c = NONE;
		}
		if (c == NONE)
			c = lookup_bbcc(r, bb, s->cxt);
		if (c == NONE) {
			int recs = FN(r, cxt_fn(r, s->cxt)).separate_recs;
			c = new_rec0_bbcc(r, bb, s->cxt, recs > 0 ? recs : 1);
			if (c == NONE)
				return;
		}
		BB(r, bb).last_bbcc = c;
	}
	if (last_bbcc != NONE)
		BBCC(r, last_bbcc).lru_next = c;

	uint32_t top_fn = AT(t->fns, uint32_t, t->fn_top);
	int recs = FN(r, top_fn).separate_recs;
	if (recs > 1) {
		uint32_t level = *active(r, t, top_fn);
		if (delayed_push && !skip) {
			if (r->o->skip_direct_rec) {
				if (cxt_fn(r, BBCC(r, s->bbcc).cxt) != cxt_fn(r, BBCC(r, c).cxt))
					level++;
			} else {
				level++;
			}
		}
		if (level > (uint32_t)recs)
			level = (uint32_t)recs;
		if (level == 0) {
			level = 1;
			*active(r, t, top_fn) = 1;
		}
		uint32_t idx = level - 1;
		/* c, a rec 0 BBCC, is its rec array's first */
		if (idx > 0) {
			uint32_t slot = BBCC(r, c).rec_array + idx;
			if (*U32(r, slot) == NONE) {
				uint32_t clone = new_bbcc(r, bb, s->cxt, idx);
				if (clone == NONE)
					return;
				BBCC(r, clone).rec_array = BBCC(r, c).rec_array;
				*U32(r, slot) = clone;
			}
			c = *U32(r, slot);
		}
	}

	if (delayed_push) {
		if (!skip && s->nonskipped != NONE) {
			/* a call from skipped code: from the caller it was skipped for */
			s->bbcc = s->nonskipped;
			passed = BB(r, BBCC(r, s->bbcc).bb).cjmp_count;
		}
		push_call_stack(r, t, s->bbcc, passed, c, sp, skip, e);
		s = state(t);
	}

	if (r->o->collect_jumps && jmpkind == JK_JUMP && last_bbcc != NONE) {
		uint32_t a = get_jcc(r, last_bbcc, passed, c);
		if (a != NONE) {
			if (ARC(r, a).kind == CGT_CG_CALL)
				ARC(r, a).kind = is_cond ? CGT_CG_COND_JUMP : CGT_CG_JUMP;
			ARC(r, a).call_counter++;
		}
	}

	s->bbcc = c;
	s->passed = 0;
	r->bb_executions++;
}

/* ---- Events as they happen (sim.c log_*, main.c log_cond_branch) ------------- */

/* Callgrind lays out a block's costs per instruction, each with the event
   groups its events need (main.c flushEvents, update_cost_offsets); a
   guarded access is charged at its group's offset even where the
   instruction has no such group (addEvent_D_guarded), which is the slot
   after the groups before it: another group's, often the next
   instruction's.  This finds where event k of group g (of instruction
   insn) lands: *to_insn and the event set column, or 0 if past the
   block's costs (Callgrind writes into whatever follows; we drop it). */
enum { G_IR, G_DR, G_DW, G_BC, G_BI, N_GROUPS };

static unsigned groups_of(const struct replay *r, const struct cgt_block *blk, uint32_t insn)
{
	unsigned m = 1u << G_IR;
	for (uint32_t k = 0; k < blk->n_ops; k++) {
		const struct cgt_op *op = &blk->ops[k];
		if (op->insn != insn)
			continue;
		if (op->kind == CGT_OP_READ)
			m |= 1u << G_DR;
		else if (op->kind == CGT_OP_WRITE || op->kind == CGT_OP_MODIFY)
			m |= 1u << G_DW;
		else if (r->o->branch_sim && (op->kind == CGT_OP_COND || op->kind == CGT_OP_COND_INV))
			m |= 1u << G_BC;
		else if (r->o->branch_sim && op->kind == CGT_OP_INDIRECT)
			m |= 1u << G_BI;
	}
	return m;
}

static int misplaced_slot(const struct replay *r, const struct cgt_block *blk, uint32_t n_insns,
			  uint32_t insn, int group, int k, uint32_t *to_insn, int *column)
{
	/* with write-back, the cache groups have a fourth event, the dirty miss */
	const unsigned cache_group = r->ev_dldmr >= 0 ? 4 : 3;
	const unsigned size[N_GROUPS] = { cache_group, cache_group, cache_group, 2, 2 };
	const int cols[N_GROUPS][4] = {
		{ 0, r->ev_i1mr, r->ev_ilmr, r->ev_ildmr }, { r->ev_dr, r->ev_d1mr, r->ev_dlmr, r->ev_dldmr },
		{ r->ev_dw, r->ev_d1mw, r->ev_dlmw, r->ev_dldmw }, { r->ev_bc, r->ev_bcm, -1, -1 },
		{ r->ev_bi, r->ev_bim, -1, -1 },
	};
	unsigned m = groups_of(r, blk, insn), slot = 0;
	for (int g = 0; g < group; g++)
		slot += m & (1u << g) ? size[g] : 0;
	slot += (unsigned)k;
	for (uint32_t i = insn; i < n_insns; i++) {
		unsigned mi = i == insn ? m : groups_of(r, blk, i);
		for (int g = 0; g < N_GROUPS; g++) {
			if (!(mi & (1u << g)))
				continue;
			if (slot < size[g]) {
				*to_insn = i;
				*column = cols[g][slot];
				return *column >= 0;
			}
			slot -= size[g];
		}
	}
	return 0;
}

/* Adds the events every execution leaving by an exit has (Ir Dr Dw Bc Bi
   as Callgrind counts them: a read-modify-write is a write), guarded
   accesses aside, to the columns of cost. */
static inline void add_prefix_events(const struct replay *r, const struct cgt_prefix_counts *pc,
				     uint64_t *cost)
{
	if (r->o->cache_sim) {
		cost[0] += pc->insns;
		cost[r->ev_dr] += pc->reads;
		cost[r->ev_dw] += pc->writes + pc->modifies;
	}
	if (r->o->branch_sim) {
		cost[r->ev_bc] += pc->conds;
		cost[r->ev_bi] += pc->indirects;
	}
}

/* A data reference's events at its instruction: a guarded access's Dr or
   Dw (the others are counted by exit), and the misses: where Callgrind
   puts them (see misplaced_slot). */
static void charge_data(struct replay *r, struct exec_state *s, const struct bb *bb,
			const struct cgt_block *blk, const struct cgt_op *op, unsigned miss, int skipped,
			uint64_t *skip_cost, uint64_t *costs)
{
	if (op->insn >= bb->n_insns)
		return;
	int write = op->kind != CGT_OP_READ && op->kind != CGT_OP_READ_GUARDED;
	int guarded = cgt_op_is_guarded(op->kind);
	int ev[4] = { write ? r->ev_dw : r->ev_dr, write ? r->ev_d1mw : r->ev_d1mr,
		      write ? r->ev_dlmw : r->ev_dlmr, write ? r->ev_dldmw : r->ev_dldmr };
	int group = write ? G_DW : G_DR;
	int misplaced = guarded && !skipped && !(groups_of(r, blk, op->insn) & (1u << group));
	uint64_t *self = skipped ? skip_cost : costs + (size_t)op->insn * r->n_ev;
	for (unsigned e = guarded ? 0 : 1; e <= miss; e++) {
		uint32_t to;
		int column;
		s->cost[ev[e]]++;
		if (!misplaced)
			self[ev[e]]++;
		else if (misplaced_slot(r, blk, bb->n_insns, op->insn, group, (int)e, &to, &column))
			costs[(size_t)to * r->n_ev + (size_t)column]++;
	}
}

/* An execution's events, as the producer found them (struct chunk): op
   << 2 | level, level the cache level that missed (1 L1, 2 LL too, 3 LL
   too and the fill evicted a dirty line; 0: a guarded access that hit) or
   1 for a mispredicted branch. */
#define CHARGE_OP(charge) ((charge) >> 2)
#define CHARGE_LEVEL(charge) ((charge) & 3)

/* A miss, misprediction or guarded access (charge: CHARGE_OP << 2 |
   CHARGE_LEVEL) of an execution being charged: to costs, or with
   skip_cost to the caller a skipped function's are charged to. */
static void charge_op(struct replay *r, struct exec_state *s, const struct bb *bb,
		      const struct cgt_block *blk, uint32_t charge, uint64_t *skip_cost, uint64_t *costs)
{
	const struct cgt_op *op = &blk->ops[CHARGE_OP(charge)];
	unsigned level = CHARGE_LEVEL(charge);
	int ev[3] = { -1, -1, -1 };
	switch (op->kind) {
	case CGT_OP_INSN:
		ev[0] = r->ev_i1mr;
		ev[1] = level > 1 ? r->ev_ilmr : -1;
		ev[2] = level > 2 ? r->ev_ildmr : -1;
		break;
	case CGT_OP_COND:
	case CGT_OP_COND_INV:
		ev[0] = r->ev_bcm;
		break;
	case CGT_OP_INDIRECT:
		ev[0] = r->ev_bim;
		break;
	default:
		/* laid out as Callgrind did: its translation's, whole */
		charge_data(r, s, bb, blk->cut_from != NULL ? blk->cut_from : blk, op, level,
			    skip_cost != NULL, skip_cost, costs);
		return;
	}
	if (op->insn >= bb->n_insns)
		return;
	uint64_t *self = skip_cost != NULL ? skip_cost : costs + (size_t)op->insn * r->n_ev;
	for (int i = 0; i < 3 && ev[i] >= 0; i++) {
		s->cost[ev[i]]++;
		self[ev[i]]++;
	}
}

/*
 * Charges an execution's events, when collecting: to the BBCC, or in a
 * skipped function to the caller it was skipped for.  What every execution
 * by an exit has is counted once per execution (the BBCC's executions by
 * exit, turned into costs per instruction when dumped); misses,
 * mispredictions and guarded accesses, which the producer simulated, are
 * charged to their instructions here.
 *
 * charges[0] are the producer's (n_charges[0]), charges[1] those of its
 * cache use (callgraph_chunk_use).
 */
static void charge_exec(struct replay *r, struct thread *t, uint32_t c, const struct bb *bb,
			uint32_t passed, const struct cgt_block *blk, uint32_t exit,
			const uint32_t *const charges[2], const uint32_t n_charges[2])
{
	struct exec_state *s = state(t);
	int skipped = s->nonskipped != NONE;
	int collect = s->collect && (skipped || BBCC(r, c).cost != 0);
	if (!collect)
		return;
	uint64_t *skip_cost = skipped ? U64(r, BBCC(r, s->nonskipped).skipped) : NULL;
	uint64_t *costs = skipped ? NULL : U64(r, BBCC(r, c).cost);
	if (blk->cut_from != NULL) {
		/* cut short by a fault: what the queue had handed on (the
		   producer simulated the same) */
		for (uint32_t k = 0, end = cgt_block_counted_ops(blk, r->o->cache_sim, r->o->cache_sim);
		     k < end; k++) {
			int col = event_column(r, blk->ops[k].kind);
			if (col < 0)
				continue;
			s->cost[col]++;
			if (skipped)
				skip_cost[col]++;
			else
				costs[(size_t)blk->ops[k].insn * r->n_ev + (size_t)col]++;
		}
	} else {
		add_prefix_events(r, &blk->prefix_counts[exit], s->cost);
		if (skipped)
			add_prefix_events(r, &blk->prefix_counts[exit], skip_cost);
		else
			(*U64(r, BBCC(r, c).charged + passed))++;
	}
	for (int i = 0; i < 2; i++)
		for (uint32_t k = 0; k < n_charges[i]; k++)
			charge_op(r, s, bb, blk, charges[i][k], skip_cost, costs);
}

/* The node of the activation running on t (NO_NODE at its first frame,
   or a signal handler's: a root of its own, as in the paper), made now
   with its callers' if they have none. */
static uint32_t activation_node(struct replay *r, struct thread *t)
{
	const uint32_t bottom = state(t)->call_stack_bottom;
	uint32_t i = t->sp;
	while (i > bottom && entry(t, i - 1)->node == NO_NODE)
		i--;
	uint32_t node = i > bottom ? entry(t, i - 1)->node : NO_NODE;
	for (; i < t->sp; i++) {
		struct call_entry *c = entry(t, i);
		node = c->node = c->arc == NONE ? backdate_node(&r->backdate, node, NO_ARC, 0)
						: backdate_node(&r->backdate, node, c->arc, ARC(r, c->arc).cost);
		if (node == NO_NODE) {
			r->failed = 1;
			return NO_NODE;
		}
	}
	return node;
}

/* A line an L1 filled in this execution (Callgrind's cache use): loaded by
   the reference's instruction in its BBCC, or in a skipped function by the
   caller it is skipped for (Callgrind's use_base), in the activation
   running (inclusive attribution), whether collecting or not; the line it
   evicted charged if collecting. */
static void use_fill(struct replay *r, struct thread *t, const struct bb *bb,
		     const struct cgt_block *blk, const struct use_fill *fill)
{
	const struct exec_state *s = state(t);
	uint32_t insn = blk->ops[fill->op].insn, loader = 0;
	if (s->nonskipped != NONE)
		loader = BBCC(r, s->nonskipped).skipped;
	else if (BBCC(r, s->bbcc).cost != 0 && insn < bb->n_insns)
		loader = BBCC(r, s->bbcc).cost + insn * r->n_ev;
	uint32_t node = r->use.backdate != NULL ? activation_node(r, t) : NO_NODE;
	use_sink_fill(&r->use, fill, loader, node, s->collect, r->u64s.v);
}

/* ---- A chunk ------------------------------------------------------------------- */

/* Replays a chunk, after the general model's LL, if any, has completed
   its charges, or the cache use's caches have written theirs: 1 to go on,
   0 at the trace's end, negative on error (e set; the producer's
   copied). */
int replay_chunk(struct replay *r, struct chunk *ch, struct producer *p, struct cgt_error *e)
{
	if ((p->general && callgraph_chunk_ll(p, ch) < 0) ||
	    (p->cache_use && ch->status >= 0 && callgraph_chunk_use(p, ch) < 0))
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	if (ch->has_mappings) {
		r->mappings.n = 0;
		if (vec_reserve(&r->mappings, ch->mappings.n) < 0)
			return cgt_fail(e, cgt_err_nomem, "out of memory");
		memcpy(r->mappings.v, ch->mappings.v, ch->mappings.n * sizeof(struct cgt_mapping));
		r->mappings.n = ch->mappings.n;
	}
	const uint32_t *charges = ch->charges.v;
	const struct use_fill *fill = ch->fills.v, *fills_end = fill + ch->fills.n;
	const struct use_exec *use = ch->use_execs.v, *use_end = use + ch->use_execs.n;
	const uint32_t *use_charges = ch->use_charges.v;
	uint32_t use_from = 0;
	struct thread *t = NULL;
	int rc;
	for (size_t i = 0; i < ch->items.n; i++) {
		const struct handed *h = &AT(ch->items, struct handed, i);
		if (h->kind == HANDED_EPOCH) {
			r->map_epoch = (uint32_t)h->index;
			continue;
		}
		if (h->kind == HANDED_MARK) {
			const struct handed_mark *hm = &AT(ch->marks, struct handed_mark, h->index);
			struct cgt_mark m = hm->mark;
			m.text = &AT(ch->texts, char, hm->text_at);
			if ((rc = on_mark(r, &m, e)) < 0)
				return rc;
			continue;
		}
		if (h->kind == HANDED_LOST) {
			/* the stacks before the gap would make calls and returns
			   of what follows: each thread starts again, as after an
			   instrumentation switch */
			for (uint32_t tid = 0; tid < r->n_threads; tid++)
				if (r->threads[tid] != NULL)
					unwind_thread(r, r->threads[tid], e);
			continue;
		}
		const struct cgt_block *blk = h->block;
		const uint32_t *exec_charges[2] = { charges, use_charges + use_from };
		uint32_t n_charges[2] = { h->n_charges, 0 };
		charges += h->n_charges;
		if (use != use_end && use->item == i) {
			n_charges[1] = use->charges_end - use_from;
			use_from = use->charges_end;
			use++;
		}
		if ((t == NULL || t->tid != h->tid) && (t = get_thread(r, h->tid)) == NULL)
			return no_thread(h->tid, e);
		r->cur = t;
		/* an execution cut short by a fault: of the block it was cut from */
		uint32_t bb = get_bb(r, blk->cut_from != NULL ? blk->cut_from : blk);
		if (bb == NONE)
			return cgt_fail(e, cgt_err_nomem, "out of memory");
		setup_bbcc(r, t, bb, h->sp, e);
		uint32_t passed = blk->cut_from != NULL ? cut_passed(&BB(r, bb), blk)
							 : passed_of(&BB(r, bb), h->exit);
		if (r->charged && !r->failed)
			charge_exec(r, t, state(t)->bbcc, &BB(r, bb), passed, blk, h->exit, exec_charges,
				    n_charges);
		for (; fill != fills_end && fill->exec == i && !r->failed; fill++)
			use_fill(r, t, &BB(r, bb), blk, fill);
		state(t)->passed = passed;
		if (r->failed)
			return r->failed == FAIL_DUMP ? -e->status
			       : r->failed == FAIL_STATE
				       ? cgt_fail(e, cgt_err_invalid,
						  "block %u at %#llx: no function context after its calls and "
						  "returns (a replay defect)",
						  blk->id, (unsigned long long)blk->insns[0].addr)
				       : cgt_fail(e, cgt_err_nomem, "out of memory");
	}
	if (ch->status < 0) {
		*e = p->e;
		return ch->status;
	}
	return ch->status;
}
