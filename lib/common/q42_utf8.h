/* q42_utf8.h -- strict UTF-8 checking for prompts and generated text.
 *
 * Strict means RFC 3629: no overlong forms, no surrogates, nothing past
 * U+10FFFF. Records are JSON, and JSON text must be valid UTF-8, so
 * everything the engine reports passes through here; a byte sequence that
 * is merely incomplete (a character split across tokens) is held back, not
 * replaced, until more bytes arrive or the text ends.
 */
#ifndef Q42_UTF8_H
#define Q42_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/q42_buf.h"
#include "common/q42_err.h"

/* Length (1..4) of the valid sequence at p[0..n), 0 when p[0] starts no
 * valid sequence, -1 when the bytes are a valid but incomplete prefix. */
Q42_API int q42_utf8_seq(const uint8_t *p, size_t n);

/* Offset of the first invalid byte of p[0..n) (an incomplete sequence at
 * the end counts as invalid), or n when all of it is valid. */
Q42_API size_t q42_utf8_check(const uint8_t *p, size_t n);

/* Append p[0..n) to out with every invalid byte replaced by U+FFFD. When
 * final is false an incomplete sequence at the end is left unconsumed.
 * Returns the bytes consumed; *n_replaced (may be NULL) is increased by the
 * number of replacements. false from q42_buf failure is reported through
 * out->failed. */
Q42_API size_t q42_utf8_sanitize(q42_buf *out, const uint8_t *p, size_t n, bool final,
				 uint64_t *n_replaced);

#endif
