# lib/formats: every file and line format below the engine: GGUF, P64
# (writer, reader, GGUF rebuild, statistics), Safetensors and Hugging Face
# folders, tensor roles, digests and signatures, weight profiles, quins
# (N-Quads plus a provenance term), and q42_source, the one way to open a
# model file by its magic.
lib_libq42core_la_SOURCES += \
	lib/formats/q42_gguf.c lib/formats/q42_model.c lib/formats/q42_quin.c \
	lib/formats/q42_roles.c lib/formats/q42_digest.c \
	lib/formats/q42_p64_read.c lib/formats/q42_p64_write.c lib/formats/q42_p64_gguf.c \
	lib/formats/q42_p64_stats.c lib/formats/q42_safetensors.c lib/formats/q42_hf.c \
	lib/formats/q42_profile.c lib/formats/q42_source.c lib/formats/q42_lora.c \
	lib/formats/q42_gguf.h lib/formats/q42_model.h lib/formats/q42_quin.h \
	lib/formats/q42_roles.h lib/formats/q42_digest.h lib/formats/q42_p64.h \
	lib/formats/q42_p64_stats.h lib/formats/q42_safetensors.h lib/formats/q42_hf.h \
	lib/formats/q42_profile.h lib/formats/q42_source.h lib/formats/q42_lora.h
q42formatsdir = $(includedir)/q42/formats
q42formats_HEADERS = lib/formats/q42_gguf.h lib/formats/q42_model.h lib/formats/q42_quin.h \
	lib/formats/q42_roles.h lib/formats/q42_digest.h lib/formats/q42_p64.h \
	lib/formats/q42_safetensors.h lib/formats/q42_hf.h lib/formats/q42_profile.h \
	lib/formats/q42_source.h lib/formats/q42_lora.h
dist_man_MANS += man/p64.5
