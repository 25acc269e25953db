/* vk_testlib.h -- what the Vulkan unit tests share: a missing device is a
 * skip, except under CI=true, where the run must have one (lavapipe). */
#ifndef VK_TESTLIB_H
#define VK_TESTLIB_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static inline bool vk_test_ci(void)
{
	const char *v = getenv("CI");
	return v != NULL && strcmp(v, "true") == 0;
}

/* Go on when have holds; otherwise say why, then skip (fail under CI). */
#define VK_TEST_NEED(have, why)                                                                    \
	do {                                                                                       \
		if (!(have)) {                                                                     \
			print_message("# no Vulkan device: %s\n", (why));                          \
			if (vk_test_ci())                                                          \
				fail_msg("a Vulkan device is required under CI=true");             \
			skip();                                                                    \
		}                                                                                  \
	} while (0)

#endif
