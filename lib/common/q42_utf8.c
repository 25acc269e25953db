/* q42_utf8.c -- the strict UTF-8 checker behind q42_utf8.h.
 *
 * Table-free: the allowed second-byte ranges of RFC 3629 (E0 A0..BF,
 * ED 80..9F, F0 90..BF, F4 80..8F) are spelled out, which is the whole
 * difference between strict and lenient decoding.
 */
#include "common/q42_utf8.h"

int q42_utf8_seq(const uint8_t *p, size_t n)
{
	uint8_t c = p[0], lo = 0x80, hi = 0xBF;
	size_t len;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		len = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		len = 4;
	else
		return 0;
	if (c == 0xE0)
		lo = 0xA0;
	else if (c == 0xED)
		hi = 0x9F;
	else if (c == 0xF0)
		lo = 0x90;
	else if (c == 0xF4)
		hi = 0x8F;
	for (size_t i = 1; i < len; i++) {
		uint8_t b;
		if (i >= n)
			return -1;
		b = p[i];
		if (i == 1 ? (b < lo || b > hi) : (b & 0xC0) != 0x80)
			return 0;
	}
	return (int)len;
}

size_t q42_utf8_check(const uint8_t *p, size_t n)
{
	size_t i = 0;
	while (i < n) {
		int l = q42_utf8_seq(p + i, n - i);
		if (l <= 0)
			return i;
		i += (size_t)l;
	}
	return n;
}

size_t q42_utf8_sanitize(q42_buf *out, const uint8_t *p, size_t n, bool final,
			 uint64_t *n_replaced)
{
	static const uint8_t repl[3] = {0xEF, 0xBF, 0xBD};
	size_t i = 0, run = 0;

	if (n == 0)
		return 0;

	while (i < n) {
		int l = q42_utf8_seq(p + i, n - i);
		if (l > 0) {
			i += (size_t)l;
			continue;
		}
		if (l < 0 && !final)
			break;
		q42_buf_append(out, p + run, i - run);
		q42_buf_append(out, repl, sizeof repl);
		if (n_replaced != NULL)
			(*n_replaced)++;
		i++;
		run = i;
	}
	q42_buf_append(out, p + run, i - run);
	return i;
}
