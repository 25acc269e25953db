/* q42_walcheck.c -- checks of a volume against what lies outside it: a tree
 * head (q42wal verify --head: size, root and Ed25519 signature) and the
 * model bindings its records name (verify --outputs). They live in the
 * library, not in q42wal, so any reader of a volume checks them the same
 * way; the program only prints.
 */
#include <jansson.h>
#include <string.h>
#include "formats/q42_digest.h"
#include "formats/q42_lora.h"
#include "wal/q42_wal.h"

int q42_wal_check_head(q42_wal_reader *r, const char *head_path, const char *pub_pem,
		       q42_err *err)
{
	json_error_t je;
	uint8_t root[32], want[32], key[32], sig[64];
	int rc = Q42_EFORMAT;
	json_t *h = json_load_file(head_path, 0, &je);
	if (!h)
		return q42_err_set(err, Q42_EFORMAT, "%s: line %d: %s", head_path, je.line, je.text);
	json_t *js = json_object_get(h, "size"), *jr = json_object_get(h, "root");
	json_t *jk = json_object_get(h, "key"), *jg = json_object_get(h, "signature");
	if (!json_is_integer(js) || json_integer_value(js) < 0 || !json_is_string(jr) ||
	    q42_hex_decode(json_string_value(jr), want, 32, NULL) != Q42_OK) {
		q42_err_set(err, Q42_EFORMAT, "%s: needs \"size\" (integer) and \"root\" (64 hex)",
			    head_path);
		goto out;
	}
	const uint64_t size = (uint64_t)json_integer_value(js);
	if (size > r->n_leaves) {
		q42_err_set(err, Q42_EFORMAT, "head size %llu exceeds the volume's %llu entries",
			    (unsigned long long)size, (unsigned long long)r->n_leaves);
		goto out;
	}
	if (q42_wal_reader_root(r, size, root, NULL) != Q42_OK || memcmp(root, want, 32) != 0) {
		q42_err_set(err, Q42_EFORMAT,
			    "head root differs from the root of the first %llu entries",
			    (unsigned long long)size);
		goto out;
	}
	if (jg || pub_pem) {
		uint8_t msg[Q42_VOL_HEAD_MSG_LEN];
		if (!json_is_string(jk) || !json_is_string(jg) ||
		    q42_hex_decode(json_string_value(jk), key, 32, NULL) != Q42_OK ||
		    q42_hex_decode(json_string_value(jg), sig, 64, NULL) != Q42_OK) {
			q42_err_set(err, Q42_EFORMAT, "%s: unsigned, or key/signature malformed",
				    head_path);
			goto out;
		}
		if (pub_pem) {
			uint8_t pk[32];
			rc = q42_vol_ed25519_pubkey(pub_pem, pk, err);
			if (rc != Q42_OK)
				goto out;
			rc = Q42_EFORMAT;
			if (memcmp(pk, key, 32) != 0) {
				q42_err_set(err, Q42_EFORMAT, "head signed by another key than %s",
					    pub_pem);
				goto out;
			}
		}
		q42_vol_head_message(q42_wal_reader_id(r), size, root, msg);
		if (q42_vol_ed25519_verify_raw(key, msg, sizeof msg, sig, err) != Q42_OK) {
			q42_err_prefix(err, "head signature");
			goto out;
		}
	}
	rc = Q42_OK;
out:
	json_decref(h);
	return rc;
}

/* The adapter list a record names (model.lora: sha256 and scale, in
 * order) as q42_wal_lora_set, or "" when it names none; false when the
 * list is malformed. */
static bool record_lora_set(json_t *model, char out[65])
{
	json_t *a = json_object_get(model, "lora");
	const char *sha[Q42_LORA_MAX];
	float scale[Q42_LORA_MAX];
	size_t n = json_array_size(a);
	out[0] = '\0';
	if (a == NULL)
		return true;
	if (!json_is_array(a) || n > Q42_LORA_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		json_t *e = json_array_get(a, i);
		sha[i] = json_string_value(json_object_get(e, "sha256"));
		scale[i] = (float)json_number_value(json_object_get(e, "scale"));
		if (sha[i] == NULL || strlen(sha[i]) != 64 || !json_is_number(json_object_get(e, "scale")))
			return false;
	}
	return n == 0 || q42_wal_lora_set(sha, scale, (uint32_t)n, out, NULL) == Q42_OK;
}

/* The loraSet a binding body states, or "" when it states none. */
static void binding_lora_set(const uint8_t *body, uint64_t len, char out[65])
{
	static const char key[] = "<https://q42.dev/ns/p64#loraSet> \"";
	const uint64_t n = sizeof key - 1;
	out[0] = '\0';
	for (uint64_t i = Q42_VOL_BINDING_HEAD; i + n + 64 <= len; i++)
		if (body[i] == '<' && memcmp(body + i, key, n) == 0) {
			memcpy(out, body + i + n, 64);
			out[64] = '\0';
			return;
		}
}

int q42_wal_check_bindings(q42_wal_reader *r, q42_wal_binding_fn fn, void *arg, uint64_t *bad,
			   q42_err *err)
{
	int rc = Q42_OK;
	*bad = 0;
	for (uint64_t i = 0; i < r->n_leaves && rc == Q42_OK; i++) {
		q42_vol_entry e, b;
		uint64_t seq;
		q42_hash leaf;
		if ((rc = q42_wal_reader_entry(r, i, &e, &seq, leaf, err)) != Q42_OK)
			break;
		if (e.kind != Q42_VOL_K_RECORD)
			continue;
		if (e.ref == Q42_VOL_NONE) {
			fn(arg, i, Q42_WAL_UNBOUND, Q42_VOL_NONE, NULL);
			(*bad)++;
			continue;
		}
		/* the record's model names, taken before the binding is read
		 * into the same buffer */
		uint64_t ref = e.ref;
		json_t *rec = json_loadb((const char *)e.body, (size_t)e.body_len, 0, NULL);
		json_t *m = rec ? json_object_get(rec, "model") : NULL;
		const char *ms = json_string_value(json_object_get(m, "sha256"));
		const char *ss = json_string_value(json_object_get(m, "source_sha256"));
		char p64[65], src[65], rset[65], bset[65];
		const bool rset_ok = record_lora_set(m, rset);
		if ((rc = q42_wal_reader_entry(r, ref, &b, &seq, leaf, err)) == Q42_OK) {
			q42_hex_encode(b.body, 32, p64);
			q42_hex_encode(b.body + 32, 32, src);
			binding_lora_set(b.body, b.body_len, bset);
			/* the same model, run with the adapters it was bound with */
			const bool ok = ((ms && !strcmp(ms, p64)) || (ss && !strcmp(ss, src))) &&
					rset_ok && !strcmp(rset, bset);
			fn(arg, i, ok ? Q42_WAL_BOUND : Q42_WAL_MISMATCH, ref, src);
			if (!ok)
				(*bad)++;
		}
		json_decref(rec);
	}
	return rc;
}
