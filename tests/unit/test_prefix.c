/* test_prefix.c -- the rule prefix reuse rests on (run/q42_prefix.h), on
 * checked-in models (tests/models) whose products round by the pass: a
 * prompt token's cache bytes follow from its class in its pass (the pass
 * has one token; the token is in a whole group of four from the pass's
 * start) and from what it reads, so passes that give every token the
 * same class give the same bytes; passes that change a class change them
 * (else these models could not show the rule). Then q42_prefix itself:
 * a prompt that reuses an earlier one's state gives the bytes of its
 * cold run (every position's cache state and the logits), for prompts
 * sharing 1 to 36 tokens, at batch 512, 7 and 5.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/q42_engine.h"
#include "engine/q42_mount.h"
#include "run/q42_prefix.h"

#define N 48u

/* Q4_K and Q2_K round by the group of four, F32 and BF16 by a pass of
 * one token; lfm2 keeps a convolution history, gemma3 a sliding window */
static const char *const models[] = {"e256-llama-q4_k_m.gguf", "e256-llama-q2_k.gguf",
				     "e256-llama-tied-bf16.gguf", "a64-gemma3-swa-f32.gguf",
				     "a64-lfm2-q8_0.gguf"};

struct fix {
	q42_mount *m;
	q42_engine *e;
	uint64_t pb;
	uint32_t n_vocab;
};

static bool open_model(const char *name, uint32_t n_batch, struct fix *f)
{
	const char *s = getenv("Q42_SRCDIR");
	char path[4096];
	q42_engine_opts eo = {0};
	q42_err err = {0};

	snprintf(path, sizeof path, "%s/tests/models/%s", s && *s ? s : ".", name);
	if (access(path, R_OK) != 0) {
		if (getenv("CI") && strcmp(getenv("CI"), "true") == 0)
			fail_msg("missing %s under CI=true", path);
		return false;
	}
	eo.n_threads = 2;
	eo.n_ctx = 2 * N;
	eo.n_batch = n_batch;
	eo.arith = q42_arith_resolve(Q42_ARITH_AUTO); /* q42run's default */
	assert_int_equal(q42_mount_open(&f->m, path, 0, &err), Q42_OK);
	assert_int_equal(q42_engine_open(&f->e, f->m, &eo, &err), Q42_OK);
	f->pb = q42_engine_state_pos_bytes(f->e);
	f->n_vocab = q42_engine_n_vocab(f->e);
	return true;
}

static void close_model(struct fix *f)
{
	q42_engine_close(f->e);
	q42_mount_close(f->m);
}

static void random_ids(int32_t *ids, uint32_t n, uint32_t n_vocab, uint32_t seed)
{
	for (uint32_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		ids[i] = (int32_t)((seed >> 8) % n_vocab);
	}
}

/* Evaluate ids from an empty cache in passes of the given lengths (a 0
 * ends the list); the state of all n positions into st, the logits into lg. */
static void eval_split(struct fix *f, const int32_t *ids, uint32_t n, const uint32_t *split, uint8_t *st,
		       float *lg)
{
	q42_err err = {0};
	uint32_t at = 0;
	q42_engine_reset(f->e);
	for (; *split != 0; at += *split++)
		assert_int_equal(q42_engine_eval(f->e, ids + at, *split, &err), Q42_OK);
	assert_int_equal(at, n);
	assert_int_equal(q42_engine_state_get(f->e, n, st, &err), Q42_OK);
	memcpy(lg, q42_engine_logits(f->e), f->n_vocab * sizeof *lg);
}

static void test_settled(void **state)
{
	static const uint32_t cases[][3] = {
		/* batch, n, settled */
		{512, 300, 300}, {512, 301, 300}, {512, 303, 300}, {512, 304, 304}, {512, 3, 0},
		{512, 512, 512}, {512, 515, 512}, {512, 516, 516}, {7, 20, 18}, {7, 21, 21},
		{7, 17, 14}, {8, 11, 8}, {8, 12, 12}, {3, 5, 3}, {1, 5, 5}, {5, 9, 9}, {5, 8, 5},
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		assert_int_equal(q42_prefix_settled(cases[i][0], cases[i][1]), cases[i][2]);
}

/* Whether a model's products round by the group of four under an
 * arithmetic (the llama.cpp CPU variant auto picks): which K-quant
 * products do depends on it. Measured on each: Q4_K and Q2_K under zen4
 * and icelake, Q4_K alone under haswell (AVX2 CPUs), Q2_K alone under
 * llamacpp (AMX CPUs). F32 and BF16 round by the one-token pass under
 * every one. */
static bool shows_groups(const char *model, enum q42_arith a)
{
	const bool q4_k = strstr(model, "q4_k") != NULL, q2_k = strstr(model, "q2_k") != NULL;
	switch (a) {
	case Q42_ARITH_ZEN4:
	case Q42_ARITH_ICELAKE: return q4_k || q2_k;
	case Q42_ARITH_HASWELL: return q4_k;
	default: return q2_k;
	}
}

static void test_pass_classes(void **state)
{
	/* each group: the first split, then splits with the same class for
	 * every token (same bytes), then after a 0 0 splits that change some
	 * class (the bytes of some model change) */
	static const uint32_t same[][12] = {
		/* one pass of 48, as at batch 512 */
		{48, 0}, {16, 32, 0}, {4, 44, 0}, {44, 4, 0}, {20, 8, 20, 0},
		/* batch 7: 7 x 6 then 6; warm starts 4 past a boundary */
		{7, 7, 7, 7, 7, 7, 6, 0}, {7, 7, 4, 3, 7, 7, 7, 6, 0}, {7, 7, 7, 7, 7, 7, 4, 2, 0},
	};
	static const uint32_t other[][12] = {
		{47, 1, 0},       /* a last pass of one token in place of 48 */
		{2, 46, 0},       /* groups of four shifted by two */
		{7, 7, 2, 5, 7, 7, 7, 6, 0}, /* batch 7 split 2 past a boundary */
	};
	int32_t ids[N];
	uint8_t *st0 = NULL, *st = NULL;
	float *lg0 = NULL, *lg = NULL;
	(void)state;
	for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++) {
		struct fix f;
		bool changed[sizeof other / sizeof other[0]] = {false};
		if (!open_model(models[mi], N, &f))
			continue;
		st0 = realloc(st0, N * f.pb);
		st = realloc(st, N * f.pb);
		lg0 = realloc(lg0, f.n_vocab * sizeof *lg0);
		lg = realloc(lg, f.n_vocab * sizeof *lg);
		assert_non_null(st0);
		assert_non_null(st);
		assert_non_null(lg0);
		assert_non_null(lg);
		random_ids(ids, N, f.n_vocab, 7 + (uint32_t)mi);
		for (size_t g = 0; g < sizeof same / sizeof same[0]; g++) {
			if (g == 0 || g == 5) { /* a group's first */
				eval_split(&f, ids, N, same[g], st0, lg0);
				continue;
			}
			eval_split(&f, ids, N, same[g], st, lg);
			if (memcmp(st0, st, N * f.pb) != 0 || memcmp(lg0, lg, f.n_vocab * sizeof *lg) != 0)
				fail_msg("%s: split %zu gives other bytes than its group's first", models[mi], g);
		}
		/* the one-pass reference again, against the class changes */
		eval_split(&f, ids, N, same[0], st0, lg0);
		for (size_t g = 0; g < 2; g++) {
			eval_split(&f, ids, N, other[g], st, lg);
			changed[g] = memcmp(st0, st, N * f.pb) != 0 || memcmp(lg0, lg, f.n_vocab * sizeof *lg) != 0;
		}
		eval_split(&f, ids, N, same[5], st0, lg0);
		eval_split(&f, ids, N, other[2], st, lg);
		changed[2] = memcmp(st0, st, N * f.pb) != 0;
		if (shows_groups(models[mi], q42_arith_resolve(Q42_ARITH_AUTO))) {
			assert_true(changed[1]);
			assert_true(changed[2]);
		}
		if (strstr(models[mi], "f32") || strstr(models[mi], "bf16"))
			assert_true(changed[0]);
		close_model(&f);
	}
	free(st0);
	free(st);
	free(lg0);
	free(lg);
}

/* ids[at..n) through the engine in the cold run's passes, as q42run
 * evaluates a prompt after q42_prefix_begin (lib/run/q42_generate.c) */
static void eval_from(struct fix *f, const int32_t *ids, uint32_t at, uint32_t n, uint32_t nb)
{
	q42_err err = {0};
	while (at < n) {
		const uint32_t end = (at / nb + 1) * nb < n ? (at / nb + 1) * nb : n;
		assert_int_equal(q42_engine_eval(f->e, ids + at, end - at, &err), Q42_OK);
		at = end;
	}
}

static void test_reuse_is_cold(void **state)
{
	static const uint32_t batches[] = {512, 7, 5};
	/* shared lengths at every offset from a boundary of these batches,
	 * and where the first warm pass would be one token */
	static const uint32_t shared[] = {1, 3, 4, 5, 7, 8, 9, 11, 14, 18, 22, 36};
	/* a group of four, a one-token pass, a convolution history */
	static const size_t use[] = {0, 2, 4};
	int32_t y[N], x[N + 8];
	(void)state;
	for (size_t ui = 0; ui < sizeof use / sizeof use[0]; ui++)
		for (size_t bi = 0; bi < sizeof batches / sizeof batches[0]; bi++) {
			const size_t mi = use[ui];
			struct fix f;
			q42_prefix *p = NULL;
			q42_err err = {0};
			uint8_t *cold, *warm;
			float *lg;
			if (!open_model(models[mi], batches[bi], &f))
				continue;
			cold = malloc((N + 8) * f.pb);
			warm = malloc((N + 8) * f.pb);
			lg = malloc(f.n_vocab * sizeof *lg);
			assert_non_null(cold);
			assert_non_null(warm);
			assert_non_null(lg);
			assert_int_equal(q42_prefix_open(&p, f.e, 0, &err), Q42_OK);
			random_ids(y, N, f.n_vocab, 11);
			for (size_t ci = 0; ci < sizeof shared / sizeof shared[0]; ci++)
				for (uint32_t k = 1; k <= 5; k += k == 1 ? 1 : 3) {
					/* y then x: x shares c tokens of y and has k more */
					const uint32_t c = shared[ci], ny = c + 5, nx = c + k;
					uint32_t from;
					memcpy(x, y, c * sizeof *x);
					random_ids(x + c, k, f.n_vocab, 1000 + c * 8 + k);
					if (x[c] == y[c])
						x[c] = (x[c] + 1) % (int32_t)f.n_vocab;
					assert_int_equal(q42_prefix_begin(p, y, ny, &from, &err), Q42_OK);
					eval_from(&f, y, from, ny, batches[bi]);
					assert_int_equal(q42_prefix_end(p, y, ny, &err), Q42_OK);
					assert_int_equal(q42_prefix_begin(p, x, nx, &from, &err), Q42_OK);
					/* at most four short of what x shares with y's
					 * settled positions, below x's last token */
					uint32_t cc = q42_prefix_settled(batches[bi], ny);
					cc = c < cc ? c : cc;
					cc = nx - 1 < cc ? nx - 1 : cc;
					assert_true(from <= cc && from + 4 >= cc);
					eval_from(&f, x, from, nx, batches[bi]);
					assert_int_equal(q42_prefix_end(p, x, nx, &err), Q42_OK);
					assert_int_equal(q42_engine_state_get(f.e, nx, warm, &err), Q42_OK);
					memcpy(lg, q42_engine_logits(f.e), f.n_vocab * sizeof *lg);
					q42_engine_reset(f.e);
					eval_from(&f, x, 0, nx, batches[bi]);
					assert_int_equal(q42_engine_state_get(f.e, nx, cold, &err), Q42_OK);
					if (memcmp(cold, warm, nx * f.pb) != 0 ||
					    memcmp(lg, q42_engine_logits(f.e), f.n_vocab * sizeof *lg) != 0)
						fail_msg("%s batch %u: %u shared, %u tokens, reused %u: not the cold bytes",
							 models[mi], batches[bi], c, nx, from);
					/* the live state is now the cold one's: begin finds it
					 * only through q42_prefix (no cache of copies), so forget
					 * what this reset did behind its back */
					q42_prefix_close(p);
					assert_int_equal(q42_prefix_open(&p, f.e, 0, &err), Q42_OK);
				}
			q42_prefix_close(p);
			free(cold);
			free(warm);
			free(lg);
			close_model(&f);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_settled),
		cmocka_unit_test(test_pass_classes),
		cmocka_unit_test(test_reuse_is_cold),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
