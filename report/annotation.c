/*
 * The data of a cg_annotate run: reading and merging the cachegrind.out
 * files as cg_annotate's read_cgout_file does, ranking the summaries,
 * deciding which source files can be annotated.  See annotation.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "annotation.h"

/* ---- Memory ------------------------------------------------------------ */

void *annotation_alloc(struct annotation *a, size_t size)
{
	void *p = calloc(1, size ? size : 1);
	if (p == NULL)
		return NULL;
	if (a->n_allocs == a->cap_allocs &&
	    cgt_array_grow(&a->allocs, &a->cap_allocs, a->n_allocs, 1, sizeof(*a->allocs)) < 0) {
		free(p);
		return NULL;
	}
	a->allocs[a->n_allocs++] = p;
	return p;
}

count_t *annotation_cc(struct annotation *a)
{
	return annotation_alloc(a, a->n_events * sizeof(count_t));
}

static struct dcc *new_dcc(struct annotation *a)
{
	struct dcc *d = annotation_alloc(a, sizeof(*d));
	if (d != NULL && (d->outer = annotation_cc(a)) == NULL)
		return NULL;
	return d;
}

/* defaultdict semantics: looking up creates. */
static void *get_or_make(struct annotation *a, struct cgt_map *m, uint64_t key,
			 void *(*make)(struct annotation *))
{
	void *v = cgt_map_get(m, key);
	if (v == NULL && ((v = make(a)) == NULL || cgt_map_put(m, key, v) < 0))
		return NULL;
	return v;
}

static void *make_cc(struct annotation *a)
{
	return annotation_cc(a);
}

static void *make_dcc(struct annotation *a)
{
	return new_dcc(a);
}

static void *make_map(struct annotation *a)
{
	return annotation_alloc(a, sizeof(struct cgt_map));
}

static void *make_list(struct annotation *a)
{
	return annotation_alloc(a, sizeof(struct name_list));
}

static uint64_t key_of(const char *name)
{
	return (uint64_t)(uintptr_t)name;
}

int annotation_oom(struct annotation *a)
{
	return cgt_fail(&a->error, cgt_err_nomem, "out of memory");
}

/* ---- Reading the files (read_cgout_file) ------------------------------ */

/* Events.init: the events, --show and --sort checked against them.  In
   time linear in the events and options (a file can have many events). */
static int init_events(struct annotation *a, const char *const *events, unsigned n, int first)
{
	const struct cgt_annotate_options *o = a->o;
	const char *const *lists[2] = { (const char *const *)o->show, (const char *const *)o->sort };
	unsigned counts[2] = { o->n_show, o->n_sort };
	const char *names[2] = { "--show", "--sort" };
	/* A dict of events to indices: with repeated events, the last wins.
	   Keys are interned names; values the index + 1. */
	struct cgt_map index = { 0 };
	const char **interned = malloc((n + 1) * sizeof(char *));
	int rc = 0;

	if (interned == NULL)
		return annotation_oom(a);
	for (unsigned k = 0; k < n && rc == 0; k++)
		if ((interned[k] = string_set_intern(&a->names, events[k])) == NULL ||
		    cgt_map_put(&index, key_of(interned[k]), (void *)(uintptr_t)(k + 1)) < 0)
			rc = annotation_oom(a);
	for (int l = 0; l < 2 && rc == 0; l++)
		for (unsigned i = 0; lists[l] != NULL && i < counts[l] && rc == 0; i++) {
			const char *ev = string_set_intern(&a->names, lists[l][i]);
			if (ev == NULL)
				rc = annotation_oom(a);
			else if (cgt_map_get(&index, key_of(ev)) == NULL)
				rc = cgt_fail(&a->error, cgt_err_invalid,
					      "%s event `%s` did not appear in `events:` line", names[l],
					      lists[l][i]);
		}
	if (rc == 0 && !first) {
		int same = n == a->n_events;
		for (unsigned k = 0; same && k < n; k++)
			same = interned[k] == a->events[k];
		if (!same)
			rc = cgt_fail(&a->error, cgt_err_invalid, "events in data files don't match");
	} else if (rc == 0) {
		a->n_events = n;
		a->events = annotation_alloc(a, (n + 1) * sizeof(char *));
		a->show = annotation_alloc(a, (n + (o->show ? o->n_show : 0) + 1) * sizeof(unsigned));
		a->sort = annotation_alloc(a, (n + (o->sort ? o->n_sort : 0) + 1) * sizeof(unsigned));
		a->summary = annotation_cc(a);
		if (a->events == NULL || a->show == NULL || a->sort == NULL || a->summary == NULL)
			rc = annotation_oom(a);
		for (unsigned k = 0; k < n && rc == 0; k++)
			a->events[k] = interned[k];
		for (int l = 0; l < 2 && rc == 0; l++) {
			unsigned *idx = l == 0 ? a->show : a->sort;
			unsigned *nidx = l == 0 ? &a->n_show : &a->n_sort;
			unsigned m = lists[l] != NULL ? counts[l] : n;
			for (unsigned i = 0; i < m; i++) {
				const char *ev = lists[l] != NULL ? string_set_intern(&a->names, lists[l][i])
								  : interned[i];
				idx[i] = (unsigned)(uintptr_t)cgt_map_get(&index, key_of(ev)) - 1;
			}
			*nidx = m;
		}
	}
	cgt_map_free(&index);
	free(interned);
	return rc;
}

static void combine(count_t *to, const count_t *from, unsigned n, int negate)
{
	for (unsigned i = 0; i < n; i++)
		to[i] += negate ? -from[i] : from[i];
}

void cc_add(count_t *to, const count_t *from, unsigned n)
{
	combine(to, from, n, 0);
}

void cc_add_lines(const struct annotation *a, const struct cgt_map *lines, count_t *to)
{
	for (size_t s = 0; s < lines->cap; s++)
		if (lines->slots[s].value != NULL)
			cc_add(to, lines->slots[s].value, a->n_events);
}

static const char *mod_name(struct annotation *a, const struct cgt_mod *mod, const char *name)
{
	if (mod == NULL)
		return string_set_intern(&a->names, name);
	char *m = cgt_mod_apply(mod, name);
	const char *interned = m ? string_set_intern(&a->names, m) : NULL;
	free(m);
	return interned;
}

static int read_file(struct annotation *a, unsigned file_index)
{
	const struct cgt_annotate_options *o = a->o;
	struct cgt_cgout_reader *r;
	struct cgt_cgout_item item;
	int first = file_index == 0, negate = o->diff && first, rc;
	/* The places of counts before any fl= line (below): freed at out. */
	struct cgt_map unfiled_lines = { 0 };
	struct dcc *unfiled_dcc = NULL;

	if (cgt_cgout_open(&r, o->files[file_index], &a->error) < 0)
		return -1;
	a->descs[file_index] = string_set_intern(&a->names, cgt_cgout_desc(r));
	a->cmds[file_index] = string_set_intern(&a->names, cgt_cgout_cmd(r));
	rc = init_events(a, cgt_cgout_events(r), cgt_cgout_n_events(r), first);
	if (rc < 0)
		goto out;

	/* Before any fl= or fn= line, counts go to places outside the maps,
	   as in cg_annotate. */
	const char *mfl = string_set_intern(&a->names, "");
	struct dcc *mfl_dcc = unfiled_dcc = new_dcc(a), *mfn_dcc = new_dcc(a);
	count_t *mfl_inner = annotation_cc(a), *mfn_inner = annotation_cc(a);
	struct cgt_map *lines = &unfiled_lines;
	const char *unspecified = string_set_intern(&a->names, "<unspecified>");
	if (mfl == NULL || mfl_dcc == NULL || mfn_dcc == NULL || mfl_inner == NULL ||
	    mfn_inner == NULL || unspecified == NULL) {
		rc = annotation_oom(a);
		goto out;
	}
	while ((rc = cgt_cgout_next(r, &item, &a->error)) > 0) {
		switch (item.kind) {
		case CGT_CGOUT_COUNTS: {
			uint64_t magnitude = a->magnitude + cgt_cgout_magnitude(r);
			if (magnitude > INT64_MAX) {
				rc = cgt_fail(&a->error, cgt_err_corrupt, "%s: event counts too large: with the files "
					      "before it, their absolute values sum past 2^63 - 1", o->files[file_index]);
				goto out;
			}
			count_t *line_cc = get_or_make(a, lines, (uint64_t)item.line, make_cc);
			if (line_cc == NULL) {
				rc = annotation_oom(a);
				goto out;
			}
			combine(mfl_dcc->outer, item.counts, a->n_events, negate);
			combine(mfn_dcc->outer, item.counts, a->n_events, negate);
			combine(mfl_inner, item.counts, a->n_events, negate);
			combine(mfn_inner, item.counts, a->n_events, negate);
			combine(line_cc, item.counts, a->n_events, negate);
			break;
		}
		case CGT_CGOUT_FN:
		case CGT_CGOUT_FL: {
			const char *mfn = unspecified;
			if (item.kind == CGT_CGOUT_FL) {
				const char *ofl = string_set_intern(&a->names, item.name);
				mfl = mod_name(a, o->mod_filename, item.name);
				struct name_list *ofls = mfl && ofl ? get_or_make(a, &a->mfl_ofls, key_of(mfl), make_list) : NULL;
				if (ofls == NULL) {
					rc = annotation_oom(a);
					goto out;
				}
				/* An ofl always gives the same mfl: seen once, it is in
				   the list (a look-up, not a scan of the list, which
				   --mod-filename can make as long as the file). */
				if (cgt_map_get(&a->seen_ofls, key_of(ofl)) == NULL) {
					if (cgt_map_put(&a->seen_ofls, key_of(ofl), (void *)ofl) < 0) {
						rc = annotation_oom(a);
						goto out;
					}
					if (ofls->n == ofls->cap &&
					    cgt_array_grow(&ofls->names, &ofls->cap, ofls->n, 1,
							   sizeof(*ofls->names)) < 0) {
						rc = annotation_oom(a);
						goto out;
					}
					ofls->names[ofls->n++] = ofl;
				}
				mfl_dcc = get_or_make(a, &a->mfl_dcc, key_of(mfl), make_dcc);
				lines = get_or_make(a, &a->mfl_lines, key_of(mfl), make_map);
			} else {
				mfn = mod_name(a, o->mod_funcname, item.name);
			}
			mfn_dcc = mfn ? get_or_make(a, &a->mfn_dcc, key_of(mfn), make_dcc) : NULL;
			mfl_inner = mfl_dcc && mfn ? get_or_make(a, &mfl_dcc->inner, key_of(mfn), make_cc) : NULL;
			mfn_inner = mfn_dcc ? get_or_make(a, &mfn_dcc->inner, key_of(mfl), make_cc) : NULL;
			if (mfl_dcc == NULL || lines == NULL || mfn_inner == NULL || mfl_inner == NULL) {
				rc = annotation_oom(a);
				goto out;
			}
			break;
		}
		case CGT_CGOUT_SUMMARY:
			combine(a->summary, item.counts, a->n_events, negate);
			break;
		}
	}
out:
	/* The CCs are the run's (annotation_alloc); the slots are the map's. */
	cgt_map_free(&unfiled_lines);
	if (unfiled_dcc != NULL)
		cgt_map_free(&unfiled_dcc->inner);
	a->magnitude += cgt_cgout_magnitude(r);
	cgt_cgout_close(r);
	return rc < 0 ? -1 : 0;
}

/* ---- Ranking (print_mname_summary's filter and sort) ------------------- */

static const struct annotation *sort_annotation;	/* for qsort's comparator */

/* Descending by ([abs(cc[i]) for the sort events], name). */
static int compare_named(const void *x, const void *y)
{
	const struct named_cc *a = x, *b = y;
	const struct annotation *an = sort_annotation;
	for (unsigned s = 0; s < an->n_sort; s++) {
		unsigned i = an->sort[s];
		uint64_t va = a->cc[i] < 0 ? 0 - (uint64_t)a->cc[i] : (uint64_t)a->cc[i];
		uint64_t vb = b->cc[i] < 0 ? 0 - (uint64_t)b->cc[i] : (uint64_t)b->cc[i];
		if (va != vb)
			return va < vb ? 1 : -1;
	}
	int c = strcmp(a->name, b->name);
	return c < 0 ? 1 : c > 0 ? -1 : 0;
}

static int abs_ge(count_t v, double threshold)
{
	uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	return (long double)m >= (long double)threshold;
}

int annotation_rank(struct annotation *a, const struct cgt_map *dccs, struct named_cc **out,
		    size_t *n_out)
{
	unsigned ti = a->sort[0];
	uint64_t s_abs = a->summary[ti] < 0 ? 0 - (uint64_t)a->summary[ti] : (uint64_t)a->summary[ti];
	double threshold = a->o->threshold * (double)s_abs / 100;
	struct named_cc *list = annotation_alloc(a, (dccs->n + 1) * sizeof(*list));
	size_t n = 0;

	if (list == NULL)
		return annotation_oom(a);
	sort_annotation = a;
	for (size_t s = 0; s < dccs->cap; s++) {
		if (dccs->slots[s].value == NULL)
			continue;
		struct dcc *d = dccs->slots[s].value;
		struct named_cc *inner = annotation_alloc(a, (d->inner.n + 1) * sizeof(*inner));
		size_t k = 0;
		if (inner == NULL)
			return annotation_oom(a);
		for (size_t t = 0; t < d->inner.cap; t++) {
			const count_t *cc = d->inner.slots[t].value;
			if (cc != NULL && abs_ge(cc[ti], threshold))
				inner[k++] = (struct named_cc){ (const char *)(uintptr_t)d->inner.slots[t].key,
								cc, NULL, 0 };
		}
		/* An outer name is shown only with an inner one that qualifies. */
		if (k == 0)
			continue;
		qsort(inner, k, sizeof(*inner), compare_named);
		list[n++] = (struct named_cc){ (const char *)(uintptr_t)dccs->slots[s].key, d->outer, inner, k };
	}
	qsort(list, n, sizeof(*list), compare_named);
	*out = list;
	*n_out = n;
	return 0;
}

static int compare_strings(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

int annotation_files(struct annotation *a, const struct named_cc *ranked, size_t n,
		     const char ***mfls, size_t *n_mfls)
{
	const char *unknown = string_set_intern(&a->names, "???");
	*mfls = annotation_alloc(a, (n + 1) * sizeof(char *));
	*n_mfls = 0;
	if (*mfls == NULL || unknown == NULL)
		return annotation_oom(a);
	for (size_t k = 0; k < n; k++)
		if (ranked[k].name != unknown)
			(*mfls)[(*n_mfls)++] = ranked[k].name;
	qsort(*mfls, *n_mfls, sizeof(**mfls), compare_strings);
	return 0;
}

int annotation_sum_unannotated(struct annotation *a, const char *const *mfls, size_t n,
			       count_t **sums)
{
	const char *unknown = string_set_intern(&a->names, "???");
	struct cgt_map chosen = { 0 };
	int rc = unknown == NULL ? annotation_oom(a) : 0;

	for (size_t k = 0; k < n && rc == 0; k++)
		if (cgt_map_put(&chosen, key_of(mfls[k]), (void *)mfls[k]) < 0)
			rc = annotation_oom(a);
	for (size_t s = 0; s < a->mfl_lines.cap && rc == 0; s++) {
		const struct cgt_map_slot *slot = &a->mfl_lines.slots[s];
		if (slot->value == NULL)
			continue;
		if (slot->key == key_of(unknown))
			cc_add_lines(a, slot->value, sums[FILES_UNKNOWN]);
		else if (cgt_map_get(&chosen, slot->key) == NULL)
			cc_add_lines(a, slot->value, sums[BELOW_THRESHOLD]);
	}
	cgt_map_free(&chosen);
	return rc;
}

/* ---- Source files ------------------------------------------------------ */

/* filecmp.cmp(shallow=False): regular files of equal contents.  -1 and
   errno when one cannot be read. */
static int same_contents(const char *x, const char *y)
{
	struct stat sx, sy;
	if (stat(x, &sx) < 0 || stat(y, &sy) < 0)
		return -1;
	if (!S_ISREG(sx.st_mode) || !S_ISREG(sy.st_mode) || sx.st_size != sy.st_size)
		return 0;
	FILE *fx = fopen(x, "rb"), *fy = fopen(y, "rb");
	int same = fx != NULL && fy != NULL ? 1 : -1;
	char bx[65536], by[65536];
	while (same == 1) {
		size_t nx = fread(bx, 1, sizeof(bx), fx), ny = fread(by, 1, sizeof(by), fy);
		if (nx != ny || memcmp(bx, by, nx) != 0)
			same = 0;
		else if (nx == 0)
			break;
	}
	if (fx != NULL)
		fclose(fx);
	if (fy != NULL)
		fclose(fy);
	return same;
}

static int64_t mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* annotation_source of the files at paths[0 .. n). */
static enum source_status read_source(struct annotation *a, char *const *paths, unsigned n,
				      FILE **src, int64_t *min_mtime)
{
	struct stat st;
	int identical = 1;

	for (unsigned i = 0; i + 1 < n && identical == 1; i++)
		identical = same_contents(paths[i], paths[i + 1]);
	if (identical < 0)
		return SOURCE_UNREADABLE;
	if (!identical)
		return SOURCE_NON_IDENTICAL;
	FILE *f = fopen(paths[0], "rb");
	/* Python's open() of a directory fails; fopen's does not. */
	if (f == NULL || fstat(fileno(f), &st) < 0 || S_ISDIR(st.st_mode))
		goto unreadable;
	for (unsigned i = 0; i < n; i++) {
		if (stat(paths[i], &st) < 0)
			goto unreadable;
		if (mtime_ns(&st) < *min_mtime)
			*min_mtime = mtime_ns(&st);
	}
	for (unsigned f_index = 0; f_index < a->n_files; f_index++)
		if (stat(a->o->files[f_index], &st) < 0)
			goto unreadable;
	*src = f;
	return SOURCE_READABLE;
unreadable:
	if (f != NULL)
		fclose(f);
	return SOURCE_UNREADABLE;
}

enum source_status annotation_source(struct annotation *a, const char *mfl,
				     struct name_list **out_ofls, FILE **src, int64_t *min_mtime)
{
	struct name_list *list = cgt_map_get(&a->mfl_ofls, key_of(mfl));

	*src = NULL;
	*min_mtime = INT64_MAX;
	*out_ofls = list;
	qsort(list->names, list->n, sizeof(*list->names), compare_strings);
	char **paths = annotation_source_paths(a->o, list->names, list->n);
	if (paths == NULL)
		return SOURCE_UNREADABLE;
	enum source_status status = read_source(a, paths, list->n, src, min_mtime);
	annotation_source_paths_free(paths, list->n);
	return status;
}

/* ---- Entry point ------------------------------------------------------- */

static void release(struct annotation *a)
{
	for (size_t s = 0; s < a->mfl_dcc.cap; s++)
		if (a->mfl_dcc.slots[s].value != NULL)
			cgt_map_free(&((struct dcc *)a->mfl_dcc.slots[s].value)->inner);
	for (size_t s = 0; s < a->mfn_dcc.cap; s++)
		if (a->mfn_dcc.slots[s].value != NULL)
			cgt_map_free(&((struct dcc *)a->mfn_dcc.slots[s].value)->inner);
	for (size_t s = 0; s < a->mfl_ofls.cap; s++)
		if (a->mfl_ofls.slots[s].value != NULL)
			free(((struct name_list *)a->mfl_ofls.slots[s].value)->names);
	for (size_t s = 0; s < a->mfl_lines.cap; s++)
		if (a->mfl_lines.slots[s].value != NULL)
			cgt_map_free(a->mfl_lines.slots[s].value);
	for (size_t i = 0; i < a->n_allocs; i++)
		free(a->allocs[i]);
	cgt_map_free(&a->mfl_dcc);
	cgt_map_free(&a->mfn_dcc);
	cgt_map_free(&a->mfl_ofls);
	cgt_map_free(&a->mfl_lines);
	cgt_map_free(&a->seen_ofls);
	free(a->allocs);
	string_set_free(&a->names);
}

int cgt_annotate(FILE *out, const struct cgt_annotate_options *o, struct cgt_error *e)
{
	struct annotation a = { .o = o, .out = out };
	int rc = 0;

	a.n_files = o->n_files;
	a.descs = annotation_alloc(&a, (o->n_files + 1) * sizeof(char *));
	a.cmds = annotation_alloc(&a, (o->n_files + 1) * sizeof(char *));
	if (a.descs == NULL || a.cmds == NULL)
		rc = annotation_oom(&a);
	for (unsigned f = 0; f < o->n_files && rc == 0; f++)
		rc = read_file(&a, f);
	if (rc == 0)
		rc = o->json ? annotation_print_json(&a) : annotation_print_text(&a);
	rc = cgt_report_written(out, rc, &a.error);
	release(&a);
	if (rc < 0 && e != NULL)
		*e = a.error;
	return rc < 0 ? -a.error.status : 0;
}
