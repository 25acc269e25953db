/* fuzz_volume.c -- libFuzzer harness for the Q42 volume reader.
 *
 * Feeds arbitrary bytes to q42_volume_parse and, when a prefix validates,
 * exercises the tree functions over its leaves. Built with
 * FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, which skips the CRC, link and
 * vote-signature comparisons so the fuzzer reaches the structure and review
 * checks behind them; everything else is the production code.
 */
#include <stddef.h>
#include <stdint.h>
#include "wal/q42_volume.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	q42_volume v;
	q42_err err;
	q42_hash root, path[Q42_MERKLE_MAX_PATH], proof[Q42_MERKLE_MAX_CONSISTENCY];
	uint32_t len;
	q42_volume_parse(&v, data, size, "fuzz", &err);
	if (v.n_leaves > 0) {
		q42_volume_root(&v, v.n_leaves, root, &err);
		q42_merkle_path(v.leaves, v.n_leaves, v.n_leaves / 2, path, &len, &err);
		q42_merkle_consistency(v.leaves, v.n_leaves, (v.n_leaves + 1) / 2, proof, &len, &err);
	}
	for (uint64_t i = 0; i < v.n_frames; i++) {
		q42_vol_entry e;
		q42_vol_vote vt;
		if (v.frames[i].type == Q42_VOL_F_ENTRY || v.frames[i].type == Q42_VOL_F_PENDING)
			q42_volume_entry(&v, &v.frames[i], &e);
		else if (v.frames[i].type == Q42_VOL_F_VOTE)
			q42_volume_vote(&v, &v.frames[i], &vt);
	}
	q42_volume_free(&v);
	return 0;
}
