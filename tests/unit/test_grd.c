/* test_grd.c -- every q42grd gate blocks a record crafted to violate it,
 * and names itself in the verdict; passing, review and preflight paths.
 *
 * Records are hand-written q42-record/1 lines (q42-record(5)); prompt
 * digests are from `printf '...' | sha256sum` (coreutils), noted beside
 * each. The thermal gate reads a fake sysfs tree made in a temporary
 * directory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include "governance/q42_grd.h"

/* printf 'Once upon a time' | sha256sum */
#define PROMPT_SHA "e286222c229ec73b1bc520d88583191572ae0cbbaa66ea68053994a5e50ac87a"
/* printf 'mail bob@example.org now' | sha256sum */
#define MAIL_SHA "5988b1123f7b9f8be4a523d73eb9b6e56ea5f19af3cb62830a7507779d05de27"
#define MODEL_SHA "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d"

static const char *policy_json =
	"{\"schema\":\"q42-policy/1\",\"default_intent\":\"story\","
	"\"intents\":{\"story\":{\"max_generated_tokens\":3},"
	"\"kb\":{\"grounding\":true,\"structured\":true,\"shape\":\"person\",\"namespaces\":[\"http://ex.org/\"],"
	"\"scopes\":[\"http://ex.org/\"]},"
	"\"hot\":{\"critical\":true}},"
	"\"shapes\":{\"person\":{\"closed\":true,\"properties\":["
	"{\"predicate\":\"http://ex.org/name\",\"object\":\"literal\",\"max_count\":1},"
	"{\"predicate\":\"http://ex.org/knows\",\"object\":\"iri\"}]}},"
	"\"egress\":{\"patterns\":[{\"name\":\"aws-key\",\"regex\":\"AKIA[0-9A-Z]{16}\"},"
	"{\"name\":\"email\",\"regex\":\"[a-z]+@[a-z]+\\\\.org\",\"targets\":[\"prompt\"]}]},"
	"\"grounding\":{\"threshold\":1.0,\"review_threshold\":0.5},"
	"\"thermal\":{\"limit_c\":90}}";

static const char *facts_nq = "<http://ex.org/alice> <http://ex.org/name> \"Alice\" .\n"
			      "<http://ex.org/alice> <http://ex.org/knows> <http://ex.org/bob> .\n";

struct fx {
	q42_policy policy;
	q42_facts facts;
	q42_grd_config cfg;
	char sysroot[64];
};

static void write_file(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(s, f);
	fclose(f);
}

/* A fake sysfs with one zone at temp_mc (and optionally a critical trip). */
static void fake_zone(struct fx *fx, const char *temp, const char *trip)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/class", fx->sysroot);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/class/thermal", fx->sysroot);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/class/thermal/thermal_zone0", fx->sysroot);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/class/thermal/thermal_zone0/temp", fx->sysroot);
	write_file(p, temp);
	snprintf(p, sizeof(p), "%s/class/thermal/thermal_zone0/trip_point_0_type", fx->sysroot);
	write_file(p, trip ? "critical\n" : "passive\n");
	snprintf(p, sizeof(p), "%s/class/thermal/thermal_zone0/trip_point_0_temp", fx->sysroot);
	write_file(p, trip ? trip : "50000\n");
}

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	q42_err err = {0};
	assert_non_null(fx);
	if (q42_policy_parse(&fx->policy, policy_json, strlen(policy_json), "test", &err) != Q42_OK)
		fail_msg("%s", err.msg);
	q42_facts_init(&fx->facts);
	assert_int_equal(q42_facts_add(&fx->facts, facts_nq, strlen(facts_nq), "facts", &err), Q42_OK);
	snprintf(fx->sysroot, sizeof(fx->sysroot), "/tmp/q42grd-sys-XXXXXX");
	assert_non_null(mkdtemp(fx->sysroot));
	fx->cfg.policy = &fx->policy;
	fx->cfg.facts = &fx->facts;
	fx->cfg.sysfs_root = fx->sysroot; /* empty: no zones */
	fx->cfg.program = "q42grd";
	fx->cfg.version = "test";
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->sysroot);
	if (system(cmd) != 0)
		return -1;
	q42_policy_free(&fx->policy);
	q42_facts_free(&fx->facts);
	free(fx);
	return 0;
}

/* A record: text, generated ids, replaced bytes, and extra top-level fields. */
static char *record(const char *text, const char *gen_ids, int n_gen, int replaced, const char *extra)
{
	char *s = NULL;
	if (asprintf(&s,
		     "{\"schema\":\"q42-record/1\",\"request\":0,\"text\":\"%s\",\"stop\":\"eos\","
		     "\"prompt\":{\"sha256\":\"" PROMPT_SHA "\",\"bytes\":16},"
		     "\"tokens\":{\"prompt\":[1,403],\"generated\":[%s]},"
		     "\"counts\":{\"prompt\":2,\"generated\":%d,\"decode_steps\":1,\"text_replaced_bytes\":%d},"
		     "\"model\":{\"container\":\"gguf\",\"sha256\":\"" MODEL_SHA "\"},"
		     "\"provenance\":[]%s}",
		     text, gen_ids, n_gen, replaced, extra ? extra : "") < 0)
		fail_msg("asprintf");
	return s;
}

/* s with the first occurrence of from replaced by to (s is freed). */
static char *subst(char *s, const char *from, const char *to)
{
	const char *at = strstr(s, from);
	char *r = NULL;
	assert_non_null(at);
	if (asprintf(&r, "%.*s%s%s", (int)(at - s), s, to, at + strlen(from)) < 0)
		fail_msg("asprintf");
	free(s);
	return r;
}

/* Run the gates; return the parsed output line. */
static json_t *run(struct fx *fx, const char *line, q42_verdict *v)
{
	q42_buf out;
	q42_err err = {0};
	json_error_t je;
	q42_buf_init(&out);
	q42_verdict_init(v);
	if (q42_grd_check(&fx->cfg, line, strlen(line), 7, v, &out, &err) != Q42_OK)
		fail_msg("%s", err.msg);
	assert_true(out.len > 0 && out.data[out.len - 1] == '\n');
	assert_null(memchr(out.data, '\n', out.len - 1));
	json_t *o = json_loadb((const char *)out.data, out.len, 0, &je);
	if (!o)
		fail_msg("output is not JSON: %s", je.text);
	q42_buf_free(&out);
	return o;
}

/* Decision and gate named in the output line's verdict. */
static void expect(struct fx *fx, const char *line, const char *decision, const char *gate, const char *reason_part)
{
	q42_verdict v;
	json_t *o = run(fx, line, &v);
	json_t *vd = json_object_get(o, "verdict");
	const char *d = json_string_value(json_object_get(vd, "decision"));
	bool found = gate == NULL;
	size_t i;
	json_t *r;
	if (!d || strcmp(d, decision) != 0)
		fail_msg("decision %s, want %s: %s", d ? d : "(none)", decision, line);
	json_array_foreach(json_object_get(vd, "reasons"), i, r) {
		const char *g = json_string_value(json_object_get(r, "gate"));
		const char *t = json_string_value(json_object_get(r, "reason"));
		if (gate && g && strcmp(g, gate) == 0 && (!reason_part || (t && strstr(t, reason_part))))
			found = true;
	}
	json_array_foreach(json_object_get(vd, "gates"), i, r) {
		const char *g = json_string_value(json_object_get(r, "gate"));
		const char *res = json_string_value(json_object_get(r, "result"));
		if (gate && strcmp(decision, "block") == 0 && g && strcmp(g, gate) == 0)
			assert_string_equal(res, "fail");
	}
	if (!found) {
		char *s = json_dumps(vd, JSON_COMPACT);
		fail_msg("gate %s with [%s] not among the reasons: %s", gate, reason_part ? reason_part : "", s);
	}
	/* the gates are listed in their documented order */
	static const char *const order[] = {"record", "thermal", "intent", "egress", "output", "shape", "grounding"};
	assert_int_equal(json_array_size(json_object_get(vd, "gates")), 7);
	for (i = 0; i < 7; i++)
		assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(vd, "gates"), i), "gate")),
				    order[i]);
	json_decref(o);
	q42_verdict_free(&v);
}

static void test_pass_with_agent_quin(void **state)
{
	struct fx *fx = *state;
	q42_verdict v;
	char *line = record(", there was", "432,383,286", 3, 0, NULL);
	json_t *o = run(fx, line, &v);
	assert_int_equal(v.decision, Q42_DECISION_PASS);
	json_t *prov = json_object_get(o, "provenance");
	assert_int_equal(json_array_size(prov), 1);
	const char *q = json_string_value(json_object_get(json_array_get(prov, 0), "quin"));
	char want[512];
	snprintf(want, sizeof(want),
		 "<urn:q42:model:sha256:" MODEL_SHA "> <urn:q42:vocab:servesIntent> \"story\" <urn:q42:graph:agents> "
		 "<urn:q42:policy:sha256:%s> .", fx->policy.sha256);
	assert_string_equal(q, want);
	/* the record's own fields are untouched */
	assert_string_equal(json_string_value(json_object_get(o, "text")), ", there was");
	assert_string_equal(json_string_value(json_object_get(json_object_get(o, "verdict"), "intent")), "story");
	json_decref(o);
	q42_verdict_free(&v);
	free(line);
}

static void test_gate_record(void **state)
{
	struct fx *fx = *state;
	expect(fx, "not json", "block", "record", "not JSON");
	expect(fx, "[1,2]", "block", "record", "not a JSON object");
	expect(fx, "{\"schema\":\"q42-record/2\"}", "block", "record", "schema");
	expect(fx, "{\"schema\":\"q42-record/1\",\"schema\":\"q42-record/1\"}", "block", "record", "duplicate");
	/* the reject line of a non-record carries its line number */
	q42_verdict v;
	json_t *o = run(fx, "{{", &v);
	assert_int_equal(json_integer_value(json_object_get(o, "line")), 7);
	json_decref(o);
	q42_verdict_free(&v);
}

static void test_gate_thermal(void **state)
{
	struct fx *fx = *state;
	char *line = record("x", "5", 1, 0, NULL);
	char *hot = record("x", "5", 1, 0, ",\"intent\":\"hot\"");
	fake_zone(fx, "95000\n", NULL);
	expect(fx, line, "block", "thermal", "critical");
	expect(fx, hot, "pass", NULL, NULL); /* a critical intent still runs */
	fake_zone(fx, "70000\n", "65000\n");  /* below the limit, above its critical trip */
	expect(fx, line, "block", "thermal", "trip point");
	fake_zone(fx, "40000\n", "65000\n");
	expect(fx, line, "pass", NULL, NULL);
	free(line);
	free(hot);
}

static void test_gate_intent(void **state)
{
	struct fx *fx = *state;
	char *l1 = record("x", "5", 1, 0, ",\"intent\":\"nope\"");
	char *l2 = record("x", "5", 1, 0, ",\"intent\":\"kb\",\"quins\":[\"<http://ex.org/alice> <http://ex.org/name> \\\"Alice\\\" .\"]");
	char *l3 = record("x", "5", 1, 0,
			  ",\"intent\":\"kb\",\"scope\":\"http://ex.org/people\",\"quins\":[\"<http://other.org/x> <http://ex.org/name> \\\"X\\\" .\"]");
	char *l4 = record("x", "5", 1, 0, ",\"intent\":\"kb\",\"scope\":\"http://evil.org/\",\"quins\":[\"<http://ex.org/alice> <http://ex.org/name> \\\"Alice\\\" .\"]");
	char *l5 = record("x", "5", 1, 0, ",\"intent\":7");
	expect(fx, l1, "block", "intent", "not in the policy");
	expect(fx, l2, "block", "intent", "needs a declared scope");
	expect(fx, l3, "block", "intent", "outside the intent's namespaces");
	expect(fx, l4, "block", "intent", "not allowed");
	expect(fx, l5, "block", "intent", "not a string");
	fx->cfg.intent = "hot";
	char *l6 = record("x", "5", 1, 0, ",\"intent\":\"story\"");
	expect(fx, l6, "block", "intent", "the command line");
	fx->cfg.intent = NULL;
	free(l1), free(l2), free(l3), free(l4), free(l5), free(l6);
}

static void test_gate_egress(void **state)
{
	struct fx *fx = *state;
	char *l1 = record("key AKIAABCDEFGHIJKLMNOP here", "5", 1, 0, NULL);
	char *l2 = record("x", "5", 1, 0, NULL);
	/* prompt.text that is the prompt of the digest, holding an address */
	char *l3 = subst(record("x", "5", 1, 0, NULL), "\"sha256\":\"" PROMPT_SHA "\"",
			 "\"sha256\":\"" MAIL_SHA "\",\"text\":\"mail bob@example.org now\"");
	expect(fx, l1, "block", "egress", "text matches egress pattern \"aws-key\"");
	expect(fx, l3, "block", "egress", "prompt matches egress pattern \"email\"");
	/* the secret itself is never copied into the verdict */
	q42_verdict v;
	json_t *o = run(fx, l1, &v);
	char *s = json_dumps(json_object_get(o, "verdict"), 0);
	assert_null(strstr(s, "AKIAABCDEFGHIJKLMNOP"));
	free(s);
	json_decref(o);
	q42_verdict_free(&v);
	/* a prompt that is not the record's */
	fx->cfg.prompt = "Once upon a tim";
	fx->cfg.prompt_len = strlen(fx->cfg.prompt);
	expect(fx, l2, "block", "egress", "does not match the record's prompt.sha256");
	fx->cfg.prompt = "Once upon a time";
	fx->cfg.prompt_len = strlen(fx->cfg.prompt);
	expect(fx, l2, "pass", NULL, NULL);
	fx->cfg.prompt = NULL;
	free(l1), free(l2), free(l3);
}

static void test_gate_output(void **state)
{
	struct fx *fx = *state;
	char *l1 = record("x", "5,6,7,8", 4, 0, NULL);     /* ceiling 3 */
	char *l2 = record("x\\ufffd", "5", 1, 1, NULL);    /* repaired bytes */
	char *l3 = record("x", "5,6", 3, 0, NULL);         /* counts disagree */
	char *l4 = subst(record("x", "5", 1, 0, NULL), "\"provenance\"", "\"provenancX\"");
	char *l5 = subst(record("x", "5", 1, 0, NULL), MODEL_SHA, "Z" MODEL_SHA);
	expect(fx, l1, "block", "output", "exceed the ceiling 3");
	expect(fx, l2, "block", "output", "replaced");
	expect(fx, l3, "block", "output", "holds 2 ids");
	expect(fx, l4, "block", "output", "provenance array is missing");
	expect(fx, l5, "block", "output", "model.sha256");
	free(l1), free(l2), free(l3), free(l4), free(l5);
}

#define KB ",\"intent\":\"kb\",\"scope\":\"http://ex.org/kb\""

static void test_gate_shape(void **state)
{
	struct fx *fx = *state;
	char *l1 = record("x", "5", 1, 0, KB ",\"quins\":[\"<http://ex.org/alice> <http://ex.org/age> \\\"3\\\" .\"]");
	char *l2 = record("x", "5", 1, 0, KB ",\"quins\":[\"<http://ex.org/alice> <http://ex.org/name> .\"]");
	char *l3 = record("not quins", "5", 1, 0, KB);
	char *l4 = record("x", "5", 1, 0, KB ",\"quins\":[\"<http://ex.org/alice> <http://ex.org/name> \\\"Alice\\\" .\","
			  "\"<http://ex.org/alice> <http://ex.org/name> \\\"Al\\\" .\"]");
	char *l5 = record("x", "5", 1, 0, KB ",\"quins\":[\"<http://ex.org/alice> <http://ex.org/knows> \\\"Bob\\\" .\"]");
	char *l6 = record("", "5", 1, 0, KB);
	expect(fx, l1, "block", "shape", "not allowed by shape \"person\"");
	expect(fx, l2, "block", "shape", "line 1, column 44");
	expect(fx, l3, "block", "shape", "text is not quins: line 1, column 1");
	expect(fx, l4, "block", "shape", "2 value(s)");
	expect(fx, l5, "block", "shape", "may not be a literal");
	expect(fx, l6, "block", "shape", "claims no quins");
	/* structured output in the text itself, grounded: passes */
	char *ok = record("<http://ex.org/alice> <http://ex.org/knows> <http://ex.org/bob> .\\n", "5", 1, 0, KB);
	expect(fx, ok, "pass", NULL, NULL);
	free(l1), free(l2), free(l3), free(l4), free(l5), free(l6), free(ok);
}

static void test_gate_grounding(void **state)
{
	struct fx *fx = *state;
	char *half = record("x", "5", 1, 0, KB ",\"quins\":[\"<http://ex.org/alice> <http://ex.org/name> \\\"Alice\\\" .\","
			    "\"<http://ex.org/bob> <http://ex.org/knows> <http://ex.org/alice> .\"]");
	char *none = record("x", "5", 1, 0, KB ",\"quins\":[\"<http://ex.org/bob> <http://ex.org/name> \\\"Bob\\\" .\"]");
	char *lang = record("x", "5", 1, 0, KB ",\"quins\":[\"<http://ex.org/alice> <http://ex.org/name> \\\"Alice\\\"@en .\"]");
	expect(fx, half, "block", "grounding", "quin 2 not supported");
	expect(fx, none, "block", "grounding", "support 0.000 is below");
	expect(fx, lang, "block", "grounding", "not supported");
	fx->cfg.review = true;
	expect(fx, half, "review", NULL, NULL);        /* 0.5 >= review threshold */
	expect(fx, none, "block", "grounding", NULL);  /* absent support is never review */
	fx->cfg.review = false;
	fx->cfg.facts = NULL;
	expect(fx, half, "block", "grounding", "no facts were given");
	fx->cfg.facts = &fx->facts;
	free(half), free(none), free(lang);
}

static void test_every_reason(void **state)
{
	struct fx *fx = *state;
	q42_verdict v;
	char *line = record("AKIAABCDEFGHIJKLMNOP", "5,6,7,8", 4, 2, ",\"intent\":\"story\"");
	json_t *o = run(fx, line, &v);
	assert_int_equal(v.decision, Q42_DECISION_BLOCK);
	assert_int_equal(v.result[Q42_GATE_EGRESS], Q42_GATE_FAIL);
	assert_int_equal(v.result[Q42_GATE_OUTPUT], Q42_GATE_FAIL);
	assert_int_equal(v.n_reasons, 3); /* secret, ceiling, repaired bytes */
	/* a blocked record gets no agent quin */
	assert_int_equal(json_array_size(json_object_get(o, "provenance")), 0);
	json_decref(o);
	q42_verdict_free(&v);
	free(line);
}

static void test_preflight(void **state)
{
	struct fx *fx = *state;
	q42_verdict v;
	q42_buf out;
	q42_err err = {0};
	q42_verdict_init(&v);
	q42_buf_init(&out);
	fx->cfg.prompt = "mail bob@example.org now";
	fx->cfg.prompt_len = strlen(fx->cfg.prompt);
	assert_int_equal(q42_grd_preflight(&fx->cfg, &v, &out, &err), Q42_OK);
	assert_int_equal(v.decision, Q42_DECISION_BLOCK);
	assert_int_equal(v.result[Q42_GATE_EGRESS], Q42_GATE_FAIL);
	assert_non_null(strstr((const char *)out.data, "\"sha256\":\"" MAIL_SHA "\""));
	q42_buf_reset(&out);
	fx->cfg.prompt = "Once upon a time";
	fx->cfg.prompt_len = strlen(fx->cfg.prompt);
	fx->cfg.intent = "nope";
	assert_int_equal(q42_grd_preflight(&fx->cfg, &v, &out, &err), Q42_OK);
	assert_int_equal(v.decision, Q42_DECISION_BLOCK);
	assert_int_equal(v.result[Q42_GATE_INTENT], Q42_GATE_FAIL);
	fx->cfg.intent = NULL;
	assert_int_equal(q42_grd_preflight(&fx->cfg, &v, &out, &err), Q42_OK);
	assert_int_equal(v.decision, Q42_DECISION_PASS);
	fx->cfg.prompt = NULL;
	q42_buf_free(&out);
	q42_verdict_free(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pass_with_agent_quin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gate_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gate_thermal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gate_intent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gate_egress, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gate_output, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gate_shape, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gate_grounding, setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_reason, setup, teardown),
		cmocka_unit_test_setup_teardown(test_preflight, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
