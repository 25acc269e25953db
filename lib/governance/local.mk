# lib/governance: quins (N-Triples/N-Quads + provenance), the q42grd policy,
# facts, thermal state and the gates; plus q42grd's program, man pages and
# tests (registered here so the whole concern lives in one fragment).
lib_libq42core_la_SOURCES += \
	lib/governance/q42_quin.c lib/governance/q42_policy.c lib/governance/q42_facts.c lib/governance/q42_facts_vol.c \
	lib/governance/q42_thermal.c lib/governance/q42_grd.c
q42governancedir = $(includedir)/q42/governance
q42governance_HEADERS = lib/governance/q42_quin.h lib/governance/q42_policy.h \
	lib/governance/q42_facts.h lib/governance/q42_thermal.h lib/governance/q42_grd.h

include bin/q42grd/local.mk

# Unit tests (cmocka). Quin test cases are written from the W3C RDF 1.1
# N-Triples/N-Quads grammar (see the comment at the top of each file).
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_quin tests/unit/test_policy tests/unit/test_grd
TESTS += tests/unit/test_quin tests/unit/test_policy tests/unit/test_grd
tests_unit_test_quin_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -Wno-missing-prototypes
tests_unit_test_quin_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
tests_unit_test_policy_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -Wno-missing-prototypes
tests_unit_test_policy_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
tests_unit_test_grd_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -Wno-missing-prototypes
tests_unit_test_grd_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
endif
if HAVE_BATS
TESTS += tests/bats/q42grd.bats
endif
EXTRA_DIST += tests/bats/q42grd.bats $(wildcard $(srcdir)/tests/golden/governance/*)
