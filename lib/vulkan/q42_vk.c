/* q42_vk.c -- the Vulkan layer of q42_vk.h: instance, device choice, memory,
 * buffers, cached compute pipelines from the embedded SPIR-V, and one
 * command buffer per pass with a barrier after every dispatch or copy.
 *
 * It owns every raw Vulkan object of the backend. It never prints, never
 * waits without a fence, and never leaves a half-built object behind: each
 * constructor releases what it made on its single failure path. Passes are
 * synchronous (submit waits), which keeps the staging buffer, descriptor
 * pool and timestamp queries simple to reuse.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include "common/q42_ckd.h"
#include "vulkan/q42_vk.h"
#include "vulkan/q42_vk_internal.h"
#include "vulkan/q42_vk_spirv.h"

/* Fixed bounds of the layer, chosen well above what the kernels use. */
#define VK_MAX_BUFS 16        /* storage-buffer bindings per pipeline */
#define VK_MAX_SPEC 16        /* specialization constants per pipeline */
#define VK_MAX_STAMPS 256     /* timestamps per pass; later ones are dropped */
#define VK_POOL_SETS 256      /* descriptor sets of the first pool */
#define VK_MAX_POOLS 16       /* pools a pass may grow to before failing */
#define VK_STAGING_BYTES (8u << 20)

struct q42_vk_buf {
	VkBuffer buf;
	VkDeviceMemory mem;
	uint64_t size;
	enum q42_vk_mem kind;
	void *map;       /* Q42_VK_MEM_HOST: the caller's mapping */
	void *direct;    /* device memory the host may also write (UMA), or NULL */
	bool direct_read; /* and read at cached speed */
};

struct q42_vk_pipe {
	struct q42_vk_pipe *next;
	char name[64];
	uint32_t spec[VK_MAX_SPEC];
	uint32_t n_spec, n_bufs, push_bytes;
	VkShaderModule mod;
	VkDescriptorSetLayout dsl;
	VkPipelineLayout layout;
	VkPipeline pipe;
};

struct q42_vk {
	VkInstance inst;
	VkPhysicalDevice pd;
	VkDevice dev;
	VkQueue queue;
	uint32_t qfam;
	q42_vk_device_info info;
	VkPhysicalDeviceMemoryProperties memp;
	VkPhysicalDeviceLimits limits;
	uint64_t max_alloc;
	bool force_staging; /* q42_vk_force_staging: tests of the discrete-GPU path */

	VkCommandPool cpool;
	VkCommandBuffer cmd;
	VkFence fence;
	bool recording;

	VkDescriptorPool pools[VK_MAX_POOLS];
	uint32_t pool_sets[VK_MAX_POOLS];
	uint32_t n_pools;

	q42_vk_pipe *pipes;
	q42_vk_buf *staging;

	VkQueryPool qpool; /* VK_NULL_HANDLE when the queue cannot stamp */
	uint64_t ts_mask;
	double ts_period;
	uint32_t n_stamps;
	const char *stamp_labels[VK_MAX_STAMPS];
	uint32_t n_results;
	const char *result_labels[VK_MAX_STAMPS];
	double result_ns[VK_MAX_STAMPS];
};

static const char *vk_result_name(VkResult r)
{
	switch (r) {
	case VK_SUCCESS: return "VK_SUCCESS";
	case VK_NOT_READY: return "VK_NOT_READY";
	case VK_TIMEOUT: return "VK_TIMEOUT";
	case VK_INCOMPLETE: return "VK_INCOMPLETE";
	case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
	case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
	case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
	case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
	case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
	case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
	case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
	case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
	case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
	case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
	case VK_ERROR_FRAGMENTED_POOL: return "VK_ERROR_FRAGMENTED_POOL";
	case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
	case VK_ERROR_INVALID_SHADER_NV: return "VK_ERROR_INVALID_SHADER_NV";
	default: return "VkResult (unnamed)";
	}
}

/* A failed Vulkan call as a q42 code: memory exhaustion is Q42_ENOMEM, a
 * missing driver or feature Q42_EUNSUPPORTED, anything else (device lost,
 * driver trouble) Q42_EIO. */
static int vk_fail(q42_err *err, const char *call, VkResult r)
{
	int rc;
	switch (r) {
	case VK_ERROR_OUT_OF_HOST_MEMORY:
	case VK_ERROR_OUT_OF_DEVICE_MEMORY:
	case VK_ERROR_OUT_OF_POOL_MEMORY:
	case VK_ERROR_FRAGMENTED_POOL:
	case VK_ERROR_TOO_MANY_OBJECTS:
		rc = Q42_ENOMEM;
		break;
	case VK_ERROR_INCOMPATIBLE_DRIVER:
	case VK_ERROR_EXTENSION_NOT_PRESENT:
	case VK_ERROR_FEATURE_NOT_PRESENT:
	case VK_ERROR_LAYER_NOT_PRESENT:
		rc = Q42_EUNSUPPORTED;
		break;
	default:
		rc = Q42_EIO;
		break;
	}
	return q42_err_set(err, rc, "vulkan: %s failed: %s (%d)", call, vk_result_name(r), (int)r);
}

const char *q42_vk_devtype_name(enum q42_vk_devtype t)
{
	switch (t) {
	case Q42_VK_DEV_INTEGRATED: return "integrated";
	case Q42_VK_DEV_DISCRETE: return "discrete";
	case Q42_VK_DEV_VIRTUAL: return "virtual";
	case Q42_VK_DEV_CPU: return "cpu";
	case Q42_VK_DEV_OTHER: break;
	}
	return "other";
}

static bool has_extension(const VkExtensionProperties *ext, uint32_t n, const char *name)
{
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(ext[i].extensionName, name) == 0)
			return true;
	return false;
}

/* Vulkan 1.2 instance; VK_KHR_portability_enumeration (when the loader has
 * it) so portability drivers such as MoltenVK are listed too. */
static int instance_create(VkInstance *out, q42_err *err)
{
	uint32_t ver = 0, n_ext = 0;
	VkExtensionProperties *ext = NULL;
	const char *enabled[1];
	uint32_t n_enabled = 0;
	VkInstanceCreateFlags flags = 0;
	VkResult r;
	int rc = Q42_OK;

	if (vkEnumerateInstanceVersion(&ver) != VK_SUCCESS || ver < VK_API_VERSION_1_2)
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "vulkan: the Vulkan loader supports only version %u.%u; q42 needs 1.2",
				   VK_API_VERSION_MAJOR(ver), VK_API_VERSION_MINOR(ver));
	r = vkEnumerateInstanceExtensionProperties(NULL, &n_ext, NULL);
	if (r != VK_SUCCESS)
		return vk_fail(err, "vkEnumerateInstanceExtensionProperties", r);
	if (n_ext > 0) {
		ext = calloc(n_ext, sizeof *ext);
		if (ext == NULL)
			return q42_err_set(err, Q42_ENOMEM, "vulkan: out of memory listing extensions");
		r = vkEnumerateInstanceExtensionProperties(NULL, &n_ext, ext);
		if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
			rc = vk_fail(err, "vkEnumerateInstanceExtensionProperties", r);
			goto done;
		}
	}
	if (has_extension(ext, n_ext, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
		enabled[n_enabled++] = VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME;
		flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
	}
	VkApplicationInfo app = {
		.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
		.pApplicationName = "q42",
		.pEngineName = "libq42",
		.apiVersion = VK_API_VERSION_1_2,
	};
	VkInstanceCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
		.flags = flags,
		.pApplicationInfo = &app,
		.enabledExtensionCount = n_enabled,
		.ppEnabledExtensionNames = enabled,
	};
	r = vkCreateInstance(&ci, NULL, out);
	if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
		rc = q42_err_set(err, Q42_EUNSUPPORTED,
				 "vulkan: no Vulkan driver found (install a driver; on Debian, "
				 "mesa-vulkan-drivers provides lavapipe)");
	else if (r != VK_SUCCESS)
		rc = vk_fail(err, "vkCreateInstance", r);
done:
	free(ext);
	return rc;
}

/* All physical devices of inst (caller frees *out). Q42_EUNSUPPORTED when
 * there are none. */
static int physical_devices(VkInstance inst, VkPhysicalDevice **out, uint32_t *n, q42_err *err)
{
	uint32_t count = 0;
	VkResult r = vkEnumeratePhysicalDevices(inst, &count, NULL);
	if (r != VK_SUCCESS)
		return vk_fail(err, "vkEnumeratePhysicalDevices", r);
	if (count == 0)
		return q42_err_set(err, Q42_EUNSUPPORTED, "vulkan: no Vulkan device found");
	*out = calloc(count, sizeof **out);
	if (*out == NULL)
		return q42_err_set(err, Q42_ENOMEM, "vulkan: out of memory listing devices");
	r = vkEnumeratePhysicalDevices(inst, &count, *out);
	if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
		free(*out);
		*out = NULL;
		return vk_fail(err, "vkEnumeratePhysicalDevices", r);
	}
	*n = count;
	return Q42_OK;
}

static void copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = strnlen(src, cap - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static void device_info(VkPhysicalDevice pd, uint32_t index, q42_vk_device_info *info)
{
	VkPhysicalDeviceProperties p;
	VkPhysicalDeviceMemoryProperties mp;

	memset(info, 0, sizeof *info);
	info->index = index;
	vkGetPhysicalDeviceProperties(pd, &p);
	copy_str(info->name, sizeof info->name, p.deviceName);
	info->vendor_id = p.vendorID;
	info->device_id = p.deviceID;
	info->api_version = p.apiVersion;
	info->max_shared_bytes = p.limits.maxComputeSharedMemorySize;
	switch (p.deviceType) {
	case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: info->type = Q42_VK_DEV_INTEGRATED; break;
	case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: info->type = Q42_VK_DEV_DISCRETE; break;
	case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: info->type = Q42_VK_DEV_VIRTUAL; break;
	case VK_PHYSICAL_DEVICE_TYPE_CPU: info->type = Q42_VK_DEV_CPU; break;
	default: info->type = Q42_VK_DEV_OTHER; break;
	}
	vkGetPhysicalDeviceMemoryProperties(pd, &mp);
	for (uint32_t h = 0; h < mp.memoryHeapCount; h++)
		if ((mp.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) &&
		    mp.memoryHeaps[h].size > info->device_local_bytes)
			info->device_local_bytes = mp.memoryHeaps[h].size;

	/* The 1.1/1.2 property and feature structures may only be chained for
	 * a device of that version; older devices keep zeros (and are refused
	 * by q42_vk_open). */
	if (p.apiVersion < VK_API_VERSION_1_2) {
		snprintf(info->driver, sizeof info->driver, "version 0x%x", p.driverVersion);
		return;
	}
	VkPhysicalDeviceVulkan12Properties p12 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES,
	};
	VkPhysicalDeviceVulkan11Properties p11 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES,
		.pNext = &p12,
	};
	VkPhysicalDeviceProperties2 p2 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
		.pNext = &p11,
	};
	vkGetPhysicalDeviceProperties2(pd, &p2);
	info->subgroup_size = p11.subgroupSize;
	char name[VK_MAX_DRIVER_NAME_SIZE + 1], drv[VK_MAX_DRIVER_INFO_SIZE + 1];
	copy_str(name, sizeof name, p12.driverName);
	copy_str(drv, sizeof drv, p12.driverInfo);
	if (drv[0] != '\0')
		snprintf(info->driver, sizeof info->driver, "%.120s %.120s", name, drv);
	else
		copy_str(info->driver, sizeof info->driver, name);

	VkPhysicalDeviceVulkan12Features f12 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
	};
	VkPhysicalDeviceVulkan11Features f11 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
		.pNext = &f12,
	};
	VkPhysicalDeviceFeatures2 f2 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
		.pNext = &f11,
	};
	vkGetPhysicalDeviceFeatures2(pd, &f2);
	info->fp16 = f12.shaderFloat16;
	info->int8 = f12.shaderInt8;
	info->storage16 = f11.storageBuffer16BitAccess;
	info->storage8 = f12.storageBuffer8BitAccess;
}

int q42_vk_devices(q42_vk_device_info *out, uint32_t cap, uint32_t *n, q42_err *err)
{
	VkInstance inst = VK_NULL_HANDLE;
	VkPhysicalDevice *pds = NULL;
	uint32_t count = 0;
	int rc;

	if (n == NULL || (cap > 0 && out == NULL))
		return q42_err_set(err, Q42_EARG, "vulkan: q42_vk_devices: no output");
	*n = 0;
	rc = instance_create(&inst, err);
	if (rc != Q42_OK)
		return rc;
	rc = physical_devices(inst, &pds, &count, err);
	if (rc == Q42_OK) {
		for (uint32_t i = 0; i < count && i < cap; i++)
			device_info(pds[i], i, &out[i]);
		*n = count;
	}
	free(pds);
	vkDestroyInstance(inst, NULL);
	return rc;
}

/* Preference of device -1: discrete, integrated, virtual (all real GPUs),
 * then -- only when allowed -- a software device; 0 = never. */
static int device_rank(enum q42_vk_devtype t, bool allow_cpu)
{
	switch (t) {
	case Q42_VK_DEV_DISCRETE: return 4;
	case Q42_VK_DEV_INTEGRATED: return 3;
	case Q42_VK_DEV_VIRTUAL: return 2;
	case Q42_VK_DEV_CPU: return allow_cpu ? 1 : 0;
	case Q42_VK_DEV_OTHER: break;
	}
	return 0;
}

static int pick_device(q42_vk *vk, int32_t device, bool allow_cpu, q42_err *err)
{
	VkPhysicalDevice *pds = NULL;
	uint32_t count = 0;
	int rc = physical_devices(vk->inst, &pds, &count, err);
	if (rc != Q42_OK)
		return rc;
	if (device >= 0) {
		if ((uint32_t)device >= count) {
			rc = q42_err_set(err, Q42_EARG,
					 "vulkan: no device %d (there %s %u; see q42run --list-devices)",
					 (int)device, count == 1 ? "is" : "are", count);
			goto done;
		}
		vk->pd = pds[device];
		device_info(vk->pd, (uint32_t)device, &vk->info);
		goto done;
	}
	int best = 0;
	for (uint32_t i = 0; i < count; i++) {
		q42_vk_device_info info;
		device_info(pds[i], i, &info);
		int rank = device_rank(info.type, allow_cpu);
		if (rank > best) {
			best = rank;
			vk->pd = pds[i];
			vk->info = info;
		}
	}
	if (best == 0)
		rc = q42_err_set(err, Q42_EUNSUPPORTED,
				 allow_cpu ? "vulkan: none of the %u Vulkan devices is usable"
					   : "vulkan: no Vulkan GPU among the %u devices (software devices "
					     "such as lavapipe only with --backend vulkan)",
				 count);
done:
	free(pds);
	return rc;
}

/* The logical device with one compute queue and every feature the kernels
 * can use that the device offers; 16-bit storage is required. */
static int device_create(q42_vk *vk, q42_err *err)
{
	VkQueueFamilyProperties *qf = NULL;
	VkExtensionProperties *ext = NULL;
	uint32_t n_qf = 0, n_ext = 0;
	int rc = Q42_OK;
	VkResult r;

	if (vk->info.api_version < VK_API_VERSION_1_2)
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "vulkan: device %u (%s) supports Vulkan %u.%u; q42 needs 1.2",
				   vk->info.index, vk->info.name, VK_API_VERSION_MAJOR(vk->info.api_version),
				   VK_API_VERSION_MINOR(vk->info.api_version));
	if (!vk->info.storage16)
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "vulkan: device %u (%s) lacks storageBuffer16BitAccess (16-bit storage), "
				   "which q42's kernels need",
				   vk->info.index, vk->info.name);

	vkGetPhysicalDeviceQueueFamilyProperties(vk->pd, &n_qf, NULL);
	qf = calloc(n_qf > 0 ? n_qf : 1, sizeof *qf);
	if (qf == NULL)
		return q42_err_set(err, Q42_ENOMEM, "vulkan: out of memory listing queues");
	vkGetPhysicalDeviceQueueFamilyProperties(vk->pd, &n_qf, qf);
	/* A compute-only family first: on discrete GPUs it is the async queue
	 * that graphics work does not share. */
	uint32_t pick = UINT32_MAX;
	for (uint32_t i = 0; i < n_qf && pick == UINT32_MAX; i++)
		if ((qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && !(qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT))
			pick = i;
	for (uint32_t i = 0; i < n_qf && pick == UINT32_MAX; i++)
		if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT)
			pick = i;
	if (pick == UINT32_MAX) {
		rc = q42_err_set(err, Q42_EUNSUPPORTED, "vulkan: device %u (%s) has no compute queue",
				 vk->info.index, vk->info.name);
		goto done;
	}
	vk->qfam = pick;
	uint32_t ts_bits = qf[pick].timestampValidBits;
	vk->ts_mask = ts_bits >= 64 ? UINT64_MAX : ts_bits == 0 ? 0 : (UINT64_C(1) << ts_bits) - 1;

	r = vkEnumerateDeviceExtensionProperties(vk->pd, NULL, &n_ext, NULL);
	if (r != VK_SUCCESS) {
		rc = vk_fail(err, "vkEnumerateDeviceExtensionProperties", r);
		goto done;
	}
	if (n_ext > 0) {
		ext = calloc(n_ext, sizeof *ext);
		if (ext == NULL) {
			rc = q42_err_set(err, Q42_ENOMEM, "vulkan: out of memory listing extensions");
			goto done;
		}
		r = vkEnumerateDeviceExtensionProperties(vk->pd, NULL, &n_ext, ext);
		if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
			rc = vk_fail(err, "vkEnumerateDeviceExtensionProperties", r);
			goto done;
		}
	}
	/* A portability driver must have its subset extension enabled. */
	const char *enabled[1];
	uint32_t n_enabled = 0;
	if (has_extension(ext, n_ext, "VK_KHR_portability_subset"))
		enabled[n_enabled++] = "VK_KHR_portability_subset";

	VkPhysicalDeviceVulkan12Features have12 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
	};
	VkPhysicalDeviceVulkan11Features have11 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
		.pNext = &have12,
	};
	VkPhysicalDeviceFeatures2 have = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
		.pNext = &have11,
	};
	vkGetPhysicalDeviceFeatures2(vk->pd, &have);

	VkPhysicalDeviceVulkan12Features want12 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
		.shaderFloat16 = have12.shaderFloat16,
		.shaderInt8 = have12.shaderInt8,
		.storageBuffer8BitAccess = have12.storageBuffer8BitAccess,
		.uniformAndStorageBuffer8BitAccess = have12.uniformAndStorageBuffer8BitAccess,
		.storagePushConstant8 = have12.storagePushConstant8,
	};
	VkPhysicalDeviceVulkan11Features want11 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
		.pNext = &want12,
		.storageBuffer16BitAccess = have11.storageBuffer16BitAccess,
		.uniformAndStorageBuffer16BitAccess = have11.uniformAndStorageBuffer16BitAccess,
		.storagePushConstant16 = have11.storagePushConstant16,
	};
	VkPhysicalDeviceFeatures2 want = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
		.pNext = &want11,
		.features = {
			.shaderInt16 = have.features.shaderInt16,
			.shaderInt64 = have.features.shaderInt64,
		},
	};
	float prio = 1.0f;
	VkDeviceQueueCreateInfo qci = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
		.queueFamilyIndex = pick,
		.queueCount = 1,
		.pQueuePriorities = &prio,
	};
	VkDeviceCreateInfo dci = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
		.pNext = &want,
		.queueCreateInfoCount = 1,
		.pQueueCreateInfos = &qci,
		.enabledExtensionCount = n_enabled,
		.ppEnabledExtensionNames = enabled,
	};
	r = vkCreateDevice(vk->pd, &dci, NULL, &vk->dev);
	if (r != VK_SUCCESS) {
		rc = vk_fail(err, "vkCreateDevice", r);
		goto done;
	}
	vkGetDeviceQueue(vk->dev, pick, 0, &vk->queue);
done:
	free(ext);
	free(qf);
	return rc;
}

static int descriptor_pool_add(q42_vk *vk, uint32_t sets, q42_err *err)
{
	if (vk->n_pools == VK_MAX_POOLS)
		return q42_err_set(err, Q42_ENOMEM,
				   "vulkan: a pass needs more than %u descriptor pools (too many dispatches)",
				   VK_MAX_POOLS);
	VkDescriptorPoolSize size = {
		.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
		.descriptorCount = sets * VK_MAX_BUFS,
	};
	VkDescriptorPoolCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
		.maxSets = sets,
		.poolSizeCount = 1,
		.pPoolSizes = &size,
	};
	VkResult r = vkCreateDescriptorPool(vk->dev, &ci, NULL, &vk->pools[vk->n_pools]);
	if (r != VK_SUCCESS)
		return vk_fail(err, "vkCreateDescriptorPool", r);
	vk->pool_sets[vk->n_pools++] = sets;
	return Q42_OK;
}

/* Everything per-device besides the device itself: command pool and
 * buffer, fence, first descriptor pool, timestamp queries. */
static int device_objects(q42_vk *vk, q42_err *err)
{
	VkResult r;
	VkCommandPoolCreateInfo pci = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
		.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
		.queueFamilyIndex = vk->qfam,
	};
	r = vkCreateCommandPool(vk->dev, &pci, NULL, &vk->cpool);
	if (r != VK_SUCCESS)
		return vk_fail(err, "vkCreateCommandPool", r);
	VkCommandBufferAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.commandPool = vk->cpool,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
		.commandBufferCount = 1,
	};
	r = vkAllocateCommandBuffers(vk->dev, &ai, &vk->cmd);
	if (r != VK_SUCCESS)
		return vk_fail(err, "vkAllocateCommandBuffers", r);
	VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
	r = vkCreateFence(vk->dev, &fci, NULL, &vk->fence);
	if (r != VK_SUCCESS)
		return vk_fail(err, "vkCreateFence", r);
	int rc = descriptor_pool_add(vk, VK_POOL_SETS, err);
	if (rc != Q42_OK)
		return rc;
	if (vk->ts_mask != 0 && vk->limits.timestampPeriod > 0) {
		VkQueryPoolCreateInfo qci = {
			.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
			.queryType = VK_QUERY_TYPE_TIMESTAMP,
			.queryCount = VK_MAX_STAMPS,
		};
		r = vkCreateQueryPool(vk->dev, &qci, NULL, &vk->qpool);
		if (r != VK_SUCCESS)
			return vk_fail(err, "vkCreateQueryPool", r);
		vk->ts_period = vk->limits.timestampPeriod;
	}
	return Q42_OK;
}

int q42_vk_open(q42_vk **out, int32_t device, bool allow_cpu, q42_err *err)
{
	if (out == NULL)
		return q42_err_set(err, Q42_EARG, "vulkan: q42_vk_open: no output");
	*out = NULL;
	q42_vk *vk = calloc(1, sizeof *vk);
	if (vk == NULL)
		return q42_err_set(err, Q42_ENOMEM, "vulkan: out of memory");
	int rc = instance_create(&vk->inst, err);
	if (rc != Q42_OK)
		goto fail;
	rc = pick_device(vk, device, allow_cpu, err);
	if (rc != Q42_OK)
		goto fail;
	VkPhysicalDeviceProperties p;
	vkGetPhysicalDeviceProperties(vk->pd, &p);
	vk->limits = p.limits;
	vkGetPhysicalDeviceMemoryProperties(vk->pd, &vk->memp);
	vk->max_alloc = UINT64_MAX;
	if (vk->info.api_version >= VK_API_VERSION_1_2) {
		VkPhysicalDeviceMaintenance3Properties m3 = {
			.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES,
		};
		VkPhysicalDeviceProperties2 p2 = {
			.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
			.pNext = &m3,
		};
		vkGetPhysicalDeviceProperties2(vk->pd, &p2);
		if (m3.maxMemoryAllocationSize > 0)
			vk->max_alloc = m3.maxMemoryAllocationSize;
	}
	rc = device_create(vk, err);
	if (rc != Q42_OK)
		goto fail;
	rc = device_objects(vk, err);
	if (rc != Q42_OK)
		goto fail;
	*out = vk;
	return Q42_OK;
fail:
	q42_vk_close(vk);
	return rc;
}

static void pipe_destroy(q42_vk *vk, q42_vk_pipe *p)
{
	if (p->pipe != VK_NULL_HANDLE)
		vkDestroyPipeline(vk->dev, p->pipe, NULL);
	if (p->layout != VK_NULL_HANDLE)
		vkDestroyPipelineLayout(vk->dev, p->layout, NULL);
	if (p->dsl != VK_NULL_HANDLE)
		vkDestroyDescriptorSetLayout(vk->dev, p->dsl, NULL);
	if (p->mod != VK_NULL_HANDLE)
		vkDestroyShaderModule(vk->dev, p->mod, NULL);
	free(p);
}

void q42_vk_close(q42_vk *vk)
{
	if (vk == NULL)
		return;
	if (vk->dev != VK_NULL_HANDLE) {
		vkDeviceWaitIdle(vk->dev);
		q42_vk_buf_free(vk, vk->staging);
		while (vk->pipes != NULL) {
			q42_vk_pipe *next = vk->pipes->next;
			pipe_destroy(vk, vk->pipes);
			vk->pipes = next;
		}
		for (uint32_t i = 0; i < vk->n_pools; i++)
			vkDestroyDescriptorPool(vk->dev, vk->pools[i], NULL);
		if (vk->qpool != VK_NULL_HANDLE)
			vkDestroyQueryPool(vk->dev, vk->qpool, NULL);
		if (vk->fence != VK_NULL_HANDLE)
			vkDestroyFence(vk->dev, vk->fence, NULL);
		if (vk->cpool != VK_NULL_HANDLE)
			vkDestroyCommandPool(vk->dev, vk->cpool, NULL);
		vkDestroyDevice(vk->dev, NULL);
	}
	if (vk->inst != VK_NULL_HANDLE)
		vkDestroyInstance(vk->inst, NULL);
	free(vk);
}

const q42_vk_device_info *q42_vk_info(const q42_vk *vk)
{
	return &vk->info;
}

/* The first memory type allowed by bits that has every flag of want,
 * preferring one that also has every flag of nice; UINT32_MAX if none. */
static uint32_t memory_type(const q42_vk *vk, uint32_t bits, VkMemoryPropertyFlags want,
			    VkMemoryPropertyFlags nice)
{
	uint32_t fallback = UINT32_MAX;
	for (uint32_t i = 0; i < vk->memp.memoryTypeCount; i++) {
		VkMemoryPropertyFlags f = vk->memp.memoryTypes[i].propertyFlags;
		if (!(bits & (1u << i)) || (f & want) != want)
			continue;
		if ((f & nice) == nice)
			return i;
		if (fallback == UINT32_MAX)
			fallback = i;
	}
	return fallback;
}

/* The largest heap that could hold memory of kind, for the size check and
 * the out-of-memory message; for device memory on a device without a
 * device-local type, the largest heap of all (buf_create falls back to
 * any type there). */
static uint64_t heap_bytes(const q42_vk *vk, enum q42_vk_mem kind)
{
	VkMemoryPropertyFlags want = kind == Q42_VK_MEM_HOST
		? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
		: VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
	uint64_t best = 0;
	for (uint32_t i = 0; i < vk->memp.memoryTypeCount; i++) {
		const VkMemoryType *t = &vk->memp.memoryTypes[i];
		uint64_t h = vk->memp.memoryHeaps[t->heapIndex].size;
		if ((t->propertyFlags & want) == want && h > best)
			best = h;
	}
	if (best == 0 && kind == Q42_VK_MEM_DEVICE)
		for (uint32_t h = 0; h < vk->memp.memoryHeapCount; h++)
			if (vk->memp.memoryHeaps[h].size > best)
				best = vk->memp.memoryHeaps[h].size;
	return best;
}

static int out_of_memory(const q42_vk *vk, uint64_t size, enum q42_vk_mem kind, q42_err *err)
{
	return q42_err_set(err, Q42_ENOMEM,
			   "vulkan: out of device memory allocating %llu bytes (%s heap %llu bytes)",
			   (unsigned long long)size, kind == Q42_VK_MEM_HOST ? "host-visible" : "device-local",
			   (unsigned long long)heap_bytes(vk, kind));
}

int q42_vk_buf_create(q42_vk *vk, uint64_t size, enum q42_vk_mem mem, q42_vk_buf **out,
		      q42_err *err)
{
	uint64_t rounded;
	VkResult r;
	int rc = Q42_OK;

	if (out == NULL)
		return q42_err_set(err, Q42_EARG, "vulkan: q42_vk_buf_create: no output");
	*out = NULL;
	if (mem != Q42_VK_MEM_DEVICE && mem != Q42_VK_MEM_HOST)
		return q42_err_set(err, Q42_EARG, "vulkan: unknown memory kind %d", (int)mem);
	if (size == 0 || q42_align_up(size, 16, &rounded))
		return q42_err_set(err, Q42_EARG, "vulkan: bad buffer size %llu", (unsigned long long)size);
	/* Refused before any Vulkan call: a size beyond the heap is invalid
	 * usage for some drivers, not a clean VK_ERROR_OUT_OF_DEVICE_MEMORY. */
	if (rounded > heap_bytes(vk, mem))
		return out_of_memory(vk, rounded, mem, err);
	if (rounded > vk->max_alloc)
		return q42_err_set(err, Q42_ENOMEM,
				   "vulkan: a buffer of %llu bytes exceeds device %u's largest allocation "
				   "(maxMemoryAllocationSize %llu bytes)",
				   (unsigned long long)rounded, vk->info.index,
				   (unsigned long long)vk->max_alloc);

	q42_vk_buf *b = calloc(1, sizeof *b);
	if (b == NULL)
		return q42_err_set(err, Q42_ENOMEM, "vulkan: out of memory");
	b->size = rounded;
	b->kind = mem;
	VkBufferCreateInfo bci = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.size = rounded,
		.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
			 VK_BUFFER_USAGE_TRANSFER_DST_BIT,
		.sharingMode = VK_SHARING_MODE_EXCLUSIVE,
	};
	r = vkCreateBuffer(vk->dev, &bci, NULL, &b->buf);
	if (r != VK_SUCCESS) {
		rc = r == VK_ERROR_OUT_OF_DEVICE_MEMORY ? out_of_memory(vk, rounded, mem, err)
							: vk_fail(err, "vkCreateBuffer", r);
		goto fail;
	}
	VkMemoryRequirements req;
	vkGetBufferMemoryRequirements(vk->dev, b->buf, &req);
	const VkMemoryPropertyFlags visible =
		VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
	uint32_t type = mem == Q42_VK_MEM_HOST
		? memory_type(vk, req.memoryTypeBits, visible, VK_MEMORY_PROPERTY_HOST_CACHED_BIT)
		: memory_type(vk, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
	if (type == UINT32_MAX && mem == Q42_VK_MEM_DEVICE)
		type = memory_type(vk, req.memoryTypeBits, 0, 0);
	if (type == UINT32_MAX) {
		rc = q42_err_set(err, Q42_EUNSUPPORTED, "vulkan: device %u (%s) has no %s memory type",
				 vk->info.index, vk->info.name,
				 mem == Q42_VK_MEM_HOST ? "host-visible coherent" : "usable");
		goto fail;
	}
	VkMemoryAllocateInfo mai = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
		.allocationSize = req.size,
		.memoryTypeIndex = type,
	};
	r = vkAllocateMemory(vk->dev, &mai, NULL, &b->mem);
	if (r != VK_SUCCESS) {
		rc = r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY
			? out_of_memory(vk, rounded, mem, err)
			: vk_fail(err, "vkAllocateMemory", r);
		goto fail;
	}
	r = vkBindBufferMemory(vk->dev, b->buf, b->mem, 0);
	if (r != VK_SUCCESS) {
		rc = vk_fail(err, "vkBindBufferMemory", r);
		goto fail;
	}
	/* Device memory the host can see (integrated GPUs, lavapipe) is
	 * filled with memcpy instead of a staged copy. */
	VkMemoryPropertyFlags f = vk->memp.memoryTypes[type].propertyFlags;
	if ((f & visible) == visible) {
		void *p = NULL;
		r = vkMapMemory(vk->dev, b->mem, 0, VK_WHOLE_SIZE, 0, &p);
		if (r != VK_SUCCESS) {
			rc = vk_fail(err, "vkMapMemory", r);
			goto fail;
		}
		if (mem == Q42_VK_MEM_HOST)
			b->map = p;
		b->direct = p;
		b->direct_read = (f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) != 0 || mem == Q42_VK_MEM_HOST;
	}
	*out = b;
	return Q42_OK;
fail:
	q42_vk_buf_free(vk, b);
	return rc;
}

void q42_vk_buf_free(q42_vk *vk, q42_vk_buf *b)
{
	if (b == NULL)
		return;
	if (b->buf != VK_NULL_HANDLE)
		vkDestroyBuffer(vk->dev, b->buf, NULL);
	if (b->mem != VK_NULL_HANDLE)
		vkFreeMemory(vk->dev, b->mem, NULL); /* unmaps too */
	free(b);
}

uint64_t q42_vk_buf_size(const q42_vk_buf *b)
{
	return b->size;
}

void *q42_vk_buf_map(q42_vk_buf *b)
{
	return b->map;
}

static const VkMemoryBarrier all_barrier = {
	.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
	.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
	.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
			 VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
};
#define WORK_STAGES (VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT)

static void barrier(q42_vk *vk)
{
	vkCmdPipelineBarrier(vk->cmd, WORK_STAGES, WORK_STAGES, 0, 1, &all_barrier, 0, NULL, 0, NULL);
}

/* Ends, submits and waits for the command buffer; makes device writes
 * visible to the host first. */
static int run_commands(q42_vk *vk, q42_err *err)
{
	VkMemoryBarrier to_host = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
		.dstAccessMask = VK_ACCESS_HOST_READ_BIT,
	};
	vkCmdPipelineBarrier(vk->cmd, WORK_STAGES, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, NULL,
			     0, NULL);
	vk->recording = false;
	VkResult r = vkEndCommandBuffer(vk->cmd);
	if (r != VK_SUCCESS)
		return vk_fail(err, "vkEndCommandBuffer", r);
	VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.commandBufferCount = 1,
		.pCommandBuffers = &vk->cmd,
	};
	r = vkQueueSubmit(vk->queue, 1, &si, vk->fence);
	if (r != VK_SUCCESS)
		return vk_fail(err, "vkQueueSubmit", r);
	r = vkWaitForFences(vk->dev, 1, &vk->fence, VK_TRUE, UINT64_MAX);
	if (r != VK_SUCCESS)
		return vk_fail(err, "vkWaitForFences", r);
	r = vkResetFences(vk->dev, 1, &vk->fence);
	if (r != VK_SUCCESS)
		return vk_fail(err, "vkResetFences", r);
	return Q42_OK;
}

static int commands_begin(q42_vk *vk, q42_err *err)
{
	VkResult r = vkResetCommandBuffer(vk->cmd, 0);
	if (r != VK_SUCCESS)
		return vk_fail(err, "vkResetCommandBuffer", r);
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
	};
	r = vkBeginCommandBuffer(vk->cmd, &bi);
	if (r != VK_SUCCESS)
		return vk_fail(err, "vkBeginCommandBuffer", r);
	vk->recording = true;
	return Q42_OK;
}

/* Checks shared by upload and download: a buffer, a range inside it, no
 * pass being recorded. */
static int transfer_check(const q42_vk *vk, const q42_vk_buf *b, uint64_t off, uint64_t n,
			  const void *host, const char *what, q42_err *err)
{
	uint64_t end;
	if (b == NULL || (host == NULL && n > 0))
		return q42_err_set(err, Q42_EARG, "vulkan: %s: no buffer or no host memory", what);
	if (vk->recording)
		return q42_err_set(err, Q42_EARG, "vulkan: %s inside a recording (between begin and submit)",
				   what);
	if (q42_add_overflow(off, n, &end) || end > b->size)
		return q42_err_set(err, Q42_EARG,
				   "vulkan: %s of %llu bytes at offset %llu outside a buffer of %llu bytes", what,
				   (unsigned long long)n, (unsigned long long)off, (unsigned long long)b->size);
	return Q42_OK;
}

static int staging_get(q42_vk *vk, q42_err *err)
{
	if (vk->staging != NULL)
		return Q42_OK;
	return q42_vk_buf_create(vk, VK_STAGING_BYTES, Q42_VK_MEM_HOST, &vk->staging, err);
}

/* One staged copy of n bytes between the staging buffer and b at off. */
static int staged_copy(q42_vk *vk, q42_vk_buf *b, uint64_t off, uint64_t n, bool to_device,
		       q42_err *err)
{
	int rc = commands_begin(vk, err);
	if (rc != Q42_OK)
		return rc;
	VkBufferCopy region = {
		.srcOffset = to_device ? 0 : off,
		.dstOffset = to_device ? off : 0,
		.size = n,
	};
	if (to_device)
		vkCmdCopyBuffer(vk->cmd, vk->staging->buf, b->buf, 1, &region);
	else
		vkCmdCopyBuffer(vk->cmd, b->buf, vk->staging->buf, 1, &region);
	return run_commands(vk, err);
}

int q42_vk_buf_upload(q42_vk *vk, q42_vk_buf *dst, uint64_t off, const void *src, uint64_t n,
		      q42_err *err)
{
	int rc = transfer_check(vk, dst, off, n, src, "upload", err);
	if (rc != Q42_OK || n == 0)
		return rc;
	if (dst->direct != NULL && !vk->force_staging) {
		memcpy((char *)dst->direct + off, src, n);
		return Q42_OK;
	}
	rc = staging_get(vk, err);
	for (uint64_t done = 0; rc == Q42_OK && done < n;) {
		uint64_t chunk = n - done < VK_STAGING_BYTES ? n - done : VK_STAGING_BYTES;
		memcpy(vk->staging->map, (const char *)src + done, chunk);
		rc = staged_copy(vk, dst, off + done, chunk, true, err);
		done += chunk;
	}
	return rc;
}

int q42_vk_buf_download(q42_vk *vk, q42_vk_buf *src, uint64_t off, void *dst, uint64_t n,
			q42_err *err)
{
	int rc = transfer_check(vk, src, off, n, dst, "download", err);
	if (rc != Q42_OK || n == 0)
		return rc;
	if (src->direct != NULL && src->direct_read && !vk->force_staging) {
		memcpy(dst, (const char *)src->direct + off, n);
		return Q42_OK;
	}
	rc = staging_get(vk, err);
	for (uint64_t done = 0; rc == Q42_OK && done < n;) {
		uint64_t chunk = n - done < VK_STAGING_BYTES ? n - done : VK_STAGING_BYTES;
		rc = staged_copy(vk, src, off + done, chunk, false, err);
		if (rc == Q42_OK)
			memcpy((char *)dst + done, vk->staging->map, chunk);
		done += chunk;
	}
	return rc;
}

void q42_vk_force_staging(q42_vk *vk, bool on)
{
	vk->force_staging = on;
}

static const q42_vk_spirv *spirv_find(const char *name)
{
	for (uint32_t i = 0; i < q42_vk_spirv_count; i++)
		if (strcmp(q42_vk_spirv_table[i].name, name) == 0)
			return &q42_vk_spirv_table[i];
	return NULL;
}

static int pipe_create(q42_vk *vk, const q42_vk_spirv *sp, uint32_t n_bufs, uint32_t push_bytes,
		       const uint32_t *spec, uint32_t n_spec, q42_vk_pipe **out, q42_err *err)
{
	VkResult r;
	int rc = Q42_OK;
	q42_vk_pipe *p = calloc(1, sizeof *p);
	if (p == NULL)
		return q42_err_set(err, Q42_ENOMEM, "vulkan: out of memory");
	copy_str(p->name, sizeof p->name, sp->name);
	p->n_bufs = n_bufs;
	p->push_bytes = push_bytes;
	p->n_spec = n_spec;
	if (n_spec > 0)
		memcpy(p->spec, spec, n_spec * sizeof *spec);

	VkShaderModuleCreateInfo smi = {
		.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
		.codeSize = (size_t)sp->n_words * 4,
		.pCode = sp->words,
	};
	r = vkCreateShaderModule(vk->dev, &smi, NULL, &p->mod);
	if (r != VK_SUCCESS) {
		rc = vk_fail(err, "vkCreateShaderModule", r);
		goto fail;
	}
	VkDescriptorSetLayoutBinding binds[VK_MAX_BUFS];
	for (uint32_t i = 0; i < n_bufs; i++)
		binds[i] = (VkDescriptorSetLayoutBinding){
			.binding = i,
			.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
			.descriptorCount = 1,
			.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
		};
	VkDescriptorSetLayoutCreateInfo dli = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
		.bindingCount = n_bufs,
		.pBindings = binds,
	};
	r = vkCreateDescriptorSetLayout(vk->dev, &dli, NULL, &p->dsl);
	if (r != VK_SUCCESS) {
		rc = vk_fail(err, "vkCreateDescriptorSetLayout", r);
		goto fail;
	}
	VkPushConstantRange pr = {
		.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
		.offset = 0,
		.size = push_bytes,
	};
	VkPipelineLayoutCreateInfo pli = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
		.setLayoutCount = 1,
		.pSetLayouts = &p->dsl,
		.pushConstantRangeCount = push_bytes > 0 ? 1 : 0,
		.pPushConstantRanges = &pr,
	};
	r = vkCreatePipelineLayout(vk->dev, &pli, NULL, &p->layout);
	if (r != VK_SUCCESS) {
		rc = vk_fail(err, "vkCreatePipelineLayout", r);
		goto fail;
	}
	VkSpecializationMapEntry ents[VK_MAX_SPEC];
	for (uint32_t i = 0; i < n_spec; i++)
		ents[i] = (VkSpecializationMapEntry){
			.constantID = i,
			.offset = i * (uint32_t)sizeof(uint32_t),
			.size = sizeof(uint32_t),
		};
	VkSpecializationInfo si = {
		.mapEntryCount = n_spec,
		.pMapEntries = ents,
		.dataSize = n_spec * sizeof(uint32_t),
		.pData = p->spec,
	};
	VkComputePipelineCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
		.stage = {
			.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
			.stage = VK_SHADER_STAGE_COMPUTE_BIT,
			.module = p->mod,
			.pName = "main",
			.pSpecializationInfo = n_spec > 0 ? &si : NULL,
		},
		.layout = p->layout,
	};
	r = vkCreateComputePipelines(vk->dev, VK_NULL_HANDLE, 1, &ci, NULL, &p->pipe);
	if (r != VK_SUCCESS) {
		rc = vk_fail(err, "vkCreateComputePipelines", r);
		q42_err_prefix(err, "shader %s", sp->name);
		goto fail;
	}
	*out = p;
	return Q42_OK;
fail:
	pipe_destroy(vk, p);
	return rc;
}

int q42_vk_pipe_get(q42_vk *vk, const char *name, uint32_t n_bufs, uint32_t push_bytes,
		    const uint32_t *spec, uint32_t n_spec, q42_vk_pipe **out, q42_err *err)
{
	if (name == NULL || out == NULL || (n_spec > 0 && spec == NULL))
		return q42_err_set(err, Q42_EARG, "vulkan: q42_vk_pipe_get: missing argument");
	*out = NULL;
	if (n_bufs == 0 || n_bufs > VK_MAX_BUFS || n_spec > VK_MAX_SPEC)
		return q42_err_set(err, Q42_EARG,
				   "vulkan: shader %s: %u buffers and %u specialization constants "
				   "(limits 1..%u and %u)",
				   name, n_bufs, n_spec, VK_MAX_BUFS, VK_MAX_SPEC);
	if (push_bytes % 4 != 0 || push_bytes > vk->limits.maxPushConstantsSize)
		return q42_err_set(err, Q42_EARG,
				   "vulkan: shader %s: %u bytes of push constants (a multiple of 4, at most %u "
				   "on this device)",
				   name, push_bytes, vk->limits.maxPushConstantsSize);
	for (q42_vk_pipe *p = vk->pipes; p != NULL; p = p->next) {
		if (strcmp(p->name, name) == 0 && p->n_spec == n_spec &&
		    (n_spec == 0 || memcmp(p->spec, spec, n_spec * sizeof *spec) == 0)) {
			if (p->n_bufs != n_bufs || p->push_bytes != push_bytes)
				return q42_err_set(err, Q42_EARG,
						   "vulkan: shader %s asked for with %u buffers and %u push "
						   "bytes, earlier with %u and %u",
						   name, n_bufs, push_bytes, p->n_bufs, p->push_bytes);
			*out = p;
			return Q42_OK;
		}
	}
	const q42_vk_spirv *sp = spirv_find(name);
	if (sp == NULL)
		return q42_err_set(err, Q42_ENOTFOUND, "vulkan: no embedded shader named %s", name);
	q42_vk_pipe *p;
	int rc = pipe_create(vk, sp, n_bufs, push_bytes, spec, n_spec, &p, err);
	if (rc != Q42_OK)
		return rc;
	p->next = vk->pipes;
	vk->pipes = p;
	*out = p;
	return Q42_OK;
}

int q42_vk_begin(q42_vk *vk, q42_err *err)
{
	VkResult r;
	/* A pass that had to grow the pool gets one pool of the total size
	 * from now on, so steady-state passes reset a single pool. */
	if (vk->n_pools > 1) {
		uint64_t total = 0;
		for (uint32_t i = 0; i < vk->n_pools; i++) {
			total += vk->pool_sets[i];
			vkDestroyDescriptorPool(vk->dev, vk->pools[i], NULL);
		}
		vk->n_pools = 0;
		int rc = descriptor_pool_add(vk, total > UINT32_MAX / VK_MAX_BUFS
					     ? UINT32_MAX / VK_MAX_BUFS : (uint32_t)total, err);
		if (rc != Q42_OK)
			return rc;
	} else {
		r = vkResetDescriptorPool(vk->dev, vk->pools[0], 0);
		if (r != VK_SUCCESS)
			return vk_fail(err, "vkResetDescriptorPool", r);
	}
	int rc = commands_begin(vk, err);
	if (rc != Q42_OK)
		return rc;
	vk->n_stamps = 0;
	vk->n_results = 0;
	if (vk->qpool != VK_NULL_HANDLE)
		vkCmdResetQueryPool(vk->cmd, vk->qpool, 0, VK_MAX_STAMPS);
	return Q42_OK;
}

static int descriptor_set(q42_vk *vk, const q42_vk_pipe *p, VkDescriptorSet *set, q42_err *err)
{
	VkDescriptorSetAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
		.descriptorPool = vk->pools[vk->n_pools - 1],
		.descriptorSetCount = 1,
		.pSetLayouts = &p->dsl,
	};
	VkResult r = vkAllocateDescriptorSets(vk->dev, &ai, set);
	if (r == VK_ERROR_OUT_OF_POOL_MEMORY || r == VK_ERROR_FRAGMENTED_POOL) {
		int rc = descriptor_pool_add(vk, vk->pool_sets[vk->n_pools - 1] * 2, err);
		if (rc != Q42_OK)
			return rc;
		ai.descriptorPool = vk->pools[vk->n_pools - 1];
		r = vkAllocateDescriptorSets(vk->dev, &ai, set);
	}
	if (r != VK_SUCCESS)
		return vk_fail(err, "vkAllocateDescriptorSets", r);
	return Q42_OK;
}

/* The byte range of a view after its checks: inside the buffer. A view
 * "to the end" stops at cap, the most one binding can address. */
static int view_range(const q42_vk_view *v, uint32_t i, uint64_t cap, uint64_t *range,
		      q42_err *err)
{
	uint64_t end;
	if (v->buf == NULL)
		return q42_err_set(err, Q42_EARG, "vulkan: binding %u has no buffer", i);
	uint64_t size = v->size != 0 ? v->size : v->buf->size - (v->off < v->buf->size ? v->off : 0);
	if (v->size == 0 && size > cap)
		size = cap;
	if (q42_add_overflow(v->off, size, &end) || end > v->buf->size || v->off >= v->buf->size)
		return q42_err_set(err, Q42_EARG,
				   "vulkan: binding %u: %llu bytes at offset %llu outside a buffer of %llu bytes",
				   i, (unsigned long long)size, (unsigned long long)v->off,
				   (unsigned long long)v->buf->size);
	*range = size;
	return Q42_OK;
}

int q42_vk_dispatch(q42_vk *vk, q42_vk_pipe *p, const q42_vk_view *bufs, uint32_t n_bufs,
		    const void *push, uint32_t push_bytes, uint32_t gx, uint32_t gy, uint32_t gz,
		    q42_err *err)
{
	if (!vk->recording)
		return q42_err_set(err, Q42_EARG, "vulkan: dispatch outside a recording (call begin first)");
	if (p == NULL || (n_bufs > 0 && bufs == NULL) || (push_bytes > 0 && push == NULL))
		return q42_err_set(err, Q42_EARG, "vulkan: dispatch: missing argument");
	if (n_bufs != p->n_bufs || push_bytes != p->push_bytes)
		return q42_err_set(err, Q42_EARG,
				   "vulkan: shader %s takes %u buffers and %u push bytes, given %u and %u",
				   p->name, p->n_bufs, p->push_bytes, n_bufs, push_bytes);
	const uint32_t *maxg = vk->limits.maxComputeWorkGroupCount;
	if (gx > maxg[0] || gy > maxg[1] || gz > maxg[2])
		return q42_err_set(err, Q42_EARG,
				   "vulkan: shader %s: %u x %u x %u workgroups exceed the device's %u x %u x %u",
				   p->name, gx, gy, gz, maxg[0], maxg[1], maxg[2]);
	VkDescriptorBufferInfo infos[VK_MAX_BUFS];
	VkWriteDescriptorSet writes[VK_MAX_BUFS];
	VkDescriptorSet set;
	for (uint32_t i = 0; i < n_bufs; i++) {
		uint64_t range;
		int rc = view_range(&bufs[i], i, vk->limits.maxStorageBufferRange, &range, err);
		if (rc != Q42_OK)
			return rc;
		if (bufs[i].off % vk->limits.minStorageBufferOffsetAlignment != 0)
			return q42_err_set(err, Q42_EARG,
					   "vulkan: shader %s binding %u: offset %llu is not a multiple of "
					   "%llu",
					   p->name, i, (unsigned long long)bufs[i].off,
					   (unsigned long long)vk->limits.minStorageBufferOffsetAlignment);
		if (range > vk->limits.maxStorageBufferRange)
			return q42_err_set(err, Q42_EUNSUPPORTED,
					   "vulkan: shader %s binding %u: %llu bytes exceed the device's "
					   "storage buffer range of %u bytes",
					   p->name, i, (unsigned long long)range,
					   vk->limits.maxStorageBufferRange);
		infos[i] = (VkDescriptorBufferInfo){.buffer = bufs[i].buf->buf, .offset = bufs[i].off,
						    .range = range};
		writes[i] = (VkWriteDescriptorSet){
			.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
			.dstBinding = i,
			.descriptorCount = 1,
			.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
			.pBufferInfo = &infos[i],
		};
	}
	int rc = descriptor_set(vk, p, &set, err);
	if (rc != Q42_OK)
		return rc;
	for (uint32_t i = 0; i < n_bufs; i++)
		writes[i].dstSet = set;
	vkUpdateDescriptorSets(vk->dev, n_bufs, writes, 0, NULL);
	vkCmdBindPipeline(vk->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipe);
	vkCmdBindDescriptorSets(vk->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, 1, &set, 0, NULL);
	if (push_bytes > 0)
		vkCmdPushConstants(vk->cmd, p->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
	if (gx > 0 && gy > 0 && gz > 0)
		vkCmdDispatch(vk->cmd, gx, gy, gz);
	barrier(vk);
	return Q42_OK;
}

int q42_vk_copy(q42_vk *vk, q42_vk_view src, q42_vk_view dst, q42_err *err)
{
	uint64_t n, room;
	if (!vk->recording)
		return q42_err_set(err, Q42_EARG, "vulkan: copy outside a recording (call begin first)");
	int rc = view_range(&src, 0, UINT64_MAX, &n, err);
	if (rc == Q42_OK)
		rc = view_range(&dst, 1, UINT64_MAX, &room, err);
	if (rc != Q42_OK) {
		q42_err_prefix(err, "copy");
		return rc;
	}
	if (n > room)
		return q42_err_set(err, Q42_EARG, "vulkan: copy of %llu bytes into a view of %llu bytes",
				   (unsigned long long)n, (unsigned long long)room);
	VkBufferCopy region = {.srcOffset = src.off, .dstOffset = dst.off, .size = n};
	vkCmdCopyBuffer(vk->cmd, src.buf->buf, dst.buf->buf, 1, &region);
	barrier(vk);
	return Q42_OK;
}

void q42_vk_stamp(q42_vk *vk, const char *label)
{
	if (!vk->recording || vk->qpool == VK_NULL_HANDLE || vk->n_stamps == VK_MAX_STAMPS)
		return;
	vkCmdWriteTimestamp(vk->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, vk->qpool, vk->n_stamps);
	vk->stamp_labels[vk->n_stamps++] = label;
}

int q42_vk_submit(q42_vk *vk, q42_err *err)
{
	if (!vk->recording)
		return q42_err_set(err, Q42_EARG, "vulkan: submit without begin");
	int rc = run_commands(vk, err);
	if (rc != Q42_OK || vk->n_stamps < 2)
		return rc;
	uint64_t t[VK_MAX_STAMPS];
	VkResult r = vkGetQueryPoolResults(vk->dev, vk->qpool, 0, vk->n_stamps, sizeof t, t, sizeof t[0],
					   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
	if (r != VK_SUCCESS)
		return vk_fail(err, "vkGetQueryPoolResults", r);
	for (uint32_t i = 1; i < vk->n_stamps; i++) {
		uint64_t d = ((t[i] & vk->ts_mask) - (t[i - 1] & vk->ts_mask)) & vk->ts_mask;
		vk->result_labels[i - 1] = vk->stamp_labels[i];
		vk->result_ns[i - 1] = (double)d * vk->ts_period;
	}
	vk->n_results = vk->n_stamps - 1;
	return Q42_OK;
}

uint32_t q42_vk_stamps(const q42_vk *vk, const char **labels, double *ns, uint32_t cap)
{
	uint32_t n = vk->n_results < cap ? vk->n_results : cap;
	for (uint32_t i = 0; i < n; i++) {
		if (labels != NULL)
			labels[i] = vk->result_labels[i];
		if (ns != NULL)
			ns[i] = vk->result_ns[i];
	}
	return n;
}
