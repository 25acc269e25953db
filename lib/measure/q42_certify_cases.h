/* q42_certify_cases.h -- what the CPU and backend certification share:
 * the seeded generator, random weight blocks and the per-case comparison
 * (lib/vulkan/q42_vk_certify.c builds its cases on them). Internal to
 * libq42, not installed; the tests use it to show a wrong result is
 * caught.
 */
#ifndef Q42_CERTIFY_CASES_H
#define Q42_CERTIFY_CASES_H

#include <stdint.h>
#include "measure/q42_certify.h"

/* The default floor of max_rel's denominator (q42run(1), CERTIFICATION). */
#define Q42_CERTIFY_FLOOR 1e-6

/* splitmix64 (Steele, Lea, Flood 2014): the next 64 bits of *state. */
uint64_t q42_certify_next(uint64_t *state);
/* Uniform in [-1, 1), 24 random bits. */
float q42_certify_unit(uint64_t *state);

/* n elements of weight type dtype (n a whole number of blocks): random
 * bytes, every f16 scale field replaced by a random finite value in
 * [-0.05, 0.05] so the weights are of a sane magnitude. false when dtype
 * has no known layout. */
bool q42_certify_weights(uint32_t dtype, uint8_t *dst, int64_t n, uint64_t *state);

/* Fill r's errors and verdict: element i passes when |got - want| <=
 * tol_abs or <= tol_rel * max(|want|, floor_i), floor_i = floor[i] (or
 * Q42_CERTIFY_FLOOR when floor is NULL); max_rel uses the same
 * denominator. r's tolerances are set by the caller. A NaN anywhere fails. */
void q42_certify_compare(q42_certify_result *r, const float *got, const double *want,
			 const double *floor, uint64_t n);

/* Start a result: kernel and shape names, tolerances, errors zero. */
void q42_certify_begin(q42_certify_result *r, const char *kernel, double tol_abs, double tol_rel,
		       const char *shape_fmt, ...) __attribute__((format(printf, 5, 6)));


#endif
