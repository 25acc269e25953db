/* q42_merkle.h -- the RFC 6962 Merkle tree over a Q42 volume's entries.
 *
 * Leaves are hashed as SHA-256(0x00 || data), interior nodes as
 * SHA-256(0x01 || left || right), and a tree of n leaves splits at the
 * largest power of two below n (RFC 6962, section 2.1). Every function
 * works on an array of leaf hashes that the caller owns; nothing here
 * reads files, allocates beyond its own recursion scratch, or prints.
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

#endif
