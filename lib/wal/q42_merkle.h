/* q42_merkle.h -- the RFC 6962 Merkle tree over a Q42 volume's entries.
 *
 * Leaves are hashed as SHA-256(0x00 || data), interior nodes as
 * SHA-256(0x01 || left || right), and a tree of n leaves splits at the
 * largest power of two below n (RFC 6962, section 2.1). The functions
 * work either on an array of leaf hashes that the caller owns or on a
 * node source (q42_merkle_src): a callback that returns the hash of any
 * perfect, aligned subtree, which is how proofs are made from the
 * volume's persisted node store in O(log n) reads. The compact range
 * (RFC 9162, the right edge of the tree: one hash per 1 bit of n) is what
 * an appender keeps. Nothing here reads files or prints.
 */
#ifndef Q42_MERKLE_H
#define Q42_MERKLE_H

#include <stdint.h>
#include "common/q42_err.h"

#define Q42_MERKLE_HASH_LEN 32
/* A proof over at most 2^64 leaves has at most 64 (inclusion) or
 * 2 * 64 (consistency) hashes; these bound the caller's arrays. */
#define Q42_MERKLE_MAX_PATH 64u
#define Q42_MERKLE_MAX_CONSISTENCY 128u

typedef uint8_t q42_hash[Q42_MERKLE_HASH_LEN];

/* SHA-256(0x00 || data[0, n)). */
Q42_API int q42_merkle_leaf(const void *data, uint64_t n, q42_hash out, q42_err *err);
/* SHA-256(0x01 || left || right). */
Q42_API int q42_merkle_node(const q42_hash left, const q42_hash right, q42_hash out, q42_err *err);

/* Root of the tree over leaves[0, n) (MTH); n == 0 gives SHA-256 of the
 * empty string, as RFC 6962 defines. */
Q42_API int q42_merkle_root(const q42_hash *leaves, uint64_t n, q42_hash out, q42_err *err);

/* Audit path of leaf m in the tree of the first n leaves (PATH(m, D[n])),
 * leaf side first. *len receives the number of hashes (at most
 * Q42_MERKLE_MAX_PATH). Q42_EARG when m >= n. */
Q42_API int q42_merkle_path(const q42_hash *leaves, uint64_t n, uint64_t m,
			    q42_hash path[Q42_MERKLE_MAX_PATH], uint32_t *len, q42_err *err);

/* Consistency proof between the trees of the first m and first n leaves
 * (PROOF(m, D[n])). Q42_EARG unless 0 < m <= n; m == n gives an empty proof. */
Q42_API int q42_merkle_consistency(const q42_hash *leaves, uint64_t n, uint64_t m,
				   q42_hash proof[Q42_MERKLE_MAX_CONSISTENCY], uint32_t *len,
				   q42_err *err);

/* ---- Node sources ------------------------------------------------------ */

/* Hash of the perfect subtree of 2^level leaves that starts at leaf lo (a
 * multiple of 2^level); level 0 is the leaf hash. */
typedef int (*q42_merkle_node_fn)(void *arg, uint64_t lo, uint32_t level, q42_hash out,
				  q42_err *err);
typedef struct q42_merkle_src {
	q42_merkle_node_fn node;
	void *arg;
} q42_merkle_src;

/* MTH(D[lo, lo + n)) for a subtree of an RFC 6962 tree: at most one node
 * fetch per level. */
Q42_API int q42_merkle_src_root(const q42_merkle_src *s, uint64_t lo, uint64_t n, q42_hash out,
				q42_err *err);
/* As q42_merkle_path and q42_merkle_consistency, over a node source. */
Q42_API int q42_merkle_src_path(const q42_merkle_src *s, uint64_t n, uint64_t m,
				q42_hash path[Q42_MERKLE_MAX_PATH], uint32_t *len, q42_err *err);
Q42_API int q42_merkle_src_consistency(const q42_merkle_src *s, uint64_t n, uint64_t m,
				       q42_hash proof[Q42_MERKLE_MAX_CONSISTENCY],
				       uint32_t *len, q42_err *err);

/* ---- Compact range (the tree's right edge) ------------------------------ */

/* The roots of the perfect subtrees that make up a tree of n leaves, one
 * per 1 bit of n, largest (leftmost) first. */
typedef struct q42_merkle_range {
	uint64_t n;
	uint32_t count;
	q42_hash h[64];
} q42_merkle_range;

/* Append one leaf. nodes (may be NULL) receives the hashes of the
 * subtrees the leaf completes, levels 1..*n_nodes (the number of trailing
 * 1 bits of the old n). */
Q42_API int q42_merkle_range_push(q42_merkle_range *r, const q42_hash leaf, q42_hash *nodes,
				  uint32_t *n_nodes, q42_err *err);
/* Root of the tree the range describes. */
Q42_API int q42_merkle_range_root(const q42_merkle_range *r, q42_hash out, q42_err *err);
/* Level of the i-th subtree of a range over n leaves (i < popcount(n)), and
 * its first leaf. */
Q42_API void q42_merkle_range_part(uint64_t n, uint32_t i, uint32_t *level, uint64_t *lo);

#endif
