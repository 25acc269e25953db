/* q42_buf.h -- the one growable byte buffer of libq42.
 *
 * Used wherever output is assembled (P64 sections, records, listings).
 * A failed append leaves the buffer as it was and sets `failed`, so a
 * sequence of appends can be checked once at the end.
 */
#ifndef Q42_BUF_H
#define Q42_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/q42_err.h"

typedef struct q42_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
	bool failed;
} q42_buf;

Q42_API void q42_buf_init(q42_buf *b);
Q42_API void q42_buf_free(q42_buf *b);
Q42_API void q42_buf_reset(q42_buf *b);
Q42_API bool q42_buf_reserve(q42_buf *b, size_t extra);
Q42_API bool q42_buf_append(q42_buf *b, const void *p, size_t n);
Q42_API bool q42_buf_zeros(q42_buf *b, size_t n);
Q42_API bool q42_buf_printf(q42_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
Q42_API bool q42_buf_u8(q42_buf *b, uint8_t v);
Q42_API bool q42_buf_u16le(q42_buf *b, uint16_t v);
Q42_API bool q42_buf_u32le(q42_buf *b, uint32_t v);
Q42_API bool q42_buf_u64le(q42_buf *b, uint64_t v);
Q42_API bool q42_buf_f32le(q42_buf *b, float v);
/* Pad with zero bytes until len is a multiple of align (a power of two). */
Q42_API bool q42_buf_align(q42_buf *b, size_t align);

#endif
