# lib/engine/certify.mk -- kernel certification (q42run --certify): the
# shared machinery and the CPU cases, built with or without Vulkan.
lib_libq42core_la_SOURCES += lib/engine/q42_certify.c lib/engine/q42_certify_impl.h
q42engine_HEADERS += lib/engine/q42_certify.h

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_certify
TESTS += tests/unit/test_certify
tests_unit_test_certify_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_certify_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
endif
