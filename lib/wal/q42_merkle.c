/* q42_merkle.c -- RFC 6962 tree hashing, audit paths and consistency proofs.
 *
 * The recursions follow the RFC's definitions directly (MTH, PATH, PROOF);
 * their depth is at most 64. Over a leaf array a proof costs O(n) hashes;
 * over a node source (the volume's index) one fetch per level. Hashing goes through q42_sha256_parts (OpenSSL's
 * EVP), the same SHA-256 as the volume format's. See q42-volume(5).
 */
#include <string.h>
#include "formats/q42_digest.h"
#include "wal/q42_merkle.h"

static int hash2(uint8_t prefix, const void *a, uint64_t an, const void *b, uint64_t bn,
		 q42_hash out, q42_err *err)
{
	return q42_sha256_parts(&prefix, 1, a, an, b, bn, out, err);
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

static int empty_root(q42_hash out, q42_err *err)
{
	return q42_sha256_parts(NULL, 0, NULL, 0, NULL, 0, out, err);
}

int q42_merkle_root(const q42_hash *leaves, uint64_t n, q42_hash out, q42_err *err)
{
	q42_hash l, r;
	int rc;
	if (n == 0)
		return empty_root(out, err);
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

int q42_merkle_src_root(const q42_merkle_src *s, uint64_t lo, uint64_t n, q42_hash out,
			q42_err *err)
{
	q42_hash l, r;
	int rc;
	if (n == 0)
		return empty_root(out, err);
	if ((n & (n - 1)) == 0)
		return s->node(s->arg, lo, (uint32_t)__builtin_ctzll(n), out, err);
	/* The left part of a split is perfect: one fetch; recurse on the right. */
	uint64_t k = split_point(n);
	if ((rc = s->node(s->arg, lo, (uint32_t)__builtin_ctzll(k), l, err)) != Q42_OK ||
	    (rc = q42_merkle_src_root(s, lo + k, n - k, r, err)) != Q42_OK)
		return rc;
	return q42_merkle_node(l, r, out, err);
}

int q42_merkle_src_path(const q42_merkle_src *s, uint64_t n, uint64_t m,
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
		if ((rc = q42_merkle_src_root(s, lo[d], cnt[d], path[i], err)) != Q42_OK)
			return rc;
	}
	*len = depth;
	return Q42_OK;
}

/* SUBPROOF(m, D[lo, lo + n), b) of RFC 6962 section 2.1.2, appended to proof. */
static int subproof(const q42_merkle_src *s, uint64_t lo, uint64_t n, uint64_t m, int complete,
		    q42_hash *proof, uint32_t *len, q42_err *err)
{
	int rc;
	if (m == n) {
		if (complete)
			return Q42_OK;
		if (*len >= Q42_MERKLE_MAX_CONSISTENCY)
			return q42_err_set(err, Q42_EARG, "merkle: consistency proof too long");
		return q42_merkle_src_root(s, lo, n, proof[(*len)++], err);
	}
	uint64_t k = split_point(n);
	if (m <= k) {
		if ((rc = subproof(s, lo, k, m, complete, proof, len, err)) != Q42_OK)
			return rc;
		if (*len >= Q42_MERKLE_MAX_CONSISTENCY)
			return q42_err_set(err, Q42_EARG, "merkle: consistency proof too long");
		return q42_merkle_src_root(s, lo + k, n - k, proof[(*len)++], err);
	}
	if ((rc = subproof(s, lo + k, n - k, m - k, 0, proof, len, err)) != Q42_OK)
		return rc;
	if (*len >= Q42_MERKLE_MAX_CONSISTENCY)
		return q42_err_set(err, Q42_EARG, "merkle: consistency proof too long");
	return q42_merkle_src_root(s, lo, k, proof[(*len)++], err);
}

int q42_merkle_src_consistency(const q42_merkle_src *s, uint64_t n, uint64_t m,
			       q42_hash proof[Q42_MERKLE_MAX_CONSISTENCY], uint32_t *len,
			       q42_err *err)
{
	*len = 0;
	if (m == 0 || m > n)
		return q42_err_set(err, Q42_EARG,
				   "merkle: consistency needs 0 < old size <= new size (old %llu, new %llu)",
				   (unsigned long long)m, (unsigned long long)n);
	return subproof(s, 0, n, m, 1, proof, len, err);
}

/* The array form: a perfect subtree is hashed from its leaves. */
static int array_node(void *arg, uint64_t lo, uint32_t level, q42_hash out, q42_err *err)
{
	const q42_hash *leaves = arg;
	return q42_merkle_root(leaves + lo, UINT64_C(1) << level, out, err);
}

int q42_merkle_path(const q42_hash *leaves, uint64_t n, uint64_t m,
		    q42_hash path[Q42_MERKLE_MAX_PATH], uint32_t *len, q42_err *err)
{
	q42_merkle_src s = {array_node, (void *)(uintptr_t)leaves};
	return q42_merkle_src_path(&s, n, m, path, len, err);
}

int q42_merkle_consistency(const q42_hash *leaves, uint64_t n, uint64_t m,
			   q42_hash proof[Q42_MERKLE_MAX_CONSISTENCY], uint32_t *len,
			   q42_err *err)
{
	q42_merkle_src s = {array_node, (void *)(uintptr_t)leaves};
	return q42_merkle_src_consistency(&s, n, m, proof, len, err);
}

int q42_merkle_range_push(q42_merkle_range *r, const q42_hash leaf, q42_hash *nodes,
			  uint32_t *n_nodes, q42_err *err)
{
	q42_hash cur;
	uint32_t t = (uint32_t)__builtin_ctzll(~r->n), k;
	int rc;
	if (t > r->count)
		return q42_err_set(err, Q42_EARG, "merkle: compact range of %u hashes for %llu leaves",
				   r->count, (unsigned long long)r->n);
	memcpy(cur, leaf, Q42_MERKLE_HASH_LEN);
	for (k = 0; k < t; k++) {
		if ((rc = q42_merkle_node(r->h[r->count - 1], cur, cur, err)) != Q42_OK)
			return rc;
		r->count--;
		if (nodes)
			memcpy(nodes[k], cur, Q42_MERKLE_HASH_LEN);
	}
	memcpy(r->h[r->count++], cur, Q42_MERKLE_HASH_LEN);
	r->n++;
	if (n_nodes)
		*n_nodes = t;
	return Q42_OK;
}

int q42_merkle_range_root(const q42_merkle_range *r, q42_hash out, q42_err *err)
{
	int rc;
	if (r->count == 0)
		return empty_root(out, err);
	memcpy(out, r->h[r->count - 1], Q42_MERKLE_HASH_LEN);
	for (uint32_t i = r->count - 1; i-- > 0;)
		if ((rc = q42_merkle_node(r->h[i], out, out, err)) != Q42_OK)
			return rc;
	return Q42_OK;
}

void q42_merkle_range_part(uint64_t n, uint32_t i, uint32_t *level, uint64_t *lo)
{
	uint64_t base = 0;
	for (uint32_t b = 64; b-- > 0;) {
		if (!(n >> b & 1))
			continue;
		if (i == 0) {
			*level = b;
			*lo = base;
			return;
		}
		i--;
		base += UINT64_C(1) << b;
	}
	*level = 0;
	*lo = base;
}
