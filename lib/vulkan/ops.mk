# lib/vulkan/ops.mk -- the Vulkan kernels (shaders/*.comp behind
# q42_vk_ops.h) and their certification against the CPU reference.
if Q42_VULKAN
lib_libq42core_la_SOURCES += lib/vulkan/q42_vk_ops.c lib/vulkan/q42_vk_certify.c
q42vulkan_HEADERS += lib/vulkan/q42_vk_ops.h
endif
