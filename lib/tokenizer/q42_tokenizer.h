/* q42_tokenizer.h -- text <-> token ids, as llama.cpp does it.
 *
 * Built from a q42_vocab (GGUF metadata or the P64 Q42T section). Supports
 * SentencePiece-style vocabularies (tokenizer.ggml.model "llama") and
 * byte-level BPE ("gpt2" with the pre-tokenizers named by
 * tokenizer.ggml.pre). A vocabulary it cannot honour is refused at open,
 * never approximated.
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
};

/* The vocab must outlive the tokenizer (strings are not copied). */
Q42_API int q42_tokenizer_open(q42_tokenizer **out, const q42_vocab *v, q42_err *err);
Q42_API void q42_tokenizer_close(q42_tokenizer *t);

Q42_API int q42_tokenizer_encode(const q42_tokenizer *t, const char *text, size_t len,
				 unsigned flags, q42_tokens *out, q42_err *err);

/* Append the raw bytes of one token's piece to out (may be a partial UTF-8
 * sequence; streaming callers hold back incomplete characters). */
Q42_API int q42_tokenizer_piece(const q42_tokenizer *t, int32_t id, unsigned flags,
				q42_buf *out, q42_err *err);

/* Detokenize ids into out; invalid UTF-8 in the result is replaced by
 * U+FFFD. */
Q42_API int q42_tokenizer_decode(const q42_tokenizer *t, const int32_t *ids, size_t n,
				 unsigned flags, q42_buf *out, q42_err *err);

Q42_API uint32_t q42_tokenizer_n_vocab(const q42_tokenizer *t);
/* End-of-generation: eos, eot, eom or any token the vocab marks as such. */
Q42_API bool q42_tokenizer_is_eog(const q42_tokenizer *t, int32_t id);

Q42_API void q42_tokens_free(q42_tokens *tk);
Q42_API bool q42_tokens_push(q42_tokens *tk, int32_t id);

#endif
