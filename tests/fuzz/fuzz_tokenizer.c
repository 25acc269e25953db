/* fuzz_tokenizer.c -- libFuzzer harness for the tokenizer on hostile text.
 *
 * Vocabularies of each tokenizer type are loaded once from the test
 * models: SentencePiece ("llama": stories260K, phi-3's), WordPiece
 * ("bert": tiny-bert), byte-level BPE ("gpt2": tiny-lfm2moe, opened once
 * under each pre-tokenizer kind q42_pretok.c implements), Unigram ("t5":
 * llama.cpp's nomic-bert-moe vocabulary with its charsmap) and gemma4's
 * BPE (llama.cpp's gemma-4 vocabulary). The first input byte picks a
 * tokenizer and the flags, the rest is the text: it is encoded, decoded
 * whole and piece by piece. One more choice of the first byte fuzzes the
 * charsmap itself: a small Unigram vocabulary is opened with the charsmap
 * the input carries (u16 length, then its bytes), then the rest is
 * encoded. Models are found in $Q42_FUZZ_MODELS, $Q42_TEST_MODELS or
 * $Q42_TEST_VOCAB, else in tests/models, ../shared/models and
 * ../shared/vocab of $Q42_SRCDIR (`make check` exports these) or of the
 * source tree the harness was built from.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/q42_file.h"
#include "formats/q42_gguf.h"
#include "formats/q42_model.h"
#include "tokenizer/q42_tokenizer.h"

#ifndef Q42_FUZZ_SRCDIR
#define Q42_FUZZ_SRCDIR "."
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One pre-tokenizer name of each kind and option set (q42_pretok.c's table). */
static const char *const bpe_pres[] = {
	"default", "llama3", "dbrx", "glm4", "deepseek-llm", "deepseek-coder", "deepseek-v3",
	"falcon", "mpt", "trillion", "starcoder", "command-r", "qwen2", "stablelm2", "qwen35",
	"poro-chat", "bloom", "viking", "laguna", "afmoe",
};

static const struct {
	const char *file;
	bool bpe;
} models[] = {
	{"stories260K.gguf", false},
	{"ggml-vocab-phi-3.gguf", false},
	{"tiny-bert-f32.gguf", false},
	{"tiny-lfm2moe-f32.gguf", true},
	{"ggml-vocab-nomic-bert-moe.gguf", false},
	{"ggml-vocab-gemma-4.gguf", false},
};

#define MAX_TOK 64
static q42_map maps[sizeof models / sizeof models[0]];
static q42_gguf ggufs[sizeof models / sizeof models[0]];
static q42_vocab vocabs[MAX_TOK];
static q42_tokenizer *toks[MAX_TOK];
static size_t n_toks;

/* The file at path, mapped for the process's life (the vocabularies point
 * into it). */
static bool load_path(const char *path, q42_map *m, q42_gguf *g)
{
	q42_err err;

	if (q42_map_open(m, path, 0, &err) != Q42_OK)
		return false;
	if (q42_gguf_parse(g, m->data, m->size, path, &err) == Q42_OK)
		return true;
	q42_map_close(m);
	return false;
}

/* file from the folders named as they are, then below a source tree */
static bool load(const char *file, q42_map *m, q42_gguf *g)
{
	const char *dirs[3] = {getenv("Q42_FUZZ_MODELS"), getenv("Q42_TEST_MODELS"),
			       getenv("Q42_TEST_VOCAB")};
	const char *srcs[2] = {getenv("Q42_SRCDIR"), Q42_FUZZ_SRCDIR};
	static const char *const below[3] = {"tests/models", "../shared/models", "../shared/vocab"};
	char path[4096];

	for (size_t i = 0; i < 3; i++) {
		if (dirs[i] == NULL)
			continue;
		snprintf(path, sizeof path, "%s/%s", dirs[i], file);
		if (load_path(path, m, g))
			return true;
	}
	for (size_t i = 0; i < 2; i++)
		for (size_t j = 0; j < 3 && srcs[i] != NULL; j++) {
			snprintf(path, sizeof path, "%s/%s/%s", srcs[i], below[j], file);
			if (load_path(path, m, g))
				return true;
		}
	return false;
}

static void add(const q42_vocab *v)
{
	q42_err err;

	if (n_toks == MAX_TOK)
		return;
	vocabs[n_toks] = *v;
	if (q42_tokenizer_open(&toks[n_toks], &vocabs[n_toks], &err) == Q42_OK)
		n_toks++;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	q42_err err;
	q42_vocab v;

	(void)argc;
	(void)argv;
	for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
		if (!load(models[m].file, &maps[m], &ggufs[m])) {
			fprintf(stderr, "fuzz_tokenizer: %s not found (set Q42_FUZZ_MODELS)\n",
				models[m].file);
			exit(1);
		}
		if (q42_vocab_from_gguf(&v, &ggufs[m], &err) != Q42_OK) {
			fprintf(stderr, "fuzz_tokenizer: %s\n", err.msg);
			exit(1);
		}
		if (!models[m].bpe) {
			add(&v);
			continue;
		}
		for (size_t p = 0; p < sizeof bpe_pres / sizeof bpe_pres[0]; p++) {
			v.pre.p = bpe_pres[p];
			v.pre.len = strlen(bpe_pres[p]);
			add(&v);
		}
	}
	return 0;
}

static void run(const q42_tokenizer *t, const uint8_t *text, size_t n, unsigned enc, unsigned dec)
{
	q42_tokens tk = {0};
	q42_buf out;
	q42_err err;

	q42_buf_init(&out);
	if (q42_tokenizer_encode(t, (const char *)text, n, enc, &tk, &err) == Q42_OK) {
		(void)q42_tokenizer_decode(t, tk.ids, tk.n, dec, &out, &err);
		for (size_t i = 0; i < tk.n; i++)
			(void)q42_tokenizer_piece(t, tk.ids[i], dec, &out, &err);
	}
	q42_buf_free(&out);
	q42_tokens_free(&tk);
}

/* A small Unigram vocabulary opened with the charsmap in the input. */
static void run_charsmap(const uint8_t *data, size_t size, uint8_t sel)
{
	static q42_str text[] = {
		{"<pad>", 5}, {"</s>", 4}, {"<unk>", 5}, {"\xe2\x96\x81", 3}, {"a", 1}, {"b", 1},
		{"1", 1}, {"\xe2\x96\x81" "a", 4}, {"ab", 2}, {"<mask>", 6}, {"<0x41>", 6},
		{"\xe2\x81\x84", 3}, {"\xe2\x96\x81\xe2\x96\x81", 6}};
	static float score[] = {0, 0, 0, -1, -2, -2, -3, -1.5f, -2.5f, 0, 0, -4, -5};
	static int32_t type[] = {Q42_TOK_CONTROL, Q42_TOK_CONTROL, Q42_TOK_UNKNOWN,
			       Q42_TOK_NORMAL,  Q42_TOK_NORMAL,  Q42_TOK_NORMAL, Q42_TOK_NORMAL,
			       Q42_TOK_NORMAL, Q42_TOK_NORMAL, Q42_TOK_USER_DEFINED,
			       Q42_TOK_BYTE, Q42_TOK_NORMAL, Q42_TOK_UNUSED};
	q42_vocab v;
	q42_tokenizer *t;
	q42_err err;
	size_t len = size >= 2 ? (size_t)data[0] | (size_t)data[1] << 8 : 0;

	if (size < 2)
		return;
	if (len > size - 2)
		len = size - 2;
	memset(&v, 0, sizeof v);
	v.model = (q42_str){"t5", 2};
	v.n_tokens = sizeof text / sizeof text[0];
	v.tokens = text;
	v.scores = score;
	v.types = type;
	v.bos = v.eot = v.eom = v.sep = v.pad = v.mask = Q42_TOK_NONE;
	v.eos = 1;
	v.unk = 2;
	v.add_bos = v.add_eos = -1;
	v.add_space_prefix = (int8_t)(sel & 1u);
	v.remove_extra_whitespaces = (int8_t)((sel >> 1) & 1u);
	v.charsmap = (q42_str){(const char *)data + 2, len};
	if (q42_tokenizer_open(&t, &v, &err) != Q42_OK)
		return;
	run(t, data + 2 + len, size - 2 - len, sel & 3u, (sel >> 1) & 3u);
	q42_tokenizer_close(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t pick;

	if (size < 1 || n_toks == 0)
		return 0;
	pick = (size_t)(data[0] >> 2) % (n_toks + 1);
	if (pick == n_toks)
		run_charsmap(data + 1, size - 1, data[0]);
	else
		run(toks[pick], data + 1, size - 1, data[0] & 3u, (data[0] >> 1) & 3u);
	return 0;
}
