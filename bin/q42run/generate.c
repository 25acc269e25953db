/* generate.c -- generation (the default mode): each request through the
 * engine with the Sentinel's rules, a stop list, a quin sieve or a
 * grammar, printed as text or as q42-record(5) lines, with --timings.
 */
#include <string.h>
#include "bin/q42run/q42run.h"
#include "common/q42_buf.h"
#include "constrain/q42_grammar.h"
#include "constrain/q42_sieve.h"
#include "formats/q42_digest.h"
#include "run/q42_record.h"
#include "sentinel/q42_sentinel.h"

struct sink {
	bool failed;
};

static void on_text(void *ud, const char *p, size_t n)
{
	struct sink *s = ud;
	if (fwrite(p, 1, n, stdout) != n || fflush(stdout) != 0)
		s->failed = true;
}

static void print_timings(double load_ms, bool first, const q42_result *r,
			  const q42_request *rq, const q42_engine *e)
{
	fprintf(stderr,
		"q42run: timings: load_ms=%.3f tokenize_ms=%.3f prefill_ms=%.3f ttft_ms=%.3f"
		" prompt_tokens=%zu prefill_tok_s=%.2f decode_ms=%.3f decode_steps=%u"
		" decode_tok_s=%.2f generated=%zu stop=%s",
		load_ms, r->tokenize_ms, r->prefill_ms,
		(first ? load_ms : 0.0) + r->tokenize_ms + r->prefill_ms, r->prompt.n,
		r->prefill_ms > 0 ? (double)r->prompt.n / (r->prefill_ms / 1e3) : 0.0, r->decode_ms,
		r->n_decode, r->decode_ms > 0 ? (double)r->n_decode / (r->decode_ms / 1e3) : 0.0,
		r->out.n, q42_stop_name(r->stop));
	if (rq->sieve != NULL)
		fprintf(stderr, " sieve_ms=%.3f", r->sieve_ms);
	if (rq->sentinel != NULL)
		fprintf(stderr, " interventions=%zu", r->n_iv);
	fprintf(stderr, " backend=%s", q42_backend_name(q42_engine_backend(e)));
	if (q42_engine_backend(e) != Q42_BACKEND_CPU)
		fprintf(stderr, " device_ms=%.3f device=\"%s\"", q42_engine_device_ms(e),
			q42_engine_device_name(e));
	fputc('\n', stderr);
}

/* The sieve of --sieve or --grammar: its grammar, its name and digest. */
struct sieve_setup {
	q42_grammar *g;
	q42_sieve *sv;
	const char *name;
	char sha[Q42_SHA256_HEX_LEN + 1];
};

static int sieve_open(const struct opts *o, const q42_tokenizer *tok, struct sieve_setup *ss)
{
	q42_map m = {0};
	q42_err err = {0};
	const char *src;
	size_t n;
	uint8_t d[Q42_SHA256_LEN];
	int rc, ex = EXIT_OK;

	m.fd = -1;
	if (o->grammar != NULL) {
		rc = q42_map_open(&m, o->grammar, 0, &err);
		if (rc != Q42_OK) {
			fprintf(stderr, "q42run: --grammar: %s\n", err.msg);
			return rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_IO;
		}
		if (m.size > Q42_GRAMMAR_MAX_BYTES) {
			fprintf(stderr, "q42run: --grammar: %s: %llu bytes, the limit is %u\n", o->grammar,
				(unsigned long long)m.size, Q42_GRAMMAR_MAX_BYTES);
			ex = EXIT_USAGE;
			goto done;
		}
		src = m.data ? (const char *)m.data : "";
		n = (size_t)m.size;
		ss->name = o->grammar;
	} else {
		src = q42_grammar_quin_source();
		n = strlen(src);
		ss->name = "quin";
	}
	rc = q42_sha256(src, n, d, &err);
	if (rc == Q42_OK)
		rc = q42_grammar_compile(&ss->g, src, n, ss->name, &err);
	if (rc == Q42_OK)
		rc = q42_sieve_open(&ss->sv, ss->g, tok, &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: --grammar: %s\n", err.msg);
		ex = rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_USAGE;
		goto done;
	}
	q42_hex_encode(d, sizeof d, ss->sha);
done:
	if (m.path != NULL)
		q42_map_close(&m);
	return ex;
}

int run_generate(const struct opts *o, q42_mount *m, struct input *in, double t_start)
{
	q42_engine *e = NULL;
	q42_sampler *s = NULL;
	const q42_model_ident *ident = NULL;
	q42_err err = {0};
	q42_buf rec;
	struct sink sink = {false};
	const char *p;
	size_t n;
	uint64_t idx = 0;
	double load_ms;
	q42_sentinel *sen = NULL;
	struct sieve_setup ss = {0};
	q42_prefix *pre = NULL;
	struct chat chat = {0};
	int rc, ex = EXIT_OK;

	q42_buf_init(&rec);
	if (o->sentinel != NULL) {
		rc = q42_sentinel_open(&sen, o->sentinel, q42_mount_tokenizer(m), &err);
		if (rc != Q42_OK) {
			fprintf(stderr, "q42run: --sentinel: %s\n", err.msg);
			ex = rc == Q42_EIO ? EXIT_IO : rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_USAGE;
			goto done;
		}
	}
	if (o->sieve != NULL || o->grammar != NULL) {
		ex = sieve_open(o, q42_mount_tokenizer(m), &ss);
		if (ex != EXIT_OK)
			goto done;
	}
	ex = engine_open(o, m, &e);
	if (ex != EXIT_OK)
		goto done;
	rc = q42_sampler_open(&s, &o->sp, q42_engine_n_vocab(e), &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: %s\n", err.msg);
		ex = rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_USAGE;
		goto done;
	}
	ex = requests_open(o, m, e, &ident, &pre, &chat);
	if (ex != EXIT_OK)
		goto done;
	load_ms = now_ms() - t_start;

	while (ex == EXIT_OK && input_next(in, o->lines, &p, &n) &&
	       (ex = chat_prompt(o, &chat, &p, &n)) == EXIT_OK) {
		q42_request rq = {
			.prompt = p, .prompt_len = n,
			.add_special = !o->no_bos, .parse_special = !o->no_special,
			.strict = o->strict, .max_tokens = o->max_tokens, .deadline_s = o->deadline,
			.stops = o->stops, .n_stops = o->n_stops,
			.on_text = o->record ? NULL : on_text, .ud = &sink,
			.sentinel = sen, .sieve = ss.sv, .parse_quin = o->sieve != NULL,
			.ignore_eos = o->ignore_eos, .prefix = pre,
		};
		q42_result r;
		q42_result_init(&r);
		rc = q42_generate(e, s, q42_mount_tokenizer(m), &rq, &r, &err);
		if (rc != Q42_OK) {
			fprintf(stderr, "q42run: request %llu: %s\n", (unsigned long long)idx, err.msg);
			ex = rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_REQUEST;
		} else if (o->record) {
			q42_record_info ri = {
				.program = "q42run", .version = Q42_VERSION, .request_index = idx,
				.load_ms = load_ms, .model_path = o->model, .ident = ident,
				.engine = e, .sampling = &o->sp, .request = &rq, .result = &r,
				.sieve_name = ss.sv ? ss.name : NULL, .sieve_sha256 = ss.sha,
				.sieve_states = ss.g ? q42_grammar_n_states(ss.g) : 0,
				.intent = o->intent, .scope = o->scope, .record_prompt = o->record_prompt,
			};
			q42_buf_reset(&rec);
			rc = q42_record_append(&rec, &ri, &err);
			if (rc != Q42_OK) {
				fprintf(stderr, "q42run: %s\n", err.msg);
				ex = EXIT_NOMEM;
			} else {
				ex = write_out(rec.data, rec.len);
			}
		} else if (o->lines || o->jsonl) {
			on_text(&sink, "\n", 1);
		}
		/* a misaligned sieve still reports what it cost */
		if (o->timings && (rc == Q42_OK || (ss.sv != NULL && r.decode_ms > 0)))
			print_timings(load_ms, idx == 0, &r, &rq, e);
		if (sink.failed)
			ex = EXIT_IO;
		q42_result_free(&r);
		idx++;
	}
	if (in->failed && ex == EXIT_OK)
		ex = EXIT_REQUEST;
	ex = reuse_close(o, m, e, pre, ex);
	pre = NULL;
done:
	chat_close(&chat);
	q42_prefix_close(pre);
	q42_buf_free(&rec);
	q42_sampler_close(s);
	q42_engine_close(e);
	q42_sentinel_close(sen);
	q42_sieve_close(ss.sv);
	q42_grammar_free(ss.g);
	return ex;
}
