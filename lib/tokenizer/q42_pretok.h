/* q42_pretok.h -- pre-tokenizers of byte-level BPE vocabularies (internal).
 *
 * Splits a run of codepoints into the words that BPE merges never cross,
 * as llama.cpp does for each tokenizer.ggml.pre value. Only lengths (in
 * codepoints) come out; the caller owns the text. Lookup by name fails for
 * a pre-tokenizer not implemented here: the tokenizer refuses such a vocab
 * rather than splitting text some other way.
 */
#ifndef Q42_PRETOK_H
#define Q42_PRETOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct q42_u32vec {
	uint32_t *v;
	size_t n;
	size_t cap;
} q42_u32vec;

bool q42_u32vec_push(q42_u32vec *a, uint32_t x);
void q42_u32vec_free(q42_u32vec *a);

/* Per-pre-tokenizer settings llama.cpp ties to the name. */
typedef struct q42_pretok_info {
	int kind;            /* internal pass list */
	bool clean_spaces;   /* detokenize drops spaces before ?!., and 's 'm 're 've */
	bool ignore_merges;  /* a word that is itself a token is not merged */
	int8_t add_bos;      /* default add-BOS policy (-1: none of its own) */
	bool no_bos;         /* the BOS id defaults to none (chatglm) */
	/* gemma4: spaces become U+2581 and BPE runs on raw UTF-8 with <0xHH>
	 * byte fallback (no GPT-2 byte encoding); BOS is always added */
	bool escape_ws;
} q42_pretok_info;

/* Look a tokenizer.ggml.pre value up ("" means llama.cpp's "default");
 * false when it is unknown or not implemented. */
bool q42_pretok_lookup(const char *name, size_t len, q42_pretok_info *info);

/* Split cp[0..n) into words; their lengths (in codepoints) are appended to
 * out. tmp is scratch the caller keeps between calls. False on allocation
 * failure. */
bool q42_pretok_split(int kind, const uint32_t *cp, size_t n, q42_u32vec *out, q42_u32vec tmp[2]);

#endif
