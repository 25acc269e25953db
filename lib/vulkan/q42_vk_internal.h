/* q42_vk_internal.h -- layer functions for libq42's own tests, not part of
 * the q42_vk.h interface.
 *
 * Devices whose memory the host can map (lavapipe, integrated GPUs) upload
 * and download with memcpy; a discrete GPU goes through the staging
 * buffer. Forcing staging lets test_vk cover that path on any device.
 */
#ifndef Q42_VK_INTERNAL_H
#define Q42_VK_INTERNAL_H

#include <stdbool.h>
#include "vulkan/q42_vk.h"

void q42_vk_force_staging(q42_vk *vk, bool on);

#endif
