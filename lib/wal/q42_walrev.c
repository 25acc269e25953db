/* q42_walrev.c -- the bytes of the review state file, VOL.rev
 * (q42-volume(5), REVIEW STATE).
 *
 * Owns the encoding and the checks that keep a damaged file from being
 * used: exact size for its count, header of this volume, CRC-32C, and
 * records that obey the review rules (increasing seqs before the state's
 * frame, votes counted once per key, a committed leaf before the state's
 * leaf count). Whether the state matches the volume's frames is decided by
 * the caller, which reads the frame it names (q42_walidx.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/q42_ckd.h"
#include "common/q42_crc32c.h"
#include "common/q42_le.h"
#include "wal/q42_wal_impl.h"
#include "wal/q42_walidx.h"
#include "wal/q42_walrev.h"

char *q42_walrev_path(const char *vol_path)
{
	size_t n = strlen(vol_path);
	char *p = malloc(n + 5);
	if (p) {
		memcpy(p, vol_path, n);
		memcpy(p + n, ".rev", 5);
	}
	return p;
}

static void pending_encode(uint8_t *o, const q42_vol_pending *p)
{
	memset(o, 0, Q42_REV_PENDING_SIZE);
	q42_st64(o, p->seq);
	q42_st64(o + 8, p->offset);
	q42_st32(o + 16, p->length);
	o[20] = (uint8_t)p->state;
	q42_st32(o + 24, p->approvals);
	q42_st32(o + 28, p->rejections);
	q42_st32(o + 32, p->voted);
	q42_st64(o + 40, p->leaf);
	memcpy(o + 48, p->hash, 32);
	memcpy(o + 80, p->digest, 32);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* One record, checked against the rules a scan would have enforced. */
static bool pending_decode(const uint8_t *o, const q42_walrev *r, uint32_t n_keys,
			   uint64_t prev_seq, q42_vol_pending *p)
{
	p->seq = q42_ld64(o);
	p->offset = q42_ld64(o + 8);
	p->length = q42_ld32(o + 16);
	p->state = o[20];
	p->approvals = q42_ld32(o + 24);
	p->rejections = q42_ld32(o + 28);
	p->voted = q42_ld32(o + 32);
	p->leaf = q42_ld64(o + 40);
	memcpy(p->hash, o + 48, 32);
	memcpy(p->digest, o + 80, 32);
	uint32_t keys_mask = n_keys >= 32 ? UINT32_MAX : (UINT32_C(1) << n_keys) - 1u;
	if (!all_zero(o + 21, 3) || !all_zero(o + 36, 4) || p->state > Q42_VOL_P_REJECTED)
		return false;
	if (p->seq >= r->seq || (prev_seq != Q42_VOL_NONE && p->seq <= prev_seq) || p->seq == 0)
		return false;
	if (p->offset < Q42_VOL_HEADER_SIZE || p->offset >= r->offset ||
	    p->length < Q42_VOL_ENTRY_HEAD + 1 || p->length > Q42_VOL_MAX_PAYLOAD)
		return false;
	if ((p->voted & ~keys_mask) != 0 ||
	    (uint64_t)p->approvals + p->rejections != (uint64_t)__builtin_popcount(p->voted))
		return false;
	if (p->state == Q42_VOL_P_COMMITTED ? p->leaf >= r->n_leaves : p->leaf != Q42_VOL_NONE)
		return false;
	return true;
}

int q42_walrev_load(const char *vol_path, const q42_hash vol_hh, uint32_t n_keys, q42_walrev *r,
		    uint32_t *status, q42_err *err)
{
	uint8_t head[Q42_REV_HEADER_SIZE + Q42_REV_STATE_SIZE], want[Q42_REV_HEADER_SIZE];
	uint8_t *buf = NULL;
	struct stat st;
	uint64_t size, body;
	int rc = Q42_OK;
	memset(r, 0, sizeof *r);
	*status = Q42_REV_ABSENT;
	char *path = q42_walrev_path(vol_path);
	if (!path)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return Q42_OK;
	*status = Q42_REV_DAMAGED;
	q42_err e;
	if (fstat(fd, &st) != 0 || st.st_size < (off_t)(sizeof head + 4) ||
	    q42_wal_pread(fd, "state", head, sizeof head, 0, &e) != Q42_OK)
		goto out;
	q42_wal_sidecar_header(Q42_REV_MAGIC, Q42_REV_VERSION, vol_hh, want);
	if (memcmp(head, want, Q42_REV_HEADER_SIZE) != 0)
		goto out;
	const uint8_t *b = head + Q42_REV_HEADER_SIZE;
	r->seq = q42_ld64(b);
	r->offset = q42_ld64(b + 8);
	r->end = q42_ld64(b + 16);
	memcpy(r->hash, b + 24, 32);
	r->n_leaves = q42_ld64(b + 56);
	r->n_pending = q42_ld64(b + 64);
	size = (uint64_t)st.st_size;
	/* The size must be exactly what the count implies: a cut or grown
	 * file is damage, whatever its CRC says. */
	if (r->n_pending > Q42_REV_MAX_PENDING ||
	    q42_mul_overflow(r->n_pending, (uint64_t)Q42_REV_PENDING_SIZE, &body) ||
	    body + Q42_REV_STATE_SIZE + 4 != size - Q42_REV_HEADER_SIZE)
		goto out;
	if (r->offset < Q42_VOL_HEADER_SIZE || r->end <= r->offset || r->seq == 0)
		goto out;
	buf = malloc((size_t)(size - Q42_REV_HEADER_SIZE));
	r->pending = malloc((size_t)(r->n_pending ? r->n_pending : 1) * sizeof *r->pending);
	if (!buf || !r->pending) {
		rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
		goto out;
	}
	if (q42_wal_pread(fd, "state", buf, size - Q42_REV_HEADER_SIZE, Q42_REV_HEADER_SIZE, &e) !=
	    Q42_OK)
		goto out;
	uint64_t n = size - Q42_REV_HEADER_SIZE - 4;
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	if (q42_ld32(buf + n) != q42_crc32c(0, buf, (size_t)n))
		goto out;
#endif
	uint64_t prev = Q42_VOL_NONE;
	for (uint64_t i = 0; i < r->n_pending; i++) {
		const uint8_t *o = buf + Q42_REV_STATE_SIZE + i * Q42_REV_PENDING_SIZE;
		if (!pending_decode(o, r, n_keys, prev, &r->pending[i]))
			goto out;
		prev = r->pending[i].seq;
	}
	*status = Q42_REV_FOUND;
out:
	free(buf);
	close(fd);
	if (*status != Q42_REV_FOUND)
		q42_walrev_free(r);
	return rc;
}

int q42_walrev_save(const char *vol_path, const q42_volscan *s, q42_err *err)
{
	uint64_t body;
	char *path = q42_walrev_path(vol_path);
	uint8_t *buf = NULL;
	q42_wal_newfile f = {.fd = -1};
	int rc = Q42_OK;
	if (s->n_pending > Q42_REV_MAX_PENDING || s->n_frames < 2 ||
	    q42_mul_overflow(s->n_pending, (uint64_t)Q42_REV_PENDING_SIZE, &body)) {
		q42_walrev_remove(vol_path);
		free(path);
		return Q42_OK;
	}
	uint64_t size = Q42_REV_HEADER_SIZE + Q42_REV_STATE_SIZE + body + 4;
	buf = malloc((size_t)size);
	if (!path || !buf) {
		rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
		goto out;
	}
	q42_wal_sidecar_header(Q42_REV_MAGIC, Q42_REV_VERSION, s->header_hash, buf);
	uint8_t *b = buf + Q42_REV_HEADER_SIZE;
	q42_st64(b, s->n_frames - 1);
	q42_st64(b + 8, s->last.offset);
	q42_st64(b + 16, s->end);
	memcpy(b + 24, s->prev, 32);
	q42_st64(b + 56, s->n_leaves);
	q42_st64(b + 64, s->n_pending);
	for (uint64_t i = 0; i < s->n_pending; i++)
		pending_encode(b + Q42_REV_STATE_SIZE + i * Q42_REV_PENDING_SIZE, &s->pending[i]);
	q42_st32(buf + size - 4, q42_crc32c(0, b, (size_t)(size - 4 - Q42_REV_HEADER_SIZE)));
	if ((rc = q42_wal_new_open(&f, path, err)) != Q42_OK ||
	    (rc = q42_wal_new_write(&f, buf, size, err)) != Q42_OK)
		goto out;
	/* Derived data: renamed over the old one, not fsynced. A file lost or
	 * torn by a crash fails its size or CRC check and is rebuilt from the
	 * frames. */
	if (rename(f.tmp, path) != 0)
		rc = q42_err_set(err, Q42_EIO, "%s: rename: %s", f.tmp, strerror(errno));
out:
	q42_wal_new_abort(&f); /* closes; the temporary name is gone once renamed */
	free(buf);
	free(path);
	return rc;
}

void q42_walrev_remove(const char *vol_path)
{
	char *path = q42_walrev_path(vol_path);
	if (path)
		unlink(path);
	free(path);
}

void q42_walrev_free(q42_walrev *r)
{
	free(r->pending);
	r->pending = NULL;
	r->n_pending = 0;
}
