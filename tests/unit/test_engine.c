/* test_engine.c -- the engine's small parts: strict UTF-8, the sampler,
 * the thread pool, architecture names, model refusal, and the memory an
 * engine needs, computed before it allocates.
 *
 * Expected values come from their specifications, not from running the
 * code: RFC 3629 (and the well-known malformed sequences of Markus Kuhn's
 * UTF-8 decoder test) for UTF-8, llama.cpp's greedy rule (lowest id on
 * ties) for argmax, GGUF tensor names for the architecture table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/q42_arch.h"
#include "engine/q42_engine.h"
#include "run/q42_generate.h"
#include "engine/q42_mount.h"
#include "engine/q42_pool.h"
#include "engine/q42_sample.h"
#include "common/q42_utf8.h"

static void test_utf8_valid(void **state)
{
	(void)state;
	static const char *ok[] = {
		"", "a", "\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80", "\xed\x9f\xbf", "\xee\x80\x80",
		"\xef\xbf\xbd", "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf", "Ἀθῆναι", "日本語",
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		assert_int_equal(q42_utf8_check((const uint8_t *)ok[i], strlen(ok[i])), strlen(ok[i]));
}

static void test_utf8_invalid(void **state)
{
	(void)state;
	/* each: bytes, offset of the first invalid byte */
	static const struct {
		const char *s;
		size_t bad;
	} bad[] = {
		{"\x80", 0},                 /* lone continuation */
		{"a\xbf", 1},
		{"\xc0\xaf", 0},             /* overlong '/' */
		{"\xc1\xbf", 0},             /* overlong */
		{"\xe0\x80\xaf", 0},         /* overlong 3-byte */
		{"\xf0\x80\x80\xaf", 0},     /* overlong 4-byte */
		{"\xed\xa0\x80", 0},         /* surrogate U+D800 */
		{"\xed\xbf\xbf", 0},         /* surrogate U+DFFF */
		{"\xf4\x90\x80\x80", 0},     /* U+110000 */
		{"\xf5\x80\x80\x80", 0},
		{"\xfe", 0},
		{"\xff", 0},
		{"ab\xe6\x97", 2},           /* truncated at the end */
		{"\xe6\x97x", 0},            /* truncated in the middle */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(q42_utf8_check((const uint8_t *)bad[i].s, strlen(bad[i].s)), bad[i].bad);
}

static void test_utf8_sanitize(void **state)
{
	(void)state;
	q42_buf b;
	uint64_t rep = 0;
	size_t used;

	q42_buf_init(&b);
	/* an incomplete character at the end waits unless final */
	used = q42_utf8_sanitize(&b, (const uint8_t *)"ab\xe6\x97", 4, false, &rep);
	assert_int_equal(used, 2);
	assert_int_equal(b.len, 2);
	assert_int_equal(rep, 0);
	used = q42_utf8_sanitize(&b, (const uint8_t *)"\xe6\x97\xa5", 3, false, &rep);
	assert_int_equal(used, 3);
	assert_memory_equal(b.data, "ab\xe6\x97\xa5", 5);
	/* invalid bytes become U+FFFD, one per byte */
	q42_buf_reset(&b);
	used = q42_utf8_sanitize(&b, (const uint8_t *)"x\xff\xc0y", 4, true, &rep);
	assert_int_equal(used, 4);
	assert_int_equal(rep, 2);
	assert_int_equal(b.len, 8);
	assert_memory_equal(b.data, "x\xef\xbf\xbd\xef\xbf\xbdy", 8);
	/* final: an incomplete tail is replaced too */
	q42_buf_reset(&b);
	rep = 0;
	used = q42_utf8_sanitize(&b, (const uint8_t *)"\xe6\x97", 2, true, &rep);
	assert_int_equal(used, 2);
	assert_int_equal(rep, 2);
	q42_buf_free(&b);
}

static void test_argmax_ties(void **state)
{
	(void)state;
	const float v[] = {1.0f, 3.0f, -2.0f, 3.0f, 0.5f};
	const float w[] = {-1.0f, -1.0f};
	assert_int_equal(q42_argmax(v, 5), 1);
	assert_int_equal(q42_argmax(w, 2), 0);
}

static void test_sampler_greedy_and_seeded(void **state)
{
	(void)state;
	float logits[64];
	q42_sampling sp;
	q42_sampler *s = NULL;
	q42_err err = {0};
	int32_t a[20], b[20];

	for (int i = 0; i < 64; i++)
		logits[i] = (float)((i * 37) % 64) / 16.0f;
	q42_sampling_default(&sp);
	assert_int_equal(q42_sampler_open(&s, &sp, 64, &err), Q42_OK);
	assert_int_equal(q42_sampler_sample(s, logits), q42_argmax(logits, 64));
	q42_sampler_close(s);

	/* a seed fixes the draws; the draws stay inside top-k */
	sp.temp = 1.5f;
	sp.top_k = 5;
	sp.min_p = 0.0f;
	sp.seed = 42;
	assert_int_equal(q42_sampler_open(&s, &sp, 64, &err), Q42_OK);
	for (int i = 0; i < 20; i++)
		a[i] = q42_sampler_sample(s, logits);
	q42_sampler_reset(s);
	for (int i = 0; i < 20; i++)
		b[i] = q42_sampler_sample(s, logits);
	assert_memory_equal(a, b, sizeof a);
	for (int i = 0; i < 20; i++)
		assert_true(logits[a[i]] >= 3.0f); /* the 5 best are 63/16 .. 59/16 */
	q42_sampler_close(s);

	/* repeat penalty can move greedy off a recent token */
	q42_sampling_default(&sp);
	sp.repeat_penalty = 100.0f;
	assert_int_equal(q42_sampler_open(&s, &sp, 64, &err), Q42_OK);
	int32_t best = q42_argmax(logits, 64);
	q42_sampler_accept(s, best);
	assert_int_not_equal(q42_sampler_sample(s, logits), best);
	q42_sampler_close(s);

	sp.top_p = 0.0f;
	assert_int_equal(q42_sampling_check(&sp, &err), Q42_EARG);
}

struct pool_probe {
	int hits[8][64];
};

static void pool_fn(void *arg, uint32_t ith, uint32_t nth)
{
	struct pool_probe *p = arg;
	for (uint32_t i = 64 * ith / nth; i < 64 * (ith + 1) / nth; i++)
		p->hits[nth - 1][i]++;
}

static void test_pool_covers_once(void **state)
{
	(void)state;
	struct pool_probe p;
	memset(&p, 0, sizeof p);
	for (uint32_t n = 1; n <= 8; n++) {
		q42_pool *pool = NULL;
		q42_err err = {0};
		assert_int_equal(q42_pool_open(&pool, n, &err), Q42_OK);
		for (int rep = 0; rep < 100; rep++)
			q42_pool_run(pool, pool_fn, &p);
		q42_pool_close(pool);
		for (int i = 0; i < 64; i++)
			assert_int_equal(p.hits[n - 1][i], 100);
	}
	q42_pool *pool = NULL;
	q42_err err = {0};
	assert_int_equal(q42_pool_open(&pool, 0, &err), Q42_EARG);
}

/* A job every worker sleeps through: it must still see each one, after
 * the spin ran out and the workers went to sleep on the futex. */
static void test_pool_wakes_sleepers(void **state)
{
	(void)state;
	struct pool_probe p;
	q42_pool *pool = NULL;
	q42_err err = {0};
	const struct timespec pause = {0, 5 * 1000 * 1000};
	memset(&p, 0, sizeof p);
	assert_int_equal(q42_pool_open(&pool, 4, &err), Q42_OK);
	for (int rep = 0; rep < 20; rep++) {
		q42_pool_run(pool, pool_fn, &p);
		nanosleep(&pause, NULL);
	}
	q42_pool_close(pool);
	for (int i = 0; i < 64; i++)
		assert_int_equal(p.hits[3][i], 20);
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* An idle pool burns no CPU: after its last job, 4 threads together use
 * well under a tenth of the 300 ms the process then sleeps (they stop
 * spinning after Q42_POOL_SPIN_NS). A pool that kept spinning would use
 * about 900 ms. */
static void test_pool_idle_sleeps(void **state)
{
	(void)state;
	struct pool_probe p;
	q42_pool *pool = NULL;
	q42_err err = {0};
	const struct timespec idle = {0, 300 * 1000 * 1000};
	double c0, used;
	memset(&p, 0, sizeof p);
	assert_int_equal(q42_pool_open(&pool, 4, &err), Q42_OK);
	q42_pool_run(pool, pool_fn, &p);
	c0 = cpu_seconds();
	nanosleep(&idle, NULL);
	used = cpu_seconds() - c0;
	q42_pool_close(pool);
	print_message("# idle pool of 4 threads: %.1f ms of CPU in 300 ms\n", used * 1e3);
	assert_true(used < 0.03);
}

static void test_arch_names(void **state)
{
	(void)state;
	char buf[128];
	enum q42_wslot s;
	uint32_t l;

	assert_non_null(q42_arch_find("llama"));
	assert_non_null(q42_arch_find("qwen2"));
	assert_non_null(q42_arch_find("qwen3"));
	assert_non_null(q42_arch_find("phi3"));
	assert_non_null(q42_arch_find("gemma3"));
	assert_non_null(q42_arch_find("lfm2"));
	assert_non_null(q42_arch_find("lfm2moe"));
	assert_non_null(q42_arch_find("nomic-bert"));
	assert_non_null(q42_arch_find("gemma-embedding"));
	assert_non_null(q42_arch_find("bert"));
	assert_null(q42_arch_find("falcon"));
	assert_int_equal(q42_arch_find("qwen2")->rope, Q42_ROPE_NEOX);
	assert_int_equal(q42_arch_find("llama")->rope, Q42_ROPE_NORM);

	q42_wslot_format(Q42_W_ATTN_OUT, 12, buf, sizeof buf);
	assert_string_equal(buf, "blk.12.attn_output.weight");
	q42_wslot_format(Q42_W_TOK_EMBD, 3, buf, sizeof buf);
	assert_string_equal(buf, "token_embd.weight");
	assert_true(q42_wslot_parse("blk.7.ffn_down.weight", 21, &s, &l));
	assert_int_equal(s, Q42_W_FFN_DOWN);
	assert_int_equal(l, 7);
	assert_true(q42_wslot_parse("output.weight", 13, &s, &l));
	assert_int_equal(s, Q42_W_OUTPUT);
	assert_false(q42_wslot_parse("blk.07.ffn_down.weight", 22, &s, &l));
	assert_true(q42_wslot_parse("blk.1.attn_q_norm.weight", 24, &s, &l));
	assert_int_equal(s, Q42_W_ATTN_Q_NORM);
	assert_true(q42_wslot_parse("rope_factors_long.weight", 24, &s, &l));
	assert_int_equal(s, Q42_W_ROPE_LONG);
	assert_true(q42_wslot_parse("blk.1.ffn_gate_exps.weight", 26, &s, &l));
	assert_int_equal(s, Q42_W_FFN_GATE_EXPS);
	assert_true(q42_wslot_parse("blk.2.exp_probs_b.bias", 22, &s, &l));
	assert_int_equal(s, Q42_W_FFN_EXP_PROBS_B);
	assert_false(q42_wslot_parse("blk.1.ffn_gate_shexp.weight", 27, &s, &l));
	assert_false(q42_wslot_parse("blk.x.attn_q.weight", 19, &s, &l));
	assert_false(q42_wslot_parse("attn_q.weight", 13, &s, &l));
}

static void test_stop_names(void **state)
{
	(void)state;
	assert_string_equal(q42_stop_name(Q42_STOP_EOS), "eos");
	assert_string_equal(q42_stop_name(Q42_STOP_MAX_TOKENS), "max_tokens");
	assert_string_equal(q42_stop_name(Q42_STOP_DEADLINE), "deadline");
	assert_string_equal(q42_stop_name(Q42_STOP_STRING), "stop");
	assert_string_equal(q42_stop_name(Q42_STOP_CTX_FULL), "ctx_full");
}

/* Architectures the engine does not run are refused by name: a real model
 * whose architecture (its general.architecture value and its keys'
 * prefix) is renamed to "zzzzz". */
static void test_refuse_unknown_arch(void **state)
{
	(void)state;
	char path[4096], tmp[] = "/tmp/test_engine_arch.XXXXXX";
	const char *dir = getenv("Q42_TEST_MODELS");
	q42_mount *m = NULL;
	q42_engine *e = NULL;
	q42_err err = {0};
	snprintf(path, sizeof path, "%s/stories260K.gguf", dir ? dir : "../shared/models");
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		if (getenv("CI") && strcmp(getenv("CI"), "true") == 0)
			fail_msg("missing %s", path);
		skip();
		return;
	}
	static uint8_t buf[8u << 20];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	assert_true(n > 0 && n < sizeof buf);
	static const char key[] = "general.architecture";
	uint8_t *k = memmem(buf, n, key, sizeof key - 1);
	assert_non_null(k);
	uint8_t *v = k + sizeof key - 1 + 4 + 8; /* type, then the string's u64 length */
	assert_memory_equal(v, "llama", 5);
	memcpy(v, "zzzzz", 5);
	/* and its keys' prefix, so the metadata reads as it did */
	for (uint8_t *p = buf; (p = memmem(p, n - (size_t)(p - buf), "llama.", 6)) != NULL; p += 6)
		memcpy(p, "zzzzz", 5);
	int fd = mkstemp(tmp);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, n), (ssize_t)n);
	close(fd);
	assert_int_equal(q42_mount_open(&m, tmp, 0, &err), Q42_OK);
	assert_int_equal(q42_engine_open(&e, m, NULL, &err), Q42_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "'zzzzz'"));
	assert_non_null(strstr(err.msg, "gemma3"));
	assert_null(e);
	q42_mount_close(m);
	unlink(tmp);
}

/* q42_engine_memory's figures, computed before allocating, against what
 * q42_engine_open then allocates (malloc_usable_size: at most a page more
 * per buffer), for models exercising each kind of buffer (repacked
 * matrices, convolution history, experts, GELU, an f16 cache), and the
 * limit: refused one byte below the figure, opened at it. */
static void test_memory_plan(void **state)
{
	(void)state;
	static const struct {
		const char *model;
		uint32_t ctx, threads, kv_type;
		enum q42_arith arith;
		enum q42_flash_attn fa;
	} cases[] = {
		{"e256-llama-q8_0.gguf", 100, 2, Q42_DTYPE_F32, Q42_ARITH_ZEN4, Q42_FLASH_ATTN_OFF},
		{"e256-llama-q8_0.gguf", 300, 2, Q42_DTYPE_F32, Q42_ARITH_ZEN4, Q42_FLASH_ATTN_ON},
		{"e256-llama-q4_k_m.gguf", 700, 1, Q42_DTYPE_F16, Q42_ARITH_GGML, Q42_FLASH_ATTN_OFF},
		{"a64-lfm2-q8_0.gguf", 64, 3, Q42_DTYPE_F32, Q42_ARITH_ZEN4, Q42_FLASH_ATTN_AUTO},
		{"a64-lfm2moe-e8k2-q8_0.gguf", 33, 2, Q42_DTYPE_F16, Q42_ARITH_ZEN4, Q42_FLASH_ATTN_OFF},
		{"a64-gemma3-swa-f32.gguf", 1000, 2, Q42_DTYPE_F32, Q42_ARITH_AUTO, Q42_FLASH_ATTN_OFF},
		{"a64-qwen3-hd24-q8_0.gguf", 1, 1, Q42_DTYPE_F32, Q42_ARITH_LLAMACPP, Q42_FLASH_ATTN_ON},
	};
	const char *src = getenv("Q42_SRCDIR");
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char path[4096];
		q42_mount *m = NULL;
		q42_engine *e = NULL;
		q42_err err = {0};
		q42_engine_mem mem;
		uint64_t kv, act, scratch;
		q42_engine_opts o = {.n_ctx = cases[i].ctx, .n_threads = cases[i].threads,
				     .kv_type = cases[i].kv_type, .arith = cases[i].arith,
				     .flash_attn = cases[i].fa};
		snprintf(path, sizeof path, "%s/tests/models/%s", src ? src : "..", cases[i].model);
		assert_int_equal(q42_mount_open(&m, path, 0, &err), Q42_OK);
		assert_int_equal(q42_engine_memory(m, &o, &mem, &err), Q42_OK);
		assert_int_equal(mem.total, mem.weights + mem.packed + mem.kv + mem.act + mem.scratch);
		assert_true(mem.weights + mem.packed > 0 && mem.kv > 0 && mem.act > 0 && mem.scratch > 0);
		o.max_memory = mem.total - 1;
		assert_int_equal(q42_engine_open(&e, m, &o, &err), Q42_ENOMEM);
		assert_null(e);
		char want[32];
		snprintf(want, sizeof want, "needs %llu bytes", (unsigned long long)mem.total);
		assert_non_null(strstr(err.msg, want));
		o.max_memory = mem.total;
		assert_int_equal(q42_engine_open(&e, m, &o, &err), Q42_OK);
		q42_engine_buffer_bytes(e, &kv, &act, &scratch);
		print_message("# %s: kv %llu/%llu act %llu/%llu scratch %llu/%llu\n", cases[i].model,
			      (unsigned long long)mem.kv, (unsigned long long)kv,
			      (unsigned long long)mem.act, (unsigned long long)act,
			      (unsigned long long)mem.scratch, (unsigned long long)scratch);
		assert_true(kv >= mem.kv && kv - mem.kv <= 3 * 4096);
		assert_true(act >= mem.act && act - mem.act <= 32 * 4096);
		assert_true(scratch >= mem.scratch && scratch - mem.scratch <= (1 + 9 * cases[i].threads) * 4096ull);
		q42_engine_close(e);
		q42_mount_close(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf8_valid),
		cmocka_unit_test(test_utf8_invalid),
		cmocka_unit_test(test_utf8_sanitize),
		cmocka_unit_test(test_argmax_ties),
		cmocka_unit_test(test_sampler_greedy_and_seeded),
		cmocka_unit_test(test_pool_covers_once),
		cmocka_unit_test(test_pool_wakes_sleepers),
		cmocka_unit_test(test_pool_idle_sleeps),
		cmocka_unit_test(test_arch_names),
		cmocka_unit_test(test_stop_names),
		cmocka_unit_test(test_refuse_unknown_arch),
		cmocka_unit_test(test_memory_plan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
