/* score.c -- --choices, --choices-file and --logits-for: score the
 * prompt against fixed options or print chosen logits (q42run(1)).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "bin/q42run/q42run.h"
#include "common/q42_buf.h"
#include "run/q42_choices.h"
#include "run/q42_jsonl.h"
#include "run/q42_record.h"

/* --logits-for: "ID,ID,..." against the vocabulary size. */
static int parse_ids(const char *s, uint32_t nv, int32_t **out, uint32_t *n_out)
{
	uint32_t n = 1, k = 0;
	int32_t *ids;
	for (const char *p = s; *p; p++)
		n += *p == ',';
	if (n > Q42_LOGITS_FOR_MAX) {
		fprintf(stderr, "q42run: --logits-for: more than %u ids\n", Q42_LOGITS_FOR_MAX);
		return EXIT_USAGE;
	}
	ids = malloc(n * sizeof *ids);
	if (ids == NULL)
		return EXIT_NOMEM;
	for (const char *p = s;; p++) {
		char *end;
		unsigned long v;
		errno = 0;
		v = strtoul(p, &end, 10);
		if (*p < '0' || *p > '9' || errno != 0 || (*end != ',' && *end != '\0') || v >= nv) {
			fprintf(stderr, "q42run: --logits-for '%s': expected comma-separated token ids in 0..%u\n",
				s, nv - 1);
			free(ids);
			return EXIT_USAGE;
		}
		ids[k++] = (int32_t)v;
		p = end;
		if (*end == '\0')
			break;
	}
	*out = ids;
	*n_out = k;
	return EXIT_OK;
}

/* --choices / --choices-file / --decisions and --logits-for: score the
 * prompt, print. */
int run_score(const struct opts *o, q42_mount *m, struct input *in, double t_start)
{
	q42_engine *e = NULL;
	const q42_model_ident *ident = NULL;
	q42_err err = {0};
	q42_buf out, store;
	q42_map cf = {0};
	q42_choice *ch = NULL;
	uint32_t n_ch = 0, n_ids = 0;
	int32_t *ids = NULL;
	const char *p;
	size_t n;
	uint64_t idx = 0;
	double load_ms;
	q42_prefix *pre = NULL;
	struct chat chat = {0};
	int rc, ex = EXIT_OK;

	cf.fd = -1;
	q42_buf_init(&out);
	q42_buf_init(&store);
	if (o->choices_file != NULL) {
		rc = q42_map_open(&cf, o->choices_file, 0, &err);
		if (rc != Q42_OK) {
			fprintf(stderr, "q42run: --choices-file: %s\n", err.msg);
			ex = rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_IO;
			goto done;
		}
		rc = q42_choices_split(cf.data ? (const char *)cf.data : "", (size_t)cf.size, '\n', &ch,
				       &n_ch, &err);
	} else if (o->choices != NULL) {
		rc = q42_choices_split(o->choices, strlen(o->choices), ',', &ch, &n_ch, &err);
	} else if (o->decisions) {
		rc = Q42_OK;
	} else {
		rc = parse_ids(o->logits_for, q42_tokenizer_n_vocab(q42_mount_tokenizer(m)), &ids, &n_ids);
		if (rc != EXIT_OK) {
			ex = rc;
			goto done;
		}
	}
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: %s\n", err.msg);
		ex = rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_USAGE;
		goto done;
	}
	ex = engine_open(o, m, &e);
	if (ex != EXIT_OK)
		goto done;
	ex = requests_open(o, m, e, &ident, &pre, &chat);
	if (ex != EXIT_OK)
		goto done;
	load_ms = now_ms() - t_start;
	while (ex == EXIT_OK && input_next(in, o->lines, &p, &n) &&
	       (ex = chat_prompt(o, &chat, &p, &n)) == EXIT_OK) {
		q42_request rq = {
			.prompt = p, .prompt_len = n, .add_special = !o->no_bos,
			.parse_special = !o->no_special, .strict = o->strict, .prefix = pre,
		};
		q42_result r;
		q42_choice *rch = ch, *own = NULL;
		uint32_t rn = n_ch, n_own = 0;
		enum q42_decision_kind kind = Q42_DECISION_OPTIONS;
		q42_result_init(&r);
		q42_buf_reset(&out);
		rc = Q42_OK;
		if (in->req != NULL && q42_jsonl_has_decision(in->req, in->q - 1) && o->mode == MODE_CHOICES) {
			rc = q42_jsonl_decision(in->req, in->q - 1, &store, &own, &n_own, &kind, &err);
			rch = own;
			rn = n_own;
		} else if (ch == NULL && o->decisions) {
			rc = q42_err_set(&err, Q42_EARG, "decision: the request has no \"kind\" (and no --choices)");
		}
		if (rc != Q42_OK)
			;
		else if (rch != NULL)
			rc = q42_choices_score(e, q42_mount_tokenizer(m), &rq, rch, rn, &r, &err);
		else
			rc = q42_prompt_eval(e, q42_mount_tokenizer(m), &rq, &r, &err);
		if (rc != Q42_OK) {
			fprintf(stderr, "q42run: request %llu: %s\n", (unsigned long long)idx, err.msg);
			ex = rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_REQUEST;
		} else if (o->record) {
			q42_sampling sp;
			q42_record_info ri = {
				.program = "q42run", .version = Q42_VERSION, .request_index = idx,
				.load_ms = load_ms, .model_path = o->model, .ident = ident,
				.engine = e, .sampling = &sp, .request = &rq, .result = &r,
				.choices = rch, .n_choices = rn, .decision_kind = kind,
				.intent = o->intent, .scope = o->scope, .record_prompt = o->record_prompt,
			};
			q42_sampling_default(&sp);
			rc = q42_record_append(&out, &ri, &err);
			if (rc != Q42_OK) {
				fprintf(stderr, "q42run: %s\n", err.msg);
				ex = EXIT_NOMEM;
			}
		} else if (rch != NULL) {
			for (uint32_t i = 0; i < rn; i++) {
				q42_buf_append(&out, rch[i].text, rch[i].len);
				q42_buf_printf(&out, "\t%.9g\t%.9g\n", rch[i].prob, rch[i].loglik);
			}
		} else {
			const float *l = q42_engine_logits(e);
			for (uint32_t i = 0; i < n_ids; i++)
				q42_buf_printf(&out, "%d\t%.9g\n", ids[i], (double)l[ids[i]]);
		}
		if (ex == EXIT_OK)
			ex = out.failed ? EXIT_NOMEM : write_out(out.data, out.len);
		q42_result_free(&r);
		q42_choices_free(own, n_own);
		idx++;
	}
	if (in->failed && ex == EXIT_OK)
		ex = EXIT_REQUEST;
	ex = reuse_close(o, m, e, pre, ex);
	pre = NULL;
done:
	chat_close(&chat);
	q42_prefix_close(pre);
	q42_buf_free(&out);
	q42_buf_free(&store);
	q42_choices_free(ch, n_ch);
	free(ids);
	if (cf.path != NULL)
		q42_map_close(&cf);
	q42_engine_close(e);
	return ex;
}
