/* q42_ckd.h -- overflow-checked size arithmetic.
 *
 * Every size or offset read from a file goes through these before it is
 * used to index memory; they return true when the result overflowed.
 */
#ifndef Q42_CKD_H
#define Q42_CKD_H

#include <stdbool.h>
#include <stdint.h>

static inline bool q42_add_overflow(uint64_t a, uint64_t b, uint64_t *r)
{
	return __builtin_add_overflow(a, b, r);
}

static inline bool q42_mul_overflow(uint64_t a, uint64_t b, uint64_t *r)
{
	return __builtin_mul_overflow(a, b, r);
}

/* Round v up to a multiple of align (a power of two). */
static inline bool q42_align_up(uint64_t v, uint64_t align, uint64_t *r)
{
	uint64_t t;
	if (__builtin_add_overflow(v, align - 1, &t))
		return true;
	*r = t & ~(align - 1);
	return false;
}

static inline bool q42_is_pow2(uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

#endif
