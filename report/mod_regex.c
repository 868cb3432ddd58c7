/*
 * cg_annotate's --mod-filename/--mod-funcname: Perl-style s/old/new/flags,
 * split as cg_annotate splits it (the regex s/(.*)(?<!\\)/(.*)(?<!\\)/
 * (g|i|gi|ig|)$, greedy: the last possible slashes), "\/" unescaped in both
 * parts, g for every match, i to ignore case.
 *
 * The pattern is a POSIX extended regex (cg_annotate uses Python's re):
 * \d, \w, \s, non-greedy and look-around are not available, and where
 * several matches are possible POSIX takes the longest.  The replacement
 * takes Python's forms: \1 to \99 and \g<n> for groups, \\, \n, \t, \r.
 * Empty matches are replaced as re.sub does.
 */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

struct cgt_mod {
	regex_t re;
	char *repl;
	int global;
};

static int escaped_slash_at(const char *s, size_t i)
{
	return s[i] == '/' && (i == 0 || s[i - 1] != '\\');
}

static int valid_flags(const char *f)
{
	return !strcmp(f, "") || !strcmp(f, "g") || !strcmp(f, "i") || !strcmp(f, "gi") ||
	       !strcmp(f, "ig");
}

/* Copies [s, s+n) with every "\/" turned into "/". */
static char *unescape_slashes(const char *s, size_t n)
{
	char *out = malloc(n + 1), *o = out;
	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n && s[i + 1] == '/')
			i++;
		*o++ = s[i];
	}
	*o = '\0';
	return out;
}

struct cgt_mod *cgt_mod_parse(const char *expr)
{
	if (strncmp(expr, "s/", 2) != 0 || strchr(expr, '\n') != NULL)
		return NULL;
	/* In "s/" + body: body[0] follows a slash, so a slash there is not
	   escaped; escaped_slash_at looks at body[i - 1] otherwise. */
	const char *body = expr + 2;
	size_t n = strlen(body);
	for (size_t p1 = n; p1-- > 0;) {
		if (!escaped_slash_at(body, p1))
			continue;
		for (size_t p2 = n; p2-- > p1 + 1;) {
			if (!escaped_slash_at(body, p2) || !valid_flags(body + p2 + 1))
				continue;
			struct cgt_mod *m = calloc(1, sizeof(*m));
			char *pat = unescape_slashes(body, p1);
			if (m == NULL || pat == NULL) {
				free(m);
				free(pat);
				return NULL;
			}
			const char *flags = body + p2 + 1;
			m->repl = unescape_slashes(body + p1 + 1, p2 - p1 - 1);
			m->global = strchr(flags, 'g') != NULL;
			int rc = regcomp(&m->re, pat, REG_EXTENDED | (strchr(flags, 'i') ? REG_ICASE : 0));
			free(pat);
			if (rc != 0 || m->repl == NULL) {
				if (rc == 0)
					regfree(&m->re);
				free(m->repl);
				free(m);
				return NULL;
			}
			return m;
		}
	}
	return NULL;
}

static int append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n + 1 > *cap && cgt_array_grow(buf, cap, *len, n + 1, 1) < 0)
		return -1;
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
	return 0;
}

#define GROUPS 100

/* The replacement of one match, Python style. */
static int expand(const struct cgt_mod *m, const char *subject, const regmatch_t *g, char **buf,
		  size_t *len, size_t *cap)
{
	for (const char *r = m->repl; *r; r++) {
		if (*r != '\\' || r[1] == '\0') {
			if (append(buf, len, cap, r, 1) < 0)
				return -1;
			continue;
		}
		r++;
		int group = -1;
		if (*r >= '1' && *r <= '9') {
			group = *r - '0';
			if (r[1] >= '0' && r[1] <= '9')
				group = group * 10 + (*++r - '0');
		} else if (*r == 'g' && r[1] == '<' && strchr(r, '>') != NULL) {
			group = atoi(r + 2);
			r = strchr(r, '>');
		} else {
			const char *c = *r == 'n' ? "\n" : *r == 't' ? "\t" : *r == 'r' ? "\r" : *r == '\\' ? "\\" : NULL;
			if (c == NULL && append(buf, len, cap, r - 1, 1) < 0)
				return -1;
			if (append(buf, len, cap, c ? c : r, 1) < 0)
				return -1;
			continue;
		}
		if (group >= 0 && group < GROUPS && g[group].rm_so >= 0 &&
		    append(buf, len, cap, subject + g[group].rm_so, (size_t)(g[group].rm_eo - g[group].rm_so)) < 0)
			return -1;
	}
	return 0;
}

char *cgt_mod_apply(const struct cgt_mod *m, const char *s)
{
	size_t n = strlen(s), pos = 0, len = 0, cap = 0;
	char *out = NULL;
	regmatch_t g[GROUPS];

	if (append(&out, &len, &cap, "", 0) < 0)
		return NULL;
	for (int done = 0; pos <= n && (m->global || done == 0);) {
		if (regexec(&m->re, s + pos, GROUPS, g, pos > 0 ? REG_NOTBOL : 0) != 0)
			break;
		for (int i = 0; i < GROUPS; i++)
			if (g[i].rm_so >= 0) {
				g[i].rm_so += (regoff_t)pos;
				g[i].rm_eo += (regoff_t)pos;
			}
		size_t so = (size_t)g[0].rm_so, eo = (size_t)g[0].rm_eo;
		if (append(&out, &len, &cap, s + pos, so - pos) < 0 || expand(m, s, g, &out, &len, &cap) < 0)
			goto fail;
		done++;
		pos = eo;
		if (so == eo) {	/* an empty match: step over one character */
			if (pos < n && append(&out, &len, &cap, s + pos, 1) < 0)
				goto fail;
			pos++;
		}
	}
	if (pos < n && append(&out, &len, &cap, s + pos, n - pos) < 0)
		goto fail;
	return out;
fail:
	free(out);
	return NULL;
}

void cgt_mod_free(struct cgt_mod *m)
{
	if (m == NULL)
		return;
	regfree(&m->re);
	free(m->repl);
	free(m);
}
