/*
 * Reading callgrind.out files (report.h) into callgrind_annotate 3.19's
 * model of them: its header keys, name compression with a pool per kind
 * of name, relative positions substituted as it substitutes them (from
 * the line number of the line before: with positions "instr line" the
 * address before is not kept), a calls= line making the next cost line a
 * call's cost.  Its quirks that change its output are kept; lines it
 * would warn about and pass over are errors, except the header lines of a
 * second part (--combine-dumps=yes), which are what Callgrind writes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report.h"
#include "symbols.h"

/* Where a file's lines and the calls made at them are found. */
struct file_index {
	struct cgt_map line_at;		/* line -> index into lines + 1 */
	struct cgt_map first_call_at;	/* line -> index into calls + 1 */
	size_t *next_call;		/* per call: the next one at its line + 1, 0: none */
	size_t cap_lines, cap_calls, cap_next;
};

struct cgt_callgrind_store {
	struct string_set names;
	struct cgt_map fn_named;	/* interned "file:function" -> index + 1 */
	struct cgt_map call_of;		/* caller << 32 | callee -> index + 1 */
	struct cgt_map file_named;	/* interned name -> index + 1 */
	struct cgt_map compressed;	/* interned "<pool>(<id>" -> interned name */
	struct file_index *index;	/* per file */
	size_t cap_fns, cap_calls, cap_files, cap_index, cap_desc;
	char **blocks;			/* where costs are allocated */
	size_t n_blocks, cap_blocks, block_used;
	uint64_t cells, cell_limit;	/* counts allocated, and how many the file may make */
};

#define BLOCK_BYTES ((size_t)1 << 16)
/* A line of a few bytes makes a cost of every event: at most this many
   counts per byte of the file beyond the first 4M. */
#define CELLS_PER_BYTE 8
#define CELLS_FREE ((uint64_t)1 << 22)

struct reader {
	struct cgt_callgrind_profile *p;
	struct cgt_callgrind_store *s;
	const struct cgt_callgrind_read_options *o;
	const char *path;
	struct cgt_error *e;
	long long line_num;
	int64_t prev_line, curr_line;	/* callgrind_annotate's, for relative positions */
	const char *obj, *file;		/* current ob=, fl=/fi=/fe= (NULL: none yet) */
	const char *cfile;		/* cfi=/cfl= for the next cfn= (NULL: none) */
	size_t fn;			/* the current function + 1; 0: none */
	size_t callee;			/* cfn='s function + 1, since the last fn=/fi=/fe= */
	uint64_t pending_calls;		/* of a calls= line: the next cost line is theirs */
};

static int fail(struct reader *r, const char *what)
{
	return cgt_fail(r->e, cgt_err_corrupt, "%s:%lld: %s", r->path, r->line_num, what);
}

static int nomem(struct reader *r)
{
	return cgt_fail(r->e, cgt_err_nomem, "%s:%lld: out of memory", r->path, r->line_num);
}

static int is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static struct cgt_cost *new_cost(struct reader *r)
{
	struct cgt_callgrind_store *s = r->s;
	size_t size = sizeof(struct cgt_cost) + r->p->n_events * sizeof(uint64_t);
	s->cells += r->p->n_events + 1;
	if (s->cells > s->cell_limit) {
		fail(r, "more costs than a file of this size holds (a count per event for each of "
			"a few bytes)");
		return NULL;
	}
	if (s->n_blocks == 0 || s->block_used + size > BLOCK_BYTES) {
		if (s->n_blocks == s->cap_blocks &&
		    cgt_array_grow(&s->blocks, &s->cap_blocks, s->n_blocks, 1, sizeof(char *)) < 0)
			goto out_of_memory;
		if ((s->blocks[s->n_blocks] = calloc(1, BLOCK_BYTES)) == NULL)
			goto out_of_memory;
		s->n_blocks++;
		s->block_used = 0;
	}
	struct cgt_cost *c = (struct cgt_cost *)(s->blocks[s->n_blocks - 1] + s->block_used);
	s->block_used += size;
	return c;
out_of_memory:
	nomem(r);
	return NULL;
}

/* Adds the counts given of a to b. */
static int add_cost(struct reader *r, struct cgt_cost *b, const struct cgt_cost *a)
{
	for (unsigned i = 0; i < r->p->n_events; i++) {
		if (!(a->given >> i & 1))
			continue;
		if (b->count[i] > UINT64_MAX - a->count[i])
			return fail(r, "a sum of counts past 2^64");
		b->count[i] += a->count[i];
		b->given |= 1ull << i;
	}
	return 0;
}

/* A decimal number of up to 64 bits at *p, which moves past it. */
static int parse_u64(const char **p, uint64_t *v)
{
	const char *q = *p;
	*v = 0;
	if (!is_digit(*q))
		return -1;
	for (; is_digit(*q); q++) {
		unsigned d = (unsigned)(*q - '0');
		if (*v > (UINT64_MAX - d) / 10)
			return -1;
		*v = *v * 10 + d;
	}
	*p = q;
	return 0;
}

static const char *intern(struct reader *r, const char *s)
{
	const char *i = string_set_intern(&r->s->names, s);
	if (i == NULL)
		nomem(r);
	return i;
}

/* A name as callgrind_annotate uncompresses it: "(N) name" defines N in
   its pool (the id is its text: "(01)" is not "(1)"), "(N)" refers back,
   anything else is the name itself. */
static const char *name_value(struct reader *r, char pool, const char *text)
{
	const char *p = text + 1;
	if (text[0] != '(' || !is_digit(*p))
		return intern(r, text);
	while (is_digit(*p))
		p++;
	if (*p != ')')
		return intern(r, text);
	size_t id_len = (size_t)(p - text);
	const char *name = p + 1;
	while (is_space(*name))
		name++;
	char *key = malloc(id_len + 2);
	if (key == NULL) {
		nomem(r);
		return NULL;
	}
	key[0] = pool;
	memcpy(key + 1, text, id_len);
	key[id_len + 1] = '\0';
	const char *ikey = intern(r, key);
	free(key);
	if (ikey == NULL)
		return NULL;
	if (*name == '\0') {
		const char *known = cgt_map_get(&r->s->compressed, (uintptr_t)ikey);
		if (known == NULL)
			fail(r, "a compressed name used before its definition (\"(N) name\")");
		return known;
	}
	const char *iname = intern(r, name);
	if (iname != NULL && cgt_map_put(&r->s->compressed, (uintptr_t)ikey, (void *)iname) < 0) {
		nomem(r);
		return NULL;
	}
	return iname;
}

/* The index of the file named so (made if new). */
static int file_index_of(struct reader *r, const char *name, size_t *index)
{
	struct cgt_callgrind_store *s = r->s;
	struct cgt_callgrind_profile *p = r->p;
	uintptr_t found = (uintptr_t)cgt_map_get(&s->file_named, (uintptr_t)name);
	if (found) {
		*index = found - 1;
		return 0;
	}
	if ((p->n_files == s->cap_files &&
	     cgt_array_grow(&p->files, &s->cap_files, p->n_files, 1, sizeof(*p->files)) < 0) ||
	    (p->n_files == s->cap_index &&
	     cgt_array_grow(&s->index, &s->cap_index, p->n_files, 1, sizeof(*s->index)) < 0) ||
	    cgt_map_put(&s->file_named, (uintptr_t)name, (void *)(uintptr_t)(p->n_files + 1)) < 0)
		return nomem(r);
	memset(&p->files[p->n_files], 0, sizeof(*p->files));
	memset(&s->index[p->n_files], 0, sizeof(*s->index));
	p->files[p->n_files].name = name;
	*index = p->n_files++;
	return 0;
}

/* The function called file:function (made if new): its index + 1, 0 on error. */
static size_t fn_of(struct reader *r, const char *file, const char *function)
{
	struct cgt_callgrind_store *s = r->s;
	struct cgt_callgrind_profile *p = r->p;
	size_t fl = strlen(file), fnl = strlen(function);
	char *full = malloc(fl + fnl + 2);
	if (full == NULL)
		return (size_t)nomem(r) & 0;
	memcpy(full, file, fl);
	full[fl] = ':';
	memcpy(full + fl + 1, function, fnl + 1);
	const char *name = intern(r, full);
	free(full);
	if (name == NULL)
		return 0;
	uintptr_t found = (uintptr_t)cgt_map_get(&s->fn_named, (uintptr_t)name);
	if (found)
		return found;
	if (p->n_fns >= UINT32_MAX - 1) {
		fail(r, "more functions than 2^32");
		return 0;
	}
	if ((p->n_fns == s->cap_fns &&
	     cgt_array_grow(&p->fns, &s->cap_fns, p->n_fns, 1, sizeof(*p->fns)) < 0) ||
	    cgt_map_put(&s->fn_named, (uintptr_t)name, (void *)(uintptr_t)(p->n_fns + 1)) < 0)
		return (size_t)nomem(r) & 0;
	struct cgt_callgrind_fn *f = &p->fns[p->n_fns];
	memset(f, 0, sizeof(*f));
	f->name = name;
	f->file = file;
	f->function = function;
	if ((f->self = new_cost(r)) == NULL || (f->calls = new_cost(r)) == NULL)
		return 0;
	return ++p->n_fns;
}

/* A position at *q as callgrind_annotate reads one: "+N" and "-N" from the
   line before, "*" that line, a decimal number, or (hex_too) 0x and hex
   digits; whitespace (or the line's end) must follow. */
static int parse_position(struct reader *r, const char **q, int hex_too, int64_t *v,
			  int terminated)
{
	const char *p = *q;
	uint64_t n;
	if (*p == '+' || *p == '-') {
		char sign = *p++;
		if (parse_u64(&p, &n) < 0 || n > INT64_MAX ||
		    (sign == '+' && r->prev_line > INT64_MAX - (int64_t)n))
			return fail(r, "expected a position: a number, +N, -N or *");
		*v = sign == '+' ? r->prev_line + (int64_t)n : r->prev_line - (int64_t)n;
	} else if (*p == '*') {
		p++;
		*v = r->prev_line;
	} else if (hex_too && p[0] == '0' && p[1] == 'x') {
		p += 2;
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F')))
			return fail(r, "expected an address after 0x");
		while ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F'))
			p++;
		*v = 0;
	} else if (parse_u64(&p, &n) < 0 || n > INT64_MAX) {
		return fail(r, "expected a position: a number, +N, -N or *");
	} else {
		*v = (int64_t)n;
	}
	if (!is_space(*p) && !(*p == '\0' && terminated))
		return fail(r, "expected a blank after the position");
	while (is_space(*p))
		p++;
	*q = p;
	return 0;
}

/* A line's counts ("." for one not given) into c. */
static int parse_counts(struct reader *r, const char *p, struct cgt_cost *c)
{
	unsigned i = 0;
	for (;;) {
		while (is_space(*p))
			p++;
		if (*p == '\0')
			return 0;
		if (i == r->p->n_events)
			return fail(r, "too many event counts");
		if (*p == '.' && (p[1] == '\0' || is_space(p[1]))) {
			p++;
		} else if (parse_u64(&p, &c->count[i]) < 0 || (*p != '\0' && !is_space(*p))) {
			return fail(r, "expected a count: a decimal number below 2^64, or \".\"");
		} else {
			c->given |= 1ull << i;
		}
		i++;
	}
}

/* A call's cost at a line of the current file, merged with the others of
   the same caller and callee there. */
static int add_line_call(struct reader *r, uint64_t line, const struct cgt_cost *c)
{
	size_t fi;
	if (file_index_of(r, r->file, &fi) < 0)
		return -1;
	struct cgt_callgrind_file *f = &r->p->files[fi];
	struct file_index *x = &r->s->index[fi];
	size_t first = (uintptr_t)cgt_map_get(&x->first_call_at, line), last = 0;
	for (size_t k = first; k; last = k, k = x->next_call[k - 1]) {
		struct cgt_callgrind_line_call *lc = &f->calls[k - 1];
		if (lc->caller == r->fn - 1 && lc->callee == r->callee - 1) {
			lc->count += r->pending_calls;
			return add_cost(r, lc->cost, c);
		}
	}
	if ((f->n_calls == x->cap_calls &&
	     cgt_array_grow(&f->calls, &x->cap_calls, f->n_calls, 1, sizeof(*f->calls)) < 0) ||
	    (f->n_calls == x->cap_next &&
	     cgt_array_grow(&x->next_call, &x->cap_next, f->n_calls, 1, sizeof(size_t)) < 0))
		return nomem(r);
	if (last)
		x->next_call[last - 1] = f->n_calls + 1;
	else if (cgt_map_put(&x->first_call_at, line, (void *)(uintptr_t)(f->n_calls + 1)) < 0)
		return nomem(r);
	struct cgt_callgrind_line_call *lc = &f->calls[f->n_calls];
	x->next_call[f->n_calls] = 0;
	*lc = (struct cgt_callgrind_line_call){ line, r->fn - 1, r->callee - 1, r->pending_calls,
						new_cost(r) };
	if (lc->cost == NULL)
		return -1;
	f->n_calls++;
	return add_cost(r, lc->cost, c);
}

/* A call cost line: the calls of the pending calls= line. */
static int add_call(struct reader *r, uint64_t line, const struct cgt_cost *c)
{
	struct cgt_callgrind_store *s = r->s;
	struct cgt_callgrind_profile *p = r->p;
	uint64_t key = (uint64_t)(r->fn - 1) << 32 | (r->callee - 1);
	uintptr_t k = (uintptr_t)cgt_map_get(&s->call_of, key);
	if (k == 0) {
		if ((p->n_calls == s->cap_calls &&
		     cgt_array_grow(&p->calls, &s->cap_calls, p->n_calls, 1, sizeof(*p->calls)) < 0) ||
		    cgt_map_put(&s->call_of, key, (void *)(uintptr_t)(p->n_calls + 1)) < 0)
			return nomem(r);
		p->calls[p->n_calls] = (struct cgt_callgrind_call){ r->fn - 1, r->callee - 1, 0,
								   new_cost(r) };
		if (p->calls[p->n_calls].cost == NULL)
			return -1;
		k = ++p->n_calls;
	}
	struct cgt_callgrind_call *call = &p->calls[k - 1];
	struct cgt_callgrind_fn *callee = &p->fns[r->callee - 1];
	call->count += r->pending_calls;
	if (add_cost(r, call->cost, c) < 0 || add_line_call(r, line, c) < 0)
		return -1;
	if (callee->called == NULL && (callee->called = new_cost(r)) == NULL)
		return -1;
	r->pending_calls = 0;
	return add_cost(r, callee->called, c) < 0 ? -1 : add_cost(r, p->fns[r->fn - 1].calls, c);
}

/* A self cost at a line of the current file. */
static int add_line(struct reader *r, uint64_t line, const struct cgt_cost *c)
{
	size_t fi;
	if (file_index_of(r, r->file, &fi) < 0)
		return -1;
	struct cgt_callgrind_file *f = &r->p->files[fi];
	struct file_index *x = &r->s->index[fi];
	uintptr_t k = (uintptr_t)cgt_map_get(&x->line_at, line);
	if (k == 0) {
		if ((f->n_lines == x->cap_lines &&
		     cgt_array_grow(&f->lines, &x->cap_lines, f->n_lines, 1, sizeof(*f->lines)) < 0) ||
		    cgt_map_put(&x->line_at, line, (void *)(uintptr_t)(f->n_lines + 1)) < 0)
			return nomem(r);
		f->lines[f->n_lines] = (struct cgt_callgrind_line){ line, new_cost(r) };
		if (f->lines[f->n_lines].cost == NULL)
			return -1;
		k = ++f->n_lines;
	}
	return add_cost(r, f->lines[k - 1].cost, c) < 0 ? -1
	       : add_cost(r, r->p->fns[r->fn - 1].self, c);
}

static int cost_line(struct reader *r, const char *text, int terminated)
{
	int64_t first, line;
	const char *p = text;
	if (parse_position(r, &p, r->p->has_addr, &first, terminated) < 0)
		return -1;
	line = first;
	if (r->p->has_addr && !r->p->has_line)
		line = 0;
	else if (r->p->has_addr && parse_position(r, &p, 0, &line, terminated) < 0)
		return -1;
	if (line < 0)
		return fail(r, "a line number below 0");
	r->curr_line = line;
	if (r->fn == 0)
		return fail(r, "expected fn= before a cost line");
	struct cgt_cost *c = new_cost(r);
	if (c == NULL || parse_counts(r, p, c) < 0)
		return -1;
	if (r->pending_calls == 0)
		return add_line(r, (uint64_t)line, c);
	if (r->callee == 0)
		return fail(r, "expected cfn= before calls=");
	return add_call(r, (uint64_t)line, c);
}

/* fl=, fi=, fe=: the current file, without the strip prefix. */
static const char *file_value(struct reader *r, const char *text)
{
	const char *name = name_value(r, 'l', text);
	size_t n = r->o && r->o->strip_prefix ? strlen(r->o->strip_prefix) : 0;
	if (name != NULL && n > 0 && strncmp(name, r->o->strip_prefix, n) == 0)
		name = intern(r, name + n);
	return name;
}

static int starts(const char *text, const char *key, const char **value)
{
	size_t n = strlen(key);
	if (strncmp(text, key, n) != 0)
		return 0;
	*value = text + n;
	return 1;
}

static int set_function(struct reader *r, const char *function)
{
	r->fn = fn_of(r, r->file ? r->file : "", function);
	r->callee = 0;
	return r->fn ? 0 : -1;
}

static int body_line(struct reader *r, const char *text, int terminated)
{
	const char *v, *name;
	if (is_digit(*text) || *text == '+' || *text == '-' || *text == '*') {
		r->prev_line = r->curr_line;
		return cost_line(r, text, terminated);
	}
	r->prev_line = r->curr_line;
	if (starts(text, "fn=", &v)) {
		if ((name = name_value(r, 'n', v)) == NULL || set_function(r, name) < 0)
			return -1;
		struct cgt_callgrind_fn *f = &r->p->fns[r->fn - 1];
		f->listed = 1;
		f->object = r->obj ? r->obj : "";
		return 0;
	}
	if (starts(text, "fl=", &v)) {
		r->fn = 0;	/* Callgrind follows every fl= with fn= */
		r->callee = 0;
		return (r->file = file_value(r, v)) ? 0 : -1;
	}
	if (starts(text, "fi=", &v) || starts(text, "fe=", &v)) {
		if (r->fn == 0)
			return fail(r, "unexpected fi/fe line: no fn= before it");
		const char *function = r->p->fns[r->fn - 1].function;
		if ((r->file = file_value(r, v)) == NULL || set_function(r, function) < 0)
			return -1;
		r->p->fns[r->fn - 1].listed = 1;
		return 0;
	}
	if (starts(text, "ob=", &v))
		return (r->obj = name_value(r, 'o', v)) ? 0 : -1;
	if (starts(text, "cob=", &v))
		return name_value(r, 'o', v) ? 0 : -1;
	if (starts(text, "cfi=", &v) || starts(text, "cfl=", &v))
		return (r->cfile = name_value(r, 'l', v)) ? 0 : -1;
	if (starts(text, "cfn=", &v)) {
		if ((name = name_value(r, 'n', v)) == NULL)
			return -1;
		if (r->fn == 0)
			return fail(r, "expected fn= before cfn=");
		const char *cfile = r->cfile && *r->cfile ? r->cfile : r->file ? r->file : "";
		r->cfile = NULL;
		return (r->callee = fn_of(r, cfile, name)) ? 0 : -1;
	}
	if (starts(text, "calls=", &v)) {
		uint64_t n;
		if (parse_u64(&v, &n) < 0 || (*v != '\0' && !is_space(*v)))
			return fail(r, "expected calls=COUNT TARGET");
		r->pending_calls = n;
		return 0;
	}
	if (starts(text, "jump=", &v) || starts(text, "jcnd=", &v))
		return 0;
	if (starts(text, "jfi=", &v))
		return name_value(r, 'l', v) ? 0 : -1;
	if (starts(text, "jfn=", &v))
		return name_value(r, 'n', v) ? 0 : -1;
	return -2;
}

/* "key:" and a blank (callgrind_annotate's "^key:\s+", whose \s may be
   the newline): its value after the blanks. */
static int header_value(const char *text, int terminated, const char *key, const char **value)
{
	size_t n = strlen(key);
	if (strncmp(text, key, n) != 0 || text[n] != ':' ||
	    !(is_space(text[n + 1]) || (text[n + 1] == '\0' && terminated)))
		return 0;
	const char *v = text + n + 1;
	while (is_space(*v))
		v++;
	*value = v;
	return 1;
}

/* The keys of a part's header, which a second part repeats in the body. */
static const char *const header_keys[] = {
	"version", "creator", "pid", "thread", "part", "desc", "cmd", "positions", "event",
	"events",
};

static int is_header_line(const char *text, int terminated)
{
	const char *v;
	for (size_t i = 0; i < sizeof(header_keys) / sizeof(header_keys[0]); i++)
		if (header_value(text, terminated, header_keys[i], &v))
			return 1;
	return 0;
}

/* Fills p's header from one line; 1 at events:, which ends it. */
static int header_line(struct reader *r, const char *text, int terminated)
{
	struct cgt_callgrind_profile *p = r->p;
	const char *v, **slot = NULL;
	if (strncmp(text, "version:", 8) == 0) {
		const char *d = text + 8;
		while (is_space(*d))
			d++;
		uint64_t major;
		if (is_digit(*d) && (parse_u64(&d, &major) < 0 || major >= 2))
			return fail(r, "a format of major version 2 or later, which this reader "
				       "(callgrind_annotate 3.19's) cannot read");
		return 0;
	}
	if (header_value(text, terminated, "pid", &v))
		slot = &p->pid;
	else if (header_value(text, terminated, "thread", &v))
		slot = &p->thread;
	else if (header_value(text, terminated, "part", &v))
		slot = &p->part;
	else if (header_value(text, terminated, "cmd", &v))
		slot = &p->cmd;
	else if (header_value(text, terminated, "creator", &v))
		slot = &p->creator;
	if (slot != NULL)
		return (*slot = intern(r, v)) ? 0 : -1;
	if (header_value(text, terminated, "desc", &v)) {
		if ((p->n_desc == r->s->cap_desc &&
		     cgt_array_grow(&p->desc, &r->s->cap_desc, p->n_desc, 1, sizeof(*p->desc)) < 0))
			return nomem(r);
		return (p->desc[p->n_desc++] = intern(r, v)) ? 0 : -1;
	}
	if (header_value(text, terminated, "positions", &v)) {
		p->has_line = strstr(v, "line") != NULL;
		p->has_addr = strstr(v, "addr") != NULL || strstr(v, "instr") != NULL;
		return 0;
	}
	if (header_value(text, terminated, "events", &v)) {
		const char *names[CGT_CALLGRIND_MAX_EVENTS];
		unsigned n = 0;
		for (;;) {
			while (is_space(*v))
				v++;
			if (*v == '\0')
				break;
			if (n == CGT_CALLGRIND_MAX_EVENTS)
				return fail(r, "at most 64 events");
			size_t len = 0;
			while (v[len] != '\0' && !is_space(v[len]))
				len++;
			char *name = strndup(v, len);
			if (name == NULL)
				return nomem(r);
			names[n] = intern(r, name);
			free(name);
			if (names[n++] == NULL)
				return -1;
			v += len;
		}
		if (n == 0)
			return fail(r, "missing events line: events: names no event");
		if ((p->events = calloc(n, sizeof(char *))) == NULL)
			return nomem(r);
		memcpy(p->events, names, n * sizeof(char *));
		p->n_events = n;
		return 1;
	}
	if (is_header_line(text, terminated))
		return 0;	/* event: a long name, which callgrind_annotate does not use */
	return fail(r, "expected a header line (such as \"events: Ir\")");
}

static int summary_line(struct reader *r, const char *text, int terminated)
{
	const char *v;
	struct cgt_cost **slot = header_value(text, terminated, "summary", &v) ? &r->p->summary
			       : header_value(text, terminated, "totals", &v) ? &r->p->totals : NULL;
	if (slot == NULL)
		return 0;
	if ((*slot = new_cost(r)) == NULL || parse_counts(r, v, *slot) < 0)
		return -1;
	return 1;
}

static int by_line(const void *a, const void *b)
{
	const struct cgt_callgrind_line *x = a, *y = b;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Reads the lines of f into r->p. */
static int read_lines(struct reader *r, FILE *f)
{
	char *buf = NULL;
	size_t cap = 0;
	ssize_t len;
	int in_header = 1, rc = 0, last_was_totals = 0;

	while ((len = getline(&buf, &cap, f)) > 0) {
		r->line_num++;
		int terminated = buf[len - 1] == '\n';
		if (terminated)
			buf[--len] = '\0';
		if (strlen(buf) != (size_t)len) {
			rc = fail(r, "a NUL byte: not a text file");
			break;
		}
		const char *t = buf;
		while (is_space(*t))
			t++;
		if (*t == '\0' || buf[0] == '#')
			continue;
		if (!terminated) {
			rc = fail(r, "expected a newline at the end of the last line: the file is cut short");
			break;
		}
		if (in_header) {
			rc = header_line(r, buf, terminated);
			if (rc < 0)
				break;
			in_header = rc == 0;
			rc = 0;
			continue;
		}
		last_was_totals = 0;
		rc = body_line(r, buf, terminated);
		if (rc == -2) {
			rc = summary_line(r, buf, terminated);
			last_was_totals = rc == 1 && buf[0] == 't';
			if (rc == 0 && !is_header_line(buf, terminated))
				rc = fail(r, "expected a cost line (positions and counts) or a line "
					     "fn=, fl=, fi=, fe=, ob=, cob=, cfi=, cfl=, cfn=, calls=, "
					     "jump=, jcnd=, summary: or totals:");
			rc = rc < 0 ? rc : 0;
		}
		if (rc < 0)
			break;
	}
	if (rc == 0 && ferror(f))
		rc = cgt_fail(r->e, cgt_err_io, "%s: %s", r->path, strerror(errno));
	free(buf);
	if (rc < 0)
		return rc;
	if (in_header)
		return fail(r, "missing events line: the file ends before events:");
	if (r->pending_calls)
		return fail(r, "expected the cost line of the calls= before the end of the file");
	if (r->p->creator != NULL && strstr(r->p->creator, "callgrind-") != NULL && !last_was_totals)
		return fail(r, "expected totals: at the end (Callgrind ends every part with it): "
			       "the file is cut short");
	return 0;
}

int cgt_callgrind_read(const char *path, const struct cgt_callgrind_read_options *o,
		       struct cgt_callgrind_profile **pp, struct cgt_error *e)
{
	struct cgt_callgrind_profile *p = calloc(1, sizeof(*p));
	FILE *f = fopen(path, "r");
	struct stat st = { 0 };
	*pp = NULL;
	if (p == NULL || (p->store = calloc(1, sizeof(*p->store))) == NULL) {
		if (f != NULL)
			fclose(f);
		cgt_callgrind_free(p);
		return cgt_fail(e, cgt_err_nomem, "%s: out of memory", path);
	}
	if (f == NULL) {
		int rc = cgt_fail(e, cgt_err_io, "%s: %s", path, strerror(errno));
		cgt_callgrind_free(p);
		return rc;
	}
	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode))
		st.st_size = 0;	/* a pipe: the first 4M counts */
	p->has_line = 1;
	p->store->cell_limit = CELLS_FREE + (uint64_t)st.st_size * CELLS_PER_BYTE;
	struct reader r = { .p = p, .s = p->store, .o = o, .path = path, .e = e };
	int rc = read_lines(&r, f);
	fclose(f);
	if (rc < 0) {
		cgt_callgrind_free(p);
		return rc;
	}
	for (size_t i = 0; i < p->n_files; i++)
		qsort(p->files[i].lines, p->files[i].n_lines, sizeof(*p->files[i].lines), by_line);
	*pp = p;
	return 0;
}

void cgt_callgrind_free(struct cgt_callgrind_profile *p)
{
	if (p == NULL)
		return;
	struct cgt_callgrind_store *s = p->store;
	for (size_t i = 0; i < p->n_files; i++) {
		free(p->files[i].lines);
		free(p->files[i].calls);
	}
	if (s != NULL) {
		for (size_t i = 0; i < p->n_files; i++) {
			cgt_map_free(&s->index[i].line_at);
			cgt_map_free(&s->index[i].first_call_at);
			free(s->index[i].next_call);
		}
		free(s->index);
		for (size_t i = 0; i < s->n_blocks; i++)
			free(s->blocks[i]);
		free(s->blocks);
		cgt_map_free(&s->fn_named);
		cgt_map_free(&s->call_of);
		cgt_map_free(&s->file_named);
		cgt_map_free(&s->compressed);
		string_set_free(&s->names);
		free(s);
	}
	free(p->files);
	free(p->fns);
	free(p->calls);
	free(p->desc);
	free(p->events);
	free(p);
}

int cgt_callgrind_sniff(const char *path)
{
	static const char *const callgrind_only[] = {
		"version:", "creator:", "pid:", "thread:", "part:", "positions:",
	};
	FILE *f = fopen(path, "r");
	char line[4096];
	int found = 0, at_start = 1;
	size_t read = 0;
	if (f == NULL)
		return 0;
	/* The header within the first 64 KiB; a long line is read in pieces,
	   of which only the first is looked at. */
	while (!found && read < (64u << 10) && fgets(line, sizeof(line), f) != NULL) {
		size_t len = strlen(line);
		int line_start = at_start;
		at_start = len > 0 && line[len - 1] == '\n';
		if (read == 0 && strncmp(line, "# callgrind format", 18) == 0)
			found = 1;
		read += len;
		if (!line_start)
			continue;
		if (strncmp(line, "events:", 7) == 0)
			break;
		for (size_t i = 0; i < sizeof(callgrind_only) / sizeof(callgrind_only[0]); i++)
			found |= strncmp(line, callgrind_only[i], strlen(callgrind_only[i])) == 0;
	}
	fclose(f);
	return found;
}
