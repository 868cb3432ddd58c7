/* Text formatting shared by the stages' messages and reports. */
#include <inttypes.h>
#include <stdio.h>

#include "trace.h"

const char *cgt_format_count(uint64_t v, char buf[CGT_COUNT_TEXT])
{
	char digits[24];
	int len = snprintf(digits, sizeof(digits), "%" PRIu64, v), o = 0;

	for (int i = 0; i < len; i++) {
		if (i > 0 && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

void cgt_format_int_list(const int64_t *v, unsigned n, char *buf, size_t cap)
{
	size_t o = (size_t)snprintf(buf, cap, "[");
	for (unsigned i = 0; i < n && o < cap; i++)
		o += (size_t)snprintf(buf + o, cap - o, "%s%lld", i ? ", " : "", (long long)v[i]);
	if (o < cap)
		snprintf(buf + o, cap - o, "]");
}
