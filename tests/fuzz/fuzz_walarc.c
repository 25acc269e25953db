/* fuzz_walarc.c -- libFuzzer harness for q42wal import: archives through
 * libarchive (tar, tar.zst and whatever filter libarchive detects), the
 * volume copied out of them and verified, the tree head checked.
 *
 * libarchive reads from a path, so each input is written to a file in a
 * private temporary folder (under $TMPDIR, best a tmpfs) and imported
 * into a destination there, removed again when the import created it.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "wal/q42_wal.h"
#include "fuzz_file.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[4200], dest[4200];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_file_init("fuzz_walarc", "in.tar", path, sizeof path);
	snprintf(dest, sizeof dest, "%s/volume.q42", fuzz_dir);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t n;
	q42_hash root;
	q42_err err;

	if (!fuzz_file_write(data, size))
		return 0;
	if (q42_wal_import(path, dest, &n, root, &err) == Q42_OK)
		unlink(dest);
	return 0;
}
