/*
 * cgtrace report --format=json of a callgrind.out file: the data of
 * callgrind_annotate's text (report/REPORT-JSON.md, "callgrind.out
 * files"): every function with its self and inclusive cost, every call
 * arc with its count and inclusive cost, the summary and totals.  A
 * count of an event no line gave is null (the text's ".").
 */
#include <string.h>

#include "annotation.h"
#include "callgrind_annotate.h"

static void json_text(FILE *out, const char *s)
{
	if (s == NULL)
		fputs("null", out);
	else
		report_json_string(out, s, strlen(s));
}

static void json_cost(FILE *out, const struct cgt_callgrind_profile *p, const struct cgt_cost *c)
{
	if (c == NULL) {
		fputs("null", out);
		return;
	}
	fputc('[', out);
	for (unsigned i = 0; i < p->n_events; i++) {
		if (i)
			fputs(", ", out);
		if (c->given >> i & 1)
			fprintf(out, "%llu", (unsigned long long)c->count[i]);
		else
			fputs("null", out);
	}
	fputc(']', out);
}

/* self + calls: what the function's own code and its callees cost. */
static void json_inclusive(FILE *out, const struct cga *a, const struct cgt_callgrind_fn *f)
{
	struct cgt_cost *c = a->scratch;
	const struct cgt_cost *in = f->called;
	c->given = f->self->given | f->calls->given;
	for (unsigned i = 0; i < a->p->n_events; i++)
		c->count[i] = f->self->count[i] + f->calls->count[i];
	/* a called function's inclusive cost is what its callers paid for it */
	json_cost(out, a->p, in != NULL ? in : c);
}

int cga_print_json(struct cga *a)
{
	const struct cgt_callgrind_profile *p = a->p;
	FILE *out = a->out;
	fputs("{\"format\": \"cgtrace-report-callgrind\", \"version\": 1,\n \"file\": ", out);
	json_text(out, a->o->input);
	fputs(", \"creator\": ", out);
	json_text(out, p->creator);
	fputs(", \"command\": ", out);
	json_text(out, p->cmd);
	fputs(", \"pid\": ", out);
	json_text(out, p->pid);
	fputs(", \"part\": ", out);
	json_text(out, p->part);
	fputs(", \"thread\": ", out);
	json_text(out, p->thread);
	fputs(",\n \"descriptions\": [", out);
	for (unsigned i = 0; i < p->n_desc; i++) {
		fputs(i ? ", " : "", out);
		json_text(out, p->desc[i]);
	}
	fputs("],\n \"events\": [", out);
	for (unsigned i = 0; i < p->n_events; i++) {
		fputs(i ? ", " : "", out);
		json_text(out, p->events[i]);
	}
	fputs("],\n \"summary\": ", out);
	json_cost(out, p, p->summary);
	fputs(", \"totals\": ", out);
	json_cost(out, p, p->totals);
	fputs(", \"program_totals\": ", out);
	json_cost(out, p, a->summary);
	fprintf(out, ", \"program_totals_calculated\": %s,\n \"inclusive\": %s, \"ranked\": [",
		a->summary_calculated ? "true" : "false", a->o->inclusive ? "true" : "false");
	for (size_t k = 0; k < a->n_printed; k++)
		fprintf(out, "%s%zu", k ? ", " : "", a->ranked[k]);
	fputs("],\n \"functions\": [", out);
	for (size_t f = 0; f < p->n_fns; f++) {
		const struct cgt_callgrind_fn *fn = &p->fns[f];
		fputs(f ? ",\n  {\"name\": " : "\n  {\"name\": ", out);
		json_text(out, fn->name);
		fputs(", \"file\": ", out);
		json_text(out, fn->file);
		fputs(", \"function\": ", out);
		json_text(out, fn->function);
		fputs(", \"object\": ", out);
		json_text(out, fn->object);
		fprintf(out, ", \"listed\": %s, \"self\": ", fn->listed ? "true" : "false");
		json_cost(out, p, fn->self);
		fputs(", \"inclusive\": ", out);
		json_inclusive(out, a, fn);
		fputc('}', out);
	}
	fputs("],\n \"calls\": [", out);
	for (size_t k = 0; k < p->n_calls; k++) {
		const struct cgt_callgrind_call *c = &p->calls[k];
		fprintf(out, "%s{\"caller\": %zu, \"callee\": %zu, \"count\": %llu, \"inclusive\": ",
			k ? ",\n  " : "\n  ", c->caller, c->callee, (unsigned long long)c->count);
		json_cost(out, p, c->cost);
		fputc('}', out);
	}
	fputs("]}\n", out);
	return 0;
}
