/* q42_ugm.h -- the Unigram (SentencePiece "t5") tokenizer (internal).
 *
 * What q42_tokenizer.c needs to tokenize one raw-text fragment of a
 * tokenizer.ggml.model "t5" vocabulary as llama.cpp's UGM tokenizer does:
 * the precompiled charsmap normalizer, the whitespace policy, and the
 * best-scoring segmentation (Viterbi) over a byte trie of the tokens.
 * Token texts are views the caller keeps alive; the charsmap is copied.
 */
#ifndef Q42_UGM_H
#define Q42_UGM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/q42_err.h"
#include "formats/q42_model.h"
#include "tokenizer/q42_tokenizer.h"

typedef struct q42_ugm q42_ugm;

/* Per-token roles (bits of q42_ugm_opts.role). */
enum {
	Q42_UGM_MATCH = 1u << 0,   /* a segmentation candidate (normal, user-defined, unused) */
	Q42_UGM_PROTECT = 1u << 1, /* user-defined: the normalizer leaves its text alone */
	Q42_UGM_NORMAL = 1u << 2,  /* counts for the lowest score (the unknown penalty) */
	Q42_UGM_ZERO = 1u << 3,    /* scores 0 instead of its stored score */
};

typedef struct q42_ugm_opts {
	uint32_t n;
	const q42_str *text;       /* n token texts, unique, non-empty */
	const float *score;        /* n scores; NULL: all 0 */
	const uint8_t *role;       /* n role bit sets */
	const uint8_t *charsmap;   /* tokenizer.ggml.precompiled_charsmap; NULL when absent */
	size_t charsmap_len;
	bool add_space_prefix;
	bool remove_extra_whitespaces;
	int32_t unk;               /* the unknown token, >= 0 */
} q42_ugm_opts;

/* Scratch one encode call reuses across fragments. */
typedef struct q42_ugm_work {
	uint8_t *norm;
	size_t cap_norm;
	void *best;
	size_t cap_best;
} q42_ugm_work;

/* Fails with Q42_EFORMAT and the field and byte offset for a charsmap
 * whose sizes or offsets point outside it. */
int q42_ugm_open(q42_ugm **out, const q42_ugm_opts *o, q42_err *err);
void q42_ugm_close(q42_ugm *u);

/* Append the ids of one raw-text fragment s[0..len) to out. */
int q42_ugm_encode(const q42_ugm *u, q42_ugm_work *w, const uint8_t *s, size_t len,
		   q42_tokens *out, q42_err *err);
void q42_ugm_work_free(q42_ugm_work *w);

#endif
