/* q42_walrev.h -- the volume's review state file (q42-volume(5), REVIEW
 * STATE); internal to lib/wal, not installed.
 *
 * Votes on a pending frame may lie anywhere in the volume, so without this
 * file the review state (which pending frames are open, who voted) needs
 * every frame. VOL.rev holds that state as it stood after one frame, tied
 * to that frame by its offset and hash: a writer or reader checks the
 * frame and continues from it, as it does from the index's checkpoint.
 * Like the index it is derived data, rewritten by writers and ignored
 * whenever it does not match.
 */
#ifndef Q42_WALREV_H
#define Q42_WALREV_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_err.h"
#include "wal/q42_volume.h"

#define Q42_REV_MAGIC "Q42R"
#define Q42_REV_VERSION 1u
#define Q42_REV_HEADER_SIZE 64u
#define Q42_REV_STATE_SIZE 72u   /* seq, offset, end, hash, leaves, count */
#define Q42_REV_PENDING_SIZE 112u
/* Pending frames a state file may describe (a 1.8 GB file). */
#define Q42_REV_MAX_PENDING (UINT64_C(1) << 24)

typedef struct q42_walrev {
	uint64_t seq;          /* the frame the state is after */
	uint64_t offset, end;  /* of that frame: first byte, one past the last */
	q42_hash hash;         /* its frame hash */
	uint64_t n_leaves;     /* entries among frames 0..seq */
	uint64_t n_pending;
	q42_vol_pending *pending; /* every pending frame up to seq, by seq */
} q42_walrev;

/* Path of the state file of the volume at vol_path (malloc'd), or NULL. */
char *q42_walrev_path(const char *vol_path);
enum q42_walrev_status {
	Q42_REV_ABSENT = 0,
	Q42_REV_DAMAGED = 1,   /* another volume's, cut, CRC, or a record against the rules */
	Q42_REV_FOUND = 2,
};

/* Read vol_path's state file into *r when *status is Q42_REV_FOUND.
 * Damage is never an error, the file is derived data: Q42_ENOMEM only.
 * n_keys: the config's key count (which voted bits may be set). */
int q42_walrev_load(const char *vol_path, const q42_hash vol_hh, uint32_t n_keys, q42_walrev *r,
		    uint32_t *status, q42_err *err);
/* Write the state s holds (after its last accepted frame) for vol_path:
 * a temporary file renamed into place, not fsynced. */
int q42_walrev_save(const char *vol_path, const q42_volscan *s, q42_err *err);
/* Remove vol_path's state file (it no longer matches what a writer holds). */
void q42_walrev_remove(const char *vol_path);
void q42_walrev_free(q42_walrev *r);

#endif
