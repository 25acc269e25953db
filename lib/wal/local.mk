# lib/wal: the Q42 volume (q42-volume(5)): reader, Merkle tree, writer with
# group commit, review, archives, model binding; q42wal and its tests.
lib_libq42core_la_SOURCES += \
	lib/wal/q42_merkle.c lib/wal/q42_merkle.h \
	lib/wal/q42_volume.c lib/wal/q42_volume.h \
	lib/wal/q42_wal.c lib/wal/q42_wal.h lib/wal/q42_wal_impl.h \
	lib/wal/q42_walrec.c lib/wal/q42_walarc.c lib/wal/q42_walbind.c
q42waldir = $(includedir)/q42/wal
q42wal_HEADERS = lib/wal/q42_merkle.h lib/wal/q42_volume.h lib/wal/q42_wal.h

dist_man_MANS += man/q42-volume.5

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_wal
TESTS += tests/unit/test_wal
tests_unit_test_wal_SOURCES = tests/unit/test_wal.c
tests_unit_test_wal_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_wal_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
endif

# The crash driver: kills committing q42wal processes and checks recovery.
# `make check` runs 200 kills (tests/bats/q42wal.bats); `make crashtest`
# runs CRASH_KILLS of them.
check_PROGRAMS += tests/tools/crashtest
tests_tools_crashtest_SOURCES = tests/tools/crashtest.c
tests_tools_crashtest_LDADD = $(Q42_PROGRAM_LIBS)
CRASH_KILLS = 1000
crashtest: tests/tools/crashtest$(EXEEXT) bin/q42wal/q42wal$(EXEEXT)
	@mkdir -p crashtest.d
	tests/tools/crashtest --kills $(CRASH_KILLS) --q42wal bin/q42wal/q42wal --dir crashtest.d
clean-local: clean-crashtest
clean-crashtest:
	rm -rf crashtest.d
.PHONY: crashtest clean-crashtest

# libFuzzer harness for the volume reader (`make fuzz-volume`; the generic
# fuzz-build/fuzz_% rule of tests/local.mk builds it from all library sources).
fuzz-volume: fuzz-build/fuzz_volume
EXTRA_DIST += tests/fuzz/corpus-volume/README tests/fuzz/corpus-volume/seed-13-records.q42 \
	tests/fuzz/corpus-volume/seed-binding.q42
.PHONY: fuzz-volume

include bin/q42wal/local.mk
