/* q42_walidx.h -- the volume's index (q42-volume(5), INDEX) and opening a
 * volume at its checkpoint; internal to lib/wal, not installed.
 *
 * The index is a sidecar file, VOL.idx, derived entirely from the volume:
 * one CRC-framed record per entry (frame offset, seq, frame hash, leaf
 * hash, kind, latest binding) followed by the Merkle nodes that entry
 * completes, at an offset computed from the entry number alone. Its last
 * record that matches the volume is the checkpoint: appending needs that
 * record, the compact range read from O(log n) records, and the frames
 * after it. The index is never trusted over the frames: a record is used
 * only after its CRC, and the checkpoint only after the frame it names
 * was read and hashed.
 */
#ifndef Q42_WALIDX_H
#define Q42_WALIDX_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_err.h"
#include "wal/q42_volume.h"

#define Q42_IDX_MAGIC "Q42I"
#define Q42_IDX_VERSION 1u
#define Q42_IDX_HEADER_SIZE 64u
#define Q42_IDX_REC_HEAD 96u   /* offset, seq, frame hash, leaf hash, kind, binding */
#define Q42_IDX_REC_MIN (Q42_IDX_REC_HEAD + 4u)
/* Entries an index can describe: keeps every record offset below 2^62. */
#define Q42_IDX_MAX_ENTRIES (UINT64_C(1) << 54)

typedef struct q42_walidx_rec {
	uint64_t offset, seq;   /* of the entry's frame */
	q42_hash frame_hash;    /* SHA-256 of the whole frame */
	q42_hash leaf;          /* leaf hash */
	uint32_t kind;          /* enum q42_vol_kind */
	uint64_t binding;       /* latest binding entry at or before this one, or NONE */
	uint32_t n_nodes;       /* trailing 1 bits of the entry number */
	q42_hash nodes[64];     /* level 1..n_nodes subtrees ending at this entry */
} q42_walidx_rec;

typedef struct q42_walidx {
	int fd;                 /* -1: no index (absent, unreadable or another volume's) */
	char *path;
	bool writable;
	uint64_t n;             /* records present by size; after q42_wal_scan_open: trusted */
	uint8_t *ahead;         /* read-ahead for a reader going through it in order */
	uint64_t ahead_off, ahead_len, ahead_cap;
} q42_walidx;

/* Open VOL.idx for the volume whose header hashes to vol_hh. An absent
 * index, or one of another volume or with a damaged header, is no index
 * (x->fd -1) for a reader; a writer starts it afresh. */
int q42_walidx_open(q42_walidx *x, const char *vol_path, bool write, const q42_hash vol_hh,
		    q42_err *err);
/* The 64-byte header of a file derived from the volume whose header
 * hashes to vol_hh (the index, the review state): magic, version, size
 * 64, flags 0, vol_hh, zeros, CRC-32C of bytes 0..59. */
void q42_wal_sidecar_header(const char magic[4], uint32_t version, const q42_hash vol_hh,
			    uint8_t out[64]);
/* Offset of entry i's record. */
uint64_t q42_walidx_rec_off(uint64_t i);
/* Read and CRC-check record i. Q42_EFORMAT names the index file, the
 * record, its offset and the stored and computed CRC. */
int q42_walidx_read(q42_walidx *x, uint64_t i, q42_walidx_rec *r, q42_err *err);
/* Append records (x->n, x->n + count) with one write; never fsynced here. */
int q42_walidx_append(q42_walidx *x, const q42_walidx_rec *recs, uint64_t count, q42_err *err);
/* Read the index through a buffer of cap bytes from now on (a reader
 * that reads every record in order, as verify does: one read per buffer
 * instead of one per record). Never for a writer's index. */
void q42_walidx_read_ahead(q42_walidx *x, uint64_t cap);
/* Cut the index to its first n records. */
int q42_walidx_truncate(q42_walidx *x, uint64_t n, q42_err *err);
void q42_walidx_close(q42_walidx *x);

/* ---- Opening a volume at its checkpoint ------------------------------ */

/* Called once for every frame accepted after the checkpoint, in order;
 * s->last describes it. Called with frame NULL when a scan (re)starts
 * from frame 0 (after the config frame was read): what the caller
 * collected before is then to be dropped, and frames up to the
 * checkpoint come again. */
typedef int (*q42_walscan_fn)(void *arg, const q42_volscan *s, const uint8_t *frame,
			      q42_err *err);

typedef struct q42_walopen {
	q42_volscan scan;       /* the state after the last valid frame */
	q42_walidx idx;
	uint64_t trusted;       /* entries the index covered and matched at open */
	uint64_t binding;       /* latest binding entry (NONE when none) */
	uint64_t size;          /* the file's size at open */
	bool header_ok;         /* header and config frame valid */
	bool tail_bad;          /* a frame after the checkpoint failed: err says which */
	bool rescanned;         /* the frames were read from frame 0 */
	bool idx_failed;        /* an index record failed a check during the scan */
	uint64_t rev_seq;       /* the scan continued from VOL.rev's state after this frame; else NONE */
} q42_walopen;

enum q42_walscan_mode {
	Q42_WALSCAN_READ = 0,    /* use the index, never write it */
	Q42_WALSCAN_WRITE = 1,   /* create or repair the index, append what it lacks */
	Q42_WALSCAN_REBUILD = 2, /* start the index afresh from frame 0 */
};

/* Validate the header and config frame of the volume open on fd, find the
 * checkpoint in path's index (mode: enum q42_walscan_mode; a writer
 * appends a record for every entry after the checkpoint), and validate
 * every frame after it. For a volume with review keys, a review state file
 * (q42_walrev.h) that matches a frame the index covers is a better start:
 * the scan continues from it with the review state known
 * (o->scan.review_known). A frame that fails stops the scan: Q42_EFORMAT, tail_bad set,
 * *o still describes the valid prefix. fn may be NULL. */
int q42_wal_scan_open(q42_walopen *o, int fd, const char *path, int mode, q42_walscan_fn fn,
		      void *arg, q42_err *err);
void q42_wal_scan_close(q42_walopen *o);

/* Stream the whole volume from frame 0 with bounded memory (no index
 * used): fn sees every accepted frame. */
int q42_wal_scan_all(q42_volscan *s, int fd, const char *path, uint64_t size, q42_walscan_fn fn,
		     void *arg, q42_err *err);

/* Read n bytes at off of fd exactly. */
int q42_wal_pread(int fd, const char *path, void *buf, uint64_t n, uint64_t off, q42_err *err);

#endif
