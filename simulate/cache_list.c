/*
 * One level's list of cache configurations: Cachegrind's "size,assoc,line"
 * values, plus ranges "lo..hi" of powers of two in the size and assoc
 * fields, so that one option asks for a sweep.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/* One field of a value: a number, or the powers of two from lo to hi. */
struct field {
	const char *text;
	int len;
	int64_t lo, hi;
	int is_range;
};

static int is_power_of_two(int64_t x)
{
	return x > 0 && (x & (x - 1)) == 0;
}

static int is_blank(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Fails with the option, the value and the message, e.g.
   "--D1=64k..4k,8,64: empty range 64k..4k (...)". */
#define FAIL(fmt, ...)                                                                     \
	(cgt_fail(e, cgt_err_invalid, "--%s=%s: " fmt, option, text, __VA_ARGS__),         \
	 CGT_CACHE_BAD_RANGE)

#define EXPECTED_SYNTAX \
	"expected size,assoc,line, where size and assoc may be ranges lo..hi of powers of two"

/* A number as cgt_cache_parse reads one after its leading blanks (decimal
   digits, then k/K or M) filling the whole of s[0..len).  0 if it is one,
   1 if it is not a number, 2 if it is larger than an int32_t can hold. */
static int parse_number(const char *s, int len, int64_t *v)
{
	int i = 0, digits = 0;
	int64_t n = 0;

	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits++)
		if (n <= INT32_MAX)	/* stays far from int64_t's overflow */
			n = n * 10 + (s[i] - '0');
	if (i < len && (s[i] == 'k' || s[i] == 'K'))
		n *= 1024, i++;
	else if (i < len && s[i] == 'M')
		n *= 1024 * 1024, i++;
	if (digits == 0 || i != len)
		return 1;
	*v = n;
	return n > INT32_MAX ? 2 : 0;
}

/* s[0..len) without its leading blanks (which Cachegrind's numbers may
   have). */
static const char *trimmed(const char *s, int *len)
{
	while (*len > 0 && is_blank(*s))
		s++, --*len;
	return s;
}

static int parse_field(struct field *f, const char *option, const char *text,
		       struct cgt_error *e)
{
	const char *dots = memmem(f->text, (size_t)f->len, "..", 2);
	int lo_len = dots ? (int)(dots - f->text) : f->len;
	const char *hi_text = dots ? dots + 2 : f->text;
	int hi_len = dots ? f->len - lo_len - 2 : f->len;
	int64_t *ends[2] = { &f->lo, &f->hi };
	const char *end_text[2] = { f->text, hi_text };
	int end_len[2] = { lo_len, hi_len };

	f->is_range = dots != NULL;
	for (int i = 0; i < (f->is_range ? 2 : 1); i++) {
		const char *s = trimmed(end_text[i], &end_len[i]);
		if (end_len[i] == 0 && f->is_range)
			return FAIL("the range %.*s has no %s end (expected lo..hi, e.g. 4k..64k)",
				    f->len, f->text, i == 0 ? "lower" : "upper");
		if (end_len[i] == 0)
			return FAIL("%s", EXPECTED_SYNTAX);
		int rc = parse_number(s, end_len[i], ends[i]);
		if (rc == 1)
			return FAIL("%.*s is not a number (expected digits with an optional k or M suffix)",
				    end_len[i], s);
		if (rc == 2)
			return FAIL("%.*s is too large (at most %d)", end_len[i], s, INT32_MAX);
		if (f->is_range && !is_power_of_two(*ends[i]))
			return FAIL("%.*s is not a power of two (a range's ends must be)", end_len[i], s);
	}
	if (!f->is_range)
		f->hi = f->lo;
	if (f->lo > f->hi)
		return FAIL("empty range %.*s (expected lo..hi with lo <= hi)", f->len, f->text);
	return 0;
}

/* A range holds at most the 31 powers of two an int32_t can. */
#define MAX_PER_VALUE (31 * 31)

/* Parses a value with ranges into its configurations, each checked. */
static int expand(const char *option, const char *text, struct cgt_cache_config *out,
		  struct cgt_error *e)
{
	struct field f[3];
	const char *p = text;

	for (int i = 0; i < 3; i++) {
		const char *comma = strchr(p, ',');
		if ((i < 2) != (comma != NULL))
			return FAIL("%s", EXPECTED_SYNTAX);
		f[i].text = p;
		f[i].len = comma ? (int)(comma - p) : (int)strlen(p);
		p = comma ? comma + 1 : NULL;
		int rc = parse_field(&f[i], option, text, e);
		if (rc != 0)
			return rc;
	}
	if (f[2].is_range)
		return FAIL("%s", "the line size cannot be a range (only size and assoc can)");

	int n = 0;
	for (int64_t size = f[0].lo; size <= f[0].hi; size *= 2)
		for (int64_t assoc = f[1].lo; assoc <= f[1].hi; assoc *= 2) {
			struct cgt_cache_config c = { (int32_t)size, (int32_t)assoc, (int32_t)f[2].lo };
			const char *why = cgt_cache_check(&c);
			if (why != NULL)
				return FAIL("%d B, %d-way, %d B lines: %s", c.size, c.assoc, c.line, why);
			out[n++] = c;
		}
	return n;
}

static int append(struct cgt_cache_list *l, const struct cgt_cache_config *c, unsigned n,
		  const char *option, const char *text, struct cgt_error *e)
{
	if (n > CGT_MAX_CONFIGS - l->n)
		return FAIL("more than %d configurations", CGT_MAX_CONFIGS);
	if (l->n + n > l->cap) {
		unsigned cap = l->cap * 2 > l->n + n ? l->cap * 2 : l->n + n;
		if (cap > CGT_MAX_CONFIGS)
			cap = CGT_MAX_CONFIGS;
		struct cgt_cache_config *v = realloc(l->v, cap * sizeof(*v));
		if (v == NULL)
			return cgt_fail(e, cgt_err_nomem, "out of memory");
		l->v = v;
		l->cap = cap;
	}
	memcpy(l->v + l->n, c, n * sizeof(*c));
	l->n += n;
	return 0;
}

int cgt_cache_list_add(struct cgt_cache_list *l, const char *option, const char *text,
		       struct cgt_cache_config *c_out, struct cgt_error *e)
{
	if (strstr(text, "..") == NULL) {
		int rc = cgt_cache_parse(text, c_out);
		return rc != CGT_CACHE_OK ? rc : append(l, c_out, 1, option, text, e);
	}
	struct cgt_cache_config c[MAX_PER_VALUE];
	int n = expand(option, text, c, e);
	return n < 0 ? n : append(l, c, (unsigned)n, option, text, e);
}

void cgt_cache_list_free(struct cgt_cache_list *l)
{
	free(l->v);
	*l = (struct cgt_cache_list){ 0 };
}
