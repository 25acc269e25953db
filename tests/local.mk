# tests: unit tests (cmocka, TAP), command-line tests (bats), tools, fuzzing.
# Each area registers its own tests in its local.mk; this fragment holds the
# GGUF reader's tests, the shared test-side GGUF writer and the fuzz driver.
noinst_LTLIBRARIES += tests/tools/libggufbuild.la
tests_tools_libggufbuild_la_SOURCES = tests/tools/gguf_build.c tests/tools/gguf_build.h

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_gguf
TESTS += tests/unit/test_gguf
tests_unit_test_gguf_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/tools
tests_unit_test_gguf_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -Wno-missing-prototypes
tests_unit_test_gguf_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc
tests_unit_test_gguf_LDADD = tests/tools/libggufbuild.la $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
endif

# libFuzzer harnesses: built on request (`make fuzz`) with clang, from the
# library sources directly, never as part of `make` or `make check`.
# `make fuzz-run FUZZ_SECONDS=600` runs each harness for that long.
# FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION turns off checksum and signature
# comparisons in the readers, so mutated inputs reach the structure checks.
FUZZ_HARNESSES = gguf p64 volume quin policy record
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION \
	-D_GNU_SOURCE -I$(top_srcdir)/lib -I$(top_builddir) -DQ42_VERSION='"$(PACKAGE_VERSION)"'
FUZZ_LIB_SRCS = $(filter %.c,$(lib_libq42core_la_SOURCES))
FUZZ_SECONDS = 60
EXTRA_DIST += $(wildcard $(srcdir)/tests/fuzz/*.c)

fuzz-build/fuzz_%: $(srcdir)/tests/fuzz/fuzz_%.c $(addprefix $(srcdir)/,$(FUZZ_LIB_SRCS))
	@test -n "$(CLANG)" || { echo "make fuzz needs clang (Debian package clang)"; exit 1; }
	@mkdir -p fuzz-build
	$(CLANG) $(FUZZ_CFLAGS) $(CRYPTO_CFLAGS) $(ARCHIVE_CFLAGS) $(JANSSON_CFLAGS) -o $@ \
		$< $(addprefix $(srcdir)/,$(FUZZ_LIB_SRCS)) \
		$(CRYPTO_LIBS) $(ARCHIVE_LIBS) $(JANSSON_LIBS) -pthread -lm

fuzz: $(addprefix fuzz-build/fuzz_,$(FUZZ_HARNESSES))

fuzz-run: fuzz
	@for h in $(FUZZ_HARNESSES); do \
		mkdir -p fuzz-build/corpus-$$h; \
		seeds=; test -d $(srcdir)/tests/fuzz/corpus-$$h && seeds=$(srcdir)/tests/fuzz/corpus-$$h; \
		fuzz-build/fuzz_$$h -max_total_time=$(FUZZ_SECONDS) -max_len=65536 \
			-print_final_stats=1 fuzz-build/corpus-$$h $$seeds || exit 1; \
	done

clean-local: clean-fuzz
clean-fuzz:
	rm -rf fuzz-build
.PHONY: fuzz fuzz-run clean-fuzz

# The demo model of the README's first command (`make demo`).
noinst_PROGRAMS += tests/tools/gen_demo
tests_tools_gen_demo_SOURCES = tests/tools/gen_demo.c
tests_tools_gen_demo_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/tools
tests_tools_gen_demo_LDADD = tests/tools/libggufbuild.la $(Q42_PROGRAM_LIBS)

if HAVE_BATS
TESTS += tests/bats/demo.bats
endif
EXTRA_DIST += tests/bats/demo.bats tests/golden/engine/demo.tsv

# Whether the Vulkan backend was built (tests/vulkan.mk); LeakSanitizer
# ignores leaks inside the Vulkan loader and Mesa's drivers only
# (tests/lsan.supp), never in q42's own code.
AM_TESTS_ENVIRONMENT += \
	Q42_WITH_VULKAN='$(Q42_WITH_VULKAN)'; export Q42_WITH_VULKAN; \
	LSAN_OPTIONS="suppressions=$(abs_top_srcdir)/tests/lsan.supp:print_suppressions=0$${LSAN_OPTIONS:+:$$LSAN_OPTIONS}"; \
	export LSAN_OPTIONS;
