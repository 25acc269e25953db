/* test_p64.c -- the P64 container: round trips over every shared GGUF,
 * determinism, hostile files, writer refusals, roles and digests.
 *
 * Expected values come from outside q42's P64 code: the source GGUF bytes
 * themselves (the rebuild must equal them), q42_hparams_from_gguf and
 * q42_vocab_from_gguf (the lead's GGUF side), REFERENCE.md facts about
 * stories260K (5 layers, n_embd 64, vocab 512), llama.cpp's tensor naming,
 * FIPS 180-2 (SHA-256 "abc") and RFC 8032 section 7.1 TEST 1 (Ed25519).
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
#include <openssl/evp.h>
#include "p64_testlib.h"
#include "common/q42_crc32c.h"
#include "common/q42_le.h"
#include "formats/q42_digest.h"
#include "formats/q42_model.h"
#include "formats/q42_p64.h"
#include "formats/q42_roles.h"
#include "kernels/q42_kernels.h"
#include "tokenizer/q42_tokenizer.h"

/* ---- Round trip over the shared models and vocabularies ------------- */

static void check_vocab_equal(const q42_vocab *a, const q42_vocab *b)
{
	assert_int_equal(a->n_tokens, b->n_tokens);
	assert_int_equal(a->n_merges, b->n_merges);
	assert_true(a->model.len == b->model.len && memcmp(a->model.p, b->model.p, a->model.len) == 0);
	assert_true(a->pre.len == b->pre.len && (a->pre.len == 0 || memcmp(a->pre.p, b->pre.p, a->pre.len) == 0));
	for (uint32_t i = 0; i < a->n_tokens; i++) {
		assert_int_equal(a->tokens[i].len, b->tokens[i].len);
		assert_memory_equal(a->tokens[i].p, b->tokens[i].p, a->tokens[i].len);
	}
	for (uint32_t i = 0; i < a->n_merges; i++) {
		assert_int_equal(a->merges[i].len, b->merges[i].len);
		assert_memory_equal(a->merges[i].p, b->merges[i].p, a->merges[i].len);
	}
	assert_true((a->scores == NULL) == (b->scores == NULL));
	if (a->scores)
		assert_memory_equal(a->scores, b->scores, a->n_tokens * sizeof *a->scores);
	assert_true((a->types == NULL) == (b->types == NULL));
	if (a->types)
		assert_memory_equal(a->types, b->types, a->n_tokens * sizeof *a->types);
	assert_int_equal(a->bos, b->bos);
	assert_int_equal(a->eos, b->eos);
	assert_int_equal(a->eot, b->eot);
	assert_int_equal(a->eom, b->eom);
	assert_int_equal(a->unk, b->unk);
	assert_int_equal(a->sep, b->sep);
	assert_int_equal(a->pad, b->pad);
	assert_int_equal(a->mask, b->mask);
	assert_int_equal(a->add_bos, b->add_bos);
	assert_int_equal(a->add_eos, b->add_eos);
	assert_int_equal(a->add_space_prefix, b->add_space_prefix);
	assert_int_equal(a->remove_extra_whitespaces, b->remove_extra_whitespaces);
	assert_int_equal(a->charsmap.len, b->charsmap.len);
	if (a->charsmap.len)
		assert_memory_equal(a->charsmap.p, b->charsmap.p, a->charsmap.len);
}

/* The tokenizer built from the P64 gives the ids of the one built from the
 * GGUF: on llama.cpp's test text next to the file (PATH.inp) when there is
 * one, else on a fixed sample; a vocabulary q42 does not tokenize is
 * refused the same way from both. */
static void check_same_ids(const q42_vocab *from_gguf, const q42_vocab *from_p64, const char *path)
{
	static const char sample[] = " Hello world <s>\n\n  3333 caf\xc3\xa9 \xf0\x9f\xa6\x99 \xe2\x91\xa0";
	q42_tokenizer *a = NULL, *b = NULL;
	q42_tokens ta = {0}, tb = {0};
	q42_err err;
	char inp[4200];
	uint8_t *text = NULL;
	size_t n = 0;
	int ra = q42_tokenizer_open(&a, from_gguf, &err);
	int rb = q42_tokenizer_open(&b, from_p64, &err);
	assert_int_equal(ra, rb);
	if (ra != Q42_OK)
		return;
	snprintf(inp, sizeof inp, "%s.inp", path);
	if (!t_read_file(inp, &text, &n)) {
		text = NULL;
		n = sizeof sample - 1;
	}
	const char *s = text ? (const char *)text : sample;
	unsigned fl = Q42_TOKENIZE_ADD_SPECIAL | Q42_TOKENIZE_PARSE_SPECIAL;
	assert_int_equal(q42_tokenizer_encode(a, s, n, fl, &ta, &err), Q42_OK);
	assert_int_equal(q42_tokenizer_encode(b, s, n, fl, &tb, &err), Q42_OK);
	print_message("# %s: %zu ids from GGUF and P64 vocabularies\n", path, ta.n);
	assert_true(ta.n > 0);
	assert_int_equal(ta.n, tb.n);
	assert_memory_equal(ta.ids, tb.ids, ta.n * sizeof *ta.ids);
	q42_tokens_free(&ta);
	q42_tokens_free(&tb);
	q42_tokenizer_close(a);
	q42_tokenizer_close(b);
	free(text);
}

/* One GGUF: compile (file and pipe, twice), open, compare everything the
 * P64 exposes with the GGUF side, rebuild byte-exact, prove, and check the
 * proof notices a changed byte. */
static void round_trip(const char *path, const uint8_t *src, size_t n)
{
	uint8_t *a, *b, *c, *back;
	size_t na, nb, nc, nback;
	q42_err err;
	q42_gguf g;
	q42_p64 p;

	print_message("# %s\n", path);
	assert_int_equal(q42_gguf_parse(&g, src, n, path, &err), Q42_OK);
	assert_int_equal(t_compile(src, n, 0, true, &a, &na, &err), Q42_OK);
	assert_int_equal(t_compile(src, n, 0, true, &b, &nb, &err), Q42_OK);
	assert_int_equal(t_compile(src, n, 0, false, &c, &nc, &err), Q42_OK);
	assert_int_equal(na, nb);
	assert_memory_equal(a, b, na);
	assert_int_equal(na, nc);
	assert_memory_equal(a, c, na);

	int rc = q42_p64_open(&p, a, na, path, &err);
	if (rc != Q42_OK)
		fail_msg("open: %s", err.msg);
	assert_int_equal(p.n_tensors, g.n_tensors);
	assert_true(p.flags & Q42_P64_F_BYTE_PRESERVING);
	for (uint64_t i = 0; i < p.n_tensors; i++) {
		const q42_p64_tensor *t = &p.tensors[i];
		assert_int_equal(t->offset % 4096, 0);
		assert_int_equal(t->dtype, g.tensors[i].type);
		assert_int_equal(t->source_offset, g.tensors[i].abs_offset);
		assert_int_equal(t->crc, q42_crc32c_portable(0, t->data, t->nbytes));
	}

	q42_hparams hp;
	memset(&err, 0, sizeof err);
	bool has_hp = q42_hparams_from_gguf(&hp, &g, &err) == Q42_OK;
	assert_int_equal(p.has_hparams, has_hp);
	if (has_hp)
		assert_memory_equal(&p.hparams, &hp, sizeof hp);
	q42_vocab v;
	bool has_v = q42_vocab_from_gguf(&v, &g, &err) == Q42_OK;
	assert_int_equal(p.has_vocab, has_v);
	if (has_v) {
		check_vocab_equal(&p.vocab, &v);
		check_same_ids(&v, &p.vocab, path);
		q42_vocab_free(&v);
	}
	assert_int_equal((p.flags & Q42_P64_F_BOOTABLE) != 0, has_hp && has_v && g.n_tensors > 0);

	assert_int_equal(t_rebuild(&p, &back, &nback, &err), Q42_OK);
	assert_int_equal(nback, n);
	assert_memory_equal(back, src, n);
	if (q42_p64_against(&p, &g, &err) != Q42_OK)
		fail_msg("against: %s", err.msg);

	/* The proof must notice one changed tensor byte, naming the tensor. */
	if (g.n_tensors > 0) {
		uint8_t *mod = malloc(n);
		memcpy(mod, src, n);
		const q42_gguf_tensor *t = &g.tensors[g.n_tensors / 2];
		uint64_t at = t->abs_offset + (t->nbytes ? t->nbytes / 2 : 0);
		mod[at] ^= 0x10;
		q42_gguf g2;
		assert_int_equal(q42_gguf_parse(&g2, mod, n, "mod", &err), Q42_OK);
		assert_int_equal(q42_p64_against(&p, &g2, &err), Q42_EFORMAT);
		assert_non_null(strstr(err.msg, "tensor"));
		char nm[256];
		snprintf(nm, sizeof nm, "%.*s", (int)t->name.len, t->name.p);
		assert_non_null(strstr(err.msg, nm));
		q42_gguf_free(&g2);
		free(mod);
	}
	q42_p64_close(&p);
	q42_gguf_free(&g);
	free(a);
	free(b);
	free(c);
	free(back);
}

static void round_trip_dir(const char *env)
{
	const char *dir;
	T_NEED_DIR(dir, env);
	char **l = t_list_gguf(dir);
	int count = 0;
	for (size_t i = 0; l[i] != NULL; i++) {
		uint8_t *src;
		size_t n;
		assert_true(t_read_file(l[i], &src, &n));
		round_trip(l[i], src, n);
		free(src);
		count++;
	}
	t_free_list(l);
	if (count == 0 && t_ci())
		fail_msg("no .gguf files in %s", dir);
}

/* HPAR's ColBERT fields (p64(5)): q42's colbert.* GGUF keys round-trip
 * through a P64, and a bad flag, reserved field or empty word is refused
 * by name. */
static void test_colbert_fields(void **state)
{
	(void)state;
	static const char *const skip[] = {",", "and"};
	const float emb[64] = {0};
	const uint64_t ne88[2] = {8, 8};
	tgguf t;
	size_t n, na;
	uint8_t *src, *a;
	q42_p64 p;
	q42_err err;
	q42_hparams hp;
	q42_gguf g;
	tg_init(&t);
	tg_str(&t, "general.architecture", "lfm2");
	tg_u32(&t, "lfm2.block_count", 1);
	tg_u32(&t, "lfm2.embedding_length", 8);
	tg_u32(&t, "lfm2.attention.head_count", 2);
	tg_str(&t, "colbert.query_prefix", "[q] ");
	tg_str(&t, "colbert.document_prefix", "");
	tg_u32(&t, "colbert.query_length", 24);
	tg_bool(&t, "colbert.attend_to_expansion_tokens", true);
	tg_arr_str(&t, "colbert.skiplist_words", skip, 2);
	tg_tensor(&t, "token_embd.weight", 2, ne88, 0, emb, sizeof emb);
	src = tg_finish(&t, &n, NULL, 0);
	assert_int_equal(q42_gguf_parse(&g, src, n, "g", &err), Q42_OK);
	assert_int_equal(q42_hparams_from_gguf(&hp, &g, &err), Q42_OK);
	assert_int_equal(hp.cb_flags, Q42_COLBERT_QUERY_PREFIX | Q42_COLBERT_DOC_PREFIX |
					      Q42_COLBERT_SKIPLIST | Q42_COLBERT_ATTEND_SET |
					      Q42_COLBERT_ATTEND);
	assert_int_equal(hp.cb_skip_len, 6);
	assert_memory_equal(hp.cb_skip, ",\0and\0", 6);
	q42_gguf_free(&g);
	assert_int_equal(t_compile(src, n, 0, true, &a, &na, &err), Q42_OK);
	assert_int_equal(q42_p64_open(&p, a, na, "cb", &err), Q42_OK);
	assert_string_equal(p.hparams.cb_query_prefix, "[q] ");
	assert_string_equal(p.hparams.cb_doc_prefix, "");
	assert_int_equal(p.hparams.cb_query_len, 24);
	assert_int_equal(p.hparams.cb_doc_len, 0);
	assert_int_equal(p.hparams.cb_flags, hp.cb_flags);
	assert_int_equal(p.hparams.cb_skip_len, 6);
	assert_memory_equal(p.hparams.cb_skip, hp.cb_skip, 6);
	const q42_p64_section *s = q42_p64_find_section(&p, Q42_P64_SEC_HPAR);
	const uint64_t at = s->offset + s->length - Q42_P64_HPARAMS_COLBERT;
	q42_p64_close(&p);
	/* flags 32 (unknown), then the reserved field, then bit 4 alone */
	const struct {
		uint64_t off;
		uint32_t v;
	} bad[] = {{32, 0x3F}, {36, 1}, {32, Q42_COLBERT_ATTEND}};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		uint8_t *c = malloc(na);
		memcpy(c, a, na);
		q42_st32(c + at + bad[i].off, bad[i].v);
		t_reseal(c, na);
		assert_int_equal(q42_p64_open(&p, c, na, "cb", &err), Q42_EFORMAT);
		assert_non_null(strstr(err.msg, "ColBERT fields"));
		free(c);
	}
	free(a);
	free(src);
}

static void test_round_trip_models(void **state)
{
	(void)state;
	round_trip_dir("Q42_TEST_MODELS");
}

static void test_round_trip_vocab(void **state)
{
	(void)state;
	round_trip_dir("Q42_TEST_VOCAB");
}

/* stories260K facts from REFERENCE.md, and manifold RMS values recomputed
 * here straight from the GGUF f32 weights (small tensors are not sampled). */
static void test_stories_facts(void **state)
{
	(void)state;
	const char *dir;
	char path[4096];
	uint8_t *src, *a;
	size_t n, na;
	q42_err err;
	q42_gguf g;
	q42_p64 p;
	T_NEED_DIR(dir, "Q42_TEST_MODELS");
	snprintf(path, sizeof path, "%s/stories260K.gguf", dir);
	if (!t_read_file(path, &src, &n)) {
		if (t_ci())
			fail_msg("%s missing", path);
		skip();
	}
	assert_int_equal(t_compile(src, n, 0, true, &a, &na, &err), Q42_OK);
	assert_int_equal(q42_p64_open(&p, a, na, "stories", &err), Q42_OK);
	assert_int_equal(q42_gguf_parse(&g, src, n, "stories", &err), Q42_OK);
	assert_string_equal(p.hparams.arch, "llama");
	assert_int_equal(p.hparams.n_layer, 5);
	assert_int_equal(p.hparams.n_embd, 64);
	assert_int_equal(p.hparams.n_head, 8);
	assert_int_equal(p.hparams.n_head_kv[4], 4);
	assert_int_equal(p.hparams.n_ff[0], 172);
	assert_int_equal(p.vocab.n_tokens, 512);
	assert_int_equal(p.vocab.bos, 1);
	assert_true(p.flags & Q42_P64_F_BOOTABLE);
	assert_int_equal(p.n_manifold, 6);
	const q42_p64_tensor *t = q42_p64_find_tensor(&p, "blk.3.ffn_down.weight");
	assert_non_null(t);
	assert_int_equal(t->role, Q42_ROLE_FFN_DOWN);
	assert_int_equal(t->layer, 3);
	assert_int_equal(t->rank, 2);
	assert_int_equal(t->dims[0], 172);
	assert_int_equal(t->dims[1], 64);

	/* Layer 2 norms: attn_norm and ffn_norm, 64 f32 each, all elements. */
	const q42_gguf_tensor *an = q42_gguf_find_tensor(&g, "blk.2.attn_norm.weight");
	const q42_gguf_tensor *fn = q42_gguf_find_tensor(&g, "blk.2.ffn_norm.weight");
	assert_non_null(an);
	assert_non_null(fn);
	double s = 0;
	for (int i = 0; i < 64; i++) {
		double x = q42_ldf32(an->data + 4 * i), y = q42_ldf32(fn->data + 4 * i);
		s += x * x + y * y;
	}
	float want = (float)sqrt(s / 128.0);
	const q42_p64_manifold *m = &p.manifold[2];
	assert_int_equal(m->layer, 2);
	assert_true(m->coord_mask & (1u << Q42_P64_COORD_NORM));
	assert_true(fabsf(m->coord[Q42_P64_COORD_NORM] - want) <= 1e-6f * want);
	assert_int_equal(m->n_tensors, 9);
	assert_int_equal(p.manifold[5].layer, -1);
	assert_int_equal(p.manifold[5].n_tensors, p.n_tensors);
	/* attn_q of layer 0 is 64x64 = 4096 elements = 16 chunks: exact too. */
	const q42_gguf_tensor *q = q42_gguf_find_tensor(&g, "blk.0.attn_q.weight");
	s = 0;
	for (uint64_t i = 0; i < q->n_elems; i++) {
		double x = q42_ldf32(q->data + 4 * i);
		s += x * x;
	}
	want = (float)sqrt(s / (double)q->n_elems);
	assert_true(fabsf(p.manifold[0].coord[Q42_P64_COORD_ATTN_Q] - want) <= 1e-6f * want);
	q42_p64_close(&p);
	q42_gguf_free(&g);
	free(a);
	free(src);
}

/* ---- Synthetic inputs ------------------------------------------------ */

static void test_synthetic(void **state)
{
	(void)state;
	size_t n, na, nb;
	uint8_t *src = tg_synthetic(&n), *a, *back;
	q42_err err;
	q42_p64 p;
	for (uint32_t pl = 12; pl <= 21; pl += 9) {
		assert_int_equal(t_compile(src, n, pl, true, &a, &na, &err), Q42_OK);
		if (q42_p64_open(&p, a, na, "synthetic", &err) != Q42_OK)
			fail_msg("%s", err.msg);
		assert_int_equal(p.page_log2, pl);
		assert_int_equal(p.n_tensors, 5);
		const q42_p64_tensor *m = q42_p64_find_tensor(&p, "blk.0.mystery.weight");
		assert_non_null(m);
		assert_int_equal(m->role, Q42_ROLE_UNKNOWN);
		assert_int_equal(m->layer, 0);
		const q42_p64_tensor *u = q42_p64_find_tensor(&p, "vendor_blob");
		assert_non_null(u);
		assert_int_equal(u->dtype, 31);
		assert_int_equal(u->nbytes, 100); /* distance to the end of the file */
		assert_int_equal(u->data[0], 1);
		assert_int_equal(u->data[99], (uint8_t)(99 * 7 + 1));
		assert_int_equal(u->offset % (1ull << pl), 0);
		assert_true(p.flags & Q42_P64_F_BOOTABLE);
		/* vendor_blob cannot be decoded; attn_q (f16) only without kernels. */
		const q42_type_kernels *k16 = q42_kernels_get(Q42_DTYPE_F16, Q42_ISA_SCALAR);
		assert_int_equal(p.manifold[1].n_skipped, k16 && k16->dequant ? 1 : 2);
		assert_string_equal(p.prov.policy.p, "byte-preserving");
		assert_string_equal(p.prov.tool.p, "test 1");
		uint8_t sha[32];
		assert_int_equal(q42_sha256(src, n, sha, &err), Q42_OK);
		assert_memory_equal(p.prov.source_sha256, sha, 32);
		assert_int_equal(p.prov.source_size, n);
		assert_int_equal(t_rebuild(&p, &back, &nb, &err), Q42_OK);
		assert_int_equal(nb, n);
		assert_memory_equal(back, src, n);
		free(back);
		q42_p64_close(&p);
		free(a);
	}
	free(src);
}

static void test_vocab_only_and_empty(void **state)
{
	(void)state;
	static const char *const toks[] = {"a", "b"};
	size_t n, na;
	q42_err err;
	q42_p64 p;
	tgguf t;
	tg_init(&t);
	tg_str(&t, "general.architecture", "llama");
	tg_str(&t, "tokenizer.ggml.model", "gpt2");
	tg_arr_str(&t, "tokenizer.ggml.tokens", toks, 2);
	uint8_t *src = tg_finish(&t, &n, NULL, 0), *a;
	assert_int_equal(t_compile(src, n, 0, true, &a, &na, &err), Q42_OK);
	assert_int_equal(q42_p64_open(&p, a, na, "vocab-only", &err), Q42_OK);
	assert_int_equal(p.n_tensors, 0);
	assert_true(p.has_vocab);
	assert_false(p.has_hparams);
	assert_int_equal(p.flags & Q42_P64_F_BOOTABLE, 0);
	assert_int_equal(p.n_manifold, 1);
	assert_int_equal(p.vocab.n_merges, 0);
	assert_null(p.vocab.scores);
	q42_p64_close(&p);
	free(a);
	free(src);

	/* No tokenizer, no architecture, no tensors: still a valid P64. */
	tg_init(&t);
	tg_str(&t, "general.name", "nothing");
	src = tg_finish(&t, &n, NULL, 0);
	assert_int_equal(t_compile(src, n, 0, true, &a, &na, &err), Q42_OK);
	assert_int_equal(q42_p64_open(&p, a, na, "empty", &err), Q42_OK);
	assert_false(p.has_vocab);
	assert_false(p.has_hparams);
	assert_int_equal(p.flags, Q42_P64_F_BYTE_PRESERVING);
	q42_p64_close(&p);
	free(a);
	free(src);
}

/* Nonzero bytes the rebuild could not reproduce make the writer refuse. */
static void test_refuse_nonzero_gaps(void **state)
{
	(void)state;
	const float w[3] = {1, 2, 3};
	const uint64_t ne[1] = {3};
	size_t n, na;
	uint8_t *src, *a;
	q42_err err;
	tgguf t;

	tg_init(&t);
	tg_str(&t, "general.name", "pad");
	tg_tensor(&t, "a.weight", 1, ne, 0, w, sizeof w);
	t.pad_byte = 0xAA;
	tg_tensor(&t, "b.weight", 1, ne, 0, w, sizeof w);
	src = tg_finish(&t, &n, NULL, 0);
	assert_int_equal(t_compile(src, n, 0, true, &a, &na, &err), Q42_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "refusing"));
	free(src);

	static const uint8_t tail[4] = {0, 0, 7, 0};
	tg_init(&t);
	tg_str(&t, "general.name", "tail");
	tg_tensor(&t, "a.weight", 1, ne, 0, w, sizeof w);
	src = tg_finish(&t, &n, tail, sizeof tail);
	/* The trailing bytes sit after the 12-byte tensor, inside the file. */
	assert_int_equal(t_compile(src, n, 0, true, &a, &na, &err), Q42_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "after the last tensor"));
	free(src);

	static const uint8_t zeros[40] = {0};
	tg_init(&t);
	tg_str(&t, "general.name", "zero tail");
	tg_tensor(&t, "a.weight", 1, ne, 0, w, sizeof w);
	src = tg_finish(&t, &n, zeros, sizeof zeros);
	assert_int_equal(t_compile(src, n, 0, true, &a, &na, &err), Q42_OK);
	q42_p64 p;
	uint8_t *back;
	size_t nb;
	assert_int_equal(q42_p64_open(&p, a, na, "zt", &err), Q42_OK);
	assert_int_equal(t_rebuild(&p, &back, &nb, &err), Q42_OK);
	assert_int_equal(nb, n);
	assert_memory_equal(back, src, n);
	q42_p64_close(&p);
	free(back);
	free(a);
	free(src);

	src = tg_synthetic(&n);
	assert_int_equal(t_compile(src, n, 11, true, &a, &na, &err), Q42_EARG);
	free(src);
}

/* ---- Hostile P64s ------------------------------------------------------ */

typedef struct hostile {
	uint8_t *d;
	size_t n;
	uint64_t sec[Q42_P64_MAX_SECTIONS]; /* section offsets by id */
	uint64_t table, tdsc, meta_end;
} hostile;

static void h_load(hostile *h)
{
	size_t n;
	uint8_t *src = tg_synthetic(&n);
	q42_err err;
	q42_p64 p;
	assert_int_equal(t_compile(src, n, 0, true, &h->d, &h->n, &err), Q42_OK);
	free(src);
	assert_int_equal(q42_p64_open(&p, h->d, h->n, "h", &err), Q42_OK);
	for (uint32_t i = 0; i < p.n_sections; i++)
		h->sec[p.sections[i].id] = p.sections[i].offset;
	h->table = q42_ld64(h->d + 24);
	h->tdsc = h->sec[Q42_P64_SEC_TDSC];
	h->meta_end = p.meta_end;
	q42_p64_close(&p);
}

/* Open the edited, resealed image; it must fail naming what. */
static void h_expect(hostile *h, bool reseal, const char *what)
{
	q42_err err;
	q42_p64 p;
	if (reseal)
		t_reseal(h->d, h->n);
	int rc = q42_p64_open(&p, h->d, h->n, "h", &err);
	if (rc != Q42_EFORMAT)
		fail_msg("expected a failure naming '%s', got rc %d (%s)", what, rc,
			 rc ? err.msg : "accepted");
	if (strstr(err.msg, what) == NULL)
		fail_msg("expected '%s' in: %s", what, err.msg);
	print_message("# ok: %s\n", err.msg);
	free(h->d);
	h_load(h);
}

static uint8_t *desc(hostile *h, int i)
{
	return h->d + h->tdsc + (uint64_t)i * Q42_P64_DESC_SIZE;
}

static uint8_t *entry(hostile *h, int i)
{
	return h->d + h->table + (uint64_t)i * Q42_P64_SECTION_ENTRY_SIZE;
}

static void test_hostile(void **state)
{
	(void)state;
	hostile h;
	h_load(&h);

	h.d[1] = 'X';
	h_expect(&h, true, "magic");
	q42_st32(h.d + 4, 2);
	h_expect(&h, true, "version");
	q42_st32(h.d + 8, 0x04030201u);
	h_expect(&h, true, "byte-order");
	q42_st32(h.d + 12, 11);
	h_expect(&h, true, "page_log2");
	q42_st32(h.d + 12, 22);
	h_expect(&h, true, "page_log2");
	h.d[20] ^= 1;
	h_expect(&h, false, "header: CRC");
	q42_st64(h.d + 16, h.n + 1);
	h_expect(&h, true, "file size");
	q42_st32(h.d + 36, 0x100);
	h_expect(&h, true, "unknown bits");
	q42_st32(h.d + 36, q42_ld32(h.d + 36) & ~(uint32_t)Q42_P64_F_HAS_TOKENIZER);
	h_expect(&h, true, "flags");
	q42_st32(h.d + 36, q42_ld32(h.d + 36) & ~(uint32_t)Q42_P64_F_BOOTABLE);
	h_expect(&h, true, "bootable");
	q42_st64(h.d + 40, h.meta_end - 8);
	h_expect(&h, true, "metadata end");
	q42_st32(h.d + 32, 9);
	h_expect(&h, true, "section count");

	/* Section table: order, overlap, alignment, bounds, tags. */
	uint8_t tmp[32];
	memcpy(tmp, entry(&h, 0), 32);
	memcpy(entry(&h, 0), entry(&h, 1), 32);
	memcpy(entry(&h, 1), tmp, 32);
	h_expect(&h, true, "out of order");
	q42_st64(entry(&h, 2) + 8, q42_ld64(entry(&h, 1) + 8) + 8);
	h_expect(&h, true, "overlaps");
	q42_st64(entry(&h, 1) + 8, q42_ld64(entry(&h, 1) + 8) + 4);
	h_expect(&h, true, "multiple of 8");
	q42_st64(entry(&h, 6) + 16, q42_ld64(entry(&h, 6) + 16) + 4096);
	h_expect(&h, true, "past the metadata end");
	memcpy(entry(&h, 1), "ABCD", 4);
	h_expect(&h, true, "unknown tag");
	entry(&h, 1)[24] ^= 1;
	h_expect(&h, false, "section table: CRC");
	h.d[h.sec[Q42_P64_SEC_Q42T] + 70] ^= 4;
	h_expect(&h, false, "section Q42T");

	/* String refs. */
	q42_st32(desc(&h, 0), 0x7FFFFFF0u);
	h_expect(&h, true, "bad string ref");
	q42_st32(desc(&h, 0) + 4, q42_ld32(desc(&h, 0) + 4) + 1);
	h_expect(&h, true, "bad string ref");
	q42_st32(h.d + h.sec[Q42_P64_SEC_Q42T] + 64, 0xFFFFFFFFu);
	h_expect(&h, true, "token 0");
	h.d[h.sec[Q42_P64_SEC_STRS]] = 'x';
	h_expect(&h, true, "STRS");

	/* Descriptors. */
	q42_st32(desc(&h, 1) + 28, 5);
	h_expect(&h, true, "rank");
	q42_st32(desc(&h, 1) + 28, 0);
	h_expect(&h, true, "rank");
	q42_st64(desc(&h, 1) + 40, 2);
	h_expect(&h, true, "dims[1] beyond rank");
	q42_st64(desc(&h, 1) + 8, 12345);
	h_expect(&h, true, "name hash");
	q42_st32(desc(&h, 1) + 20, Q42_ROLE_COUNT_);
	h_expect(&h, true, "role");
	q42_st32(desc(&h, 1) + 24, 1);
	h_expect(&h, true, "manifold index");
	q42_st32(desc(&h, 1) + 24, (uint32_t)-2);
	h_expect(&h, true, "manifold index");
	q42_st32(desc(&h, 1) + 16, 30); /* bf16: wrong length for 8 elements of f32 */
	h_expect(&h, true, "length of a bf16");
	q42_st64(desc(&h, 1) + 64, q42_ld64(desc(&h, 1) + 64) + 64);
	h_expect(&h, true, "not aligned");
	q42_st64(desc(&h, 1) + 64, q42_ld64(desc(&h, 0) + 64));
	h_expect(&h, true, "overlaps");
	q42_st64(desc(&h, 4) + 64, (h.n + 4095) / 4096 * 4096);
	h_expect(&h, true, "outside the file");
	q42_st64(desc(&h, 4) + 72, UINT64_MAX - 100);
	h_expect(&h, true, "outside the file");
	q42_st64(desc(&h, 2) + 80, 3);
	h_expect(&h, true, "source range");
	q42_st32(desc(&h, 2) + 92, 1);
	h_expect(&h, true, "reserved");
	memcpy(desc(&h, 1), desc(&h, 0), 16); /* same name ref and hash */
	h_expect(&h, true, "duplicate");

	/* Manifold records. */
#define mani (h.d + h.sec[Q42_P64_SEC_MANI]) /* h.d moves on every reload */
#define hpar (h.d + h.sec[Q42_P64_SEC_HPAR])
#define tok (h.d + h.sec[Q42_P64_SEC_Q42T])
	q42_st32(mani, 7);
	h_expect(&h, true, "manifold record 0");
	q42_st32(mani + 64, 0);
	h_expect(&h, true, "manifold record 1");
	q42_st32(mani + 16, 0x400);
	h_expect(&h, true, "mask");
	q42_st32(mani + 24 + 4 * 9, 0x7FC00000u); /* NaN */
	h_expect(&h, true, "coordinate all");
	q42_st32(mani + 16, 0);
	h_expect(&h, true, "coordinate");

	/* Hyperparameters, tokenizer, provenance. */
	q42_st32(hpar + 44, 513);
	h_expect(&h, true, "n_layer");
	hpar[20] = 'x'; /* after the NUL of "llama" */
	h_expect(&h, true, "architecture");
	q42_st32(tok + 28, 8);
	h_expect(&h, true, "bos");
	tok[61] = 2;
	h_expect(&h, true, "add_eos");
	q42_st32(tok + 16, 0);
	h_expect(&h, true, "token count");
	q42_st32(tok + 24, 8);
	h_expect(&h, true, "flags");
	q42_st32(tok + 24, 4); /* a charsmap ref the length does not hold */
	h_expect(&h, true, "length");
	q42_st32(h.d + h.sec[Q42_P64_SEC_PROV] + 40, 2);
	h_expect(&h, true, "source format");
	q42_st64(h.d + h.sec[Q42_P64_SEC_PROV] + 32, 10);
	h_expect(&h, true, "source size");
	h.d[h.sec[Q42_P64_SEC_GGUF]] = 'X';
	h_expect(&h, true, "GGUF magic");
#undef mani
#undef hpar
#undef tok

	/* Padding: between sections, after the metadata, between blobs, and
	 * at the end; also a blob byte (tensor CRC). */
	h.d[h.meta_end + 1] = 0x20;
	h_expect(&h, true, "padding at offset");
	h.d[q42_ld64(desc(&h, 0) + 64) + q42_ld64(desc(&h, 0) + 72) + 3] = 1;
	h_expect(&h, true, "padding at offset");
	{
		q42_p64 p;
		q42_err err;
		assert_int_equal(q42_p64_open(&p, h.d, h.n, "h", &err), Q42_OK);
		uint64_t gap = 0;
		for (uint32_t i = 0; i + 1 < p.n_sections && gap == 0; i++)
			if (p.sections[i].offset + p.sections[i].length < p.sections[i + 1].offset)
				gap = p.sections[i].offset + p.sections[i].length;
		q42_p64_close(&p);
		if (gap != 0) {
			h.d[gap] = 9;
			h_expect(&h, true, "padding at offset");
		}
	}
	h.d[q42_ld64(desc(&h, 2) + 64)] ^= 0x80;
	h_expect(&h, false, "tensor blk.0.attn_q.weight");

	/* A P64 extended with one nonzero byte (size field updated). */
	uint8_t *big = realloc(h.d, h.n + 1);
	h.d = big;
	h.d[h.n] = 5;
	h.n++;
	q42_st64(h.d + 16, h.n);
	t_reseal(h.d, h.n);
	{
		q42_p64 p;
		q42_err err;
		assert_int_equal(q42_p64_open(&p, h.d, h.n, "h", &err), Q42_EFORMAT);
		assert_non_null(strstr(err.msg, "padding at offset"));
	}
	free(h.d);

	/* A GGUF is not a P64, and an empty input is not either. */
	{
		size_t n;
		uint8_t *src = tg_synthetic(&n);
		q42_p64 p;
		q42_err err;
		assert_false(q42_p64_is_p64(src, n));
		assert_int_equal(q42_p64_open(&p, src, n, "g", &err), Q42_EFORMAT);
		assert_non_null(strstr(err.msg, "magic"));
		assert_int_equal(q42_p64_open(&p, NULL, 0, "empty", &err), Q42_EFORMAT);
		assert_non_null(strstr(err.msg, "header"));
		free(src);
	}
}

/* ---- Roles ---------------------------------------------------------- */

static void test_roles(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		uint32_t role;
		int32_t layer;
	} cases[] = {
		{"token_embd.weight", Q42_ROLE_TOKEN_EMBD, -1},
		{"output_norm.weight", Q42_ROLE_OUTPUT_NORM, -1},
		{"output.weight", Q42_ROLE_OUTPUT, -1},
		{"rope_freqs.weight", Q42_ROLE_ROPE_FREQS, -1},
		{"token_embd_norm.weight", Q42_ROLE_TOKEN_EMBD_NORM, -1},
		{"rope_factors_long.weight", Q42_ROLE_ROPE_FACTORS_LONG, -1},
		{"blk.0.attn_norm.weight", Q42_ROLE_ATTN_NORM, 0},
		{"blk.12.attn_q.weight", Q42_ROLE_ATTN_Q, 12},
		{"blk.12.attn_q.bias", Q42_ROLE_ATTN_Q_BIAS, 12},
		{"blk.1.attn_k.weight", Q42_ROLE_ATTN_K, 1},
		{"blk.1.attn_v.weight", Q42_ROLE_ATTN_V, 1},
		{"blk.3.attn_qkv.weight", Q42_ROLE_ATTN_QKV, 3},
		{"blk.3.attn_output.weight", Q42_ROLE_ATTN_OUT, 3},
		{"blk.4.attn_q_norm.weight", Q42_ROLE_ATTN_Q_NORM, 4},
		{"blk.4.attn_k_norm.weight", Q42_ROLE_ATTN_K_NORM, 4},
		{"blk.5.ffn_norm.weight", Q42_ROLE_FFN_NORM, 5},
		{"blk.5.ffn_gate.weight", Q42_ROLE_FFN_GATE, 5},
		{"blk.5.ffn_up.weight", Q42_ROLE_FFN_UP, 5},
		{"blk.5.ffn_down.weight", Q42_ROLE_FFN_DOWN, 5},
		{"blk.6.post_attention_norm.weight", Q42_ROLE_POST_ATTN_NORM, 6},
		{"blk.6.post_ffw_norm.weight", Q42_ROLE_POST_FFW_NORM, 6},
		{"blk.7.shortconv.conv.weight", Q42_ROLE_SHORTCONV_CONV, 7},
		{"blk.7.shortconv.in_proj.weight", Q42_ROLE_SHORTCONV_IN_PROJ, 7},
		{"blk.7.shortconv.out_proj.weight", Q42_ROLE_SHORTCONV_OUT_PROJ, 7},
		{"blk.8.ffn_gate_inp.weight", Q42_ROLE_FFN_GATE_INP, 8},
		{"blk.8.ffn_gate_exps.weight", Q42_ROLE_FFN_GATE_EXPS, 8},
		{"blk.8.ffn_up_exps.weight", Q42_ROLE_FFN_UP_EXPS, 8},
		{"blk.8.ffn_down_exps.weight", Q42_ROLE_FFN_DOWN_EXPS, 8},
		{"blk.9.unheard_of.weight", Q42_ROLE_UNKNOWN, 9},
		{"blk.09.attn_q.weight", Q42_ROLE_UNKNOWN, -1},
		{"blk.x.attn_q.weight", Q42_ROLE_UNKNOWN, -1},
		{"blk.99999999.attn_q.weight", Q42_ROLE_UNKNOWN, -1},
		{"blk.1.attn_q", Q42_ROLE_UNKNOWN, 1},
		{"blk.1.attn_q.weights", Q42_ROLE_UNKNOWN, 1},
		{"token_embd", Q42_ROLE_UNKNOWN, -1},
		{"output.weight.extra", Q42_ROLE_UNKNOWN, -1},
		{"", Q42_ROLE_UNKNOWN, -1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int32_t layer = 1234;
		uint32_t r = q42_role_classify(cases[i].name, strlen(cases[i].name), &layer);
		if (r != cases[i].role || layer != cases[i].layer)
			fail_msg("%s: role %s layer %d, expected %s layer %d", cases[i].name,
				 q42_role_name(r), layer, q42_role_name(cases[i].role), cases[i].layer);
	}
	/* Not NUL-terminated: the classifier must stop at len. */
	int32_t layer;
	assert_int_equal(q42_role_classify("output.weightXYZ", 13, &layer), Q42_ROLE_OUTPUT);
	for (uint32_t r = 0; r < Q42_ROLE_COUNT_; r++)
		assert_string_not_equal(q42_role_name(r), "?");
	assert_string_equal(q42_role_name(Q42_ROLE_COUNT_), "?");
}

/* ---- Digests ---------------------------------------------------------- */

static void write_pem(const char *path, const char *label, const uint8_t *der, size_t n)
{
	unsigned char b64[256];
	int k = EVP_EncodeBlock(b64, der, (int)n);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "-----BEGIN %s-----\n%.*s\n-----END %s-----\n", label, k, b64, label);
	fclose(f);
}

static void test_digest(void **state)
{
	(void)state;
	uint8_t h[32], raw[32];
	char hex[65];
	q42_err err;
	/* FIPS 180-2, appendix B.1. */
	assert_int_equal(q42_sha256("abc", 3, h, &err), Q42_OK);
	q42_hex_encode(h, 32, hex);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_int_equal(q42_hex_decode(hex, raw, 32, &err), Q42_OK);
	assert_memory_equal(raw, h, 32);
	assert_int_equal(q42_hex_decode("BA78", raw, 2, &err), Q42_OK);
	assert_int_equal(raw[0], 0xba);
	assert_int_equal(q42_hex_decode("ba7", raw, 2, &err), Q42_EFORMAT);
	assert_int_equal(q42_hex_decode("ba78x", raw, 2, &err), Q42_EFORMAT);
	assert_int_equal(q42_hex_decode("bg78", raw, 2, &err), Q42_EFORMAT);

	char dir[] = "/tmp/q42-digest-XXXXXX", key[64], pub[64], data[64];
	assert_non_null(mkdtemp(dir));
	snprintf(data, sizeof data, "%s/abc", dir);
	FILE *f = fopen(data, "w");
	fputs("abc", f);
	fclose(f);
	assert_int_equal(q42_sha256_file(data, raw, &err), Q42_OK);
	assert_memory_equal(raw, h, 32);
	assert_int_equal(q42_sha256_file("/nonexistent/q42", raw, &err), Q42_EIO);

	/* RFC 8032, 7.1, TEST 1: empty message. */
	static const uint8_t seed[32] = {
		0x9d, 0x61, 0xb1, 0x9d, 0xef, 0xfd, 0x5a, 0x60, 0xba, 0x84, 0x4a, 0xf4, 0x92, 0xec, 0x2c, 0xc4,
		0x44, 0x49, 0xc5, 0x69, 0x7b, 0x32, 0x69, 0x19, 0x70, 0x3b, 0xac, 0x03, 0x1c, 0xae, 0x7f, 0x60};
	static const uint8_t pk[32] = {
		0xd7, 0x5a, 0x98, 0x01, 0x82, 0xb1, 0x0a, 0xb7, 0xd5, 0x4b, 0xfe, 0xd3, 0xc9, 0x64, 0x07, 0x3a,
		0x0e, 0xe1, 0x72, 0xf3, 0xda, 0xa6, 0x23, 0x25, 0xaf, 0x02, 0x1a, 0x68, 0xf7, 0x07, 0x51, 0x1a};
	static const char sig_hex[] =
		"e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
		"5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b";
	/* PKCS#8 and SubjectPublicKeyInfo wrappers for Ed25519 (RFC 8410). */
	uint8_t der[48];
	static const uint8_t priv_pre[16] = {0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06,
					     0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20};
	static const uint8_t pub_pre[12] = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03,
					    0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};
	snprintf(key, sizeof key, "%s/key.pem", dir);
	snprintf(pub, sizeof pub, "%s/pub.pem", dir);
	memcpy(der, priv_pre, 16);
	memcpy(der + 16, seed, 32);
	write_pem(key, "PRIVATE KEY", der, 48);
	memcpy(der, pub_pre, 12);
	memcpy(der + 12, pk, 32);
	write_pem(pub, "PUBLIC KEY", der, 44);

	uint8_t sig[64], want[64];
	assert_int_equal(q42_hex_decode(sig_hex, want, 64, &err), Q42_OK);
	if (q42_ed25519_sign(key, "", 0, sig, &err) != Q42_OK)
		fail_msg("%s", err.msg);
	assert_memory_equal(sig, want, 64);
	assert_int_equal(q42_ed25519_verify(pub, "", 0, sig, &err), Q42_OK);
	sig[10] ^= 1;
	assert_int_equal(q42_ed25519_verify(pub, "", 0, sig, &err), Q42_EFORMAT);
	sig[10] ^= 1;
	assert_int_equal(q42_ed25519_verify(pub, "x", 1, sig, &err), Q42_EFORMAT);
	assert_int_equal(q42_ed25519_verify(key, "", 0, sig, &err), Q42_EFORMAT); /* not a public key */
	assert_int_equal(q42_ed25519_verify(data, "", 0, sig, &err), Q42_EFORMAT);
	assert_int_equal(q42_ed25519_sign("/nonexistent/k.pem", "", 0, sig, &err), Q42_EIO);
	unlink(key);
	unlink(pub);
	unlink(data);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_colbert_fields),
		cmocka_unit_test(test_round_trip_models),
		cmocka_unit_test(test_round_trip_vocab),
		cmocka_unit_test(test_stories_facts),
		cmocka_unit_test(test_synthetic),
		cmocka_unit_test(test_vocab_only_and_empty),
		cmocka_unit_test(test_refuse_nonzero_gaps),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_roles),
		cmocka_unit_test(test_digest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
