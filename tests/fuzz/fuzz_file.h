/* fuzz_file.h -- for harnesses whose reader takes a path, not bytes: a
 * private temporary folder made once (under $TMPDIR, else /dev/shm where
 * it can be written, else /tmp: a tmpfs keeps the filesystem's block
 * allocation out of each run) and removed with everything in it at exit,
 * each input written to one file in it (or, fuzz_walidx, to files of the
 * harness's own).
 *
 * The file is rewritten in place, never truncated to zero first: a
 * truncation frees its pages and the next write allocates and clears
 * them again, which was most of fuzz_mount's time. A harness whose file
 * is a mutated head and a fixed tail (fuzz_mount: a model's header and a
 * base model's tensor data) writes the tail only when its place or its
 * bytes change. */
#ifndef Q42_FUZZ_FILE_H
#define Q42_FUZZ_FILE_H

#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_dir[4096];
static char fuzz_path[4200];
static int fuzz_fd = -1;
static const uint8_t *fuzz_tail; /* the tail the file holds, and where */
static size_t fuzz_tail_at, fuzz_tail_len;

static inline void fuzz_dir_remove(void)
{
	DIR *d;
	struct dirent *e;

	if (fuzz_fd >= 0)
		close(fuzz_fd);
	if ((d = opendir(fuzz_dir)) != NULL) {
		while ((e = readdir(d)) != NULL)
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(fuzz_dir);
}

/* Make the folder (exits on failure). */
static inline void fuzz_dir_init(const char *tag)
{
	const char *tmp = getenv("TMPDIR");

	if (tmp == NULL || *tmp == '\0')
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(fuzz_dir, sizeof fuzz_dir, "%s/%s.XXXXXX", tmp, tag);
	if (mkdtemp(fuzz_dir) == NULL) {
		perror(fuzz_dir);
		exit(1);
	}
	atexit(fuzz_dir_remove);
}

/* Make the folder and open the file NAME in it (exits on failure); its
 * path into path (cap bytes). */
static inline void fuzz_file_init(const char *tag, const char *name, char *path, size_t cap)
{
	fuzz_dir_init(tag);
	snprintf(fuzz_path, sizeof fuzz_path, "%s/%s", fuzz_dir, name);
	snprintf(path, cap, "%s", fuzz_path);
	if ((fuzz_fd = open(fuzz_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0) {
		perror(fuzz_path);
		exit(1);
	}
}

static inline bool fuzz_pwrite_all(const uint8_t *p, size_t n, size_t at)
{
	while (n > 0) {
		const ssize_t w = pwrite(fuzz_fd, p, n, (off_t)at);
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
		at += (size_t)w;
	}
	return true;
}

/* Make the file head (hlen bytes) followed by tail (tlen bytes); false
 * when that fails. */
static inline bool fuzz_file_write2(const uint8_t *head, size_t hlen, const uint8_t *tail, size_t tlen)
{
	if (fuzz_tail != tail || fuzz_tail_at != hlen || fuzz_tail_len != tlen) {
		fuzz_tail = NULL;
		if (!fuzz_pwrite_all(tail, tlen, hlen))
			return false;
		fuzz_tail = tail;
		fuzz_tail_at = hlen;
		fuzz_tail_len = tlen;
	}
	return fuzz_pwrite_all(head, hlen, 0) && ftruncate(fuzz_fd, (off_t)(hlen + tlen)) == 0;
}

/* Make the file the input's bytes; false when that fails. */
static inline bool fuzz_file_write(const uint8_t *data, size_t size)
{
	return fuzz_file_write2(data, size, NULL, 0);
}

#endif
