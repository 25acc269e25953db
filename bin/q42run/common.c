/* common.c -- what q42run's modes share: opening the engine with the
 * warnings --strict turns into errors, the input as one request or one per
 * line, writing stdout (JSON through jansson) and the exit status of a
 * load failure.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bin/q42run/q42run.h"
#include "bin/cli/q42_cli.h"

/* As every program (q42_cli_status), with q42run's own status for memory. */
int exit_for_load(int rc)
{
	return rc == Q42_ENOMEM ? EXIT_NOMEM : q42_cli_status(rc);
}

/* Open the engine of o on m, printing what went wrong: an error, or a
 * weight the backend had to convert -- a warning, an error under
 * --strict. */
int engine_open(const struct opts *o, q42_mount *m, q42_engine **e)
{
	q42_err err = {0};
	q42_engine_mem mem;
	/* a context past the default: what it will hold, before it does */
	if (o->eo.n_ctx > Q42_ENGINE_CTX_DEFAULT && q42_engine_memory(m, &o->eo, &mem, &err) == Q42_OK)
		fprintf(stderr, "q42run: a context of %u tokens: cache %.1f MiB, %.1f MiB in all\n",
			o->eo.n_ctx, (double)mem.kv / 1048576.0, (double)mem.total / 1048576.0);
	int rc = q42_engine_open(e, m, &o->eo, &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: %s\n", err.msg);
		return exit_for_load(rc);
	}
	if (q42_engine_n_fallbacks(*e) > 0) {
		fprintf(stderr, "q42run: %s%s\n", o->strict ? "--strict: " : "warning: ",
			q42_engine_fallback_note(*e));
		if (o->strict) {
			q42_engine_close(*e);
			*e = NULL;
			return EXIT_REQUEST;
		}
	}
	return EXIT_OK;
}

/* With --record, the model's identity for the records (left NULL
 * otherwise); EXIT_MODEL, printed, when it cannot be had. */
int record_ident(const struct opts *o, q42_mount *m, const q42_model_ident **ident)
{
	q42_err err = {0};
	if (o->record && q42_mount_ident(m, ident, &err) != Q42_OK) {
		fprintf(stderr, "q42run: %s\n", err.msg);
		return EXIT_MODEL;
	}
	return EXIT_OK;
}

double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int input_open(struct input *in, const struct opts *o, q42_err *err)
{
	memset(in, 0, sizeof *in);
	in->map.fd = -1;
	in->jsonl = o->jsonl;
	q42_buf_init(&in->text);
	if (o->prompt != NULL) {
		in->data = o->prompt;
		in->len = strlen(o->prompt);
		return Q42_OK;
	}
	int rc = q42_map_open(&in->map, o->file ? o->file : "-", 0, err);
	if (rc != Q42_OK)
		return rc;
	in->data = (const char *)in->map.data;
	in->len = (size_t)in->map.size;
	return Q42_OK;
}

void input_close(struct input *in)
{
	if (in->map.path != NULL)
		q42_map_close(&in->map);
	q42_jsonl_free(in->req);
	q42_buf_free(&in->text);
}

/* The next line of the input; false at the end. Lines split on '\n'
 * only; a final newline does not start an empty request. */
static bool next_line(struct input *in, const char **p, size_t *n)
{
	if (in->pos >= in->len) {
		in->done = true;
		return false;
	}
	const char *s = in->data + in->pos;
	const char *nl = memchr(s, '\n', in->len - in->pos);
	*p = s;
	*n = nl ? (size_t)(nl - s) : in->len - in->pos;
	in->pos += *n + (nl ? 1 : 0);
	in->line++;
	return true;
}

/* --jsonl: the next request of the JSON-lines input (q42_jsonl.h): a
 * line's "prompt", or its "prefix" followed by each of its "questions" in
 * turn (the fork form). false at the end, or with in->failed set after
 * saying why. */
static bool next_json(struct input *in, const char **p, size_t *n)
{
	q42_err err = {0};
	const char *s;
	size_t len;

	while (in->req == NULL || in->q >= q42_jsonl_count(in->req)) {
		q42_jsonl_free(in->req);
		in->req = NULL;
		in->q = 0;
		if (!next_line(in, &s, &len))
			return false;
		if (q42_jsonl_parse(&in->req, s, len, &err) != Q42_OK) {
			fprintf(stderr, "q42run: --jsonl: line %llu: %s\n", (unsigned long long)in->line, err.msg);
			goto bad;
		}
	}
	if (q42_jsonl_prompt(in->req, in->q, &in->text, &err) != Q42_OK) {
		fprintf(stderr, "q42run: --jsonl: %s\n", err.msg);
		goto bad;
	}
	in->q++;
	*p = in->text.data ? (const char *)in->text.data : "";
	*n = in->text.len;
	return true;
bad:
	in->failed = true;
	in->done = true;
	return false;
}

/* Next request; false at the end. */
bool input_next(struct input *in, bool lines, const char **p, size_t *n)
{
	if (in->done)
		return false;
	if (in->jsonl)
		return next_json(in, p, n);
	if (!lines) {
		in->done = true;
		*p = in->data ? in->data : "";
		*n = in->len;
		return true;
	}
	return next_line(in, p, n);
}

int write_out(const void *p, size_t n)
{
	if (n > 0 && fwrite(p, 1, n, stdout) != n)
		return EXIT_IO;
	return EXIT_OK;
}

int finish_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "q42run: standard output: write failed: %s\n", strerror(errno));
		return EXIT_IO;
	}
	return EXIT_OK;
}

json_t *json_fixed(double v, int decimals)
{
	double scale = 1.0;
	for (int i = 0; i < decimals; i++)
		scale *= 10.0;
	return isfinite(v) ? json_real(round(v * scale) / scale) : json_null();
}

json_t *json_lossy(const char *s)
{
	json_t *j = json_string(s);
	if (j == NULL) {
		char *c = strdup(s);
		for (char *q = c; q != NULL && *q != '\0'; q++)
			if ((unsigned char)*q >= 0x80)
				*q = '?';
		j = c != NULL ? json_string(c) : NULL;
		free(c);
	}
	return j != NULL ? j : json_null();
}

int print_json_line(json_t *o, size_t flags)
{
	char *line = o != NULL ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | flags) : NULL;
	int ex = EXIT_OK;

	if (line == NULL) {
		fputs("q42run: out of memory\n", stderr);
		ex = EXIT_NOMEM;
	} else if (printf("%s\n", line) < 0) {
		ex = EXIT_IO;
	}
	free(line);
	json_decref(o);
	return ex;
}
