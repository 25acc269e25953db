/* q42_p64_stats.c -- the ten manifold coordinates (see q42_p64_stats.h).
 *
 * Each coordinate is the root mean square of the weights of one role group,
 * estimated from a fixed, evenly spaced sample of at most 64 chunks of
 * about 256 elements per tensor (every element of small tensors), decoded
 * with the scalar reference kernels and summed in double in file order, so
 * the result is the same on every machine. It must stay cheap next to the
 * copy: it never decodes a whole large tensor.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "common/q42_le.h"
#include "formats/q42_p64_stats.h"
#include "formats/q42_roles.h"
#include "common/q42_types.h"
#include "kernels/q42_kernels.h"

#define CHUNK_TARGET 256u
#define MAX_SAMPLES 64u

uint32_t q42_p64_coord_of_role(uint32_t role)
{
	switch (role) {
	case Q42_ROLE_ATTN_Q:
		return Q42_P64_COORD_ATTN_Q;
	case Q42_ROLE_ATTN_K:
		return Q42_P64_COORD_ATTN_K;
	case Q42_ROLE_ATTN_V:
		return Q42_P64_COORD_ATTN_V;
	case Q42_ROLE_ATTN_OUT:
		return Q42_P64_COORD_ATTN_OUT;
	case Q42_ROLE_FFN_GATE:
	case Q42_ROLE_FFN_GATE_EXPS:
		return Q42_P64_COORD_FFN_GATE;
	case Q42_ROLE_FFN_UP:
	case Q42_ROLE_FFN_UP_EXPS:
		return Q42_P64_COORD_FFN_UP;
	case Q42_ROLE_FFN_DOWN:
	case Q42_ROLE_FFN_DOWN_EXPS:
		return Q42_P64_COORD_FFN_DOWN;
	case Q42_ROLE_TOKEN_EMBD_NORM:
	case Q42_ROLE_OUTPUT_NORM:
	case Q42_ROLE_ATTN_NORM:
	case Q42_ROLE_ATTN_Q_NORM:
	case Q42_ROLE_ATTN_K_NORM:
	case Q42_ROLE_POST_ATTN_NORM:
	case Q42_ROLE_FFN_NORM:
	case Q42_ROLE_POST_FFW_NORM:
		return Q42_P64_COORD_NORM;
	default:
		return Q42_P64_COORD_OTHER;
	}
}

typedef struct acc {
	double sumsq[Q42_P64_MANIFOLD_COORDS];
	uint64_t count[Q42_P64_MANIFOLD_COORDS];
} acc;

/* Decode n elements starting at element `first` (a block boundary). */
static bool decode(const q42_p64_stats_input *t, const q42_dtype_info *ti,
		   const q42_type_kernels *k, uint64_t first, uint32_t n, float *out)
{
	const uint8_t *src = t->data + first / ti->block_elems * ti->block_bytes;
	if (t->dtype == Q42_DTYPE_F32) {
		for (uint32_t i = 0; i < n; i++)
			out[i] = q42_ldf32(src + 4 * i);
		return true;
	}
	if (k == NULL || k->dequant == NULL)
		return false;
	k->dequant(src, out, (int64_t)n);
	return true;
}

/* Sum of squares of the sampled elements; false when the type cannot be
 * decoded. */
bool q42_p64_stats_sample(const q42_p64_stats_input *t, double *sumsq, uint64_t *count)
{
	const q42_dtype_info *ti = q42_dtype_get(t->dtype);
	const q42_type_kernels *k = q42_kernels_get(t->dtype, Q42_ISA_SCALAR);
	float buf[CHUNK_TARGET];
	if (ti == NULL || ti->block_elems > CHUNK_TARGET || t->n_elems % ti->block_elems != 0 ||
	    (t->dtype != Q42_DTYPE_F32 && (k == NULL || k->dequant == NULL)))
		return false;
	uint32_t unit = ti->block_elems * ((CHUNK_TARGET + ti->block_elems - 1) / ti->block_elems);
	if (unit > CHUNK_TARGET)
		unit = ti->block_elems;
	uint64_t full = t->n_elems / unit;
	uint32_t rem = (uint32_t)(t->n_elems % unit);
	uint64_t steps = full <= MAX_SAMPLES ? full : MAX_SAMPLES;
	double s = 0.0;
	uint64_t c = 0;
	for (uint64_t j = 0; j < steps; j++) {
		uint64_t chunk = full <= MAX_SAMPLES ? j : j * full / MAX_SAMPLES;
		if (!decode(t, ti, k, chunk * unit, unit, buf))
			return false;
		for (uint32_t i = 0; i < unit; i++)
			s += (double)buf[i] * (double)buf[i];
		c += unit;
	}
	if (full <= MAX_SAMPLES && rem != 0) {
		if (!decode(t, ti, k, full * unit, rem, buf))
			return false;
		for (uint32_t i = 0; i < rem; i++)
			s += (double)buf[i] * (double)buf[i];
		c += rem;
	}
	*sumsq = s;
	*count = c;
	return true;
}

bool q42_p64_stats_compute(const q42_p64_stats_input *in, uint64_t n, q42_p64_manifold *recs,
			   uint32_t n_recs)
{
	q42_p64_stats_part *parts = calloc(n ? n : 1, sizeof *parts);
	if (parts == NULL)
		return false;
	for (uint64_t i = 0; i < n; i++)
		parts[i].ok = q42_p64_stats_sample(&in[i], &parts[i].sumsq, &parts[i].count);
	bool ok = q42_p64_stats_fold(in, parts, n, recs, n_recs);
	free(parts);
	return ok;
}

bool q42_p64_stats_fold(const q42_p64_stats_input *in, const q42_p64_stats_part *parts,
			uint64_t n, q42_p64_manifold *recs, uint32_t n_recs)
{
	acc *a = calloc(n_recs, sizeof *a);
	if (a == NULL)
		return false;
	memset(recs, 0, n_recs * sizeof *recs);
	for (uint32_t r = 0; r < n_recs; r++)
		recs[r].layer = r + 1 == n_recs ? -1 : (int32_t)r;
	for (uint64_t i = 0; i < n; i++) {
		const q42_p64_stats_input *t = &in[i];
		uint32_t rs[2] = {n_recs - 1, n_recs - 1};
		uint32_t nr = 1;
		if (t->layer >= 0 && (uint32_t)t->layer + 1 < n_recs)
			rs[nr++] = (uint32_t)t->layer;
		const double s = parts[i].sumsq;
		const uint64_t c = parts[i].count;
		const bool ok = parts[i].ok;
		uint32_t g = q42_p64_coord_of_role(t->role);
		for (uint32_t k = 0; k < nr; k++) {
			q42_p64_manifold *rec = &recs[rs[k]];
			rec->n_tensors++;
			if (q42_dtype_get(t->dtype) != NULL)
				rec->n_elems += t->n_elems;
			if (!ok) {
				rec->n_skipped++;
				continue;
			}
			a[rs[k]].sumsq[g] += s;
			a[rs[k]].count[g] += c;
			a[rs[k]].sumsq[Q42_P64_COORD_ALL] += s;
			a[rs[k]].count[Q42_P64_COORD_ALL] += c;
		}
	}
	for (uint32_t r = 0; r < n_recs; r++)
		for (uint32_t g = 0; g < Q42_P64_MANIFOLD_COORDS; g++) {
			if (a[r].count[g] == 0)
				continue;
			float v = (float)sqrt(a[r].sumsq[g] / (double)a[r].count[g]);
			if (!isfinite(v))
				continue;
			recs[r].coord[g] = v;
			recs[r].coord_mask |= 1u << g;
		}
	free(a);
	return true;
}
