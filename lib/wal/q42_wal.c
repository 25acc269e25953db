/* q42_wal.c -- the writer side of a Q42 volume: create, lock, stage,
 * group-commit, keep the index, recover.
 *
 * The writer never appends after a frame it has not validated (the frames
 * after the index's checkpoint are read at open; the checkpoint itself is
 * a frame read and hashed), holds O(log n) hashes and the batch, and
 * never leaves a half-written batch behind when it can help it (a failed
 * write is cut back). Crash safety does not depend on that: the
 * reader's CRC and link checks find a torn tail, and q42_wal_recover cuts
 * only a tail, never a frame that intact frames follow. See q42-volume(5).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "common/q42_ckd.h"
#include "common/q42_crc32c.h"
#include "common/q42_le.h"
#include "formats/q42_digest.h"
#include "wal/q42_wal.h"
#include "wal/q42_wal_impl.h"
#include "wal/q42_walidx.h"
#include "wal/q42_walrev.h"

/* Append one frame (head, payload pieces, CRC) to buf; hash it. */
static int frame_build(q42_buf *buf, uint16_t type, uint64_t seq, const q42_hash prev,
		       const void *a, uint64_t an, const void *b, uint64_t bn, q42_hash hash,
		       q42_err *err)
{
	uint64_t len = an + bn;
	size_t start = buf->len;
	if (len > Q42_VOL_MAX_PAYLOAD)
		return q42_err_set(err, Q42_EARG, "payload of %llu bytes exceeds the %u-byte cap",
				   (unsigned long long)len, Q42_VOL_MAX_PAYLOAD);
	q42_buf_u32le(buf, (uint32_t)len);
	q42_buf_u16le(buf, type);
	q42_buf_u16le(buf, 0);
	q42_buf_u64le(buf, seq);
	q42_buf_append(buf, prev, Q42_MERKLE_HASH_LEN);
	if (an)
		q42_buf_append(buf, a, (size_t)an);
	if (bn)
		q42_buf_append(buf, b, (size_t)bn);
	if (buf->failed) {
		buf->failed = false;
		buf->len = start;
		return q42_err_set(err, Q42_ENOMEM, "out of memory building frame %llu",
				   (unsigned long long)seq);
	}
	q42_buf_u32le(buf, q42_crc32c(0, buf->data + start, buf->len - start));
	if (buf->failed) {
		buf->failed = false;
		buf->len = start;
		return q42_err_set(err, Q42_ENOMEM, "out of memory building frame %llu",
				   (unsigned long long)seq);
	}
	return q42_sha256(buf->data + start, buf->len - start, hash, err);
}

static int fsync_dir(const char *path, q42_err *err)
{
	char *dup = strdup(path), *slash;
	int rc = Q42_OK, fd;
	if (!dup)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	slash = strrchr(dup, '/');
	if (slash == dup)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	fd = open(slash ? dup : ".", O_RDONLY | O_DIRECTORY);
	if (fd < 0 || fsync(fd) != 0)
		rc = q42_err_set(err, Q42_EIO, "%s: cannot fsync its directory: %s", path,
				 strerror(errno));
	if (fd >= 0)
		close(fd);
	free(dup);
	return rc;
}

int q42_wal_new_open(q42_wal_newfile *f, const char *path, q42_err *err)
{
	size_t tl = strlen(path) + 16;
	f->path = path;
	f->fd = -1;
	f->tmp = malloc(tl);
	if (!f->tmp)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	snprintf(f->tmp, tl, "%s.tmp.XXXXXX", path);
	f->fd = mkstemp(f->tmp);
	if (f->fd < 0) {
		int rc = q42_err_set(err, Q42_EIO, "%s: cannot create a temporary file: %s", path,
				     strerror(errno));
		free(f->tmp);
		f->tmp = NULL;
		return rc;
	}
	if (fchmod(f->fd, 0644) != 0) {
		int rc = q42_err_set(err, Q42_EIO, "%s: chmod: %s", f->tmp, strerror(errno));
		q42_wal_new_abort(f);
		return rc;
	}
	return Q42_OK;
}

int q42_wal_new_write(q42_wal_newfile *f, const void *data, uint64_t n, q42_err *err)
{
	const uint8_t *p = data;
	uint64_t done = 0;
	while (done < n) {
		ssize_t k = write(f->fd, p + done, (size_t)(n - done));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return q42_err_set(err, Q42_EIO, "%s: write: %s", f->tmp,
					   k < 0 ? strerror(errno) : "wrote nothing");
		done += (uint64_t)k;
	}
	return Q42_OK;
}

int q42_wal_new_commit(q42_wal_newfile *f, q42_err *err)
{
	int rc = Q42_OK;
	if (fsync(f->fd) != 0)
		rc = q42_err_set(err, Q42_EIO, "%s: fsync: %s", f->tmp, strerror(errno));
	/* Linked, not renamed, into place: link fails with EEXIST, so an
	 * existing volume is never replaced, and the new one appears whole. */
	if (rc == Q42_OK && link(f->tmp, f->path) != 0)
		rc = q42_err_set(err, Q42_EIO, "%s: cannot create: %s", f->path, strerror(errno));
	if (rc == Q42_OK)
		rc = fsync_dir(f->path, err);
	q42_wal_new_abort(f);
	return rc;
}

void q42_wal_new_abort(q42_wal_newfile *f)
{
	if (f->fd >= 0) {
		close(f->fd);
		unlink(f->tmp);
	}
	free(f->tmp);
	f->tmp = NULL;
	f->fd = -1;
}

int q42_wal_write_new(const char *path, const void *data, uint64_t n, q42_err *err)
{
	q42_wal_newfile f;
	int rc = q42_wal_new_open(&f, path, err);
	if (rc != Q42_OK)
		return rc;
	if ((rc = q42_wal_new_write(&f, data, n, err)) != Q42_OK) {
		q42_wal_new_abort(&f);
		return rc;
	}
	return q42_wal_new_commit(&f, err);
}

int q42_wal_create(const char *path, const q42_vol_config *cfg, q42_err *err)
{
	q42_buf b;
	q42_hash prev, hash;
	int rc;
	uint8_t cfgp[8 + Q42_VOL_MAX_KEYS * Q42_VOL_ED25519_KEY_LEN];
	q42_buf_init(&b);
	if (cfg->n_keys > Q42_VOL_MAX_KEYS || (cfg->n_keys == 0 && cfg->quorum != 0) ||
	    (cfg->n_keys > 0 && (cfg->quorum < 1 || cfg->quorum > cfg->n_keys))) {
		rc = q42_err_set(err, Q42_EARG, "quorum %u is impossible with %u review keys",
				 cfg->quorum, cfg->n_keys);
		goto fail;
	}
	for (uint32_t i = 0; i < cfg->n_keys; i++)
		for (uint32_t j = 0; j < i; j++)
			if (!memcmp(cfg->keys[i], cfg->keys[j], Q42_VOL_ED25519_KEY_LEN)) {
				rc = q42_err_set(err, Q42_EARG, "review key %u repeats key %u", i, j);
				goto fail;
			}
	uint8_t hdr[Q42_VOL_HEADER_SIZE] = {0};
	memcpy(hdr, Q42_VOL_MAGIC, 4);
	q42_st32(hdr + 4, Q42_VOL_VERSION);
	q42_st32(hdr + 8, Q42_VOL_HEADER_SIZE);
	if (RAND_bytes(hdr + 16, Q42_VOL_ID_LEN) != 1) {
		rc = q42_err_set(err, Q42_EUNSUPPORTED, "cannot draw a random volume id");
		goto fail;
	}
	q42_st64(hdr + 32, (uint64_t)time(NULL));
	q42_st32(hdr + 60, q42_crc32c(0, hdr, 60));
	if ((rc = q42_sha256(hdr, sizeof hdr, prev, err)) != Q42_OK)
		goto fail;
	q42_buf_append(&b, hdr, sizeof hdr);
	q42_st32(cfgp, cfg->quorum);
	q42_st32(cfgp + 4, cfg->n_keys);
	memcpy(cfgp + 8, cfg->keys, (size_t)cfg->n_keys * Q42_VOL_ED25519_KEY_LEN);
	if ((rc = frame_build(&b, Q42_VOL_F_CONFIG, 0, prev, cfgp,
			      8 + (uint64_t)cfg->n_keys * Q42_VOL_ED25519_KEY_LEN, NULL, 0, hash,
			      err)) != Q42_OK)
		goto fail;
	if (b.failed) {
		rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
		goto fail;
	}
	rc = q42_wal_write_new(path, b.data, b.len, err);
fail:
	q42_buf_free(&b);
	return rc;
}

static int lock_open(const char *path, bool nowait, int *fdp, q42_err *err)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	*fdp = -1;
	if (fd < 0)
		return q42_err_set(err, Q42_EIO, "%s: cannot open: %s", path, strerror(errno));
	while (flock(fd, LOCK_EX | (nowait ? LOCK_NB : 0)) != 0) {
		if (errno == EINTR)
			continue;
		int e = errno;
		close(fd);
		if (e == EWOULDBLOCK)
			return q42_err_set(err, Q42_EIO, "%s: locked by another writer", path);
		return q42_err_set(err, Q42_EIO, "%s: cannot lock: %s", path, strerror(e));
	}
	*fdp = fd;
	return Q42_OK;
}

static bool binding_add(q42_wal *w, uint64_t leaf, const uint8_t *body)
{
	if (w->n_bindings == w->cap_bindings) {
		uint64_t cap = w->cap_bindings ? w->cap_bindings * 2 : 8;
		q42_wal_binding *b = realloc(w->bindings, (size_t)cap * sizeof *b);
		if (!b)
			return false;
		w->bindings = b;
		w->cap_bindings = cap;
	}
	q42_wal_binding *b = &w->bindings[w->n_bindings++];
	b->leaf = leaf;
	memcpy(b->p64_sha256, body, 32);
	memcpy(b->source_sha256, body + 32, 32);
	return true;
}

/* The bindings among the frames the open scan read (after the checkpoint,
 * or all of them when it read from frame 0). */
static int open_collect(void *arg, const q42_volscan *s, const uint8_t *frame, q42_err *err)
{
	q42_wal *w = arg;
	if (!frame) {
		w->n_bindings = 0;
		return Q42_OK;
	}
	if (s->last.type == Q42_VOL_F_ENTRY && s->last_kind == Q42_VOL_K_BINDING &&
	    !binding_add(w, s->last.leaf, frame + Q42_VOL_FRAME_HEAD + Q42_VOL_ENTRY_HEAD))
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	return Q42_OK;
}

/* The bindings before the entries the open scan read (it started after
 * kind_base entries): a chain through the index records (each names the
 * latest binding at or before it). */
static int bindings_before(q42_wal *w, q42_err *err)
{
	q42_walopen *st = w->st;
	q42_walidx_rec r;
	uint64_t n_old = 0, cap = 0, *old = NULL;
	uint64_t base = st->scan.kind_base;
	int rc = Q42_OK;
	if (base == 0)
		return Q42_OK;
	if ((rc = q42_walidx_read(&st->idx, base - 1, &r, err)) != Q42_OK)
		return rc;
	uint64_t b = r.binding;
	while (b != Q42_VOL_NONE) {
		if (b >= base || n_old >= base) {
			rc = q42_err_set(err, Q42_EFORMAT, "%s: binding chain names entry %llu",
					 st->idx.path, (unsigned long long)b);
			goto out;
		}
		if (n_old == cap) {
			uint64_t *o = realloc(old, (size_t)(cap = cap ? cap * 2 : 8) * sizeof *o);
			if (!o) {
				rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
				goto out;
			}
			old = o;
		}
		old[n_old++] = b;
		if (b == 0)
			break;
		if ((rc = q42_walidx_read(&st->idx, b - 1, &r, err)) != Q42_OK)
			goto out;
		b = r.binding;
	}
	/* oldest first, then those the scan found */
	uint64_t n_new = w->n_bindings;
	for (uint64_t k = 0; k < n_old; k++) {
		uint8_t body[Q42_VOL_BINDING_HEAD + Q42_VOL_FRAME_HEAD + Q42_VOL_ENTRY_HEAD];
		uint64_t leaf = old[n_old - 1 - k];
		if ((rc = q42_walidx_read(&st->idx, leaf, &r, err)) != Q42_OK ||
		    (rc = q42_wal_pread(w->fd, w->path, body, sizeof body, r.offset, err)) != Q42_OK)
			goto out;
		if (r.kind != Q42_VOL_K_BINDING || body[Q42_VOL_FRAME_HEAD] != Q42_VOL_K_BINDING) {
			rc = q42_err_set(err, Q42_EFORMAT, "%s: entry %llu is not a binding",
					 st->idx.path, (unsigned long long)leaf);
			goto out;
		}
		if (!binding_add(w, leaf, body + Q42_VOL_FRAME_HEAD + Q42_VOL_ENTRY_HEAD)) {
			rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
			goto out;
		}
	}
	/* rotate: the n_new found by the scan were first */
	for (uint64_t k = 0; k < n_new; k++) {
		q42_wal_binding t = w->bindings[0];
		memmove(w->bindings, w->bindings + 1, (size_t)(w->n_bindings - 1) * sizeof t);
		w->bindings[w->n_bindings - 1] = t;
	}
out:
	free(old);
	return rc;
}

static int wal_open(q42_wal *w, const char *path, uint32_t sync, bool nowait, int mode,
		    q42_err *err)
{
	int rc;
	memset(w, 0, sizeof *w);
	w->fd = -1;
	q42_buf_init(&w->batch);
	w->sync = sync;
	if (sync > Q42_WAL_SYNC_OFF)
		return q42_err_set(err, Q42_EARG, "unknown sync mode %u", sync);
	w->path = strdup(path);
	w->st = calloc(1, sizeof *w->st);
	if (!w->path || !w->st) {
		rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
		goto fail;
	}
	w->st->idx.fd = -1;
	if ((rc = lock_open(path, nowait, &w->fd, err)) != Q42_OK)
		goto fail;
	rc = q42_wal_scan_open(w->st, w->fd, path, mode, open_collect, w, err);
	if (rc != Q42_OK) {
		if (w->st->header_ok && w->st->tail_bad)
			q42_err_prefix(err, "refusing to append (run `q42wal recover` for a torn tail)");
		goto fail;
	}
	const q42_volscan *s = &w->st->scan;
	w->size = s->end;
	w->next_seq = s->n_frames;
	memcpy(w->last, s->prev, Q42_MERKLE_HASH_LEN);
	w->n_leaves = w->n_written = s->n_leaves;
	w->range = s->range;
	w->config = s->config;
	memcpy(w->id, s->id, Q42_VOL_ID_LEN);
	w->last_binding = w->st->binding;
	if ((rc = bindings_before(w, err)) != Q42_OK) {
		/* The index's binding chain failed a check: read them from the frames. */
		q42_volscan all;
		w->n_bindings = 0;
		rc = q42_wal_scan_all(&all, w->fd, path, w->size, open_collect, w, err);
		q42_volscan_free(&all);
		if (rc != Q42_OK)
			goto fail;
	}
	if (w->config.n_keys == 0) {
		/* What the scan kept (leaf kinds) is not needed to append. */
		q42_volscan_free(&w->st->scan);
		return Q42_OK;
	}
	/* A volume with review keys: votes need every pending frame's state.
	 * Without a matching VOL.rev, read the frames once from 0; the state
	 * is saved at close, so the next writer starts from it. */
	if (w->st->scan.partial && !w->st->scan.review_known) {
		q42_volscan all;
		rc = q42_wal_scan_all(&all, w->fd, w->path, w->size, NULL, NULL, err);
		if (rc != Q42_OK) {
			q42_volscan_free(&all);
			goto fail;
		}
		q42_volscan_free(&w->st->scan);
		w->st->scan = all;
		w->st->rev_seq = Q42_VOL_NONE;
	}
	w->st->scan.name = w->path;
	w->review = true;
	return Q42_OK;
fail:
	q42_wal_close(w, NULL);
	return rc;
}

int q42_wal_open(q42_wal *w, const char *path, uint32_t sync, bool nowait, q42_err *err)
{
	return wal_open(w, path, sync, nowait, Q42_WALSCAN_WRITE, err);
}

uint64_t q42_wal_staged(const q42_wal *w)
{
	return w->batch.len;
}

int q42_wal_stage(q42_wal *w, uint32_t type, uint32_t kind, uint64_t ref, uint64_t review,
		  const void *body, uint64_t body_len, uint64_t *index, q42_hash hash, q42_err *err)
{
	uint8_t head[Q42_VOL_ENTRY_HEAD] = {0};
	q42_hash fh;
	int rc;
	if (w->broken)
		return q42_err_set(err, Q42_EIO, "%s: an earlier write failed", w->path);
	if ((type != Q42_VOL_F_ENTRY && type != Q42_VOL_F_PENDING) || body_len == 0)
		return q42_err_set(err, Q42_EARG, "stage: bad frame type %u or empty body", type);
	if (kind == Q42_VOL_K_BINDING && body_len < Q42_VOL_BINDING_HEAD)
		return q42_err_set(err, Q42_EARG, "stage: binding body shorter than %u bytes",
				   Q42_VOL_BINDING_HEAD);
	head[0] = (uint8_t)kind;
	q42_st64(head + 8, ref);
	q42_st64(head + 16, review);
	if (type == Q42_VOL_F_ENTRY && w->n_staged == w->cap_staged) {
		uint64_t cap = w->cap_staged ? w->cap_staged * 2 : 64;
		q42_wal_batch_entry *ns = realloc(w->staged, (size_t)cap * sizeof *ns);
		if (!ns)
			return q42_err_set(err, Q42_ENOMEM, "out of memory");
		w->staged = ns;
		w->cap_staged = cap;
	}
	uint64_t offset = w->size + w->batch.len;
	if ((rc = frame_build(&w->batch, (uint16_t)type, w->next_seq, w->last, head, sizeof head,
			      body, body_len, fh, err)) != Q42_OK)
		return rc;
	if (type == Q42_VOL_F_ENTRY) {
		q42_wal_batch_entry *sg = &w->staged[w->n_staged];
		const uint8_t *payload = w->batch.data + w->batch.len - Q42_VOL_FRAME_TAIL -
					 Q42_VOL_ENTRY_HEAD - body_len;
		if ((rc = q42_merkle_leaf(payload, Q42_VOL_ENTRY_HEAD + body_len, sg->leaf, err)) !=
		    Q42_OK)
			return rc;
		if (kind == Q42_VOL_K_BINDING && !binding_add(w, w->n_leaves, body))
			return q42_err_set(err, Q42_ENOMEM, "out of memory");
		sg->offset = offset;
		sg->seq = w->next_seq;
		memcpy(sg->frame_hash, fh, Q42_MERKLE_HASH_LEN);
		sg->kind = kind;
		w->n_staged++;
		*index = w->n_leaves++;
		memcpy(hash, sg->leaf, Q42_MERKLE_HASH_LEN);
	} else {
		*index = w->next_seq;
		memcpy(hash, fh, Q42_MERKLE_HASH_LEN);
	}
	memcpy(w->last, fh, Q42_MERKLE_HASH_LEN);
	w->next_seq++;
	return Q42_OK;
}

int q42_wal_stage_vote_frame(q42_wal *w, const uint8_t payload[Q42_VOL_VOTE_SIZE], q42_err *err)
{
	q42_hash fh;
	int rc = frame_build(&w->batch, Q42_VOL_F_VOTE, w->next_seq, w->last, payload,
			     Q42_VOL_VOTE_SIZE, NULL, 0, fh, err);
	if (rc != Q42_OK)
		return rc;
	memcpy(w->last, fh, Q42_MERKLE_HASH_LEN);
	w->next_seq++;
	return Q42_OK;
}

void q42_wal_discard(q42_wal *w)
{
	/* Rebuilding the in-memory tail is simpler than undoing it: re-derive
	 * seq, link and leaves from the last written state. Only called before
	 * anything of the batch was written. */
	if (w->batch.len == 0)
		return;
	uint64_t off = 0;
	uint64_t frames = 0, bindings = 0;
	while (off < w->batch.len) {
		uint32_t len = q42_ld32(w->batch.data + off);
		uint16_t type = q42_ld16(w->batch.data + off + 4);
		if (type == Q42_VOL_F_ENTRY && w->batch.data[off + Q42_VOL_FRAME_HEAD] == Q42_VOL_K_BINDING)
			bindings++;
		frames++;
		off += Q42_VOL_FRAME_OVERHEAD + (uint64_t)len;
	}
	memcpy(w->last, w->batch.data + 16, Q42_MERKLE_HASH_LEN);
	w->next_seq -= frames;
	w->n_leaves = w->n_written;
	w->n_staged = 0;
	w->n_bindings -= bindings;
	q42_buf_reset(&w->batch);
}

/* After a batch reached the file: its index records. The index is derived
 * data, so a failure here closes it and leaves the repair to the next open;
 * the entries are acknowledged either way. */
static void index_batch(q42_wal *w)
{
	q42_walidx *x = &w->st->idx;
	q42_walidx_rec *recs = NULL;
	q42_err e;
	int rc = Q42_OK;
	if (w->n_staged == 0)
		return;
	if (x->fd >= 0 && x->n == w->n_written)
		recs = malloc((size_t)w->n_staged * sizeof *recs);
	for (uint64_t k = 0; k < w->n_staged; k++) {
		const q42_wal_batch_entry *sg = &w->staged[k];
		q42_walidx_rec *r = recs ? &recs[k] : NULL;
		q42_hash nodes[64];
		uint32_t nn = 0;
		if (sg->kind == Q42_VOL_K_BINDING)
			w->last_binding = w->n_written + k;
		if (rc == Q42_OK)
			rc = q42_merkle_range_push(&w->range, sg->leaf, nodes, &nn, &e);
		if (!r)
			continue;
		r->offset = sg->offset;
		r->seq = sg->seq;
		memcpy(r->frame_hash, sg->frame_hash, 32);
		memcpy(r->leaf, sg->leaf, 32);
		r->kind = sg->kind;
		r->binding = w->last_binding;
		r->n_nodes = nn;
		memcpy(r->nodes, nodes, 32u * nn);
	}
	if (rc != Q42_OK) {
		/* only a failure inside libcrypto: nothing more may be appended */
		w->broken = true;
	}
	if (recs && (rc != Q42_OK || q42_walidx_append(x, recs, w->n_staged, &e) != Q42_OK))
		q42_walidx_close(x);
	else if (!recs)
		q42_walidx_close(x);
	free(recs);
	w->n_written += w->n_staged;
	w->n_staged = 0;
}

/* After a batch reached the file: take its frames through the review
 * state by the readers' own rules. Should that ever fail, the state and
 * its file are dropped, and the next writer reads the frames from 0. */
static void review_advance(q42_wal *w)
{
	q42_volscan *s = &w->st->scan;
	q42_err e;
	uint64_t off = 0;
	while (w->review && off < w->batch.len) {
		uint64_t total = Q42_VOL_FRAME_OVERHEAD + (uint64_t)q42_ld32(w->batch.data + off);
		if (q42_volscan_frame(s, w->batch.data + off, w->batch.len - off, &e) != Q42_OK) {
			w->review = false;
			q42_walrev_remove(w->path);
		}
		off += total;
	}
}

int q42_wal_flush(q42_wal *w, q42_err *err)
{
	if (w->broken)
		return q42_err_set(err, Q42_EIO, "%s: an earlier write failed", w->path);
	uint64_t done = 0;
	while (done < w->batch.len) {
		ssize_t n = pwrite(w->fd, w->batch.data + done, (size_t)(w->batch.len - done),
				   (off_t)(w->size + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = errno;
			/* Cut the partial batch so the volume stays valid. */
			if (ftruncate(w->fd, (off_t)w->size) != 0)
				w->broken = true;
			q42_wal_discard(w);
			return q42_err_set(err, Q42_EIO, "%s: write at offset %llu: %s", w->path,
					   (unsigned long long)(w->size + done),
					   n < 0 ? strerror(e) : "wrote nothing");
		}
		done += (uint64_t)n;
	}
	w->size += done;
	if (done)
		w->unsynced = true;
	if (w->review)
		review_advance(w);
	q42_buf_reset(&w->batch);
	if (w->sync == Q42_WAL_SYNC_FULL && w->unsynced) {
		if (fsync(w->fd) != 0) {
			/* After a failed fsync the page cache state is unknown:
			 * nothing more may be acknowledged from this handle. */
			w->broken = true;
			return q42_err_set(err, Q42_EIO, "%s: fsync: %s", w->path, strerror(errno));
		}
		w->unsynced = false;
	}
	index_batch(w);
	return Q42_OK;
}

int q42_wal_close(q42_wal *w, q42_err *err)
{
	int rc = Q42_OK;
	if (w->fd >= 0 && !w->broken) {
		rc = q42_wal_flush(w, err);
		if (rc == Q42_OK && w->unsynced && w->sync == Q42_WAL_SYNC_NORMAL &&
		    fsync(w->fd) != 0)
			rc = q42_err_set(err, Q42_EIO, "%s: fsync: %s", w->path, strerror(errno));
		/* Derived data, written while the lock is held: a failure only
		 * costs the next writer a read from frame 0. */
		q42_err e;
		if (rc == Q42_OK && w->review && w->st->scan.n_frames - 1 != w->st->rev_seq &&
		    q42_walrev_save(w->path, &w->st->scan, &e) != Q42_OK)
			q42_walrev_remove(w->path);
	}
	if (w->st) {
		q42_wal_scan_close(w->st);
		free(w->st);
	}
	if (w->fd >= 0)
		close(w->fd); /* releases the lock */
	free(w->path);
	free(w->staged);
	free(w->bindings);
	q42_buf_free(&w->batch);
	memset(w, 0, sizeof *w);
	w->fd = -1;
	return rc;
}

int q42_wal_reindex(const char *path, bool rebuild, uint64_t *before, uint64_t *after,
		    q42_err *err)
{
	q42_wal w;
	int rc;
	*before = *after = 0;
	rc = wal_open(&w, path, Q42_WAL_SYNC_FULL, false,
		      rebuild ? Q42_WALSCAN_REBUILD : Q42_WALSCAN_WRITE, err);
	if (rc != Q42_OK)
		return rc;
	*before = w.st->trusted;
	*after = w.st->idx.fd >= 0 ? w.st->idx.n : 0;
	if (w.st->idx.fd >= 0 && fsync(w.st->idx.fd) != 0)
		rc = q42_err_set(err, Q42_EIO, "%s: fsync: %s", w.st->idx.path, strerror(errno));
	int rc2 = q42_wal_close(&w, rc == Q42_OK ? err : NULL);
	return rc == Q42_OK ? rc2 : rc;
}

uint64_t q42_wal_find_binding(const q42_wal *w, const uint8_t *p64_sha256,
			      const uint8_t *source_sha256)
{
	/* The latest binding wins: rebinding the same model later is allowed. */
	for (uint64_t i = w->n_bindings; i-- > 0;)
		if (p64_sha256 && !memcmp(w->bindings[i].p64_sha256, p64_sha256, 32))
			return w->bindings[i].leaf;
	for (uint64_t i = w->n_bindings; i-- > 0;)
		if (source_sha256 && !memcmp(w->bindings[i].source_sha256, source_sha256, 32))
			return w->bindings[i].leaf;
	return Q42_VOL_NONE;
}

/* Is there an intact frame anywhere after the bad one? A torn write only
 * ever leaves a prefix of what was written, so one found means the damage
 * is not a torn tail. Candidates are filtered on the cheap fields first. */
static bool intact_frame_after(const uint8_t *data, uint64_t size, uint64_t valid_end,
			       uint64_t bad_frame)
{
	uint64_t first = valid_end + 1;
	for (uint64_t o = first; o + Q42_VOL_FRAME_OVERHEAD <= size; o++) {
		const uint8_t *f = data + o;
		uint32_t len = q42_ld32(f);
		uint16_t type = q42_ld16(f + 4);
		uint64_t seq = q42_ld64(f + 8);
		if (len > Q42_VOL_MAX_PAYLOAD || type < Q42_VOL_F_ENTRY || type > Q42_VOL_F_VOTE ||
		    q42_ld16(f + 6) != 0 || seq <= bad_frame ||
		    seq - bad_frame > (size - valid_end) / Q42_VOL_FRAME_OVERHEAD ||
		    (uint64_t)len + Q42_VOL_FRAME_OVERHEAD > size - o)
			continue;
		if (q42_crc32c(0, f, Q42_VOL_FRAME_HEAD + (size_t)len) ==
		    q42_ld32(f + Q42_VOL_FRAME_HEAD + len))
			return true;
	}
	return false;
}

int q42_wal_recover(const char *path, bool dry_run, bool force, q42_wal_recovery *rep,
		    q42_err *err)
{
	q42_map map;
	q42_volscan s;
	q42_err perr;
	int fd = -1, rc;
	bool header_ok = false;
	memset(rep, 0, sizeof *rep);
	memset(&s, 0, sizeof s);
	memset(&map, 0, sizeof map);
	map.fd = -1;
	if ((rc = lock_open(path, false, &fd, err)) != Q42_OK)
		return rc;
	/* Mapped, and validated frame by frame without keeping them: the
	 * pages read are the kernel's cache, not this process's memory. */
	if ((rc = q42_map_open(&map, path, 0, err)) != Q42_OK)
		goto fail;
	uint64_t size = map.size;
	if (size < Q42_VOL_HEADER_SIZE) {
		rc = q42_err_set(&perr, Q42_EFORMAT, "%s: header: file has %llu bytes, expected at least %u",
				 path, (unsigned long long)size, Q42_VOL_HEADER_SIZE);
	} else if ((rc = q42_volscan_header(&s, map.data, path, &perr)) == Q42_OK) {
		header_ok = true;
		while (s.end < size && (rc = q42_volscan_frame(&s, (const uint8_t *)map.data + s.end,
							       size - s.end, &perr)) == Q42_OK)
			;
		if (rc == Q42_OK && s.n_frames == 0)
			rc = q42_err_set(&perr, Q42_EFORMAT,
					 "%s: frame 0 at offset 64: missing config frame", path);
	}
	rep->frames_kept = s.n_frames;
	rep->entries_kept = s.n_leaves;
	if (rc == Q42_OK)
		goto fail; /* nothing to cut */
	if (rc != Q42_EFORMAT && rc != Q42_EUNSUPPORTED) {
		*err = perr;
		goto fail;
	}
	if (!header_ok || s.n_frames == 0) {
		rc = q42_err_set(err, Q42_EFORMAT, "%s; the %s is damaged, which recovery cannot repair",
				 perr.msg, header_ok ? "config frame" : "header");
		goto fail;
	}
	if (!force && intact_frame_after(map.data, size, s.end, s.n_frames)) {
		rc = q42_err_set(err, Q42_EFORMAT,
				 "%s; intact frames follow it, so this is corruption, not a torn "
				 "tail: refusing to cut (--force cuts anyway)", perr.msg);
		goto fail;
	}
	rep->cut = true;
	rep->offset = s.end;
	rep->bytes = size - s.end;
	rep->frame = s.n_frames;
	snprintf(rep->reason, sizeof rep->reason, "%s", perr.msg);
	rc = Q42_OK;
	q42_map_close(&map);
	/* The index may now name frames that are gone: the next writer finds
	 * its last matching record and cuts it there. */
	if (!dry_run && (ftruncate(fd, (off_t)s.end) != 0 || fsync(fd) != 0))
		rc = q42_err_set(err, Q42_EIO, "%s: cannot truncate to %llu bytes: %s", path,
				 (unsigned long long)s.end, strerror(errno));
fail:
	q42_volscan_free(&s);
	q42_map_close(&map);
	close(fd);
	return rc;
}
