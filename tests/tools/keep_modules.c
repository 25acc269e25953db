/* keep_modules.c -- a dlclose that unloads nothing, preloaded into the
 * tests of a sanitizer build (tests/local.mk).
 *
 * The Vulkan loader unloads Mesa's lavapipe driver at vkDestroyInstance;
 * memory the driver still points to from its own globals then looks
 * leaked, and LeakSanitizer reports it from "<unknown module>", which no
 * suppression can name. With the driver left mapped those blocks stay
 * reachable and q42's own leaks are still reported. Never part of libq42
 * or of a program.
 */
int dlclose(void *handle);

int dlclose(void *handle)
{
	(void)handle;
	return 0;
}
