/* gen_demo.c -- writes the embedded demo model, a small llama GGUF.
 *
 * The README's first command compiles, validates and runs this model, so
 * it must be produced by the build, deterministically (fixed-seed PRNG, no
 * clock, no floating-point library calls whose results vary), and carry a
 * real SentencePiece-style tokenizer: control tokens, 256 byte-fallback
 * tokens and scored word pieces. Its weights are random, so its text is
 * not meaningful; it exercises the F32 and Q8_0 paths of every stage.
 *
 * usage: gen_demo OUTPUT.gguf
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/q42_err.h"
#include "common/q42_file.h"
#include "common/q42_types.h"
#include "gguf_build.h"
#include "kernels/q42_kernels.h"

#define N_EMBD 64
#define N_LAYER 2
#define N_HEAD 4
#define N_HEAD_KV 2
#define N_FF 192
#define N_CTX 512

static const char *const words[] = {
	"the", "a", "and", "to", "was", "he", "she", "it", "of", "in", "day", "one",
	"little", "big", "they", "her", "his", "with", "said", "play", "saw", "girl",
	"boy", "dog", "cat", "park", "tree", "happy", "sad", "friend", "time", "upon",
	"once", "there", "named", "loved", "went", "home", "sun", "ball", "red",
	"blue", "jump", "run", "ran", "look", "looked", "mom", "dad", "sky", "bird",
	"water", "fun", "very", "were", "had", "not", "on", "at", "is", "you", "we",
	"I", "be", "so", "up", "out", "what", "all", "but", "for", "then", "that",
	"Lily", "Tom", "The", "Once", "One", "She", "He", "They",
};

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

/* xorshift64*: a fixed sequence on every platform. */
static uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

/* Uniform in [-scale, scale), built from 24 random bits exactly. */
static float rng_uniform(float scale)
{
	int32_t r = (int32_t)(rng_next() >> 40) - (1 << 23);
	return (float)r * (scale / (float)(1 << 23));
}

typedef struct blob {
	void *data;
	uint64_t nbytes;
} blob;

static blob blobs[64];
static int n_blobs;

static void *keep(void *p, uint64_t n)
{
	blobs[n_blobs].data = p;
	blobs[n_blobs].nbytes = n;
	n_blobs++;
	return p;
}

static float *rand_f32(uint64_t n, float scale)
{
	float *p = malloc(n * sizeof *p);
	for (uint64_t i = 0; i < n; i++)
		p[i] = rng_uniform(scale);
	return keep(p, n * sizeof *p);
}

static float *ones_f32(uint64_t n)
{
	float *p = malloc(n * sizeof *p);
	for (uint64_t i = 0; i < n; i++)
		p[i] = 1.0f;
	return keep(p, n * sizeof *p);
}

/* Q8_0 rows through libq42's own activation quantizer, which follows
 * ggml's reference rounding. */
static uint8_t *rand_q8_0(uint64_t n, float scale)
{
	float *f = malloc(n * sizeof *f);
	uint64_t nbytes = n / 32 * 34;
	uint8_t *q = malloc(nbytes);
	for (uint64_t i = 0; i < n; i++)
		f[i] = rng_uniform(scale);
	q42_kernels_get(Q42_DTYPE_Q8_0, Q42_ISA_SCALAR)->quantize(f, q, (int64_t)n);
	free(f);
	return keep(q, nbytes);
}

static void add2(gguf_builder *b, const char *name, uint32_t type, uint64_t ne0, uint64_t ne1,
		 const void *data)
{
	uint64_t ne[2] = {ne0, ne1};
	uint64_t nbytes = 0;
	q42_dtype_nbytes(type, ne0 * ne1, ne0, &nbytes);
	gb_tensor_add(b, name, type, ne1 > 1 ? 2 : 1, ne, data, nbytes);
}

/* Append a normal piece unless present; score favours length, then age. */
static uint32_t add_piece(const char **toks, char (*tokbuf)[32], float *scores, int32_t *types,
			  uint32_t n, const char *piece)
{
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(toks[i], piece) == 0)
			return n;
	snprintf(tokbuf[n], sizeof tokbuf[0], "%s", piece);
	toks[n] = tokbuf[n];
	types[n] = 1;
	scores[n] = (float)strlen(piece) - (float)n / 1024.0f;
	return n + 1;
}

int main(int argc, char **argv)
{
	static char names[N_LAYER][9][64];
	static char tokbuf[1024][32];
	const char *toks[1024];
	float scores[1024];
	int32_t types[1024];
	uint32_t n_vocab = 0;
	gguf_builder b;
	q42_buf out;
	q42_outfile of;
	q42_err err;
	float s_embd = 1.0f / sqrtf((float)N_EMBD);

	if (argc != 2) {
		fprintf(stderr, "usage: gen_demo OUTPUT.gguf\n");
		return 2;
	}
	toks[n_vocab] = "<unk>"; types[n_vocab] = 2; scores[n_vocab++] = 0.0f;
	toks[n_vocab] = "<s>"; types[n_vocab] = 3; scores[n_vocab++] = 0.0f;
	toks[n_vocab] = "</s>"; types[n_vocab] = 3; scores[n_vocab++] = 0.0f;
	for (int i = 0; i < 256; i++) {
		snprintf(tokbuf[n_vocab], sizeof tokbuf[0], "<0x%02X>", i);
		toks[n_vocab] = tokbuf[n_vocab];
		types[n_vocab] = 6;
		scores[n_vocab++] = 0.0f;
	}
	/* Word pieces: every prefix of "\u2581word" is a piece too, because a
	 * SentencePiece merge only joins two existing pieces; longer pieces
	 * score higher so whole words win. Then single characters, so every
	 * ASCII text tokenizes without falling back to bytes. */
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
		char piece[32];
		size_t wl = strlen(words[i]);
		for (size_t k = 1; k <= wl; k++) {
			snprintf(piece, sizeof piece, "\xe2\x96\x81%.*s", (int)k, words[i]);
			n_vocab = add_piece(toks, tokbuf, scores, types, n_vocab, piece);
		}
	}
	n_vocab = add_piece(toks, tokbuf, scores, types, n_vocab, "\xe2\x96\x81");
	for (int c = 33; c < 127; c++) {
		char piece[2] = {(char)c, 0};
		n_vocab = add_piece(toks, tokbuf, scores, types, n_vocab, piece);
	}

	gb_init(&b, 32);
	gb_kv_str(&b, "general.architecture", "llama");
	gb_kv_str(&b, "general.name", "q42-demo");
	gb_kv_u32(&b, "general.file_type", 7);
	gb_kv_u32(&b, "llama.context_length", N_CTX);
	gb_kv_u32(&b, "llama.embedding_length", N_EMBD);
	gb_kv_u32(&b, "llama.block_count", N_LAYER);
	gb_kv_u32(&b, "llama.feed_forward_length", N_FF);
	gb_kv_u32(&b, "llama.attention.head_count", N_HEAD);
	gb_kv_u32(&b, "llama.attention.head_count_kv", N_HEAD_KV);
	gb_kv_u32(&b, "llama.rope.dimension_count", N_EMBD / N_HEAD);
	gb_kv_f32(&b, "llama.rope.freq_base", 10000.0f);
	gb_kv_f32(&b, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
	gb_kv_str(&b, "tokenizer.ggml.model", "llama");
	gb_kv_str(&b, "tokenizer.ggml.pre", "default");
	gb_kv_arr_str(&b, "tokenizer.ggml.tokens", toks, n_vocab);
	gb_kv_arr_f32(&b, "tokenizer.ggml.scores", scores, n_vocab);
	gb_kv_arr_i32(&b, "tokenizer.ggml.token_type", types, n_vocab);
	gb_kv_u32(&b, "tokenizer.ggml.bos_token_id", 1);
	gb_kv_u32(&b, "tokenizer.ggml.eos_token_id", 2);
	gb_kv_u32(&b, "tokenizer.ggml.unknown_token_id", 0);
	gb_kv_bool(&b, "tokenizer.ggml.add_bos_token", 1);
	gb_kv_bool(&b, "tokenizer.ggml.add_eos_token", 0);

	add2(&b, "token_embd.weight", Q42_DTYPE_F32, N_EMBD, n_vocab, rand_f32((uint64_t)N_EMBD * n_vocab, 1.0f));
	for (int l = 0; l < N_LAYER; l++) {
		static const char *const suffix[9] = {
			"attn_norm", "attn_q", "attn_k", "attn_v", "attn_output",
			"ffn_norm", "ffn_gate", "ffn_up", "ffn_down"};
		for (int k = 0; k < 9; k++)
			snprintf(names[l][k], sizeof names[l][k], "blk.%d.%s.weight", l, suffix[k]);
		uint32_t kv = N_EMBD / N_HEAD * N_HEAD_KV;
		add2(&b, names[l][0], Q42_DTYPE_F32, N_EMBD, 1, ones_f32(N_EMBD));
		add2(&b, names[l][1], Q42_DTYPE_F32, N_EMBD, N_EMBD, rand_f32(N_EMBD * N_EMBD, s_embd));
		add2(&b, names[l][2], Q42_DTYPE_F32, N_EMBD, kv, rand_f32((uint64_t)N_EMBD * kv, s_embd));
		add2(&b, names[l][3], Q42_DTYPE_F32, N_EMBD, kv, rand_f32((uint64_t)N_EMBD * kv, s_embd));
		add2(&b, names[l][4], Q42_DTYPE_F32, N_EMBD, N_EMBD, rand_f32(N_EMBD * N_EMBD, s_embd));
		add2(&b, names[l][5], Q42_DTYPE_F32, N_EMBD, 1, ones_f32(N_EMBD));
		add2(&b, names[l][6], Q42_DTYPE_Q8_0, N_EMBD, N_FF, rand_q8_0(N_EMBD * N_FF, s_embd));
		add2(&b, names[l][7], Q42_DTYPE_Q8_0, N_EMBD, N_FF, rand_q8_0(N_EMBD * N_FF, s_embd));
		add2(&b, names[l][8], Q42_DTYPE_Q8_0, N_FF, N_EMBD, rand_q8_0(N_EMBD * N_FF, 1.0f / sqrtf((float)N_FF)));
	}
	add2(&b, "output_norm.weight", Q42_DTYPE_F32, N_EMBD, 1, ones_f32(N_EMBD));
	/* Damp the control and byte rows of the output so greedy text is made
	 * of word pieces rather than stray bytes. */
	float *outw = rand_f32((uint64_t)N_EMBD * n_vocab, s_embd);
	for (uint64_t i = 0; i < (uint64_t)N_EMBD * 259; i++)
		outw[i] *= 0.125f;
	add2(&b, "output.weight", Q42_DTYPE_F32, N_EMBD, n_vocab, outw);

	q42_buf_init(&out);
	gb_finish(&b, 3, &out);
	if (out.failed || q42_outfile_open(&of, argv[1], &err) != Q42_OK ||
	    fwrite(out.data, 1, out.len, of.fp) != out.len || q42_outfile_commit(&of, &err) != Q42_OK) {
		fprintf(stderr, "gen_demo: %s: %s\n", argv[1], out.failed ? "out of memory" : err.msg);
		return 3;
	}
	for (int i = 0; i < n_blobs; i++)
		free(blobs[i].data);
	gb_free(&b);
	q42_buf_free(&out);
	return 0;
}
