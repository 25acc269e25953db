# lib/vulkan/forward.mk -- the Vulkan forward pass the engine drives
# (internal: q42_vk_forward.h is not installed) and its tests. The unit
# test is built in every configuration: without Vulkan it checks that
# --backend vulkan is refused and auto stays on the CPU.
if Q42_VULKAN
lib_libq42core_la_SOURCES += lib/vulkan/q42_vk_forward.c lib/vulkan/q42_vk_forward.h
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_vk_forward
TESTS += tests/unit/test_vk_forward
tests_unit_test_vk_forward_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -Wno-missing-prototypes
tests_unit_test_vk_forward_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
endif

if HAVE_BATS
TESTS += tests/bats/vk_parity.bats
endif
EXTRA_DIST += tests/bats/vk_parity.bats
