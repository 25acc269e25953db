/* q42_p64_stats.h -- manifold statistics for P64 (internal to libq42).
 *
 * The writer fills one manifold record per layer plus a global one from
 * the source tensor bytes; the definition of each coordinate is in p64(5),
 * "Manifold records". Kept apart from the writer so the arithmetic that
 * must be deterministic sits in one small file.
 */
#ifndef Q42_P64_STATS_H
#define Q42_P64_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include "formats/q42_p64.h"

typedef struct q42_p64_stats_input {
	const uint8_t *data; /* tensor bytes */
	uint32_t dtype;
	uint64_t n_elems;
	uint64_t row_elems;
	uint32_t role;       /* enum q42_role */
	int32_t layer;       /* -1 for global tensors */
} q42_p64_stats_input;

/* The coordinate (enum q42_p64_coord, never ALL) a role contributes to. */
uint32_t q42_p64_coord_of_role(uint32_t role);

/* One tensor's sample: the sum of squares and count of the sampled
 * elements; ok false when its type cannot be decoded. */
typedef struct q42_p64_stats_part {
	double sumsq;
	uint64_t count;
	bool ok;
} q42_p64_stats_part;

bool q42_p64_stats_sample(const q42_p64_stats_input *t, double *sumsq, uint64_t *count);

/* q42_p64_stats_compute from samples taken earlier, one per tensor (the
 * streamed writer samples each blob while it has it in memory); in[i].data
 * is not read. The result is the same as compute's on the same bytes. */
bool q42_p64_stats_fold(const q42_p64_stats_input *in, const q42_p64_stats_part *parts,
			uint64_t n, q42_p64_manifold *recs, uint32_t n_recs);

/* Fill recs[0, n_recs): records 0..n_recs-2 are layers, the last is global.
 * A tensor whose layer is outside the layer records counts only globally.
 * False when out of memory. */
bool q42_p64_stats_compute(const q42_p64_stats_input *in, uint64_t n, q42_p64_manifold *recs,
			   uint32_t n_recs);

#endif
