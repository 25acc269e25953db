/* replay.c -- a libFuzzer harness run without libFuzzer: each file named
 * on the command line (a folder: each file in it but its README, in name
 * order) is read into a buffer of exactly its size and handed once to the
 * harness's LLVMFuzzerTestOneInput, after LLVMFuzzerInitialize where the
 * harness has one.
 *
 * libFuzzer needs clang and minutes of building; this needs neither, so
 * `make check` links every harness with it (tests/fuzz/replay_NAME) and
 * replays the checked-in corpora through their readers in every build,
 * the ASan/UBSan one of CI included (tests/bats/fuzz_replay.bats): the
 * seeds, and each input that once crashed a reader, kept in the corpus as
 * a regression test. Exit status: 0, or 2 when a file cannot be read; a
 * reader's fault ends the process as it would under the fuzzer.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* weak: the harnesses without set-up do not define it */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The corpora's files are small; a larger one is not an input. */
#define REPLAY_MAX_BYTES (1u << 24)

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	uint8_t *buf;

	if (f == NULL || fstat(fileno(f), &st) != 0 || st.st_size < 0 ||
	    (uint64_t)st.st_size > REPLAY_MAX_BYTES) {
		fprintf(stderr, "replay: %s: cannot read it, or over %u bytes\n", path,
			REPLAY_MAX_BYTES);
		if (f != NULL)
			fclose(f);
		return 2;
	}
	/* exactly the file's bytes, so a read past them is ASan's to see */
	buf = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
	if (buf == NULL || fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		fprintf(stderr, "replay: %s: read failed\n", path);
		free(buf);
		fclose(f);
		return 2;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)st.st_size);
	free(buf);
	return 0;
}

static int skip_entry(const struct dirent *e)
{
	return e->d_name[0] != '.' && strcmp(e->d_name, "README") != 0;
}

int main(int argc, char **argv)
{
	uint64_t n = 0;
	int rc = 0;

	if (LLVMFuzzerInitialize != NULL)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;
		struct dirent **names;
		int k;

		if (stat(argv[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
			rc |= replay_file(argv[i]);
			n++;
			continue;
		}
		if ((k = scandir(argv[i], &names, skip_entry, alphasort)) < 0) {
			fprintf(stderr, "replay: %s: cannot list it\n", argv[i]);
			rc |= 2;
			continue;
		}
		for (int j = 0; j < k; j++) {
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", argv[i], names[j]->d_name);
			rc |= replay_file(path);
			n++;
			free(names[j]);
		}
		free(names);
	}
	printf("replay: %llu inputs\n", (unsigned long long)n);
	return rc;
}
