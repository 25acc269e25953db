# lib/vulkan: the Vulkan compute backend -- the layer (instance, device,
# buffers, pipelines, passes), the embedded SPIR-V table and, from the
# fragments included below, the kernels and the forward pass. Compiled only
# when configure enabled Vulkan; the rest of libq42 reaches it under
# #ifdef Q42_WITH_VULKAN.
AM_CFLAGS += $(VULKAN_CFLAGS)
lib_libq42core_la_LIBADD += $(VULKAN_LIBS)
Q42_PROGRAM_LIBS += $(VULKAN_LIBS)

if Q42_VULKAN
lib_libq42core_la_SOURCES += lib/vulkan/q42_vk.c lib/vulkan/q42_vk_spirv.h lib/vulkan/q42_vk_internal.h
q42vulkandir = $(includedir)/q42/vulkan
q42vulkan_HEADERS = lib/vulkan/q42_vk.h
else
lib_libq42core_la_SOURCES += lib/vulkan/q42_vk_absent.c
endif

include lib/vulkan/ops.mk
include shaders/local.mk
include lib/vulkan/forward.mk
include tests/vulkan.mk
