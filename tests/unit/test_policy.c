/* test_policy.c -- q42-policy/1 loading: what q42-policy(5) accepts and
 * every class of error it must refuse, with the JSON path in the message.
 * Policies here are written by hand from q42-policy(5).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "governance/q42_policy.h"

static int parse(q42_policy *p, const char *json, q42_err *err)
{
	return q42_policy_parse(p, json, strlen(json), "p.json", err);
}

static void test_full(void **state)
{
	const char *json =
		"{\"schema\":\"q42-policy/1\",\"default_intent\":\"kb\","
		"\"intents\":{\"story\":{\"description\":\"tales\",\"max_generated_tokens\":64,\"critical\":true},"
		"\"kb\":{\"scopes\":[\"https://ex.org/\"],\"namespaces\":[\"https://ex.org/\"],\"grounding\":true,"
		"\"structured\":true,\"shape\":\"person\",\"max_prompt_tokens\":100,\"allow_replacement\":true}},"
		"\"shapes\":{\"person\":{\"closed\":true,\"properties\":[{\"predicate\":\"https://ex.org/name\","
		"\"subject\":\"iri\",\"object\":\"literal\",\"datatype\":\"http://www.w3.org/2001/XMLSchema#string\","
		"\"languages\":[\"en\"],\"pattern\":\"^[A-Z]\",\"min_count\":1,\"max_count\":1,\"max_length\":40},"
		"{\"predicate\":\"https://ex.org/knows\",\"object\":\"node\",\"object_namespace\":\"https://ex.org/\"}]}},"
		"\"egress\":{\"require_prompt\":true,\"patterns\":[{\"name\":\"key\",\"regex\":\"AKIA[0-9A-Z]{16}\","
		"\"ignore_case\":true,\"targets\":[\"prompt\"]}]},"
		"\"grounding\":{\"threshold\":0.8,\"review_threshold\":0.5},\"thermal\":{\"limit_c\":85}}";
	q42_policy p;
	q42_err err = {0};
	(void)state;
	if (parse(&p, json, &err) != Q42_OK)
		fail_msg("%s", err.msg);
	assert_int_equal(p.n_intents, 2);
	const q42_intent *kb = q42_policy_intent(&p, "kb"), *st = q42_policy_intent(&p, "story");
	assert_non_null(kb);
	assert_non_null(st);
	assert_null(q42_policy_intent(&p, "nope"));
	assert_string_equal(p.default_intent, "kb");
	assert_true(kb->grounding && kb->structured && kb->allow_replacement && !kb->critical);
	assert_int_equal(kb->max_prompt_tokens, 100);
	assert_int_equal(kb->max_generated_tokens, UINT64_MAX);
	assert_true(st->critical);
	assert_int_equal(st->max_generated_tokens, 64);
	assert_ptr_equal(kb->shape, &p.shapes[0]);
	assert_int_equal(p.shapes[0].n_props, 2);
	assert_null(p.shapes[0].props[0].datatype); /* xsd:string is the plain literal */
	assert_int_equal(p.shapes[0].props[0].object_kinds, Q42_KINDS_LITERAL);
	assert_int_equal(p.shapes[0].props[1].object_kinds, Q42_KINDS_IRI | Q42_KINDS_BLANK);
	assert_int_equal(p.n_egress, 1);
	assert_int_equal(p.egress[0].targets, Q42_EGRESS_PROMPT);
	assert_true(p.egress_require_prompt);
	assert_true(regexec(&p.egress[0].re, "x akiaabcdefghijklmnop", 0, NULL, 0) == 0);
	assert_true(p.grounding_threshold == 0.8 && p.review_threshold == 0.5);
	assert_true(p.thermal && p.thermal_trip_points && p.thermal_limit_c == 85);
	/* SHA-256 of the exact bytes: 64 lower-case hex digits */
	assert_int_equal(strlen(p.sha256), 64);
	q42_policy_free(&p);
}

static void test_minimal_defaults(void **state)
{
	q42_policy p;
	q42_err err = {0};
	(void)state;
	assert_int_equal(parse(&p, "{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{}}}", &err), Q42_OK);
	assert_null(p.default_intent);
	assert_false(p.thermal);
	assert_int_equal(p.n_egress, 0);
	assert_true(p.grounding_threshold == 1.0 && p.review_threshold == 1.0);
	q42_policy_free(&p);
}

static const struct {
	const char *json;
	const char *msg;
} bad[] = {
	{"", "line 1"},
	{"[]", "expected a JSON object"},
	{"{\"intents\":{\"a\":{}}}", "schema"},
	{"{\"schema\":\"q42-policy/2\",\"intents\":{\"a\":{}}}", "schema"},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{}}", "intents: expected a non-empty object"},
	{"{\"schema\":\"q42-policy/1\",\"intent\":{}}", "unknown key \"intent\""},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{\"max_token\":5}}}", "intents.a: unknown key \"max_token\""},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{\"max_generated_tokens\":-1}}}",
	 "intents.a.max_generated_tokens: expected a non-negative integer"},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{\"grounding\":1}}}", "intents.a.grounding: expected true or false"},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{\"scopes\":[]}}}", "intents.a.scopes: expected a non-empty array"},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{\"shape\":\"s\"}}}", "intents.a.shape: names no shape"},
	/* the field named is the one at fault, not the last one read */
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{\"scopes\":[\"x\"],\"shape\":\"s\"}}}",
	 "intents.a.shape: names no shape"},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{\"decision\":true,\"decision_models\":[\"ab\"],"
	 "\"scopes\":[\"x\"]}}}",
	 "intents.a.decision_models: expected SHA-256 digests"},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{\"decision_models\":[\""
	 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"]}}}",
	 "intents.a.decision_models: needs \"decision\": true"},
	{"{\"schema\":\"q42-policy/1\",\"default_intent\":\"b\",\"intents\":{\"a\":{}}}", "default_intent: names no intent"},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{}},\"intents\":{\"b\":{}}}", "duplicate"},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{}},\"egress\":{\"patterns\":[{\"name\":\"x\",\"regex\":\"a(\"}]}}",
	 "egress.patterns[0].regex: regular expression does not compile"},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{}},\"egress\":{\"patterns\":[{\"regex\":\"a\"}]}}",
	 "egress.patterns[0].name: expected a string"},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{}},\"egress\":{\"patterns\":[{\"name\":\"x\",\"regex\":\"a\",\"targets\":[\"output\"]}]}}",
	 "targets are"},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{}},\"grounding\":{\"threshold\":1.5}}", "grounding.threshold: 1.5 is outside"},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{}},\"grounding\":{\"threshold\":0.5,\"review_threshold\":0.7}}",
	 "grounding.review_threshold: 0.7 is outside [0, 0.5]"},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{}},\"thermal\":{\"trip_points\":false}}", "could never fire"},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{}},\"shapes\":{\"s\":{\"properties\":[{\"object\":\"iri\"}]}}}",
	 "shapes.s.properties[0]: missing key \"predicate\""},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{}},\"shapes\":{\"s\":{\"properties\":[{\"predicate\":\"p:p\",\"subject\":\"literal\"}]}}}",
	 "a subject cannot be a literal"},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{}},\"shapes\":{\"s\":{\"properties\":[{\"predicate\":\"p:p\",\"object\":\"thing\"}]}}}",
	 "shapes.s.properties[0].object: expected \"iri\""},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{}},\"shapes\":{\"s\":{\"properties\":[{\"predicate\":\"p:p\",\"min_count\":2,\"max_count\":1}]}}}",
	 "min_count is greater than max_count"},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{}},\"shapes\":{\"s\":{\"properties\":[{\"predicate\":\"p:p\"},{\"predicate\":\"p:p\"}]}}}",
	 "constrained twice"},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{}},\"shapes\":{\"s\":{\"properties\":[{\"predicate\":\"p:p\",\"pattern\":\"[\"}]}}}",
	 "shapes.s.properties[0].pattern: regular expression does not compile"},
	/* patterns whose regcomp tree would explode (found by fuzz_policy) */
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{}},\"egress\":{\"patterns\":[{\"name\":\"x\",\"regex\":\"A[5-9]++++++++++++++++++++++++++++++++{16}\"}]}}",
	 "stacked quantifiers"},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{}},\"egress\":{\"patterns\":[{\"name\":\"x\",\"regex\":\"names@??+++++++++LF0}\"}]}}",
	 "stacked quantifiers"},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{}},\"egress\":{\"patterns\":[{\"name\":\"x\",\"regex\":\"((a{100}){100}){100}\"}]}}",
	 "too costly"},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{}},\"egress\":{\"patterns\":[{\"name\":\"x\",\"regex\":\"((a{,100}){,100}){,100}\"}]}}",
	 "too costly"},
	{"{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{}},\"egress\":{\"patterns\":[{\"name\":\"x\",\"regex\":\"((((((((((((((((((((((((((((((((((a))))))))))))))))))))))))))))))))))\"}]}}",
	 "too costly"},
};

static void test_regex_cost_ordinary(void **state)
{
	/* what real egress policies use stays well inside the cap */
	static const char *const ok[] = {
		"AKIA[0-9A-Z]{16}",
		"-----BEGIN [A-Z ]*PRIVATE KEY-----",
		"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\\\.[A-Za-z]{2,}",
		"(^|[^0-9])[0-9]{3}-[0-9]{2}-[0-9]{4}([^0-9]|$)",
		"[[:xdigit:]]{64}",
		"x{1,1000}",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char json[512];
		q42_policy p;
		q42_err err = {0};
		snprintf(json, sizeof(json),
			 "{\"schema\":\"q42-policy/1\",\"intents\":{\"a\":{}},\"egress\":{\"patterns\":[{\"name\":\"x\",\"regex\":\"%s\"}]}}",
			 ok[i]);
		if (q42_policy_parse(&p, json, strlen(json), "p.json", &err) != Q42_OK)
			fail_msg("pattern %s refused: %s", ok[i], err.msg);
		q42_policy_free(&p);
	}
}

static void test_bad(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		q42_policy p;
		q42_err err = {0};
		if (parse(&p, bad[i].json, &err) != Q42_EFORMAT)
			fail_msg("case %zu accepted: %s", i, bad[i].json);
		if (!strstr(err.msg, bad[i].msg) || strncmp(err.msg, "p.json: ", 8) != 0)
			fail_msg("case %zu: message [%s] lacks [%s]", i, err.msg, bad[i].msg);
	}
}

static void test_load_missing(void **state)
{
	q42_policy p;
	q42_err err = {0};
	(void)state;
	assert_int_not_equal(q42_policy_load(&p, "/nonexistent/q42/policy.json", &err), Q42_OK);
	assert_non_null(strstr(err.msg, "/nonexistent/q42/policy.json"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_minimal_defaults),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_regex_cost_ordinary),
		cmocka_unit_test(test_load_missing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
