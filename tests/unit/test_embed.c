/* test_embed.c -- the arithmetic on embedding vectors (run/q42_embed.h)
 * against values worked out by hand: MaxSim and cosine of small vectors
 * whose products are exact in binary, llama.cpp's normalisations, task
 * prefixes, and the ranking's order on ties and NaN.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include "run/q42_embed.h"

/* Query rows q1 = (1, 0, 0), q2 = (0, 0.5, 0.5); document rows
 * d1 = (0.5, 0.5, 0), d2 = (0, 0, 1), d3 = (-1, 0, 0.25).
 * q1: d1 0.5, d2 0, d3 -1 -> 0.5; q2: d1 0.25, d2 0.5, d3 0.125 -> 0.5;
 * MaxSim = 1. */
static void test_maxsim_by_hand(void **state)
{
	static const float q[] = {1, 0, 0, 0, 0.5f, 0.5f};
	static const float d[] = {0.5f, 0.5f, 0, 0, 0, 1, -1, 0, 0.25f};
	(void)state;
	assert_true(q42_embed_maxsim(q, 2, d, 3, 3) == 1.0f);
	/* the first document row alone: 0.5 + 0.25 */
	assert_true(q42_embed_maxsim(q, 2, d, 1, 3) == 0.75f);
	/* the third alone: -1 + 0.125 */
	assert_true(q42_embed_maxsim(q, 2, d + 6, 1, 3) == -0.875f);
	assert_true(q42_embed_maxsim(q, 2, d, 0, 3) == 0.0f);
	assert_true(q42_embed_dot(q + 3, d + 3, 3) == 0.5f);
}

/* (3, 4) . (4, 3) = 24, norms 5 and 5: 24/25 = 0.96. */
static void test_cosine_by_hand(void **state)
{
	static const float a[] = {3, 4}, b[] = {4, 3}, z[] = {0, 0};
	(void)state;
	assert_true(q42_embed_cosine(a, b, 2) == 0.96f);
	assert_true(q42_embed_cosine(a, a, 2) == 1.0f);
	assert_true(q42_embed_cosine(a, z, 2) == 0.0f);
}

static void test_normalize(void **state)
{
	static const float v[] = {3, -4};
	float o[2];
	(void)state;
	q42_embed_normalize(v, o, 2, Q42_EMBD_NORM_L2);
	assert_true(o[0] == 3.0f * (float)(1.0 / 5.0) && o[1] == -4.0f * (float)(1.0 / 5.0));
	q42_embed_normalize(v, o, 2, Q42_EMBD_NORM_TAXICAB);
	assert_true(o[0] == 3.0f * (float)(1.0 / 7.0));
	q42_embed_normalize(v, o, 2, Q42_EMBD_NORM_MAXABS);
	assert_true(o[1] == -4.0f * (float)(1.0 / (4.0 / 32760.0)));
	q42_embed_normalize(v, o, 2, Q42_EMBD_NORM_NONE);
	assert_true(o[0] == 3.0f && o[1] == -4.0f);
	/* p = 3: (27 + 64)^(1/3) */
	q42_embed_normalize(v, o, 2, 3);
	assert_true(o[0] == 3.0f * (float)(1.0 / pow(91.0, 1.0 / 3.0)));
	static const float z[] = {0, 0};
	q42_embed_normalize(z, o, 2, Q42_EMBD_NORM_L2);
	assert_true(o[0] == 0.0f && o[1] == 0.0f);
}

static void test_tasks(void **state)
{
	(void)state;
	assert_string_equal(q42_embed_task_prefix("retrieval_query"), "task: search result | query: ");
	assert_string_equal(q42_embed_task_prefix("retrieval_document"), "title: none | text: ");
	assert_string_equal(q42_embed_task_prefix("raw"), "");
	assert_null(q42_embed_task_prefix("retrieval"));
}

static void test_rank_ties(void **state)
{
	const float s[] = {0.5f, 0.9f, NAN, 0.5f, 0.9f, -1.0f};
	uint32_t o[6];
	(void)state;
	q42_embed_rank(s, 6, o);
	assert_int_equal(o[0], 1);
	assert_int_equal(o[1], 4);
	assert_int_equal(o[2], 0);
	assert_int_equal(o[3], 3);
	assert_int_equal(o[4], 5);
	assert_int_equal(o[5], 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maxsim_by_hand),
		cmocka_unit_test(test_cosine_by_hand),
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_tasks),
		cmocka_unit_test(test_rank_ties),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
