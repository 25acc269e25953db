/* fuzz_file.h -- for harnesses whose reader takes a path, not bytes: a
 * private temporary folder (under $TMPDIR, best a tmpfs) made once, and
 * each input written to one file in it. */
#ifndef Q42_FUZZ_FILE_H
#define Q42_FUZZ_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static char fuzz_dir[4096];

/* Make the folder (exits on failure) and put the path of NAME in it in
 * path (cap bytes). */
static void fuzz_file_init(const char *tag, const char *name, char *path, size_t cap)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(fuzz_dir, sizeof fuzz_dir, "%s/%s.XXXXXX", tmp ? tmp : "/tmp", tag);
	if (mkdtemp(fuzz_dir) == NULL) {
		perror(fuzz_dir);
		exit(1);
	}
	snprintf(path, cap, "%s/%s", fuzz_dir, name);
}

/* Write the input to path; false when that fails. */
static bool fuzz_file_write(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	bool ok;

	if (f == NULL)
		return false;
	ok = fwrite(data, 1, size, f) == size;
	return fclose(f) == 0 && ok;
}

#endif
