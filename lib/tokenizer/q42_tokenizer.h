/* q42_tokenizer.h -- text <-> token ids, as llama.cpp does it.
 *
 * Built from a q42_vocab (GGUF metadata or the P64 Q42T section). Supports
 * SentencePiece-style vocabularies (tokenizer.ggml.model "llama"),
 * byte-level BPE ("gpt2" with the pre-tokenizers named by
 * tokenizer.ggml.pre), gemma4's BPE on UTF-8 ("gemma4"), WordPiece
 * ("bert") and Unigram ("t5", with its precompiled charsmap). A vocabulary
 * it cannot honour is refused at open, never approximated.
 */
#ifndef Q42_TOKENIZER_H
#define Q42_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/q42_buf.h"
#include "common/q42_err.h"
#include "formats/q42_model.h"

typedef struct q42_tokenizer q42_tokenizer;

/* Longest input q42_tokenizer_encode accepts (bytes); symbol indices stay
 * within 32 bits below it. */
#define Q42_TOKENIZE_MAX_INPUT ((size_t)1 << 30)

typedef struct q42_tokens {
	int32_t *ids;
	size_t n;
	size_t cap;
} q42_tokens;

enum q42_tokenize_flags {
	Q42_TOKENIZE_ADD_SPECIAL = 1u << 0,   /* add BOS/EOS as the vocab's policy says */
	Q42_TOKENIZE_PARSE_SPECIAL = 1u << 1, /* match control/user-defined token text */
};

enum q42_detokenize_flags {
	Q42_DETOKENIZE_RENDER_SPECIAL = 1u << 0, /* emit the text of control tokens */
	/* drop a leading BOS / trailing EOS the vocab policy would have added
	 * (llama_detokenize's remove_special) */
	Q42_DETOKENIZE_REMOVE_SPECIAL = 1u << 1,
};

/* Model metadata outside tokenizer.ggml.* that llama.cpp consults for a
 * few per-token attributes (phi-3: special tokens strip the whitespace
 * after them; some embedding models: "<mask>" strips before it). Either
 * field may be empty. */
typedef struct q42_tokenizer_opts {
	q42_str general_name;  /* general.name */
	q42_str general_arch;  /* general.architecture */
} q42_tokenizer_opts;

/* The vocab must outlive the tokenizer (strings are not copied). Fails
 * with Q42_EUNSUPPORTED for a model type or pre-tokenizer not implemented,
 * Q42_EFORMAT for malformed data (duplicate token texts, merges naming
 * missing tokens, a gpt2 vocab without merges, byte tokens not <0xHH>, a
 * charsmap whose sizes or offsets point outside it, a t5 vocab without an
 * unknown token). */
Q42_API int q42_tokenizer_open(q42_tokenizer **out, const q42_vocab *v, q42_err *err);
Q42_API int q42_tokenizer_open_ex(q42_tokenizer **out, const q42_vocab *v,
				  const q42_tokenizer_opts *opts, q42_err *err);
Q42_API void q42_tokenizer_close(q42_tokenizer *t);

/* Append the ids of text[0..len) to out (on failure out is as it was).
 * Without PARSE_SPECIAL, user-defined tokens are still matched, as in
 * llama.cpp; invalid UTF-8 is accepted (SPM: byte tokens, BPE: U+FFFD). */
Q42_API int q42_tokenizer_encode(const q42_tokenizer *t, const char *text, size_t len,
				 unsigned flags, q42_tokens *out, q42_err *err);

/* Append the raw bytes of one token's piece to out (may be a partial UTF-8
 * sequence; streaming callers hold back incomplete characters). */
Q42_API int q42_tokenizer_piece(const q42_tokenizer *t, int32_t id, unsigned flags,
				q42_buf *out, q42_err *err);

/* Detokenize ids, appending to out, as llama_detokenize(remove_special =
 * flags & REMOVE_SPECIAL, unparse_special = flags & RENDER_SPECIAL): the
 * space SentencePiece prefixed is taken off the first piece, BPE
 * vocabularies with clean_spaces tidy " ," and the like. Invalid UTF-8 in
 * the result is replaced by U+FFFD (each maximal ill-formed subpart). */
Q42_API int q42_tokenizer_decode(const q42_tokenizer *t, const int32_t *ids, size_t n,
				 unsigned flags, q42_buf *out, q42_err *err);

Q42_API uint32_t q42_tokenizer_n_vocab(const q42_tokenizer *t);
/* End-of-generation: eos, eot, eom or any token the vocab marks as such. */
Q42_API bool q42_tokenizer_is_eog(const q42_tokenizer *t, int32_t id);
/* BOS / EOS ids (llama.cpp's per-model defaults unless the file names
 * them), -1 when there is none. */
Q42_API int32_t q42_tokenizer_bos(const q42_tokenizer *t);
Q42_API int32_t q42_tokenizer_eos(const q42_tokenizer *t);
/* Whether ADD_SPECIAL puts a BOS first. */
Q42_API bool q42_tokenizer_adds_bos(const q42_tokenizer *t);
/* The stored text of a token (empty view for an id out of range). */
Q42_API q42_str q42_tokenizer_text(const q42_tokenizer *t, int32_t id);

Q42_API void q42_tokens_free(q42_tokens *tk);
Q42_API bool q42_tokens_push(q42_tokens *tk, int32_t id);

#endif
