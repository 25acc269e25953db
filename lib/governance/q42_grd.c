/* q42_grd.c -- the gates of q42grd over one q42-record (jansson).
 *
 * Reads the record fields q42-record(5) defines plus the governance
 * fields q42grd(1) adds (intent, scope, quins, prompt.text), runs every
 * gate in order and writes the verdict into the record. Never copies a
 * matched egress secret into a reason (only the pattern's name), never
 * trusts a count it has not checked against the data, never prints.
 */
#include "governance/q42_grd.h"

#include <jansson.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/q42_utf8.h"
#include "formats/q42_digest.h"
#include "governance/q42_thermal.h"

void q42_verdict_init(q42_verdict *v)
{
	memset(v, 0, sizeof(*v));
}

void q42_verdict_free(q42_verdict *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n_reasons; i++)
		free(v->reasons[i].text);
	free(v->reasons);
	free(v->intent);
	free(v->scope);
	q42_verdict_init(v);
}

const char *q42_gate_name(enum q42_gate g)
{
	static const char *const names[Q42_GATE_COUNT] = {"record", "thermal", "intent", "egress",
							  "output", "shape", "grounding"};
	return (unsigned)g < Q42_GATE_COUNT ? names[g] : "?";
}

const char *q42_gate_result_name(enum q42_gate_result r)
{
	switch (r) {
	case Q42_GATE_SKIP: return "skip";
	case Q42_GATE_PASS: return "pass";
	case Q42_GATE_REVIEW: return "review";
	case Q42_GATE_FAIL: return "fail";
	}
	return "?";
}

const char *q42_decision_name(enum q42_decision d)
{
	switch (d) {
	case Q42_DECISION_PASS: return "pass";
	case Q42_DECISION_REVIEW: return "review";
	case Q42_DECISION_BLOCK: return "block";
	}
	return "?";
}

/* Everything one decision needs, so the gates share one cleanup path. */
struct job {
	const q42_grd_config *cfg;
	q42_verdict *v;
	bool nomem;
	json_t *root;           /* NULL when the line is no JSON object */
	const q42_intent *intent;
	const char *text;
	size_t text_len;
	const char *prompt;     /* prompt text, when known */
	size_t prompt_len;
	q42_quin *quins;
	size_t n_quins;
	char *quin_error;       /* why the claimed quins could not be read */
	bool preflight;
};

static void set_detail(struct job *j, enum q42_gate g, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_detail(struct job *j, enum q42_gate g, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(j->v->detail[g], sizeof(j->v->detail[g]), fmt, ap);
	va_end(ap);
}

static void add_reason(struct job *j, enum q42_gate g, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Fail gate g with a reason (a gate can collect several). */
static void add_reason(struct job *j, enum q42_gate g, const char *fmt, ...)
{
	q42_verdict *v = j->v;
	char buf[768];
	va_list ap;
	v->result[g] = Q42_GATE_FAIL;
	if (v->n_reasons >= Q42_GRD_MAX_REASONS) {
		v->reasons_dropped++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	q42_grd_reason *nr = realloc(v->reasons, (v->n_reasons + 1) * sizeof(*nr));
	if (!nr) {
		j->nomem = true;
		return;
	}
	v->reasons = nr;
	nr[v->n_reasons].gate = g;
	nr[v->n_reasons].text = strdup(buf);
	if (!nr[v->n_reasons].text) {
		j->nomem = true;
		return;
	}
	v->n_reasons++;
}

static bool is_hex64(const char *s)
{
	if (!s || strlen(s) != 64)
		return false;
	for (size_t i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* root.a.b as a string, or NULL. */
static const char *get_str(json_t *root, const char *a, const char *b)
{
	json_t *v = json_object_get(root, a);
	if (b)
		v = json_object_get(v, b);
	return json_string_value(v);
}

/* ---- gates --------------------------------------------------------- */

static void gate_thermal(struct job *j)
{
	const q42_policy *p = j->cfg->policy;
	q42_thermal_state st;
	q42_err e = {0};
	if (!p->thermal) {
		set_detail(j, Q42_GATE_THERMAL, "no thermal limit in the policy");
		return;
	}
	if (q42_thermal_read(&st, j->cfg->sysfs_root, (int64_t)(p->thermal_limit_c * 1000.0),
			     p->thermal_trip_points, &e) != Q42_OK) {
		add_reason(j, Q42_GATE_THERMAL, "cannot read the thermal state: %s", e.msg);
		return;
	}
	set_detail(j, Q42_GATE_THERMAL, "%s", st.detail);
	if (st.critical && !(j->intent && j->intent->critical)) {
		add_reason(j, Q42_GATE_THERMAL, "thermal state critical (%s); intent %s is not critical",
			   st.detail, j->v->intent ? j->v->intent : "(none)");
		return;
	}
	j->v->result[Q42_GATE_THERMAL] = Q42_GATE_PASS;
}

static bool scope_matches(const char *scope, const char *allowed)
{
	size_t n = strlen(allowed);
	if (strcmp(scope, allowed) == 0)
		return true;
	/* An entry ending in '/', '#' or ':' is a namespace: anything under it. */
	return n > 0 && (allowed[n - 1] == '/' || allowed[n - 1] == '#' || allowed[n - 1] == ':') &&
	       strncmp(scope, allowed, n) == 0;
}

static bool in_namespaces(const q42_intent *in, const q42_term *t)
{
	if (t->kind != Q42_TERM_IRI)
		return true;
	for (size_t i = 0; i < in->n_namespaces; i++)
		if (strncmp(t->value, in->namespaces[i], strlen(in->namespaces[i])) == 0)
			return true;
	return false;
}

/* Settle which intent and scope are in force; runs before every gate
 * because the thermal gate already needs the intent. */
static void resolve_intent(struct job *j)
{
	const q42_grd_config *cfg = j->cfg;
	const char *ri = j->root ? get_str(j->root, "intent", NULL) : NULL;
	const char *rs = j->root ? get_str(j->root, "scope", NULL) : NULL;
	const char *name = ri ? ri : cfg->intent;
	const char *scope = rs ? rs : cfg->scope;
	bool ok = true;
	if (j->root && json_object_get(j->root, "intent") && !ri)
		add_reason(j, Q42_GATE_INTENT, "record field intent is not a string"), ok = false;
	if (j->root && json_object_get(j->root, "scope") && !rs)
		add_reason(j, Q42_GATE_INTENT, "record field scope is not a string"), ok = false;
	if (ri && cfg->intent && strcmp(ri, cfg->intent) != 0)
		add_reason(j, Q42_GATE_INTENT, "record declares intent \"%.64s\", the command line \"%.64s\"",
			   ri, cfg->intent), ok = false;
	if (rs && cfg->scope && strcmp(rs, cfg->scope) != 0)
		add_reason(j, Q42_GATE_INTENT, "record declares scope \"%.128s\", the command line \"%.128s\"",
			   rs, cfg->scope), ok = false;
	if (!name)
		name = cfg->policy->default_intent;
	if (name && !(j->v->intent = strdup(name)))
		j->nomem = true;
	if (scope && !(j->v->scope = strdup(scope)))
		j->nomem = true;
	if (!name) {
		add_reason(j, Q42_GATE_INTENT, "no intent declared and the policy has no default_intent");
		return;
	}
	j->intent = q42_policy_intent(cfg->policy, name);
	if (!j->intent) {
		add_reason(j, Q42_GATE_INTENT, "intent \"%.64s\" is not in the policy", name);
		return;
	}
	if (j->intent->n_scopes > 0) {
		bool found = false;
		for (size_t i = 0; scope && i < j->intent->n_scopes; i++)
			found = found || scope_matches(scope, j->intent->scopes[i]);
		if (!scope)
			add_reason(j, Q42_GATE_INTENT, "intent \"%.64s\" needs a declared scope", name), ok = false;
		else if (!found)
			add_reason(j, Q42_GATE_INTENT, "scope \"%.128s\" is not allowed for intent \"%.64s\"",
				   scope, name), ok = false;
	}
	if (ok) {
		j->v->result[Q42_GATE_INTENT] = Q42_GATE_PASS;
		set_detail(j, Q42_GATE_INTENT, "intent %.64s%s%.100s", name, scope ? ", scope " : "",
			   scope ? scope : "");
	}
}

static void gate_intent_namespaces(struct job *j)
{
	const q42_intent *in = j->intent;
	if (!in || in->n_namespaces == 0)
		return;
	for (size_t i = 0; i < j->n_quins; i++) {
		const q42_quin *q = &j->quins[i];
		if (!in_namespaces(in, &q->s))
			add_reason(j, Q42_GATE_INTENT, "claimed quin %zu: subject <%.200s> is outside the intent's namespaces",
				   i + 1, q->s.value);
		if (!in_namespaces(in, &q->g))
			add_reason(j, Q42_GATE_INTENT, "claimed quin %zu: graph <%.200s> is outside the intent's namespaces",
				   i + 1, q->g.value);
	}
}

static bool regex_hit(const regex_t *re, const char *s, size_t n)
{
	regmatch_t m[1];
	m[0].rm_so = 0;
	m[0].rm_eo = (regoff_t)n;
	return regexec(re, s ? s : "", 1, m, REG_STARTEND) == 0;
}

static void gate_egress(struct job *j)
{
	const q42_policy *p = j->cfg->policy;
	const char *rec_prompt = NULL;
	json_t *pt = j->root ? json_object_get(json_object_get(j->root, "prompt"), "text") : NULL;
	bool checked = false;
	if (pt && !json_is_string(pt)) {
		add_reason(j, Q42_GATE_EGRESS, "record field prompt.text is not a string");
		return;
	}
	if (pt) {
		rec_prompt = json_string_value(pt);
		j->prompt = rec_prompt;
		j->prompt_len = json_string_length(pt);
	} else if (j->cfg->prompt) {
		j->prompt = j->cfg->prompt;
		j->prompt_len = j->cfg->prompt_len;
	}
	/* A prompt that is not the one the record was made from proves nothing. */
	if (j->prompt && j->root) {
		const char *want = get_str(j->root, "prompt", "sha256");
		uint8_t d[Q42_SHA256_LEN];
		char hex[Q42_SHA256_HEX_LEN + 1];
		q42_err e = {0};
		if (!want) {
			add_reason(j, Q42_GATE_EGRESS, "record has no prompt.sha256 to tie the prompt text to");
			return;
		}
		if (q42_sha256(j->prompt, j->prompt_len, d, &e) != Q42_OK) {
			add_reason(j, Q42_GATE_EGRESS, "%s", e.msg);
			return;
		}
		q42_hex_encode(d, Q42_SHA256_LEN, hex);
		if (strcmp(hex, want) != 0) {
			add_reason(j, Q42_GATE_EGRESS, "the %s prompt text does not match the record's prompt.sha256",
				   rec_prompt ? "record's" : "given");
			return;
		}
	}
	if (!j->prompt && p->egress_require_prompt) {
		add_reason(j, Q42_GATE_EGRESS, "the policy requires the prompt text (prompt.text in the record, or --prompt/--prompt-file)");
		return;
	}
	if (p->n_egress == 0) {
		set_detail(j, Q42_GATE_EGRESS, "no egress patterns in the policy");
		return;
	}
	for (size_t i = 0; i < p->n_egress; i++) {
		const q42_egress *eg = &p->egress[i];
		if ((eg->targets & Q42_EGRESS_PROMPT) && j->prompt) {
			checked = true;
			if (regex_hit(&eg->re, j->prompt, j->prompt_len))
				add_reason(j, Q42_GATE_EGRESS, "prompt matches egress pattern \"%.64s\"", eg->name);
		}
		if ((eg->targets & Q42_EGRESS_TEXT) && !j->preflight && j->text) {
			checked = true;
			if (regex_hit(&eg->re, j->text, j->text_len))
				add_reason(j, Q42_GATE_EGRESS, "text matches egress pattern \"%.64s\"", eg->name);
		}
	}
	if (j->v->result[Q42_GATE_EGRESS] != Q42_GATE_FAIL) {
		j->v->result[Q42_GATE_EGRESS] = checked ? Q42_GATE_PASS : Q42_GATE_SKIP;
		set_detail(j, Q42_GATE_EGRESS, "%zu pattern(s); prompt %s; text %s", p->n_egress,
			   j->prompt ? "checked" : "not available", j->preflight ? "not yet generated" : "checked");
	}
}

/* counts.<key> as a non-negative integer; -1 when absent or not one. */
static json_int_t get_count(json_t *root, const char *key)
{
	json_t *v = json_object_get(json_object_get(root, "counts"), key);
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -1;
	return json_integer_value(v);
}

/* An intent with "decision": the record must carry a typed decision's
 * receipt (q42-record(5), choices) that agrees with the record: the same
 * model and prompt digests, options with their token ids and
 * probabilities, the answer the most probable option, the build that
 * computed it; and, where the intent lists models, one of them. */
static void check_decision(struct job *j)
{
	const q42_intent *in = j->intent;
	json_t *c = json_object_get(j->root, "choices"), *opts = json_object_get(c, "options");
	const char *m = get_str(j->root, "choices", "model_sha256");
	const char *ans = get_str(j->root, "choices", "answer");
	json_t *b = json_object_get(c, "build");
	double best = -1.0;
	const char *best_opt = NULL;
	size_t i;
	json_t *o;

	if (!json_is_object(c)) {
		add_reason(j, Q42_GATE_OUTPUT, "intent \"%.64s\" takes decisions: the record has no choices receipt",
			   in->name);
		return;
	}
	if (!is_hex64(m) || !get_str(j->root, "model", "sha256") ||
	    strcmp(m, get_str(j->root, "model", "sha256")) != 0)
		add_reason(j, Q42_GATE_OUTPUT, "receipt: choices.model_sha256 is not model.sha256");
	if (!get_str(j->root, "choices", "prompt_template_sha256") || !get_str(j->root, "prompt", "sha256") ||
	    strcmp(get_str(j->root, "choices", "prompt_template_sha256"), get_str(j->root, "prompt", "sha256")) != 0)
		add_reason(j, Q42_GATE_OUTPUT, "receipt: choices.prompt_template_sha256 is not prompt.sha256");
	if (!json_is_string(json_object_get(b, "version")) || !json_is_string(json_object_get(b, "arith")) ||
	    !json_is_string(json_object_get(b, "isa")))
		add_reason(j, Q42_GATE_OUTPUT, "receipt: choices.build lacks version, arith or isa");
	if (!json_is_array(opts) || json_array_size(opts) < 2) {
		add_reason(j, Q42_GATE_OUTPUT, "receipt: choices.options is not an array of at least 2 options");
		return;
	}
	json_array_foreach(opts, i, o) {
		json_t *ids = json_object_get(o, "ids"), *p = json_object_get(o, "prob");
		const char *t = json_string_value(json_object_get(o, "option"));
		if (!t || !json_is_array(ids) || json_array_size(ids) == 0 || !json_is_number(p)) {
			add_reason(j, Q42_GATE_OUTPUT, "receipt: option %zu lacks its text, token ids or probability", i + 1);
			return;
		}
		if (json_number_value(p) > best) {
			best = json_number_value(p);
			best_opt = t;
		}
	}
	if (!ans || !best_opt || strcmp(ans, best_opt) != 0)
		add_reason(j, Q42_GATE_OUTPUT, "receipt: choices.answer is not the most probable option");
	if (in->n_decision_models > 0 && is_hex64(m)) {
		bool ok = false;
		for (size_t k = 0; k < in->n_decision_models && !ok; k++)
			ok = strcmp(in->decision_models[k], m) == 0;
		if (!ok)
			add_reason(j, Q42_GATE_OUTPUT, "receipt: model %.64s is not one of intent \"%.64s\"'s decision_models",
				   m, in->name);
	}
}

static void gate_output(struct job *j)
{
	json_t *r = j->root, *prov = json_object_get(r, "provenance");
	const q42_intent *in = j->intent;
	json_t *gen = json_object_get(json_object_get(r, "tokens"), "generated");
	json_int_t n_gen = get_count(r, "generated"), n_prompt = get_count(r, "prompt");
	json_int_t n_rep = get_count(r, "text_replaced_bytes");
	if (!is_hex64(get_str(r, "model", "sha256")))
		add_reason(j, Q42_GATE_OUTPUT, "no provenance: model.sha256 is missing or not 64 hex digits");
	if (!is_hex64(get_str(r, "prompt", "sha256")))
		add_reason(j, Q42_GATE_OUTPUT, "no provenance: prompt.sha256 is missing or not 64 hex digits");
	if (!json_is_array(prov))
		add_reason(j, Q42_GATE_OUTPUT, "no provenance: the provenance array is missing");
	if (n_gen < 0)
		add_reason(j, Q42_GATE_OUTPUT, "counts.generated is missing or not a non-negative integer");
	else if (json_is_array(gen) && json_array_size(gen) != (size_t)n_gen)
		add_reason(j, Q42_GATE_OUTPUT, "counts.generated is %lld but tokens.generated holds %zu ids",
			   (long long)n_gen, json_array_size(gen));
	else if (in && (uint64_t)n_gen > in->max_generated_tokens)
		add_reason(j, Q42_GATE_OUTPUT, "%lld generated tokens exceed the ceiling %llu of intent \"%.64s\"",
			   (long long)n_gen, (unsigned long long)in->max_generated_tokens, in->name);
	if (in && in->max_prompt_tokens != UINT64_MAX) {
		if (n_prompt < 0)
			add_reason(j, Q42_GATE_OUTPUT, "counts.prompt is missing or not a non-negative integer");
		else if ((uint64_t)n_prompt > in->max_prompt_tokens)
			add_reason(j, Q42_GATE_OUTPUT, "%lld prompt tokens exceed the ceiling %llu of intent \"%.64s\"",
				   (long long)n_prompt, (unsigned long long)in->max_prompt_tokens, in->name);
	}
	if (!j->text)
		add_reason(j, Q42_GATE_OUTPUT, "text is missing or not a string");
	else if (q42_utf8_check((const uint8_t *)j->text, j->text_len) != j->text_len ||
		 memchr(j->text, 0, j->text_len))
		add_reason(j, Q42_GATE_OUTPUT, "text is not valid UTF-8 without NUL");
	if (in && in->decision)
		check_decision(j);
	if (n_rep > 0 && !(in && in->allow_replacement))
		add_reason(j, Q42_GATE_OUTPUT, "text is not the generated bytes: %lld invalid UTF-8 byte(s) were replaced by U+FFFD",
			   (long long)n_rep);
	if (j->v->result[Q42_GATE_OUTPUT] != Q42_GATE_FAIL) {
		j->v->result[Q42_GATE_OUTPUT] = Q42_GATE_PASS;
		set_detail(j, Q42_GATE_OUTPUT, "%lld generated tokens, %zu text bytes", (long long)n_gen, j->text_len);
	}
}

/* Collect the claimed quins: the record's quins array, or for a
 * structured intent without one, the text itself. */
static void read_claims(struct job *j)
{
	json_t *arr = j->root ? json_object_get(j->root, "quins") : NULL;
	q42_err e = {0};
	char msg[600];
	if (arr) {
		size_t i;
		json_t *s;
		if (!json_is_array(arr) || json_array_size(arr) > Q42_GRD_MAX_QUINS) {
			snprintf(msg, sizeof(msg), "record field quins is not an array of at most %u strings",
				 Q42_GRD_MAX_QUINS);
			goto bad;
		}
		j->quins = calloc(json_array_size(arr) + 1, sizeof(*j->quins));
		if (!j->quins) {
			j->nomem = true;
			return;
		}
		json_array_foreach(arr, i, s) {
			if (!json_is_string(s)) {
				snprintf(msg, sizeof(msg), "quins[%zu] is not a string", i);
				goto bad;
			}
			if (q42_quin_parse(&j->quins[i], json_string_value(s), json_string_length(s),
					   Q42_SYNTAX_QUINS, &e) != Q42_OK) {
				snprintf(msg, sizeof(msg), "quins[%zu]: %s", i, e.msg);
				goto bad;
			}
			j->n_quins = i + 1;
		}
		return;
	}
	if (j->intent && j->intent->structured && j->text) {
		q42_quin_reader r;
		size_t cap = 0;
		bool eof = false;
		q42_quin_reader_init(&r, j->text, j->text_len, Q42_SYNTAX_QUINS);
		for (;;) {
			q42_quin q;
			if (q42_quin_reader_next(&r, &q, &eof, &e) != Q42_OK) {
				snprintf(msg, sizeof(msg), "text is not quins: %s", e.msg);
				goto bad;
			}
			if (eof)
				break;
			if (j->n_quins >= Q42_GRD_MAX_QUINS) {
				q42_quin_free(&q);
				snprintf(msg, sizeof(msg), "text holds more than %u quins", Q42_GRD_MAX_QUINS);
				goto bad;
			}
			if (j->n_quins == cap) {
				size_t nc = cap ? cap * 2 : 8;
				q42_quin *nq = realloc(j->quins, nc * sizeof(*nq));
				if (!nq) {
					q42_quin_free(&q);
					j->nomem = true;
					return;
				}
				j->quins = nq;
				cap = nc;
			}
			j->quins[j->n_quins++] = q;
		}
	}
	return;
bad:
	if (!(j->quin_error = strdup(msg)))
		j->nomem = true;
}

static bool lang_allowed(const q42_shape_prop *sp, const char *lang)
{
	if (sp->n_languages == 0)
		return true;
	for (size_t i = 0; lang && i < sp->n_languages; i++)
		if (strcasecmp(lang, sp->languages[i]) == 0)
			return true;
	return false;
}

static const char *kind_name(enum q42_term_kind k)
{
	switch (k) {
	case Q42_TERM_IRI: return "an IRI";
	case Q42_TERM_BLANK: return "a blank node";
	case Q42_TERM_LITERAL: return "a literal";
	case Q42_TERM_NONE: return "nothing";
	}
	return "?";
}

/* Check one property constraint on one claimed quin. */
static void check_prop(struct job *j, size_t i, const q42_shape_prop *sp, const q42_quin *q)
{
	const q42_term *o = &q->o;
	if (!(sp->subject_kinds & (1u << q->s.kind)))
		add_reason(j, Q42_GATE_SHAPE, "quin %zu: subject of <%.200s> may not be %s", i + 1, sp->predicate,
			   kind_name(q->s.kind));
	if (!(sp->object_kinds & (1u << o->kind))) {
		add_reason(j, Q42_GATE_SHAPE, "quin %zu: object of <%.200s> may not be %s", i + 1, sp->predicate,
			   kind_name(o->kind));
		return;
	}
	if (o->kind == Q42_TERM_LITERAL) {
		if (sp->datatype && !(o->datatype && strcmp(o->datatype, sp->datatype) == 0))
			add_reason(j, Q42_GATE_SHAPE, "quin %zu: object of <%.200s> must have datatype <%.200s>",
				   i + 1, sp->predicate, sp->datatype);
		if (!lang_allowed(sp, o->lang))
			add_reason(j, Q42_GATE_SHAPE, "quin %zu: object of <%.200s> has language %.32s, not an allowed one",
				   i + 1, sp->predicate, o->lang ? o->lang : "(none)");
		if (o->len > sp->max_length)
			add_reason(j, Q42_GATE_SHAPE, "quin %zu: object of <%.200s> is %zu bytes, more than %llu",
				   i + 1, sp->predicate, o->len, (unsigned long long)sp->max_length);
		if (sp->pattern_src && !regex_hit(&sp->pattern, o->value, o->len))
			add_reason(j, Q42_GATE_SHAPE, "quin %zu: object of <%.200s> does not match /%.200s/", i + 1,
				   sp->predicate, sp->pattern_src);
	}
	if (o->kind == Q42_TERM_IRI && sp->object_namespace &&
	    strncmp(o->value, sp->object_namespace, strlen(sp->object_namespace)) != 0)
		add_reason(j, Q42_GATE_SHAPE, "quin %zu: object <%.200s> is outside <%.200s>", i + 1, o->value,
			   sp->object_namespace);
}

/* min_count/max_count: values of each constrained predicate per subject. */
static void check_counts(struct job *j, const q42_shape *sh)
{
	bool any = false;
	for (size_t pi = 0; pi < sh->n_props; pi++)
		any = any || sh->props[pi].min_count > 0 || sh->props[pi].max_count != UINT64_MAX;
	for (size_t i = 0; any && i < j->n_quins; i++) {
		const q42_term *s = &j->quins[i].s;
		bool first = true;
		for (size_t k = 0; k < i && first; k++)
			if (q42_term_equal(&j->quins[k].s, s))
				first = false;
		if (!first)
			continue;
		for (size_t pi = 0; pi < sh->n_props; pi++) {
			const q42_shape_prop *sp = &sh->props[pi];
			uint64_t n = 0;
			if (sp->min_count == 0 && sp->max_count == UINT64_MAX)
				continue;
			for (size_t k = i; k < j->n_quins; k++)
				if (strcmp(j->quins[k].p.value, sp->predicate) == 0 && q42_term_equal(&j->quins[k].s, s))
					n++;
			if (n < sp->min_count || n > sp->max_count) {
				q42_buf b;
				char max[32] = "any";
				if (sp->max_count != UINT64_MAX)
					snprintf(max, sizeof(max), "%llu", (unsigned long long)sp->max_count);
				q42_buf_init(&b);
				q42_term_write(&b, s);
				q42_buf_u8(&b, 0);
				add_reason(j, Q42_GATE_SHAPE, "subject %.200s has %llu value(s) of <%.200s>, allowed %llu..%s",
					   b.failed ? "?" : (const char *)b.data, (unsigned long long)n, sp->predicate,
					   (unsigned long long)sp->min_count, max);
				q42_buf_free(&b);
			}
		}
	}
}

static void gate_shape(struct job *j)
{
	const q42_intent *in = j->intent;
	const q42_shape *sh = in ? in->shape : NULL;
	if (j->quin_error) {
		add_reason(j, Q42_GATE_SHAPE, "%s", j->quin_error);
		return;
	}
	if (in && in->structured && j->n_quins == 0) {
		add_reason(j, Q42_GATE_SHAPE, "intent \"%.64s\" needs structured output and the record claims no quins",
			   in->name);
		return;
	}
	if (!sh) {
		if (j->n_quins > 0) {
			j->v->result[Q42_GATE_SHAPE] = Q42_GATE_PASS;
			set_detail(j, Q42_GATE_SHAPE, "%zu well-formed quin(s), no shape", j->n_quins);
		} else {
			set_detail(j, Q42_GATE_SHAPE, "no structured output and no shape");
		}
		return;
	}
	for (size_t i = 0; i < j->n_quins; i++) {
		const q42_quin *q = &j->quins[i];
		const q42_shape_prop *sp = NULL;
		for (size_t k = 0; k < sh->n_props && !sp; k++)
			if (strcmp(sh->props[k].predicate, q->p.value) == 0)
				sp = &sh->props[k];
		if (!sp) {
			if (sh->closed)
				add_reason(j, Q42_GATE_SHAPE, "quin %zu: predicate <%.200s> is not allowed by shape \"%.64s\"",
					   i + 1, q->p.value, sh->name);
			continue;
		}
		check_prop(j, i, sp, q);
	}
	check_counts(j, sh);
	if (j->v->result[Q42_GATE_SHAPE] != Q42_GATE_FAIL) {
		j->v->result[Q42_GATE_SHAPE] = Q42_GATE_PASS;
		set_detail(j, Q42_GATE_SHAPE, "%zu quin(s) conform to shape %.64s", j->n_quins, sh->name);
	}
}

static void gate_grounding(struct job *j)
{
	const q42_policy *p = j->cfg->policy;
	const q42_intent *in = j->intent;
	q42_verdict *v = j->v;
	if (!in || !in->grounding) {
		set_detail(j, Q42_GATE_GROUNDING, "grounding not required");
		return;
	}
	if (j->quin_error) {
		add_reason(j, Q42_GATE_GROUNDING, "claimed quins unreadable, nothing to ground");
		return;
	}
	if (j->n_quins == 0) {
		add_reason(j, Q42_GATE_GROUNDING, "intent \"%.64s\" requires grounding and the record claims no quins",
			   in->name);
		return;
	}
	if (!j->cfg->facts) {
		add_reason(j, Q42_GATE_GROUNDING, "intent \"%.64s\" requires grounding and no facts were given",
			   in->name);
		return;
	}
	v->claimed = j->n_quins;
	for (size_t i = 0; i < j->n_quins; i++)
		if (q42_facts_supports(j->cfg->facts, &j->quins[i]))
			v->supported++;
	double score = (double)v->supported / (double)v->claimed;
	set_detail(j, Q42_GATE_GROUNDING, "%llu of %llu claimed quin(s) supported (%.3f, threshold %.3f)",
		   (unsigned long long)v->supported, (unsigned long long)v->claimed, score, p->grounding_threshold);
	if (score >= p->grounding_threshold) {
		v->result[Q42_GATE_GROUNDING] = Q42_GATE_PASS;
		return;
	}
	if (score >= p->review_threshold && p->review_threshold < p->grounding_threshold && j->cfg->review) {
		v->result[Q42_GATE_GROUNDING] = Q42_GATE_REVIEW;
		return;
	}
	for (size_t i = 0; i < j->n_quins; i++) {
		if (q42_facts_supports(j->cfg->facts, &j->quins[i]))
			continue;
		q42_buf b;
		q42_buf_init(&b);
		q42_quin_key(&b, &j->quins[i], j->quins[i].g.kind != Q42_TERM_NONE);
		q42_buf_u8(&b, 0);
		add_reason(j, Q42_GATE_GROUNDING, "quin %zu not supported by the facts: %.400s", i + 1,
			   b.failed ? "?" : (const char *)b.data);
		q42_buf_free(&b);
	}
	add_reason(j, Q42_GATE_GROUNDING, "support %.3f is below the threshold %.3f%s", score,
		   p->grounding_threshold,
		   score >= p->review_threshold && p->review_threshold < p->grounding_threshold
			   ? " (would go to review with --review)" : "");
}

/* ---- output -------------------------------------------------------- */

static json_t *verdict_json(struct job *j)
{
	const q42_grd_config *cfg = j->cfg;
	q42_verdict *v = j->v;
	json_t *o = json_object(), *gates = json_array(), *reasons = json_array();
	bool ok = o && gates && reasons;
	for (int g = 0; ok && g < Q42_GATE_COUNT; g++) {
		json_t *e = json_pack("{s:s,s:s}", "gate", q42_gate_name((enum q42_gate)g), "result",
				      q42_gate_result_name(v->result[g]));
		ok = e && (!v->detail[g][0] || json_object_set_new(e, "detail", json_string(v->detail[g])) == 0) &&
		     json_array_append_new(gates, e) == 0;
	}
	for (size_t i = 0; ok && i < v->n_reasons; i++)
		ok = json_array_append_new(reasons, json_pack("{s:s,s:s}", "gate", q42_gate_name(v->reasons[i].gate),
							      "reason", v->reasons[i].text)) == 0;
	ok = ok && json_object_set_new(o, "decision", json_string(q42_decision_name(v->decision))) == 0 &&
	     json_object_set_new(o, "program", json_string(cfg->program ? cfg->program : "q42grd")) == 0 &&
	     json_object_set_new(o, "version", json_string(cfg->version ? cfg->version : "")) == 0 &&
	     json_object_set_new(o, "policy_sha256", json_string(cfg->policy->sha256)) == 0 &&
	     json_object_set_new(o, "intent", v->intent ? json_string(v->intent) : json_null()) == 0 &&
	     json_object_set_new(o, "scope", v->scope ? json_string(v->scope) : json_null()) == 0 &&
	     json_object_set_new(o, "gates", gates) == 0 && (gates = NULL, true) &&
	     json_object_set_new(o, "reasons", reasons) == 0 && (reasons = NULL, true) &&
	     json_object_set_new(o, "reasons_dropped", json_integer((json_int_t)v->reasons_dropped)) == 0 &&
	     json_object_set_new(o, "grounding", json_pack("{s:I,s:I}", "claimed", (json_int_t)v->claimed,
							   "supported", (json_int_t)v->supported)) == 0;
	json_decref(gates);
	json_decref(reasons);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The agent identity quin: this model served this intent, under this
 * policy (q42grd(1), PROVENANCE). */
static json_t *agent_entry(struct job *j)
{
	const char *model = get_str(j->root, "model", "sha256");
	char s[128], prov[128];
	q42_quin q;
	q42_buf b;
	json_t *e = NULL;
	if (!is_hex64(model) || !j->v->intent)
		return NULL;
	snprintf(s, sizeof(s), "%s%s", Q42_GRD_AGENT_PREFIX, model);
	snprintf(prov, sizeof(prov), "%s%s", Q42_GRD_POLICY_PREFIX, j->cfg->policy->sha256);
	q42_quin_init(&q);
	q42_buf_init(&b);
	if (q42_term_set(&q.s, Q42_TERM_IRI, s, strlen(s), NULL, NULL, NULL) == Q42_OK &&
	    q42_term_set(&q.p, Q42_TERM_IRI, Q42_GRD_AGENT_PREDICATE, strlen(Q42_GRD_AGENT_PREDICATE), NULL, NULL,
			 NULL) == Q42_OK &&
	    q42_term_set(&q.o, Q42_TERM_LITERAL, j->v->intent, strlen(j->v->intent), NULL, NULL, NULL) == Q42_OK &&
	    q42_term_set(&q.g, Q42_TERM_IRI, Q42_GRD_AGENT_GRAPH, strlen(Q42_GRD_AGENT_GRAPH), NULL, NULL, NULL) ==
		    Q42_OK &&
	    q42_term_set(&q.prov, Q42_TERM_IRI, prov, strlen(prov), NULL, NULL, NULL) == Q42_OK &&
	    q42_quin_write(&b, &q) && b.len > 0)
		e = json_pack("{s:s,s:s,s:s%}", "stage", j->cfg->program ? j->cfg->program : "q42grd", "version",
			      j->cfg->version ? j->cfg->version : "", "quin", (const char *)b.data, b.len - 1);
	q42_quin_free(&q);
	q42_buf_free(&b);
	return e;
}

static void decide(struct job *j)
{
	q42_verdict *v = j->v;
	v->decision = Q42_DECISION_PASS;
	for (int g = 0; g < Q42_GATE_COUNT; g++) {
		if (v->result[g] == Q42_GATE_FAIL)
			v->decision = Q42_DECISION_BLOCK;
		else if (v->result[g] == Q42_GATE_REVIEW && v->decision == Q42_DECISION_PASS)
			v->decision = Q42_DECISION_REVIEW;
	}
}

static int emit(struct job *j, json_t *obj, q42_buf *out, q42_err *err)
{
	char *s = json_dumps(obj, JSON_COMPACT | JSON_REAL_PRECISION(15));
	bool ok = s && q42_buf_append(out, s, strlen(s)) && q42_buf_u8(out, '\n');
	free(s);
	(void)j;
	return ok ? Q42_OK : q42_err_set(err, Q42_ENOMEM, "out of memory writing a decision");
}

static void job_free(struct job *j)
{
	for (size_t i = 0; i < j->n_quins; i++)
		q42_quin_free(&j->quins[i]);
	free(j->quins);
	free(j->quin_error);
	json_decref(j->root);
}

int q42_grd_check(const q42_grd_config *cfg, const void *line, size_t len, uint64_t line_no, q42_verdict *v,
		  q42_buf *out, q42_err *err)
{
	struct job j = {.cfg = cfg, .v = v};
	json_error_t je;
	json_t *vj = NULL, *obj = NULL;
	int rc = Q42_OK;
	q42_verdict_free(v);
	if (len > Q42_GRD_MAX_LINE)
		add_reason(&j, Q42_GATE_RECORD, "line %llu: longer than %u bytes", (unsigned long long)line_no,
			   Q42_GRD_MAX_LINE);
	else if (!(j.root = json_loadb(len ? line : "", len, JSON_REJECT_DUPLICATES, &je)))
		add_reason(&j, Q42_GATE_RECORD, "line %llu, column %d: not JSON: %s", (unsigned long long)line_no,
			   je.column, je.text);
	else if (!json_is_object(j.root))
		add_reason(&j, Q42_GATE_RECORD, "line %llu: not a JSON object", (unsigned long long)line_no);
	else {
		const char *schema = get_str(j.root, "schema", NULL);
		json_t *t = json_object_get(j.root, "text");
		if (!schema || strcmp(schema, "q42-record/1") != 0)
			add_reason(&j, Q42_GATE_RECORD, "line %llu: schema is not \"q42-record/1\"",
				   (unsigned long long)line_no);
		else
			v->result[Q42_GATE_RECORD] = Q42_GATE_PASS;
		if (json_is_string(t)) {
			j.text = json_string_value(t);
			j.text_len = json_string_length(t);
		}
	}
	if (j.root && !json_is_object(j.root)) {
		json_decref(j.root);
		j.root = NULL;
	}
	if (j.root) {
		resolve_intent(&j);
		read_claims(&j);
		gate_thermal(&j);
		gate_intent_namespaces(&j);
		gate_egress(&j);
		gate_output(&j);
		gate_shape(&j);
		gate_grounding(&j);
	}
	decide(&j);
	if (j.nomem) {
		rc = q42_err_set(err, Q42_ENOMEM, "out of memory deciding line %llu", (unsigned long long)line_no);
		goto done;
	}
	if (!(vj = verdict_json(&j)))
		goto nomem;
	if (j.root) {
		obj = json_incref(j.root);
		if (v->decision != Q42_DECISION_BLOCK) {
			json_t *prov = json_object_get(obj, "provenance");
			json_t *e = agent_entry(&j);
			if (!e || !json_is_array(prov) || json_array_append_new(prov, e) != 0)
				goto nomem;
		}
	} else {
		obj = json_pack("{s:I,s:I}", "line", (json_int_t)line_no, "bytes", (json_int_t)len);
		if (!obj)
			goto nomem;
	}
	if (json_object_set_new(obj, "verdict", vj) != 0) {
		vj = NULL;
		goto nomem;
	}
	vj = NULL;
	rc = emit(&j, obj, out, err);
	goto done;
nomem:
	rc = q42_err_set(err, Q42_ENOMEM, "out of memory deciding line %llu", (unsigned long long)line_no);
done:
	json_decref(vj);
	json_decref(obj);
	job_free(&j);
	return rc;
}

int q42_grd_preflight(const q42_grd_config *cfg, q42_verdict *v, q42_buf *out, q42_err *err)
{
	struct job j = {.cfg = cfg, .v = v, .preflight = true};
	uint8_t d[Q42_SHA256_LEN];
	char hex[Q42_SHA256_HEX_LEN + 1];
	json_t *obj = NULL, *vj = NULL;
	int rc;
	q42_verdict_free(v);
	if (!cfg->prompt)
		return q42_err_set(err, Q42_EARG, "preflight needs a prompt");
	if ((rc = q42_sha256(cfg->prompt, cfg->prompt_len, d, err)) != Q42_OK)
		return rc;
	q42_hex_encode(d, Q42_SHA256_LEN, hex);
	v->result[Q42_GATE_RECORD] = Q42_GATE_SKIP;
	resolve_intent(&j);
	gate_thermal(&j);
	gate_egress(&j);
	set_detail(&j, Q42_GATE_OUTPUT, "not checked before the run");
	set_detail(&j, Q42_GATE_SHAPE, "not checked before the run");
	set_detail(&j, Q42_GATE_GROUNDING, "not checked before the run");
	decide(&j);
	if (j.nomem || !(vj = verdict_json(&j)))
		goto nomem;
	obj = json_pack("{s:{s:s,s:I},s:o}", "preflight", "sha256", hex, "bytes", (json_int_t)cfg->prompt_len,
			"verdict", vj);
	vj = NULL;
	if (!obj)
		goto nomem;
	rc = emit(&j, obj, out, err);
	json_decref(obj);
	job_free(&j);
	return rc;
nomem:
	json_decref(vj);
	json_decref(obj);
	job_free(&j);
	return q42_err_set(err, Q42_ENOMEM, "out of memory in preflight");
}
