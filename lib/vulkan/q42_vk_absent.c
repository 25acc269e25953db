/* q42_vk_absent.c -- the device listing of q42_vk.h in a build without
 * Vulkan (configure --with-vulkan=no, or auto without the packages).
 *
 * Only the two functions a program may call before choosing a backend
 * exist here, so q42run --list-devices needs no #ifdef: they say plainly
 * that this build has no Vulkan. Everything else of q42_vk.h is reached
 * only under #ifdef Q42_WITH_VULKAN.
 */
#include "vulkan/q42_vk.h"

int q42_vk_devices(q42_vk_device_info *out, uint32_t cap, uint32_t *n, q42_err *err)
{
	(void)out;
	(void)cap;
	if (n != NULL)
		*n = 0;
	return q42_err_set(err, Q42_EUNSUPPORTED,
			   "q42 was built without Vulkan (configure --with-vulkan)");
}

const char *q42_vk_devtype_name(enum q42_vk_devtype t)
{
	(void)t;
	return "other";
}
