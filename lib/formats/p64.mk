# lib/formats/p64.mk: the P64 container (owned by the P64 helper): CRC-32C,
# roles, digests, writer, reader, GGUF rebuild, its spec, tests and fuzzing.
lib_libq42core_la_SOURCES += \
	lib/common/q42_crc32c.c lib/common/q42_crc32c.h \
	lib/formats/q42_roles.c lib/formats/q42_roles.h \
	lib/formats/q42_digest.c lib/formats/q42_digest.h \
	lib/formats/q42_p64.h lib/formats/q42_p64_read.c lib/formats/q42_p64_write.c \
	lib/formats/q42_p64_gguf.c lib/formats/q42_p64_stats.c lib/formats/q42_p64_stats.h
q42common_HEADERS += lib/common/q42_crc32c.h
q42formats_HEADERS += lib/formats/q42_p64.h lib/formats/q42_roles.h lib/formats/q42_digest.h

dist_man_MANS += man/p64.5

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_crc32c tests/unit/test_p64 tests/unit/test_p64_flip
TESTS += tests/unit/test_crc32c tests/unit/test_p64 tests/unit/test_p64_flip
tests_unit_test_crc32c_SOURCES = tests/unit/test_crc32c.c
tests_unit_test_crc32c_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_crc32c_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
tests_unit_test_p64_SOURCES = tests/unit/test_p64.c tests/unit/p64_testlib.c tests/unit/p64_testlib.h
tests_unit_test_p64_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_p64_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
tests_unit_test_p64_flip_SOURCES = tests/unit/test_p64_flip.c tests/unit/p64_testlib.c tests/unit/p64_testlib.h
tests_unit_test_p64_flip_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_p64_flip_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
endif

# libFuzzer harness for the P64 reader: built only by `make fuzz`, with
# clang, from the reader's own sources (CRC checks are skipped in this
# build so the fuzzer reaches the structure checks behind them).
FUZZ_P64_SRCS = tests/fuzz/fuzz_p64.c lib/formats/q42_p64_read.c \
	lib/common/q42_crc32c.c lib/common/q42_err.c lib/formats/q42_types.c
EXTRA_DIST += tests/fuzz/fuzz_p64.c
.PHONY: fuzz fuzz-p64
fuzz: fuzz-p64
fuzz-p64: fuzz-build/fuzz_p64
fuzz-build/fuzz_p64: $(addprefix $(srcdir)/,$(FUZZ_P64_SRCS))
	@test -n "$(CLANG)" || { echo "make fuzz: clang not found (install the Debian package clang)" >&2; exit 1; }
	@$(MKDIR_P) fuzz-build
	$(AM_V_CC)$(CLANG) -std=gnu17 -g -O1 -fsanitize=fuzzer,address,undefined \
		-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -I$(srcdir)/lib -I$(top_builddir) \
		-o $@ $(addprefix $(srcdir)/,$(FUZZ_P64_SRCS)) -pthread -lm

# Safetensors and Hugging Face inputs, weight quantizers and profiles
# (p64c --type/--profile; see p64c(1)).
lib_libq42core_la_SOURCES += \
	lib/formats/q42_safetensors.c lib/formats/q42_safetensors.h \
	lib/formats/q42_hf.c lib/formats/q42_hf.h \
	lib/formats/q42_profile.c lib/formats/q42_profile.h
q42formats_HEADERS += lib/formats/q42_safetensors.h lib/formats/q42_hf.h lib/formats/q42_profile.h
EXTRA_DIST += tests/golden/quant tests/golden/hf tests/tools/export_hf.py \
	tests/tools/gen_quant_golden.py
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_safetensors tests/unit/test_hf tests/unit/test_profile
TESTS += tests/unit/test_safetensors tests/unit/test_hf tests/unit/test_profile
tests_unit_test_safetensors_SOURCES = tests/unit/test_safetensors.c
tests_unit_test_safetensors_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_safetensors_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
tests_unit_test_hf_SOURCES = tests/unit/test_hf.c
tests_unit_test_hf_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_hf_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
tests_unit_test_profile_SOURCES = tests/unit/test_profile.c
tests_unit_test_profile_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_profile_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
endif
