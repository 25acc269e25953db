/* q42_walidx.c -- the volume's index file (q42-volume(5), INDEX) and the
 * one way to open a volume at its checkpoint.
 *
 * Owns: the index's bytes (header, records at computed offsets, CRCs), the
 * search for the last record that still matches the volume, the compact
 * range read back from O(log n) records, and the streaming scan of the
 * frames after that checkpoint (or of every frame, when the index is
 * missing, stale beyond use, or a frame needs review state from before
 * it). Relies on q42_volscan for every rule of the format. Never trusts
 * the index over the frames, never prints, never reads a whole volume
 * into memory: frames are read through one buffer of at most one frame
 * or WALIDX_CHUNK bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/q42_ckd.h"
#include "common/q42_crc32c.h"
#include "common/q42_le.h"
#include "formats/q42_digest.h"
#include "wal/q42_merkle.h"
#include "wal/q42_walidx.h"
#include "wal/q42_walrev.h"

#define WALIDX_CHUNK (UINT64_C(1) << 20)

uint64_t q42_walidx_rec_off(uint64_t i)
{
	/* Record j carries trailing_ones(j) nodes; the sum over j < i of
	 * trailing_ones(j) is i - popcount(i). */
	return Q42_IDX_HEADER_SIZE + (uint64_t)Q42_IDX_REC_MIN * i +
	       32u * (i - (uint64_t)__builtin_popcountll(i));
}

int q42_wal_pread(int fd, const char *path, void *buf, uint64_t n, uint64_t off, q42_err *err)
{
	uint8_t *p = buf;
	uint64_t got = 0;
	while (got < n) {
		ssize_t k = pread(fd, p + got, (size_t)(n - got), (off_t)(off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return q42_err_set(err, Q42_EIO, "%s: read of %llu bytes at offset %llu: %s",
					   path, (unsigned long long)n, (unsigned long long)off,
					   k < 0 ? strerror(errno) : "end of file");
		got += (uint64_t)k;
	}
	return Q42_OK;
}

static int pwrite_all(int fd, const char *path, const void *buf, uint64_t n, uint64_t off,
		      q42_err *err)
{
	const uint8_t *p = buf;
	uint64_t done = 0;
	while (done < n) {
		ssize_t k = pwrite(fd, p + done, (size_t)(n - done), (off_t)(off + done));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return q42_err_set(err, Q42_EIO, "%s: write at offset %llu: %s", path,
					   (unsigned long long)(off + done),
					   k < 0 ? strerror(errno) : "wrote nothing");
		done += (uint64_t)k;
	}
	return Q42_OK;
}

/* ---- Records ------------------------------------------------------------ */

static uint32_t trailing_ones(uint64_t i)
{
	return (uint32_t)__builtin_ctzll(~i);
}

static size_t rec_encode(uint64_t i, const q42_walidx_rec *r, uint8_t *out)
{
	uint32_t t = trailing_ones(i);
	size_t n = Q42_IDX_REC_HEAD + 32u * t;
	memset(out, 0, Q42_IDX_REC_HEAD);
	q42_st64(out, r->offset);
	q42_st64(out + 8, r->seq);
	memcpy(out + 16, r->frame_hash, 32);
	memcpy(out + 48, r->leaf, 32);
	out[80] = (uint8_t)r->kind;
	q42_st64(out + 88, r->binding);
	memcpy(out + Q42_IDX_REC_HEAD, r->nodes, 32u * t);
	q42_st32(out + n, q42_crc32c(0, out, n));
	return n + 4;
}

/* n bytes at off, through the read-ahead buffer when there is one. */
static int idx_pread(q42_walidx *x, uint8_t *buf, uint64_t n, uint64_t off, q42_err *err)
{
	if (!x->ahead_cap || n > x->ahead_cap)
		return q42_wal_pread(x->fd, x->path, buf, n, off, err);
	if (off < x->ahead_off || off - x->ahead_off + n > x->ahead_len) {
		uint64_t got = 0;
		x->ahead_len = 0;
		while (got < x->ahead_cap) {
			ssize_t k = pread(x->fd, x->ahead + got, (size_t)(x->ahead_cap - got),
					  (off_t)(off + got));
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				break;
			got += (uint64_t)k;
		}
		if (got < n)
			return q42_wal_pread(x->fd, x->path, buf, n, off, err);
		x->ahead_off = off;
		x->ahead_len = got;
	}
	memcpy(buf, x->ahead + (off - x->ahead_off), (size_t)n);
	return Q42_OK;
}

void q42_walidx_read_ahead(q42_walidx *x, uint64_t cap)
{
	x->ahead = malloc((size_t)cap);
	x->ahead_cap = x->ahead ? cap : 0;
	x->ahead_len = 0;
}

int q42_walidx_read(q42_walidx *x, uint64_t i, q42_walidx_rec *r, q42_err *err)
{
	uint8_t buf[Q42_IDX_REC_MIN + 32u * 64u];
	uint32_t t = trailing_ones(i);
	uint64_t off = q42_walidx_rec_off(i), n = Q42_IDX_REC_MIN + 32u * t;
	int rc;
	if (x->fd < 0 || i >= x->n)
		return q42_err_set(err, Q42_EFORMAT, "%s: no record for entry %llu",
				   x->path ? x->path : "index", (unsigned long long)i);
	if ((rc = idx_pread(x, buf, n, off, err)) != Q42_OK)
		return rc;
	uint32_t stored = q42_ld32(buf + n - 4), crc = q42_crc32c(0, buf, (size_t)n - 4);
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	crc = stored; /* let mutated records reach the checks behind the CRC */
#endif
	if (stored != crc)
		return q42_err_set(err, Q42_EFORMAT,
				   "%s: record %llu at offset %llu: CRC-32C: stored 0x%08x, computed 0x%08x",
				   x->path, (unsigned long long)i, (unsigned long long)off, stored, crc);
	if (buf[80] < Q42_VOL_K_RECORD || buf[80] > Q42_VOL_K_BINDING)
		return q42_err_set(err, Q42_EFORMAT, "%s: record %llu at offset %llu: kind %u, expected 1..3",
				   x->path, (unsigned long long)i, (unsigned long long)off, buf[80]);
	r->offset = q42_ld64(buf);
	r->seq = q42_ld64(buf + 8);
	memcpy(r->frame_hash, buf + 16, 32);
	memcpy(r->leaf, buf + 48, 32);
	r->kind = buf[80];
	r->binding = q42_ld64(buf + 88);
	r->n_nodes = t;
	memcpy(r->nodes, buf + Q42_IDX_REC_HEAD, 32u * t);
	return Q42_OK;
}

int q42_walidx_append(q42_walidx *x, const q42_walidx_rec *recs, uint64_t count, q42_err *err)
{
	uint8_t *buf;
	uint64_t len = 0;
	int rc;
	if (x->fd < 0 || !x->writable)
		return q42_err_set(err, Q42_EIO, "%s: the index is not open for writing",
				   x->path ? x->path : "index");
	if (count == 0)
		return Q42_OK;
	if (count > Q42_IDX_MAX_ENTRIES || x->n > Q42_IDX_MAX_ENTRIES - count)
		return q42_err_set(err, Q42_EUNSUPPORTED, "%s: more than %llu entries", x->path,
				   (unsigned long long)Q42_IDX_MAX_ENTRIES);
	uint64_t start = q42_walidx_rec_off(x->n), end = q42_walidx_rec_off(x->n + count);
	if (end - start > SIZE_MAX || !(buf = malloc((size_t)(end - start))))
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	for (uint64_t k = 0; k < count; k++)
		len += rec_encode(x->n + k, &recs[k], buf + len);
	rc = pwrite_all(x->fd, x->path, buf, len, start, err);
	free(buf);
	if (rc == Q42_OK)
		x->n += count;
	return rc;
}

int q42_walidx_truncate(q42_walidx *x, uint64_t n, q42_err *err)
{
	if (x->fd < 0 || !x->writable)
		return q42_err_set(err, Q42_EIO, "%s: the index is not open for writing",
				   x->path ? x->path : "index");
	if (ftruncate(x->fd, (off_t)q42_walidx_rec_off(n)) != 0)
		return q42_err_set(err, Q42_EIO, "%s: cannot truncate: %s", x->path, strerror(errno));
	x->n = n;
	return Q42_OK;
}

void q42_walidx_close(q42_walidx *x)
{
	if (x->fd >= 0)
		close(x->fd);
	free(x->path);
	free(x->ahead);
	x->fd = -1;
	x->path = NULL;
	x->n = 0;
	x->ahead = NULL;
	x->ahead_cap = x->ahead_len = 0;
}

void q42_wal_sidecar_header(const char magic[4], uint32_t version, const q42_hash vol_hh,
			    uint8_t out[64])
{
	memset(out, 0, 64);
	memcpy(out, magic, 4);
	q42_st32(out + 4, version);
	q42_st32(out + 8, 64);
	memcpy(out + 16, vol_hh, 32);
	q42_st32(out + 60, q42_crc32c(0, out, 60));
}

/* Records present, judged by size alone. */
static uint64_t records_by_size(uint64_t size)
{
	if (size < Q42_IDX_HEADER_SIZE)
		return 0;
	uint64_t lo = 0, hi = (size - Q42_IDX_HEADER_SIZE) / Q42_IDX_REC_MIN;
	if (hi > Q42_IDX_MAX_ENTRIES)
		hi = Q42_IDX_MAX_ENTRIES;
	/* largest n with rec_off(n) <= size */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo + 1) / 2;
		if (q42_walidx_rec_off(mid) <= size)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

int q42_walidx_open(q42_walidx *x, const char *vol_path, bool write, const q42_hash vol_hh,
		    q42_err *err)
{
	uint8_t want[Q42_IDX_HEADER_SIZE], have[Q42_IDX_HEADER_SIZE];
	struct stat st;
	size_t pl = strlen(vol_path) + 5;
	memset(x, 0, sizeof *x);
	x->fd = -1;
	x->path = malloc(pl);
	if (!x->path)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	snprintf(x->path, pl, "%s.idx", vol_path);
	x->writable = write;
	q42_wal_sidecar_header(Q42_IDX_MAGIC, Q42_IDX_VERSION, vol_hh, want);
	int fd = open(x->path, (write ? O_RDWR | O_CREAT : O_RDONLY) | O_CLOEXEC, 0644);
	if (fd < 0)
		return Q42_OK; /* no index: everything comes from the frames */
	q42_err e;
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < Q42_IDX_HEADER_SIZE ||
	    q42_wal_pread(fd, x->path, have, sizeof have, 0, &e) != Q42_OK ||
	    memcmp(have, want, sizeof want) != 0) {
		if (!write) {
			close(fd);
			return Q42_OK;
		}
		if (ftruncate(fd, 0) != 0 ||
		    pwrite_all(fd, x->path, want, sizeof want, 0, err) != Q42_OK) {
			close(fd);
			return Q42_OK; /* an index that cannot be written is no index */
		}
		x->fd = fd;
		x->n = 0;
		return Q42_OK;
	}
	x->fd = fd;
	x->n = records_by_size((uint64_t)st.st_size);
	return Q42_OK;
}

/* ---- Reading frames through one buffer -------------------------------- */

typedef struct walfile {
	int fd;
	const char *path;
	uint64_t size;
	uint8_t *buf;
	uint64_t cap, boff, blen;
} walfile;

/* Make [off, off + need) (clipped at the end of the file) available at *p;
 * *avail gets the bytes available from off. */
static int wf_at(walfile *f, uint64_t off, uint64_t need, const uint8_t **p, uint64_t *avail,
		 q42_err *err)
{
	*avail = 0;
	*p = f->buf;
	if (off >= f->size)
		return Q42_OK;
	if (need > f->size - off)
		need = f->size - off;
	if (f->buf && off >= f->boff && off - f->boff + need <= f->blen) {
		*p = f->buf + (off - f->boff);
		*avail = f->blen - (off - f->boff);
		return Q42_OK;
	}
	uint64_t chunk = need > WALIDX_CHUNK ? need : WALIDX_CHUNK;
	if (chunk > f->size - off)
		chunk = f->size - off;
	if (chunk > f->cap) {
		uint8_t *nb = realloc(f->buf, (size_t)chunk);
		if (!nb)
			return q42_err_set(err, Q42_ENOMEM, "%s: cannot allocate %llu bytes", f->path,
					   (unsigned long long)chunk);
		f->buf = nb;
		f->cap = chunk;
	}
	f->blen = 0;
	int rc = q42_wal_pread(f->fd, f->path, f->buf, chunk, off, err);
	if (rc != Q42_OK)
		return rc;
	f->boff = off;
	f->blen = chunk;
	*p = f->buf;
	*avail = chunk;
	return Q42_OK;
}

/* The frame at off: as much of it as the file holds. */
static int wf_frame(walfile *f, uint64_t off, const uint8_t **p, uint64_t *avail, q42_err *err)
{
	int rc = wf_at(f, off, Q42_VOL_FRAME_HEAD, p, avail, err);
	if (rc != Q42_OK || *avail < Q42_VOL_FRAME_HEAD)
		return rc;
	uint32_t len = q42_ld32(*p);
	if (len > Q42_VOL_MAX_PAYLOAD)
		return Q42_OK; /* q42_volscan_frame reports the cap */
	return wf_at(f, off, (uint64_t)Q42_VOL_FRAME_OVERHEAD + len, p, avail, err);
}

static int scan_start(q42_volscan *s, walfile *wf, q42_err *err)
{
	const uint8_t *p;
	uint64_t avail;
	int rc;
	memset(s, 0, sizeof *s);
	s->name = wf->path;
	if (wf->size < Q42_VOL_HEADER_SIZE)
		return q42_err_set(err, Q42_EFORMAT, "%s: header: file has %llu bytes, expected at least %u",
				   wf->path, (unsigned long long)wf->size, Q42_VOL_HEADER_SIZE);
	if ((rc = wf_at(wf, 0, Q42_VOL_HEADER_SIZE, &p, &avail, err)) != Q42_OK ||
	    (rc = q42_volscan_header(s, p, wf->path, err)) != Q42_OK)
		return rc;
	if (wf->size == Q42_VOL_HEADER_SIZE)
		return q42_err_set(err, Q42_EFORMAT, "%s: frame 0 at offset 64: missing config frame",
				   wf->path);
	if ((rc = wf_frame(wf, s->end, &p, &avail, err)) != Q42_OK)
		return rc;
	return q42_volscan_frame(s, p, avail, err);
}

/* Frames hashed ahead of the scan by several threads. A long scan is
 * bound by SHA-256 (every byte is hashed twice: in its frame's hash and in
 * its leaf hash), and frames hash independently of each other; the scan
 * then checks them in order exactly as before, with those hashes. */
#define PREHASH_MAX 2048u
#define PREHASH_MIN_BYTES (UINT64_C(4) << 20) /* less to read: one thread */
#define PREHASH_THREADS 8

typedef struct prehash {
	uint32_t n;
	const uint8_t *frame[PREHASH_MAX];
	uint64_t total[PREHASH_MAX];
	bool ok[PREHASH_MAX];
	q42_hash fh[PREHASH_MAX], leaf[PREHASH_MAX];
} prehash;

typedef struct prehash_part {
	prehash *ph;
	uint32_t lo, hi;
} prehash_part;

static void *prehash_run(void *arg)
{
	prehash_part *pt = arg;
	prehash *ph = pt->ph;
	q42_err e;
	for (uint32_t i = pt->lo; i < pt->hi; i++) {
		const uint8_t *f = ph->frame[i];
		bool entry = q42_ld16(f + 4) == Q42_VOL_F_ENTRY;
		ph->ok[i] = q42_sha256(f, ph->total[i], ph->fh[i], &e) == Q42_OK &&
			    (!entry || q42_merkle_leaf(f + Q42_VOL_FRAME_HEAD,
						       ph->total[i] - Q42_VOL_FRAME_OVERHEAD,
						       ph->leaf[i], &e) == Q42_OK);
	}
	return NULL;
}

/* The whole frames in p[0, avail), at most PREHASH_MAX, hashed by up to
 * threads threads. */
static void prehash_fill(prehash *ph, const uint8_t *p, uint64_t avail, uint32_t threads)
{
	uint64_t off = 0;
	ph->n = 0;
	while (ph->n < PREHASH_MAX && avail - off >= Q42_VOL_FRAME_HEAD) {
		uint32_t len = q42_ld32(p + off);
		uint64_t total = (uint64_t)Q42_VOL_FRAME_OVERHEAD + len;
		if (len > Q42_VOL_MAX_PAYLOAD || total > avail - off)
			break;
		ph->frame[ph->n] = p + off;
		ph->total[ph->n++] = total;
		off += total;
	}
	pthread_t tid[PREHASH_THREADS];
	prehash_part part[PREHASH_THREADS];
	bool started[PREHASH_THREADS] = {false};
	if (threads > ph->n)
		threads = ph->n ? ph->n : 1;
	for (uint32_t t = 0; t < threads; t++) {
		part[t] = (prehash_part){ph, ph->n * t / threads, ph->n * (t + 1) / threads};
		if (t + 1 < threads)
			started[t] = pthread_create(&tid[t], NULL, prehash_run, &part[t]) == 0;
		if (!started[t])
			prehash_run(&part[t]);
	}
	for (uint32_t t = 0; t + 1 < threads; t++)
		if (started[t])
			pthread_join(tid[t], NULL);
}

static uint32_t prehash_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1u : n > PREHASH_THREADS ? PREHASH_THREADS : (uint32_t)n;
}

static int scan_frames(q42_volscan *s, walfile *wf, q42_walscan_fn fn, void *arg, q42_err *err)
{
	uint32_t threads = wf->size - s->end >= PREHASH_MIN_BYTES ? prehash_threads() : 1;
	prehash *ph = threads > 1 ? malloc(sizeof *ph) : NULL; /* none: one thread */
	int rc = Q42_OK;
	while (rc == Q42_OK && s->end < wf->size) {
		const uint8_t *p;
		uint64_t avail;
		if ((rc = wf_frame(wf, s->end, &p, &avail, err)) != Q42_OK)
			break;
		if (ph)
			prehash_fill(ph, p, avail, threads);
		if (!ph || ph->n == 0) {
			if ((rc = q42_volscan_frame(s, p, avail, err)) == Q42_OK && fn)
				rc = fn(arg, s, p, err);
			continue;
		}
		for (uint32_t i = 0; rc == Q42_OK && i < ph->n; i++) {
			const uint8_t *f = ph->frame[i];
			uint64_t left = avail - (uint64_t)(f - p);
			bool entry = q42_ld16(f + 4) == Q42_VOL_F_ENTRY;
			rc = ph->ok[i] ? q42_volscan_frame_hashed(s, f, left, ph->fh[i],
								  entry ? ph->leaf[i] : NULL, err)
				       : q42_volscan_frame(s, f, left, err);
			if (rc == Q42_OK && fn)
				rc = fn(arg, s, f, err);
		}
	}
	free(ph);
	return rc;
}

int q42_wal_scan_all(q42_volscan *s, int fd, const char *path, uint64_t size, q42_walscan_fn fn,
		     void *arg, q42_err *err)
{
	walfile wf = {.fd = fd, .path = path, .size = size};
	int rc = scan_start(s, &wf, err);
	if (rc == Q42_OK && fn)
		rc = fn(arg, s, NULL, err);
	if (rc == Q42_OK)
		rc = scan_frames(s, &wf, fn, arg, err);
	free(wf.buf);
	return rc;
}

/* ---- The checkpoint ----------------------------------------------------- */

/* Does record i read cleanly and name an entry frame of the volume with
 * the same seq, frame hash, leaf hash and kind? */
static bool rec_matches(q42_walidx *x, walfile *wf, uint64_t i, q42_walidx_rec *r)
{
	q42_err e;
	const uint8_t *p;
	uint64_t avail, end;
	q42_hash h;
	if (q42_walidx_read(x, i, r, &e) != Q42_OK || r->offset < Q42_VOL_HEADER_SIZE ||
	    r->seq == 0 || r->offset >= wf->size)
		return false;
	if (wf_frame(wf, r->offset, &p, &avail, &e) != Q42_OK || avail < Q42_VOL_FRAME_HEAD)
		return false;
	uint32_t len = q42_ld32(p);
	if (len > Q42_VOL_MAX_PAYLOAD || len < Q42_VOL_ENTRY_HEAD + 1 ||
	    q42_add_overflow(r->offset, (uint64_t)Q42_VOL_FRAME_OVERHEAD + len, &end) ||
	    end > wf->size || avail < (uint64_t)Q42_VOL_FRAME_OVERHEAD + len)
		return false;
	if (q42_ld16(p + 4) != Q42_VOL_F_ENTRY || q42_ld64(p + 8) != r->seq ||
	    p[Q42_VOL_FRAME_HEAD] != r->kind)
		return false;
	if (q42_sha256(p, (uint64_t)Q42_VOL_FRAME_OVERHEAD + len, h, &e) != Q42_OK ||
	    memcmp(h, r->frame_hash, 32) != 0)
		return false;
	if (q42_merkle_leaf(p + Q42_VOL_FRAME_HEAD, len, h, &e) != Q42_OK ||
	    memcmp(h, r->leaf, 32) != 0)
		return false;
	return true;
}

static int idx_kind_of(void *arg, uint64_t leaf, uint32_t *kind, q42_err *err)
{
	q42_walopen *o = arg;
	q42_walidx_rec r;
	int rc = q42_walidx_read(&o->idx, leaf, &r, err);
	if (rc == Q42_OK)
		*kind = r.kind;
	else
		o->idx_failed = true;
	return rc;
}

/* The compact range over the first n entries, from the index. */
static int idx_range(q42_walidx *x, uint64_t n, q42_merkle_range *range, q42_err *err)
{
	memset(range, 0, sizeof *range);
	range->n = n;
	range->count = (uint32_t)__builtin_popcountll(n);
	for (uint32_t i = 0; i < range->count; i++) {
		uint32_t level;
		uint64_t lo;
		q42_walidx_rec r;
		q42_merkle_range_part(n, i, &level, &lo);
		int rc = q42_walidx_read(x, lo + (UINT64_C(1) << level) - 1, &r, err);
		if (rc != Q42_OK)
			return rc;
		if (level > r.n_nodes)
			return q42_err_set(err, Q42_EFORMAT, "%s: record %llu lacks level %u",
					   x->path, (unsigned long long)(lo + (UINT64_C(1) << level) - 1),
					   level);
		memcpy(range->h[i], level ? r.nodes[level - 1] : r.leaf, 32);
	}
	return Q42_OK;
}

/* Is frame rv->seq of the volume where the state file says, with its hash? */
static bool rev_matches(walfile *wf, const q42_walrev *rv)
{
	q42_err e;
	const uint8_t *p;
	uint64_t avail;
	q42_hash h;
	if (rv->end > wf->size || wf_frame(wf, rv->offset, &p, &avail, &e) != Q42_OK ||
	    avail < Q42_VOL_FRAME_HEAD)
		return false;
	uint64_t total = (uint64_t)Q42_VOL_FRAME_OVERHEAD + q42_ld32(p);
	if (q42_ld32(p) > Q42_VOL_MAX_PAYLOAD || rv->end - rv->offset != total || avail < total ||
	    q42_ld64(p + 8) != rv->seq)
		return false;
	return q42_sha256(p, total, h, &e) == Q42_OK && !memcmp(h, rv->hash, 32);
}

/* Continue from the review state file when it matches the frames and the
 * index's trusted records cover its entries; Q42_ENOMEM only. */
static int resume_review(q42_walopen *o, walfile *wf, uint64_t trusted, bool *used, q42_err *err)
{
	q42_walrev rv;
	uint32_t status;
	q42_merkle_range range;
	q42_walidx_rec r;
	q42_err e;
	*used = false;
	int rc = q42_walrev_load(wf->path, o->scan.header_hash, o->scan.config.n_keys, &rv, &status,
				 err);
	if (rc != Q42_OK || status != Q42_REV_FOUND)
		return rc;
	bool ok = rv.n_leaves <= trusted && rev_matches(wf, &rv);
	if (ok && rv.n_leaves > 0)
		ok = idx_range(&o->idx, rv.n_leaves, &range, &e) == Q42_OK &&
		     q42_walidx_read(&o->idx, rv.n_leaves - 1, &r, &e) == Q42_OK;
	else
		memset(&range, 0, sizeof range);
	if (ok) {
		q42_volscan_resume(&o->scan, rv.seq, rv.n_leaves, rv.end, rv.hash, &range);
		q42_volscan_resume_review(&o->scan, rv.pending, rv.n_pending);
		rv.pending = NULL;
		o->scan.kind_of = idx_kind_of;
		o->scan.kind_arg = o;
		o->binding = rv.n_leaves ? r.binding : Q42_VOL_NONE;
		o->rev_seq = rv.seq;
		*used = true;
	}
	q42_walrev_free(&rv);
	return Q42_OK;
}

typedef struct open_ctx {
	q42_walopen *o;
	q42_walscan_fn fn;
	void *arg;
} open_ctx;

/* Each frame after the checkpoint: extend the index, then the caller's fn. */
static int open_frame(void *arg, const q42_volscan *s, const uint8_t *frame, q42_err *err)
{
	open_ctx *c = arg;
	q42_walopen *o = c->o;
	if (frame && s->last.type == Q42_VOL_F_ENTRY) {
		uint64_t leaf = s->last.leaf;
		if (s->last_kind == Q42_VOL_K_BINDING)
			o->binding = leaf;
		if (o->idx.fd >= 0 && o->idx.writable && leaf == o->idx.n) {
			q42_walidx_rec r;
			q42_err e;
			r.offset = s->last.offset;
			r.seq = s->n_frames - 1;
			memcpy(r.frame_hash, s->last.hash, 32);
			memcpy(r.leaf, s->last_leaf, 32);
			r.kind = s->last_kind;
			r.binding = o->binding;
			r.n_nodes = s->last_n_nodes;
			memcpy(r.nodes, s->last_nodes, 32u * s->last_n_nodes);
			/* The index is derived data: when it cannot be written, the
			 * volume is still appended to, and the next writer repairs it. */
			if (q42_walidx_append(&o->idx, &r, 1, &e) != Q42_OK)
				q42_walidx_close(&o->idx);
		}
	}
	return c->fn ? c->fn(c->arg, s, frame, err) : Q42_OK;
}

int q42_wal_scan_open(q42_walopen *o, int fd, const char *path, int mode, q42_walscan_fn fn,
		      void *arg, q42_err *err)
{
	struct stat st;
	walfile wf = {.fd = fd, .path = path};
	open_ctx c = {o, fn, arg};
	q42_walidx_rec r;
	q42_err e;
	bool write = mode != Q42_WALSCAN_READ;
	int rc;
	memset(o, 0, sizeof *o);
	o->idx.fd = -1;
	o->binding = Q42_VOL_NONE;
	o->rev_seq = Q42_VOL_NONE;
	if (fstat(fd, &st) != 0)
		return q42_err_set(err, Q42_EIO, "%s: stat: %s", path, strerror(errno));
	wf.size = o->size = (uint64_t)st.st_size;
	if ((rc = scan_start(&o->scan, &wf, err)) != Q42_OK)
		goto out;
	o->header_ok = true;
	if ((rc = q42_walidx_open(&o->idx, path, write, o->scan.header_hash, err)) != Q42_OK)
		goto out;
	/* The checkpoint: the last record that matches the frames. */
	uint64_t n = o->idx.fd >= 0 && mode != Q42_WALSCAN_REBUILD ? o->idx.n : 0, trusted = 0;
	if (n > 0 && rec_matches(&o->idx, &wf, n - 1, &r)) {
		trusted = n;
	} else if (n > 1) {
		uint64_t lo = 0, hi = n - 1;
		while (lo < hi) {
			uint64_t mid = lo + (hi - lo) / 2;
			if (rec_matches(&o->idx, &wf, mid, &r))
				lo = mid + 1;
			else
				hi = mid;
		}
		trusted = lo;
	}
	q42_merkle_range range;
	if (trusted > 0 && (q42_walidx_read(&o->idx, trusted - 1, &r, &e) != Q42_OK ||
			    !rec_matches(&o->idx, &wf, trusted - 1, &r) ||
			    idx_range(&o->idx, trusted, &range, &e) != Q42_OK))
		trusted = 0;
	if (o->idx.fd >= 0 && write && o->idx.n != trusted &&
	    q42_walidx_truncate(&o->idx, trusted, &e) != Q42_OK)
		q42_walidx_close(&o->idx);
	o->idx.n = trusted;
	o->trusted = trusted;
	bool rev_used = false;
	if (o->scan.config.n_keys > 0 && mode != Q42_WALSCAN_REBUILD &&
	    (rc = resume_review(o, &wf, trusted, &rev_used, err)) != Q42_OK)
		goto out;
	if (!rev_used && trusted > 0) {
		const uint8_t *p;
		uint64_t avail;
		if ((rc = wf_frame(&wf, r.offset, &p, &avail, err)) != Q42_OK)
			goto out;
		q42_volscan_resume(&o->scan, r.seq, trusted,
				   r.offset + Q42_VOL_FRAME_OVERHEAD + q42_ld32(p), r.frame_hash, &range);
		o->scan.kind_of = idx_kind_of;
		o->scan.kind_arg = o;
		o->binding = r.binding;
	} else if (!rev_used && fn) {
		rc = fn(arg, &o->scan, NULL, err);
		if (rc != Q42_OK)
			goto out;
	}
	rc = scan_frames(&o->scan, &wf, open_frame, &c, err);
	if (rc == Q42_EUNSUPPORTED && o->scan.need_full) {
		/* A vote or a reviewed entry after the checkpoint (its rules need
		 * every pending frame), or an index record that failed when a
		 * reference was looked up: read the volume from frame 0. */
		q42_volscan_free(&o->scan);
		o->rescanned = true;
		o->binding = Q42_VOL_NONE;
		o->rev_seq = Q42_VOL_NONE;
		/* An index record failed on the way: a writer rewrites it all. */
		if (o->idx_failed && write && o->idx.fd >= 0 &&
		    q42_walidx_truncate(&o->idx, 0, &e) != Q42_OK)
			q42_walidx_close(&o->idx);
		if ((rc = scan_start(&o->scan, &wf, err)) == Q42_OK && fn)
			rc = fn(arg, &o->scan, NULL, err);
		if (rc == Q42_OK)
			rc = scan_frames(&o->scan, &wf, open_frame, &c, err);
	}
	if (rc == Q42_EFORMAT)
		o->tail_bad = true;
out:
	free(wf.buf);
	return rc;
}

void q42_wal_scan_close(q42_walopen *o)
{
	q42_volscan_free(&o->scan);
	q42_walidx_close(&o->idx);
}
