/* q42_file.c -- read-only input mappings and atomic output files.
 *
 * Inputs: regular files are mmapped as they are; anything else (a pipe on
 * stdin) is first copied into an unlinked temporary file so every reader
 * works on one mapping. Outputs: a temporary file beside the target, fsync,
 * rename, fsync of the directory -- the target either is complete or is
 * untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/q42_file.h"

static int spool_stdin(int *out_fd, q42_err *err)
{
	const char *dir = getenv("TMPDIR");
	char tmpl[4096];
	char buf[1 << 16];
	int fd;

	if (dir == NULL || *dir == '\0')
		dir = "/tmp";
	snprintf(tmpl, sizeof tmpl, "%s/q42-stdin-XXXXXX", dir);
	fd = mkstemp(tmpl);
	if (fd < 0)
		return q42_err_set(err, Q42_EIO, "stdin: cannot create spool file in %s: %s",
				   dir, strerror(errno));
	unlink(tmpl);
	for (;;) {
		ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return q42_err_set(err, Q42_EIO, "stdin: read failed: %s", strerror(errno));
		}
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(fd, buf + off, (size_t)(n - off));
			if (w < 0) {
				if (errno == EINTR)
					continue;
				close(fd);
				return q42_err_set(err, Q42_EIO, "stdin: spool write failed: %s",
						   strerror(errno));
			}
			off += w;
		}
	}
	*out_fd = fd;
	return Q42_OK;
}

int q42_map_open(q42_map *m, const char *path, int advice, q42_err *err)
{
	struct stat st;
	int rc;

	memset(m, 0, sizeof *m);
	m->fd = -1;
	m->path = strdup(path);
	if (m->path == NULL)
		return q42_err_set(err, Q42_ENOMEM, "%s: out of memory", path);
	if (strcmp(path, "-") == 0) {
		if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode)) {
			m->fd = dup(STDIN_FILENO);
		} else {
			rc = spool_stdin(&m->fd, err);
			if (rc != Q42_OK)
				goto fail;
		}
	} else {
		m->fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (m->fd < 0) {
		rc = q42_err_set(err, Q42_EIO, "%s: cannot open: %s", path, strerror(errno));
		goto fail;
	}
	if (fstat(m->fd, &st) != 0) {
		rc = q42_err_set(err, Q42_EIO, "%s: cannot stat: %s", path, strerror(errno));
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		rc = q42_err_set(err, Q42_EIO, "%s: is a directory", path);
		goto fail;
	}
	m->size = (uint64_t)st.st_size;
	if (m->size == 0)
		return Q42_OK;
	if (m->size > (uint64_t)SIZE_MAX) {
		rc = q42_err_set(err, Q42_EIO, "%s: too large to map", path);
		goto fail;
	}
	void *p = mmap(NULL, (size_t)m->size, PROT_READ, MAP_PRIVATE, m->fd, 0);
	if (p == MAP_FAILED) {
		rc = q42_err_set(err, Q42_EIO, "%s: mmap failed: %s", path, strerror(errno));
		goto fail;
	}
	if (advice != 0)
		(void)madvise(p, (size_t)m->size, advice);
	m->data = p;
	return Q42_OK;
fail:
	q42_map_close(m);
	return rc;
}

void q42_map_close(q42_map *m)
{
	if (m->data != NULL)
		munmap((void *)(uintptr_t)m->data, (size_t)m->size);
	if (m->fd >= 0)
		close(m->fd);
	free(m->path);
	memset(m, 0, sizeof *m);
	m->fd = -1;
}

bool q42_map_advise(const q42_map *m, uint64_t off, uint64_t len, int advice)
{
	const long ps = sysconf(_SC_PAGESIZE);
	const uint64_t page = ps > 0 ? (uint64_t)ps : 4096u;
	uint64_t start, end;

	if (m->data == NULL || off >= m->size)
		return false;
	if (len > m->size - off)
		len = m->size - off;
	start = off / page * page;
	end = off + len;
	return madvise((void *)(uintptr_t)(m->data + start), (size_t)(end - start), advice) == 0;
}

int q42_outfile_open(q42_outfile *o, const char *path, q42_err *err)
{
	size_t n;
	int rc;

	memset(o, 0, sizeof *o);
	o->fd = -1;
	if (strcmp(path, "-") == 0) {
		o->fp = stdout;
		o->fd = STDOUT_FILENO;
		return Q42_OK;
	}
	o->path = strdup(path);
	n = strlen(path) + sizeof ".tmp-XXXXXX";
	o->tmp_path = malloc(n);
	if (o->path == NULL || o->tmp_path == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "%s: out of memory", path);
		goto fail;
	}
	snprintf(o->tmp_path, n, "%s.tmp-XXXXXX", path);
	o->fd = mkostemp(o->tmp_path, O_CLOEXEC);
	if (o->fd < 0) {
		rc = q42_err_set(err, Q42_EIO, "%s: cannot create temporary file: %s", path,
				 strerror(errno));
		free(o->tmp_path);
		o->tmp_path = NULL;
		goto fail;
	}
	{
		mode_t um = umask(0);
		umask(um);
		(void)fchmod(o->fd, 0666 & ~um);
	}
	o->fp = fdopen(o->fd, "wb");
	if (o->fp == NULL) {
		rc = q42_err_set(err, Q42_EIO, "%s: fdopen failed: %s", path, strerror(errno));
		goto fail;
	}
	return Q42_OK;
fail:
	q42_outfile_abort(o);
	return rc;
}

static void fsync_dir_of(const char *path)
{
	char *copy = strdup(path);
	int dfd;

	if (copy == NULL)
		return;
	dfd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
	free(copy);
}

int q42_outfile_commit(q42_outfile *o, q42_err *err)
{
	int rc = Q42_OK;

	if (o->fp == NULL)
		return q42_err_set(err, Q42_EARG, "output is not open");
	if (fflush(o->fp) != 0)
		rc = q42_err_set(err, Q42_EIO, "%s: write failed: %s",
				 o->path ? o->path : "stdout", strerror(errno));
	if (o->path == NULL) {
		o->fp = NULL;
		return rc;
	}
	if (rc == Q42_OK && fsync(o->fd) != 0)
		rc = q42_err_set(err, Q42_EIO, "%s: fsync failed: %s", o->path, strerror(errno));
	if (fclose(o->fp) != 0 && rc == Q42_OK)
		rc = q42_err_set(err, Q42_EIO, "%s: close failed: %s", o->path, strerror(errno));
	o->fp = NULL;
	o->fd = -1;
	if (rc == Q42_OK && rename(o->tmp_path, o->path) != 0)
		rc = q42_err_set(err, Q42_EIO, "%s: rename failed: %s", o->path, strerror(errno));
	if (rc != Q42_OK) {
		q42_outfile_abort(o);
		return rc;
	}
	fsync_dir_of(o->path);
	free(o->tmp_path);
	free(o->path);
	o->tmp_path = NULL;
	o->path = NULL;
	return Q42_OK;
}

void q42_outfile_abort(q42_outfile *o)
{
	if (o->path != NULL && o->fp != NULL)
		fclose(o->fp);
	else if (o->path != NULL && o->fd >= 0)
		close(o->fd);
	if (o->tmp_path != NULL)
		unlink(o->tmp_path);
	free(o->tmp_path);
	free(o->path);
	memset(o, 0, sizeof *o);
	o->fd = -1;
}
