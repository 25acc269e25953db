/* q42_certify_cases.h -- what the CPU and Vulkan certification share: the
 * seeded generator, random weight blocks, the per-case comparison, and the
 * Vulkan cases' entry point (lib/vulkan/q42_vk_certify.c, built only with
 * Vulkan). Internal to libq42; the tests use it to show a wrong result is
 * caught.
 */
#ifndef Q42_CERTIFY_IMPL_H
#define Q42_CERTIFY_IMPL_H

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

#ifdef Q42_WITH_VULKAN
#include "vulkan/q42_vk_ops.h"
int q42_vk_certify_run(int32_t device, uint64_t seed, q42_certify_fn fn, void *arg,
		       uint32_t *n_fail, q42_err *err);
/* The same cases on a device already open (the Vulkan forward pass's gate). */
int q42_vk_certify_device(q42_vk *vk, q42_vk_ops *ops, uint64_t seed, q42_certify_fn fn,
			  void *arg, uint32_t *n_fail, q42_err *err);
#endif

#endif
