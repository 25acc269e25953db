/* q42_bench.c -- the measurement loops behind `q42run --bench`.
 *
 * Token ids are drawn from a seeded xorshift (what they are does not
 * change the work); each repetition starts from an empty cache, as
 * llama-bench does, after one untimed warm-up of each kind (a prompt pass,
 * one generation step), also as llama-bench does: the first pass of a
 * process pays for first touches of the activations and the KV cache and
 * for waking the thread pool. Time is CLOCK_MONOTONIC around
 * q42_engine_eval only, except for time to first token, which covers the
 * whole load; during generation the forward pass also clocks its product
 * jobs and its attention (q42_engine_phase_ns), to say how fast the
 * products alone stream the weights and what the rest of a step costs. Allocates the id buffer once per call; the throughput loops
 * allocate nothing per repetition.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "measure/q42_bench.h"
#include "engine/q42_engine.h"
#include "engine/q42_pool.h"

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

/* Bytes of weight matrices a decode step streams (q42_engine_stream_spans). */
static uint64_t weight_bytes(const q42_engine *e)
{
	const uint32_t cap = q42_engine_n_spans_max(e);
	const uint8_t **p = malloc(cap * sizeof *p);
	uint64_t *len = malloc(cap * sizeof *len), sum = 0;
	if (p != NULL && len != NULL) {
		const uint32_t n = q42_engine_stream_spans(e, p, len, cap);
		for (uint32_t i = 0; i < n && i < cap; i++)
			sum += len[i];
	}
	free(p);
	free(len);
	return sum;
}

/* ---- the read pass ------------------------------------------------------
 *
 * The machine's read bandwidth, measured on the same bytes a decode step
 * streams, by the same threads, between one generation step and the next:
 * membw's loop (llamapeer's membw.c: an integer sum over 8-byte words,
 * each thread over one contiguous share) run over every weight matrix, with
 * no hand-over between the matrices. A separate membw run reads other
 * pages, in another process, seconds away; on a host whose bandwidth swings
 * by a third from one second to the next that ratio is mostly noise, while
 * a step and the pass after it see the same machine. Every other step is
 * followed by the same pass as one job per matrix instead, as a step hands
 * its products out: what the reading alone loses to the hand-overs and to
 * each thread's stream starting afresh at every matrix, the ceiling of any
 * product kernel under them. */

/* Steps followed by a pass: the first ones only, so that the samples of a
 * long run (up to 1000 repetitions of a whole context) stay a few MB. */
#define Q42_BENCH_READ_STEPS 65536u

struct read_args {
	const uint8_t **p;
	const uint64_t *len;
	uint32_t i0, i1; /* the matrices of this job */
	uint64_t sink[Q42_POOL_MAX_THREADS];
};

typedef uint64_t read_vec __attribute__((vector_size(64)));

/* membw's loop as its -march=native build runs it: one 64-byte load
 * added to one accumulator per line (a single zmm load where the CPU has
 * AVX-512, two ymm ones with AVX2). */
__attribute__((target_clones("avx512f", "avx2", "default")))
static uint64_t sum_words(const uint8_t *p, uint64_t bytes)
{
	read_vec acc = {0};
	uint64_t i = 0, s = 0;
	for (; i + 64 <= bytes; i += 64) {
		read_vec v;
		memcpy(&v, p + i, sizeof v);
		acc += v;
	}
	for (uint32_t k = 0; k < 8; k++)
		s += acc[k];
	for (; i + 8 <= bytes; i += 8) {
		uint64_t v;
		memcpy(&v, p + i, sizeof v);
		s += v;
	}
	return s;
}

/* Run after each read pass: a worker that finished its share of the pass
 * long before the caller (more than the pool's spin) is asleep on its
 * futex, and without this the next step's first product would wait for
 * it to wake, far longer than steps following each other wait
 * (docs/perf/scheduling.md). */
static void wake_job(void *v, uint32_t ith, uint32_t nth)
{
	(void)v;
	(void)ith;
	(void)nth;
}

static void read_job(void *v, uint32_t ith, uint32_t nth)
{
	struct read_args *a = v;
	uint64_t s = 0;
	for (uint32_t i = a->i0; i < a->i1; i++) {
		/* shares start on a 64-byte line, as a thread's rows do */
		const uint64_t lines = a->len[i] / 64;
		const uint64_t b0 = lines * ith / nth * 64;
		const uint64_t b1 = ith + 1 == nth ? a->len[i] : lines * (ith + 1) / nth * 64;
		s += sum_words(a->p[i] + b0, b1 - b0);
	}
	a->sink[ith] = s;
}

static void random_ids(int32_t *ids, uint32_t n, uint32_t n_vocab, uint64_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
	for (uint32_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		ids[i] = (int32_t)(x % n_vocab);
	}
}

int q42_bench_run(q42_engine *e, const q42_bench_opts *o, q42_bench_result *out, q42_err *err)
{
	const uint32_t n_ctx = q42_engine_n_ctx(e), n_vocab = q42_engine_n_vocab(e);
	q42_pool *const pool = q42_engine_pool(e);
	const uint32_t n_ids = o->depth + (o->n_pp > o->n_tg ? o->n_pp : o->n_tg);
	int32_t *ids = NULL;
	double *tps = NULL, *rd_s = NULL, *vs = NULL, *ops_s = NULL;
	uint64_t *len = NULL;
	uint32_t n_mat = 0;
	struct read_args rd = {NULL, NULL, 0, 0, {0}};
	double dev0;
	int rc = Q42_OK;

	*out = (q42_bench_result){.weight_bytes = weight_bytes(e)};
	if (o->reps < 1 || o->reps > Q42_BENCH_REPS_MAX)
		return q42_err_set(err, Q42_EARG, "bench: %u repetitions, expected 1..%u", o->reps,
				   Q42_BENCH_REPS_MAX);
	if (o->depth > n_ctx || o->n_pp > n_ctx - o->depth || o->n_tg > n_ctx - o->depth)
		return q42_err_set(err, Q42_EARG,
				   "bench: --depth %u with --pp %u / --tg %u does not fit a context of %u tokens",
				   o->depth, o->n_pp, o->n_tg, n_ctx);
	ids = malloc((n_ids ? n_ids : 1) * sizeof *ids);
	tps = malloc(o->reps * sizeof *tps);
	if (ids == NULL || tps == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "bench: out of memory");
		goto fail;
	}
	random_ids(ids, n_ids, n_vocab, o->seed);
	/* warm-up passes; then the depth, which every repetition returns to */
	if (o->n_pp > 0 && (rc = q42_engine_eval(e, ids, o->n_pp, err)) != Q42_OK)
		goto fail;
	q42_engine_reset(e);
	if (o->n_tg > 0 && (rc = q42_engine_eval(e, ids, 1, err)) != Q42_OK)
		goto fail;
	q42_engine_reset(e);
	if (o->depth > 0 && (rc = q42_engine_eval(e, ids, o->depth, err)) != Q42_OK)
		goto fail;
	if (o->n_pp > 0) {
		dev0 = q42_engine_device_ms(e);
		for (uint32_t r = 0; r < o->reps; r++) {
			if ((rc = q42_engine_truncate(e, o->depth, err)) != Q42_OK)
				goto fail;
			const double t0 = now_s();
			rc = q42_engine_eval(e, ids + o->depth, o->n_pp, err);
			if (rc != Q42_OK)
				goto fail;
			tps[r] = (double)o->n_pp / (now_s() - t0);
		}
		out->pp = summarise(tps, o->reps);
		out->pp_device_ms = (q42_engine_device_ms(e) - dev0) / o->reps;
	}
	if (o->n_tg > 0) {
		double total = 0.0, read_total = 0.0;
		uint32_t n_read = 0, n_ops = 0;
		if (o->read_pass && pool != NULL) {
			const uint32_t cap = q42_engine_n_spans_max(e);
			const uint64_t all = (uint64_t)o->reps * o->n_tg;
			const uint64_t n_steps = all < Q42_BENCH_READ_STEPS ? all : Q42_BENCH_READ_STEPS;
			rd.p = malloc(cap * sizeof *rd.p);
			rd.len = len = malloc(cap * sizeof *len);
			rd_s = malloc(n_steps * sizeof *rd_s);
			vs = malloc(n_steps * sizeof *vs);
			ops_s = malloc(n_steps * sizeof *ops_s);
			if (rd.p == NULL || len == NULL || rd_s == NULL || vs == NULL || ops_s == NULL) {
				rc = q42_err_set(err, Q42_ENOMEM, "bench: out of memory");
				goto fail;
			}
			n_mat = q42_engine_stream_spans(e, rd.p, len, cap);
		}
		dev0 = q42_engine_device_ms(e);
		q42_engine_phase_clock(e, true);
		for (uint32_t r = 0; r < o->reps; r++) {
			double dt = 0.0;
			if ((rc = q42_engine_truncate(e, o->depth, err)) != Q42_OK)
				goto fail;
			for (uint32_t i = 0; i < o->n_tg; i++) {
				const double t0 = now_s();
				rc = q42_engine_eval(e, ids + o->depth + i, 1, err);
				if (rc != Q42_OK)
					goto fail;
				const double step = now_s() - t0;
				dt += step;
				const uint64_t step_i = (uint64_t)r * o->n_tg + i;
				if (n_mat == 0 || step_i >= Q42_BENCH_READ_STEPS)
					continue;
				const double t1 = now_s();
				if (step_i % 2 == 0) {
					rd.i0 = 0;
					rd.i1 = n_mat;
					q42_pool_run(pool, read_job, &rd);
					rd_s[n_read] = now_s() - t1;
					read_total += rd_s[n_read];
					vs[n_read] = rd_s[n_read] / step;
					n_read++;
					q42_pool_run(pool, wake_job, NULL);
					continue;
				}
				for (rd.i0 = 0; rd.i0 < n_mat; rd.i0++) {
					rd.i1 = rd.i0 + 1;
					q42_pool_run(pool, read_job, &rd);
				}
				ops_s[n_ops++] = (double)out->weight_bytes / (now_s() - t1) / 1e9;
				q42_pool_run(pool, wake_job, NULL);
			}
			total += dt;
			tps[r] = (double)o->n_tg / dt;
		}
		q42_engine_phase_clock(e, false);
		if (q42_engine_phase_ns(e, Q42_PHASE_PRODUCTS) > 0 && total > 0.0) {
			const double mm = (double)q42_engine_phase_ns(e, Q42_PHASE_PRODUCTS) * 1e-9;
			out->tg_stream_gbps = (double)out->weight_bytes * o->n_tg * o->reps / mm / 1e9;
			out->tg_products_share = mm / total;
			out->tg_attention_share = (double)q42_engine_phase_ns(e, Q42_PHASE_ATTENTION) * 1e-9 / total;
			if (n_read > 0)
				out->tg_products_vs_read =
					read_total / n_read / (mm / ((double)o->n_tg * o->reps));
		}
		if (n_read > 0) {
			for (uint32_t i = 0; i < n_read; i++)
				rd_s[i] = (double)out->weight_bytes / rd_s[i] / 1e9;
			out->tg_read_gbps = summarise(rd_s, n_read).median;
			out->tg_vs_read = summarise(vs, n_read).median;
		}
		if (n_ops > 0)
			out->tg_read_ops_gbps = summarise(ops_s, n_ops).median;
		out->tg = summarise(tps, o->reps);
		out->tg_device_ms = (q42_engine_device_ms(e) - dev0) / o->reps;
		out->tg_gbps = (double)out->weight_bytes * out->tg.median / 1e9;
	}
fail:
	q42_engine_phase_clock(e, false);
	q42_engine_reset(e);
	free(ids);
	free(tps);
	free((void *)rd.p);
	free(len);
	free(rd_s);
	free(vs);
	free(ops_s);
	return rc;
}

/* One repetition of q42_bench_ttft_run; *ids is allocated by the first. */
static int ttft_once(const q42_bench_ttft_opts *o, int32_t **ids, double *load_ms,
		     double *prefill_ms, int32_t *first, q42_err *err)
{
	q42_mount *m = NULL;
	q42_engine *e = NULL;
	const double t0 = now_s();
	double t1;
	int rc;

	rc = q42_mount_open(&m, o->path, 0, err);
	if (rc == Q42_OK)
		rc = q42_engine_open(&e, m, o->eo, err);
	if (rc != Q42_OK)
		goto done;
	t1 = now_s();
	if (o->n_pp > q42_engine_n_ctx(e)) {
		rc = q42_err_set(err, Q42_EARG, "bench: --pp %u does not fit a context of %u tokens",
				 o->n_pp, q42_engine_n_ctx(e));
		goto done;
	}
	if (*ids == NULL) {
		*ids = malloc(o->n_pp * sizeof **ids);
		if (*ids == NULL) {
			rc = q42_err_set(err, Q42_ENOMEM, "bench: out of memory");
			goto done;
		}
		random_ids(*ids, o->n_pp, q42_engine_n_vocab(e), o->seed);
	}
	rc = q42_engine_eval(e, *ids, o->n_pp, err);
	if (rc != Q42_OK)
		goto done;
	{
		/* the first token, chosen as greedy decoding chooses it */
		const float *l = q42_engine_logits(e);
		uint32_t best = 0;
		for (uint32_t i = 1; i < q42_engine_n_vocab(e); i++)
			if (l[i] > l[best])
				best = i;
		*first = (int32_t)best;
	}
	*prefill_ms = (now_s() - t1) * 1e3;
	*load_ms = (t1 - t0) * 1e3;
done:
	q42_engine_close(e);
	q42_mount_close(m);
	return rc;
}

int q42_bench_ttft_run(const q42_bench_ttft_opts *o, q42_bench_ttft *out, q42_err *err)
{
	double *ld = NULL, *pf = NULL, *tt = NULL;
	int32_t *ids = NULL;
	int rc = Q42_OK;

	memset(out, 0, sizeof *out);
	if (o->reps < 1 || o->reps > Q42_BENCH_REPS_MAX || o->n_pp < 1)
		return q42_err_set(err, Q42_EARG,
				   "bench: %u repetitions of %u prompt tokens, expected 1..%u of at least 1",
				   o->reps, o->n_pp, Q42_BENCH_REPS_MAX);
	ld = malloc(o->reps * sizeof *ld);
	pf = malloc(o->reps * sizeof *pf);
	tt = malloc(o->reps * sizeof *tt);
	if (ld == NULL || pf == NULL || tt == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "bench: out of memory");
		goto done;
	}
	for (uint32_t r = 0; r < o->reps; r++) {
		rc = ttft_once(o, &ids, &ld[r], &pf[r], &out->first_token, err);
		if (rc != Q42_OK)
			goto done;
		tt[r] = ld[r] + pf[r];
	}
	out->first_ttft_ms = tt[0];
	out->load_ms = summarise(ld, o->reps);
	out->prefill_ms = summarise(pf, o->reps);
	out->ttft_ms = summarise(tt, o->reps);
done:
	free(ids);
	free(ld);
	free(pf);
	free(tt);
	return rc;
}

void q42_bench_mem_measure(const q42_engine *e, q42_bench_mem *out)
{
	q42_engine_buffer_bytes(e, &out->kv_bytes, &out->act_bytes, &out->scratch_bytes);
}
