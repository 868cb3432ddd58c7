/*
 * Reading cachegrind.out files with the newest cg_annotate's rules
 * (cg_annotate.in, read_cgout_file) and its messages.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace.h"

struct cgt_cgout_reader {
	char *path;
	char *data;		/* the whole file */
	size_t size, pos;
	long long line_num;	/* of the line read last, counting an EOF read */

	/* The current line: its text without the line end, and whether it
	   had one (cg_annotate drops the last character of names and of
	   malformed lines, which is a real character on an unterminated last
	   line). */
	const char *text;
	size_t len;
	int terminated;

	char *desc, *cmd, *events_text;
	const char **events;
	unsigned n_events;
	int64_t *counts, *total, *summary;
	unsigned n_counts;	/* counts the last count line gave: the rest are 0 */
	uint64_t magnitude;	/* the sum of every count's absolute value */
	/* Every item stands for n_events counts, which its consumer adds up
	   and may keep: work = n_events per item, at most WORK_PER_BYTE per
	   byte of the file beyond WORK_FREE. */
	uint64_t work, work_limit;
	char *name;		/* fl= / fn= name */
	size_t name_cap;
	int had_summary;
};

/* Cachegrind writes every count, so each of its lines holds more bytes than
   counts; a file of 8 counts a byte or more is mostly zeros it does not
   write (a count line can be "1"), and would make consumers add and keep
   counts quadratically in its size (events x lines). */
#define WORK_PER_BYTE 8
#define WORK_FREE ((uint64_t)1 << 22)

/* Python's str.isspace() for ASCII, which \s and str.split() use. */
static int is_space(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

/* readline() in universal-newlines mode; 0 at the end of the file. */
static int next_line(struct cgt_cgout_reader *r)
{
	r->line_num++;
	if (r->pos >= r->size)
		return 0;
	const char *start = r->data + r->pos, *end = r->data + r->size, *p = start;
	while (p < end && *p != '\n' && *p != '\r')
		p++;
	r->text = start;
	r->len = (size_t)(p - start);
	r->terminated = p < end;
	if (p < end && *p == '\r' && p + 1 < end && p[1] == '\n')
		p++;
	r->pos = p < end ? (size_t)(p + 1 - r->data) : r->size;
	return 1;
}

/* re.match(r"KEY:\s+(.*)", line): the group, or NULL.  \s+ may consume
   the line end itself, so "KEY:" alone on a terminated line matches. */
static const char *match_key(const struct cgt_cgout_reader *r, const char *key, size_t *len)
{
	size_t k = strlen(key);
	if (r->len < k || memcmp(r->text, key, k) != 0)
		return NULL;
	size_t i = k;
	if (i == r->len) {
		if (!r->terminated)
			return NULL;
	} else if (!is_space((unsigned char)r->text[i])) {
		return NULL;
	}
	while (i < r->len && is_space((unsigned char)r->text[i]))
		i++;
	*len = r->len - i;
	return r->text + i;
}

static char *copy(const char *s, size_t n)
{
	char *c = malloc(n + 1);
	if (c != NULL) {
		memcpy(c, s, n);
		c[n] = '\0';
	}
	return c;
}

static int parse_fail(const struct cgt_cgout_reader *r, struct cgt_error *e, const char *msg)
{
	return cgt_fail(e, cgt_err_corrupt, "%s:%lld: %s", r->path, r->line_num, msg);
}

/* Python's int() of one whitespace-free token: -1 if malformed, -2 if
   beyond 64 bits (signed). */
static int parse_int(const char *s, size_t n, int64_t *out)
{
	size_t i = 0;
	int neg = 0, digits = 0, underscore_ok = 0;
	uint64_t v = 0;

	if (i < n && (s[i] == '+' || s[i] == '-'))
		neg = s[i++] == '-';
	for (; i < n; i++) {
		if (s[i] == '_' && underscore_ok) {
			underscore_ok = 0;
			continue;
		}
		if (s[i] < '0' || s[i] > '9')
			return -1;
		uint64_t d = (uint64_t)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -2;
		v = v * 10 + d;
		digits++;
		underscore_ok = 1;
	}
	if (digits == 0 || !underscore_ok)	/* empty, or ending in "_" */
		return -1;
	if (v > (uint64_t)INT64_MAX + (uint64_t)neg)
		return -2;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

/* events.mk_cc(text.split()): counts, zero-padded; -1 if malformed or too
   many, -2 if one is beyond 64 bits.  *given: how many the text has; out's
   counts from there to *given's old value are zeroed (those after it
   already are), so that a line costs its length, not the number of events. */
static int parse_counts(const struct cgt_cgout_reader *r, const char *s, size_t n, int64_t *out,
			unsigned *given)
{
	unsigned k = 0;
	size_t i = 0;

	while (1) {
		while (i < n && is_space((unsigned char)s[i]))
			i++;
		if (i == n)
			break;
		size_t start = i;
		while (i < n && !is_space((unsigned char)s[i]))
			i++;
		int rc = k == r->n_events ? -1 : parse_int(s + start, i - start, &out[k]);
		if (rc < 0) {
			*given = k > *given ? k : *given;	/* out[0 .. k) written */
			return rc;
		}
		k++;
	}
	for (unsigned z = k; z < *given; z++)
		out[z] = 0;
	*given = k;
	return 0;
}

int cgt_cgout_open(struct cgt_cgout_reader **out, const char *path, struct cgt_error *e)
{
	struct cgt_cgout_reader *r = calloc(1, sizeof(*r));
	struct stat st;
	int fd;

	*out = NULL;
	if (r == NULL)
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	r->path = strdup(path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || S_ISDIR(st.st_mode)) {
		int err = fd < 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : errno;
		if (fd >= 0)
			close(fd);
		cgt_cgout_close(r);
		/* Python's OSError text, as cg_annotate prints it. */
		return cgt_fail(e, cgt_err_io, "[Errno %d] %s: '%s'", err, strerror(err), path);
	}
	/* Read to the end, whatever st_size says: a pipe's is 0, and a file
	   can grow or shrink meanwhile.  The buffer grows with what arrives. */
	size_t got = 0, cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 65536;
	int read_error = 0;
	r->data = malloc(cap);
	while (r->data != NULL) {
		if (got == cap && cgt_array_grow(&r->data, &cap, got, 1, 1) < 0) {
			free(r->data);
			r->data = NULL;
			break;
		}
		ssize_t n = read(fd, r->data + got, cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			read_error = n < 0 ? errno : 0;
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	if (r->data == NULL || r->path == NULL) {
		cgt_cgout_close(r);
		return cgt_fail(e, cgt_err_nomem, "out of memory");
	}
	if (read_error != 0) {
		cgt_cgout_close(r);
		return cgt_fail(e, cgt_err_io, "[Errno %d] %s: '%s'", read_error, strerror(read_error), path);
	}
	r->size = got;
	r->work_limit = WORK_FREE + (uint64_t)got * WORK_PER_BYTE;

	/* cg_annotate reads NULs as characters; names and descriptions here
	   are C strings, so refuse them rather than cut text short. */
	const char *nul_at = memchr(r->data, '\0', r->size);
	if (nul_at != NULL) {
		long long line = 1;
		for (const char *p = r->data; p < nul_at; p++)
			line += *p == '\n' || (*p == '\r' && p[1] != '\n');
		cgt_fail(e, cgt_err_corrupt, "%s:%lld: a NUL byte, at offset %zu: not a text file", path,
			 line, (size_t)(nul_at - r->data));
		cgt_cgout_close(r);
		return -1;
	}

	/* desc: lines, then cmd:, then events:. */
	struct cgt_buf desc = { 0 };
	const char *v;
	size_t n;
	int have = next_line(r);
	while (have && (v = match_key(r, "desc:", &n)) != NULL) {
		uint8_t *p = cgt_buf_reserve(&desc, n + 2);
		if (p == NULL) {
			cgt_buf_free(&desc);
			cgt_cgout_close(r);
			return cgt_fail(e, cgt_err_nomem, "out of memory");
		}
		memcpy(p, v, n);
		p[n] = '\n';
		p[n + 1] = '\0';
		desc.len += n + 1;
		have = next_line(r);
	}
	r->desc = (char *)desc.data;
	int rc = 0;
	if (!have || (v = match_key(r, "cmd:", &n)) == NULL)
		rc = parse_fail(r, e, "missing a `command:` line");
	else if ((r->cmd = copy(v, n)) == NULL)
		rc = cgt_fail(e, cgt_err_nomem, "out of memory");
	if (rc == 0) {
		have = next_line(r);
		if (!have || (v = match_key(r, "events:", &n)) == NULL)
			rc = parse_fail(r, e, "missing an `events:` line");
		else if ((r->events_text = copy(v, n)) == NULL)
			rc = cgt_fail(e, cgt_err_nomem, "out of memory");
	}
	if (rc == 0) {
		/* Split the events in place: at most one per two characters. */
		r->events = n / 2 + 2 <= UINT_MAX ? calloc(n / 2 + 2, sizeof(char *)) : NULL;
		for (char *p = r->events_text; r->events != NULL && *p;) {
			while (*p && is_space((unsigned char)*p))
				*p++ = '\0';
			if (*p == '\0')
				break;
			r->events[r->n_events++] = p;
			while (*p && !is_space((unsigned char)*p))
				p++;
		}
		size_t k = r->n_events ? r->n_events : 1;
		r->counts = calloc(k, sizeof(int64_t));
		r->total = calloc(k, sizeof(int64_t));
		r->summary = calloc(k, sizeof(int64_t));
		if (r->events == NULL || r->counts == NULL || r->total == NULL || r->summary == NULL)
			rc = cgt_fail(e, cgt_err_nomem, "out of memory");
		/* The ranking needs a first sort event, and Cachegrind always
		   writes one. */
		else if (r->n_events == 0)
			rc = parse_fail(r, e, "no events in the `events:` line");
	}
	if (rc < 0) {
		cgt_cgout_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

const char *cgt_cgout_desc(const struct cgt_cgout_reader *r)
{
	return r->desc ? r->desc : "";
}

const char *cgt_cgout_cmd(const struct cgt_cgout_reader *r)
{
	return r->cmd;
}

unsigned cgt_cgout_n_events(const struct cgt_cgout_reader *r)
{
	return r->n_events;
}

const char *const *cgt_cgout_events(const struct cgt_cgout_reader *r)
{
	return r->events;
}

/* line[3:-1]: the name less its line end -- or, unterminated, its last
   character. */
static const char *name_of(struct cgt_cgout_reader *r)
{
	size_t n = r->len - 3 - (r->terminated || r->len == 3 ? 0 : 1);
	if (n + 1 > r->name_cap && cgt_array_grow(&r->name, &r->name_cap, 0, n + 1, 1) < 0)
		return NULL;
	memcpy(r->name, r->text + 3, n);
	r->name[n] = '\0';
	return r->name;
}

static int counts_fail(const struct cgt_cgout_reader *r, struct cgt_error *e, int rc)
{
	/* cg_annotate reads any integer; beyond 64 bits, say so rather than
	   call the line malformed. */
	return parse_fail(r, e, rc == -2 ? "a number beyond 64 bits (at most 9223372036854775807)"
				       : "malformed or too many event counts");
}

/* Bounds the magnitudes so that no sum or difference of counts a consumer
   forms can overflow; Python's unbounded integers need no such limit. */
static int add_magnitudes(struct cgt_cgout_reader *r)
{
	for (unsigned k = 0; k < r->n_counts; k++) {
		int64_t c = r->counts[k];
		uint64_t m = c < 0 ? 0 - (uint64_t)c : (uint64_t)c;
		if (__builtin_add_overflow(r->magnitude, m, &r->magnitude) || r->magnitude > INT64_MAX)
			return -1;
	}
	return 0;
}

uint64_t cgt_cgout_magnitude(const struct cgt_cgout_reader *r)
{
	return r->magnitude;
}

/* Counts the work of one more item (see work). */
static int add_work(struct cgt_cgout_reader *r, struct cgt_error *e)
{
	r->work += r->n_events;
	if (r->work <= r->work_limit)
		return 0;
	return cgt_fail(e, cgt_err_corrupt,
			"%s:%lld: too many lines for %u events: they stand for %llu counts, more than "
			"%d a byte of this file's %zu bytes (the missing counts are zeros, which "
			"Cachegrind writes)",
			r->path, r->line_num, r->n_events, (unsigned long long)r->work, WORK_PER_BYTE,
			r->size);
}

int cgt_cgout_next(struct cgt_cgout_reader *r, struct cgt_cgout_item *item, struct cgt_error *e)
{
	const char *v;
	size_t n;

	while (next_line(r)) {
		if (r->len > 0 && r->text[0] >= '0' && r->text[0] <= '9') {
			size_t i = 0;
			while (i < r->len && !is_space((unsigned char)r->text[i]))
				i++;
			int rc = parse_int(r->text, i, &item->line);
			if (rc == 0)
				rc = parse_counts(r, r->text + i, r->len - i, r->counts, &r->n_counts);
			if (rc < 0)
				return counts_fail(r, e, rc);
			if (add_magnitudes(r) < 0)
				return parse_fail(r, e, "event counts too large: "
						  "their absolute values sum past 2^63 - 1");
			if (add_work(r, e) < 0)
				return -1;
			for (unsigned k = 0; k < r->n_counts; k++)
				r->total[k] += r->counts[k];
			item->kind = CGT_CGOUT_COUNTS;
			item->counts = r->counts;
			return 1;
		}
		if (r->len >= 3 && (memcmp(r->text, "fn=", 3) == 0 || memcmp(r->text, "fl=", 3) == 0)) {
			if (add_work(r, e) < 0)
				return -1;
			item->kind = r->text[1] == 'n' ? CGT_CGOUT_FN : CGT_CGOUT_FL;
			item->name = name_of(r);
			if (item->name == NULL)
				return cgt_fail(e, cgt_err_nomem, "out of memory");
			return 1;
		}
		if ((v = match_key(r, "summary:", &n)) != NULL) {
			unsigned given = r->n_events;	/* all padded: its work is counted below */
			int rc = parse_counts(r, v, n, r->summary, &given);
			if (rc < 0)
				return counts_fail(r, e, rc);
			if (add_work(r, e) < 0)
				return -1;
			r->had_summary = 1;
			if (r->n_events > 0 &&
			    memcmp(r->summary, r->total, r->n_events * sizeof(int64_t)) != 0) {
				char a[4096], b[4096], msg[8300];
				cgt_format_int_list(r->summary, r->n_events, a, sizeof(a));
				cgt_format_int_list(r->total, r->n_events, b, sizeof(b));
				snprintf(msg, sizeof(msg),
					 "`summary:` line doesn't match computed total\n"
					 "- summary:  %s\n- computed: %s", a, b);
				return parse_fail(r, e, msg);
			}
			item->kind = CGT_CGOUT_SUMMARY;
			item->counts = r->summary;
			return 1;
		}
		if ((r->len == 0 && r->terminated) || (r->len > 0 && r->text[0] == '#'))
			continue;
		/* line[:-1]: without its line end, or its last character */
		size_t shown = r->terminated ? r->len : r->len - 1;
		char msg[512];
		snprintf(msg, sizeof(msg), "malformed line: %.*s", (int)(shown < 480 ? shown : 480),
			 r->text);
		return parse_fail(r, e, msg);
	}
	if (!r->had_summary)
		return parse_fail(r, e, "missing `summary:` line, aborting");
	return 0;
}

void cgt_cgout_close(struct cgt_cgout_reader *r)
{
	if (r == NULL)
		return;
	free(r->path);
	free(r->data);
	free(r->desc);
	free(r->cmd);
	free(r->events_text);
	free(r->events);
	free(r->counts);
	free(r->total);
	free(r->summary);
	free(r->name);
	free(r);
}
