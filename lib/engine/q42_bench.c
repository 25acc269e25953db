/* q42_bench.c -- the measurement loop behind `q42run --bench`.
 *
 * Token ids are drawn from a seeded xorshift (what they are does not
 * change the work); each repetition starts from an empty cache, as
 * llama-bench does. Time is CLOCK_MONOTONIC around q42_engine_eval only.
 * Allocates the id buffer once per call, nothing per repetition.
 */
#include <stdlib.h>
#include <time.h>
#include "engine/q42_bench.h"
#include "engine/q42_engine_impl.h"

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static q42_bench_stat summarise(double *v, uint32_t n)
{
	q42_bench_stat s;
	qsort(v, n, sizeof *v, cmp_double);
	s.min = v[0];
	s.max = v[n - 1];
	s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
	return s;
}

/* Bytes of weight matrices a decode step streams: every layer matrix and
 * the output matrix (the token embedding is only looked up). */
static uint64_t weight_bytes(const q42_engine *e)
{
	uint64_t sum = 0;
	for (uint32_t l = 0; l < e->n_layer; l++)
		for (uint32_t s = Q42_W_LAYER_FIRST_; s < Q42_W_COUNT_; s++) {
			const q42_weight *w = &e->layers[l].w[s];
			if (w->data != NULL && w->k != NULL)
				sum += w->row_bytes * (uint64_t)w->n_out;
		}
	sum += e->g[Q42_W_OUTPUT].row_bytes * (uint64_t)e->g[Q42_W_OUTPUT].n_out;
	return sum;
}

int q42_bench_run(q42_engine *e, const q42_bench_opts *o, q42_bench_result *out, q42_err *err)
{
	const uint32_t n_ctx = q42_engine_n_ctx(e), n_vocab = q42_engine_n_vocab(e);
	uint64_t x = o->seed * 0x9E3779B97F4A7C15ULL + 1;
	const uint32_t n_ids = o->n_pp > o->n_tg ? o->n_pp : o->n_tg;
	int32_t *ids = NULL;
	double *tps = NULL;
	double dev0;
	int rc = Q42_OK;

	*out = (q42_bench_result){{0, 0, 0}, {0, 0, 0}, weight_bytes(e), 0.0, 0.0, 0.0};
	if (o->reps < 1 || o->reps > Q42_BENCH_REPS_MAX)
		return q42_err_set(err, Q42_EARG, "bench: %u repetitions, expected 1..%u", o->reps,
				   Q42_BENCH_REPS_MAX);
	if (o->n_pp > n_ctx || o->n_tg > n_ctx)
		return q42_err_set(err, Q42_EARG,
				   "bench: --pp %u / --tg %u do not fit a context of %u tokens", o->n_pp,
				   o->n_tg, n_ctx);
	ids = malloc((n_ids ? n_ids : 1) * sizeof *ids);
	tps = malloc(o->reps * sizeof *tps);
	if (ids == NULL || tps == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "bench: out of memory");
		goto fail;
	}
	for (uint32_t i = 0; i < n_ids; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		ids[i] = (int32_t)(x % n_vocab);
	}
	if (o->n_pp > 0) {
		dev0 = q42_engine_device_ms(e);
		for (uint32_t r = 0; r < o->reps; r++) {
			q42_engine_reset(e);
			const double t0 = now_s();
			rc = q42_engine_eval(e, ids, o->n_pp, err);
			if (rc != Q42_OK)
				goto fail;
			tps[r] = (double)o->n_pp / (now_s() - t0);
		}
		out->pp = summarise(tps, o->reps);
		out->pp_device_ms = (q42_engine_device_ms(e) - dev0) / o->reps;
	}
	if (o->n_tg > 0) {
		dev0 = q42_engine_device_ms(e);
		for (uint32_t r = 0; r < o->reps; r++) {
			q42_engine_reset(e);
			const double t0 = now_s();
			for (uint32_t i = 0; i < o->n_tg; i++) {
				rc = q42_engine_eval(e, ids + i, 1, err);
				if (rc != Q42_OK)
					goto fail;
			}
			tps[r] = (double)o->n_tg / (now_s() - t0);
		}
		out->tg = summarise(tps, o->reps);
		out->tg_device_ms = (q42_engine_device_ms(e) - dev0) / o->reps;
		out->tg_gbps = (double)out->weight_bytes * out->tg.median / 1e9;
	}
fail:
	q42_engine_reset(e);
	free(ids);
	free(tps);
	return rc;
}
