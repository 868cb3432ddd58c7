/*
 * The call-graph replay's names and BBs (a part of callgraph.c): objects,
 * files and functions interned by name, and the BB of each trace block
 * with its function's settings, made on the block's first execution.
 */

/* ---- Names ------------------------------------------------------------- */

/* The node of (parent, name) in nodes (objects, files or functions; pool
   salts the hash), made if new: its number (from 1), or 0. */
static uint32_t name_node(struct replay *r, struct vec *nodes, uint64_t pool, uint32_t parent,
			  const char *name)
{
	uint64_t key = cgt_hash_text(name, (pool << 32 | parent) * 0x9E3779B97F4A7C15ull + 0xcbf29ce484222325ull);
	void *head = cgt_map_get(&r->name_index, key);
	for (uint32_t i = head ? (uint32_t)(uintptr_t)head : 0; i != 0;
	     i = AT(*nodes, struct name_node, i).next) {
		struct name_node *n = &AT(*nodes, struct name_node, i);
		if (n->parent == parent && strcmp(n->name, name) == 0)
			return i;
	}
	if (nodes->n == 0 && vec_push(nodes) < 0)	/* [0] unused */
		return 0;
	long i = vec_push(nodes);
	if (i < 0 || i >= (long)UINT32_MAX)
		return 0;
	struct name_node *n = &AT(*nodes, struct name_node, i);
	n->name = name;
	n->parent = parent;
	n->next = head ? (uint32_t)(uintptr_t)head : 0;
	if (cgt_map_put(&r->name_index, key, (void *)(uintptr_t)i) < 0)
		return 0;
	return (uint32_t)i;
}

/* Callgrind's function patterns: * any run, ? any character. */
static int pattern_match(const char *p, const char *s)
{
	for (; *p; p++, s++) {
		if (*p == '*') {
			for (const char *t = s;; t++) {
				if (pattern_match(p + 1, t))
					return 1;
				if (*t == '\0')
					return 0;
			}
		}
		if (*s == '\0' || (*p != '?' && *p != *s))
			return 0;
	}
	return *s == '\0';
}

static int matches_any(const char *const *patterns, const char *name)
{
	for (; patterns != NULL && *patterns != NULL; patterns++)
		if (pattern_match(*patterns, name))
			return 1;
	return 0;
}

/* ---- BBs and their functions (bb.c new_bb, fn.c get_fn_node) ------------ */

static const char *const unknown = "???";

/* Whether two translations at one address are of the same code: the same
   instructions and exits. */
static int same_code(const struct cgt_block *a, const struct cgt_block *b)
{
	if (a->n_insns != b->n_insns || a->n_exits != b->n_exits)
		return 0;
	for (uint32_t k = 0; k < a->n_insns; k++)
		if (a->insns[k].addr != b->insns[k].addr || a->insns[k].len != b->insns[k].len)
			return 0;
	return 1;
}

uint32_t make_bb(struct replay *r, const struct cgt_block *blk)
{
	while (r->block_bb.n <= blk->id)
		if (vec_push(&r->block_bb) < 0)
			return NONE;
	uint32_t known = AT(r->block_bb, uint32_t, blk->id);
	if (known != 0)
		return known - 1;

	uint64_t addr = blk->insns[0].addr;
	struct cgt_code_info ci = { 0 };
	r->o->code.find(r->o->code.arg, r->mappings.v, r->mappings.n, addr, blk->map_epoch, &ci);
	uint32_t obj = name_node(r, &r->objs, 1, 0, ci.obj ? ci.obj : unknown);
	if (obj == 0)
		return NONE;
	uint64_t bias = ci.obj ? ci.text_bias : 0;
	uint64_t offset = addr - bias;
	/* an object mapped again elsewhere: its BBs' positions move with it
	   (bb.c obj_of_address) */
	while (r->obj_bias.n <= obj)
		if (vec_push(&r->obj_bias) < 0)
			return NONE;
	AT(r->obj_bias, uint64_t, obj) = bias;

	/* A translation of code seen before is the same BB -- unless the code
	   there changed (Callgrind deletes the BB of a translation it
	   discards, and the new one makes a BB of its own). */
	void *head = cgt_map_get(&r->bb_index, addr);
	for (uint32_t i = head ? (uint32_t)(uintptr_t)head - 1 : NONE; i != NONE; i = BB(r, i).next)
		if (BB(r, i).obj == obj && BB(r, i).offset == offset) {
			if (!same_code(BB(r, i).blk, blk))
				break;
			AT(r->block_bb, uint32_t, blk->id) = i + 1;
			return i;
		}

	long jmp = vec_extend(&r->bb_jmps, blk->n_exits + 1);
	long i = vec_push(&r->bbs);
	if (jmp < 0 || i < 0)
		return NONE;
	struct bb *bb = &BB(r, i);
	bb->addr = addr;
	bb->offset = offset;
	bb->obj = obj;
	bb->map_epoch = blk->map_epoch;
	bb->n_insns = blk->n_insns;
	bb->insns = blk->insns;
	bb->blk = blk;
	bb->cjmp_count = blk->n_exits;
	bb->jmp = (uint32_t)jmp;
	bb->sect_kind = ci.sect_kind;
	bb->bbcc_list = bb->last_bbcc = NONE;
	bb->next = head ? (uint32_t)(uintptr_t)head - 1 : NONE;

	/* Its exits as Callgrind classes them (main.c CLG_(instrument)): a
	   side exit or the end is a call or return by its VEX kind, else a
	   fall-through if it goes to the next instruction, else a jump. */
	struct bb_jmp *j = &AT(r->bb_jmps, struct bb_jmp, jmp);
	for (uint32_t k = 0; k <= blk->n_exits; k++) {
		uint32_t instr = k < blk->n_exits ? blk->ops[blk->exit_ops[k]].insn : blk->n_insns - 1;
		const struct cgt_jump *jk = blk->jumps != NULL ? &blk->jumps[k < blk->n_exits ? k + 1 : 0] : NULL;
		uint64_t next = blk->insns[instr].addr + blk->insns[instr].len;
		j[k].instr = instr;
		j[k].kind = jk == NULL ? JK_JUMP
			    : jk->kind == CGT_JUMP_CALL ? JK_CALL
			    : jk->kind == CGT_JUMP_RETURN ? JK_RETURN
			    : jk->dst_known && jk->dst == next ? JK_NONE : JK_JUMP;
	}
	/* the side exit and the end trade places */
	bb->inverted = (uint8_t)last_branch_inverted(blk);
	if (bb->inverted) {
		uint32_t last = blk->n_exits - 1;
		struct bb_jmp t = j[last];
		j[last] = j[last + 1];
		j[last + 1] = t;
	}

	/* Its function: named by its first instruction; code without a name
	   is a function of its own at its offset. */
	char unnamed[64];
	const char *name = ci.fn;
	if (name == NULL) {
		static const char *const suffix[] = { "", "", " [Data]", " [BSS]", " [GOT]", " [PLT]", "", "" };
		snprintf(unnamed, sizeof(unnamed), "0x%016llx%s", (unsigned long long)offset,
			 suffix[ci.sect_kind < 8 ? ci.sect_kind : 0]);
		name = unnamed;
	} else {
		bb->is_entry = ci.is_entry;
	}
	/* Valgrind runs _exit through its freeres wrapper; Callgrind names
	   that after the _exit it saw first. */
	uint32_t file_node = 0;
	if (strcmp(name, "vgPlain___libc_freeres_wrapper") == 0 && r->exit_fn != 0) {
		uint32_t fn = r->exit_fn;
		file_node = AT(r->fn_names, struct name_node, fn).parent;
		name = AT(r->fn_names, struct name_node, fn).name;
	} else {
		file_node = name_node(r, &r->files, 2, obj, ci.file ? ci.file : unknown);
	}
	char *copy = NULL;
	if (name == unnamed && (name = copy = strdup(unnamed)) == NULL)
		return NONE;
	uint32_t before = (uint32_t)r->fn_names.n;
	uint32_t fn = file_node ? name_node(r, &r->fn_names, 3, file_node, name) : 0;
	if (fn == 0) {
		free(copy);
		return NONE;
	}
	if (copy != NULL) {
		/* the unnamed code's name: ours to free, if its node took it */
		long k = AT(r->fn_names, struct name_node, fn).name == copy ? vec_push(&r->owned) : -2;
		if (k == -1) {
			free(copy);
			return NONE;
		}
		if (k >= 0)
			AT(r->owned, char *, k) = copy;
		else
			free(copy);
	}
	if (r->fn_names.n > before) {
		/* first sight: its settings (fn.c get_fn_node, clo.c update_fn_config) */
		while (r->fns.n <= fn)
			if (vec_push(&r->fns) < 0)
				return NONE;
		const char *fname = AT(r->fn_names, struct name_node, fn).name;
		struct fn_node *f = &FN(r, fn);
		f->skip = (ci.sect_kind == CGT_SECT_PLT && r->o->skip_plt) || matches_any(r->o->fn_skip, fname);
		f->pop_on_jump = strncmp(fname, "_dl_runtime_resolve", 19) == 0;
		f->toggle_collect = matches_any(r->o->toggle_collect, fname);
		f->dump_before = matches_any(r->o->dump_before, fname);
		f->dump_after = matches_any(r->o->dump_after, fname);
		f->zero_before = matches_any(r->o->zero_before, fname);
		f->separate_recs = r->o->separate_recs;
		f->separate_callers = r->o->separate_callers;
	}
	if (r->exit_fn == 0 && strcmp(AT(r->fn_names, struct name_node, fn).name, "_exit") == 0)
		r->exit_fn = fn;
	BB(r, i).fn = fn;
	if (cgt_map_put(&r->bb_index, addr, (void *)(uintptr_t)(i + 1)) < 0)
		return NONE;
	AT(r->block_bb, uint32_t, blk->id) = (uint32_t)i + 1;
	return (uint32_t)i;
}
