/* test_choices.c -- option lists and option scores against llama.cpp.
 *
 * Expected log-likelihoods and option ids are tests/golden/engine/
 * choices.tsv, made from llama.cpp's logits by
 * tests/golden/engine/make_choices_golden.py (the exact llamapeer commands
 * are in that file). Probabilities are checked against the softmax of the
 * golden log-likelihoods. Tolerance 1e-4 (absolute, on log-likelihoods and
 * probabilities). Models: $Q42_TEST_MODELS (skipped when absent, a failure
 * under CI=true).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "run/q42_choices.h"
#include "run/q42_jsonl.h"
#include "engine/q42_engine.h"
#include "engine/q42_mount.h"

static void test_split(void **state)
{
	q42_choice *c = NULL;
	uint32_t n = 0;
	q42_err err = {0};
	(void)state;
	assert_int_equal(q42_choices_split("yes,no", 6, ',', &c, &n, &err), Q42_OK);
	assert_int_equal(n, 2);
	assert_int_equal(c[0].len, 3);
	assert_memory_equal(c[1].text, "no", 2);
	q42_choices_free(c, n);
	assert_int_equal(q42_choices_split("a b\r\nc\n", 7, '\n', &c, &n, &err), Q42_OK);
	assert_int_equal(n, 2);
	assert_int_equal(c[0].len, 3);
	assert_int_equal(c[1].len, 1);
	q42_choices_free(c, n);
	assert_int_equal(q42_choices_split("yes,,no", 7, ',', &c, &n, &err), Q42_EARG);
	assert_non_null(strstr(err.msg, "option 2 is empty"));
	assert_int_equal(q42_choices_split("yes,", 4, ',', &c, &n, &err), Q42_EARG);
	assert_int_equal(q42_choices_split("yes", 3, ',', &c, &n, &err), Q42_EARG);
	assert_int_equal(q42_choices_split("a,b,a", 5, ',', &c, &n, &err), Q42_EARG);
	assert_non_null(strstr(err.msg, "repeats option 1"));
	assert_int_equal(q42_choices_split("a,\xff", 3, ',', &c, &n, &err), Q42_EARG);
	assert_int_equal(q42_choices_split("", 0, '\n', &c, &n, &err), Q42_EARG);
}

struct row {
	char model[64], prompt[256], option[64];
	int32_t oids[16];
	uint32_t n_oids;
	double ll;
};

/* --jsonl lines (q42_jsonl.h): the two shapes, each refusal's reason, the
 * prompts built (a NUL is refused, as jansson refuses it), and a question's
 * decision over the line's. */
static void test_jsonl(void **state)
{
	static const struct {
		const char *line, *why;
	} bad[] = {
		{"{\"prompt\": \"a\"", "end of file"},
		{"[1]", "expected a JSON object"},
		{"{\"prompt\": \"a\", \"prompt\": \"b\"}", "duplicate object key"},
		{"{\"prompt\": 3}", "expected {\"prompt\": STRING}"},
		{"{\"prompt\": \"a\", \"prefix\": \"b\", \"questions\": [\"c\"]}", "expected {\"prompt\""},
		{"{\"prefix\": \"b\", \"questions\": []}", "expected {\"prompt\""},
		{"{\"prefix\": \"b\", \"questions\": [\"c\", {\"q\": \"d\"}]}", "question 2 is neither"},
		{"", "expected"},
		{"{\"prompt\": \"a\\u0000b\"}", "JSON_ALLOW_NUL"},
	};
	q42_jsonl_req *r;
	q42_err err;
	q42_buf text, store;
	q42_choice *ch;
	uint32_t n;
	enum q42_decision_kind k;
	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(q42_jsonl_parse(&r, bad[i].line, strlen(bad[i].line), &err), Q42_EFORMAT);
		assert_null(r);
		if (strstr(err.msg, bad[i].why) == NULL)
			fail_msg("%s: %s", bad[i].line, err.msg);
	}
	q42_buf_init(&text);
	q42_buf_init(&store);
	static const char one[] = "{\"prompt\": \"a\\u00e9b\", \"kind\": \"yesno\"}";
	assert_int_equal(q42_jsonl_parse(&r, one, sizeof one - 1, &err), Q42_OK);
	assert_int_equal(q42_jsonl_count(r), 1);
	assert_int_equal(q42_jsonl_prompt(r, 0, &text, &err), Q42_OK);
	assert_int_equal(text.len, 4);
	assert_memory_equal(text.data, "a\xc3\xa9" "b", 4);
	assert_true(q42_jsonl_has_decision(r, 0));
	assert_int_equal(q42_jsonl_decision(r, 0, &store, &ch, &n, &k, &err), Q42_OK);
	assert_int_equal(k, Q42_DECISION_YESNO);
	assert_int_equal(n, 2);
	q42_choices_free(ch, n);
	q42_jsonl_free(r);

	static const char fork[] =
		"{\"prefix\": \"P \", \"kind\": \"score\", \"min\": 1, \"max\": 3, \"questions\": [\"q1\", "
		"{\"question\": \"q2\", \"kind\": \"choice\", \"options\": [\" x\", \" y\"]}, {\"question\": \"q3\"}]}";
	assert_int_equal(q42_jsonl_parse(&r, fork, sizeof fork - 1, &err), Q42_OK);
	assert_int_equal(q42_jsonl_count(r), 3);
	static const char *const want[] = {"P q1", "P q2", "P q3"};
	static const enum q42_decision_kind kinds[] = {Q42_DECISION_SCORE, Q42_DECISION_CHOICE, Q42_DECISION_SCORE};
	static const uint32_t counts[] = {3, 2, 3};
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(q42_jsonl_prompt(r, i, &text, &err), Q42_OK);
		assert_int_equal(text.len, strlen(want[i]));
		assert_memory_equal(text.data, want[i], text.len);
		assert_true(q42_jsonl_has_decision(r, i));
		assert_int_equal(q42_jsonl_decision(r, i, &store, &ch, &n, &k, &err), Q42_OK);
		assert_int_equal(k, kinds[i]);
		assert_int_equal(n, counts[i]);
		q42_choices_free(ch, n);
	}
	q42_jsonl_free(r);

	static const struct {
		const char *line, *why;
	} badk[] = {
		{"{\"prompt\": \"x\", \"kind\": \"maybe\"}", "\"kind\" must be"},
		{"{\"prompt\": \"x\", \"kind\": \"options\"}", "\"kind\" must be"},
		{"{\"prompt\": \"x\", \"kind\": \"yesno\", \"min\": 1}", "kind yesno takes no"},
		{"{\"prompt\": \"x\", \"kind\": \"score\", \"min\": 1, \"max\": 2.5}", "must be integers"},
		{"{\"prompt\": \"x\", \"kind\": \"score\", \"min\": 5, \"max\": 1}", "score range 5..1"},
		{"{\"prompt\": \"x\", \"kind\": \"score\", \"min\": -9000000000, \"max\": 9000000000}", "score range"},
		{"{\"prompt\": \"x\", \"kind\": \"choice\", \"options\": [\"a\", 1]}", "option 2 is not a string"},
		{"{\"prompt\": \"x\", \"kind\": \"choice\", \"options\": [\"a\", \"a\"]}", "option 2 repeats option 1"},
		{"{\"prompt\": \"x\", \"kind\": \"choice\", \"options\": [\"a\\nb\"]}", "line feed"},
	};
	for (size_t i = 0; i < sizeof badk / sizeof badk[0]; i++) {
		assert_int_equal(q42_jsonl_parse(&r, badk[i].line, strlen(badk[i].line), &err), Q42_OK);
		assert_int_equal(q42_jsonl_decision(r, 0, &store, &ch, &n, &k, &err), Q42_EARG);
		if (strstr(err.msg, badk[i].why) == NULL)
			fail_msg("%s: %s", badk[i].line, err.msg);
		q42_jsonl_free(r);
	}
	static const char plain[] = "{\"prompt\": \"x\"}";
	assert_int_equal(q42_jsonl_parse(&r, plain, sizeof plain - 1, &err), Q42_OK);
	assert_false(q42_jsonl_has_decision(r, 0));
	q42_jsonl_free(r);
	q42_buf_free(&text);
	q42_buf_free(&store);
}

static void test_golden(void **state)
{
	char path[4096], line[4096];
	struct row rows[32];
	uint32_t nr = 0, checked = 0;
	FILE *f;
	const char *md = getenv("Q42_TEST_MODELS");
	(void)state;
	snprintf(path, sizeof path, "%s/tests/golden/engine/choices.tsv",
		 getenv("Q42_SRCDIR") ? getenv("Q42_SRCDIR") : ".");
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof line, f) != NULL && nr < 32) {
		char *fl[6], *p = line;
		int k;
		if (line[0] == '#')
			continue;
		line[strcspn(line, "\n")] = '\0';
		for (k = 0; k < 6 && p != NULL; k++) {
			fl[k] = p;
			p = strchr(p, '\t');
			if (p != NULL)
				*p++ = '\0';
		}
		assert_int_equal(k, 6);
		struct row *r = &rows[nr++];
		snprintf(r->model, sizeof r->model, "%s", fl[0]);
		snprintf(r->prompt, sizeof r->prompt, "%s", fl[1]);
		snprintf(r->option, sizeof r->option, "%s", fl[2]);
		r->n_oids = 0;
		for (char *s = fl[4], *end;; s = end) {
			long v = strtol(s, &end, 10);
			if (end == s)
				break;
			r->oids[r->n_oids++] = (int32_t)v;
		}
		r->ll = strtod(fl[5], NULL);
	}
	fclose(f);
	assert_true(nr >= 6);

	/* group consecutive rows of one (model, prompt) */
	for (uint32_t a = 0; a < nr;) {
		uint32_t b = a;
		q42_mount *m = NULL;
		q42_engine *e = NULL;
		q42_engine_opts eo = {0};
		q42_err err = {0};
		q42_choice c[8];
		q42_result res;
		double mx = -INFINITY, sum = 0.0;
		while (b < nr && strcmp(rows[b].model, rows[a].model) == 0 &&
		       strcmp(rows[b].prompt, rows[a].prompt) == 0)
			b++;
		snprintf(path, sizeof path, "%s/%s", md && *md ? md : "../shared/models", rows[a].model);
		if (access(path, R_OK) != 0) {
			if (getenv("CI") && strcmp(getenv("CI"), "true") == 0)
				fail_msg("missing %s under CI=true", path);
			a = b;
			continue;
		}
		assert_int_equal(q42_mount_open(&m, path, 0, &err), Q42_OK);
		eo.n_threads = 1;
		assert_int_equal(q42_engine_open(&e, m, &eo, &err), Q42_OK);
		memset(c, 0, sizeof c);
		for (uint32_t i = a; i < b; i++) {
			c[i - a].text = rows[i].option;
			c[i - a].len = strlen(rows[i].option);
			if (rows[i].ll > mx)
				mx = rows[i].ll;
		}
		for (uint32_t i = a; i < b; i++)
			sum += exp(rows[i].ll - mx);
		q42_request rq = {.prompt = rows[a].prompt, .prompt_len = strlen(rows[a].prompt),
				  .add_special = true, .parse_special = true};
		q42_result_init(&res);
		assert_int_equal(q42_choices_score(e, q42_mount_tokenizer(m), &rq, c, b - a, &res, &err),
				 Q42_OK);
		for (uint32_t i = a; i < b; i++) {
			const q42_choice *x = &c[i - a];
			assert_int_equal(x->ids.n, rows[i].n_oids);
			for (uint32_t k = 0; k < rows[i].n_oids; k++)
				assert_int_equal(x->ids.ids[k], rows[i].oids[k]);
			if (fabs(x->loglik - rows[i].ll) > 1e-4)
				fail_msg("%s '%s' '%s': loglik %.9g, llama.cpp %.9g", rows[i].model,
					 rows[i].prompt, rows[i].option, x->loglik, rows[i].ll);
			if (fabs(x->prob - exp(rows[i].ll - mx) / sum) > 1e-4)
				fail_msg("%s '%s': probability %.9g", rows[i].model, rows[i].option, x->prob);
			checked++;
		}
		/* scoring leaves the cache at the prompt */
		assert_int_equal(q42_engine_n_past(e), res.prompt.n);
		q42_result_free(&res);
		for (uint32_t i = 0; i < b - a; i++)
			q42_tokens_free(&c[i].ids);
		q42_engine_close(e);
		q42_mount_close(m);
		a = b;
	}
	if (checked == 0)
		skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_jsonl),
		cmocka_unit_test(test_golden),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
