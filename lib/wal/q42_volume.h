/* q42_volume.h -- the Q42 volume: an append-only, CRC-framed, hash-linked
 * log whose committed entries are the leaves of an RFC 6962 Merkle tree.
 *
 * The byte layout is specified in q42-volume(5); this header names it and
 * declares the validating reader. The reader checks every byte it accepts
 * (header CRC, each frame's length, type, sequence number, link, CRC-32C,
 * payload structure, review rules and vote signatures) and stops at the
 * first frame that fails, saying which one and why. It never trusts a
 * length before bounding it, and it never prints.
 */
#ifndef Q42_VOLUME_H
#define Q42_VOLUME_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_err.h"
#include "wal/q42_merkle.h"

/* ---- Layout constants (see q42-volume(5)) ----------------------------- */

#define Q42_VOL_MAGIC "Q42\0"
#define Q42_VOL_VERSION 1u
#define Q42_VOL_HEADER_SIZE 64u
#define Q42_VOL_ID_LEN 16u
#define Q42_VOL_FRAME_HEAD 48u  /* length, type, flags, seq, link */
#define Q42_VOL_FRAME_TAIL 4u   /* CRC-32C */
#define Q42_VOL_FRAME_OVERHEAD (Q42_VOL_FRAME_HEAD + Q42_VOL_FRAME_TAIL)
#define Q42_VOL_MAX_PAYLOAD (16u << 20)
#define Q42_VOL_ENTRY_HEAD 24u  /* kind, zero, ref, review */
#define Q42_VOL_BINDING_HEAD 64u /* p64 SHA-256, source SHA-256 */
#define Q42_VOL_VOTE_SIZE 112u
#define Q42_VOL_MAX_KEYS 16u
#define Q42_VOL_ED25519_KEY_LEN 32u
#define Q42_VOL_NONE UINT64_MAX

enum q42_vol_frame_type {
	Q42_VOL_F_CONFIG = 1,  /* frame 0 only: review keys and quorum */
	Q42_VOL_F_ENTRY = 2,   /* a committed entry: the next Merkle leaf */
	Q42_VOL_F_PENDING = 3, /* an entry suspended for review */
	Q42_VOL_F_VOTE = 4,    /* a signed approval or rejection of a pending frame */
};

enum q42_vol_kind {
	Q42_VOL_K_RECORD = 1,  /* a q42-record(5) JSON line */
	Q42_VOL_K_QUIN = 2,    /* one quin (N-Quads + provenance), of record `ref` */
	Q42_VOL_K_BINDING = 3, /* model provenance binding (N-Quads), see q42wal bind */
};

enum q42_vol_decision { Q42_VOL_APPROVE = 1, Q42_VOL_REJECT = 2 };

enum q42_vol_pending_state {
	Q42_VOL_P_OPEN = 0,
	Q42_VOL_P_COMMITTED = 1, /* quorum reached and the ENTRY frame written */
	Q42_VOL_P_REJECTED = 2,  /* enough rejections that quorum is out of reach */
};

/* ---- What a parsed volume exposes ------------------------------------- */

typedef struct q42_vol_frame {
	uint64_t offset;      /* of the frame's first byte */
	uint32_t length;      /* payload bytes */
	uint16_t type;        /* enum q42_vol_frame_type */
	uint64_t payload_off; /* offset + Q42_VOL_FRAME_HEAD */
	q42_hash hash;        /* SHA-256 of the whole frame, CRC included */
	uint64_t leaf;        /* leaf index of an ENTRY, else Q42_VOL_NONE */
	uint64_t pending;     /* index into q42_volume.pending of a PENDING, else NONE */
} q42_vol_frame;

/* An ENTRY or PENDING payload, decoded. body points into the caller's data. */
typedef struct q42_vol_entry {
	uint32_t kind;        /* enum q42_vol_kind */
	uint64_t ref;         /* RECORD: its BINDING leaf; QUIN: its RECORD leaf; else NONE */
	uint64_t review;      /* ENTRY committed after review: the PENDING frame's seq */
	const uint8_t *body;
	uint64_t body_len;
} q42_vol_entry;

typedef struct q42_vol_vote {
	uint64_t pending_seq;
	uint32_t decision;    /* enum q42_vol_decision */
	uint8_t key[Q42_VOL_ED25519_KEY_LEN];
	uint8_t sig[64];
} q42_vol_vote;

typedef struct q42_vol_pending {
	uint64_t seq;         /* the PENDING frame */
	uint32_t state;       /* enum q42_vol_pending_state */
	uint32_t approvals, rejections;
	uint32_t voted;       /* bit i: configured key i has voted */
	uint64_t leaf;        /* when committed */
	uint64_t offset;      /* of the PENDING frame */
	uint32_t length;      /* its payload bytes */
	q42_hash hash;        /* its frame hash (what votes sign) */
	q42_hash digest;      /* SHA-256 of its payload without bytes 16..23 */
} q42_vol_pending;

typedef struct q42_vol_config {
	uint32_t quorum;      /* K; 0 when no review keys are configured */
	uint32_t n_keys;      /* N */
	uint8_t keys[Q42_VOL_MAX_KEYS][Q42_VOL_ED25519_KEY_LEN];
} q42_vol_config;

typedef struct q42_volume {
	const uint8_t *data;  /* not owned */
	uint64_t size;
	uint32_t version;
	uint8_t id[Q42_VOL_ID_LEN];
	uint64_t created;     /* seconds since the epoch, as written by init */
	q42_vol_config config;

	uint64_t n_frames;    /* valid frames, in order; frame i has seq i */
	q42_vol_frame *frames;
	uint64_t n_leaves;
	q42_hash *leaves;     /* leaf hashes */
	uint64_t *leaf_frame; /* frame index of each leaf */
	uint8_t *leaf_kind;   /* enum q42_vol_kind of each leaf */
	uint64_t n_pending;
	q42_vol_pending *pending;

	/* Where validation stopped. valid_end == size when everything is valid. */
	uint64_t valid_end;
	bool header_ok;
	bool tail_bad;        /* a frame at valid_end failed */
	bool tail_short;      /* ... because the file ends inside it */
	uint64_t bad_frame;   /* its seq (== n_frames) */
	uint64_t bad_end;     /* end of the bad frame when its length was readable, else size */
} q42_volume;

/* ---- Streaming validation ----------------------------------------------- */

/* The state of one pass over a volume, frame by frame, without holding the
 * volume: what the rules of q42-volume(5) need to judge the next frame
 * (the link, counts, the kind of every leaf a reference may name, the
 * review state of pending frames) plus the Merkle tree's compact range.
 * Memory: one byte per leaf scanned and one q42_vol_pending per pending
 * frame. A scan may start at a checkpoint (q42_volscan_resume): leaves
 * before it are then looked up through kind_of, and a frame whose rules
 * need the review state from before the checkpoint (a vote, an entry that
 * commits a pending frame) stops the scan with need_full set. */
typedef struct q42_volscan {
	const char *name;
	uint32_t version;
	uint8_t id[Q42_VOL_ID_LEN];
	uint64_t created;
	q42_hash header_hash;
	q42_vol_config config;
	uint64_t n_frames, n_leaves;
	uint64_t end;          /* offset just after the last valid frame */
	q42_hash prev;         /* hash of the last valid frame (or of the header) */
	q42_merkle_range range;
	/* the frame the last successful q42_volscan_frame accepted */
	q42_vol_frame last;
	q42_hash last_leaf;    /* its leaf hash when it is an ENTRY */
	uint32_t last_kind;
	uint32_t last_n_nodes; /* subtrees that leaf completed (levels 1..n) */
	q42_hash last_nodes[64];
	/* kinds of leaves kind_base.. ; earlier ones come from kind_of */
	uint8_t *kind;
	uint64_t kind_base, cap_kind;
	int (*kind_of)(void *arg, uint64_t leaf, uint32_t *kind, q42_err *err);
	void *kind_arg;
	q42_vol_pending *pending;
	uint64_t n_pending, cap_pending;
	bool partial;          /* resumed at a checkpoint */
	bool review_known;     /* ... with every pending frame before it (q42_volscan_resume_review) */
	bool need_full;        /* stopped: this frame needs a scan from frame 0 */
	bool short_frame;      /* the failing frame is cut off by the end of the input */
	uint64_t bad_end;      /* end of the failing frame when its length was readable */
} q42_volscan;

/* Check the 64 header bytes and start a scan at offset 64. */
Q42_API int q42_volscan_header(q42_volscan *s, const uint8_t hdr[Q42_VOL_HEADER_SIZE],
			       const char *name, q42_err *err);
/* Continue a scan after a frame already known to be valid (a checkpoint):
 * it is frame seq, the leaf-th leaf (Q42_VOL_NONE when not an entry),
 * ends at end, has frame hash fh; range is the tree over leaves 0..n_leaves-1.
 * The config must have been scanned (frame 0). */
Q42_API void q42_volscan_resume(q42_volscan *s, uint64_t seq, uint64_t n_leaves, uint64_t end,
				const q42_hash fh, const q42_merkle_range *range);
/* After q42_volscan_resume: the review state at the checkpoint is known,
 * pending[0, n) (by seq; the scan takes ownership), so votes and reviewed
 * entries after it are judged without frame 0. */
Q42_API void q42_volscan_resume_review(q42_volscan *s, q42_vol_pending *pending, uint64_t n);
/* Validate the frame at s->end, whose first avail bytes are f. Q42_OK: it
 * is accepted and described by s->last. Q42_EFORMAT: the message names the
 * frame ("NAME: frame 7 at offset 1234: ..."), short_frame says whether the
 * input ended inside it. Q42_ENOMEM, or Q42_EUNSUPPORTED with need_full. */
Q42_API int q42_volscan_frame(q42_volscan *s, const uint8_t *f, uint64_t avail, q42_err *err);
/* The same, with the frame's SHA-256 (fh) and, for an entry, its leaf
 * hash (leaf) already computed from these bytes (by threads that hash
 * frames ahead of the scan); everything else is checked as above. */
Q42_API int q42_volscan_frame_hashed(q42_volscan *s, const uint8_t *f, uint64_t avail,
				     const q42_hash fh, const q42_hash leaf, q42_err *err);
/* The pending frame seq, or NULL. */
Q42_API q42_vol_pending *q42_volscan_pending(const q42_volscan *s, uint64_t seq);
Q42_API void q42_volscan_free(q42_volscan *s);

/* ---- Reader ----------------------------------------------------------- */

/* Validate data[0, size) as a Q42 volume and fill *v with everything up to
 * the first invalid byte. Q42_OK when the whole input is valid. Otherwise
 * Q42_EFORMAT with a message naming the header or the frame ("frame 7 at
 * offset 1234: CRC-32C: stored 0x..., computed 0x..."), and *v describes
 * the valid prefix (header_ok, n_frames, valid_end, tail_bad) so that
 * recovery can decide what to cut; Q42_ENOMEM on allocation failure.
 * data must outlive *v. name is used in messages only. */
Q42_API int q42_volume_parse(q42_volume *v, const uint8_t *data, uint64_t size,
			     const char *name, q42_err *err);
Q42_API void q42_volume_free(q42_volume *v);

/* Decode the payload of frame f (an ENTRY or PENDING) of a parsed volume. */
Q42_API void q42_volume_entry(const q42_volume *v, const q42_vol_frame *f, q42_vol_entry *out);
/* Decode a VOTE frame's payload. */
Q42_API void q42_volume_vote(const q42_volume *v, const q42_vol_frame *f, q42_vol_vote *out);

/* Root of the tree over the first n leaves (n <= v->n_leaves). */
Q42_API int q42_volume_root(const q42_volume *v, uint64_t n, q42_hash out, q42_err *err);

/* "config", "entry", "pending", "vote"; "?" otherwise. */
Q42_API const char *q42_vol_frame_type_name(uint32_t type);
/* "record", "quin", "binding"; "?" otherwise. */
Q42_API const char *q42_vol_kind_name(uint32_t kind);

/* Bytes signed by a vote (see q42-volume(5), "Votes"); out holds
 * Q42_VOL_VOTE_MSG_LEN bytes. */
#define Q42_VOL_VOTE_MSG_LEN 72u
Q42_API void q42_vol_vote_message(const uint8_t id[Q42_VOL_ID_LEN], uint64_t pending_seq,
				  const q42_hash pending_hash, uint32_t decision,
				  uint8_t out[Q42_VOL_VOTE_MSG_LEN]);

/* Bytes signed by a tree head (see q42-volume(5), "Tree heads"). */
#define Q42_VOL_HEAD_MSG_LEN 72u
Q42_API void q42_vol_head_message(const uint8_t id[Q42_VOL_ID_LEN], uint64_t size,
				  const q42_hash root, uint8_t out[Q42_VOL_HEAD_MSG_LEN]);

/* Verify an Ed25519 signature with a raw 32-byte public key: Q42_OK, or
 * Q42_EFORMAT when it does not verify. */
Q42_API int q42_vol_ed25519_verify_raw(const uint8_t key[Q42_VOL_ED25519_KEY_LEN],
				       const void *msg, size_t n, const uint8_t sig[64],
				       q42_err *err);
/* The raw public key of a PEM file holding an Ed25519 public or private
 * key. Q42_EIO when unreadable, Q42_EFORMAT when not Ed25519. */
Q42_API int q42_vol_ed25519_pubkey(const char *pem_path, uint8_t key[Q42_VOL_ED25519_KEY_LEN],
				   q42_err *err);

#endif
