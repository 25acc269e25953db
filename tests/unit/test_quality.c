/* test_quality.c -- the quality gate: perplexity against llama.cpp, the
 * KL-base file (round trip, every malformed-header case), KL of a model
 * against itself, and the refusals of mismatched bases.
 *
 * The expected perplexity is tests/golden/quality/stories260K-ctx64.txt,
 * computed from llama.cpp's logits (llamapeer) by
 * tests/tools/gen_quality_golden.py; the command is in that file and in
 * tests/golden/quality/README. Agreement: the final PPL printed with 4
 * significant digits is the same string, each running PPL within 1e-4
 * relative. Model: $Q42_TEST_MODELS/stories260K.gguf (skipped when
 * absent, a failure under CI=true).
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

#include "common/q42_file.h"
#include "common/q42_le.h"
#include "engine/q42_engine.h"
#include "engine/q42_mount.h"
#include "measure/q42_quality.h"

static const char *srcdir(void)
{
	return getenv("Q42_SRCDIR") ? getenv("Q42_SRCDIR") : ".";
}

static bool model_path(char *path, size_t n)
{
	const char *md = getenv("Q42_TEST_MODELS");
	snprintf(path, n, "%s/stories260K.gguf", md && *md ? md : "../shared/models");
	if (access(path, R_OK) == 0)
		return true;
	if (getenv("CI") && strcmp(getenv("CI"), "true") == 0)
		fail_msg("missing %s under CI=true", path);
	return false;
}

struct golden {
	uint32_t ctx, n_tokens, n_chunks;
	double chunk[16], ppl, ppl_err;
};

static void read_golden(struct golden *g)
{
	char path[4096], line[512];
	FILE *f;
	memset(g, 0, sizeof *g);
	snprintf(path, sizeof path, "%s/tests/golden/quality/stories260K-ctx64.txt", srcdir());
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof line, f) != NULL) {
		unsigned k;
		double v;
		if (sscanf(line, "ctx\t%u", &g->ctx) == 1 || sscanf(line, "n_tokens\t%u", &g->n_tokens) == 1 ||
		    sscanf(line, "n_chunks\t%u", &g->n_chunks) == 1)
			continue;
		if (sscanf(line, "chunk\t%u\t%lf", &k, &v) == 2 && k >= 1 && k <= 16)
			g->chunk[k - 1] = v;
		else if (sscanf(line, "ppl_err\t%lf", &v) == 1)
			g->ppl_err = v;
		else if (sscanf(line, "ppl\t%lf", &v) == 1)
			g->ppl = v;
	}
	fclose(f);
	assert_true(g->ctx >= 4 && g->n_chunks >= 2 && g->n_chunks <= 16 && g->ppl > 1);
}

static void read_text(q42_map *m)
{
	char path[4096];
	q42_err err = {0};
	snprintf(path, sizeof path, "%s/tests/golden/quality/story.txt", srcdir());
	m->fd = -1;
	assert_int_equal(q42_map_open(m, path, 0, &err), Q42_OK);
}

struct seen {
	double ppl[16];
	uint32_t n;
};

static void on_chunk(void *ud, uint32_t chunk, uint32_t n_chunks, double ppl)
{
	struct seen *s = ud;
	assert_true(chunk == s->n + 1 && chunk <= n_chunks && chunk <= 16);
	s->ppl[s->n++] = ppl;
}

static void test_ppl_golden(void **state)
{
	char path[4096], a[32], b[32];
	struct golden g;
	struct seen seen = {0};
	q42_mount *m = NULL;
	q42_engine *e = NULL;
	q42_engine_opts eo = {0};
	q42_tokens ids = {0};
	q42_quality_report r;
	q42_map text;
	q42_err err = {0};
	(void)state;
	if (!model_path(path, sizeof path))
		skip();
	read_golden(&g);
	read_text(&text);
	assert_int_equal(q42_mount_open(&m, path, 0, &err), Q42_OK);
	eo.n_ctx = g.ctx;
	eo.isa = Q42_ISA_BEST;
	assert_int_equal(q42_engine_open(&e, m, &eo, &err), Q42_OK);
	assert_int_equal(q42_quality_tokenize(q42_mount_tokenizer(m), (const char *)text.data,
					      (size_t)text.size, &ids, &err), Q42_OK);
	assert_int_equal(ids.n, g.n_tokens);
	q42_quality_job job = {.ids = ids.ids, .n_ids = ids.n, .n_ctx = g.ctx,
			       .on_chunk = on_chunk, .ud = &seen};
	assert_int_equal(q42_quality_run(e, q42_mount_tokenizer(m), &job, &r, &err), Q42_OK);
	assert_int_equal(r.n_chunks, g.n_chunks);
	assert_int_equal(seen.n, g.n_chunks);
	for (uint32_t i = 0; i < g.n_chunks; i++)
		if (fabs(seen.ppl[i] / g.chunk[i] - 1) > 1e-4)
			fail_msg("chunk %u: PPL %.9g, llama.cpp %.9g", i + 1, seen.ppl[i], g.chunk[i]);
	snprintf(a, sizeof a, "%.4g", r.ppl);
	snprintf(b, sizeof b, "%.4g", g.ppl);
	if (strcmp(a, b) != 0)
		fail_msg("PPL %.9g, llama.cpp %.9g", r.ppl, g.ppl);
	if (fabs(r.ppl_err / g.ppl_err - 1) > 1e-3)
		fail_msg("PPL error %.9g, llama.cpp %.9g", r.ppl_err, g.ppl_err);
	assert_false(r.has_kl);

	/* fewer than two windows */
	job.n_ids = 2 * g.ctx - 1;
	assert_int_equal(q42_quality_run(e, q42_mount_tokenizer(m), &job, &r, &err), Q42_EARG);
	assert_non_null(strstr(err.msg, "2 windows"));
	q42_tokens_free(&ids);
	q42_map_close(&text);
	q42_engine_close(e);
	q42_mount_close(m);
}

static void test_kl_self(void **state)
{
	char path[4096], tmp[] = "/tmp/q42-klbase-XXXXXX";
	q42_mount *m = NULL;
	q42_engine *e = NULL;
	q42_engine_opts eo = {0};
	q42_tokens ids = {0};
	q42_quality_report r, rs;
	q42_klbase *kb = NULL;
	q42_map text;
	q42_err err = {0};
	FILE *f;
	int fd;
	(void)state;
	if (!model_path(path, sizeof path))
		skip();
	read_text(&text);
	assert_int_equal(q42_mount_open(&m, path, 0, &err), Q42_OK);
	eo.n_ctx = 64;
	assert_int_equal(q42_engine_open(&e, m, &eo, &err), Q42_OK);
	assert_int_equal(q42_quality_tokenize(q42_mount_tokenizer(m), (const char *)text.data,
					      (size_t)text.size, &ids, &err), Q42_OK);
	fd = mkstemp(tmp);
	assert_true(fd >= 0);
	f = fdopen(fd, "wb");
	assert_non_null(f);
	q42_quality_job job = {.ids = ids.ids, .n_ids = ids.n, .base_out = f};
	assert_int_equal(q42_quality_run(e, q42_mount_tokenizer(m), &job, &r, &err), Q42_OK);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(q42_klbase_open(&kb, tmp, &err), Q42_OK);
	assert_int_equal(q42_klbase_n_ctx(kb), 64);
	assert_int_equal(q42_klbase_n_chunks(kb), r.n_chunks);
	assert_int_equal(q42_klbase_n_vocab(kb), q42_engine_n_vocab(e));

	/* against itself, from the base's own tokens */
	q42_quality_job self = {.base = kb};
	assert_int_equal(q42_quality_run(e, q42_mount_tokenizer(m), &self, &rs, &err), Q42_OK);
	assert_true(rs.has_kl);
	assert_true(rs.kld_mean == 0 && rs.kld_max == 0 && rs.dp_rms == 0);
	assert_true(rs.same_top == 1);
	assert_true(rs.ppl == r.ppl && fabs(rs.ppl_base / r.ppl - 1) < 1e-6);

	/* refusals: other window, other tokens */
	self.n_ctx = 32;
	assert_int_equal(q42_quality_run(e, q42_mount_tokenizer(m), &self, &rs, &err), Q42_EARG);
	assert_non_null(strstr(err.msg, "windows of 64"));
	self.n_ctx = 0;
	self.ids = ids.ids;
	self.n_ids = ids.n;
	ids.ids[70] = ids.ids[70] == 5 ? 6 : 5;
	assert_int_equal(q42_quality_run(e, q42_mount_tokenizer(m), &self, &rs, &err), Q42_EARG);
	assert_non_null(strstr(err.msg, "token 70"));
	q42_klbase_close(kb);
	unlink(tmp);
	q42_tokens_free(&ids);
	q42_map_close(&text);
	q42_engine_close(e);
	q42_mount_close(m);
}

/* A valid 8-token, 1-window base; each case breaks one thing. */
static int open_crafted(void (*mutate)(uint8_t *, size_t *), q42_err *err)
{
	uint8_t b[80];
	size_t n = sizeof b;
	char tmp[] = "/tmp/q42-klbad-XXXXXX";
	q42_klbase *kb = NULL;
	int fd, rc;
	memset(b, 0, sizeof b);
	memcpy(b, Q42_KLBASE_MAGIC, 8);
	q42_st32(b + 8, Q42_KLBASE_VERSION);
	q42_st32(b + 12, 8);
	q42_st32(b + 16, 4);
	q42_st32(b + 20, 1);
	q42_st32(b + 24, UINT32_MAX);
	q42_st32(b + 28, 1);
	for (uint32_t i = 0; i < 4; i++)
		q42_st32(b + 32 + i * 4, i + 1);
	if (mutate != NULL)
		mutate(b, &n);
	fd = mkstemp(tmp);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, n), (ssize_t)n);
	close(fd);
	rc = q42_klbase_open(&kb, tmp, err);
	q42_klbase_close(kb);
	unlink(tmp);
	return rc;
}

static void bad_magic(uint8_t *b, size_t *n) { (void)n; b[3] ^= 1; }
static void bad_version(uint8_t *b, size_t *n) { (void)n; q42_st32(b + 8, 2); }
static void bad_vocab(uint8_t *b, size_t *n) { (void)n; q42_st32(b + 12, 0); }
static void bad_ctx(uint8_t *b, size_t *n) { (void)n; q42_st32(b + 16, 3); }
static void bad_chunks(uint8_t *b, size_t *n) { (void)n; q42_st32(b + 20, 2); }
static void bad_bos(uint8_t *b, size_t *n) { (void)n; q42_st32(b + 24, 8); }
static void bad_scored(uint8_t *b, size_t *n) { (void)n; q42_st32(b + 28, 2); }
static void bad_token(uint8_t *b, size_t *n) { (void)n; q42_st32(b + 40, 8); }
static void truncated(uint8_t *b, size_t *n) { (void)b; *n -= 1; }
static void short_header(uint8_t *b, size_t *n) { (void)b; *n = 20; }
static void huge(uint8_t *b, size_t *n) { (void)n; q42_st32(b + 20, UINT32_MAX); }

static void test_klbase_malformed(void **state)
{
	static const struct {
		void (*f)(uint8_t *, size_t *);
		const char *msg;
	} cases[] = {
		{bad_magic, "magic"}, {bad_version, "version"}, {bad_vocab, "n_vocab"},
		{bad_ctx, "n_ctx"}, {bad_chunks, "size"}, {bad_bos, "bos"},
		{bad_scored, "n_scored"}, {bad_token, "token 2"}, {truncated, "size"},
		{short_header, "magic"}, {huge, "size"},
	};
	q42_err err = {0};
	(void)state;
	assert_int_equal(open_crafted(NULL, &err), Q42_OK);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		assert_int_equal(open_crafted(cases[i].f, &err), Q42_EFORMAT);
		if (strstr(err.msg, cases[i].msg) == NULL)
			fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_klbase_malformed),
		cmocka_unit_test(test_ppl_golden),
		cmocka_unit_test(test_kl_self),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
