/* q42_record.c -- building q42-record/1 objects with jansson.
 *
 * Field names, types and meanings are fixed by q42-record(5); a change here
 * is a change of that page (and, when incompatible, of the schema
 * version). Strings handed to jansson are valid UTF-8 by construction
 * (generated text is sanitized by the request loop, paths are sanitized
 * here) because JSON text must be.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "run/q42_record.h"
#include "common/q42_utf8.h"
#include "common/q42_types.h"

uint64_t q42_peak_rss_bytes(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0 || ru.ru_maxrss < 0)
		return 0;
	return (uint64_t)ru.ru_maxrss * 1024u;
}

/* smaps_rollup sums every mapping's AnonHugePages line (Linux 4.14); the
 * cap keeps the kB -> bytes product from overflowing. */
bool q42_anon_huge_bytes(uint64_t *out)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	char line[256];
	bool ok = false;
	if (f == NULL)
		return false;
	while (!ok && fgets(line, sizeof line, f) != NULL) {
		unsigned long long kb;
		if (sscanf(line, "AnonHugePages: %llu kB", &kb) == 1 && kb <= UINT64_MAX / 1024u) {
			*out = (uint64_t)kb * 1024u;
			ok = true;
		}
	}
	fclose(f);
	return ok;
}

/* A float setting as the short decimal a user would have typed. */
static json_t *jfloat(float v)
{
	char b[32];
	snprintf(b, sizeof b, "%.7g", (double)v);
	return json_real(strtod(b, NULL));
}

static json_t *jms(double v)
{
	return json_real(round(v * 1000.0) / 1000.0);
}

static json_t *jstrn_lossy(const char *s, size_t n)
{
	json_t *j;
	q42_buf b;
	if (q42_utf8_check((const uint8_t *)s, n) == n)
		return json_stringn(s, n);
	q42_buf_init(&b);
	q42_utf8_sanitize(&b, (const uint8_t *)s, n, true, NULL);
	j = b.failed ? NULL : json_stringn((const char *)b.data, b.len);
	q42_buf_free(&b);
	return j;
}

static json_t *jstr_lossy(const char *s)
{
	return jstrn_lossy(s, strlen(s));
}

static json_t *jids(const q42_tokens *t)
{
	json_t *a = json_array();
	for (size_t i = 0; a != NULL && i < t->n; i++)
		if (json_array_append_new(a, json_integer(t->ids[i])) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *jrate(double n, double ms)
{
	return ms > 0.0 ? json_real(round(n / (ms / 1e3) * 100.0) / 100.0) : json_null();
}

static json_t *jterm(const q42_term *t)
{
	json_t *o;
	const char *kind = t->kind == Q42_TERM_IRI ? "iri" : t->kind == Q42_TERM_BLANK ? "blank"
			   : t->kind == Q42_TERM_LITERAL ? "literal" : NULL;
	if (kind == NULL)
		return json_null();
	o = json_pack("{s:s, s:s%}", "kind", kind, "value", t->value, t->len);
	if (o != NULL && t->datatype != NULL)
		json_object_set_new(o, "datatype", json_string(t->datatype));
	if (o != NULL && t->lang != NULL)
		json_object_set_new(o, "lang", json_string(t->lang));
	return o;
}

/* The in-loop governance fields (q42-record(5): interventions, sentinel,
 * sieve, quin, quins, choices), appended after the base ones. */
static int add_governance(json_t *o, const q42_record_info *ri, q42_err *err)
{
	const q42_result *r = ri->result;
	const q42_request *rq = ri->request;
	json_t *iv = json_array();
	int bad = iv == NULL;

	for (size_t i = 0; !bad && i < r->n_iv; i++)
		bad |= json_array_append_new(iv, json_pack("{s:I, s:s, s:I, s:o}",
			"step", (json_int_t)r->iv[i].step,
			"rule", q42_rule_name((enum q42_rule)r->iv[i].rule),
			"denied", (json_int_t)r->iv[i].denied,
			"substitute", r->iv[i].substitute >= 0 ? json_integer(r->iv[i].substitute)
							       : json_null())) != 0;
	bad |= json_object_set_new(o, "interventions", iv) != 0;
	bad |= json_object_set_new(o, "sentinel", rq->sentinel == NULL ? json_null() :
		json_pack("{s:s, s:I, s:I}", "rules", q42_sentinel_rules(rq->sentinel),
			  "events", (json_int_t)r->sentinel_events,
			  "dropped", (json_int_t)r->sentinel_dropped)) != 0;
	bad |= json_object_set_new(o, "sieve", ri->sieve_name == NULL ? json_null() :
		json_pack("{s:o, s:s, s:I, s:o}", "grammar", jstr_lossy(ri->sieve_name),
			  "sha256", ri->sieve_sha256 ? ri->sieve_sha256 : "",
			  "states", (json_int_t)ri->sieve_states, "mask_ms", jms(r->sieve_ms))) != 0;
	if (r->has_quin) {
		q42_buf b;
		q42_buf_init(&b);
		bad |= !q42_quin_write(&b, &r->quin) || b.len == 0;
		if (!bad) {
			b.len--; /* the line end */
			bad |= json_object_set_new(o, "quin", json_pack("{s:o, s:o, s:o, s:o, s:o}",
				"subject", jterm(&r->quin.s), "predicate", jterm(&r->quin.p),
				"object", jterm(&r->quin.o), "graph", jterm(&r->quin.g),
				"provenance", jterm(&r->quin.prov))) != 0;
			bad |= json_object_set_new(o, "quins",
				json_pack("[s%]", (const char *)b.data, b.len)) != 0;
		}
		q42_buf_free(&b);
	}
	if (ri->choices != NULL) {
		json_t *opts = json_array();
		char digest[Q42_SHA256_HEX_LEN + 1];
		q42_hex_encode(r->prompt_sha256, sizeof r->prompt_sha256, digest);
		bad |= opts == NULL;
		for (uint32_t i = 0; !bad && i < ri->n_choices; i++) {
			const q42_choice *c = &ri->choices[i];
			bad |= json_array_append_new(opts, json_pack("{s:s%, s:o, s:f, s:f}",
				"option", c->text, c->len, "ids", jids(&c->ids),
				"loglik", c->loglik, "prob", c->prob)) != 0;
		}
		const q42_choice *best = &ri->choices[q42_choices_best(ri->choices, ri->n_choices)];
		bad |= json_object_set_new(o, "choices", json_pack("{s:s, s:s%, s:s, s:s, s:o, s:{s:s, s:s, s:s, s:s}}",
			"kind", q42_decision_kind_name((enum q42_decision_kind)ri->decision_kind),
			"answer", best->text, best->len,
			"model_sha256", ri->ident->sha256,
			"prompt_template_sha256", digest,
			"options", opts,
			"build", "program", ri->program, "version", ri->version,
			"isa", q42_isa_name(q42_engine_isa(ri->engine)),
			"arith", q42_arith_name(q42_engine_arith(ri->engine)))) != 0;
	}
	return bad ? q42_err_set(err, Q42_ENOMEM, "record: cannot build the JSON object") : Q42_OK;
}

/* model.lora: each adapter the engine applies (q42-record(5)), absent
 * when there is none. */
static int add_lora(json_t *model, const q42_engine *e, q42_err *err)
{
	json_t *a;
	if (q42_engine_n_lora(e) == 0)
		return Q42_OK;
	a = json_array();
	bool bad = a == NULL || json_object_set_new(model, "lora", a) != 0;
	for (uint32_t i = 0; !bad && i < q42_engine_n_lora(e); i++) {
		const q42_engine_lora *l = q42_engine_lora_at(e, i);
		bad = json_array_append_new(a, json_pack("{s:o, s:s, s:o, s:o}",
			"path", jstr_lossy(q42_lora_path(l->adapter)),
			"sha256", q42_lora_sha256(l->adapter),
			"scale", jfloat(l->scale),
			"alpha", jfloat(q42_lora_alpha(l->adapter)))) != 0;
	}
	return bad ? q42_err_set(err, Q42_ENOMEM, "record: cannot build the JSON object") : Q42_OK;
}

int q42_record_append(q42_buf *out, const q42_record_info *ri, q42_err *err)
{
	const q42_result *r = ri->result;
	const q42_request *rq = ri->request;
	const q42_sampling *sp = ri->sampling;
	const q42_engine *e = ri->engine;
	const q42_model_ident *id = ri->ident;
	char digest[Q42_SHA256_HEX_LEN + 1];
	json_t *o = NULL, *stops = NULL, *fb = NULL;
	char *line = NULL;
	int rc = Q42_OK;

	q42_hex_encode(r->prompt_sha256, sizeof r->prompt_sha256, digest);
	stops = json_array();
	for (uint32_t i = 0; stops != NULL && i < rq->n_stops; i++)
		json_array_append_new(stops, jstr_lossy(rq->stops[i]));
	fb = json_array();
	if (fb != NULL && (r->fallbacks & Q42_FALLBACK_PROMPT_UTF8)) {
		char d[96];
		snprintf(d, sizeof d, "%llu invalid prompt bytes replaced by U+FFFD",
			 (unsigned long long)r->prompt_replaced);
		json_array_append_new(fb, json_pack("{s:s, s:s}", "kind", "prompt_utf8", "detail", d));
	}
	if (fb != NULL && q42_engine_n_fallbacks(e) > 0)
		json_array_append_new(fb, json_pack("{s:s, s:o}", "kind", "backend_f16", "detail",
						    jstr_lossy(q42_engine_fallback_note(e))));

	o = json_pack(
		"{s:s, s:I, s:s%, s:s, s:{s:s, s:I, s:b, s:b}, s:{s:o, s:o},"
		" s:{s:I, s:I, s:I, s:I}, s:{s:o, s:o, s:o, s:o, s:o, s:o, s:I}, s:{s:I},"
		" s:{s:s, s:o, s:I, s:s, s:s?, s:s, s:I, s:I},"
		" s:{s:s, s:o, s:I, s:o, s:o, s:o, s:I, s:I},"
		" s:{s:I, s:f, s:o, s:I, s:I},"
		" s:{s:s, s:o, s:s, s:s, s:I, s:s, s:b},"
		" s:{s:s, s:s}, s:b, s:o, s:[]}",
		"schema", Q42_RECORD_SCHEMA,
		"request", (json_int_t)ri->request_index,
		"text", (const char *)r->text.data ? (const char *)r->text.data : "", r->text.len,
		"stop", q42_stop_name(r->stop),
		"prompt",
		"sha256", digest,
		"bytes", (json_int_t)rq->prompt_len,
		"add_special", rq->add_special,
		"parse_special", rq->parse_special,
		"tokens",
		"prompt", jids(&r->prompt),
		"generated", jids(&r->out),
		"counts",
		"prompt", (json_int_t)r->prompt.n,
		"generated", (json_int_t)r->out.n,
		"decode_steps", (json_int_t)r->n_decode,
		"text_replaced_bytes", (json_int_t)r->text_replaced,
		"timings",
		"load_ms", jms(ri->load_ms),
		"tokenize_ms", jms(r->tokenize_ms),
		"prefill_ms", jms(r->prefill_ms),
		"decode_ms", jms(r->decode_ms),
		"prefill_tok_s", jrate((double)r->prompt.n, r->prefill_ms),
		"decode_tok_s", jrate((double)r->n_decode, r->decode_ms),
		"prompt_reused", (json_int_t)r->n_reused,
		"memory",
		"peak_rss_bytes", (json_int_t)q42_peak_rss_bytes(),
		"model",
		"container", q42_source_kind_name(id->container),
		"path", jstr_lossy(ri->model_path),
		"size", (json_int_t)id->size,
		"sha256", id->sha256,
		"source_sha256", id->source_sha256[0] ? id->source_sha256 : NULL,
		"arch", q42_engine_arch(e)->name,
		"n_params", (json_int_t)q42_engine_n_params(e),
		"n_vocab", (json_int_t)q42_engine_n_vocab(e),
		"sampling",
		"mode", sp->temp > 0.0f ? "sample" : "greedy",
		"temp", jfloat(sp->temp),
		"top_k", (json_int_t)sp->top_k,
		"top_p", jfloat(sp->top_p),
		"min_p", jfloat(sp->min_p),
		"repeat_penalty", jfloat(sp->repeat_penalty),
		"repeat_last_n", (json_int_t)sp->repeat_last_n,
		"seed", (json_int_t)sp->seed,
		"limits",
		"max_tokens", (json_int_t)rq->max_tokens,
		"deadline_s", rq->deadline_s,
		"stop", stops ? stops : json_array(),
		"ctx", (json_int_t)q42_engine_n_ctx(e),
		"batch", (json_int_t)q42_engine_n_batch(e),
		"engine",
		"backend", q42_backend_name(q42_engine_backend(e)),
		"device", jstr_lossy(q42_engine_device_name(e)),
		"isa", q42_isa_name(q42_engine_isa(e)),
		"arith", q42_arith_name(q42_engine_arith(e)),
		"threads", (json_int_t)q42_engine_n_threads(e),
		"kv_type", q42_dtype_get(q42_engine_kv_type(e))->name,
		"flash_attn", q42_engine_flash_attn(e),
		"build",
		"program", ri->program,
		"version", ri->version,
		"strict", rq->strict,
		"fallbacks", fb ? fb : json_array(),
		"provenance");
	stops = NULL;
	fb = NULL;
	if (o == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "record: cannot build the JSON object");
		goto done;
	}
	/* What q42grd's gates read beside the text: the declared intent and
	 * scope (absent unless given), and (opt-in) the prompt itself for the
	 * egress gate; limits.ignore_eos only when it was asked for. */
	if ((ri->intent && json_object_set_new(o, "intent", jstr_lossy(ri->intent))) ||
	    (ri->scope && json_object_set_new(o, "scope", jstr_lossy(ri->scope))) ||
	    (ri->record_prompt &&
	     json_object_set_new(json_object_get(o, "prompt"), "text",
				 jstrn_lossy(ri->request->prompt, ri->request->prompt_len))) ||
	    (rq->ignore_eos &&
	     json_object_set_new(json_object_get(o, "limits"), "ignore_eos", json_true()))) {
		rc = q42_err_set(err, Q42_ENOMEM, "record: cannot build the JSON object");
		goto done;
	}
	rc = add_lora(json_object_get(o, "model"), e, err);
	if (rc != Q42_OK)
		goto done;
	rc = add_governance(o, ri, err);
	if (rc != Q42_OK)
		goto done;
	line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
	if (line == NULL || !q42_buf_append(out, line, strlen(line)) || !q42_buf_u8(out, '\n')) {
		rc = q42_err_set(err, Q42_ENOMEM, "record: out of memory");
		goto done;
	}
done:
	free(line);
	json_decref(o);
	return rc;
}
