/* q42_buf.c -- the growable byte buffer (see q42_buf.h).
 *
 * Growth is geometric; a failed allocation marks the buffer failed and
 * leaves its contents untouched so the caller can report once.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/q42_buf.h"
#include "common/q42_le.h"

void q42_buf_init(q42_buf *b)
{
	memset(b, 0, sizeof *b);
}

void q42_buf_free(q42_buf *b)
{
	free(b->data);
	q42_buf_init(b);
}

void q42_buf_reset(q42_buf *b)
{
	b->len = 0;
	b->failed = false;
}

bool q42_buf_reserve(q42_buf *b, size_t extra)
{
	size_t need, cap;
	uint8_t *p;

	if (b->failed)
		return false;
	if (__builtin_add_overflow(b->len, extra, &need)) {
		b->failed = true;
		return false;
	}
	if (need <= b->cap)
		return true;
	cap = b->cap ? b->cap : 256;
	while (cap < need) {
		if (__builtin_mul_overflow(cap, (size_t)2, &cap)) {
			cap = need;
			break;
		}
	}
	p = realloc(b->data, cap);
	if (p == NULL) {
		b->failed = true;
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}

bool q42_buf_append(q42_buf *b, const void *p, size_t n)
{
	if (n == 0)
		return !b->failed;
	if (!q42_buf_reserve(b, n))
		return false;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return true;
}

bool q42_buf_zeros(q42_buf *b, size_t n)
{
	if (!q42_buf_reserve(b, n))
		return false;
	memset(b->data + b->len, 0, n);
	b->len += n;
	return true;
}

bool q42_buf_printf(q42_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed)
		return false;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !q42_buf_reserve(b, (size_t)n + 1)) {
		b->failed = true;
		return false;
	}
	va_start(ap, fmt);
	vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return true;
}

bool q42_buf_u8(q42_buf *b, uint8_t v)
{
	return q42_buf_append(b, &v, 1);
}

bool q42_buf_u16le(q42_buf *b, uint16_t v)
{
	uint8_t t[2];
	q42_st16(t, v);
	return q42_buf_append(b, t, sizeof t);
}

bool q42_buf_u32le(q42_buf *b, uint32_t v)
{
	uint8_t t[4];
	q42_st32(t, v);
	return q42_buf_append(b, t, sizeof t);
}

bool q42_buf_u64le(q42_buf *b, uint64_t v)
{
	uint8_t t[8];
	q42_st64(t, v);
	return q42_buf_append(b, t, sizeof t);
}

bool q42_buf_f32le(q42_buf *b, float v)
{
	uint32_t u;
	memcpy(&u, &v, sizeof u);
	return q42_buf_u32le(b, u);
}

bool q42_buf_align(q42_buf *b, size_t align)
{
	size_t rem = b->len & (align - 1);
	return rem == 0 ? !b->failed : q42_buf_zeros(b, align - rem);
}
