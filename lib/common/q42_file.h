/* q42_file.h -- mapping input files and writing output files atomically.
 *
 * Inputs are mmapped read-only (a pipe on stdin is first spooled to an
 * unlinked temporary file so every reader sees one contiguous mapping).
 * Outputs go to a temporary file in the target directory, are fsynced and
 * then renamed over the target, so a failure never leaves partial output.
 */
#ifndef Q42_FILE_H
#define Q42_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "common/q42_err.h"

typedef struct q42_map {
	const uint8_t *data;
	uint64_t size;
	int fd;
	char *path; /* as given; "-" for stdin */
} q42_map;

/* Map path read-only ("-" = stdin). An empty file maps to data == NULL,
 * size 0. advice is passed to madvise (e.g. MADV_SEQUENTIAL), 0 for none. */
Q42_API int q42_map_open(q42_map *m, const char *path, int advice, q42_err *err);
Q42_API void q42_map_close(q42_map *m);
/* madvise advice for the bytes [off, off + len) of the mapping, widened to
 * whole pages and clipped to the mapping. Advice is a hint: false when the
 * kernel refused it (e.g. MADV_HUGEPAGE where the mapping cannot have huge
 * pages), which callers may ignore. */
Q42_API bool q42_map_advise(const q42_map *m, uint64_t off, uint64_t len, int advice);

typedef struct q42_outfile {
	FILE *fp;
	int fd;
	char *path;     /* final path, NULL when writing to stdout */
	char *tmp_path; /* temporary path in the same directory */
} q42_outfile;

/* Open path for writing through a temporary file ("-" = stdout). */
Q42_API int q42_outfile_open(q42_outfile *o, const char *path, q42_err *err);
/* Flush, fsync, rename into place and fsync the directory. */
Q42_API int q42_outfile_commit(q42_outfile *o, q42_err *err);
/* Discard: close and unlink the temporary file. Safe after commit. */
Q42_API void q42_outfile_abort(q42_outfile *o);

#endif
