/* test_vk_forward.c -- the engine on the Vulkan backend against llama.cpp
 * and against the CPU backend.
 *
 * Expected ids are llama.cpp's (tests/golden/engine/greedy.tsv, made by
 * the llamapeer oracle; its gaps column is llama.cpp's top-1 minus top-2
 * logit before each id). A Vulkan result must equal them up to the first
 * step whose gap is smaller than the error a backend may have there.
 * Embeddings (q42_engine_embed) are compared with the CPU's.
 * Without a Vulkan build (Q42_WITH_VULKAN=no) the test checks that
 * --backend vulkan is refused and auto runs on the CPU; with one but no
 * device it skips, or fails under CI=true.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "config.h"
#include "engine/q42_engine.h"
#include "engine/q42_mount.h"
#include "engine/q42_sample.h"
#include "common/q42_types.h"
#include "vulkan/q42_vk.h"

#define N_GEN 32
#define MAX_IDS 64

static const char *env_or(const char *k, const char *d)
{
	const char *v = getenv(k);
	return v && *v ? v : d;
}

static bool ci(void) { return strcmp(env_or("CI", ""), "true") == 0; }

/* Vulkan built and a device present; otherwise skip (fail under CI=true
 * when Vulkan was built). */
static bool vk_ready(void)
{
	q42_err err = {0};
	if (strcmp(env_or("Q42_WITH_VULKAN", "no"), "yes") != 0)
		return false;
	if (q42_backend_check(q42_vk_backend(), Q42_BACKEND_VULKAN, -1, &err) == Q42_OK)
		return true;
	if (ci())
		fail_msg("no Vulkan device under CI=true: %s", err.msg);
	return false;
}

/* $Q42_TEST_MODELS/name, or tests/models/name; NULL after skip. */
static const char *model_path(const char *name, char *buf, size_t cap)
{
	FILE *f;
	snprintf(buf, cap, "%s/%s", env_or("Q42_TEST_MODELS", "../shared/models"), name);
	if ((f = fopen(buf, "rb")) != NULL) {
		fclose(f);
		return buf;
	}
	snprintf(buf, cap, "%s/tests/models/%s", env_or("Q42_SRCDIR", "."), name);
	if ((f = fopen(buf, "rb")) != NULL) {
		fclose(f);
		return buf;
	}
	if (ci())
		fail_msg("required model missing under CI=true: %s", name);
	return NULL;
}

/* One row of greedy.tsv. */
struct golden {
	int32_t prompt[MAX_IDS], out[N_GEN];
	double gap[N_GEN];
	uint32_t n_prompt;
};

static uint32_t parse_list(const char *s, int32_t *ids, double *d, uint32_t cap)
{
	uint32_t n = 0;
	char *end;
	while (*s && n < cap) {
		if (ids != NULL)
			ids[n] = (int32_t)strtol(s, &end, 10);
		else
			d[n] = strtod(s, &end);
		if (end == s)
			break;
		n++;
		s = end;
	}
	return n;
}

/* The row of model and prompt in tests/golden/<set>/greedy.tsv. */
static bool golden_row(const char *set, const char *model, const char *prompt, struct golden *g)
{
	char path[1024], line[8192];
	bool found = false;
	FILE *f;
	snprintf(path, sizeof path, "%s/tests/golden/%s/greedy.tsv", env_or("Q42_SRCDIR", "."), set);
	f = fopen(path, "r");
	assert_non_null(f);
	while (!found && fgets(line, sizeof line, f) != NULL) {
		char *fld[5];
		char *p = line;
		uint32_t k = 0;
		for (; k < 5 && p != NULL; k++) {
			fld[k] = p;
			p = strchr(p, '\t');
			if (p != NULL)
				*p++ = '\0';
		}
		if (k < 5 || strcmp(fld[0], model) != 0 || strcmp(fld[1], prompt) != 0)
			continue;
		g->n_prompt = parse_list(fld[2], g->prompt, NULL, MAX_IDS);
		assert_int_equal(parse_list(fld[3], g->out, NULL, N_GEN), N_GEN);
		assert_int_equal(parse_list(fld[4], NULL, g->gap, N_GEN), N_GEN);
		found = true;
	}
	fclose(f);
	return found;
}

static q42_engine *open_engine(q42_mount *m, enum q42_backend b, uint32_t kv, uint32_t batch)
{
	q42_engine_opts o = {.n_threads = 2, .kv_type = kv, .n_batch = batch, .backend = b,
			     .device = -1, .backend_ops = q42_vk_backend()};
	q42_engine *e = NULL;
	q42_err err = {0};
	int rc = q42_engine_open(&e, m, &o, &err);
	if (rc != Q42_OK)
		fail_msg("engine open (%s): %s", q42_backend_name(b), err.msg);
	assert_int_equal(q42_engine_backend(e), b);
	return e;
}

/* Greedy decoding after the prompt, compared with llama.cpp's ids step by
 * step up to the first step whose gap is below min_gap (a gap of at least
 * twice the largest logit error cannot flip); every step's device top-1
 * must be the argmax of the logits read back. Returns the steps compared. */
static uint32_t greedy_check(q42_engine *e, const struct golden *g, double min_gap,
			     const char *what)
{
	q42_err err = {0};
	uint32_t k = 0;
	q42_engine_reset(e);
	assert_int_equal(q42_engine_eval(e, g->prompt, g->n_prompt, &err), Q42_OK);
	for (; k < N_GEN && g->gap[k] >= min_gap; k++) {
		const int32_t id = q42_engine_top1(e);
		assert_int_equal(id, q42_argmax(q42_engine_logits(e), q42_engine_n_vocab(e)));
		if (id != g->out[k])
			fail_msg("%s: id %u is %d, llama.cpp's is %d (gap %g)", what, k, id, g->out[k],
				 g->gap[k]);
		if (k + 1 < N_GEN)
			assert_int_equal(q42_engine_eval(e, &id, 1, &err), Q42_OK);
	}
	return k;
}

/* Largest |a - b| over the vocabulary. */
static double max_diff(const q42_engine *a, const q42_engine *b)
{
	double m = 0;
	for (uint32_t i = 0; i < q42_engine_n_vocab(a); i++) {
		double d = (double)q42_engine_logits(a)[i] - (double)q42_engine_logits(b)[i];
		if (d < 0)
			d = -d;
		if (d > m)
			m = d;
	}
	return m;
}

static const char *const prompts[] = {"Once upon a time", "The little dog",
				      "Tom and Lily went to the park."};

static void test_backend_names(void **state)
{
	(void)state;
	assert_string_equal(q42_backend_name(Q42_BACKEND_CPU), "cpu");
	assert_string_equal(q42_backend_name(Q42_BACKEND_VULKAN), "vulkan");
	assert_string_equal(q42_backend_name(Q42_BACKEND_AUTO), "auto");
	assert_int_equal(q42_backend_check(q42_vk_backend(), Q42_BACKEND_CPU, -1, NULL), Q42_OK);
	assert_int_equal(q42_backend_check(q42_vk_backend(), Q42_BACKEND_AUTO, -1, NULL), Q42_OK);
}

/* What every build must do: a bogus backend is an argument error, AUTO
 * never fails for want of a GPU, and VULKAN either runs or is refused. */
static void test_backend_choice(void **state)
{
	char buf[1024];
	const char *p = model_path("stories260K.gguf", buf, sizeof buf);
	q42_mount *m = NULL;
	q42_engine *e = NULL;
	q42_err err = {0};
	q42_engine_opts o = {.n_threads = 1, .device = -1, .backend_ops = q42_vk_backend()};
	(void)state;
	if (p == NULL)
		skip();
	assert_int_equal(q42_mount_open(&m, p, 0, &err), Q42_OK);
	o.backend = (enum q42_backend)7;
	assert_int_equal(q42_engine_open(&e, m, &o, &err), Q42_EARG);
	assert_null(e);

	o.backend = Q42_BACKEND_CPU;
	assert_int_equal(q42_engine_open(&e, m, &o, &err), Q42_OK);
	assert_string_equal(q42_engine_device_name(e), "cpu");
	assert_int_equal(q42_engine_n_fallbacks(e), 0);
	assert_null(q42_engine_fallback_note(e));
	q42_engine_close(e);

	o.backend = Q42_BACKEND_AUTO;
	assert_int_equal(q42_engine_open(&e, m, &o, &err), Q42_OK);
#ifdef Q42_WITH_VULKAN
	{
		/* AUTO takes a GPU, never a software device */
		q42_vk_device_info info[16];
		uint32_t n = 0;
		bool gpu = false;
		if (q42_vk_devices(info, 16, &n, NULL) == Q42_OK)
			for (uint32_t i = 0; i < n && i < 16; i++)
				gpu = gpu || info[i].type == Q42_VK_DEV_DISCRETE ||
				      info[i].type == Q42_VK_DEV_INTEGRATED;
		assert_int_equal(q42_engine_backend(e), gpu ? Q42_BACKEND_VULKAN : Q42_BACKEND_CPU);
	}
#else
	assert_int_equal(q42_engine_backend(e), Q42_BACKEND_CPU);
#endif
	q42_engine_close(e);
	e = NULL;

	o.backend = Q42_BACKEND_VULKAN;
	if (strcmp(env_or("Q42_WITH_VULKAN", "no"), "yes") != 0) {
		assert_int_equal(q42_engine_open(&e, m, &o, &err), Q42_EUNSUPPORTED);
		assert_non_null(strstr(err.msg, "built without Vulkan"));
		assert_int_equal(q42_backend_check(q42_vk_backend(), Q42_BACKEND_VULKAN, -1, &err), Q42_EUNSUPPORTED);
		assert_non_null(strstr(err.msg, "built without Vulkan"));
	} else if (vk_ready()) {
		o.device = 99;
		assert_int_equal(q42_backend_check(q42_vk_backend(), Q42_BACKEND_VULKAN, 99, &err), Q42_EARG);
		assert_int_equal(q42_engine_open(&e, m, &o, &err), Q42_EARG);
		assert_null(e);
		assert_non_null(strstr(err.msg, "99"));
	}
	q42_mount_close(m);
}

/* stories260K: the 32 greedy ids are llama.cpp's on Vulkan (the smallest
 * gap is 0.08), with an F32 and an F16 cache, the prompt in one pass and
 * in passes of 4 and 1 tokens. */
static void test_stories_greedy(void **state)
{
	char buf[1024];
	const char *p;
	q42_mount *m = NULL;
	q42_err err = {0};
	struct golden g;
	(void)state;
	if (!vk_ready() || (p = model_path("stories260K.gguf", buf, sizeof buf)) == NULL)
		skip();
	assert_int_equal(q42_mount_open(&m, p, 0, &err), Q42_OK);
	assert_true(golden_row("engine", "stories260K.gguf", "Tom and Lily went to the park.", &g));
	struct {
		uint32_t kv, batch;
	} cfg[] = {{Q42_DTYPE_F32, 0}, {Q42_DTYPE_F16, 4}, {Q42_DTYPE_F32, 1}};
	for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
		q42_engine *e = open_engine(m, Q42_BACKEND_VULKAN, cfg[c].kv, cfg[c].batch);
		assert_int_equal(greedy_check(e, &g, 0.0, "stories260K"), N_GEN);
		q42_engine_close(e);
	}
	q42_mount_close(m);
}

/* Logits against the CPU backend and against llama.cpp's file. */
static void test_stories_logits(void **state)
{
	char buf[1024], gpath[1024], line[64];
	const char *p;
	q42_mount *m = NULL;
	q42_err err = {0};
	static const int32_t ids[] = {1, 403, 407, 261, 378};
	double d_cpu, d_ref = 0;
	uint32_t nv, i = 0;
	FILE *f;
	(void)state;
	if (!vk_ready() || (p = model_path("stories260K.gguf", buf, sizeof buf)) == NULL)
		skip();
	assert_int_equal(q42_mount_open(&m, p, 0, &err), Q42_OK);
	q42_engine *ec = open_engine(m, Q42_BACKEND_CPU, 0, 0);
	q42_engine *ev = open_engine(m, Q42_BACKEND_VULKAN, 0, 0);
	nv = q42_engine_n_vocab(ec);
	assert_int_equal(q42_engine_eval(ec, ids, 5, &err), Q42_OK);
	assert_int_equal(q42_engine_eval(ev, ids, 5, &err), Q42_OK);
	d_cpu = max_diff(ev, ec);
	snprintf(gpath, sizeof gpath, "%s/tests/golden/engine/logits-stories260K-once.txt",
		 env_or("Q42_SRCDIR", "."));
	f = fopen(gpath, "r");
	assert_non_null(f);
	while (fgets(line, sizeof line, f) != NULL && i < nv) {
		double d = (double)q42_engine_logits(ev)[i++] - strtod(line, NULL);
		if (d < 0)
			d = -d;
		if (d > d_ref)
			d_ref = d;
	}
	fclose(f);
	assert_int_equal(i, nv);
	print_message("# stories260K logits: max |vulkan - cpu| = %.3g, |vulkan - llama.cpp| = %.3g\n",
		      d_cpu, d_ref);
	/* the logits span about 30; f32 kernels summing in another order
	 * stay well inside 1e-3 */
	assert_true(d_cpu < 1e-3);
	assert_true(d_ref < 1e-3);
	q42_engine_close(ec);
	q42_engine_close(ev);
	q42_mount_close(m);
}

/* Same input, same bytes: a pass repeated after truncate and after reset
 * leaves identical logits. */
static void test_deterministic(void **state)
{
	char buf[1024];
	const char *p;
	q42_mount *m = NULL;
	q42_err err = {0};
	static const int32_t ids[] = {1, 274, 287, 269, 317, 263, 377, 267};
	float *first;
	(void)state;
	if (!vk_ready() || (p = model_path("stories260K.gguf", buf, sizeof buf)) == NULL)
		skip();
	assert_int_equal(q42_mount_open(&m, p, 0, &err), Q42_OK);
	q42_engine *e = open_engine(m, Q42_BACKEND_VULKAN, 0, 0);
	const uint32_t nv = q42_engine_n_vocab(e);
	first = malloc(nv * sizeof *first);
	assert_non_null(first);
	assert_int_equal(q42_engine_eval(e, ids, 5, &err), Q42_OK);
	assert_int_equal(q42_engine_eval(e, ids + 5, 3, &err), Q42_OK);
	memcpy(first, q42_engine_logits(e), nv * sizeof *first);
	assert_int_equal(q42_engine_truncate(e, 5, &err), Q42_OK);
	assert_int_equal(q42_engine_n_past(e), 5);
	assert_int_equal(q42_engine_eval(e, ids + 5, 3, &err), Q42_OK);
	assert_memory_equal(first, q42_engine_logits(e), nv * sizeof *first);
	q42_engine_reset(e);
	assert_int_equal(q42_engine_eval(e, ids, 5, &err), Q42_OK);
	assert_int_equal(q42_engine_eval(e, ids + 5, 3, &err), Q42_OK);
	assert_memory_equal(first, q42_engine_logits(e), nv * sizeof *first);
	assert_int_equal(q42_engine_n_past(e), 8);
	/* a bad id is refused before anything runs */
	static const int32_t bad[] = {5, 100000};
	assert_int_equal(q42_engine_eval(e, bad, 2, &err), Q42_EARG);
	assert_int_equal(q42_engine_n_past(e), 8);
	assert_true(q42_engine_device_ms(e) >= 0.0);
	free(first);
	q42_engine_close(e);
	q42_mount_close(m);
}

/* Each model: its logits after each prompt within tol of the CPU
 * backend's (which are llama.cpp's), and its greedy ids llama.cpp's
 * (tests/golden/<gold>/greedy.tsv) while the gap exceeds 2 tol. */
static const struct {
	const char *model, *gold;
	double tol;
	uint32_t fallbacks; /* matrices converted to F16 at upload */
	uint32_t n_prompts; /* of prompts[]; 0: all */
} models[] = {
	/* f32 end to end: only the summation order differs */
	{"tiny-llama-spm-f32.gguf", "engine", 1e-4, 0, 0},
	/* llama.cpp rounds the activations of f16 products to f16 */
	{"e256-llama-tied-f16.gguf", "engine", 2e-3, 0, 0},
	/* and of quantized products to 8 bits (Q8_0, Q8_K); the Vulkan
	 * kernels keep them f32: up to 0.08 measured on these random models */
	{"e256-llama-q8_0.gguf", "engine", 0.15, 0, 0},
	{"e256-llama-q4_0.gguf", "engine", 0.15, 0, 0},
	{"e256-llama-q4_k_m.gguf", "engine", 0.15, 0, 0},
	{"e256-llama-q6_k.gguf", "engine", 0.15, 0, 0},
	{"e256-qwen2-q8_0.gguf", "engine", 0.15, 0, 0},
	/* the architectures of issue 34 (tests/models/README): per-head q/k
	 * norms and odd head dims (qwen3); embedding scale, post norms, GeGLU,
	 * a sliding window shorter than the prompts (gemma3); fused qkv and
	 * gate+up, partial rotary, LongRoPE's long and short factors (phi3);
	 * short convolutions of width 3 and 10 (lfm2); routed experts, top-2
	 * and top-4 of 8 (lfm2moe) */
	{"tiny-qwen3-f32.gguf", "arch", 1e-4, 0, 0},
	{"tiny-gemma3-f32.gguf", "arch", 1e-4, 0, 0},
	{"tiny-phi3-f32.gguf", "arch", 1e-4, 0, 0},
	{"tiny-lfm2-f32.gguf", "arch", 1e-4, 0, 0},
	{"tiny-lfm2moe-f32.gguf", "arch", 1e-4, 0, 0},
	{"a64-qwen3-hd24-f32.gguf", "arch", 1e-4, 0, 0},
	{"a64-gemma3-swa-f32.gguf", "arch", 1e-4, 0, 0},
	{"a64-phi3-long-f32.gguf", "arch", 1e-4, 0, 0},
	{"a64-phi3-short-f32.gguf", "arch", 1e-4, 0, 0},
	{"a64-lfm2-f32.gguf", "arch", 1e-4, 0, 0},
	{"a64-lfm2-l10-f32.gguf", "arch", 1e-4, 0, 0},
	{"a64-lfm2moe-e8k2-f32.gguf", "arch", 1e-4, 0, 0},
	{"a64-lfm2moe-e8k4-f32.gguf", "arch", 1e-4, 0, 0},
	/* quantized: one prompt each; the convolutions and experts carry the
	 * CPU's 8-bit activation rounding further than llama's blocks (up to
	 * 0.19 measured) */
	{"a64-qwen3-hd24-q8_0.gguf", "arch", 0.3, 0, 1},
	{"a64-gemma3-swa-q8_0.gguf", "arch", 0.3, 0, 1},
	{"a64-lfm2-q8_0.gguf", "arch", 0.3, 0, 1},
	{"a64-lfm2moe-e8k2-q8_0.gguf", "arch", 0.3, 0, 1},
	{"a64-lfm2moe-e8k2-q4_0.gguf", "arch", 0.3, 0, 1},
	/* Q4_K_M's Q5_K matrix goes up as F16 */
	{"a256-lfm2moe-q4_k_m.gguf", "arch", 0.3, 1, 1},
	{"a256-lfm2moe-q6_k.gguf", "arch", 0.3, 0, 1},
};

static void test_models(void **state)
{
	(void)state;
	if (!vk_ready())
		skip();
	for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
		char buf[1024];
		const char *p = model_path(models[i].model, buf, sizeof buf);
		q42_mount *m = NULL;
		q42_err err = {0};
		if (p == NULL)
			continue;
		assert_int_equal(q42_mount_open(&m, p, 0, &err), Q42_OK);
		q42_engine *ec = open_engine(m, Q42_BACKEND_CPU, 0, 0);
		q42_engine *ev = open_engine(m, Q42_BACKEND_VULKAN, 0, 0);
		assert_int_equal(q42_engine_n_fallbacks(ev), models[i].fallbacks);
		for (size_t k = 0; k < (models[i].n_prompts ? models[i].n_prompts : 3); k++) {
			struct golden g;
			char what[256];
			snprintf(what, sizeof what, "%s \"%s\"", models[i].model, prompts[k]);
			assert_true(golden_row(models[i].gold, models[i].model, prompts[k], &g));
			q42_engine_reset(ec);
			q42_engine_reset(ev);
			assert_int_equal(q42_engine_eval(ec, g.prompt, g.n_prompt, &err), Q42_OK);
			assert_int_equal(q42_engine_eval(ev, g.prompt, g.n_prompt, &err), Q42_OK);
			const double d = max_diff(ev, ec);
			if (!(d <= models[i].tol))
				fail_msg("%s: max |vulkan - cpu| logit %g > %g", what, d, models[i].tol);
			uint32_t n = greedy_check(ev, &g, 2 * models[i].tol, what);
			print_message("# %s: max |vulkan - cpu| %.3g; %u greedy ids equal llama.cpp's\n",
				      what, d, n);
		}
		q42_engine_close(ec);
		q42_engine_close(ev);
		q42_mount_close(m);
	}
}

/* Each synthetic encoder (gemma-embedding: symmetric window of 8,
 * dense_2 and dense_3; bert: learned positions, GELU, LayerNorm; nomic-
 * bert: RoPE, SwiGLU; lfm2-colbert: centred convolution, dense_2 per
 * token) and two decoders: every pooling on Vulkan within tol of the CPU
 * after L2 normalisation, and the same bytes again after another
 * sequence: each sequence is its own pass. Most values agree to 1e-6; a
 * token row whose GELU input lies at an f16 rounding boundary of the
 * CPU's table (GeGLU, bert's GELU) and lands on the other side moves by
 * up to 3e-5 (measured), hence the decoders' 1e-4. */
static void l2(float *v, uint32_t n)
{
	double s = 0;
	for (uint32_t i = 0; i < n; i++)
		s += (double)v[i] * v[i];
	for (uint32_t i = 0; i < n; i++)
		v[i] = (float)((double)v[i] / sqrt(s));
}

static void test_embed(void **state)
{
	static const char *const names[] = {"tiny-gemma-embedding-f32.gguf", "tiny-bert-f32.gguf",
					    "tiny-nomic-bert-f32.gguf", "tiny-lfm2-colbert-f32.gguf",
					    "tiny-qwen3-f32.gguf", "tiny-lfm2-f32.gguf"};
	static const uint32_t lens[] = {1, 9, 40};
	const double tol = 1e-4;
	(void)state;
	if (!vk_ready())
		skip();
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char buf[1024];
		const char *p = model_path(names[i], buf, sizeof buf);
		q42_mount *m = NULL;
		q42_err err = {0};
		double worst = 0;
		if (p == NULL)
			continue;
		assert_int_equal(q42_mount_open(&m, p, 0, &err), Q42_OK);
		q42_engine *ec = open_engine(m, Q42_BACKEND_CPU, 0, 0);
		q42_engine *ev = open_engine(m, Q42_BACKEND_VULKAN, 0, 0);
		const uint32_t dim = q42_engine_embd_dim(ev), nv = q42_engine_n_vocab(ev);
		float *a = malloc(40 * dim * sizeof *a), *b = malloc(40 * dim * sizeof *b);
		int32_t ids[40], other[7];
		assert_non_null(a);
		assert_non_null(b);
		for (uint32_t k = 0; k < 40; k++)
			ids[k] = (int32_t)((k * 7919u + 13u) % nv);
		for (uint32_t k = 0; k < 7; k++)
			other[k] = (int32_t)((k * 104729u + 5u) % nv);
		for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
			for (int32_t pool = 0; pool <= 3; pool++) {
				const float *vc, *vv;
				uint32_t rc_rows, rv_rows;
				assert_int_equal(q42_engine_embed(ec, ids, lens[li], pool, &vc, &rc_rows, &err), Q42_OK);
				memcpy(a, vc, (size_t)rc_rows * dim * sizeof *a);
				if (q42_engine_embed(ev, ids, lens[li], pool, &vv, &rv_rows, &err) != Q42_OK)
					fail_msg("%s: vulkan embed: %s", names[i], err.msg);
				assert_int_equal(rv_rows, rc_rows);
				assert_int_equal(rv_rows, pool == 0 ? lens[li] : 1);
				memcpy(b, vv, (size_t)rv_rows * dim * sizeof *b);
				/* another sequence between, then the first again: its bytes */
				assert_int_equal(q42_engine_embed(ev, other, 7, pool, &vv, &rv_rows, &err), Q42_OK);
				assert_int_equal(q42_engine_embed(ev, ids, lens[li], pool, &vv, &rv_rows, &err), Q42_OK);
				assert_memory_equal(b, vv, (size_t)rv_rows * dim * sizeof *b);
				for (uint32_t r = 0; r < rv_rows; r++) {
					l2(a + (uint64_t)r * dim, dim);
					l2(b + (uint64_t)r * dim, dim);
				}
				for (uint64_t k = 0; k < (uint64_t)rv_rows * dim; k++) {
					const double d = fabs((double)a[k] - (double)b[k]);
					if (!(d <= tol))
						fail_msg("%s: %u tokens, pooling %d: |vulkan - cpu| %g > %g at %llu",
							 names[i], lens[li], pool, d, tol, (unsigned long long)k);
					worst = d > worst ? d : worst;
				}
			}
		print_message("# %s: embeddings, every pooling: max |vulkan - cpu| %.3g\n", names[i], worst);
		free(a);
		free(b);
		q42_engine_close(ec);
		q42_engine_close(ev);
		q42_mount_close(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backend_names),
		cmocka_unit_test(test_backend_choice),
		cmocka_unit_test(test_stories_greedy),
		cmocka_unit_test(test_stories_logits),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_models),
		cmocka_unit_test(test_embed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
