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

#include "callgrind_reader.h"

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
		if (is_digit(*d) && (reader_parse_u64(&d, &major) < 0 || major >= 2))
			return reader_fail(r, "a format of major version 2 or later, which this reader "
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
		return (*slot = reader_intern(r, v)) ? 0 : -1;
	if (header_value(text, terminated, "desc", &v)) {
		if ((p->n_desc == r->s->cap_desc &&
		     cgt_array_grow(&p->desc, &r->s->cap_desc, p->n_desc, 1, sizeof(*p->desc)) < 0))
			return reader_nomem(r);
		return (p->desc[p->n_desc++] = reader_intern(r, v)) ? 0 : -1;
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
				return reader_fail(r, "at most 64 events");
			size_t len = 0;
			while (v[len] != '\0' && !is_space(v[len]))
				len++;
			char *name = strndup(v, len);
			if (name == NULL)
				return reader_nomem(r);
			names[n] = reader_intern(r, name);
			free(name);
			if (names[n++] == NULL)
				return -1;
			v += len;
		}
		if (n == 0)
			return reader_fail(r, "missing events line: events: names no event");
		if ((p->events = calloc(n, sizeof(char *))) == NULL)
			return reader_nomem(r);
		memcpy(p->events, names, n * sizeof(char *));
		p->n_events = n;
		return 1;
	}
	if (is_header_line(text, terminated))
		return 0;	/* event: a long name, which callgrind_annotate does not use */
	return reader_fail(r, "expected a header line (such as \"events: Ir\")");
}

static int summary_line(struct reader *r, const char *text, int terminated)
{
	const char *v;
	struct cgt_cost **slot = header_value(text, terminated, "summary", &v) ? &r->p->summary
			       : header_value(text, terminated, "totals", &v) ? &r->p->totals : NULL;
	if (slot == NULL)
		return 0;
	if ((*slot = reader_new_cost(r)) == NULL || reader_parse_counts(r, v, *slot) < 0)
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
			rc = reader_fail(r, "a NUL byte: not a text file");
			break;
		}
		const char *t = buf;
		while (is_space(*t))
			t++;
		if (*t == '\0' || buf[0] == '#')
			continue;
		if (!terminated) {
			rc = reader_fail(r, "expected a newline at the end of the last line: the file is cut short");
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
		rc = reader_body_line(r, buf, terminated);
		if (rc == -2) {
			rc = summary_line(r, buf, terminated);
			last_was_totals = rc == 1 && buf[0] == 't';
			if (rc == 0 && !is_header_line(buf, terminated))
				rc = reader_fail(r, "expected a cost line (positions and counts) or a line "
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
		return reader_fail(r, "missing events line: the file ends before events:");
	if (r->pending_calls)
		return reader_fail(r, "expected the cost line of the calls= before the end of the file");
	if (r->p->creator != NULL && strstr(r->p->creator, "callgrind-") != NULL && !last_was_totals)
		return reader_fail(r, "expected totals: at the end (Callgrind ends every part with it): "
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
	struct stat st;
	char line[4096];
	int found = 0, at_start = 1;
	size_t read = 0;
	/* a pipe or FIFO is not read here: what is read is gone (and opening
	   a FIFO waits for its writer) */
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	FILE *f = fopen(path, "r");
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
