/* q42_walrec.c -- what q42wal commits: q42-record(5) lines, their quins,
 * and review votes.
 *
 * A record is stored byte for byte as it arrived (so its digest survives),
 * after checking that it is one JSON object of schema q42-record/1; its
 * quins are stored in canonical N-Quads form (formats in q42-policy(5),
 * QUINS), each as an entry referring to the record. A record sent to
 * review waits as a pending frame until the configured quorum approves.
 * Nothing here prints; nothing is staged for a record that fails a check.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include "common/q42_le.h"
#include "formats/q42_digest.h"
#include "formats/q42_quin.h"
#include "wal/q42_wal.h"
#include "wal/q42_wal_impl.h"
#include "wal/q42_walidx.h"

/* Decode a 64-digit hex member at obj.key into out; false when absent/bad. */
static bool hex_member(json_t *obj, const char *key, uint8_t out[32])
{
	json_t *s = json_object_get(obj, key);
	return json_is_string(s) && json_string_length(s) == 64 &&
	       q42_hex_decode(json_string_value(s), out, 32, NULL) == Q42_OK;
}

/* Canonical N-Quads of every quin in the record ("quin": a string, or
 * "quins": an array of strings, each one or more statements). */
static int record_quins(json_t *rec, q42_buf *canon, uint64_t *ends, uint32_t *n, q42_err *err)
{
	json_t *fields[2] = {json_object_get(rec, "quin"), json_object_get(rec, "quins")};
	*n = 0;
	for (int fi = 0; fi < 2; fi++) {
		json_t *f = fields[fi];
		if (!f || json_is_null(f))
			continue;
		size_t count = json_is_array(f) ? json_array_size(f) : 1;
		for (size_t i = 0; i < count; i++) {
			json_t *s = json_is_array(f) ? json_array_get(f, i) : f;
			if (!json_is_string(s))
				return q42_err_set(err, Q42_EFORMAT, "record: \"%s\"%s is not a string "
						   "of N-Quads", fi ? "quins" : "quin",
						   json_is_array(f) ? " element" : "");
			q42_quin_reader r;
			q42_quin_reader_init(&r, json_string_value(s), json_string_length(s),
					     Q42_SYNTAX_QUINS);
			for (;;) {
				q42_quin q;
				bool eof = false;
				q42_quin_init(&q);
				int rc = q42_quin_reader_next(&r, &q, &eof, err);
				if (rc != Q42_OK) {
					q42_err_prefix(err, "record: %s", fi ? "quins" : "quin");
					return rc;
				}
				if (eof)
					break;
				if (*n >= Q42_WAL_MAX_QUINS) {
					q42_quin_free(&q);
					return q42_err_set(err, Q42_EFORMAT,
							   "record: more than %u quins",
							   Q42_WAL_MAX_QUINS);
				}
				bool ok = q42_quin_write(canon, &q);
				q42_quin_free(&q);
				if (!ok)
					return q42_err_set(err, Q42_ENOMEM, "out of memory");
				ends[(*n)++] = canon->len;
			}
		}
	}
	return Q42_OK;
}

/* Does the record's verdict send it to review? (q42grd writes
 * "verdict": {"decision": "review", ...}.) */
static bool wants_review(json_t *rec)
{
	json_t *v = json_object_get(rec, "verdict");
	json_t *d = json_is_object(v) ? json_object_get(v, "decision") : v;
	return json_is_string(d) && strcmp(json_string_value(d), "review") == 0;
}

/* Stage the quin entries of the record that became leaf `record`. */
static int stage_quins(q42_wal *w, const q42_buf *canon, const uint64_t *ends, uint32_t n,
		       uint64_t record, q42_wal_ack *acks, uint32_t *n_acks, q42_err *err)
{
	uint64_t start = 0;
	for (uint32_t i = 0; i < n; i++) {
		q42_wal_ack *a = &acks[(*n_acks)++];
		a->kind = Q42_VOL_K_QUIN;
		a->pending = false;
		int rc = q42_wal_stage(w, Q42_VOL_F_ENTRY, Q42_VOL_K_QUIN, record, Q42_VOL_NONE,
				       canon->data + start, ends[i] - start, &a->index, a->hash, err);
		if (rc != Q42_OK)
			return rc;
		start = ends[i];
	}
	return Q42_OK;
}

/* Parse and check one record line; fills the binding ref and quins. */
static int record_check(q42_wal *w, const char *line, uint64_t len, json_t **out,
			uint64_t *binding, q42_buf *canon, uint64_t *ends, uint32_t *nq,
			q42_err *err)
{
	json_error_t je;
	json_t *rec = json_loadb(line, (size_t)len, JSON_REJECT_DUPLICATES, &je);
	*out = NULL;
	if (!rec)
		return q42_err_set(err, Q42_EFORMAT, "record: not JSON: line 1, column %d: %s",
				   je.column, je.text);
	if (!json_is_object(rec)) {
		json_decref(rec);
		return q42_err_set(err, Q42_EFORMAT, "record: not a JSON object");
	}
	json_t *schema = json_object_get(rec, "schema");
	if (!json_is_string(schema) || strcmp(json_string_value(schema), "q42-record/1") != 0) {
		json_decref(rec);
		return q42_err_set(err, Q42_EFORMAT,
				   "record: \"schema\" is not \"q42-record/1\"");
	}
	int rc = record_quins(rec, canon, ends, nq, err);
	if (rc != Q42_OK) {
		json_decref(rec);
		return rc;
	}
	uint8_t p64[32], src[32];
	json_t *model = json_object_get(rec, "model");
	bool has_p64 = false, has_src = false;
	if (json_is_object(model)) {
		json_t *c = json_object_get(model, "container");
		has_p64 = json_is_string(c) && !strcmp(json_string_value(c), "p64") &&
			  hex_member(model, "sha256", p64);
		has_src = hex_member(model, "source_sha256", src);
	}
	*binding = q42_wal_find_binding(w, has_p64 ? p64 : NULL, has_src ? src : NULL);
	*out = rec;
	return Q42_OK;
}

int q42_wal_stage_record(q42_wal *w, const char *line, uint64_t len, bool review,
			 q42_wal_ack *acks, uint32_t *n_acks, q42_err *err)
{
	q42_buf canon;
	uint64_t ends[Q42_WAL_MAX_QUINS], binding;
	uint32_t nq = 0;
	json_t *rec = NULL;
	int rc;
	*n_acks = 0;
	q42_buf_init(&canon);
	if ((rc = record_check(w, line, len, &rec, &binding, &canon, ends, &nq, err)) != Q42_OK)
		goto fail;
	if (wants_review(rec))
		review = true;
	if (review && w->config.quorum == 0) {
		rc = q42_err_set(err, Q42_EFORMAT,
				 "record: sent to review, but the volume has no review keys "
				 "(q42wal init --review-key)");
		goto fail;
	}
	q42_wal_ack *a = &acks[(*n_acks)++];
	a->kind = Q42_VOL_K_RECORD;
	a->pending = review;
	rc = q42_wal_stage(w, review ? Q42_VOL_F_PENDING : Q42_VOL_F_ENTRY, Q42_VOL_K_RECORD,
			   binding, Q42_VOL_NONE, line, len, &a->index, a->hash, err);
	if (rc == Q42_OK && !review)
		rc = stage_quins(w, &canon, ends, nq, a->index, acks, n_acks, err);
fail:
	json_decref(rec);
	q42_buf_free(&canon);
	return rc;
}

int q42_wal_vote(q42_wal *w, uint64_t seq, uint32_t decision, const char *key_pem,
		 uint32_t *state, q42_wal_ack *acks, uint32_t *n_acks, q42_err *err)
{
	const q42_vol_config *cfg = &w->config;
	uint8_t key[Q42_VOL_ED25519_KEY_LEN], msg[Q42_VOL_VOTE_MSG_LEN], payload[Q42_VOL_VOTE_SIZE];
	uint8_t *pframe = NULL;
	int rc;
	*n_acks = 0;
	/* The writer holds the review state of every pending frame (from
	 * VOL.rev and the frames after it, or from frame 0). */
	const q42_vol_pending *found = w->review ? q42_volscan_pending(&w->st->scan, seq) : NULL;
	if (!found) {
		rc = q42_err_set(err, Q42_ENOTFOUND, "frame %llu is not a pending record",
				 (unsigned long long)seq);
		goto out;
	}
	q42_vol_pending pd = *found;
	if (pd.state != Q42_VOL_P_OPEN) {
		rc = q42_err_set(err, Q42_EARG, "pending record %llu is already %s",
				 (unsigned long long)seq,
				 pd.state == Q42_VOL_P_COMMITTED ? "committed" : "rejected");
		goto out;
	}
	if ((rc = q42_vol_ed25519_pubkey(key_pem, key, err)) != Q42_OK)
		goto out;
	uint32_t ki;
	for (ki = 0; ki < cfg->n_keys; ki++)
		if (!memcmp(cfg->keys[ki], key, sizeof key))
			break;
	if (ki == cfg->n_keys) {
		rc = q42_err_set(err, Q42_EARG, "%s: not one of the volume's review keys", key_pem);
		goto out;
	}
	/* A quorum reached by votes whose commit frame was lost to a crash is
	 * completed by the next approver without a further vote. */
	bool quorum_done = pd.approvals >= cfg->quorum;
	if (!quorum_done) {
		if (pd.voted & (1u << ki)) {
			rc = q42_err_set(err, Q42_EARG, "%s: this key already voted on %llu",
					 key_pem, (unsigned long long)seq);
			goto out;
		}
		q42_vol_vote_message(w->id, seq, pd.hash, decision, msg);
		memset(payload, 0, sizeof payload);
		q42_st64(payload, seq);
		payload[8] = (uint8_t)decision;
		memcpy(payload + 16, key, sizeof key);
		if ((rc = q42_ed25519_sign(key_pem, msg, sizeof msg, payload + 48, err)) != Q42_OK)
			goto out;
		if ((rc = q42_wal_stage_vote_frame(w, payload, err)) != Q42_OK)
			goto out;
		if (decision == Q42_VOL_APPROVE)
			pd.approvals++;
		else
			pd.rejections++;
	} else if (decision != Q42_VOL_APPROVE) {
		rc = q42_err_set(err, Q42_EARG, "pending record %llu already has its quorum",
				 (unsigned long long)seq);
		goto out;
	}
	*state = Q42_VOL_P_OPEN;
	if (pd.rejections > cfg->n_keys - cfg->quorum)
		*state = Q42_VOL_P_REJECTED;
	if (pd.approvals >= cfg->quorum) {
		q42_buf canon;
		uint64_t ends[Q42_WAL_MAX_QUINS], binding;
		uint32_t nq = 0;
		json_t *rec = NULL;
		/* The pending frame itself, checked against the hash the review
		 * state names: the entry must repeat its payload exactly. */
		uint64_t total = (uint64_t)Q42_VOL_FRAME_OVERHEAD + pd.length;
		q42_hash fh;
		pframe = malloc((size_t)total);
		if (!pframe) {
			rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
			q42_wal_discard(w);
			goto out;
		}
		if ((rc = q42_wal_pread(w->fd, w->path, pframe, total, pd.offset, err)) != Q42_OK ||
		    (rc = q42_sha256(pframe, total, fh, err)) != Q42_OK) {
			q42_wal_discard(w);
			goto out;
		}
		if (memcmp(fh, pd.hash, sizeof fh) != 0 || q42_ld64(pframe + 8) != seq) {
			rc = q42_err_set(err, Q42_EFORMAT,
					 "%s: pending frame %llu at offset %llu does not hash to the "
					 "review state's hash (`q42wal verify` tells which is wrong)",
					 w->path, (unsigned long long)seq, (unsigned long long)pd.offset);
			q42_wal_discard(w);
			goto out;
		}
		const uint8_t *pbody = pframe + Q42_VOL_FRAME_HEAD;
		const uint8_t *body = pbody + Q42_VOL_ENTRY_HEAD;
		uint64_t body_len = pd.length - Q42_VOL_ENTRY_HEAD;
		q42_buf_init(&canon);
		rc = record_check(w, (const char *)body, body_len, &rec, &binding, &canon, ends, &nq,
				  err);
		if (rc == Q42_OK) {
			q42_wal_ack *a = &acks[(*n_acks)++];
			a->kind = Q42_VOL_K_RECORD;
			a->pending = false;
			/* The entry must repeat the pending payload exactly, so the
			 * binding reference is the one recorded when it was suspended. */
			rc = q42_wal_stage(w, Q42_VOL_F_ENTRY, pbody[0], q42_ld64(pbody + 8), seq, body,
					   body_len, &a->index, a->hash, err);
			if (rc == Q42_OK)
				rc = stage_quins(w, &canon, ends, nq, a->index, acks, n_acks, err);
		}
		json_decref(rec);
		q42_buf_free(&canon);
		if (rc != Q42_OK) {
			q42_wal_discard(w);
			goto out;
		}
		*state = Q42_VOL_P_COMMITTED;
	}
	rc = q42_wal_flush(w, err);
out:
	free(pframe);
	return rc;
}
