/* q42_walarc.c -- moving volumes between machines: export to and import
 * from tar or tar.zst archives, through libarchive.
 *
 * An archive holds volume.q42 and head.json (its tree head). Export only
 * writes a volume that verifies (streamed, then copied through one
 * buffer; the index is not exported: the importer's writers rebuild it);
 * import streams the volume into a temporary file beside the target,
 * verifies it there (streamed, bounded memory) and that the head matches
 * it, and only then links it into place; it never replaces an existing
 * volume. Nothing here prints.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "formats/q42_digest.h"
#include "wal/q42_wal.h"
#include "wal/q42_wal_impl.h"
#include "wal/q42_walidx.h"

#define ARC_VOLUME "volume.q42"
#define ARC_HEAD "head.json"
/* Cap on the tree head import reads into memory. */
#define ARC_MAX_HEAD 4096u
#define ARC_CHUNK (1u << 20)

static bool is_zstd_name(const char *path)
{
	size_t n = strlen(path);
	return (n >= 4 && !strcmp(path + n - 4, ".zst")) || (n >= 5 && !strcmp(path + n - 5, ".tzst"));
}

static int add_member(struct archive *a, const char *name, const void *data, uint64_t n,
		      q42_err *err)
{
	struct archive_entry *e = archive_entry_new();
	int rc = Q42_OK;
	if (!e)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	archive_entry_set_pathname(e, name);
	archive_entry_set_size(e, (la_int64_t)n);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_mtime(e, time(NULL), 0);
	if (archive_write_header(a, e) != ARCHIVE_OK ||
	    (n > 0 && archive_write_data(a, data, (size_t)n) != (la_ssize_t)n))
		rc = q42_err_set(err, Q42_EIO, "archive: writing %s: %s", name,
				 archive_error_string(a));
	archive_entry_free(e);
	return rc;
}

static int head_json(const q42_wal_verify_report *rep, char **out, q42_err *err)
{
	char idhex[Q42_VOL_ID_LEN * 2 + 1], roothex[65];
	q42_hex_encode(rep->id, Q42_VOL_ID_LEN, idhex);
	q42_hex_encode(rep->root, 32, roothex);
	json_t *o = json_pack("{s:s,s:I,s:s}", "volume", idhex, "size", (json_int_t)rep->n_leaves,
			      "root", roothex);
	*out = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!*out)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	return Q42_OK;
}

/* The first n bytes of the file at path, as an archive member, through one
 * buffer: a volume only grows, so its verified prefix does not change. */
static int add_file_prefix(struct archive *a, const char *name, const char *path, uint64_t n,
			   q42_err *err)
{
	struct archive_entry *e = archive_entry_new();
	uint8_t *buf = malloc(ARC_CHUNK);
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = Q42_OK;
	if (!e || !buf) {
		rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
		goto out;
	}
	if (fd < 0) {
		rc = q42_err_set(err, Q42_EIO, "%s: cannot open: %s", path, strerror(errno));
		goto out;
	}
	archive_entry_set_pathname(e, name);
	archive_entry_set_size(e, (la_int64_t)n);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_mtime(e, time(NULL), 0);
	if (archive_write_header(a, e) != ARCHIVE_OK) {
		rc = q42_err_set(err, Q42_EIO, "archive: writing %s: %s", name, archive_error_string(a));
		goto out;
	}
	for (uint64_t done = 0; done < n && rc == Q42_OK;) {
		uint64_t k = n - done < ARC_CHUNK ? n - done : ARC_CHUNK;
		if ((rc = q42_wal_pread(fd, path, buf, k, done, err)) != Q42_OK)
			break;
		if (archive_write_data(a, buf, (size_t)k) != (la_ssize_t)k)
			rc = q42_err_set(err, Q42_EIO, "archive: writing %s: %s", name,
					 archive_error_string(a));
		done += k;
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	archive_entry_free(e);
	return rc;
}

int q42_wal_export(const char *vol_path, const char *archive_path, q42_err *err)
{
	q42_wal_verify_report rep;
	q42_outfile o = {0};
	struct archive *a = NULL;
	char *head = NULL;
	int rc = q42_wal_verify(vol_path, Q42_VOL_NONE, NULL, NULL, &rep, err);
	if (rc != Q42_OK)
		return rc;
	q42_wal_verify_free(&rep);
	if ((rc = head_json(&rep, &head, err)) != Q42_OK)
		goto fail;
	if ((rc = q42_outfile_open(&o, archive_path, err)) != Q42_OK)
		goto fail;
	a = archive_write_new();
	if (!a) {
		rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
		goto fail;
	}
	if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    (is_zstd_name(archive_path) && archive_write_add_filter_zstd(a) != ARCHIVE_OK) ||
	    /* no zero padding after a compressed stream: zstd readers reject it */
	    (is_zstd_name(archive_path) && archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK) ||
	    archive_write_open_FILE(a, o.fp) != ARCHIVE_OK) {
		rc = q42_err_set(err, Q42_EUNSUPPORTED, "archive: %s", archive_error_string(a));
		goto fail;
	}
	/* Only the verified prefix: a writer's batch in progress is not part of it. */
	if ((rc = add_file_prefix(a, ARC_VOLUME, vol_path, rep.valid_end, err)) != Q42_OK ||
	    (rc = add_member(a, ARC_HEAD, head, strlen(head), err)) != Q42_OK)
		goto fail;
	if (archive_write_close(a) != ARCHIVE_OK) {
		rc = q42_err_set(err, Q42_EIO, "archive: %s", archive_error_string(a));
		goto fail;
	}
	rc = q42_outfile_commit(&o, err);
fail:
	if (a)
		archive_write_free(a);
	q42_outfile_abort(&o);
	free(head);
	return rc;
}

/* Read the current member's data (at most cap bytes) into a new buffer. */
static int read_member(struct archive *a, struct archive_entry *e, uint64_t cap, uint8_t **out,
		       uint64_t *n, q42_err *err)
{
	const char *name = archive_entry_pathname(e);
	la_int64_t size = archive_entry_size(e);
	if (!archive_entry_size_is_set(e) || size < 0 || (uint64_t)size > cap)
		return q42_err_set(err, Q42_EFORMAT, "archive: %s: size unknown or over %llu bytes",
				   name, (unsigned long long)cap);
	uint8_t *p = malloc((size_t)size + 1);
	if (!p)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	uint64_t got = 0;
	for (;;) {
		la_ssize_t k = archive_read_data(a, p + got, (size_t)((uint64_t)size + 1 - got));
		if (k < 0) {
			free(p);
			return q42_err_set(err, Q42_EFORMAT, "archive: %s: %s", name,
					   archive_error_string(a));
		}
		if (k == 0)
			break;
		got += (uint64_t)k;
		if (got > (uint64_t)size) {
			free(p);
			return q42_err_set(err, Q42_EFORMAT, "archive: %s: longer than its header says",
					   name);
		}
	}
	if (got != (uint64_t)size) {
		free(p);
		return q42_err_set(err, Q42_EFORMAT, "archive: %s: %llu of %lld bytes", name,
				   (unsigned long long)got, (long long)size);
	}
	p[got] = 0;
	*out = p;
	*n = got;
	return Q42_OK;
}

/* Copy the current member into a new temporary file beside dest. */
static int copy_member(struct archive *a, const char *name, q42_wal_newfile *nf,
		       const char *dest, uint64_t *n, q42_err *err)
{
	uint8_t *buf = malloc(ARC_CHUNK);
	int rc;
	*n = 0;
	if (!buf)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	if ((rc = q42_wal_new_open(nf, dest, err)) != Q42_OK) {
		free(buf);
		return rc;
	}
	for (;;) {
		la_ssize_t k = archive_read_data(a, buf, ARC_CHUNK);
		if (k < 0) {
			rc = q42_err_set(err, Q42_EFORMAT, "archive: %s: %s", name,
					 archive_error_string(a));
			break;
		}
		if (k == 0)
			break;
		if ((rc = q42_wal_new_write(nf, buf, (uint64_t)k, err)) != Q42_OK)
			break;
		*n += (uint64_t)k;
	}
	free(buf);
	if (rc != Q42_OK)
		q42_wal_new_abort(nf);
	return rc;
}

int q42_wal_import(const char *archive_path, const char *dest, uint64_t *size, q42_hash root,
		   q42_err *err)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	uint8_t *head = NULL;
	uint64_t vol_n = 0, head_n = 0;
	q42_wal_newfile nf = {.fd = -1};
	q42_volscan s;
	bool have_vol = false;
	int rc = Q42_OK;
	memset(&s, 0, sizeof s);
	if (!a)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_filename(a, archive_path, 65536) != ARCHIVE_OK) {
		rc = q42_err_set(err, Q42_EIO, "%s: %s", archive_path, archive_error_string(a));
		goto fail;
	}
	for (;;) {
		int r = archive_read_next_header(a, &e);
		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK) {
			rc = q42_err_set(err, Q42_EFORMAT, "%s: %s", archive_path,
					 archive_error_string(a));
			goto fail;
		}
		const char *name = archive_entry_pathname(e);
		bool is_vol = name && !strcmp(name, ARC_VOLUME), is_head = name && !strcmp(name, ARC_HEAD);
		if ((is_vol && have_vol) || (is_head && head)) {
			rc = q42_err_set(err, Q42_EFORMAT, "%s: %s appears twice", archive_path, name);
			goto fail;
		}
		if (is_vol) {
			rc = copy_member(a, name, &nf, dest, &vol_n, err);
			have_vol = rc == Q42_OK;
		} else if (is_head) {
			rc = read_member(a, e, ARC_MAX_HEAD, &head, &head_n, err);
		}
		if (rc != Q42_OK) {
			if (rc != Q42_EIO)
				q42_err_prefix(err, "%s", archive_path);
			goto fail;
		}
	}
	if (!have_vol) {
		rc = q42_err_set(err, Q42_EFORMAT, "%s: no %s member", archive_path, ARC_VOLUME);
		goto fail;
	}
	/* Every frame, from the copy, as verify reads a volume. */
	rc = q42_wal_scan_all(&s, nf.fd, ARC_VOLUME, vol_n, NULL, NULL, err);
	if (rc != Q42_OK) {
		q42_err_prefix(err, "%s", archive_path);
		goto fail;
	}
	*size = s.n_leaves;
	if ((rc = q42_merkle_range_root(&s.range, root, err)) != Q42_OK)
		goto fail;
	if (head) {
		json_error_t je;
		json_t *h = json_loadb((const char *)head, (size_t)head_n, 0, &je);
		json_t *hs = h ? json_object_get(h, "size") : NULL, *hr = h ? json_object_get(h, "root") : NULL;
		uint8_t want[32];
		bool ok = json_is_integer(hs) && json_is_string(hr) &&
			  (uint64_t)json_integer_value(hs) == s.n_leaves &&
			  q42_hex_decode(json_string_value(hr), want, 32, NULL) == Q42_OK &&
			  !memcmp(want, root, 32);
		json_decref(h);
		if (!ok) {
			rc = q42_err_set(err, Q42_EFORMAT,
					 "%s: %s does not match the volume (size %llu)", archive_path,
					 ARC_HEAD, (unsigned long long)s.n_leaves);
			goto fail;
		}
	}
	rc = q42_wal_new_commit(&nf, err);
fail:
	q42_wal_new_abort(&nf);
	q42_volscan_free(&s);
	free(head);
	archive_read_free(a);
	return rc;
}
