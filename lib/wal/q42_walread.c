/* q42_walread.c -- the lock-free readers of a Q42 volume: the indexed
 * reader (log, show, head, prove, consistency) and the streaming verify.
 *
 * The indexed reader opens at the index's checkpoint (q42_wal_scan_open,
 * read-only: it never writes the index) and serves entries, roots and
 * proofs from O(log n) index records plus the leaves of the frames after
 * the checkpoint, which it validated and keeps. Every entry it returns is
 * read from its frame and its leaf hash compared with the index's; a
 * record that fails that or its CRC makes it read the frames from 0
 * instead (fell_back). verify reads every frame through one buffer and
 * checks the index record by record against them. Nothing here prints.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/q42_ckd.h"
#include "common/q42_crc32c.h"
#include "common/q42_le.h"
#include "wal/q42_wal.h"
#include "wal/q42_wal_impl.h"
#include "wal/q42_walidx.h"
#include "wal/q42_walrev.h"

bool q42_wal_writer_active(const char *path)
{
	bool held = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK)
			held = true;
		close(fd);
	}
	return held;
}

/* Whether a torn tail that a scan of the first size bytes of fd found is a
 * writer's batch rather than damage: the writer holds the lock now, or it
 * let go of it since the scan, and then the file has grown past what the
 * scan saw (a writer appends; a tail torn by a crash stays as it is). The
 * lock is asked first: a writer that lets go of it after that has grown
 * the file by the time fstat looks. Asking the lock alone took a batch
 * that ended between the scan and the question for damage. */
static bool writer_was_active(const char *path, int fd, uint64_t size)
{
	struct stat st;
	if (q42_wal_writer_active(path))
		return true;
	return fstat(fd, &st) == 0 && (uint64_t)st.st_size > size;
}

/* Keep the leaves the index does not serve. */
static int reader_tail(void *arg, const q42_volscan *s, const uint8_t *frame, q42_err *err)
{
	q42_wal_reader *r = arg;
	if (!frame) {
		r->n_tail = 0;
		return Q42_OK;
	}
	if (s->last.type != Q42_VOL_F_ENTRY || s->last.leaf < r->st->trusted)
		return Q42_OK;
	if (r->n_tail == r->cap_tail) {
		uint64_t cap = r->cap_tail ? r->cap_tail * 2 : 64;
		q42_hash *l = realloc(r->tail_leaf, (size_t)cap * sizeof *l);
		if (l)
			r->tail_leaf = l;
		uint64_t *o = realloc(r->tail_off, (size_t)cap * sizeof *o);
		if (o)
			r->tail_off = o;
		uint64_t *q = realloc(r->tail_seq, (size_t)cap * sizeof *q);
		if (q)
			r->tail_seq = q;
		if (!l || !o || !q)
			return q42_err_set(err, Q42_ENOMEM, "%s: out of memory", r->path);
		r->cap_tail = cap;
	}
	memcpy(r->tail_leaf[r->n_tail], s->last_leaf, Q42_MERKLE_HASH_LEN);
	r->tail_off[r->n_tail] = s->last.offset;
	r->tail_seq[r->n_tail] = s->n_frames - 1;
	r->n_tail++;
	return Q42_OK;
}

int q42_wal_reader_open(q42_wal_reader *r, const char *path, q42_err *err)
{
	int rc;
	memset(r, 0, sizeof *r);
	r->fd = -1;
	r->path = strdup(path);
	r->st = calloc(1, sizeof *r->st);
	if (!r->path || !r->st) {
		rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
		goto fail;
	}
	r->st->idx.fd = -1;
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		rc = q42_err_set(err, Q42_EIO, "%s: cannot open: %s", path, strerror(errno));
		goto fail;
	}
	rc = q42_wal_scan_open(r->st, r->fd, path, Q42_WALSCAN_READ, reader_tail, r, err);
	if (rc == Q42_EFORMAT && r->st->header_ok && r->st->tail_bad &&
	    writer_was_active(path, r->fd, r->st->size)) {
		/* A writer mid-batch looks exactly like a torn tail; it can only
		 * be told apart by its lock, or by what it has written since. */
		r->in_progress = true;
		r->ignored = r->st->size - r->st->scan.end;
		rc = Q42_OK;
	}
	if (rc != Q42_OK)
		goto fail;
	r->n_leaves = r->st->scan.n_leaves;
	r->n_frames = r->st->scan.n_frames;
	r->valid_end = r->st->scan.end;
	r->n_idx = r->st->trusted;
	q42_volscan_free(&r->st->scan);
	return Q42_OK;
fail:
	q42_wal_reader_close(r);
	return rc;
}

void q42_wal_reader_close(q42_wal_reader *r)
{
	if (r->st) {
		q42_wal_scan_close(r->st);
		free(r->st);
	}
	if (r->fd >= 0)
		close(r->fd);
	free(r->path);
	free(r->tail_leaf);
	free(r->tail_off);
	free(r->tail_seq);
	free(r->buf);
	memset(r, 0, sizeof *r);
	r->fd = -1;
}

const uint8_t *q42_wal_reader_id(const q42_wal_reader *r)
{
	return r->st->scan.id;
}

int q42_wal_review_read(const char *path, q42_wal_review *rv, q42_err *err)
{
	q42_walopen st;
	int rc;
	memset(rv, 0, sizeof *rv);
	memset(&st, 0, sizeof st);
	st.idx.fd = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return q42_err_set(err, Q42_EIO, "%s: cannot open: %s", path, strerror(errno));
	rc = q42_wal_scan_open(&st, fd, path, Q42_WALSCAN_READ, NULL, NULL, err);
	if (rc == Q42_EFORMAT && st.header_ok && st.tail_bad && writer_was_active(path, fd, st.size)) {
		rv->in_progress = true;
		rv->ignored = st.size - st.scan.end;
		rc = Q42_OK;
	}
	if (rc != Q42_OK)
		goto out;
	if (st.scan.config.n_keys > 0 && st.scan.partial && !st.scan.review_known) {
		/* No usable VOL.rev: the votes may be anywhere before the checkpoint. */
		q42_volscan all;
		rc = q42_wal_scan_all(&all, fd, path, st.scan.end, NULL, NULL, err);
		if (rc != Q42_OK) {
			q42_volscan_free(&all);
			goto out;
		}
		q42_volscan_free(&st.scan);
		st.scan = all;
	}
	rv->quorum = st.scan.config.quorum;
	rv->from_state = st.rev_seq != Q42_VOL_NONE;
	rv->pending = st.scan.pending;
	rv->n_pending = st.scan.n_pending;
	st.scan.pending = NULL;
out:
	q42_wal_scan_close(&st);
	close(fd);
	return rc;
}

void q42_wal_review_free(q42_wal_review *rv)
{
	free(rv->pending);
	memset(rv, 0, sizeof *rv);
}

/* Read every frame from 0 (up to what open validated) and serve every
 * leaf from memory: the index failed a check. */
static int reader_fallback(q42_wal_reader *r, q42_err *err)
{
	q42_volscan s;
	r->fell_back = true;
	r->st->trusted = 0;
	r->n_idx = 0;
	r->n_tail = 0;
	int rc = q42_wal_scan_all(&s, r->fd, r->path, r->valid_end, reader_tail, r, err);
	q42_volscan_free(&s);
	if (rc == Q42_OK && r->n_tail != r->n_leaves)
		rc = q42_err_set(err, Q42_EFORMAT, "%s: %llu entries on a second reading, %llu on the first",
				 r->path, (unsigned long long)r->n_tail,
				 (unsigned long long)r->n_leaves);
	return rc;
}

static int idx_read(q42_wal_reader *r, uint64_t i, q42_walidx_rec *rec, q42_err *err)
{
	int rc = q42_walidx_read(&r->st->idx, i, rec, err);
	if (rc != Q42_OK)
		r->idx_failed = true;
	return rc;
}

/* Entry i is neither indexed nor held: the frames failed a second
 * reading after the index failed (reader_fallback said so once). */
static int not_held(const q42_wal_reader *r, uint64_t i, q42_err *err)
{
	return q42_err_set(err, Q42_EFORMAT, "%s: entry %llu: the index failed and the frames "
			   "failed a second reading", r->path, (unsigned long long)i);
}

static int reader_node(void *arg, uint64_t lo, uint32_t level, q42_hash out, q42_err *err)
{
	q42_wal_reader *r = arg;
	uint64_t w = UINT64_C(1) << level, end = lo + w;
	int rc;
	if (end <= r->n_idx) {
		q42_walidx_rec rec;
		if ((rc = idx_read(r, end - 1, &rec, err)) != Q42_OK)
			return rc;
		if (level > rec.n_nodes) {
			r->idx_failed = true;
			return q42_err_set(err, Q42_EFORMAT, "%s: record %llu lacks level %u",
					   r->st->idx.path, (unsigned long long)(end - 1), level);
		}
		memcpy(out, level ? rec.nodes[level - 1] : rec.leaf, Q42_MERKLE_HASH_LEN);
		return Q42_OK;
	}
	if (end > r->n_idx + r->n_tail)
		return not_held(r, end - 1, err);
	if (lo >= r->n_idx)
		return q42_merkle_root(r->tail_leaf + (lo - r->n_idx), w, out, err);
	q42_hash a, b;
	if ((rc = reader_node(r, lo, level - 1, a, err)) != Q42_OK ||
	    (rc = reader_node(r, lo + w / 2, level - 1, b, err)) != Q42_OK)
		return rc;
	return q42_merkle_node(a, b, out, err);
}

#define WITH_FALLBACK(call)                                                              \
	do {                                                                             \
		r->idx_failed = false;                                                   \
		rc = (call);                                                             \
		if (rc != Q42_OK && r->idx_failed && !r->fell_back) {                    \
			if ((rc = reader_fallback(r, err)) == Q42_OK)                    \
				rc = (call);                                             \
		}                                                                        \
	} while (0)

static int entry_once(q42_wal_reader *r, uint64_t i, q42_vol_entry *e, uint64_t *seq,
		      q42_hash leaf, q42_err *err)
{
	uint64_t off, want_seq;
	q42_hash want, h;
	uint8_t head[Q42_VOL_FRAME_HEAD];
	int rc;
	if (i < r->n_idx) {
		q42_walidx_rec rec;
		if ((rc = idx_read(r, i, &rec, err)) != Q42_OK)
			return rc;
		off = rec.offset;
		want_seq = rec.seq;
		memcpy(want, rec.leaf, Q42_MERKLE_HASH_LEN);
	} else if (i - r->n_idx >= r->n_tail) {
		return not_held(r, i, err);
	} else {
		off = r->tail_off[i - r->n_idx];
		want_seq = r->tail_seq[i - r->n_idx];
		memcpy(want, r->tail_leaf[i - r->n_idx], Q42_MERKLE_HASH_LEN);
	}
	uint64_t end;
	if (off < Q42_VOL_HEADER_SIZE || off >= r->valid_end ||
	    (rc = q42_wal_pread(r->fd, r->path, head, sizeof head, off, err)) != Q42_OK) {
		r->idx_failed = i < r->n_idx;
		return q42_err_set(err, Q42_EFORMAT, "%s: entry %llu: offset %llu is outside the volume",
				   r->path, (unsigned long long)i, (unsigned long long)off);
	}
	uint32_t len = q42_ld32(head);
	if (len > Q42_VOL_MAX_PAYLOAD || len < Q42_VOL_ENTRY_HEAD + 1 ||
	    q42_add_overflow(off, (uint64_t)Q42_VOL_FRAME_OVERHEAD + len, &end) ||
	    end > r->valid_end || q42_ld16(head + 4) != Q42_VOL_F_ENTRY ||
	    q42_ld64(head + 8) != want_seq) {
		r->idx_failed = i < r->n_idx;
		return q42_err_set(err, Q42_EFORMAT,
				   "%s: entry %llu: frame at offset %llu: length %u, type %u, seq %llu, "
				   "expected an entry frame with seq %llu", r->path,
				   (unsigned long long)i, (unsigned long long)off, len,
				   q42_ld16(head + 4), (unsigned long long)q42_ld64(head + 8),
				   (unsigned long long)want_seq);
	}
	if (len > r->cap_buf) {
		uint8_t *b = realloc(r->buf, len);
		if (!b)
			return q42_err_set(err, Q42_ENOMEM, "out of memory");
		r->buf = b;
		r->cap_buf = len;
	}
	if ((rc = q42_wal_pread(r->fd, r->path, r->buf, len, off + Q42_VOL_FRAME_HEAD, err)) != Q42_OK ||
	    (rc = q42_merkle_leaf(r->buf, len, h, err)) != Q42_OK)
		return rc;
	if (memcmp(h, want, Q42_MERKLE_HASH_LEN) != 0) {
		r->idx_failed = i < r->n_idx;
		return q42_err_set(err, Q42_EFORMAT, "%s: entry %llu: the frame at offset %llu does "
				   "not hash to the indexed leaf", r->path, (unsigned long long)i,
				   (unsigned long long)off);
	}
	r->last_offset = off;
	r->last_end = end;
	e->kind = r->buf[0];
	e->ref = q42_ld64(r->buf + 8);
	e->review = q42_ld64(r->buf + 16);
	e->body = r->buf + Q42_VOL_ENTRY_HEAD;
	e->body_len = len - Q42_VOL_ENTRY_HEAD;
	*seq = want_seq;
	memcpy(leaf, h, Q42_MERKLE_HASH_LEN);
	return Q42_OK;
}

int q42_wal_reader_entry(q42_wal_reader *r, uint64_t i, q42_vol_entry *e, uint64_t *seq,
			 q42_hash leaf, q42_err *err)
{
	int rc;
	if (i >= r->n_leaves)
		return q42_err_set(err, Q42_ENOTFOUND, "entry %llu does not exist (the volume has %llu entries)",
				   (unsigned long long)i, (unsigned long long)r->n_leaves);
	WITH_FALLBACK(entry_once(r, i, e, seq, leaf, err));
	return rc;
}

/* A tree of n entries must be one the reader holds. */
static int check_size(const q42_wal_reader *r, uint64_t n, q42_err *err)
{
	if (n > r->n_leaves)
		return q42_err_set(err, Q42_EARG, "tree size %llu exceeds the volume's %llu entries",
				   (unsigned long long)n, (unsigned long long)r->n_leaves);
	return Q42_OK;
}

int q42_wal_reader_root(q42_wal_reader *r, uint64_t n, q42_hash out, q42_err *err)
{
	q42_merkle_src src = {reader_node, r};
	int rc = check_size(r, n, err);
	if (rc == Q42_OK)
		WITH_FALLBACK(q42_merkle_src_root(&src, 0, n, out, err));
	return rc;
}

int q42_wal_reader_path(q42_wal_reader *r, uint64_t n, uint64_t m,
			q42_hash path[Q42_MERKLE_MAX_PATH], uint32_t *len, q42_err *err)
{
	q42_merkle_src src = {reader_node, r};
	int rc = check_size(r, n, err);
	if (rc == Q42_OK)
		WITH_FALLBACK(q42_merkle_src_path(&src, n, m, path, len, err));
	return rc;
}

int q42_wal_reader_consistency(q42_wal_reader *r, uint64_t n, uint64_t m,
			       q42_hash proof[Q42_MERKLE_MAX_CONSISTENCY], uint32_t *len,
			       q42_err *err)
{
	q42_merkle_src src = {reader_node, r};
	int rc = check_size(r, n, err);
	if (rc == Q42_OK)
		WITH_FALLBACK(q42_merkle_src_consistency(&src, n, m, proof, len, err));
	return rc;
}

/* ---- verify ------------------------------------------------------------- */

#define VERIFY_PROGRESS_BYTES (UINT64_C(16) << 20)

typedef struct verify_ctx {
	const char *path;
	q42_walidx idx;
	bool idx_open, idx_done;
	uint64_t binding, at;
	uint64_t size, reported;
	q42_wal_progress_fn progress;
	void *arg;
	q42_wal_verify_report *rep;
	q42_walrev rev;
	uint32_t rev_status;   /* enum q42_walrev_status */
	bool rev_checked;
} verify_ctx;

/* VOL.rev against the state the frames give after the frame it names. */
static void verify_review(verify_ctx *c, const q42_volscan *s)
{
	const q42_walrev *rv = &c->rev;
	const char *what = NULL;
	c->rev_checked = true;
	if (rv->offset != s->last.offset || rv->end != s->end || memcmp(rv->hash, s->prev, 32) != 0)
		what = "its frame (offset, end or hash)";
	else if (rv->n_leaves != s->n_leaves)
		what = "the entry count";
	else if (rv->n_pending != s->n_pending)
		what = "the number of pending frames";
	for (uint64_t i = 0; !what && i < rv->n_pending; i++) {
		const q42_vol_pending *a = &rv->pending[i], *b = &s->pending[i];
		if (a->seq != b->seq || a->state != b->state || a->approvals != b->approvals ||
		    a->rejections != b->rejections || a->voted != b->voted || a->leaf != b->leaf ||
		    a->offset != b->offset || a->length != b->length ||
		    memcmp(a->hash, b->hash, 32) != 0 || memcmp(a->digest, b->digest, 32) != 0) {
			snprintf(c->rep->rev_msg, sizeof c->rep->rev_msg,
				 "%s.rev: pending frame %llu differs from the frames", c->path,
				 (unsigned long long)b->seq);
			c->rep->rev_bad = true;
			return;
		}
	}
	if (what) {
		snprintf(c->rep->rev_msg, sizeof c->rep->rev_msg,
			 "%s.rev: state after frame %llu: %s differs from the frames", c->path,
			 (unsigned long long)rv->seq, what);
		c->rep->rev_bad = true;
	}
}

static void idx_problem(verify_ctx *c, bool bad, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void idx_problem(verify_ctx *c, bool bad, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->rep->idx_msg, sizeof c->rep->idx_msg, fmt, ap);
	va_end(ap);
	c->rep->idx_bad = bad;
	c->idx_done = true;
}

/* The index record of the entry s->last, against what the frame gives. */
static void verify_record(verify_ctx *c, const q42_volscan *s)
{
	uint64_t leaf = s->last.leaf;
	q42_walidx_rec rec;
	q42_err e;
	if (s->last_kind == Q42_VOL_K_BINDING)
		c->binding = leaf;
	if (c->idx_done)
		return;
	if (leaf >= c->idx.n) {
		c->idx_done = true;
		return;
	}
	if (q42_walidx_read(&c->idx, leaf, &rec, &e) != Q42_OK) {
		/* A crash leaves a torn end: records that fail, and nothing valid
		 * after them. A valid record after a failing one is damage. */
		bool later = false;
		q42_err e2;
		for (uint64_t j = leaf + 1; j < c->idx.n && !later; j++)
			later = q42_walidx_read(&c->idx, j, &rec, &e2) == Q42_OK;
		idx_problem(c, later, "%s%s", e.msg, later ? ", and valid records follow it" :
			    " (a torn end: the next writer cuts it)");
		return;
	}
	const char *what = NULL;
	if (rec.offset != s->last.offset)
		what = "frame offset";
	else if (rec.seq != s->n_frames - 1)
		what = "frame seq";
	else if (memcmp(rec.frame_hash, s->last.hash, 32) != 0)
		what = "frame hash";
	else if (memcmp(rec.leaf, s->last_leaf, 32) != 0)
		what = "leaf hash";
	else if (rec.kind != s->last_kind)
		what = "kind";
	else if (rec.binding != c->binding)
		what = "latest binding";
	else if (rec.n_nodes != s->last_n_nodes ||
		 memcmp(rec.nodes, s->last_nodes, 32u * rec.n_nodes) != 0)
		what = "Merkle nodes";
	if (what) {
		idx_problem(c, true, "%s: record %llu at offset %llu: %s differs from the volume's "
			    "entry %llu (frame %llu at offset %llu)", c->idx.path,
			    (unsigned long long)leaf, (unsigned long long)q42_walidx_rec_off(leaf), what,
			    (unsigned long long)leaf, (unsigned long long)(s->n_frames - 1),
			    (unsigned long long)s->last.offset);
		return;
	}
	c->rep->idx_records = leaf + 1;
}

static int verify_frame(void *arg, const q42_volscan *s, const uint8_t *frame, q42_err *err)
{
	verify_ctx *c = arg;
	if (c->at == s->n_leaves && !c->rep->have_at) {
		/* the first time the scan holds exactly `at` leaves */
		int rc = q42_merkle_range_root(&s->range, c->rep->root_at, err);
		if (rc != Q42_OK)
			return rc;
		c->rep->have_at = true;
	}
	if (!frame) {
		if (!c->idx_open) {
			int rc = q42_walidx_open(&c->idx, c->path, false, s->header_hash, err);
			if (rc != Q42_OK)
				return rc;
			c->idx_open = true;
			q42_walidx_read_ahead(&c->idx, UINT64_C(1) << 20);
			rc = q42_walrev_load(c->path, s->header_hash, s->config.n_keys, &c->rev,
					     &c->rev_status, err);
			if (rc != Q42_OK)
				return rc;
		}
		return Q42_OK;
	}
	if (s->last.type == Q42_VOL_F_ENTRY)
		verify_record(c, s);
	if (c->rev_status == Q42_REV_FOUND && !c->rev_checked && s->n_frames - 1 == c->rev.seq)
		verify_review(c, s);
	if (c->progress && s->end - c->reported >= VERIFY_PROGRESS_BYTES) {
		c->reported = s->end;
		c->progress(c->arg, s->end, c->size);
	}
	return Q42_OK;
}

int q42_wal_verify(const char *path, uint64_t at, q42_wal_progress_fn progress, void *arg,
		   q42_wal_verify_report *rep, q42_err *err)
{
	verify_ctx c = {.path = path, .binding = Q42_VOL_NONE, .at = at, .progress = progress,
			.arg = arg, .rep = rep};
	q42_volscan s;
	struct stat st;
	int rc;
	memset(rep, 0, sizeof *rep);
	c.idx.fd = -1;
	memset(&s, 0, sizeof s);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return q42_err_set(err, Q42_EIO, "%s: cannot open: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0) {
		rc = q42_err_set(err, Q42_EIO, "%s: stat: %s", path, strerror(errno));
		goto out;
	}
	c.size = (uint64_t)st.st_size;
	rc = q42_wal_scan_all(&s, fd, path, c.size, verify_frame, &c, err);
	if (rc == Q42_EFORMAT && s.n_frames > 0 && writer_was_active(path, fd, c.size)) {
		rep->in_progress = true;
		rep->ignored = c.size - s.end;
		rc = Q42_OK;
	}
	if (rc != Q42_OK)
		goto out;
	if (progress)
		progress(arg, s.end, c.size);
	rep->n_frames = s.n_frames;
	rep->n_leaves = s.n_leaves;
	rep->valid_end = s.end;
	memcpy(rep->id, s.id, Q42_VOL_ID_LEN);
	rep->quorum = s.config.quorum;
	rep->pending = s.pending;
	rep->n_pending = s.n_pending;
	s.pending = NULL;
	if ((rc = q42_merkle_range_root(&s.range, rep->root, err)) != Q42_OK)
		goto out;
	if (c.rev_status == Q42_REV_DAMAGED)
		snprintf(rep->rev_msg, sizeof rep->rev_msg,
			 "%s.rev: damaged or of another volume (ignored; the next writer rewrites it)",
			 path);
	else if (c.rev_status == Q42_REV_FOUND && !c.rev_checked && !rep->in_progress)
		snprintf(rep->rev_msg, sizeof rep->rev_msg,
			 "%s.rev: names frame %llu, the volume has %llu frames (stale after a "
			 "recovery; the next writer rewrites it)", path,
			 (unsigned long long)c.rev.seq, (unsigned long long)s.n_frames);
	if (!c.idx_done && c.idx.fd >= 0 && c.idx.n > s.n_leaves && !rep->in_progress)
		snprintf(rep->idx_msg, sizeof rep->idx_msg,
			 "%s: %llu records for %llu entries (stale after a recovery; the next "
			 "writer cuts it)", c.idx.path, (unsigned long long)c.idx.n,
			 (unsigned long long)s.n_leaves);
out:
	q42_volscan_free(&s);
	q42_walidx_close(&c.idx);
	q42_walrev_free(&c.rev);
	close(fd);
	return rc;
}

void q42_wal_verify_free(q42_wal_verify_report *rep)
{
	free(rep->pending);
	rep->pending = NULL;
	rep->n_pending = 0;
}
