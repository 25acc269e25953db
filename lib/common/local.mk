# lib/common: errors, buffers, file mapping and atomic output.
lib_libq42core_la_SOURCES += \
	lib/common/q42_err.c lib/common/q42_buf.c lib/common/q42_file.c \
	lib/common/q42_err.h lib/common/q42_buf.h lib/common/q42_file.h \
	lib/common/q42_ckd.h lib/common/q42_le.h
q42commondir = $(includedir)/q42/common
q42common_HEADERS = lib/common/q42_err.h lib/common/q42_buf.h lib/common/q42_file.h \
	lib/common/q42_ckd.h lib/common/q42_le.h
