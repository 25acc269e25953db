/* q42_vk.h -- the Vulkan layer: one instance, one device and its compute
 * queue; device memory, buffers, compute pipelines built from the SPIR-V
 * embedded at build time (shaders/NAME.comp), and one command buffer recorded
 * per pass and submitted once.
 *
 * It exists so the kernels (q42_vk_ops.h) and the forward pass never touch
 * raw Vulkan objects. Nothing here prints; every failure returns a code and
 * a message naming the Vulkan call and its VkResult. Out-of-device-memory is
 * Q42_ENOMEM with the heap size in the message; a missing device feature is
 * Q42_EUNSUPPORTED naming the feature.
 */
#ifndef Q42_VK_H
#define Q42_VK_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_err.h"

enum q42_vk_devtype {
	Q42_VK_DEV_OTHER = 0,
	Q42_VK_DEV_INTEGRATED = 1,
	Q42_VK_DEV_DISCRETE = 2,
	Q42_VK_DEV_VIRTUAL = 3,
	Q42_VK_DEV_CPU = 4, /* lavapipe / llvmpipe and other software drivers */
};

typedef struct q42_vk_device_info {
	uint32_t index;            /* position in the loader's enumeration */
	char name[256];
	char driver[256];          /* driverName and driverInfo */
	enum q42_vk_devtype type;
	uint32_t vendor_id, device_id;
	uint32_t api_version;      /* VK_MAKE_API_VERSION packing */
	uint64_t device_local_bytes; /* largest DEVICE_LOCAL heap */
	uint32_t subgroup_size;
	uint32_t max_shared_bytes; /* maxComputeSharedMemorySize */
	bool fp16, int8, storage16, storage8; /* shaderFloat16, shaderInt8, 16/8-bit storage */
} q42_vk_device_info;

/* Q42_EUNSUPPORTED when there is no loader, no ICD or no device, or q42
 * was built without Vulkan (then only this function and
 * q42_vk_devtype_name exist). At most cap entries are written; *n is the
 * number of devices. */
Q42_API int q42_vk_devices(q42_vk_device_info *out, uint32_t cap, uint32_t *n, q42_err *err);
Q42_API const char *q42_vk_devtype_name(enum q42_vk_devtype t);

typedef struct q42_vk q42_vk;
typedef struct q42_vk_buf q42_vk_buf;
typedef struct q42_vk_pipe q42_vk_pipe;

/* device >= 0: that index (Q42_EARG when out of range). device < 0: the
 * first discrete GPU, else the first integrated one, else -- only when
 * allow_cpu -- a software device; Q42_EUNSUPPORTED when none qualifies.
 * The device must offer 16-bit storage, shaderFloat16 is not required. */
Q42_API int q42_vk_open(q42_vk **out, int32_t device, bool allow_cpu, q42_err *err);
Q42_API void q42_vk_close(q42_vk *vk);
Q42_API const q42_vk_device_info *q42_vk_info(const q42_vk *vk);

enum q42_vk_mem {
	Q42_VK_MEM_DEVICE = 0, /* device-local; filled through q42_vk_buf_upload */
	Q42_VK_MEM_HOST = 1,   /* host-visible, coherent, persistently mapped */
};

/* Storage buffer of size bytes (rounded up to 16). */
Q42_API int q42_vk_buf_create(q42_vk *vk, uint64_t size, enum q42_vk_mem mem, q42_vk_buf **out,
			      q42_err *err);
Q42_API void q42_vk_buf_free(q42_vk *vk, q42_vk_buf *b);
Q42_API uint64_t q42_vk_buf_size(const q42_vk_buf *b);
/* The mapping of a Q42_VK_MEM_HOST buffer; NULL for device memory. */
Q42_API void *q42_vk_buf_map(q42_vk_buf *b);
/* Synchronous copies through a staging buffer (chunked; never inside a
 * recording). */
Q42_API int q42_vk_buf_upload(q42_vk *vk, q42_vk_buf *dst, uint64_t off, const void *src, uint64_t n,
			      q42_err *err);
Q42_API int q42_vk_buf_download(q42_vk *vk, q42_vk_buf *src, uint64_t off, void *dst, uint64_t n,
				q42_err *err);

/* A range of a buffer bound to one binding; size 0 = to the end, but at
 * most the device's maxStorageBufferRange (128 MiB on lavapipe): a larger
 * explicit size is Q42_EUNSUPPORTED at dispatch. */
typedef struct q42_vk_view {
	q42_vk_buf *buf;
	uint64_t off;  /* multiple of the device's minStorageBufferOffsetAlignment */
	uint64_t size;
} q42_vk_view;

/* The compute pipeline of embedded shader `name` (file name without
 * .comp), with n_bufs storage-buffer bindings 0..n_bufs-1 in set 0,
 * push_bytes of push constants, and n_spec uint32 specialization constants
 * (constant_id 0..n_spec-1). Created once and cached per (name, spec);
 * Q42_ENOTFOUND for an unknown name. */
Q42_API int q42_vk_pipe_get(q42_vk *vk, const char *name, uint32_t n_bufs, uint32_t push_bytes,
			    const uint32_t *spec, uint32_t n_spec, q42_vk_pipe **out, q42_err *err);

/* Recording: begin, any number of dispatches/copies/stamps, submit (which
 * waits for completion). Each dispatch is followed by a compute-to-compute
 * memory barrier, so dispatches see the writes of earlier ones. */
Q42_API int q42_vk_begin(q42_vk *vk, q42_err *err);
Q42_API int q42_vk_dispatch(q42_vk *vk, q42_vk_pipe *p, const q42_vk_view *bufs, uint32_t n_bufs,
			    const void *push, uint32_t push_bytes, uint32_t gx, uint32_t gy, uint32_t gz,
			    q42_err *err);
Q42_API int q42_vk_copy(q42_vk *vk, q42_vk_view src, q42_vk_view dst, q42_err *err);
/* A timestamp after everything recorded so far (no-op when the queue has
 * no timestamp support); label must outlive the submit. */
Q42_API void q42_vk_stamp(q42_vk *vk, const char *label);
Q42_API int q42_vk_submit(q42_vk *vk, q42_err *err);
/* Nanoseconds between consecutive stamps of the last submit: *n pairs
 * (label of the later stamp, ns). */
Q42_API uint32_t q42_vk_stamps(const q42_vk *vk, const char **labels, double *ns, uint32_t cap);

/* The Vulkan backend, for q42_engine_opts.backend_ops and
 * q42_certify_run (engine/q42_backend.h). In a build without Vulkan it
 * exists too and says so: check and certify fail with Q42_EUNSUPPORTED,
 * open with it for Q42_BACKEND_VULKAN and leaves AUTO on the CPU. */
struct q42_backend_ops;
Q42_API const struct q42_backend_ops *q42_vk_backend(void);

#endif
