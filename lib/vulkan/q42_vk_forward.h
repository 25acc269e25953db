/* q42_vk_forward.h -- internal to libq42: the forward pass on a Vulkan
 * device, as the engine (lib/engine/q42_engine.c) drives it.
 *
 * The engine binds and checks the model once and hands the binding over
 * through the backend interface (engine/q42_backend.h, q42_vk_backend()
 * in q42_vk.h); this part uploads what it bound -- weights, norms, biases -- to device memory,
 * allocates the KV cache and every activation there, and then runs each
 * pass as one command buffer. Compiled only with Q42_WITH_VULKAN; never
 * installed.
 */
#ifndef Q42_VK_FORWARD_H
#define Q42_VK_FORWARD_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_err.h"
#include "engine/q42_backend.h"
#include "vulkan/q42_vk_ops.h"
#include "vulkan/q42_vk.h"

typedef struct q42_vkf q42_vkf;

/* Open the device of backend (Q42_BACKEND_VULKAN: device as q42_vk_open
 * with software devices allowed; Q42_BACKEND_AUTO: a discrete or
 * integrated GPU only, and *out stays NULL when there is none -- the CPU
 * runs the model then), build the kernels and upload the engine's bound
 * weights. Matrices of a type without a Vulkan matrix kernel are
 * dequantized to F16 here and counted as fallbacks. Errors: the layer's
 * (Q42_EUNSUPPORTED: no device qualifies; Q42_EARG: bad index;
 * Q42_ENOMEM: device memory), Q42_EUNSUPPORTED for a weight type that can
 * neither be used nor dequantized. e must outlive *out. */
int q42_vkf_open(q42_vkf **out, const q42_bound_model *e, enum q42_backend backend,
		 int32_t device, q42_err *err);
void q42_vkf_close(q42_vkf *f);

/* One pass over n tokens (1 <= n <= the engine's n_batch) at positions
 * pos0.. (pos0 + n <= n_ctx; the caller has checked ids and room). With
 * want_logits the n_vocab logits of the last token are written to logits
 * and the device's argmax of them to *top1 (either may be NULL). */
int q42_vkf_eval(q42_vkf *f, const int32_t *ids, uint32_t n, uint32_t pos0, bool want_logits,
		 float *logits, int32_t *top1, q42_err *err);

/* One sequence's embedding (engine/q42_backend.h, embed): n tokens (1 <= n
 * <= n_batch, ids checked) at positions 0.., the rows after the final
 * norm pooled by pooling (enum q42_pooling) and through dense_2/dense_3;
 * *n_rows rows of the embedding width into out (NULL: computed, not
 * copied). */
int q42_vkf_embed(q42_vkf *f, const int32_t *ids, uint32_t n, uint32_t pooling, float *out,
		  uint32_t *n_rows, q42_err *err);

const q42_vk_device_info *q42_vkf_device(const q42_vkf *f);
/* Matrices converted at upload, and a line naming them (NULL when none). */
uint32_t q42_vkf_n_fallbacks(const q42_vkf *f);
const char *q42_vkf_fallback_note(const q42_vkf *f);
/* Device time of every pass since open, from timestamps (0 when the
 * queue has none). */
double q42_vkf_device_ms(const q42_vkf *f);


/* Certification of the Vulkan kernels (q42_vk_certify.c): every case on
 * device, or on a device already open (the forward pass's gate). */
int q42_vk_certify_run(int32_t device, uint64_t seed, q42_certify_fn fn, void *arg,
		       uint32_t *n_fail, q42_err *err);
int q42_vk_certify_device(q42_vk *vk, q42_vk_ops *ops, uint64_t seed, q42_certify_fn fn,
			  void *arg, uint32_t *n_fail, q42_err *err);

#endif
