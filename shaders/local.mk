# shaders: GLSL compute kernels of the Vulkan backend, compiled by glslc to
# SPIR-V and embedded in libq42 as a generated table (name, words, SHA-256
# of the .comp source). The list itself lives in shaders/list.mk.
include shaders/list.mk

EXTRA_DIST += shaders/gen-spirv-table.sh $(Q42_SHADERS) $(Q42_SHADER_INCLUDES)

if Q42_VULKAN
Q42_SPIRV_INCS = $(Q42_SHADERS:.comp=.spv.inc)
Q42_SPIRV_TABLE = lib/vulkan/q42_vk_spirv_table.c

# Any header change recompiles every shader: there are few, and glslc's
# own dependency files would not survive a distcheck VPATH build as simply.
shaders/%.spv.inc: shaders/%.comp $(Q42_SHADER_INCLUDES)
	@$(MKDIR_P) shaders
	$(AM_V_GEN)$(GLSLC) --target-env=vulkan1.2 -O -mfmt=c -I$(srcdir)/shaders $< -o $@

$(Q42_SPIRV_TABLE): $(Q42_SPIRV_INCS) shaders/gen-spirv-table.sh shaders/list.mk
	@$(MKDIR_P) lib/vulkan
	$(AM_V_GEN)SHA256SUM='$(SHA256SUM)' $(SHELL) $(srcdir)/shaders/gen-spirv-table.sh $@ \
		$(srcdir) $(Q42_SHADERS)

BUILT_SOURCES = $(Q42_SPIRV_TABLE)
nodist_lib_libq42core_la_SOURCES = $(Q42_SPIRV_TABLE)
CLEANFILES += $(Q42_SPIRV_TABLE) $(Q42_SPIRV_INCS)
endif
