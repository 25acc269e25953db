/* bench_kernels.c -- how fast each vec_dot streams weights, per type and
 * ISA: the decode-time matrix-vector product in its plainest form.
 *
 * A weight matrix larger than the caches (--mib, default 64) is dotted
 * row by row with one activation row; the figure is weight bytes per
 * second, best of --reps passes, on --threads threads splitting the rows.
 * Compare it with `membw` (stream-read bandwidth). A benchmark, not a test:
 * it checks nothing and never runs under `make check`.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/q42_kernels.h"
#include "common/q42_types.h"

struct job {
	const q42_type_kernels *k;
	const uint8_t *w;
	const void *x;
	float *out;
	int64_t row_elems, row_bytes, r0, r1;
};

static void *run_rows(void *arg)
{
	const struct job *j = arg;
	for (int64_t r = j->r0; r < j->r1; r++)
		j->k->vec_dot(j->row_elems, &j->out[r], j->w + r * j->row_bytes, j->x);
	return NULL;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Best pass time in seconds, or a negative value if a thread failed. */
static double bench(const q42_type_kernels *k, const uint8_t *w, const void *x, float *out,
		    int64_t row_elems, int64_t row_bytes, int64_t rows, int threads, int reps)
{
	double best = 1e30;
	for (int rep = 0; rep < reps; rep++) {
		struct job jobs[64];
		pthread_t tid[64];
		const double t0 = now();
		for (int t = 0; t < threads; t++) {
			jobs[t] = (struct job){k, w, x, out, row_elems, row_bytes,
					       rows * t / threads, rows * (t + 1) / threads};
			if (t > 0 && pthread_create(&tid[t], NULL, run_rows, &jobs[t]) != 0)
				return -1.0;
		}
		run_rows(&jobs[0]);
		for (int t = 1; t < threads; t++)
			pthread_join(tid[t], NULL);
		const double dt = now() - t0;
		if (dt < best)
			best = dt;
	}
	return best;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bench_kernels [--mib 64] [--reps 5] [--threads 1] [--type NAME] [--k 4096]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"mib", required_argument, NULL, 'm'}, {"reps", required_argument, NULL, 'r'},
		{"threads", required_argument, NULL, 't'}, {"type", required_argument, NULL, 'y'},
		{"k", required_argument, NULL, 'k'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	long mib = 64, reps = 5, threads = 1, kdim = 4096;
	const char *only = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'm': mib = strtol(optarg, NULL, 10); break;
		case 'r': reps = strtol(optarg, NULL, 10); break;
		case 't': threads = strtol(optarg, NULL, 10); break;
		case 'y': only = optarg; break;
		case 'k': kdim = strtol(optarg, NULL, 10); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (mib < 1 || mib > 4096 || reps < 1 || threads < 1 || threads > 64 || kdim < 256 ||
	    kdim % 256 != 0 || kdim > (1 << 20)) {
		usage(stderr);
		return 2;
	}
	const size_t wsize = (size_t)mib << 20;
	uint8_t *w = malloc(wsize);
	float *xf = malloc((size_t)kdim * sizeof *xf);
	uint8_t *x = malloc((size_t)kdim * 4 + 4096);
	float *out = malloc(wsize / 8 * sizeof *out);
	if (w == NULL || xf == NULL || x == NULL || out == NULL) {
		fprintf(stderr, "bench_kernels: out of memory\n");
		return 1;
	}
	/* 0x30..0x3F bytes: every f16/bf16 field is a normal number, so no
	 * denormal slows a float path down */
	srand(1);
	for (size_t i = 0; i < wsize; i++)
		w[i] = (uint8_t)(0x30 | (rand() & 0x0F));
	for (long i = 0; i < kdim; i++)
		xf[i] = (float)rand() / (float)RAND_MAX - 0.5f;

	printf("# weights %ld MiB, k=%ld, %ld thread(s), best of %ld; GB/s of weight bytes\n", mib,
	       kdim, threads, reps);
	printf("%-6s %9s %9s %9s\n", "type", "scalar", "avx2", "avx512");
	for (uint32_t t = 0; t < Q42_DTYPE_COUNT_; t++) {
		const q42_type_kernels *ks = q42_kernels_get(t, Q42_ISA_SCALAR);
		const q42_dtype_info *wi = q42_dtype_get(t);
		if (ks == NULL || ks->vec_dot == NULL || wi == NULL || t == Q42_DTYPE_F32)
			continue;
		if (only != NULL && strcmp(only, wi->name) != 0)
			continue;
		const q42_type_kernels *kx = q42_kernels_get(ks->vec_dot_type, Q42_ISA_SCALAR);
		kx->quantize(xf, x, kdim);
		const int64_t row_bytes = kdim / wi->block_elems * wi->block_bytes;
		const int64_t rows = (int64_t)(wsize / (size_t)row_bytes);
		printf("%-6s", wi->name);
		for (int isa = Q42_ISA_SCALAR; isa <= Q42_ISA_AVX512; isa++) {
			const q42_type_kernels *k = q42_kernels_get(t, (enum q42_isa)isa);
			if (k == NULL) {
				printf(" %9s", "-");
				continue;
			}
			/* the scalar kernels are slow: fewer passes */
			const double s = bench(k, w, x, out, kdim, row_bytes, rows, (int)threads,
					       isa == Q42_ISA_SCALAR ? 1 : (int)reps);
			if (s < 0) {
				fprintf(stderr, "bench_kernels: cannot start threads\n");
				return 1;
			}
			printf(" %9.2f", (double)(rows * row_bytes) / s * 1e-9);
			fflush(stdout);
		}
		printf("\n");
	}
	free(w);
	free(xf);
	free(x);
	free(out);
	return 0;
}
