/* test_engine_golden.c -- the engine against llama.cpp: greedy tokens and
 * last-position logits.
 *
 * Expected values are tests/golden/engine/ (greedy.tsv, logits-*.txt) and,
 * for qwen3, phi3, gemma3 and lfm2, tests/golden/arch/ (the same files),
 * produced by llama.cpp through the llamapeer oracle; the exact commands
 * are in each folder's README and make_golden script. The tests feed the
 * golden prompt ids straight to the engine, so they check the engine alone
 * (the tokenizer has its own tests). Models: tests/models/ (checked in) and
 * $Q42_TEST_MODELS (shared; a missing one is skipped, or fails under
 * CI=true).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/q42_engine.h"
#include "engine/q42_mount.h"
#include "engine/q42_sample.h"
#include "formats/q42_gguf.h"
#include "formats/q42_p64.h"
#include "common/q42_types.h"

#define N_GEN 32
#define MAX_ROWS 192

typedef struct golden_row {
	char model[128];
	char prompt[256];
	int32_t pids[64];
	uint32_t n_pids;
	int32_t out[N_GEN];
	double gap[N_GEN];
	bool arch; /* from tests/golden/arch */
} golden_row;

static golden_row rows[MAX_ROWS];
static uint32_t n_rows;

static const char *env_or(const char *k, const char *d)
{
	const char *v = getenv(k);
	return v && *v ? v : d;
}

/* Path of a model named in the golden file; NULL (after skip) when a
 * shared model is absent. */
static bool model_path(const char *name, char *buf, size_t cap)
{
	if (strncmp(name, "e256-", 5) == 0 || strncmp(name, "a64-", 4) == 0 ||
	    strncmp(name, "a256-", 5) == 0)
		snprintf(buf, cap, "%s/tests/models/%s", env_or("Q42_SRCDIR", "."), name);
	else
		snprintf(buf, cap, "%s/%s", env_or("Q42_TEST_MODELS", "../shared/models"), name);
	if (access(buf, R_OK) == 0)
		return true;
	if (strcmp(env_or("CI", ""), "true") == 0)
		fail_msg("required model missing under CI=true: %s", buf);
	return false;
}

static uint32_t parse_ids(const char *s, int32_t *out, uint32_t cap)
{
	uint32_t n = 0;
	char *end;
	for (;;) {
		long v = strtol(s, &end, 10);
		if (end == s)
			break;
		if (n == cap)
			fail_msg("too many ids in golden file");
		out[n++] = (int32_t)v;
		s = end;
	}
	return n;
}

/* The rows of tests/golden/<dir>/greedy.tsv, appended to rows[]. */
static int load_golden_dir(const char *dir)
{
	char path[4096], line[8192];
	FILE *f;
	snprintf(path, sizeof path, "%s/tests/golden/%s/greedy.tsv", env_or("Q42_SRCDIR", "."), dir);
	f = fopen(path, "r");
	if (f == NULL) {
		fprintf(stderr, "cannot open %s\n", path);
		return -1;
	}
	while (fgets(line, sizeof line, f) != NULL) {
		char *field[5];
		golden_row *r;
		int nf = 0;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		line[strcspn(line, "\n")] = '\0';
		for (char *p = line; nf < 5; nf++) {
			field[nf] = p;
			p = strchr(p, '\t');
			if (p == NULL) {
				nf++;
				break;
			}
			*p++ = '\0';
		}
		if (nf != 5 || n_rows == MAX_ROWS) {
			fclose(f);
			return -1;
		}
		r = &rows[n_rows++];
		r->arch = strcmp(dir, "arch") == 0;
		snprintf(r->model, sizeof r->model, "%s", field[0]);
		snprintf(r->prompt, sizeof r->prompt, "%s", field[1]);
		r->n_pids = parse_ids(field[2], r->pids, 64);
		if (parse_ids(field[3], r->out, N_GEN) != N_GEN) {
			fclose(f);
			return -1;
		}
		char *s = field[4], *end;
		for (int k = 0; k < N_GEN; k++, s = end)
			r->gap[k] = strtod(s, &end);
	}
	fclose(f);
	return n_rows > 0 ? 0 : -1;
}

static int load_golden(void **state)
{
	(void)state;
	return load_golden_dir("engine") == 0 && load_golden_dir("arch") == 0 ? 0 : -1;
}

/* How far a greedy comparison is meaningful: up to the first step whose
 * top-1/top-2 gap in llama.cpp is below this. With the default llama.cpp
 * x86 arithmetic (kernels/q42_llamacpp.h, including its fused RoPE) every
 * model here follows llama.cpp to ~1e-6 or bit for bit. */
static double gap_tolerance(const char *model)
{
	(void)model;
	return 1e-3;
}

static enum q42_arith g_arith = Q42_ARITH_LLAMACPP; /* what open_engine asks for */
/* check_threads_and_batch: the logits too, not only the ids, for other
 * prefill batches (see test_arch_threads_and_batch) */
static bool g_batch_logits = true;
static double g_tol = 1e-4;                          /* check_logits_kv's relative bound */

static q42_engine *open_engine(q42_mount **m, const char *path, uint32_t threads, uint32_t kv,
			       uint32_t batch)
{
	q42_err err = {0};
	q42_engine *e = NULL;
	q42_engine_opts o = {.n_threads = threads, .kv_type = kv, .n_batch = batch,
			     .isa = Q42_ISA_BEST, .arith = g_arith};
	if (q42_mount_open(m, path, 0, &err) != Q42_OK)
		fail_msg("mount %s: %s", path, err.msg);
	if (q42_engine_open(&e, *m, &o, &err) != Q42_OK)
		fail_msg("engine %s: %s", path, err.msg);
	return e;
}

static void greedy(q42_engine *e, const golden_row *r, int32_t *out)
{
	q42_err err = {0};
	q42_engine_reset(e);
	assert_int_equal(q42_engine_eval(e, r->pids, r->n_pids, &err), Q42_OK);
	for (int k = 0; k < N_GEN; k++) {
		out[k] = q42_argmax(q42_engine_logits(e), q42_engine_n_vocab(e));
		if (k + 1 < N_GEN)
			assert_int_equal(q42_engine_eval(e, &out[k], 1, &err), Q42_OK);
	}
}

/* Compare with llama.cpp up to the first near-tie; returns steps checked. */
static int check_row(const golden_row *r, const int32_t *got, double tol)
{
	int k;
	for (k = 0; k < N_GEN && r->gap[k] >= tol; k++)
		if (got[k] != r->out[k])
			fail_msg("%s \"%s\": generated id %d is %d, llama.cpp gives %d (gap %g)",
				 r->model, r->prompt, k, got[k], r->out[k], r->gap[k]);
	return k;
}

static void test_greedy_all(void **state)
{
	(void)state;
	int checked_rows = 0;
	for (uint32_t i = 0; i < n_rows; i++) {
		char path[4096];
		q42_mount *m = NULL;
		if (!model_path(rows[i].model, path, sizeof path))
			continue;
		for (uint32_t th = 1; th <= 2; th++) {
			int32_t got[N_GEN];
			q42_engine *e = open_engine(&m, path, th, 0, 0);
			greedy(e, &rows[i], got);
			int n = check_row(&rows[i], got, gap_tolerance(rows[i].model)), same = 0;
			while (same < N_GEN && got[same] == rows[i].out[same])
				same++;
			print_message("# %s \"%s\" threads %u: %d ids checked (up to the first gap < %g),"
				      " %d of %d equal before any difference\n",
				      rows[i].model, rows[i].prompt, th, n,
				      gap_tolerance(rows[i].model), same, N_GEN);
			q42_engine_close(e);
			q42_mount_close(m);
		}
		checked_rows++;
	}
	if (checked_rows == 0)
		skip();
}

/* The same ids for 1, 2 and 3 threads and for any prefill batch, with no
 * tolerance at all: every output element is computed the same way. The
 * models' longest prompt (13 tokens), for the k-quant kernels and the
 * eight-lane ones (Q5_0, Q5_1: their tiles of 8 tokens, partial and
 * whole). */
static void check_threads_and_batch(const char *model, bool batches)
{
	const golden_row *r = NULL;
	for (uint32_t i = 0; i < n_rows; i++)
		if (strcmp(rows[i].model, model) == 0)
			r = &rows[i];
	assert_non_null(r);
	char path[4096];
	assert_true(model_path(r->model, path, sizeof path));
	int32_t ref[N_GEN], got[N_GEN];
	q42_mount *m;
	q42_engine *e = open_engine(&m, path, 1, 0, 0);
	const size_t lbytes = q42_engine_n_vocab(e) * sizeof(float);
	float *logits = malloc(lbytes);
	assert_non_null(logits);
	greedy(e, r, ref);
	q42_engine_reset(e);
	q42_err err = {0};
	assert_int_equal(q42_engine_eval(e, r->pids, r->n_pids, &err), Q42_OK);
	memcpy(logits, q42_engine_logits(e), lbytes);
	q42_engine_close(e);
	q42_mount_close(m);
	const uint32_t cfg[][2] = {{2, 0}, {3, 0}, {1, 2}, {3, 1}, {2, 5}};
	for (size_t c = 0; c < (batches ? sizeof cfg / sizeof cfg[0] : 2); c++) {
		e = open_engine(&m, path, cfg[c][0], 0, cfg[c][1]);
		greedy(e, r, got);
		assert_memory_equal(got, ref, sizeof ref);
		q42_engine_reset(e);
		assert_int_equal(q42_engine_eval(e, r->pids, r->n_pids, &err), Q42_OK);
		if (g_batch_logits || cfg[c][1] == 0)
			assert_memory_equal(q42_engine_logits(e), logits, lbytes);
		q42_engine_close(e);
		q42_mount_close(m);
	}
	free(logits);
}

static void test_threads_and_batch_identical(void **state)
{
	(void)state;
	check_threads_and_batch("e256-llama-q4_k_m.gguf", true);
	check_threads_and_batch("e256-llama-q5_0.gguf", true);
	check_threads_and_batch("e256-llama-q5_1.gguf", true);
	check_threads_and_batch("e256-llama-tq1_0.gguf", true);
	check_threads_and_batch("e256-llama-tq2_0.gguf", true);
	check_threads_and_batch("e256-llama-q3_k.gguf", true);
	check_threads_and_batch("e256-llama-iq4_nl.gguf", true);
	check_threads_and_batch("e256-llama-iq4_xs.gguf", true);
	/* Q2_K: threads only -- a prompt token's bits depend on its place in
	 * its pass (groups of four), as in llama.cpp, so batches differ */
	check_threads_and_batch("e256-llama-q2_k.gguf", false);
}

/* q42_engine_eval_top1 picks what q42_argmax picks from the logits it
 * leaves, step by step, for 1, 2 and 3 threads, and leaves the logits
 * q42_engine_eval leaves. */
static void test_eval_top1(void **state)
{
	(void)state;
	int checked = 0;
	for (uint32_t i = 0; i < n_rows; i++) {
		const golden_row *r = &rows[i];
		char path[4096];
		if (!model_path(r->model, path, sizeof path))
			continue;
		for (uint32_t th = 1; th <= 3; th++) {
			int32_t ref[N_GEN], id = 0;
			q42_mount *m;
			q42_engine *e = open_engine(&m, path, th, 0, 0);
			q42_err err = {0};
			uint32_t nv = q42_engine_n_vocab(e);
			greedy(e, r, ref);
			q42_engine_reset(e);
			assert_int_equal(q42_engine_eval_top1(e, r->pids, r->n_pids, &id, &err), Q42_OK);
			for (int k = 0; k < N_GEN; k++) {
				assert_int_equal(id, ref[k]);
				assert_int_equal(id, q42_argmax(q42_engine_logits(e), nv));
				if (k + 1 < N_GEN)
					assert_int_equal(q42_engine_eval_top1(e, &ref[k], 1, &id, &err),
							 Q42_OK);
			}
			q42_engine_close(e);
			q42_mount_close(m);
			checked++;
		}
	}
	if (checked == 0)
		skip();
}

/* Last-position logits of the whole vocabulary within 1e-4 relative:
 * |ours - llama.cpp| <= 1e-4 * max(1, |llama.cpp|) for every id; with
 * exact, equal to the last bit (the files print %.9g, which names a float
 * exactly). */
/* The last position's logits after ids, fed as one pass (step false) or
 * one token per pass, against llama.cpp's; exact: to the last bit. */
static void check_logits_kv(const char *model, const char *golden, const int32_t *ids, uint32_t n,
			    bool exact, uint32_t kv, bool step)
{
	char path[4096], gpath[4096];
	if (!model_path(model, path, sizeof path)) {
		skip();
		return;
	}
	/* a name with a folder is under tests/golden, else under its engine/ */
	snprintf(gpath, sizeof gpath, "%s/tests/golden/%s%s", env_or("Q42_SRCDIR", "."),
		 strchr(golden, '/') != NULL ? "" : "engine/", golden);
	FILE *f = fopen(gpath, "r");
	assert_non_null(f);
	q42_mount *m;
	q42_engine *e = open_engine(&m, path, 2, kv, 0);
	q42_err err = {0};
	for (uint32_t i = 0; i < n; i += step ? 1 : n)
		assert_int_equal(q42_engine_eval(e, ids + i, step ? 1 : n, &err), Q42_OK);
	const float *l = q42_engine_logits(e);
	uint32_t nv = q42_engine_n_vocab(e), i = 0;
	double worst = 0.0, ref;
	while (fscanf(f, "%lf", &ref) == 1) {
		assert_true(i < nv);
		double d = fabs((double)l[i] - ref) / fmax(1.0, fabs(ref));
		if (d > worst)
			worst = d;
		if (d > g_tol || (exact && l[i] != (float)ref))
			fail_msg("%s: logit %u is %.9g, llama.cpp gives %.9g", model, i, (double)l[i], ref);
		i++;
	}
	fclose(f);
	assert_int_equal(i, nv);
	print_message("# %s: largest relative logit difference %.3g\n", model, worst);
	q42_engine_close(e);
	q42_mount_close(m);
}

static void check_logits(const char *model, const char *golden, const int32_t *ids, uint32_t n, bool exact)
{
	check_logits_kv(model, golden, ids, n, exact, 0, false);
}

static void test_logits_tiny_llama(void **state)
{
	(void)state;
	static const int32_t ids[] = {1, 9038, 2501, 263, 931};
	check_logits("tiny-llama-spm-f32.gguf", "logits-tiny-llama-spm-f32-once.txt", ids, 5, false);
}

static void test_logits_stories(void **state)
{
	(void)state;
	static const int32_t ids[] = {1, 403, 407, 261, 378};
	check_logits("stories260K.gguf", "logits-stories260K-once.txt", ids, 5, false);
}

/* Q4_K and Q6_K in llama.cpp's AMX buffer: its logits to the last bit */
static void test_logits_q4_k_m(void **state)
{
	(void)state;
	static const int32_t ids[] = {1, 403, 407, 261, 378};
	check_logits("e256-llama-q4_k_m.gguf", "logits-e256-llama-q4_k_m-once.txt", ids, 5, true);
}

/* Q4_0 matrices in llama.cpp's AMX buffer (q42 repacks them at load: the
 * five-id prompt goes through AMX tiles where the CPU has them, the
 * packed AVX-512 kernel otherwise): its logits to the last bit */
static void test_logits_q4_0(void **state)
{
	(void)state;
	static const int32_t ids[] = {1, 403, 407, 261, 378};
	check_logits("e256-llama-q4_0.gguf", "logits-e256-llama-q4_0-once.txt", ids, 5, true);
}

/* Q8_0 matrices in llama.cpp's AMX buffer (q42 repacks them at load, the
 * tied output too; the prompt goes through AMX tiles where the CPU has
 * them): its logits to the last bit */
static void test_logits_q8_0(void **state)
{
	(void)state;
	static const int32_t ids[] = {1, 403, 407, 261, 378};
	check_logits("e256-llama-q8_0.gguf", "logits-e256-llama-q8_0-once.txt", ids, 5, true);
}

/* Q5_0 and Q5_1 everywhere (token embedding and output too): llama.cpp's
 * vec_dot for one token, and for Q5_0 llamafile's kernel for the prompt;
 * q42's logits are llama.cpp's to the last bit */
static void test_logits_q5(void **state)
{
	(void)state;
	static const int32_t ids[] = {1, 403, 407, 261, 378};
	check_logits("e256-llama-q5_0.gguf", "logits-e256-llama-q5_0-once.txt", ids, 5, true);
	check_logits("e256-llama-q5_1.gguf", "logits-e256-llama-q5_1-once.txt", ids, 5, true);
}

/* Ternary matrices everywhere (TQ1_0 and TQ2_0 hold the same trits):
 * llama.cpp's x86 vec_dot order (eight lanes, one fma per super-block);
 * q42's logits are llama.cpp's to the last bit (with ggml's generic order
 * instead, greedy ids part at step 17 of the third prompt). */
static void test_logits_ternary(void **state)
{
	(void)state;
	static const int32_t ids[] = {1, 403, 407, 261, 378};
	check_logits("e256-llama-tq1_0.gguf", "logits-e256-llama-tq1_0-once.txt", ids, 5, true);
	check_logits("e256-llama-tq2_0.gguf", "logits-e256-llama-tq2_0-once.txt", ids, 5, true);
}

/* Q3_K everywhere: llama.cpp's x86 vec_dot order; Q2_K everywhere:
 * llama.cpp's CPU_REPACK kernels (the 5-token prompt: one group of four
 * in the gemm order, one token in the gemv order); both to the last bit */
static void test_logits_q3_k_q2_k(void **state)
{
	(void)state;
	static const int32_t ids[] = {1, 403, 407, 261, 378};
	check_logits("e256-llama-q3_k.gguf", "logits-e256-llama-q3_k-once.txt", ids, 5, true);
	check_logits("e256-llama-q2_k.gguf", "logits-e256-llama-q2_k-once.txt", ids, 5, true);
}

/* IQ4_NL everywhere: llama.cpp's CPU_REPACK kernels (iq4_nl_8x8, one
 * fma per block); to the last bit (with ggml's generic order the greedy
 * ids of the third prompt part from llama.cpp's at step 8) */
static void test_logits_iq4_nl(void **state)
{
	(void)state;
	static const int32_t ids[] = {1, 403, 407, 261, 378};
	check_logits("e256-llama-iq4_nl.gguf", "logits-e256-llama-iq4_nl-once.txt", ids, 5, true);
}

/* IQ4_XS everywhere: llama.cpp's AMX buffer order (one fma per
 * super-block of the exact scaled sum); to the last bit */
static void test_logits_iq4_xs(void **state)
{
	(void)state;
	static const int32_t ids[] = {1, 403, 407, 261, 378};
	check_logits("e256-llama-iq4_xs.gguf", "logits-e256-llama-iq4_xs-once.txt", ids, 5, true);
}

/* BF16 matrices (the tied output too): llama.cpp's AVX-512 BF16
 * products, vec_dot one token at a time and tinyBLAS for the prompt; to
 * the last bit */
static void test_logits_bf16(void **state)
{
	(void)state;
	static const int32_t ids[] = {1, 403, 407, 261, 378};
	check_logits("e256-llama-tied-bf16.gguf", "logits-e256-llama-tied-bf16-once.txt", ids, 5, true);
}

/* An f16 KV cache rounds K and V; stories260K's smallest gap (0.077)
 * leaves room for that, so the ids stay llama.cpp's. */
static void test_kv_f16(void **state)
{
	(void)state;
	for (uint32_t i = 0; i < n_rows; i++) {
		char path[4096];
		int32_t got[N_GEN];
		q42_mount *m;
		if (strcmp(rows[i].model, "stories260K.gguf") != 0)
			continue;
		if (!model_path(rows[i].model, path, sizeof path)) {
			skip();
			return;
		}
		q42_engine *e = open_engine(&m, path, 2, Q42_DTYPE_F16, 0);
		greedy(e, &rows[i], got);
		assert_memory_equal(got, rows[i].out, sizeof got);
		q42_engine_close(e);
		q42_mount_close(m);
	}
}

/* With an f16 cache llama.cpp rounds q and the softmax row to f16 and
 * takes tinyBLAS for the prompt, ggml_vec_dot_f16 one token at a time
 * (q42_llamacpp.h); the same bits here, for the whole prompt and step by
 * step. F16 weights, because a quantized output projection would round
 * the attention output to 8 bits and hide the difference (README). */
static void test_logits_kv_f16(void **state)
{
	(void)state;
	static const int32_t ids[100] = {
		1, 173, 298, 216, 130, 509, 179, 261, 334, 94, 21, 169, 11, 320, 193, 270, 203,
		181, 313, 460, 499, 94, 277, 25, 266, 282, 7, 49, 439, 386, 343, 478, 239, 183,
		142, 496, 211, 432, 374, 206, 39, 5, 366, 37, 453, 62, 191, 53, 154, 383, 306, 323,
		304, 294, 271, 214, 208, 315, 309, 106, 400, 159, 53, 353, 365, 242, 489, 273, 446,
		123, 169, 75, 425, 26, 444, 359, 35, 226, 288, 53, 356, 393, 476, 438, 479, 158,
		373, 226, 409, 61, 459, 367, 329, 8, 500, 147, 295, 312, 11, 271};
	check_logits_kv("e256-llama-tied-f16.gguf", "logits-e256-llama-tied-f16-kvf16-once.txt", ids, 100,
			true, Q42_DTYPE_F16, false);
	check_logits_kv("e256-llama-tied-f16.gguf", "logits-e256-llama-tied-f16-kvf16-steps.txt", ids, 100,
			true, Q42_DTYPE_F16, true);
	/* ggml's generic arithmetic multiplies V one gathered row at a time
	 * (the cache keeps V in blocks of 64 positions, which the 100
	 * positions cross). It does not round as llama.cpp's AVX-512 build
	 * does: measured 2.9e-3 from its logits, where taking a wrong block
	 * of the row moves them by more than 1e-1. */
	g_arith = Q42_ARITH_GGML;
	g_tol = 5e-3;
	check_logits_kv("e256-llama-tied-f16.gguf", "logits-e256-llama-tied-f16-kvf16-once.txt", ids, 100,
			false, Q42_DTYPE_F16, false);
	check_logits_kv("e256-llama-tied-f16.gguf", "logits-e256-llama-tied-f16-kvf16-steps.txt", ids, 100,
			false, Q42_DTYPE_F16, true);
	g_arith = Q42_ARITH_LLAMACPP;
	g_tol = 1e-4;
}

/* path compiled to a P64 by libq42's own writer, into the temp file tmp */
static void write_p64(const char *path, char *tmp)
{
	q42_err err = {0};
	FILE *in = fopen(path, "rb");
	assert_non_null(in);
	fseek(in, 0, SEEK_END);
	long sz = ftell(in);
	fseek(in, 0, SEEK_SET);
	uint8_t *buf = malloc((size_t)sz);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)sz, in), (size_t)sz);
	fclose(in);
	q42_gguf g;
	assert_int_equal(q42_gguf_parse(&g, buf, (uint64_t)sz, path, &err), Q42_OK);
	int fd = mkstemp(tmp);
	assert_true(fd >= 0);
	FILE *out = fdopen(fd, "w+b");
	assert_int_equal(q42_p64_write(&g, NULL, out, NULL, &err), Q42_OK);
	fclose(out);
	q42_gguf_free(&g);
	free(buf);
}

/* The same model as P64 (written by libq42's own P64 writer) mounts by
 * magic and gives the same ids as its GGUF. */
static void test_p64_mount(void **state)
{
	(void)state;
	const golden_row *r = &rows[0];
	char path[4096], tmp[] = "/tmp/q42-test-engine-XXXXXX";
	if (!model_path(r->model, path, sizeof path)) {
		skip();
		return;
	}
	write_p64(path, tmp);
	q42_mount *m;
	int32_t got[N_GEN];
	q42_engine *e = open_engine(&m, tmp, 2, 0, 0);
	assert_int_equal(q42_mount_container(m), Q42_SOURCE_P64);
	greedy(e, r, got);
	assert_memory_equal(got, r->out, sizeof got);
	q42_engine_close(e);
	q42_mount_close(m);
	unlink(tmp);
}

/* ---- qwen3, phi3, gemma3, lfm2, lfm2moe (tests/golden/arch) ------------ */

/* Each model of the arch rows once: fn(row) for its last row (the
 * longest prompt); returns how many ran. */
static int each_arch_model(void (*fn)(const golden_row *))
{
	int n = 0;
	for (uint32_t i = 0; i < n_rows; i++) {
		char path[4096];
		if (!rows[i].arch || (i + 1 < n_rows && strcmp(rows[i + 1].model, rows[i].model) == 0))
			continue;
		if (!model_path(rows[i].model, path, sizeof path))
			continue;
		fn(&rows[i]);
		n++;
	}
	return n;
}

static void arch_threads_and_batch(const golden_row *r)
{
	g_batch_logits = strstr(r->model, "-f32") == NULL;
	print_message("# %s: threads 1-3, batches 1, 2, 5%s\n", r->model,
		      g_batch_logits ? "" : " (logits compared across threads only)");
	check_threads_and_batch(r->model, true);
	g_batch_logits = true;
}

/* The same ids and logits for 1, 2 and 3 threads and prefill batches of
 * 1, 2 and 5 (through gemma3's sliding window of 4, the 16-id prompt) */
static void test_arch_threads_and_batch(void **state)
{
	(void)state;
	if (each_arch_model(arch_threads_and_batch) == 0)
		skip();
}

/* Last-position logits of "Once upon a time" within 1e-4 relative of
 * llama.cpp's, for the F32 models */
static void arch_logits(const golden_row *r)
{
	char golden[256];
	const golden_row *once = NULL;
	if (strstr(r->model, "-f32") == NULL)
		return;
	for (uint32_t i = 0; i < n_rows; i++)
		if (rows[i].arch && strcmp(rows[i].model, r->model) == 0 &&
		    strcmp(rows[i].prompt, "Once upon a time") == 0)
			once = &rows[i];
	assert_non_null(once);
	snprintf(golden, sizeof golden, "arch/logits-%.*s-once.txt", (int)(strlen(r->model) - 5), r->model);
	check_logits(r->model, golden, once->pids, once->n_pids, false);
}

static void test_arch_logits(void **state)
{
	(void)state;
	if (each_arch_model(arch_logits) == 0)
		skip();
}

/* Compiled to P64 (the HPAR tail for gemma3's window pattern and phi3's
 * LongRoPE keys), the same ids as the GGUF, for 2 threads */
static void arch_p64(const golden_row *r)
{
	char path[4096], tmp[] = "/tmp/q42-test-engine-XXXXXX";
	int32_t ref[N_GEN], got[N_GEN];
	q42_mount *m;
	assert_true(model_path(r->model, path, sizeof path));
	q42_engine *e = open_engine(&m, path, 2, 0, 0);
	greedy(e, r, ref);
	q42_engine_close(e);
	q42_mount_close(m);
	write_p64(path, tmp);
	e = open_engine(&m, tmp, 2, 0, 0);
	assert_int_equal(q42_mount_container(m), Q42_SOURCE_P64);
	greedy(e, r, got);
	assert_memory_equal(got, ref, sizeof ref);
	check_row(r, got, gap_tolerance(r->model));
	q42_engine_close(e);
	q42_mount_close(m);
	unlink(tmp);
}

static void test_arch_p64(void **state)
{
	(void)state;
	if (each_arch_model(arch_p64) == 0)
		skip();
}

/* Truncating the cache truncates every state beside K and V: after 32
 * greedy steps, back to the prompt and 5 ids, the same ids fed again give
 * the same ids and, at the end, the same logits to the last bit (lfm2's
 * convolution history, gemma3's sliding window) */
static void test_arch_truncate(void **state)
{
	(void)state;
	static const char *const models[] = {"a64-lfm2-f32.gguf", "a64-gemma3-swa-f32.gguf",
					     "a64-lfm2-l10-f32.gguf", "a64-lfm2moe-e8k2-f32.gguf"};
	for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
		const golden_row *r = NULL;
		char path[4096];
		int32_t ref[N_GEN];
		q42_mount *m;
		q42_err err = {0};
		for (uint32_t j = 0; j < n_rows; j++)
			if (strcmp(rows[j].model, models[i]) == 0)
				r = &rows[j];
		assert_non_null(r);
		assert_true(model_path(r->model, path, sizeof path));
		q42_engine *e = open_engine(&m, path, 2, 0, 0);
		const uint32_t nv = q42_engine_n_vocab(e);
		greedy(e, r, ref);
		float *last = malloc(nv * sizeof(float));
		assert_non_null(last);
		memcpy(last, q42_engine_logits(e), nv * sizeof(float));
		assert_int_equal(q42_engine_truncate(e, r->n_pids + 5, &err), Q42_OK);
		for (int k = 5; k + 1 < N_GEN; k++) {
			assert_int_equal(q42_engine_eval(e, &ref[k], 1, &err), Q42_OK);
			assert_int_equal(q42_argmax(q42_engine_logits(e), nv), ref[k + 1]);
		}
		assert_memory_equal(q42_engine_logits(e), last, nv * sizeof(float));
		free(last);
		q42_engine_close(e);
		q42_mount_close(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_greedy_all),
		cmocka_unit_test(test_threads_and_batch_identical),
		cmocka_unit_test(test_eval_top1),
		cmocka_unit_test(test_logits_tiny_llama),
		cmocka_unit_test(test_logits_stories),
		cmocka_unit_test(test_logits_q4_k_m),
		cmocka_unit_test(test_logits_q4_0), cmocka_unit_test(test_logits_q8_0), cmocka_unit_test(test_logits_q5),
		cmocka_unit_test(test_logits_ternary),
		cmocka_unit_test(test_logits_q3_k_q2_k), cmocka_unit_test(test_logits_iq4_nl), cmocka_unit_test(test_logits_iq4_xs),
		cmocka_unit_test(test_logits_bf16),
		cmocka_unit_test(test_kv_f16),
		cmocka_unit_test(test_logits_kv_f16),
		cmocka_unit_test(test_p64_mount),
		cmocka_unit_test(test_arch_threads_and_batch),
		cmocka_unit_test(test_arch_logits),
		cmocka_unit_test(test_arch_p64),
		cmocka_unit_test(test_arch_truncate),
	};
	return cmocka_run_group_tests(tests, load_golden, NULL);
}
