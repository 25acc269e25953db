/* q42_wal_impl.h -- functions shared between the files of lib/wal only
 * (not installed, not exported). */
#ifndef Q42_WAL_IMPL_H
#define Q42_WAL_IMPL_H

#include "wal/q42_wal.h"

/* Stage a VOTE frame with the given payload (q42_walrec.c). */
int q42_wal_stage_vote_frame(q42_wal *w, const uint8_t payload[Q42_VOL_VOTE_SIZE], q42_err *err);

/* Create path holding exactly data[0, n): written to a temporary file in
 * the same directory, fsynced, linked into place (Q42_EIO when path
 * exists: never replaced), directory fsynced. */
int q42_wal_write_new(const char *path, const void *data, uint64_t n, q42_err *err);

/* Does a writer hold path's lock? Tested without waiting (q42_walread.c). */
bool q42_wal_writer_active(const char *path);

#endif
