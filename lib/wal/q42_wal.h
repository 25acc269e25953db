/* q42_wal.h -- writing Q42 volumes: create, lock, append with group
 * commit, vote, recover a torn tail; and the lock-free readers.
 *
 * One writer at a time holds an exclusive flock(2) on the volume for as
 * long as it is open; readers never take a blocking lock. A writer opens
 * the volume at its checkpoint (the last record of the index VOL.idx that
 * matches the frames, q42-volume(5), INDEX), validates every frame after
 * it, and refuses a volume whose tail is torn: cutting is
 * q42_wal_recover's job, done on request and reported. It holds O(log n)
 * hashes and the batch, never the volume. Frames are staged in memory and
 * written by q42_wal_flush with one write(2) and, under Q42_WAL_SYNC_FULL,
 * one fsync(2): an entry counts as acknowledged only after the flush that
 * carried it returned Q42_OK. The index records follow, unsynced: they
 * are derived data, checked against the frames by whoever uses them.
 */
#ifndef Q42_WAL_H
#define Q42_WAL_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_buf.h"
#include "common/q42_err.h"
#include "common/q42_file.h"
#include "wal/q42_volume.h"

enum q42_wal_sync {
	Q42_WAL_SYNC_FULL = 0,   /* fsync after every flush (batch) */
	Q42_WAL_SYNC_NORMAL = 1, /* write every batch; fsync once, at close */
	Q42_WAL_SYNC_OFF = 2,    /* never fsync */
};

/* Create a new volume at path (refused when path exists): header, then the
 * config frame with the review keys and quorum (n_keys 0: no review).
 * Written to a temporary file, fsynced, linked into place. id may be NULL
 * (random). */
Q42_API int q42_wal_create(const char *path, const q42_vol_config *cfg, q42_err *err);

typedef struct q42_wal_binding {
	uint64_t leaf;
	uint8_t p64_sha256[32];
	uint8_t source_sha256[32];
} q42_wal_binding;

/* An entry staged in the batch: what its index record needs. */
typedef struct q42_wal_batch_entry {
	uint64_t offset, seq;
	q42_hash frame_hash, leaf;
	uint32_t kind;
} q42_wal_batch_entry;

struct q42_walopen;

typedef struct q42_wal {
	int fd;
	char *path;
	struct q42_walopen *st; /* header, config and index as found at open */
	uint8_t id[Q42_VOL_ID_LEN];
	q42_vol_config config;
	uint32_t sync;          /* enum q42_wal_sync */
	uint64_t size;          /* bytes written to the file so far */
	uint64_t next_seq;
	q42_hash last;          /* hash of the last frame (written or staged) */
	q42_buf batch;          /* staged frames, not yet written */
	uint64_t n_leaves;      /* including staged */
	uint64_t n_written;     /* leaves written */
	q42_merkle_range range; /* the tree's right edge over the leaves written */
	uint64_t last_binding;  /* latest binding among the leaves written */
	uint64_t n_staged, cap_staged;
	q42_wal_batch_entry *staged;
	uint64_t n_bindings, cap_bindings;
	q42_wal_binding *bindings;
	bool review;            /* the volume has review keys: st->scan holds its review state */
	bool unsynced;          /* written since the last fsync */
	bool broken;            /* a write failed: nothing more may be appended */
} q42_wal;

/* Open path for appending: take the exclusive lock (waiting for another
 * writer unless nowait, then Q42_EIO "locked"), validate the frames after
 * the checkpoint and bring the index up to date with them (building it
 * from frame 0 for a volume that has none).
 * A volume that fails validation is refused with Q42_EFORMAT (the message
 * names the frame and, for a torn tail, says to run recovery). */
Q42_API int q42_wal_open(q42_wal *w, const char *path, uint32_t sync, bool nowait, q42_err *err);
/* Flush what is staged, fsync when SYNC_NORMAL left data unsynced, unlock,
 * free. Returns the flush result; *w is freed either way. */
Q42_API int q42_wal_close(q42_wal *w, q42_err *err);

/* Stage one ENTRY (type Q42_VOL_F_ENTRY) or PENDING frame. *index gets the
 * leaf index (ENTRY) or the frame's sequence number (PENDING), hash the
 * leaf hash (ENTRY) or frame hash (PENDING). Nothing is written yet. */
Q42_API int q42_wal_stage(q42_wal *w, uint32_t type, uint32_t kind, uint64_t ref,
			  uint64_t review, const void *body, uint64_t body_len,
			  uint64_t *index, q42_hash hash, q42_err *err);
/* Write the staged frames with one write and sync as the mode says. On
 * failure the file is cut back to its size before the batch. */
Q42_API int q42_wal_flush(q42_wal *w, q42_err *err);
/* Drop what is staged (after a bad record in the middle of a batch). */
Q42_API void q42_wal_discard(q42_wal *w);
/* Bytes staged and not yet flushed. */
Q42_API uint64_t q42_wal_staged(const q42_wal *w);

/* The binding entry for a model with this P64 (or, when p64 is NULL or
 * unmatched, source) SHA-256; Q42_VOL_NONE when none. */
Q42_API uint64_t q42_wal_find_binding(const q42_wal *w, const uint8_t *p64_sha256,
				      const uint8_t *source_sha256);

/* ---- Records (q42-record(5)) ---------------------------------------- */

typedef struct q42_wal_ack {
	uint32_t kind;   /* enum q42_vol_kind */
	bool pending;    /* staged as PENDING: index is a frame seq */
	uint64_t index;
	q42_hash hash;
} q42_wal_ack;

#define Q42_WAL_MAX_QUINS 256u

/* Stage one q42-record JSON line: the record entry (or a pending frame when
 * review is true or the record's verdict says "review"), then one quin
 * entry per quin the record carries. acks receives up to
 * 1 + Q42_WAL_MAX_QUINS items. Q42_EFORMAT for a line that is not a valid
 * record (nothing is staged then). */
Q42_API int q42_wal_stage_record(q42_wal *w, const char *line, uint64_t len, bool review,
				 q42_wal_ack *acks, uint32_t *n_acks, q42_err *err);

/* ---- Review --------------------------------------------------------- */

/* Vote on pending frame seq with the Ed25519 private key in key_pem, and
 * when that reaches the quorum, commit the pending record (and its quins).
 * Flushes. *state gets the pending frame's resulting state; acks as for
 * q42_wal_stage_record when it was committed. */
Q42_API int q42_wal_vote(q42_wal *w, uint64_t seq, uint32_t decision, const char *key_pem,
			 uint32_t *state, q42_wal_ack *acks, uint32_t *n_acks, q42_err *err);

/* ---- Recovery ------------------------------------------------------- */

typedef struct q42_wal_recovery {
	bool cut;            /* something was (or, dry run, would be) cut */
	uint64_t offset;     /* the new size */
	uint64_t bytes;      /* bytes removed */
	uint64_t frame;      /* seq of the first frame removed */
	uint64_t frames_kept, entries_kept;
	char reason[Q42_ERR_MSG_MAX];
} q42_wal_recovery;

/* Take the writer lock, validate, and cut a torn tail: everything from the
 * first invalid frame on, when no intact frame follows it. A damaged
 * header or config frame, or an invalid frame followed by intact ones
 * (corruption, not a torn write), is refused with Q42_EFORMAT unless force
 * (then cut anyway; never for the header). dry_run reports without cutting. */
Q42_API int q42_wal_recover(const char *path, bool dry_run, bool force, q42_wal_recovery *rep,
			    q42_err *err);

/* Bring VOL.idx up to date (rebuild: start it afresh from frame 0)
 * under the writer lock. *before and *after receive the entries the
 * index matched at open and covers now. */
Q42_API int q42_wal_reindex(const char *path, bool rebuild, uint64_t *before, uint64_t *after,
			    q42_err *err);

/* ---- Readers ---------------------------------------------------------- */

/* The indexed reader: the header, the config frame, the index up to its
 * checkpoint and the frames after it (validated; their leaves held in
 * memory). Entries, roots and proofs are read through the index, O(log n)
 * records each; a record that fails its CRC makes the reader fall back to
 * reading every frame once. */
typedef struct q42_wal_reader {
	int fd;
	char *path;
	struct q42_walopen *st;
	uint64_t n_leaves, n_frames;
	uint64_t valid_end;
	uint64_t n_idx;        /* entries served by the index */
	uint64_t n_tail, cap_tail;
	q42_hash *tail_leaf;   /* leaves n_idx.. */
	uint64_t *tail_off;    /* their frame offsets */
	uint64_t *tail_seq;
	bool in_progress;      /* a writer holds the lock and the tail was ignored */
	uint64_t ignored;
	bool fell_back;        /* the index failed a check: everything came from the frames */
	bool idx_failed;       /* set by an index read that failed (then fall back) */
	uint8_t *buf;          /* the last entry read */
	uint64_t cap_buf;
	uint64_t last_offset, last_end; /* its frame's first byte and end */
} q42_wal_reader;

Q42_API int q42_wal_reader_open(q42_wal_reader *r, const char *path, q42_err *err);
Q42_API void q42_wal_reader_close(q42_wal_reader *r);
Q42_API const uint8_t *q42_wal_reader_id(const q42_wal_reader *r);
/* Entry i: its payload decoded (body valid until the next call), frame
 * seq and leaf hash. */
Q42_API int q42_wal_reader_entry(q42_wal_reader *r, uint64_t i, q42_vol_entry *e, uint64_t *seq,
				 q42_hash leaf, q42_err *err);
Q42_API int q42_wal_reader_root(q42_wal_reader *r, uint64_t n, q42_hash out, q42_err *err);
Q42_API int q42_wal_reader_path(q42_wal_reader *r, uint64_t n, uint64_t m,
				q42_hash path[Q42_MERKLE_MAX_PATH], uint32_t *len, q42_err *err);
Q42_API int q42_wal_reader_consistency(q42_wal_reader *r, uint64_t n, uint64_t m,
				       q42_hash proof[Q42_MERKLE_MAX_CONSISTENCY],
				       uint32_t *len, q42_err *err);

/* pending: the review state of every pending frame, read from VOL.rev and
 * the frames after the frame it names when it matches the volume, from
 * every frame (streamed) otherwise. */
typedef struct q42_wal_review {
	uint32_t quorum;       /* of the config frame; 0: the volume has no review keys */
	uint64_t n_pending;
	q42_vol_pending *pending; /* by seq; q42_wal_review_free */
	bool from_state;       /* started from VOL.rev (else every frame was read) */
	bool in_progress;      /* a writer holds the lock and the tail was ignored */
	uint64_t ignored;
} q42_wal_review;
Q42_API int q42_wal_review_read(const char *path, q42_wal_review *rv, q42_err *err);
Q42_API void q42_wal_review_free(q42_wal_review *rv);

/* verify: every frame from 0, with bounded memory (one frame or 1 MiB of
 * buffer, one byte per entry, one record per pending frame), and the index
 * record by record against them. */
typedef struct q42_wal_verify_report {
	uint8_t id[Q42_VOL_ID_LEN];
	uint64_t n_frames, n_leaves;
	uint64_t valid_end;    /* bytes verified (less than the size while a writer appends) */
	q42_hash root;
	uint32_t quorum;       /* of the config frame */
	uint64_t n_pending;
	q42_vol_pending *pending; /* every pending frame and its state; q42_wal_verify_free */
	bool have_at;          /* the volume has at least `at` entries ... */
	q42_hash root_at;      /* ... and this is the root of the first `at` */
	bool in_progress;
	uint64_t ignored;
	uint64_t idx_records;  /* records of VOL.idx that match the frames */
	bool idx_bad;          /* a CRC-valid record contradicts the frames */
	char idx_msg[Q42_ERR_MSG_MAX];
	bool rev_bad;          /* VOL.rev passes its checks but contradicts the frames */
	char rev_msg[Q42_ERR_MSG_MAX]; /* what is wrong with VOL.rev, or empty */
} q42_wal_verify_report;
/* progress(arg, bytes done, bytes total), at most every 16 MiB. at: also
 * the root of the first `at` entries (Q42_VOL_NONE: none). */
typedef void (*q42_wal_progress_fn)(void *arg, uint64_t done, uint64_t total);
Q42_API int q42_wal_verify(const char *path, uint64_t at, q42_wal_progress_fn progress,
			   void *arg, q42_wal_verify_report *rep, q42_err *err);
Q42_API void q42_wal_verify_free(q42_wal_verify_report *rep);

/* ---- Archives (q42_walarc.c) ------------------------------------------ */

/* Write the validated volume at vol_path to a tar archive (zstd-compressed
 * when the name ends in .zst or .tzst) holding volume.q42 and head.json;
 * atomically, through q42_outfile. The volume must verify first (streamed;
 * then copied through a 1 MiB buffer). */
Q42_API int q42_wal_export(const char *vol_path, const char *archive_path, q42_err *err);
/* Read volume.q42 (and head.json, when present) from a tar or tar.zst
 * archive, verify the volume completely and that the head matches it, and
 * only then create dest (refused when it exists). *size and root receive
 * the imported tree head. */
Q42_API int q42_wal_import(const char *archive_path, const char *dest, uint64_t *size,
			   q42_hash root, q42_err *err);

/* ---- Model provenance binding (q42_walbind.c) ------------------------- */

/* Build the body of a binding entry for the P64 at p64_path: the P64's and
 * its source's SHA-256 (64 bytes), then canonical N-Quads binding source ->
 * P64, container version, transcode policy, tool, every tensor (name,
 * dtype, offset, length, CRC-32C) and the licence metadata found in the
 * model. The P64 is validated completely first (Q42_EFORMAT otherwise). */
Q42_API int q42_wal_binding_body(const char *p64_path, q42_buf *body, q42_err *err);

/* The same, binding the model with LoRA adapters it is run with (q42run
 * --lora): for adapter i (path, scale), in order, the statements
 * lora -> <urn:sha256:P64HEX#lora/i> with adapter (its file's SHA-256 as
 * <urn:sha256:HEX>), scale, alpha and order, and loraSet, the
 * q42_wal_lora_set of the list (q42-volume(5), "Binding entries"). Each
 * adapter must be one (formats/q42_lora.h) for the P64's architecture
 * whose pairs fit its tensors: Q42_EFORMAT naming the adapter and tensor
 * otherwise, Q42_EIO when it cannot be read. */
typedef struct q42_wal_lora {
	const char *path;
	float scale;
} q42_wal_lora;
Q42_API int q42_wal_binding_body_lora(const char *p64_path, const q42_wal_lora *lora,
				      uint32_t n_lora, q42_buf *body, q42_err *err);
/* The lower-case hex SHA-256 of the text that names an adapter list: per
 * adapter, in order, its file's lower-case hex SHA-256, one space, its
 * scale as C's "%.9g" of the float, '\n' (the empty text for none). What
 * a binding states as loraSet and what verify computes from a record's
 * model.lora. */
Q42_API int q42_wal_lora_set(const char *const *sha256_hex, const float *scale, uint32_t n,
			     char out[65], q42_err *err);

/* verify --head (q42_walcheck.c): the tree head in the JSON file head_path
 * ({"size", "root"[, "key", "signature"]}, q42-volume(5)) must be the
 * size and root of r's first size entries, and its Ed25519 signature, when
 * present or when pub_pem names the key that must have made it, must
 * verify. Q42_OK, Q42_EFORMAT naming what differs, or the error of reading
 * pub_pem. */
Q42_API int q42_wal_check_head(q42_wal_reader *r, const char *head_path, const char *pub_pem,
			       q42_err *err);

/* verify --outputs: each record names a binding (by ref) whose P64 or
 * source digest must be the model the record names, and whose adapters
 * (loraSet, q42_wal_binding_body_lora) must be those the record names
 * (model.lora), none for none. fn is called once per
 * record in order, with the binding's entry and source digest (hex; NULL
 * and Q42_VOL_NONE when unbound); *bad receives the records that are not
 * bound. Entries are read one at a time through r. */
enum q42_wal_bound {
	Q42_WAL_BOUND = 0,
	Q42_WAL_UNBOUND = 1,
	Q42_WAL_MISMATCH = 2,
};
typedef void (*q42_wal_binding_fn)(void *arg, uint64_t entry, enum q42_wal_bound state,
				   uint64_t binding, const char *source_sha256);
Q42_API int q42_wal_check_bindings(q42_wal_reader *r, q42_wal_binding_fn fn, void *arg,
				   uint64_t *bad, q42_err *err);

#endif
