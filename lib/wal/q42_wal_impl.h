/* q42_wal_impl.h -- functions shared between the files of lib/wal only
 * (not installed, not exported). */
#ifndef Q42_WAL_IMPL_H
#define Q42_WAL_IMPL_H

#include "wal/q42_wal.h"

/* Stage a VOTE frame with the given payload (q42_walrec.c). */
int q42_wal_stage_vote_frame(q42_wal *w, const uint8_t payload[Q42_VOL_VOTE_SIZE], q42_err *err);

/* A new file written through a temporary file in the same directory:
 * open, write any number of times, then commit (fsync, link into place --
 * Q42_EIO when path exists: never replaced --, fsync the directory) or
 * abort (remove it). Commit also releases. */
typedef struct q42_wal_newfile {
	int fd;
	char *tmp;
	const char *path;
} q42_wal_newfile;
int q42_wal_new_open(q42_wal_newfile *f, const char *path, q42_err *err);
int q42_wal_new_write(q42_wal_newfile *f, const void *data, uint64_t n, q42_err *err);
int q42_wal_new_commit(q42_wal_newfile *f, q42_err *err);
void q42_wal_new_abort(q42_wal_newfile *f);

/* Create path holding exactly data[0, n), as a new file above. */
int q42_wal_write_new(const char *path, const void *data, uint64_t n, q42_err *err);

/* Does a writer hold path's lock? Tested without waiting (q42_walread.c). */
bool q42_wal_writer_active(const char *path);

#endif
