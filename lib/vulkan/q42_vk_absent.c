/* q42_vk_absent.c -- the Vulkan backend in a build without Vulkan
 * (configure --with-vulkan=no, or auto without the packages).
 *
 * The device listing and the backend table exist here, so no program and
 * no other folder needs an #ifdef: they say plainly that this build has no
 * Vulkan, and --backend auto stays on the CPU. Nothing else of q42_vk.h
 * is built.
 */
#include "engine/q42_backend.h"
#include "vulkan/q42_vk.h"

#define NO_VULKAN "q42 was built without Vulkan (configure --with-vulkan)"

int q42_vk_devices(q42_vk_device_info *out, uint32_t cap, uint32_t *n, q42_err *err)
{
	(void)out;
	(void)cap;
	if (n != NULL)
		*n = 0;
	return q42_err_set(err, Q42_EUNSUPPORTED, NO_VULKAN);
}

const char *q42_vk_devtype_name(enum q42_vk_devtype t)
{
	(void)t;
	return "other";
}

static int absent_check(int32_t device, q42_err *err)
{
	(void)device;
	return q42_err_set(err, Q42_EUNSUPPORTED, NO_VULKAN);
}

static int absent_open(void **state, const q42_bound_model *m, enum q42_backend want,
		       int32_t device, q42_err *err)
{
	(void)m;
	(void)device;
	*state = NULL;
	return want == Q42_BACKEND_AUTO ? Q42_OK : q42_err_set(err, Q42_EUNSUPPORTED, NO_VULKAN);
}

static int absent_certify(int32_t device, uint64_t seed, q42_certify_fn fn, void *arg,
			  uint32_t *n_fail, q42_err *err)
{
	(void)seed;
	(void)fn;
	(void)arg;
	*n_fail = 0;
	return absent_check(device, err);
}

static const q42_backend_ops absent = {
	.name = "vulkan",
	.check = absent_check,
	.open = absent_open,
	.certify = absent_certify,
};

const q42_backend_ops *q42_vk_backend(void) { return &absent; }
