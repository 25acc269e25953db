/* q42_merkle.c -- RFC 6962 tree hashing, audit paths and consistency proofs.
 *
 * The recursions follow the RFC's definitions directly (MTH, PATH, PROOF);
 * their depth is at most 64, and each level hashes each leaf at most once,
 * so a proof costs O(n) hashes. Hashing goes through OpenSSL's EVP so the
 * same SHA-256 serves the volume format and the tree. See q42-volume(5).
 */
#include <openssl/evp.h>
#include <string.h>
#include "wal/q42_merkle.h"

static int hash2(uint8_t prefix, const void *a, uint64_t an, const void *b, uint64_t bn,
		 q42_hash out, q42_err *err)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int rc = Q42_OK;
	if (!ctx)
		return q42_err_set(err, Q42_ENOMEM, "merkle: cannot allocate a digest context");
	if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(ctx, &prefix, 1) != 1 ||
	    (an > 0 && EVP_DigestUpdate(ctx, a, (size_t)an) != 1) ||
	    (bn > 0 && EVP_DigestUpdate(ctx, b, (size_t)bn) != 1) ||
	    EVP_DigestFinal_ex(ctx, out, NULL) != 1)
		rc = q42_err_set(err, Q42_EUNSUPPORTED, "merkle: SHA-256 failed in libcrypto");
	EVP_MD_CTX_free(ctx);
	return rc;
}

int q42_merkle_leaf(const void *data, uint64_t n, q42_hash out, q42_err *err)
{
	return hash2(0x00, data, n, NULL, 0, out, err);
}

int q42_merkle_node(const q42_hash left, const q42_hash right, q42_hash out, q42_err *err)
{
	return hash2(0x01, left, Q42_MERKLE_HASH_LEN, right, Q42_MERKLE_HASH_LEN, out, err);
}

/* Largest power of two strictly below n (n >= 2). */
static uint64_t split_point(uint64_t n)
{
	uint64_t k = 1;
	while (k << 1 < n)
		k <<= 1;
	return k;
}

int q42_merkle_root(const q42_hash *leaves, uint64_t n, q42_hash out, q42_err *err)
{
	q42_hash l, r;
	int rc;
	if (n == 0) {
		uint8_t none = 0;
		EVP_MD_CTX *ctx = EVP_MD_CTX_new();
		if (!ctx)
			return q42_err_set(err, Q42_ENOMEM, "merkle: cannot allocate a digest context");
		rc = Q42_OK;
		if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1 ||
		    EVP_DigestUpdate(ctx, &none, 0) != 1 || EVP_DigestFinal_ex(ctx, out, NULL) != 1)
			rc = q42_err_set(err, Q42_EUNSUPPORTED, "merkle: SHA-256 failed in libcrypto");
		EVP_MD_CTX_free(ctx);
		return rc;
	}
	if (n == 1) {
		memcpy(out, leaves[0], Q42_MERKLE_HASH_LEN);
		return Q42_OK;
	}
	uint64_t k = split_point(n);
	if ((rc = q42_merkle_root(leaves, k, l, err)) != Q42_OK ||
	    (rc = q42_merkle_root(leaves + k, n - k, r, err)) != Q42_OK)
		return rc;
	return q42_merkle_node(l, r, out, err);
}

int q42_merkle_path(const q42_hash *leaves, uint64_t n, uint64_t m,
		    q42_hash path[Q42_MERKLE_MAX_PATH], uint32_t *len, q42_err *err)
{
	/* Walk down from the root, remembering the sibling subtree of each
	 * level; the RFC lists them leaf side first, so emit in reverse. */
	uint64_t lo[Q42_MERKLE_MAX_PATH], cnt[Q42_MERKLE_MAX_PATH];
	uint32_t depth = 0;
	int rc;
	*len = 0;
	if (m >= n)
		return q42_err_set(err, Q42_EARG, "merkle: leaf %llu is outside a tree of %llu leaves",
				   (unsigned long long)m, (unsigned long long)n);
	uint64_t base = 0;
	while (n > 1) {
		uint64_t k = split_point(n);
		if (m < k) {
			lo[depth] = base + k;
			cnt[depth] = n - k;
			n = k;
		} else {
			lo[depth] = base;
			cnt[depth] = k;
			base += k;
			m -= k;
			n -= k;
		}
		depth++;
	}
	for (uint32_t i = 0; i < depth; i++) {
		uint32_t d = depth - 1 - i;
		if ((rc = q42_merkle_root(leaves + lo[d], cnt[d], path[i], err)) != Q42_OK)
			return rc;
	}
	*len = depth;
	return Q42_OK;
}

/* SUBPROOF(m, D[lo, lo + n), b) of RFC 6962 section 2.1.2, appended to proof. */
static int subproof(const q42_hash *leaves, uint64_t n, uint64_t m, int complete,
		    q42_hash *proof, uint32_t *len, q42_err *err)
{
	int rc;
	if (m == n) {
		if (complete)
			return Q42_OK;
		if (*len >= Q42_MERKLE_MAX_CONSISTENCY)
			return q42_err_set(err, Q42_EARG, "merkle: consistency proof too long");
		return q42_merkle_root(leaves, n, proof[(*len)++], err);
	}
	uint64_t k = split_point(n);
	if (m <= k) {
		if ((rc = subproof(leaves, k, m, complete, proof, len, err)) != Q42_OK)
			return rc;
		if (*len >= Q42_MERKLE_MAX_CONSISTENCY)
			return q42_err_set(err, Q42_EARG, "merkle: consistency proof too long");
		return q42_merkle_root(leaves + k, n - k, proof[(*len)++], err);
	}
	if ((rc = subproof(leaves + k, n - k, m - k, 0, proof, len, err)) != Q42_OK)
		return rc;
	if (*len >= Q42_MERKLE_MAX_CONSISTENCY)
		return q42_err_set(err, Q42_EARG, "merkle: consistency proof too long");
	return q42_merkle_root(leaves, k, proof[(*len)++], err);
}

int q42_merkle_consistency(const q42_hash *leaves, uint64_t n, uint64_t m,
			   q42_hash proof[Q42_MERKLE_MAX_CONSISTENCY], uint32_t *len,
			   q42_err *err)
{
	*len = 0;
	if (m == 0 || m > n)
		return q42_err_set(err, Q42_EARG,
				   "merkle: consistency needs 0 < old size <= new size (old %llu, new %llu)",
				   (unsigned long long)m, (unsigned long long)n);
	return subproof(leaves, n, m, 1, proof, len, err);
}
