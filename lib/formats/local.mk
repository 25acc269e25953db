# lib/formats: ggml type geometry, the GGUF reader, model description.
lib_libq42core_la_SOURCES += \
	lib/formats/q42_types.c lib/formats/q42_gguf.c lib/formats/q42_model.c
q42formatsdir = $(includedir)/q42/formats
q42formats_HEADERS = lib/formats/q42_types.h lib/formats/q42_gguf.h lib/formats/q42_model.h
include lib/formats/p64.mk
