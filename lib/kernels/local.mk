# lib/kernels: scalar reference kernels for the ggml tensor types (bit-exact
# with ggml), their AVX2/AVX-512 variants, the float ops of the forward
# pass, and q42_compat (llama.cpp's x86 arithmetic, scalar and SIMD); their
# unit tests and golden data.
lib_libq42core_la_SOURCES += \
	lib/kernels/q42_half.c lib/kernels/q42_quants.c lib/kernels/q42_dot.c \
	lib/kernels/q42_kernels.c lib/kernels/q42_kernels_x86.c lib/kernels/q42_kernels_avx2.c \
	lib/kernels/q42_kernels_avx512.c lib/kernels/q42_kernels_x86.h lib/kernels/q42_ops.c \
	lib/kernels/q42_kernels_impl.h \
	lib/kernels/q42_compat.c lib/kernels/q42_compat_x86.c lib/kernels/q42_compat_x86.h \
	lib/kernels/q42_amx.c lib/kernels/q42_amx.h \
	lib/kernels/q42_pack.c lib/kernels/q42_pack_x86.c lib/kernels/q42_pack.h
q42kernelsdir = $(includedir)/q42/kernels
q42kernels_HEADERS = lib/kernels/q42_kernels.h lib/kernels/q42_ops.h lib/kernels/q42_compat.h

# Golden data written by tests/tools/gen_kernel_golden.py (see the README
# there); the tests only read it.
EXTRA_DIST += tests/tools/gen_kernel_golden.py tests/golden/kernels/README.md \
	tests/golden/kernels/tables.sha256 $(wildcard $(srcdir)/tests/golden/kernels/*.bin)

if HAVE_CMOCKA
KERNEL_TESTS = tests/unit/test_kernels tests/unit/test_kernels_isa tests/unit/test_kernels_ops \
	tests/unit/test_compat_tiles
check_PROGRAMS += $(KERNEL_TESTS)
TESTS += $(KERNEL_TESTS)
tests_unit_test_kernels_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_kernels_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
tests_unit_test_kernels_isa_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_kernels_isa_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
tests_unit_test_kernels_ops_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_kernels_ops_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
tests_unit_test_compat_tiles_SOURCES = tests/unit/test_compat_tiles.c tests/unit/compat_testlib.h
tests_unit_test_compat_tiles_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_compat_tiles_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
endif

# Kernel micro-benchmark (not a test): `make bench-kernels`, options via
# BENCH_KERNELS_ARGS (e.g. "--threads 2 --type q4_K").
# The engine's row products (decode GB/s, against membw's loop over the
# same bytes in the same run; prefill MAC/s): bench_rows,
# options via BENCH_ROWS_ARGS (e.g. "--threads 2 --tok 128", or
# "--threads 2 --job-rows 960" for decode in jobs with barriers between
# them, as a one-token pass runs a layer's products).
noinst_PROGRAMS += tests/tools/bench_kernels tests/tools/bench_rows
tests_tools_bench_kernels_LDADD = $(Q42_PROGRAM_LIBS)
tests_tools_bench_rows_LDADD = $(Q42_PROGRAM_LIBS)
bench-kernels: tests/tools/bench_kernels$(EXEEXT) tests/tools/bench_rows$(EXEEXT)
	./tests/tools/bench_kernels$(EXEEXT) $(BENCH_KERNELS_ARGS)
	./tests/tools/bench_rows$(EXEEXT) $(BENCH_ROWS_ARGS)
.PHONY: bench-kernels
