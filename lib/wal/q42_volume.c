/* q42_volume.c -- the validating reader of Q42 volumes (q42-volume(5)).
 *
 * One pass over the bytes: header, then each frame in order. Every length
 * is bounded before it is used, every CRC and link is compared before the
 * payload is interpreted, and the review rules (quorum, one vote per key,
 * valid signatures) are replayed as they would have been enforced when the
 * frames were written. The first failure stops the pass; what came before
 * it stays available to recovery. Nothing here writes or prints.
 */
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/q42_ckd.h"
#include "common/q42_crc32c.h"
#include "common/q42_le.h"
#include "formats/q42_digest.h"
#include "wal/q42_volume.h"

const char *q42_vol_frame_type_name(uint32_t type)
{
	switch (type) {
	case Q42_VOL_F_CONFIG: return "config";
	case Q42_VOL_F_ENTRY: return "entry";
	case Q42_VOL_F_PENDING: return "pending";
	case Q42_VOL_F_VOTE: return "vote";
	default: return "?";
	}
}

const char *q42_vol_kind_name(uint32_t kind)
{
	switch (kind) {
	case Q42_VOL_K_RECORD: return "record";
	case Q42_VOL_K_QUIN: return "quin";
	case Q42_VOL_K_BINDING: return "binding";
	default: return "?";
	}
}

void q42_vol_vote_message(const uint8_t id[Q42_VOL_ID_LEN], uint64_t pending_seq,
			  const q42_hash pending_hash, uint32_t decision,
			  uint8_t out[Q42_VOL_VOTE_MSG_LEN])
{
	memcpy(out, "q42-volume-vote", 15);
	out[15] = (uint8_t)decision;
	memcpy(out + 16, id, Q42_VOL_ID_LEN);
	q42_st64(out + 32, pending_seq);
	memcpy(out + 40, pending_hash, Q42_MERKLE_HASH_LEN);
}

void q42_vol_head_message(const uint8_t id[Q42_VOL_ID_LEN], uint64_t size,
			  const q42_hash root, uint8_t out[Q42_VOL_HEAD_MSG_LEN])
{
	memcpy(out, "q42-volume-head", 16); /* 15 characters and their NUL */
	memcpy(out + 16, id, Q42_VOL_ID_LEN);
	q42_st64(out + 32, size);
	memcpy(out + 40, root, Q42_MERKLE_HASH_LEN);
}

int q42_vol_ed25519_verify_raw(const uint8_t key[Q42_VOL_ED25519_KEY_LEN], const void *msg,
			       size_t n, const uint8_t sig[64], q42_err *err)
{
	EVP_PKEY *pk = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, key,
						   Q42_VOL_ED25519_KEY_LEN);
	EVP_MD_CTX *ctx = NULL;
	int rc = Q42_EFORMAT;
	if (!pk) {
		q42_err_set(err, Q42_EFORMAT, "not a valid Ed25519 public key");
		goto fail;
	}
	ctx = EVP_MD_CTX_new();
	if (!ctx) {
		rc = q42_err_set(err, Q42_ENOMEM, "cannot allocate a digest context");
		goto fail;
	}
	if (EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, pk) != 1 ||
	    EVP_DigestVerify(ctx, sig, 64, msg, n) != 1) {
		q42_err_set(err, Q42_EFORMAT, "Ed25519 signature does not verify");
		goto fail;
	}
	rc = Q42_OK;
fail:
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(pk);
	return rc;
}

int q42_vol_ed25519_pubkey(const char *pem_path, uint8_t key[Q42_VOL_ED25519_KEY_LEN],
			   q42_err *err)
{
	FILE *fp = fopen(pem_path, "r");
	EVP_PKEY *pk = NULL;
	size_t len = Q42_VOL_ED25519_KEY_LEN;
	int rc = Q42_EFORMAT;
	if (!fp)
		return q42_err_set(err, Q42_EIO, "%s: cannot open key file", pem_path);
	pk = PEM_read_PUBKEY(fp, NULL, NULL, NULL);
	if (!pk) {
		rewind(fp);
		pk = PEM_read_PrivateKey(fp, NULL, NULL, NULL);
	}
	if (!pk || EVP_PKEY_id(pk) != EVP_PKEY_ED25519 ||
	    EVP_PKEY_get_raw_public_key(pk, key, &len) != 1 || len != Q42_VOL_ED25519_KEY_LEN) {
		q42_err_set(err, Q42_EFORMAT, "%s: not an Ed25519 public or private key in PEM",
			    pem_path);
		goto fail;
	}
	rc = Q42_OK;
fail:
	EVP_PKEY_free(pk);
	fclose(fp);
	return rc;
}

void q42_volume_entry(const q42_volume *v, const q42_vol_frame *f, q42_vol_entry *out)
{
	const uint8_t *p = v->data + f->payload_off;
	out->kind = p[0];
	out->ref = q42_ld64(p + 8);
	out->review = q42_ld64(p + 16);
	out->body = p + Q42_VOL_ENTRY_HEAD;
	out->body_len = f->length - Q42_VOL_ENTRY_HEAD;
}

void q42_volume_vote(const q42_volume *v, const q42_vol_frame *f, q42_vol_vote *out)
{
	const uint8_t *p = v->data + f->payload_off;
	out->pending_seq = q42_ld64(p);
	out->decision = p[8];
	memcpy(out->key, p + 16, Q42_VOL_ED25519_KEY_LEN);
	memcpy(out->sig, p + 48, 64);
}

int q42_volume_root(const q42_volume *v, uint64_t n, q42_hash out, q42_err *err)
{
	if (n > v->n_leaves)
		return q42_err_set(err, Q42_EARG, "tree size %llu exceeds the volume's %llu entries",
				   (unsigned long long)n, (unsigned long long)v->n_leaves);
	return q42_merkle_root(v->leaves, n, out, err);
}

void q42_volume_free(q42_volume *v)
{
	free(v->frames);
	free(v->leaves);
	free(v->leaf_frame);
	free(v->leaf_kind);
	free(v->pending);
	memset(v, 0, sizeof *v);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Grow an array to hold at least need items; cap doubles. */
static bool grow(void **arr, uint64_t *cap, uint64_t need, size_t item)
{
	if (need <= *cap)
		return true;
	uint64_t ncap = *cap ? *cap * 2 : 64, bytes;
	while (ncap < need)
		ncap *= 2;
	if (q42_mul_overflow(ncap, item, &bytes) || bytes > SIZE_MAX)
		return false;
	void *p = realloc(*arr, (size_t)bytes);
	if (!p)
		return false;
	*arr = p;
	*cap = ncap;
	return true;
}

void q42_volscan_free(q42_volscan *s)
{
	free(s->kind);
	free(s->pending);
	s->kind = NULL;
	s->pending = NULL;
	s->cap_kind = s->cap_pending = s->n_pending = 0;
}

q42_vol_pending *q42_volscan_pending(const q42_volscan *s, uint64_t seq)
{
	/* Pending frames are recorded in frame order: binary search by seq. */
	uint64_t lo = 0, hi = s->n_pending;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (s->pending[mid].seq == seq)
			return &s->pending[mid];
		if (s->pending[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* SHA-256 of an ENTRY/PENDING payload without its review field (16..23):
 * equal digests mean an entry repeats its pending frame. */
static int payload_digest(const uint8_t *p, uint32_t len, q42_hash out, q42_err *err)
{
	return q42_sha256_parts(p, 16, p + Q42_VOL_ENTRY_HEAD, len - Q42_VOL_ENTRY_HEAD, NULL, 0,
				out, err);
}

#define FRAME_FAIL(...)                                                                    \
	do {                                                                               \
		q42_err_set(err, Q42_EFORMAT, __VA_ARGS__);                                 \
		q42_err_prefix(err, "%s: frame %llu at offset %llu", s->name,              \
			       (unsigned long long)seq, (unsigned long long)off);          \
		return Q42_EFORMAT;                                                        \
	} while (0)

#define NEED_FULL()                                                                        \
	do {                                                                               \
		s->need_full = true;                                                       \
		return q42_err_set(err, Q42_EUNSUPPORTED,                                   \
				   "%s: frame %llu needs the review state from frame 0",   \
				   s->name, (unsigned long long)seq);                      \
	} while (0)

static int check_config(q42_volscan *s, uint64_t seq, uint64_t off, const uint8_t *p,
			uint32_t len, q42_err *err)
{
	q42_vol_config *c = &s->config;
	if (len < 8)
		FRAME_FAIL("config: payload of %u bytes, expected at least 8", len);
	uint32_t quorum = q42_ld32(p), n = q42_ld32(p + 4);
	if (n > Q42_VOL_MAX_KEYS)
		FRAME_FAIL("config: %u review keys, at most %u allowed", n, Q42_VOL_MAX_KEYS);
	if (len != 8 + n * Q42_VOL_ED25519_KEY_LEN)
		FRAME_FAIL("config: payload of %u bytes, expected %u for %u keys", len,
			   8 + n * Q42_VOL_ED25519_KEY_LEN, n);
	if ((n == 0 && quorum != 0) || (n > 0 && (quorum < 1 || quorum > n)))
		FRAME_FAIL("config: quorum %u is impossible with %u keys", quorum, n);
	for (uint32_t i = 0; i < n; i++) {
		memcpy(c->keys[i], p + 8 + i * Q42_VOL_ED25519_KEY_LEN, Q42_VOL_ED25519_KEY_LEN);
		for (uint32_t j = 0; j < i; j++)
			if (!memcmp(c->keys[i], c->keys[j], Q42_VOL_ED25519_KEY_LEN))
				FRAME_FAIL("config: key %u repeats key %u", i, j);
	}
	c->quorum = quorum;
	c->n_keys = n;
	return Q42_OK;
}

/* Kind of an earlier leaf, or 0 when ref names no earlier leaf. */
static int leaf_kind(q42_volscan *s, uint64_t ref, uint32_t *kind, q42_err *err)
{
	*kind = 0;
	if (ref >= s->n_leaves)
		return Q42_OK;
	if (ref >= s->kind_base) {
		*kind = s->kind[ref - s->kind_base];
		return Q42_OK;
	}
	if (s->kind_of && s->kind_of(s->kind_arg, ref, kind, err) == Q42_OK)
		return Q42_OK;
	/* Whatever answers for leaves before the checkpoint (the index) could
	 * not: the kinds must come from the frames, read from frame 0. */
	s->need_full = true;
	return q42_err_set(err, Q42_EUNSUPPORTED, "%s: the kind of leaf %llu needs frame 0",
			   s->name, (unsigned long long)ref);
}

static int check_entry(q42_volscan *s, uint64_t seq, uint64_t off, uint16_t type,
		       const uint8_t *p, uint32_t len, q42_err *err)
{
	uint32_t rk;
	int rc;
	if (len < Q42_VOL_ENTRY_HEAD + 1)
		FRAME_FAIL("%s: payload of %u bytes, expected at least %u",
			   q42_vol_frame_type_name(type), len, Q42_VOL_ENTRY_HEAD + 1);
	uint32_t kind = p[0];
	uint64_t ref = q42_ld64(p + 8), review = q42_ld64(p + 16);
	if (!all_zero(p + 1, 7))
		FRAME_FAIL("%s: reserved bytes 1..7 are not zero", q42_vol_frame_type_name(type));
	switch (kind) {
	case Q42_VOL_K_RECORD:
		if (ref == Q42_VOL_NONE)
			break;
		if ((rc = leaf_kind(s, ref, &rk, err)) != Q42_OK)
			return rc;
		if (rk != Q42_VOL_K_BINDING)
			FRAME_FAIL("record: binding reference %llu is not a binding entry",
				   (unsigned long long)ref);
		break;
	case Q42_VOL_K_QUIN:
		if ((rc = leaf_kind(s, ref, &rk, err)) != Q42_OK)
			return rc;
		if (rk != Q42_VOL_K_RECORD)
			FRAME_FAIL("quin: record reference %llu is not a record entry",
				   (unsigned long long)ref);
		break;
	case Q42_VOL_K_BINDING:
		if (ref != Q42_VOL_NONE)
			FRAME_FAIL("binding: reference must be none (all ones), found %llu",
				   (unsigned long long)ref);
		if (len < Q42_VOL_ENTRY_HEAD + Q42_VOL_BINDING_HEAD)
			FRAME_FAIL("binding: payload of %u bytes, expected at least %u", len,
				   Q42_VOL_ENTRY_HEAD + Q42_VOL_BINDING_HEAD);
		break;
	default:
		FRAME_FAIL("%s: unknown entry kind %u", q42_vol_frame_type_name(type), kind);
	}
	if (type == Q42_VOL_F_PENDING) {
		if (s->config.quorum == 0)
			FRAME_FAIL("pending: the volume has no review keys configured");
		if (kind != Q42_VOL_K_RECORD)
			FRAME_FAIL("pending: only records can wait for review, found %s",
				   q42_vol_kind_name(kind));
		if (review != Q42_VOL_NONE)
			FRAME_FAIL("pending: review field must be none (all ones)");
		return Q42_OK;
	}
	if (review == Q42_VOL_NONE)
		return Q42_OK;
	q42_vol_pending *pd = review < seq ? q42_volscan_pending(s, review) : NULL;
	if (!pd && s->partial && !s->review_known && review < seq)
		NEED_FULL();
	if (!pd)
		FRAME_FAIL("entry: review reference %llu is not a pending frame",
			   (unsigned long long)review);
	if (pd->state != Q42_VOL_P_OPEN)
		FRAME_FAIL("entry: pending frame %llu was already %s", (unsigned long long)review,
			   pd->state == Q42_VOL_P_COMMITTED ? "committed" : "rejected");
	if (pd->approvals < s->config.quorum)
		FRAME_FAIL("entry: pending frame %llu has %u approvals, quorum is %u",
			   (unsigned long long)review, pd->approvals, s->config.quorum);
	q42_hash d;
	if ((rc = payload_digest(p, len, d, err)) != Q42_OK)
		return rc;
	if (pd->length != len || memcmp(pd->digest, d, Q42_MERKLE_HASH_LEN) != 0)
		FRAME_FAIL("entry: differs from the pending frame %llu it commits",
			   (unsigned long long)review);
	pd->state = Q42_VOL_P_COMMITTED;
	pd->leaf = s->n_leaves;
	return Q42_OK;
}

static int check_vote(q42_volscan *s, uint64_t seq, uint64_t off, const uint8_t *p,
		      uint32_t len, q42_err *err)
{
	q42_err e2;
	if (len != Q42_VOL_VOTE_SIZE)
		FRAME_FAIL("vote: payload of %u bytes, expected %u", len, Q42_VOL_VOTE_SIZE);
	uint64_t ps = q42_ld64(p);
	uint32_t decision = p[8];
	if (decision != Q42_VOL_APPROVE && decision != Q42_VOL_REJECT)
		FRAME_FAIL("vote: decision %u is neither 1 (approve) nor 2 (reject)", decision);
	if (!all_zero(p + 9, 7))
		FRAME_FAIL("vote: reserved bytes 9..15 are not zero");
	q42_vol_pending *pd = ps < seq ? q42_volscan_pending(s, ps) : NULL;
	if (!pd && s->partial && !s->review_known && ps < seq)
		NEED_FULL();
	if (!pd)
		FRAME_FAIL("vote: frame %llu is not a pending frame", (unsigned long long)ps);
	if (pd->state != Q42_VOL_P_OPEN)
		FRAME_FAIL("vote: pending frame %llu is already %s", (unsigned long long)ps,
			   pd->state == Q42_VOL_P_COMMITTED ? "committed" : "rejected");
	uint32_t ki;
	for (ki = 0; ki < s->config.n_keys; ki++)
		if (!memcmp(s->config.keys[ki], p + 16, Q42_VOL_ED25519_KEY_LEN))
			break;
	if (ki == s->config.n_keys)
		FRAME_FAIL("vote: the signing key is not one of the configured review keys");
	if (pd->voted & (1u << ki))
		FRAME_FAIL("vote: review key %u already voted on pending frame %llu", ki,
			   (unsigned long long)ps);
	uint8_t msg[Q42_VOL_VOTE_MSG_LEN];
	q42_vol_vote_message(s->id, ps, pd->hash, decision, msg);
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	if (q42_vol_ed25519_verify_raw(p + 16, msg, sizeof msg, p + 48, &e2) != Q42_OK)
		FRAME_FAIL("vote: signature by review key %u: %s", ki, e2.msg);
#else
	(void)e2;
#endif
	pd->voted |= 1u << ki;
	if (decision == Q42_VOL_APPROVE) {
		pd->approvals++;
	} else {
		pd->rejections++;
		if (pd->rejections > s->config.n_keys - s->config.quorum)
			pd->state = Q42_VOL_P_REJECTED;
	}
	return Q42_OK;
}

int q42_volscan_header(q42_volscan *s, const uint8_t hdr[Q42_VOL_HEADER_SIZE], const char *name,
		       q42_err *err)
{
	memset(s, 0, sizeof *s);
	s->name = name ? name : "volume";
	s->end = Q42_VOL_HEADER_SIZE;
	if (memcmp(hdr, Q42_VOL_MAGIC, 4) != 0)
		return q42_err_set(err, Q42_EFORMAT, "%s: header: magic is not \"Q42\\0\"", s->name);
	uint32_t hcrc = q42_crc32c(0, hdr, 60);
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	if (q42_ld32(hdr + 60) != hcrc)
		return q42_err_set(err, Q42_EFORMAT,
				   "%s: header: CRC-32C: stored 0x%08x, computed 0x%08x", s->name,
				   q42_ld32(hdr + 60), hcrc);
#else
	(void)hcrc;
#endif
	s->version = q42_ld32(hdr + 4);
	if (s->version != Q42_VOL_VERSION)
		return q42_err_set(err, Q42_EUNSUPPORTED, "%s: header: version %u, this reader knows %u",
				   s->name, s->version, Q42_VOL_VERSION);
	if (q42_ld32(hdr + 8) != Q42_VOL_HEADER_SIZE || q42_ld32(hdr + 12) != 0 ||
	    !all_zero(hdr + 40, 20))
		return q42_err_set(err, Q42_EFORMAT,
				   "%s: header: size field, flags or reserved bytes 40..59 are not as "
				   "specified (64, 0, zeros)", s->name);
	memcpy(s->id, hdr + 16, Q42_VOL_ID_LEN);
	s->created = q42_ld64(hdr + 32);
	int rc = q42_sha256(hdr, Q42_VOL_HEADER_SIZE, s->header_hash, err);
	if (rc == Q42_OK)
		memcpy(s->prev, s->header_hash, Q42_MERKLE_HASH_LEN);
	return rc;
}

void q42_volscan_resume(q42_volscan *s, uint64_t seq, uint64_t n_leaves, uint64_t end,
			const q42_hash fh, const q42_merkle_range *range)
{
	s->n_frames = seq + 1;
	s->n_leaves = n_leaves;
	s->kind_base = n_leaves;
	s->end = end;
	memcpy(s->prev, fh, Q42_MERKLE_HASH_LEN);
	s->range = *range;
	s->partial = true;
	s->review_known = false;
	s->n_pending = 0;
}

void q42_volscan_resume_review(q42_volscan *s, q42_vol_pending *pending, uint64_t n)
{
	free(s->pending);
	s->pending = pending;
	s->n_pending = s->cap_pending = n;
	s->review_known = true;
}

/* fh, leaf: the frame's hash and (for an entry) leaf hash when the caller
 * computed them from these bytes already, else NULL. */
static int scan_frame(q42_volscan *s, const uint8_t *f, uint64_t avail, const uint8_t *fh,
		      const uint8_t *leaf, q42_err *err)
{
	uint64_t seq = s->n_frames, off = s->end, total;
	int rc;
	s->short_frame = false;
	s->need_full = false;
	s->bad_end = off + avail;
	if (avail < Q42_VOL_FRAME_HEAD) {
		s->short_frame = true;
		FRAME_FAIL("truncated: %llu of the %u head bytes present", (unsigned long long)avail,
			   Q42_VOL_FRAME_HEAD);
	}
	uint32_t len = q42_ld32(f);
	uint16_t type = q42_ld16(f + 4), flags = q42_ld16(f + 6);
	if (len > Q42_VOL_MAX_PAYLOAD)
		FRAME_FAIL("length %u exceeds the %u-byte payload cap", len, Q42_VOL_MAX_PAYLOAD);
	total = (uint64_t)Q42_VOL_FRAME_OVERHEAD + len;
	if (avail < total) {
		s->short_frame = true;
		FRAME_FAIL("truncated: %llu of %llu bytes present", (unsigned long long)avail,
			   (unsigned long long)total);
	}
	s->bad_end = off + total;
	uint32_t stored = q42_ld32(f + Q42_VOL_FRAME_HEAD + len);
	uint32_t crc = q42_crc32c(0, f, Q42_VOL_FRAME_HEAD + (size_t)len);
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	if (stored != crc)
		FRAME_FAIL("CRC-32C: stored 0x%08x, computed 0x%08x", stored, crc);
#else
	(void)stored;
	(void)crc;
#endif
	if (flags != 0)
		FRAME_FAIL("flags 0x%04x, expected 0", flags);
	if (q42_ld64(f + 8) != seq)
		FRAME_FAIL("sequence number %llu, expected %llu",
			   (unsigned long long)q42_ld64(f + 8), (unsigned long long)seq);
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	if (memcmp(f + 16, s->prev, Q42_MERKLE_HASH_LEN) != 0)
		FRAME_FAIL("link does not match the hash of the previous %s",
			   seq ? "frame" : "header");
#endif
	if ((seq == 0) != (type == Q42_VOL_F_CONFIG))
		FRAME_FAIL("type %u (%s): frame 0 must be the config frame and only frame 0", type,
			   q42_vol_frame_type_name(type));
	const uint8_t *p = f + Q42_VOL_FRAME_HEAD;
	switch (type) {
	case Q42_VOL_F_CONFIG:
		rc = check_config(s, seq, off, p, len, err);
		break;
	case Q42_VOL_F_ENTRY:
	case Q42_VOL_F_PENDING:
		rc = check_entry(s, seq, off, type, p, len, err);
		break;
	case Q42_VOL_F_VOTE:
		rc = check_vote(s, seq, off, p, len, err);
		break;
	default:
		FRAME_FAIL("unknown frame type %u", type);
	}
	if (rc != Q42_OK)
		return rc;

	q42_vol_frame *fr = &s->last;
	fr->offset = off;
	fr->length = len;
	fr->type = type;
	fr->payload_off = off + Q42_VOL_FRAME_HEAD;
	fr->leaf = Q42_VOL_NONE;
	fr->pending = Q42_VOL_NONE;
	s->last_kind = 0;
	if (fh)
		memcpy(fr->hash, fh, Q42_MERKLE_HASH_LEN);
	else if ((rc = q42_sha256(f, total, fr->hash, err)) != Q42_OK)
		return rc;
	if (type == Q42_VOL_F_ENTRY) {
		uint64_t n = s->n_leaves;
		if (!grow((void **)&s->kind, &s->cap_kind, n - s->kind_base + 1, 1))
			return q42_err_set(err, Q42_ENOMEM, "%s: out of memory at frame %llu",
					   s->name, (unsigned long long)seq);
		if (leaf)
			memcpy(s->last_leaf, leaf, Q42_MERKLE_HASH_LEN);
		else if ((rc = q42_merkle_leaf(p, len, s->last_leaf, err)) != Q42_OK)
			return rc;
		if ((rc = q42_merkle_range_push(&s->range, s->last_leaf, s->last_nodes,
						    &s->last_n_nodes, err)) != Q42_OK)
			return rc;
		s->kind[n - s->kind_base] = p[0];
		s->last_kind = p[0];
		fr->leaf = n;
		s->n_leaves = n + 1;
	} else if (type == Q42_VOL_F_PENDING) {
		uint64_t n = s->n_pending;
		if (!grow((void **)&s->pending, &s->cap_pending, n + 1, sizeof *s->pending))
			return q42_err_set(err, Q42_ENOMEM, "%s: out of memory at frame %llu",
					   s->name, (unsigned long long)seq);
		q42_vol_pending *pd = &s->pending[n];
		memset(pd, 0, sizeof *pd);
		pd->seq = seq;
		pd->leaf = Q42_VOL_NONE;
		pd->offset = off;
		pd->length = len;
		memcpy(pd->hash, fr->hash, Q42_MERKLE_HASH_LEN);
		if ((rc = payload_digest(p, len, pd->digest, err)) != Q42_OK)
			return rc;
		fr->pending = n;
		s->n_pending = n + 1;
	}
	memcpy(s->prev, fr->hash, Q42_MERKLE_HASH_LEN);
	s->n_frames = seq + 1;
	s->end = off + total;
	return Q42_OK;
}

/* ---- The in-memory reader: a scan that also keeps every frame ----------- */


int q42_volume_parse(q42_volume *v, const uint8_t *data, uint64_t size, const char *name,
		     q42_err *err)
{
	q42_volscan s;
	uint64_t cap_frames = 0, cap_leaves = 0, cap_lf = 0;
	int rc;
	memset(v, 0, sizeof *v);
	memset(&s, 0, sizeof s);
	v->data = data;
	v->size = size;
	name = name ? name : "volume";
	if (size < Q42_VOL_HEADER_SIZE)
		return q42_err_set(err, Q42_EFORMAT, "%s: header: file has %llu bytes, expected at least %u",
				   name, (unsigned long long)size, Q42_VOL_HEADER_SIZE);
	if ((rc = q42_volscan_header(&s, data, name, err)) != Q42_OK) {
		v->version = s.version;
		return rc;
	}
	v->version = s.version;
	memcpy(v->id, s.id, Q42_VOL_ID_LEN);
	v->created = s.created;
	v->header_ok = true;
	v->valid_end = s.end;
	while (s.end < size) {
		rc = q42_volscan_frame(&s, data + s.end, size - s.end, err);
		if (rc == Q42_OK) {
			uint64_t seq = s.n_frames - 1;
			if (!grow((void **)&v->frames, &cap_frames, seq + 1, sizeof *v->frames)) {
				rc = q42_err_set(err, Q42_ENOMEM, "%s: out of memory at frame %llu",
						 name, (unsigned long long)seq);
				goto out;
			}
			v->frames[seq] = s.last;
			if (s.last.type == Q42_VOL_F_ENTRY) {
				uint64_t n = s.n_leaves - 1;
				if (!grow((void **)&v->leaves, &cap_leaves, n + 1, sizeof *v->leaves) ||
				    !grow((void **)&v->leaf_frame, &cap_lf, n + 1, sizeof *v->leaf_frame)) {
					rc = q42_err_set(err, Q42_ENOMEM, "%s: out of memory at frame %llu",
							 name, (unsigned long long)seq);
					goto out;
				}
				memcpy(v->leaves[n], s.last_leaf, Q42_MERKLE_HASH_LEN);
				v->leaf_frame[n] = seq;
			}
			v->n_frames = s.n_frames;
			v->n_leaves = s.n_leaves;
			v->valid_end = s.end;
			continue;
		}
		if (rc == Q42_EFORMAT) {
			v->tail_bad = true;
			v->tail_short = s.short_frame;
			v->bad_frame = s.n_frames;
			v->bad_end = s.bad_end;
		}
		goto out;
	}
	if (s.n_frames == 0)
		rc = q42_err_set(err, Q42_EFORMAT, "%s: frame 0 at offset 64: missing config frame",
				 name);
out:
	v->config = s.config;
	v->leaf_kind = s.kind;
	v->pending = s.pending;
	v->n_pending = s.n_pending;
	s.kind = NULL;
	s.pending = NULL;
	q42_volscan_free(&s);
	return rc;
}

int q42_volscan_frame(q42_volscan *s, const uint8_t *f, uint64_t avail, q42_err *err)
{
	return scan_frame(s, f, avail, NULL, NULL, err);
}

int q42_volscan_frame_hashed(q42_volscan *s, const uint8_t *f, uint64_t avail,
			     const q42_hash fh, const q42_hash leaf, q42_err *err)
{
	return scan_frame(s, f, avail, fh, leaf, err);
}
