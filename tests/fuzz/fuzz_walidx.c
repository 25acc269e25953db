/* fuzz_walidx.c -- libFuzzer harness for the files beside a Q42 volume:
 * the index (VOL.idx) and the review state (VOL.rev), read together with
 * the volume they describe.
 *
 * An input is a volume, an index and a review state file, cut by two
 * little-endian 32-bit lengths at its start (volume, then index; the rest
 * is the review state). They are written to files in a private temporary
 * directory and opened the ways q42wal opens them: the indexed reader
 * (entries, roots, inclusion and consistency proofs from the node store),
 * the review state reader, verify (every frame, every record, the review
 * state against the frames) and a writer's open and close (checkpoint
 * search, index repair, the review state rewritten). Built with
 * FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, which skips CRC and signature
 * comparisons so mutated records reach the checks behind them. The files
 * live in fuzz_file.h's folder (a tmpfs where there is one).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/q42_le.h"
#include "wal/q42_wal.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char vol[4200], idx[4200], rev[4200];

static void put(const char *path, const uint8_t *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		abort();
	if (n && write(fd, p, n) != (ssize_t)n)
		abort();
	close(fd);
}

static void readers(void)
{
	q42_wal_reader r;
	q42_err err;
	q42_hash h, path[Q42_MERKLE_MAX_PATH], proof[Q42_MERKLE_MAX_CONSISTENCY];
	uint32_t len;
	if (q42_wal_reader_open(&r, vol, &err) == Q42_OK) {
		uint64_t n = r.n_leaves;
		uint64_t pick[3] = {0, n / 2, n ? n - 1 : 0};
		for (int k = 0; k < 3 && n; k++) {
			q42_vol_entry e;
			uint64_t seq;
			q42_wal_reader_entry(&r, pick[k], &e, &seq, h, &err);
			q42_wal_reader_path(&r, pick[k], n, path, &len, &err);
		}
		if (n) {
			q42_wal_reader_root(&r, n, h, &err);
			q42_wal_reader_consistency(&r, (n + 1) / 2, n, proof, &len, &err);
		}
		q42_wal_reader_close(&r);
	}
	q42_wal_review rv;
	if (q42_wal_review_read(vol, &rv, &err) == Q42_OK)
		q42_wal_review_free(&rv);
	q42_wal_verify_report rep;
	if (q42_wal_verify(vol, 1, NULL, NULL, &rep, &err) == Q42_OK)
		q42_wal_verify_free(&rep);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!fuzz_dir[0]) {
		fuzz_dir_init("fuzz_walidx");
		snprintf(vol, sizeof vol, "%s/v.q42", fuzz_dir);
		snprintf(idx, sizeof idx, "%s/v.q42.idx", fuzz_dir);
		snprintf(rev, sizeof rev, "%s/v.q42.rev", fuzz_dir);
	}
	if (size < 8)
		return 0;
	uint64_t nv = q42_ld32(data), ni = q42_ld32(data + 4), rest = size - 8;
	if (nv > rest || ni > rest - nv)
		return 0;
	put(vol, data + 8, (size_t)nv);
	put(idx, data + 8 + nv, (size_t)ni);
	put(rev, data + 8 + nv + ni, (size_t)(rest - nv - ni));
	readers();
	/* A writer's open and close: repairs the index, rewrites the review
	 * state; then the readers again over what it left. */
	q42_wal w;
	q42_err err;
	if (q42_wal_open(&w, vol, Q42_WAL_SYNC_OFF, true, &err) == Q42_OK) {
		q42_wal_close(&w, &err);
		readers();
	}
	return 0;
}
