/*
 * callgrind.out from a call-graph profile, written as Callgrind 3.19's
 * dump.c writes it (../shared/docs/callgrind-format.md): a function's
 * cost centres one after another, a cost line whenever the position
 * changes, calls with their inclusive cost at the call's position, the
 * code of skipped PLT stubs as the caller's self cost there; names
 * compressed to "(N) name" at first use.  One difference, deliberate:
 * Callgrind writes each position relative to the last self cost line,
 * while its readers take it relative to the last cost line of any kind
 * (call costs and jump sources too); we write what the readers read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* A file position: Callgrind's file nodes belong to an object. */
struct pos {
	uint32_t file;		/* our number for (object, name), 0: none yet */
	int32_t line;
	uint64_t addr;		/* in the object */
};

struct file_id {
	uint32_t obj;
	const char *name;
	uint32_t next;		/* same hash */
	int written;
};

/* One file's writer: its numbers for names outlive a part, for the parts
   after it in the same file (--combine-dumps); each part defines the
   names it uses again, as Callgrind's does (dump.c init_dump_array, at
   every dump) and as KCachegrind reads them (its loader forgets them at
   a new part). */
struct cgt_callgrind_writer {
	FILE *f;
	const struct cgt_cg_profile *p;
	struct cgt_symbolizer *sy;
	const struct cgt_trace_header *h;
	struct cgt_callgrind_out_options o_copy;
	const struct cgt_callgrind_out_options *o;
	unsigned n_ev;
	struct file_id *files;
	uint32_t n_files;
	size_t cap_files;
	struct cgt_map file_index;
	uint8_t *obj_written;
	size_t n_obj_written;
	struct cgt_map fn_ids;	/* (context, rec) -> id + 1, FN_WRITTEN once defined in the file */
	uint32_t n_fn_ids;
	struct pos last;	/* where the readers are */
	uint64_t totals[CGT_MAX_EVENTS];
	int failed;
};

#define FN_WRITTEN (1u << 31)
#define writer cgt_callgrind_writer

/* Our number of the file node (obj, name). */
static uint32_t file_of(struct writer *w, uint32_t obj, const char *name)
{
	uint64_t key = cgt_hash_text(name, 0xcbf29ce484222325ull ^ ((uint64_t)obj * 0x9E3779B97F4A7C15ull));
	void *head = cgt_map_get(&w->file_index, key);
	for (uint32_t i = head ? (uint32_t)(uintptr_t)head : 0; i != 0; i = w->files[i].next)
		if (w->files[i].obj == obj && strcmp(w->files[i].name, name) == 0)
			return i;
	/* files[0] is unused: 0 is no file. */
	if (w->n_files + 1 >= w->cap_files &&
	    cgt_array_grow(&w->files, &w->cap_files, w->n_files + 1, 1, sizeof(*w->files)) < 0) {
		w->failed = 1;
		return 0;
	}
	uint32_t i = ++w->n_files;
	w->files[i] = (struct file_id){ obj, name, head ? (uint32_t)(uintptr_t)head : 0, 0 };
	if (cgt_map_put(&w->file_index, key, (void *)(uintptr_t)i) < 0)
		w->failed = 1;
	return i;
}

static void put_obj(struct writer *w, const char *tag, uint32_t obj)
{
	if (!w->o->compress_strings)
		fprintf(w->f, "%s=%s\n", tag, w->p->objs[obj].name);
	else if (w->obj_written[obj])
		fprintf(w->f, "%s=(%u)\n", tag, obj);
	else {
		fprintf(w->f, "%s=(%u) %s\n", tag, obj, w->p->objs[obj].name);
		w->obj_written[obj] = 1;
	}
}

static void put_file(struct writer *w, const char *tag, uint32_t file)
{
	struct file_id *fi = &w->files[file];
	if (!w->o->compress_strings)
		fprintf(w->f, "%s=%s\n", tag, fi->name);
	else if (fi->written)
		fprintf(w->f, "%s=(%u)\n", tag, file);
	else {
		fprintf(w->f, "%s=(%u) %s\n", tag, file, fi->name);
		fi->written = 1;
	}
}

/* A function as Callgrind names it: the context's function, 'N for
   recursion level N, then 'caller for each caller it is separated by. */
static void put_fn(struct writer *w, const char *tag, uint32_t context, uint32_t rec)
{
	const struct cgt_cg_profile *p = w->p;
	const struct cgt_cg_context *c = &p->contexts[context];
	uint64_t key = (uint64_t)context << 24 | rec;
	fprintf(w->f, "%s=", tag);
	if (w->o->compress_strings) {
		uint32_t v = (uint32_t)(uintptr_t)cgt_map_get(&w->fn_ids, key);
		if (v & FN_WRITTEN) {
			fprintf(w->f, "(%u)\n", (v & ~FN_WRITTEN) - 1);
			return;
		}
		if (v == 0)
			v = ++w->n_fn_ids;
		if (cgt_map_put(&w->fn_ids, key, (void *)(uintptr_t)(v | FN_WRITTEN)) < 0)
			w->failed = 1;
		fprintf(w->f, "(%u) ", v - 1);
	}
	fputs(p->fns[p->context_fns[c->first]].name, w->f);
	if (rec > 0)
		fprintf(w->f, "'%u", rec + 1);
	for (uint32_t k = 1; k < c->n; k++)
		fprintf(w->f, "'%s", p->fns[p->context_fns[c->first + k]].name);
	fputc('\n', w->f);
}

/* A subposition: relative to where the readers are when near, else absolute. */
static void put_positions(struct writer *w, const struct pos *at)
{
	if (w->o->dump_instr) {
		int64_t diff = (int64_t)(at->addr - w->last.addr);
		if (w->o->compress_pos && w->last.addr > 0 && diff > -100 && diff < 100)
			fprintf(w->f, diff > 0 ? "+%lld " : diff == 0 ? "* " : "%lld ", (long long)diff);
		else
			fprintf(w->f, "%#llx ", (unsigned long long)at->addr);
	}
	if (w->o->dump_line) {
		int64_t diff = (int64_t)at->line - w->last.line;
		if (w->o->compress_pos && w->last.line > 0 && diff > -100 && diff < 100)
			fprintf(w->f, diff > 0 ? "+%lld " : diff == 0 ? "* " : "%lld ", (long long)diff);
		else
			fprintf(w->f, "%d ", at->line);
	}
}

static void put_costs(struct writer *w, const uint64_t *c)
{
	/* trailing zeros left out, as Callgrind does */
	unsigned n = w->n_ev;
	while (n > 1 && c[n - 1] == 0)
		n--;
	fprintf(w->f, "%llu", (unsigned long long)c[0]);
	for (unsigned k = 1; k < n; k++)
		fprintf(w->f, " %llu", (unsigned long long)c[k]);
	fputc('\n', w->f);
}

/* A position line with no costs (a jump's source) or a cost line. */
static void put_line(struct writer *w, const struct pos *at, const uint64_t *cost)
{
	put_positions(w, at);
	if (cost != NULL)
		put_costs(w, cost);
	else
		fputc('\n', w->f);
	w->last = *at;
}

/* Where an instruction is: its file and line; without line information
   the function's file and line 0 (dump.c get_debug_pos). */
static int position(struct writer *w, uint64_t addr, uint32_t map_epoch, uint64_t offset, uint32_t obj,
		    uint32_t fn_file, struct pos *at)
{
	struct cgt_location loc;
	cgt_symbolize(w->sy, addr, map_epoch, &loc);
	int found = strcmp(loc.file, "???") != 0;
	at->file = file_of(w, obj, loc.file);
	at->line = found ? loc.line : 0;
	at->addr = offset;
	if (!found && fn_file != 0)
		at->file = fn_file;
	return found;
}

/* Switches the readers to file (fi=, or fe= back to the function's). */
static void switch_file(struct writer *w, uint32_t file, uint32_t fn_file)
{
	if (file != w->last.file) {
		put_file(w, file == fn_file ? "fe" : "fi", file);
		w->last.file = file;
	}
}

/* Where an instruction of a centre is now: its object may have been
   mapped again elsewhere since the block ran (Callgrind looks positions
   up at the object's current place when it dumps). */
static uint64_t now(const struct cgt_cg_profile *p, const struct cgt_cg_centre *c, uint64_t iaddr)
{
	return c->offset + (iaddr - c->addr) + p->obj_bias[c->obj];
}

struct line_cost {
	struct pos at;
	uint64_t cost[CGT_MAX_EVENTS];
	int any;
};

static void flush(struct writer *w, struct line_cost *lc, uint32_t fn_file)
{
	if (!lc->any)
		return;
	switch_file(w, lc->at.file, fn_file);
	put_line(w, &lc->at, lc->cost);
	for (unsigned k = 0; k < w->n_ev; k++)
		w->totals[k] += lc->cost[k];
	memset(lc->cost, 0, sizeof(lc->cost));
	lc->any = 0;
}

static void put_arc(struct writer *w, const struct cgt_cg_centre *c, const struct cgt_cg_arc *a,
		    const struct pos *at, uint32_t fn_obj)
{
	const struct cgt_cg_profile *p = w->p;
	struct pos target;
	uint32_t to_fn = p->context_fns[p->contexts[a->to_context].first];
	uint32_t to_fn_file = file_of(w, p->files[p->fns[to_fn].parent].parent, p->files[p->fns[to_fn].parent].name);
	if (!position(w, a->to_offset + w->p->obj_bias[a->to_obj], w->p->map_epoch, a->to_offset,
		      a->to_obj, 0, &target))
		target.file = w->last.file;
	if (a->kind != CGT_CG_CALL) {
		/* a jump is written only where its target has a line */
		if (!w->o->dump_instr && target.line == 0)
			return;
		if (target.file != w->last.file)
			put_file(w, "jfi", target.file);
		if (a->to_context != c->context || a->to_rec != c->rec)
			put_fn(w, "jfn", a->to_context, a->to_rec);
		if (a->kind == CGT_CG_COND_JUMP)
			fprintf(w->f, "jcnd=%llu/%llu ", (unsigned long long)a->count,
				(unsigned long long)a->executed);
		else
			fprintf(w->f, "jump=%llu ", (unsigned long long)a->count);
		put_positions(w, &target);
		fputc('\n', w->f);
		put_line(w, at, NULL);
		return;
	}
	if (fn_obj != a->to_obj)
		put_obj(w, "cob", a->to_obj);
	if (w->last.file != to_fn_file)
		put_file(w, "cfi", to_fn_file);
	put_fn(w, "cfn", a->to_context, a->to_rec);
	fprintf(w->f, "calls=%llu ", (unsigned long long)a->count);
	put_positions(w, &target);
	fputc('\n', w->f);
	put_line(w, at, a->cost);
}

/* The part's header (dump.c new_dumpfile); a part after another in the
   same file has no file header and no cache descriptions. */
static void put_header(struct writer *w, const struct cgt_trace_header *h, int first)
{
	const struct cgt_cg_profile *p = w->p;
	FILE *f = w->f;
	if (first) {
		fprintf(f, "# callgrind format\nversion: 1\ncreator: cgtrace (callgrind-3.19.0)\n");
		fprintf(f, "pid: %llu\ncmd: ", (unsigned long long)h->pid);
		/* Callgrind's: a space, the program and its arguments, newlines
		   and backslashes escaped */
		for (uint32_t i = 0; i < h->argc; i++) {
			fputc(' ', f);
			for (const char *s = h->argv[i]; *s; s++)
				fputs(*s == '\n' ? "\\n" : *s == '\\' ? "\\\\" : (char[2]){ *s, 0 }, f);
		}
	}
	fprintf(f, "\npart: %u\n", p->part);
	if (first) {
		fputs("\n\n", f);
		for (int l = 0; l < 3; l++) {
			static const char *const names[] = { "I1", "D1", "LL" };
			fprintf(f, "desc: %s cache: %s\n", names[l], w->o->cache_desc[l] ? w->o->cache_desc[l] : "");
		}
		if (w->o->attribution != NULL)
			fprintf(f, "desc: %s\n", w->o->attribution);
	}
	fprintf(f, "\ndesc: Timerange: Basic block %llu - %llu\n", (unsigned long long)p->blocks_from,
		(unsigned long long)p->blocks_to);
	/* a recorded string is the program's: kept on its line */
	fputs("desc: Trigger: ", f);
	for (const char *s = p->trigger ? p->trigger : "Program termination"; *s; s++)
		fputs(*s == '\n' ? "\\n" : *s == '\r' ? "\\r" : (char[2]){ *s, 0 }, f);
	fprintf(f, "\n\npositions:%s%s\n", w->o->dump_instr ? " instr" : "", w->o->dump_line ? " line" : "");
	fprintf(f, "events:");
	for (unsigned k = 0; k < p->events.n; k++)
		fprintf(f, " %s", p->events.ev[k].name);
	fprintf(f, "\nsummary: ");
	put_costs(w, p->summary);
	fprintf(f, "\n\n");
}

int cgt_callgrind_writer_open(struct cgt_callgrind_writer **out, struct cgt_symbolizer *sy,
			      const struct cgt_trace_header *h, const struct cgt_callgrind_out_options *o,
			      struct cgt_error *e)
{
	struct writer *w = calloc(1, sizeof(*w));
	if (w == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	w->sy = sy;
	w->h = h;
	w->o_copy = *o;
	w->o = &w->o_copy;
	*out = w;
	return 0;
}

void cgt_callgrind_writer_close(struct cgt_callgrind_writer *w)
{
	if (w == NULL)
		return;
	free(w->files);
	free(w->obj_written);
	cgt_map_free(&w->file_index);
	cgt_map_free(&w->fn_ids);
	free(w);
}

int cgt_callgrind_writer_part(struct cgt_callgrind_writer *w, FILE *f, const struct cgt_cg_profile *p,
			      int first, struct cgt_error *e)
{
	const struct cgt_callgrind_out_options *o = w->o;
	w->f = f;
	w->p = p;
	w->n_ev = p->events.n;
	memset(w->totals, 0, sizeof(w->totals));
	if (p->n_objs + 1 > w->n_obj_written) {
		size_t n = w->n_obj_written;
		if (cgt_array_grow(&w->obj_written, &n, 0, (size_t)p->n_objs + 1, 1) < 0)
			return cgt_fail(e, cgt_err_nomem, "out of memory");
		w->n_obj_written = n;
	}
	/* every name defined again in each part, under the same number */
	memset(w->obj_written, 0, w->n_obj_written);
	for (uint32_t i = 1; i <= w->n_files; i++)
		w->files[i].written = 0;
	for (size_t i = 0; i < w->fn_ids.cap; i++)
		if (w->fn_ids.slots[i].value != NULL)
			w->fn_ids.slots[i].value =
				(void *)((uintptr_t)w->fn_ids.slots[i].value & ~(uintptr_t)FN_WRITTEN);
	put_header(w, w->h, first);

	struct line_cost cur = { 0 };
	uint32_t fn_context = UINT32_MAX, fn_rec = 0, fn_file = 0, last_obj = 0, last_fn_file = 0;
	for (size_t i = 0; i <= p->n_centres && !w->failed; i++) {
		const struct cgt_cg_centre *c = i < p->n_centres ? &p->centres[i] : NULL;
		if (fn_context != UINT32_MAX && (c == NULL || c->context != fn_context || c->rec != fn_rec)) {
			/* the function's last line, its file back, a blank line */
			flush(w, &cur, fn_file);
			if (w->last.file != fn_file)
				put_file(w, "fe", fn_file);
			fputc('\n', f);
		}
		if (c == NULL)
			break;
		uint32_t fn = p->context_fns[p->contexts[c->context].first];
		const struct cgt_cg_name *home = &p->files[p->fns[fn].parent];
		uint32_t obj = home->parent;
		if (c->context != fn_context || c->rec != fn_rec) {
			uint32_t file = file_of(w, obj, home->name);
			if (obj != last_obj)
				put_obj(w, "ob", obj);
			if (file != last_fn_file)
				put_file(w, "fl", file);
			put_fn(w, "fn", c->context, c->rec);
			fn_context = c->context;
			fn_rec = c->rec;
			fn_file = last_fn_file = file;
			last_obj = obj;
			w->last = (struct pos){ file, 0, 0 };
			cur = (struct line_cost){ .at = { file, 0, 0 } };
		}

		const struct cgt_cg_arc *arcs = p->arcs + c->first_arc;
		uint32_t a = 0;
		for (uint32_t k = 0; k < c->n_insns; k++) {
			struct pos at;
			uint64_t iaddr = c->insns[k].addr;
			position(w, now(p, c, iaddr), p->map_epoch, c->offset + (iaddr - c->addr), c->obj,
				 fn_file, &at);
			if (o->dump_instr || at.line != cur.at.line || at.file != cur.at.file) {
				flush(w, &cur, fn_file);
				cur.at = at;
			}
			const uint64_t *ic = c->cost + (size_t)k * w->n_ev;
			for (unsigned ev = 0; ev < w->n_ev; ev++) {
				cur.cost[ev] += ic[ev];
				cur.any |= ic[ev] != 0;
			}
			if (a < c->n_arcs && !arcs[a].at_end && arcs[a].insn == k) {
				flush(w, &cur, fn_file);
				struct pos site;
				position(w, now(p, c, iaddr), p->map_epoch, c->offset + (iaddr - c->addr), c->obj,
					 0, &site);
				cur.at = site;
				switch_file(w, site.file, fn_file);
				for (; a < c->n_arcs && !arcs[a].at_end && arcs[a].insn == k; a++)
					put_arc(w, c, &arcs[a], &site, obj);
			}
		}
		if (c->skipped != NULL || a < c->n_arcs) {
			flush(w, &cur, fn_file);
			struct pos site;
			uint64_t iaddr = c->n_insns ? c->insns[c->n_insns - 1].addr : c->addr;
			position(w, now(p, c, iaddr), p->map_epoch, c->offset + (iaddr - c->addr), c->obj, 0,
				 &site);
			cur.at = site;
			switch_file(w, site.file, fn_file);
			if (c->skipped != NULL) {
				memcpy(cur.cost, c->skipped, w->n_ev * sizeof(uint64_t));
				cur.any = 1;
				flush(w, &cur, fn_file);
			}
			for (; a < c->n_arcs; a++)
				put_arc(w, c, &arcs[a], &site, obj);
		}
	}
	fprintf(f, "totals: ");
	put_costs(w, w->totals);
	if (w->failed)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	if (ferror(f))
		return cgt_fail(e, cgt_err_io, "cannot write the callgrind.out file: %s", strerror(errno));
	return 0;
}
