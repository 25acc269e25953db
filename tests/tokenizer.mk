# tests/tokenizer.mk -- tokenizer tests (included from lib/tokenizer/local.mk).
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_tokenizer
TESTS += tests/unit/test_tokenizer
tests_unit_test_tokenizer_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -Wno-missing-prototypes
tests_unit_test_tokenizer_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
endif
EXTRA_DIST += $(wildcard $(srcdir)/tests/golden/tokenizer/*.out) \
	tests/golden/tokenizer/extra.inp tests/golden/tokenizer/lines.txt \
	tests/golden/tokenizer/decode.tsv tests/golden/tokenizer/make_golden.sh \
	tests/golden/tokenizer/README.md
