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

typedef struct parse_state {
	q42_volume *v;
	const char *name;
	uint64_t cap_frames, cap_leaves, cap_kind, cap_lf, cap_pending;
	uint8_t prev[Q42_MERKLE_HASH_LEN];
} parse_state;

#define FRAME_FAIL(...)                                                                    \
	do {                                                                               \
		q42_err_set(err, Q42_EFORMAT, __VA_ARGS__);                                 \
		q42_err_prefix(err, "%s: frame %llu at offset %llu", st->name,             \
			       (unsigned long long)seq, (unsigned long long)off);          \
		return Q42_EFORMAT;                                                        \
	} while (0)

static int check_config(parse_state *st, uint64_t seq, uint64_t off, const uint8_t *p,
			uint32_t len, q42_err *err)
{
	q42_vol_config *c = &st->v->config;
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

static int check_entry(parse_state *st, uint64_t seq, uint64_t off, uint16_t type,
		       const uint8_t *p, uint32_t len, q42_err *err)
{
	q42_volume *v = st->v;
	if (len < Q42_VOL_ENTRY_HEAD + 1)
		FRAME_FAIL("%s: payload of %u bytes, expected at least %u",
			   q42_vol_frame_type_name(type), len, Q42_VOL_ENTRY_HEAD + 1);
	uint32_t kind = p[0];
	uint64_t ref = q42_ld64(p + 8), review = q42_ld64(p + 16);
	if (!all_zero(p + 1, 7))
		FRAME_FAIL("%s: reserved bytes 1..7 are not zero", q42_vol_frame_type_name(type));
	switch (kind) {
	case Q42_VOL_K_RECORD:
		if (ref != Q42_VOL_NONE &&
		    (ref >= v->n_leaves || v->leaf_kind[ref] != Q42_VOL_K_BINDING))
			FRAME_FAIL("record: binding reference %llu is not a binding entry",
				   (unsigned long long)ref);
		break;
	case Q42_VOL_K_QUIN:
		if (ref >= v->n_leaves || v->leaf_kind[ref] != Q42_VOL_K_RECORD)
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
		if (v->config.quorum == 0)
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
	if (review >= seq || v->frames[review].type != Q42_VOL_F_PENDING)
		FRAME_FAIL("entry: review reference %llu is not a pending frame",
			   (unsigned long long)review);
	q42_vol_frame *pf = &v->frames[review];
	q42_vol_pending *pd = &v->pending[pf->pending];
	if (pd->state != Q42_VOL_P_OPEN)
		FRAME_FAIL("entry: pending frame %llu was already %s", (unsigned long long)review,
			   pd->state == Q42_VOL_P_COMMITTED ? "committed" : "rejected");
	if (pd->approvals < v->config.quorum)
		FRAME_FAIL("entry: pending frame %llu has %u approvals, quorum is %u",
			   (unsigned long long)review, pd->approvals, v->config.quorum);
	const uint8_t *pp = v->data + pf->payload_off;
	if (pf->length != len || memcmp(pp, p, 16) != 0 ||
	    memcmp(pp + Q42_VOL_ENTRY_HEAD, p + Q42_VOL_ENTRY_HEAD, len - Q42_VOL_ENTRY_HEAD) != 0)
		FRAME_FAIL("entry: differs from the pending frame %llu it commits",
			   (unsigned long long)review);
	pd->state = Q42_VOL_P_COMMITTED;
	pd->leaf = v->n_leaves;
	return Q42_OK;
}

static int check_vote(parse_state *st, uint64_t seq, uint64_t off, const uint8_t *p,
		      uint32_t len, q42_err *err)
{
	q42_volume *v = st->v;
	q42_err e2;
	if (len != Q42_VOL_VOTE_SIZE)
		FRAME_FAIL("vote: payload of %u bytes, expected %u", len, Q42_VOL_VOTE_SIZE);
	uint64_t ps = q42_ld64(p);
	uint32_t decision = p[8];
	if (decision != Q42_VOL_APPROVE && decision != Q42_VOL_REJECT)
		FRAME_FAIL("vote: decision %u is neither 1 (approve) nor 2 (reject)", decision);
	if (!all_zero(p + 9, 7))
		FRAME_FAIL("vote: reserved bytes 9..15 are not zero");
	if (ps >= seq || v->frames[ps].type != Q42_VOL_F_PENDING)
		FRAME_FAIL("vote: frame %llu is not a pending frame", (unsigned long long)ps);
	q42_vol_pending *pd = &v->pending[v->frames[ps].pending];
	if (pd->state != Q42_VOL_P_OPEN)
		FRAME_FAIL("vote: pending frame %llu is already %s", (unsigned long long)ps,
			   pd->state == Q42_VOL_P_COMMITTED ? "committed" : "rejected");
	uint32_t ki;
	for (ki = 0; ki < v->config.n_keys; ki++)
		if (!memcmp(v->config.keys[ki], p + 16, Q42_VOL_ED25519_KEY_LEN))
			break;
	if (ki == v->config.n_keys)
		FRAME_FAIL("vote: the signing key is not one of the configured review keys");
	if (pd->voted & (1u << ki))
		FRAME_FAIL("vote: review key %u already voted on pending frame %llu", ki,
			   (unsigned long long)ps);
	uint8_t msg[Q42_VOL_VOTE_MSG_LEN];
	q42_vol_vote_message(v->id, ps, v->frames[ps].hash, decision, msg);
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
		if (pd->rejections > v->config.n_keys - v->config.quorum)
			pd->state = Q42_VOL_P_REJECTED;
	}
	return Q42_OK;
}

/* Validate one frame at off; on success record it and return its end in *end. */
static int parse_frame(parse_state *st, uint64_t off, uint64_t *end, q42_err *err)
{
	q42_volume *v = st->v;
	uint64_t seq = v->n_frames, avail = v->size - off, total;
	const uint8_t *f = v->data + off;
	int rc;
	v->bad_end = v->size;
	if (avail < Q42_VOL_FRAME_HEAD) {
		v->tail_short = true;
		FRAME_FAIL("truncated: %llu of the %u head bytes present", (unsigned long long)avail,
			   Q42_VOL_FRAME_HEAD);
	}
	uint32_t len = q42_ld32(f);
	uint16_t type = q42_ld16(f + 4), flags = q42_ld16(f + 6);
	if (len > Q42_VOL_MAX_PAYLOAD)
		FRAME_FAIL("length %u exceeds the %u-byte payload cap", len, Q42_VOL_MAX_PAYLOAD);
	total = (uint64_t)Q42_VOL_FRAME_OVERHEAD + len;
	if (avail < total) {
		v->tail_short = true;
		FRAME_FAIL("truncated: %llu of %llu bytes present", (unsigned long long)avail,
			   (unsigned long long)total);
	}
	v->bad_end = off + total;
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
	if (memcmp(f + 16, st->prev, Q42_MERKLE_HASH_LEN) != 0)
		FRAME_FAIL("link does not match the hash of the previous %s",
			   seq ? "frame" : "header");
#endif
	if ((seq == 0) != (type == Q42_VOL_F_CONFIG))
		FRAME_FAIL("type %u (%s): frame 0 must be the config frame and only frame 0", type,
			   q42_vol_frame_type_name(type));
	const uint8_t *p = f + Q42_VOL_FRAME_HEAD;
	switch (type) {
	case Q42_VOL_F_CONFIG:
		rc = check_config(st, seq, off, p, len, err);
		break;
	case Q42_VOL_F_ENTRY:
	case Q42_VOL_F_PENDING:
		rc = check_entry(st, seq, off, type, p, len, err);
		break;
	case Q42_VOL_F_VOTE:
		rc = check_vote(st, seq, off, p, len, err);
		break;
	default:
		FRAME_FAIL("unknown frame type %u", type);
	}
	if (rc != Q42_OK)
		return rc;

	if (!grow((void **)&v->frames, &st->cap_frames, seq + 1, sizeof *v->frames))
		return q42_err_set(err, Q42_ENOMEM, "%s: out of memory at frame %llu", st->name,
				   (unsigned long long)seq);
	q42_vol_frame *fr = &v->frames[seq];
	fr->offset = off;
	fr->length = len;
	fr->type = type;
	fr->payload_off = off + Q42_VOL_FRAME_HEAD;
	fr->leaf = Q42_VOL_NONE;
	fr->pending = Q42_VOL_NONE;
	if ((rc = q42_sha256(f, total, fr->hash, err)) != Q42_OK)
		return rc;
	if (type == Q42_VOL_F_ENTRY) {
		uint64_t n = v->n_leaves;
		if (!grow((void **)&v->leaves, &st->cap_leaves, n + 1, sizeof *v->leaves) ||
		    !grow((void **)&v->leaf_frame, &st->cap_lf, n + 1, sizeof *v->leaf_frame) ||
		    !grow((void **)&v->leaf_kind, &st->cap_kind, n + 1, 1))
			return q42_err_set(err, Q42_ENOMEM, "%s: out of memory at frame %llu",
					   st->name, (unsigned long long)seq);
		if ((rc = q42_merkle_leaf(p, len, v->leaves[n], err)) != Q42_OK)
			return rc;
		v->leaf_frame[n] = seq;
		v->leaf_kind[n] = p[0];
		fr->leaf = n;
		v->n_leaves = n + 1;
	} else if (type == Q42_VOL_F_PENDING) {
		uint64_t n = v->n_pending;
		if (!grow((void **)&v->pending, &st->cap_pending, n + 1, sizeof *v->pending))
			return q42_err_set(err, Q42_ENOMEM, "%s: out of memory at frame %llu",
					   st->name, (unsigned long long)seq);
		memset(&v->pending[n], 0, sizeof v->pending[n]);
		v->pending[n].seq = seq;
		v->pending[n].leaf = Q42_VOL_NONE;
		fr->pending = n;
		v->n_pending = n + 1;
	}
	memcpy(st->prev, fr->hash, Q42_MERKLE_HASH_LEN);
	v->n_frames = seq + 1;
	*end = off + total;
	return Q42_OK;
}

int q42_volume_parse(q42_volume *v, const uint8_t *data, uint64_t size, const char *name,
		     q42_err *err)
{
	parse_state st = {.v = v, .name = name ? name : "volume"};
	int rc;
	memset(v, 0, sizeof *v);
	v->data = data;
	v->size = size;
	if (size < Q42_VOL_HEADER_SIZE)
		return q42_err_set(err, Q42_EFORMAT, "%s: header: file has %llu bytes, expected at least %u",
				   st.name, (unsigned long long)size, Q42_VOL_HEADER_SIZE);
	if (memcmp(data, Q42_VOL_MAGIC, 4) != 0)
		return q42_err_set(err, Q42_EFORMAT, "%s: header: magic is not \"Q42\\0\"", st.name);
	uint32_t hcrc = q42_crc32c(0, data, 60);
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	if (q42_ld32(data + 60) != hcrc)
		return q42_err_set(err, Q42_EFORMAT,
				   "%s: header: CRC-32C: stored 0x%08x, computed 0x%08x", st.name,
				   q42_ld32(data + 60), hcrc);
#else
	(void)hcrc;
#endif
	v->version = q42_ld32(data + 4);
	if (v->version != Q42_VOL_VERSION)
		return q42_err_set(err, Q42_EUNSUPPORTED, "%s: header: version %u, this reader knows %u",
				   st.name, v->version, Q42_VOL_VERSION);
	if (q42_ld32(data + 8) != Q42_VOL_HEADER_SIZE || q42_ld32(data + 12) != 0 ||
	    !all_zero(data + 40, 20))
		return q42_err_set(err, Q42_EFORMAT,
				   "%s: header: size field, flags or reserved bytes 40..59 are not as "
				   "specified (64, 0, zeros)", st.name);
	memcpy(v->id, data + 16, Q42_VOL_ID_LEN);
	v->created = q42_ld64(data + 32);
	if ((rc = q42_sha256(data, Q42_VOL_HEADER_SIZE, st.prev, err)) != Q42_OK)
		return rc;
	v->header_ok = true;
	uint64_t off = Q42_VOL_HEADER_SIZE;
	v->valid_end = off;
	while (off < size) {
		uint64_t end = off;
		rc = parse_frame(&st, off, &end, err);
		if (rc == Q42_ENOMEM)
			return rc;
		if (rc != Q42_OK) {
			v->tail_bad = true;
			v->bad_frame = v->n_frames;
			return rc;
		}
		off = end;
		v->valid_end = off;
	}
	if (v->n_frames == 0)
		return q42_err_set(err, Q42_EFORMAT, "%s: frame 0 at offset 64: missing config frame",
				   st.name);
	return Q42_OK;
}
