# lib/engine: running a model: the mount (P64 or GGUF), architecture
# descriptions, the CPU forward pass, thread pool, sampling, and the backend
# interface other backends (lib/vulkan) implement.
lib_libq42core_la_SOURCES += \
	lib/engine/q42_mount.c lib/engine/q42_arch.c lib/engine/q42_engine.c \
	lib/engine/q42_forward.c lib/engine/q42_pool.c lib/engine/q42_sample.c \
	lib/engine/q42_engine_lora.c \
	lib/engine/q42_engine_impl.h lib/engine/q42_matvec.c lib/engine/q42_state.c
q42enginedir = $(includedir)/q42/engine
q42engine_HEADERS = lib/engine/q42_mount.h lib/engine/q42_arch.h lib/engine/q42_engine.h \
	lib/engine/q42_pool.h lib/engine/q42_sample.h lib/engine/q42_backend.h \
	lib/engine/q42_matvec.h
