/* bench_rows.c -- how fast the engine's row products run: the llama.cpp
 * arithmetic ones (q42_llamacpp_select) and the generic Q8_0/Q5_0 ones
 * (q42_llamacpp_generic_rows), as the forward pass calls them.
 *
 * Decode: one token against a weight matrix larger than the caches
 * (--mib, default 256), in GB/s of weight bytes, and the same bytes read
 * by the loop `membw` times (a sum of 64-bit words, each thread its own
 * rows), the two passes alternating so that both see the same memory
 * bandwidth; "vs stream" is the median of the passes' ratios.
 * --job-rows N runs the decode pass as the engine runs a one-token pass:
 * jobs of N rows with a barrier between them (a spin, as the pool's),
 * each job's rows split between the threads in shares of 16 rows
 * (--job-layout split, the engine's way), or each thread's rows one run
 * of the buffer taken N / threads rows per job (--job-layout own); the
 * read it is compared with stays one job. Jobs the size of a layer's
 * products (smol360: 960-2560 rows) show what the barriers cost.
 * Prefill: --tok tokens (default 128) against a matrix of the model's
 * size class (--prefill-mib, default 4), in multiply-adds per second. Rows are split between --threads
 * threads in shares of 16 rows; best of --reps passes. --isa (best,
 * scalar, avx2, avx512, as q42run's) picks the kernel table; --variant
 * zen4, haswell or icelake takes the products of that llama.cpp variant
 * instead of the sapphirerapids ones (q42_llamacpp_select_variant). A benchmark, not a
 * test: it checks nothing and never runs under `make check`.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "kernels/q42_llamacpp.h"
#include "kernels/q42_kernels.h"
#include "common/q42_types.h"

struct job {
	q42_llamacpp_rows_fn rows;
	const uint8_t *w, *x;
	float *y;
	int64_t n, r0, r1, n_rows, n_tok;
	uint64_t rb, xb;
	bool stream; /* membw's loop over the rows' bytes instead */
	uint64_t sum;
	int64_t job_rows; /* > 0: decode in jobs of this many rows */
	bool own;         /* jobs from each thread's own run of rows */
	int t, threads;
};

/* The barrier between jobs: the last thread in bumps the generation. */
static _Atomic uint32_t bar_in, bar_gen;

static void barrier(int threads)
{
	const uint32_t g = atomic_load(&bar_gen);
	if (atomic_fetch_add(&bar_in, 1) + 1 == (uint32_t)threads) {
		atomic_store(&bar_in, 0);
		atomic_fetch_add(&bar_gen, 1);
		return;
	}
	while (atomic_load(&bar_gen) == g)
		;
}

static void rows_of(const struct job *j, int64_t r0, int64_t r1)
{
	if (r1 > r0)
		j->rows(j->n, r1 - r0, j->w + (uint64_t)r0 * j->rb, j->rb, j->n_tok, j->x, j->xb, j->y + r0,
			(uint64_t)j->n_rows);
}

/* Thread j->t's part of the decode pass in jobs of j->job_rows rows. */
static void run_jobs(const struct job *j)
{
	const int64_t N = j->n_rows, T = j->threads, jr = j->job_rows;
	for (int64_t a = 0; a < N; a += jr) {
		if (j->own) {
			const int64_t base = N * j->t / T / 16 * 16;
			const int64_t end = j->t + 1 == T ? N : N * (j->t + 1) / T / 16 * 16;
			const int64_t r0 = base + a / T / 16 * 16;
			const int64_t r1 = a + jr >= N ? end : base + (a + jr) / T / 16 * 16;
			rows_of(j, r0, r1 < end ? r1 : end);
		} else {
			const int64_t e = a + jr < N ? a + jr : N;
			rows_of(j, a + (e - a) * j->t / T / 16 * 16,
				j->t + 1 == T ? e : a + (e - a) * (j->t + 1) / T / 16 * 16);
		}
		barrier((int)T);
	}
}

static uint64_t sum_words(const uint8_t *p, size_t bytes)
{
	const uint64_t *a = (const uint64_t *)(const void *)p;
	const size_t n = bytes / 8;
	uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	size_t i = 0;
	for (; i + 4 <= n; i += 4) {
		s0 += a[i];
		s1 += a[i + 1];
		s2 += a[i + 2];
		s3 += a[i + 3];
	}
	for (; i < n; i++)
		s0 += a[i];
	return s0 + s1 + s2 + s3;
}

static void *run(void *arg)
{
	struct job *j = arg;
	if (j->stream)
		j->sum = sum_words(j->w + (uint64_t)j->r0 * j->rb, (size_t)((uint64_t)(j->r1 - j->r0) * j->rb));
	else if (j->job_rows > 0)
		run_jobs(j);
	else
		rows_of(j, j->r0, j->r1);
	return NULL;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One pass over the job's rows split between threads, in seconds;
 * negative when a thread cannot start. */
static double pass(struct job base, int threads)
{
	struct job jobs[64];
	pthread_t tid[64];
	const double t0 = now();
	atomic_store(&bar_in, 0);
	for (int t = 0; t < threads; t++) {
		jobs[t] = base;
		jobs[t].t = t;
		jobs[t].threads = threads;
		jobs[t].r0 = base.n_rows * t / threads / 16 * 16;
		jobs[t].r1 = t + 1 == threads ? base.n_rows : base.n_rows * (t + 1) / threads / 16 * 16;
		if (t > 0 && pthread_create(&tid[t], NULL, run, &jobs[t]) != 0)
			return -1.0;
	}
	run(&jobs[0]);
	for (int t = 1; t < threads; t++)
		pthread_join(tid[t], NULL);
	return now() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Best of reps passes in seconds (negative when a thread cannot start);
 * with a stream, each pass is followed by one of the stream, whose best
 * goes to *stream_s and the median of stream time / kernel time to
 * *ratio. */
static double bench(struct job base, int threads, int reps, double *stream_s, double *ratio)
{
	double best = 1e30, sbest = 1e30, r[256];
	for (int rep = 0; rep < reps; rep++) {
		const double dt = pass(base, threads);
		if (dt < 0)
			return -1.0;
		best = dt < best ? dt : best;
		if (stream_s == NULL)
			continue;
		struct job sj = base;
		sj.stream = true;
		const double st = pass(sj, threads);
		if (st < 0)
			return -1.0;
		sbest = st < sbest ? st : sbest;
		r[rep] = st / dt;
	}
	if (stream_s != NULL) {
		qsort(r, (size_t)reps, sizeof r[0], cmp_double);
		*stream_s = sbest;
		*ratio = reps % 2 ? r[reps / 2] : (r[reps / 2 - 1] + r[reps / 2]) / 2;
	}
	return best;
}

struct kind {
	const char *name;
	uint32_t dtype;
	/* the file's layout and llama.cpp's arithmetic, the generic ggml
	 * arithmetic, or the layout q42_llamacpp_select_packed repacks to */
	enum { F_LLAMACPP, F_GENERIC, F_PACKED } form;
};

static const struct kind kinds[] = {
	{"q8_0", Q42_DTYPE_Q8_0, F_LLAMACPP}, {"q4_0", Q42_DTYPE_Q4_0, F_LLAMACPP},
	{"q4_K", Q42_DTYPE_Q4_K, F_LLAMACPP}, {"q6_K", Q42_DTYPE_Q6_K, F_LLAMACPP},
	{"f16", Q42_DTYPE_F16, F_LLAMACPP},	 {"gen-q8_0", Q42_DTYPE_Q8_0, F_GENERIC},
	{"gen-q5_0", Q42_DTYPE_Q5_0, F_GENERIC},	 {"q5_1", Q42_DTYPE_Q5_1, F_LLAMACPP},
	{"q5_K", Q42_DTYPE_Q5_K, F_LLAMACPP},	 {"gen-q5_1", Q42_DTYPE_Q5_1, F_GENERIC},
	{"gen-q4_K", Q42_DTYPE_Q4_K, F_GENERIC},	 {"gen-q5_K", Q42_DTYPE_Q5_K, F_GENERIC},
	{"q5_0", Q42_DTYPE_Q5_0, F_LLAMACPP},	 {"tq1_0", Q42_DTYPE_TQ1_0, F_LLAMACPP},
	{"tq2_0", Q42_DTYPE_TQ2_0, F_LLAMACPP},	 {"q3_K", Q42_DTYPE_Q3_K, F_LLAMACPP},
	{"q2_K", Q42_DTYPE_Q2_K, F_LLAMACPP},	 {"q4_1", Q42_DTYPE_Q4_1, F_LLAMACPP},
	{"iq4_nl", Q42_DTYPE_IQ4_NL, F_LLAMACPP},	 {"iq4_xs", Q42_DTYPE_IQ4_XS, F_LLAMACPP},
	{"r16-q5_0", Q42_DTYPE_Q5_0, F_PACKED}, {"r16-q4_0", Q42_DTYPE_Q4_0, F_PACKED},
	{"r16-q4_1", Q42_DTYPE_Q4_1, F_PACKED}, {"r16-q5_1", Q42_DTYPE_Q5_1, F_PACKED},
	{"r16-q8_0", Q42_DTYPE_Q8_0, F_PACKED}, {"r16-f16", Q42_DTYPE_F16, F_PACKED},
	{"r16-q4_K", Q42_DTYPE_Q4_K, F_PACKED}, {"r16-q6_K", Q42_DTYPE_Q6_K, F_PACKED},
	{"bf16", Q42_DTYPE_BF16, F_LLAMACPP},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: bench_rows [--mib 256] [--prefill-mib 4] [--tok 128] [--k 2560] "
		   "[--threads 1] [--reps 5] [--type NAME] [--isa best|scalar|avx2|avx512] "
		   "[--variant sapphirerapids|zen4|haswell|icelake]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"mib", required_argument, NULL, 'm'},	 {"prefill-mib", required_argument, NULL, 'p'},
		{"tok", required_argument, NULL, 'n'},	 {"k", required_argument, NULL, 'k'},
		{"threads", required_argument, NULL, 't'}, {"reps", required_argument, NULL, 'r'},
		{"type", required_argument, NULL, 'y'},	 {"isa", required_argument, NULL, 'i'},
		{"job-rows", required_argument, NULL, 'j'}, {"job-layout", required_argument, NULL, 'l'},
		{"variant", required_argument, NULL, 'v'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	long mib = 256, pmib = 4, tok = 128, kdim = 2560, threads = 1, reps = 5, job_rows = 0;
	bool own = false;
	const char *only = NULL;
	enum q42_isa isa = Q42_ISA_BEST;
	enum q42_llamacpp_variant variant = Q42_LLAMACPP_SAPPHIRERAPIDS;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'm': mib = strtol(optarg, NULL, 10); break;
		case 'p': pmib = strtol(optarg, NULL, 10); break;
		case 'n': tok = strtol(optarg, NULL, 10); break;
		case 'k': kdim = strtol(optarg, NULL, 10); break;
		case 't': threads = strtol(optarg, NULL, 10); break;
		case 'r': reps = strtol(optarg, NULL, 10); break;
		case 'y': only = optarg; break;
		case 'j': job_rows = strtol(optarg, NULL, 10); break;
		case 'l':
			if (strcmp(optarg, "split") != 0 && strcmp(optarg, "own") != 0) {
				usage(stderr);
				return 2;
			}
			own = strcmp(optarg, "own") == 0;
			break;
		case 'i':
			if (strcmp(optarg, "best") == 0) {
				isa = Q42_ISA_BEST;
			} else if (strcmp(optarg, "scalar") == 0) {
				isa = Q42_ISA_SCALAR;
			} else if (strcmp(optarg, "avx2") == 0) {
				isa = Q42_ISA_AVX2;
			} else if (strcmp(optarg, "avx512") == 0) {
				isa = Q42_ISA_AVX512;
			} else {
				usage(stderr);
				return 2;
			}
			break;
		case 'v':
			if (strcmp(optarg, "zen4") == 0) {
				variant = Q42_LLAMACPP_ZEN4;
			} else if (strcmp(optarg, "haswell") == 0) {
				variant = Q42_LLAMACPP_HASWELL;
			} else if (strcmp(optarg, "icelake") == 0) {
				variant = Q42_LLAMACPP_ICELAKE;
			} else if (strcmp(optarg, "sapphirerapids") != 0) {
				usage(stderr);
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (mib < 1 || mib > 4096 || pmib < 1 || pmib > mib || tok < 1 || tok > 4096 || reps < 1 ||
	    threads < 1 || threads > 64 || reps > 256 || kdim < 256 || kdim % 256 != 0 || kdim > (1 << 16) ||
	    job_rows < 0 || (job_rows > 0 && job_rows < 16 * threads)) {
		usage(stderr);
		return 2;
	}
	const size_t wsize = (size_t)mib << 20;
	/* on transparent huge pages where the kernel grants them, as the
	 * engine keeps its repacked matrices */
	void *wp = NULL;
	if (posix_memalign(&wp, (size_t)2 << 20, wsize) != 0)
		wp = NULL;
#ifdef MADV_HUGEPAGE
	if (wp != NULL)
		(void)madvise(wp, wsize, MADV_HUGEPAGE);
#endif
	uint8_t *w = wp;
	float *xf = malloc((size_t)kdim * sizeof *xf);
	uint8_t *x = malloc(((size_t)kdim * 4 + 64) * (size_t)tok);
	float *y = malloc(((size_t)pmib << 20) * (size_t)tok / 16 + wsize / 8);
	if (w == NULL || xf == NULL || x == NULL || y == NULL) {
		fprintf(stderr, "bench_rows: out of memory\n");
		return 1;
	}
	/* 0x30..0x3F bytes: every f16 field is a normal number */
	srand(1);
	for (size_t i = 0; i < wsize; i++)
		w[i] = (uint8_t)(0x30 | (rand() & 0x0F));
	for (long i = 0; i < kdim; i++)
		xf[i] = (float)rand() / (float)RAND_MAX - 0.5f;

	printf("# k=%ld, %ld thread(s), best of %ld, %s kernels; decode: 1 token, %ld MiB of weights; "
	       "prefill: %ld tokens, %ld MiB\n", kdim, threads, reps, q42_isa_name(isa), mib, tok, pmib);
	if (job_rows > 0)
		printf("# decode in jobs of %ld rows, %s\n", job_rows,
		       own ? "each thread's from its own run of rows" : "each split between the threads");
	printf("%-9s %-10s %12s %12s %10s %14s\n", "type", "kernel", "decode GB/s", "stream GB/s", "vs stream",
	       "prefill GMAC/s");
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		const struct kind *k = &kinds[i];
		if (only != NULL && strcmp(only, k->name) != 0)
			continue;
		q42_llamacpp_kernels ck;
		if (k->form == F_GENERIC) {
			const q42_type_kernels *tk = q42_kernels_get(k->dtype, isa);
			ck.rows = q42_llamacpp_generic_rows(k->dtype, isa);
			ck.vec_dot_type = tk->vec_dot_type;
			ck.quantize = q42_kernels_get(tk->vec_dot_type, isa)->quantize;
			ck.name = "generic";
		} else if (k->form == F_PACKED) {
			/* random bytes are as good a packed matrix as a file's */
			q42_llamacpp_packed pk;
			ck.rows = NULL;
			if (q42_llamacpp_select_packed_variant(variant, k->dtype, 32, kdim, Q42_LLAMACPP_MATMUL, isa,
							       &pk) &&
			    q42_llamacpp_select_variant(variant, k->dtype, 32, kdim, Q42_LLAMACPP_MATMUL, isa, &ck)) {
				ck.rows = pk.rows;
				ck.name = pk.name;
			}
		} else if (!q42_llamacpp_select_variant(variant, k->dtype, 32, kdim, Q42_LLAMACPP_MATMUL, isa, &ck)) {
			ck.rows = NULL;
		}
		if (ck.rows == NULL) {
			printf("%-9s %-10s %12s %12s %10s %14s\n", k->name, "-", "-", "-", "-", "-");
			continue;
		}
		uint64_t rb = 0, xb = 0;
		q42_dtype_nbytes(k->dtype, (uint64_t)kdim, (uint64_t)kdim, &rb);
		if (ck.quantize != NULL)
			q42_dtype_nbytes(ck.vec_dot_type, (uint64_t)kdim, (uint64_t)kdim, &xb);
		else
			xb = (uint64_t)kdim * sizeof(float);
		for (long t = 0; t < tok; t++) {
			if (ck.quantize != NULL)
				ck.quantize(xf, x + (uint64_t)t * xb, kdim);
			else
				memcpy(x + (uint64_t)t * xb, xf, (size_t)xb);
		}
		struct job j = {ck.rows, w, x, y, kdim, 0, 0, (int64_t)(wsize / rb), 1, rb, xb, false, 0, job_rows, own, 0, 0};
		double ss = 0, ratio = 0;
		const double sd = bench(j, (int)threads, (int)reps, &ss, &ratio);
		const double dbytes = (double)(wsize / rb * rb);
		j.job_rows = 0;
		j.n_rows = (int64_t)(((size_t)pmib << 20) / rb);
		j.n_tok = tok;
		const double sp = bench(j, (int)threads, (int)reps, NULL, NULL);
		if (sd < 0 || sp < 0) {
			fprintf(stderr, "bench_rows: cannot start threads\n");
			return 1;
		}
		const double macs = (double)j.n_rows * (double)kdim * (double)tok;
		printf("%-9s %-10s %12.2f %12.2f %10.3f %14.1f\n", k->name, ck.name, dbytes / sd * 1e-9,
		       dbytes / ss * 1e-9, ratio, macs / sp * 1e-9);
		fflush(stdout);
	}
	free(w);
	free(xf);
	free(x);
	free(y);
	return 0;
}
