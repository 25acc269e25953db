# lib/vulkan: the Vulkan compute backend -- the layer (instance, device,
# buffers, pipelines, passes), the embedded SPIR-V table (shaders/), the
# kernels and their certification, and the forward pass behind the engine's
# backend interface. Compiled only when configure enabled Vulkan; otherwise
# q42_vk_absent.c says so to whoever asks.
AM_CFLAGS += $(VULKAN_CFLAGS)
lib_libq42core_la_LIBADD += $(VULKAN_LIBS)
Q42_PROGRAM_LIBS += $(VULKAN_LIBS)

if Q42_VULKAN
lib_libq42core_la_SOURCES += lib/vulkan/q42_vk.c lib/vulkan/q42_vk_spirv.h lib/vulkan/q42_vk_internal.h \
	lib/vulkan/q42_vk_ops.c lib/vulkan/q42_vk_certify.c \
	lib/vulkan/q42_vk_forward.c lib/vulkan/q42_vk_forward.h
q42vulkandir = $(includedir)/q42/vulkan
q42vulkan_HEADERS = lib/vulkan/q42_vk.h lib/vulkan/q42_vk_ops.h
else
lib_libq42core_la_SOURCES += lib/vulkan/q42_vk_absent.c
endif
include shaders/local.mk
