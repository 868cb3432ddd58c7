/*
 * The body lines of a callgrind.out file (callgrind_read.c reads the
 * file): names with their compression pools, positions, cost lines and
 * calls, as callgrind_annotate 3.19 reads them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callgrind_reader.h"

int reader_fail(struct reader *r, const char *what)
{
	return cgt_fail(r->e, cgt_err_corrupt, "%s:%lld: %s", r->path, r->line_num, what);
}

int reader_nomem(struct reader *r)
{
	return cgt_fail(r->e, cgt_err_nomem, "%s:%lld: out of memory", r->path, r->line_num);
}

struct cgt_cost *reader_new_cost(struct reader *r)
{
	struct cgt_callgrind_store *s = r->s;
	size_t size = sizeof(struct cgt_cost) + r->p->n_events * sizeof(uint64_t);
	s->cells += r->p->n_events + 1;
	if (s->cells > s->cell_limit) {
		reader_fail(r, "more costs than a file of this size holds (a count per event for each of "
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
	reader_nomem(r);
	return NULL;
}

/* Adds the counts given of a to b. */
static int add_cost(struct reader *r, struct cgt_cost *b, const struct cgt_cost *a)
{
	for (unsigned i = 0; i < r->p->n_events; i++) {
		if (!(a->given >> i & 1))
			continue;
		if (b->count[i] > UINT64_MAX - a->count[i])
			return reader_fail(r, "a sum of counts past 2^64");
		b->count[i] += a->count[i];
		b->given |= 1ull << i;
	}
	return 0;
}

/* A decimal number of up to 64 bits at *p, which moves past it. */
int reader_parse_u64(const char **p, uint64_t *v)
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

const char *reader_intern(struct reader *r, const char *s)
{
	const char *i = string_set_intern(&r->s->names, s);
	if (i == NULL)
		reader_nomem(r);
	return i;
}

/* A name as callgrind_annotate uncompresses it: "(N) name" defines N in
   its pool (the id is its text: "(01)" is not "(1)"), "(N)" refers back,
   anything else is the name itself. */
static const char *name_value(struct reader *r, char pool, const char *text)
{
	const char *p = text + 1;
	if (text[0] != '(' || !is_digit(*p))
		return reader_intern(r, text);
	while (is_digit(*p))
		p++;
	if (*p != ')')
		return reader_intern(r, text);
	size_t id_len = (size_t)(p - text);
	const char *name = p + 1;
	while (is_space(*name))
		name++;
	char *key = malloc(id_len + 2);
	if (key == NULL) {
		reader_nomem(r);
		return NULL;
	}
	key[0] = pool;
	memcpy(key + 1, text, id_len);
	key[id_len + 1] = '\0';
	const char *ikey = reader_intern(r, key);
	free(key);
	if (ikey == NULL)
		return NULL;
	if (*name == '\0') {
		const char *known = cgt_map_get(&r->s->compressed, (uintptr_t)ikey);
		if (known == NULL)
			reader_fail(r, "a compressed name used before its definition (\"(N) name\")");
		return known;
	}
	const char *iname = reader_intern(r, name);
	if (iname != NULL && cgt_map_put(&r->s->compressed, (uintptr_t)ikey, (void *)iname) < 0) {
		reader_nomem(r);
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
		return reader_nomem(r);
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
		return (size_t)reader_nomem(r) & 0;
	memcpy(full, file, fl);
	full[fl] = ':';
	memcpy(full + fl + 1, function, fnl + 1);
	const char *name = reader_intern(r, full);
	free(full);
	if (name == NULL)
		return 0;
	uintptr_t found = (uintptr_t)cgt_map_get(&s->fn_named, (uintptr_t)name);
	if (found)
		return found;
	if (p->n_fns >= UINT32_MAX - 1) {
		reader_fail(r, "more functions than 2^32");
		return 0;
	}
	if ((p->n_fns == s->cap_fns &&
	     cgt_array_grow(&p->fns, &s->cap_fns, p->n_fns, 1, sizeof(*p->fns)) < 0) ||
	    cgt_map_put(&s->fn_named, (uintptr_t)name, (void *)(uintptr_t)(p->n_fns + 1)) < 0)
		return (size_t)reader_nomem(r) & 0;
	struct cgt_callgrind_fn *f = &p->fns[p->n_fns];
	memset(f, 0, sizeof(*f));
	f->name = name;
	f->file = file;
	f->function = function;
	if ((f->self = reader_new_cost(r)) == NULL || (f->calls = reader_new_cost(r)) == NULL)
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
		if (reader_parse_u64(&p, &n) < 0 || n > INT64_MAX ||
		    (sign == '+' && r->prev_line > INT64_MAX - (int64_t)n))
			return reader_fail(r, "expected a position: a number, +N, -N or *");
		*v = sign == '+' ? r->prev_line + (int64_t)n : r->prev_line - (int64_t)n;
	} else if (*p == '*') {
		p++;
		*v = r->prev_line;
	} else if (hex_too && p[0] == '0' && p[1] == 'x') {
		p += 2;
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F')))
			return reader_fail(r, "expected an address after 0x");
		while ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F'))
			p++;
		*v = 0;
	} else if (reader_parse_u64(&p, &n) < 0 || n > INT64_MAX) {
		return reader_fail(r, "expected a position: a number, +N, -N or *");
	} else {
		*v = (int64_t)n;
	}
	if (!is_space(*p) && !(*p == '\0' && terminated))
		return reader_fail(r, "expected a blank after the position");
	while (is_space(*p))
		p++;
	*q = p;
	return 0;
}

/* A line's counts ("." for one not given) into c. */
int reader_parse_counts(struct reader *r, const char *p, struct cgt_cost *c)
{
	unsigned i = 0;
	for (;;) {
		while (is_space(*p))
			p++;
		if (*p == '\0')
			return 0;
		if (i == r->p->n_events)
			return reader_fail(r, "too many event counts");
		if (*p == '.' && (p[1] == '\0' || is_space(p[1]))) {
			p++;
		} else if (reader_parse_u64(&p, &c->count[i]) < 0 || (*p != '\0' && !is_space(*p))) {
			return reader_fail(r, "expected a count: a decimal number below 2^64, or \".\"");
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
	const uint64_t key = line * 0x9E3779B97F4A7C15ull ^
			     ((uint64_t)r->fn << 32 | (uint32_t)r->callee) * 0xC2B2AE3D27D4EB4Full;
	const size_t first = (uintptr_t)cgt_map_get(&x->first_call_at, key);
	for (size_t k = first; k; k = x->next_call[k - 1]) {
		struct cgt_callgrind_line_call *lc = &f->calls[k - 1];
		if (lc->line == line && lc->caller == r->fn - 1 && lc->callee == r->callee - 1) {
			lc->count += r->pending_calls;
			return add_cost(r, lc->cost, c);
		}
	}
	if ((f->n_calls == x->cap_calls &&
	     cgt_array_grow(&f->calls, &x->cap_calls, f->n_calls, 1, sizeof(*f->calls)) < 0) ||
	    (f->n_calls == x->cap_next &&
	     cgt_array_grow(&x->next_call, &x->cap_next, f->n_calls, 1, sizeof(size_t)) < 0))
		return reader_nomem(r);
	if (cgt_map_put(&x->first_call_at, key, (void *)(uintptr_t)(f->n_calls + 1)) < 0)
		return reader_nomem(r);
	struct cgt_callgrind_line_call *lc = &f->calls[f->n_calls];
	x->next_call[f->n_calls] = first;
	*lc = (struct cgt_callgrind_line_call){ line, r->fn - 1, r->callee - 1, r->pending_calls,
						reader_new_cost(r) };
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
			return reader_nomem(r);
		p->calls[p->n_calls] = (struct cgt_callgrind_call){ r->fn - 1, r->callee - 1, 0,
								   reader_new_cost(r) };
		if (p->calls[p->n_calls].cost == NULL)
			return -1;
		k = ++p->n_calls;
	}
	struct cgt_callgrind_call *call = &p->calls[k - 1];
	struct cgt_callgrind_fn *callee = &p->fns[r->callee - 1];
	call->count += r->pending_calls;
	if (add_cost(r, call->cost, c) < 0 || add_line_call(r, line, c) < 0)
		return -1;
	if (callee->called == NULL && (callee->called = reader_new_cost(r)) == NULL)
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
			return reader_nomem(r);
		f->lines[f->n_lines] = (struct cgt_callgrind_line){ line, reader_new_cost(r) };
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
		return reader_fail(r, "a line number below 0");
	r->curr_line = line;
	if (r->fn == 0)
		return reader_fail(r, "expected fn= before a cost line");
	struct cgt_cost *c = reader_new_cost(r);
	if (c == NULL || reader_parse_counts(r, p, c) < 0)
		return -1;
	if (r->pending_calls == 0)
		return add_line(r, (uint64_t)line, c);
	if (r->callee == 0)
		return reader_fail(r, "expected cfn= before calls=");
	return add_call(r, (uint64_t)line, c);
}

/* fl=, fi=, fe=: the current file, without the strip prefix. */
static const char *file_value(struct reader *r, const char *text)
{
	const char *name = name_value(r, 'l', text);
	size_t n = r->o && r->o->strip_prefix ? strlen(r->o->strip_prefix) : 0;
	if (name != NULL && n > 0 && strncmp(name, r->o->strip_prefix, n) == 0)
		name = reader_intern(r, name + n);
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

int reader_body_line(struct reader *r, const char *text, int terminated)
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
			return reader_fail(r, "unexpected fi/fe line: no fn= before it");
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
			return reader_fail(r, "expected fn= before cfn=");
		const char *cfile = r->cfile && *r->cfile ? r->cfile : r->file ? r->file : "";
		r->cfile = NULL;
		return (r->callee = fn_of(r, cfile, name)) ? 0 : -1;
	}
	if (starts(text, "calls=", &v)) {
		uint64_t n;
		if (reader_parse_u64(&v, &n) < 0 || (*v != '\0' && !is_space(*v)))
			return reader_fail(r, "expected calls=COUNT TARGET");
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

