# lib/common: errors, buffers, checked arithmetic, little-endian access, file
# mapping and atomic output, CRC-32C, UTF-8, and the ggml type geometry every
# folder above shares.
lib_libq42core_la_SOURCES += \
	lib/common/q42_err.c lib/common/q42_buf.c lib/common/q42_file.c \
	lib/common/q42_crc32c.c lib/common/q42_utf8.c lib/common/q42_types.c \
	lib/common/q42_err.h lib/common/q42_buf.h lib/common/q42_file.h \
	lib/common/q42_ckd.h lib/common/q42_le.h lib/common/q42_crc32c.h \
	lib/common/q42_utf8.h lib/common/q42_types.h
q42commondir = $(includedir)/q42/common
q42common_HEADERS = lib/common/q42_err.h lib/common/q42_buf.h lib/common/q42_file.h \
	lib/common/q42_ckd.h lib/common/q42_le.h lib/common/q42_crc32c.h \
	lib/common/q42_utf8.h lib/common/q42_types.h
