/* q42_certify.h -- kernel certification: every kernel of a backend run on
 * seeded random inputs of several shapes against the CPU scalar reference,
 * with a documented tolerance per kernel (q42run(1), CERTIFICATION).
 *
 * A kernel that fails here must not be used: the Vulkan forward pass
 * refuses a device whose certification fails (every case, seed 0, once
 * per device and process: lib/vulkan/q42_vk_forward.c).
 * For the CPU backend the candidates are the SIMD tables of the best ISA
 * (kernels/q42_kernels.h, kernels/q42_llamacpp.h) against Q42_ISA_SCALAR.
 */
#ifndef Q42_CERTIFY_H
#define Q42_CERTIFY_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_err.h"
#include "engine/q42_engine.h"

/* q42_certify_result and q42_certify_fn: engine/q42_backend.h */

/* Run every case of backend (CPU, or VULKAN through ops -- e.g.
 * q42_vk_backend(); device as in q42_engine_opts) with inputs drawn from
 * seed; fn is called once per case
 * in a fixed order. *n_fail counts failed cases. Returns Q42_OK when the
 * cases ran (whatever their outcome), Q42_EUNSUPPORTED when the backend
 * is not available (built without Vulkan, no device). */
Q42_API int q42_certify_run(const q42_backend_ops *ops, enum q42_backend backend, int32_t device,
			    uint64_t seed,
			    q42_certify_fn fn, void *arg, uint32_t *n_fail, q42_err *err);

#endif
