# tests/vulkan.mk -- tests of the Vulkan backend. They are built in every
# configuration: with --with-vulkan=no they skip (Q42_WITH_VULKAN=no in the
# test environment); with Vulkan but no device they skip, or fail under
# CI=true. Each Vulkan helper appends its own lines here.
EXTRA_DIST += tests/lsan.supp tests/bats/vulkan.bats

if HAVE_CMOCKA
if Q42_VULKAN
check_PROGRAMS += tests/unit/test_vk
TESTS += tests/unit/test_vk
tests_unit_test_vk_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(CRYPTO_CFLAGS)
tests_unit_test_vk_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
check_PROGRAMS += tests/unit/test_vk_ops
TESTS += tests/unit/test_vk_ops
tests_unit_test_vk_ops_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_vk_ops_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
endif
endif

if HAVE_BATS
TESTS += tests/bats/vulkan.bats
endif
