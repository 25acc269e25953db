/* q42_certify.c -- kernel certification (q42_certify.h): the shared
 * machinery (splitmix64 inputs, random weight blocks, comparison) and the
 * CPU cases, which hold the best ISA's kernel tables and the llama.cpp-x86
 * kernels against their scalar versions. The Vulkan cases live in
 * lib/vulkan/q42_vk_certify.c. The tolerances are documented in q42run(1),
 * CERTIFICATION: change one there and here together.
 */
#include "config.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/q42_le.h"
#include "measure/q42_certify_cases.h"
#include "common/q42_types.h"
#include "kernels/q42_llamacpp.h"
#include "kernels/q42_kernels.h"

uint64_t q42_certify_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

float q42_certify_unit(uint64_t *state)
{
	return (float)(int32_t)(q42_certify_next(state) >> 40) / 8388608.0f - 1.0f;
}

/* Byte offsets of the f16 scale fields of a block (ggml's block structs). */
static const struct {
	uint32_t dtype;
	int nhalf;
	int off[2];
} scale_fields[] = {
	{Q42_DTYPE_Q4_0, 1, {0, 0}}, {Q42_DTYPE_Q4_1, 2, {0, 2}}, {Q42_DTYPE_Q5_0, 1, {0, 0}},
	{Q42_DTYPE_Q5_1, 2, {0, 2}}, {Q42_DTYPE_Q8_0, 1, {0, 0}}, {Q42_DTYPE_Q2_K, 2, {80, 82}},
	{Q42_DTYPE_Q3_K, 1, {108, 0}}, {Q42_DTYPE_Q4_K, 2, {0, 2}}, {Q42_DTYPE_Q5_K, 2, {0, 2}},
	{Q42_DTYPE_Q6_K, 1, {208, 0}}, {Q42_DTYPE_TQ1_0, 1, {52, 0}}, {Q42_DTYPE_TQ2_0, 1, {64, 0}},
	{Q42_DTYPE_IQ4_NL, 1, {0, 0}}, {Q42_DTYPE_IQ4_XS, 1, {0, 0}},
};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

bool q42_certify_weights(uint32_t dtype, uint8_t *dst, int64_t n, uint64_t *state)
{
	const q42_dtype_info *ti = q42_dtype_get(dtype);
	if (ti == NULL || n % ti->block_elems != 0)
		return false;
	if (dtype == Q42_DTYPE_F32 || dtype == Q42_DTYPE_F16 || dtype == Q42_DTYPE_BF16) {
		for (int64_t i = 0; i < n; i++) {
			const float f = q42_certify_unit(state);
			if (dtype == Q42_DTYPE_F32)
				memcpy(dst + 4 * i, &f, 4);
			else
				put16(dst + 2 * i, dtype == Q42_DTYPE_F16 ? q42_f32_to_f16(f) : q42_f32_to_bf16(f));
		}
		return true;
	}
	for (size_t t = 0; t < sizeof scale_fields / sizeof scale_fields[0]; t++) {
		if (scale_fields[t].dtype != dtype)
			continue;
		const int64_t nb = n / ti->block_elems;
		for (int64_t i = 0; i < nb * ti->block_bytes; i++)
			dst[i] = (uint8_t)q42_certify_next(state);
		for (int64_t b = 0; b < nb; b++)
			for (int h = 0; h < scale_fields[t].nhalf; h++)
				put16(dst + b * ti->block_bytes + scale_fields[t].off[h],
				      q42_f32_to_f16(0.05f * q42_certify_unit(state)));
		return true;
	}
	return false;
}

void q42_certify_begin(q42_certify_result *r, const char *kernel, double tol_abs, double tol_rel,
		       const char *shape_fmt, ...)
{
	memset(r, 0, sizeof *r);
	snprintf(r->kernel, sizeof r->kernel, "%s", kernel);
	va_list ap;
	va_start(ap, shape_fmt);
	vsnprintf(r->shape, sizeof r->shape, shape_fmt, ap);
	va_end(ap);
	r->tol_abs = tol_abs;
	r->tol_rel = tol_rel;
	r->pass = true;
}

void q42_certify_compare(q42_certify_result *r, const float *got, const double *want,
			 const double *floor, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		const double d = fabs((double)got[i] - want[i]);
		const double fl = floor != NULL ? floor[i] : Q42_CERTIFY_FLOOR;
		const double den = fabs(want[i]) > fl ? fabs(want[i]) : fl;
		if (!(d == d)) { /* NaN on either side */
			r->max_abs = r->max_rel = INFINITY;
			r->pass = false;
			continue;
		}
		if (d > r->max_abs)
			r->max_abs = d;
		if (d / den > r->max_rel)
			r->max_rel = d / den;
		if (d > r->tol_abs && d > r->tol_rel * den)
			r->pass = false;
	}
}

/* ---- CPU cases --------------------------------------------------------- */

struct run {
	q42_certify_fn fn;
	void *arg;
	uint32_t n_fail;
	uint64_t rng;
};

static void emit(struct run *run, const q42_certify_result *r)
{
	if (!r->pass)
		run->n_fail++;
	if (run->fn != NULL)
		run->fn(r, run->arg);
}

/* Every weight type of the kernel tables: dequant (exact), vec_dot (exact
 * for the block types, the documented float-lane bound for F32/F16/BF16)
 * and quantize (bit-identical bytes), on 1, 7 and 33 blocks. */
static const uint32_t cpu_types[] = {
	Q42_DTYPE_F32, Q42_DTYPE_F16, Q42_DTYPE_BF16, Q42_DTYPE_Q4_0, Q42_DTYPE_Q4_1,
	Q42_DTYPE_Q5_0, Q42_DTYPE_Q5_1, Q42_DTYPE_Q8_0, Q42_DTYPE_Q2_K, Q42_DTYPE_Q3_K,
	Q42_DTYPE_Q4_K, Q42_DTYPE_Q5_K, Q42_DTYPE_Q6_K, Q42_DTYPE_TQ1_0, Q42_DTYPE_TQ2_0,
	Q42_DTYPE_IQ4_NL, Q42_DTYPE_IQ4_XS, Q42_DTYPE_Q8_1, Q42_DTYPE_Q8_K, /* activation types: quantize only */
};

/* Scratch of one CPU case: weights, activations as f32 and quantized, and
 * two result rows; sized for the largest case. */
struct bufs {
	uint8_t *w, *xq, *xq2;
	float *x, *a, *b, *wd;
	double *want;
};

#define CPU_MAX_N (33 * 256)
#define CPU_ROWS 37
/* tokens of the many-row products: a group of four (Q2_K's gemm order) and
 * two more, enough for the AMX tiles (Q42_AMX_MIN_TOK) */
#define CPU_TOK 6

/* dequant and vec_dot of a weight type on n elements of random blocks;
 * s->x holds the activations. */
static void case_dot(struct run *run, struct bufs *s, uint32_t dtype, enum q42_isa isa, int64_t n)
{
	const q42_type_kernels *ref = q42_kernels_get(dtype, Q42_ISA_SCALAR);
	const q42_type_kernels *cand = q42_kernels_get(dtype, isa);
	const q42_dtype_info *ti = q42_dtype_get(dtype);
	char name[48];
	q42_certify_result r;

	q42_certify_weights(dtype, s->w, n, &run->rng);
	ref->dequant(s->w, s->wd, n);
	cand->dequant(s->w, s->a, n);
	snprintf(name, sizeof name, "dequant.%s", ti->name);
	q42_certify_begin(&r, name, 0.0, 0.0, "n=%lld", (long long)n);
	for (int64_t i = 0; i < n; i++)
		s->want[i] = (double)s->wd[i];
	q42_certify_compare(&r, s->a, s->want, NULL, (uint64_t)n);
	emit(run, &r);

	const q42_type_kernels *xq = q42_kernels_get(ref->vec_dot_type, Q42_ISA_SCALAR);
	xq->quantize(s->x, s->xq, n);
	float got = 0.0f, want = 0.0f;
	cand->vec_dot(n, &got, s->w, s->xq);
	ref->vec_dot(n, &want, s->w, s->xq);
	/* the float-lane bound of q42_kernels.h, relative to sum |w_i x_i| */
	const bool lanes = dtype == Q42_DTYPE_F32 || dtype == Q42_DTYPE_F16 || dtype == Q42_DTYPE_BF16;
	double sabs = 0.0;
	if (lanes) {
		q42_kernels_get(ref->vec_dot_type, Q42_ISA_SCALAR)->dequant(s->xq, s->b, n);
		for (int64_t i = 0; i < n; i++)
			sabs += fabs((double)s->wd[i] * (double)s->b[i]);
	}
	snprintf(name, sizeof name, "vec_dot.%s", ti->name);
	q42_certify_begin(&r, name, 0.0, lanes ? ((double)n / 8.0 + 16.0) * 0x1p-24 + 0x1p-23 : 0.0,
			  "n=%lld", (long long)n);
	const double w1 = (double)want, f1 = sabs > 0.0 ? sabs : Q42_CERTIFY_FLOOR;
	q42_certify_compare(&r, &got, &w1, lanes ? &f1 : NULL, 1);
	emit(run, &r);
}

static void case_type(struct run *run, struct bufs *s, uint32_t dtype, enum q42_isa isa, int nb)
{
	const q42_type_kernels *ref = q42_kernels_get(dtype, Q42_ISA_SCALAR);
	const q42_type_kernels *cand = q42_kernels_get(dtype, isa);
	const q42_dtype_info *ti = q42_dtype_get(dtype);
	const int64_t n = (int64_t)nb * ti->block_elems;
	char name[48];
	q42_certify_result r;

	for (int64_t i = 0; i < n; i++)
		s->x[i] = q42_certify_unit(&run->rng);
	if (ref->vec_dot != NULL)
		case_dot(run, s, dtype, isa, n);
	if (cand->quantize != NULL) {
		const uint64_t nbytes = (uint64_t)nb * ti->block_bytes;
		ref->quantize(s->x, s->xq, n);
		cand->quantize(s->x, s->xq2, n);
		snprintf(name, sizeof name, "quantize.%s", ti->name);
		q42_certify_begin(&r, name, 0.0, 0.0, "n=%lld", (long long)n);
		ref->dequant(s->xq, s->wd, n);
		ref->dequant(s->xq2, s->a, n);
		for (int64_t i = 0; i < n; i++)
			s->want[i] = (double)s->wd[i];
		q42_certify_compare(&r, s->a, s->want, NULL, (uint64_t)n);
		if (memcmp(s->xq, s->xq2, nbytes) != 0 && r.pass) {
			r.pass = false; /* same values, different bytes: still not bit-identical */
			r.max_abs = r.max_rel = INFINITY;
		}
		emit(run, &r);
	}
}

/* The llama.cpp-x86 products: vec_dot and the many-rows form of the best
 * ISA against the scalar definition, both bit-identical. */
static void case_llamacpp(struct run *run, struct bufs *s, uint32_t dtype, enum q42_llamacpp_place pl)
{
	const int64_t n_in = 768, n_out = CPU_ROWS - 5; /* 32: AMX shapes */
	q42_llamacpp_kernels ref, cand;
	if (!q42_llamacpp_select_isa(dtype, n_out, n_in, pl, Q42_ISA_SCALAR, &ref) ||
	    !q42_llamacpp_select_isa(dtype, n_out, n_in, pl, Q42_ISA_BEST, &cand))
		return;
	const q42_dtype_info *ti = q42_dtype_get(dtype);
	const uint64_t rb = (uint64_t)(n_in / ti->block_elems) * ti->block_bytes;
	q42_certify_weights(dtype, s->w, n_in * n_out, &run->rng);
	for (int64_t i = 0; i < n_in * CPU_TOK; i++)
		s->x[i] = q42_certify_unit(&run->rng);
	uint64_t xs = (uint64_t)n_in * 4;
	const uint8_t *xq = (const uint8_t *)s->x;
	if (ref.quantize != NULL) {
		const q42_dtype_info *xi = q42_dtype_get(ref.vec_dot_type);
		xs = (uint64_t)(n_in / xi->block_elems) * xi->block_bytes;
		for (int t = 0; t < CPU_TOK; t++)
			ref.quantize(s->x + t * n_in, s->xq + (uint64_t)t * xs, n_in);
		xq = s->xq;
	}
	char name[48];
	q42_certify_result r;
	float got = 0.0f, want = 0.0f;
	cand.vec_dot(n_in, &got, s->w, xq);
	ref.vec_dot(n_in, &want, s->w, xq);
	const double w1 = (double)want;
	snprintf(name, sizeof name, "llamacpp.%s", ref.name);
	q42_certify_begin(&r, name, 0.0, 0.0, "vec_dot n=%lld", (long long)n_in);
	q42_certify_compare(&r, &got, &w1, NULL, 1);
	emit(run, &r);

	ref.rows(n_in, n_out, s->w, rb, CPU_TOK, xq, xs, s->b, (uint64_t)n_out);
	cand.rows(n_in, n_out, s->w, rb, CPU_TOK, xq, xs, s->a, (uint64_t)n_out);
	for (int64_t i = 0; i < n_out * CPU_TOK; i++)
		s->want[i] = (double)s->b[i];
	q42_certify_begin(&r, name, 0.0, 0.0, "rows n_in=%lld n_out=%lld n_tok=%d", (long long)n_in,
			  (long long)n_out, CPU_TOK);
	q42_certify_compare(&r, s->a, s->want, NULL, (uint64_t)(n_out * CPU_TOK));
	emit(run, &r);

	/* the repacked form the engine loads such a matrix into, if any
	 * (a failed allocation skips it: certify reports what it ran) */
	q42_llamacpp_packed pk;
	void *pw = NULL;
	if (!q42_llamacpp_select_packed(dtype, n_out, n_in, pl, Q42_ISA_BEST, &pk) ||
	    posix_memalign(&pw, 64, (size_t)(rb * (uint64_t)n_out)) != 0)
		return;
	pk.pack(pw, s->w, n_in, n_out);
	pk.rows(n_in, n_out, pw, rb, CPU_TOK, xq, xs, s->a, (uint64_t)n_out);
	free(pw);
	snprintf(name, sizeof name, "llamacpp.%s", pk.name);
	q42_certify_begin(&r, name, 0.0, 0.0, "rows n_in=%lld n_out=%lld n_tok=%d (repacked)",
			  (long long)n_in, (long long)n_out, CPU_TOK);
	q42_certify_compare(&r, s->a, s->want, NULL, (uint64_t)(n_out * CPU_TOK));
	emit(run, &r);
}

/* got vs want as floats, exact; bytes compared as well when given. */
static void exact(struct run *run, struct bufs *s, const char *kernel, const char *shape,
		  const float *got, const float *want, int64_t n)
{
	q42_certify_result r;
	q42_certify_begin(&r, kernel, 0.0, 0.0, "%s", shape);
	for (int64_t i = 0; i < n; i++)
		s->want[i] = (double)want[i];
	q42_certify_compare(&r, got, s->want, NULL, (uint64_t)n);
	if (memcmp(got, want, (size_t)n * sizeof *got) != 0 && r.pass) {
		r.pass = false; /* a NaN payload or a signed zero differs */
		r.max_abs = r.max_rel = INFINITY;
	}
	emit(run, &r);
}

/* The llama.cpp-x86 row operations of the best ISA, bit-identical. */
static void case_llamacpp_ops(struct run *run, struct bufs *s)
{
	const q42_llamacpp_ops *ref = q42_llamacpp_ops_get(Q42_ISA_SCALAR);
	const q42_llamacpp_ops *cand = q42_llamacpp_ops_get(Q42_ISA_BEST);
	const int64_t n = 192; /* a multiple of 64, as llama.cpp pads rows */
	float *x = s->x, *g = s->x + n, *a = s->a, *b = s->b;
	for (int64_t i = 0; i < 2 * n; i++)
		x[i] = 4.0f * q42_certify_unit(&run->rng);

	ref->quantize_q8_0(x, s->xq, n);
	cand->quantize_q8_0(x, s->xq2, n);
	q42_dequant(Q42_DTYPE_Q8_0, s->xq, b, n);
	q42_dequant(Q42_DTYPE_Q8_0, s->xq2, a, n);
	exact(run, s, "llamacpp.quantize_q8_0", "n=192", a, b, n);
	ref->quantize_q8_1(x, s->xq, n);
	cand->quantize_q8_1(x, s->xq2, n);
	q42_dequant(Q42_DTYPE_Q8_1, s->xq, b, n);
	q42_dequant(Q42_DTYPE_Q8_1, s->xq2, a, n);
	/* and each block's s (d times its quants' sum), which dequantizing
	 * does not read */
	for (int64_t i = 0; i < n / 32; i++) {
		a[n + i] = q42_f16_to_f32(q42_ld16(s->xq2 + 36 * i + 2));
		b[n + i] = q42_f16_to_f32(q42_ld16(s->xq + 36 * i + 2));
	}
	exact(run, s, "llamacpp.quantize_q8_1", "n=192", a, b, n + n / 32);
	ref->quantize_f16(x, s->xq, n);
	cand->quantize_f16(x, s->xq2, n);
	q42_dequant(Q42_DTYPE_F16, s->xq, b, n);
	q42_dequant(Q42_DTYPE_F16, s->xq2, a, n);
	exact(run, s, "llamacpp.quantize_f16", "n=192", a, b, n);

	ref->dot_f32(n, &b[0], x, g);
	cand->dot_f32(n, &a[0], x, g);
	ref->dot_f32_lanes(n, &b[1], x, g);
	cand->dot_f32_lanes(n, &a[1], x, g);
	exact(run, s, "llamacpp.dot_f32", "n=192 (plain, lanes)", a, b, 2);
	/* the f16 cache's products: x (in xq by now) and g rounded to f16 */
	ref->quantize_f16(g, s->xq2, n);
	ref->dot_f16_pad(n, &b[0], s->xq, s->xq2);
	cand->dot_f16_pad(n, &a[0], s->xq, s->xq2);
	ref->dot_f16_lanes(n, &b[1], s->xq, s->xq2);
	cand->dot_f16_lanes(n, &a[1], s->xq, s->xq2);
	exact(run, s, "llamacpp.dot_f16", "n=192 (plain, lanes)", a, b, 2);

	ref->softmax(n, b, x);
	cand->softmax(n, a, x);
	exact(run, s, "llamacpp.softmax", "n=192", a, b, n);
	ref->swiglu(n - 5, b, x, g);
	cand->swiglu(n - 5, a, x, g);
	exact(run, s, "llamacpp.swiglu", "n=187", a, b, n - 5);

	float cache[64];
	for (int i = 0; i < 64; i += 2) {
		const float t = 100.0f * q42_certify_unit(&run->rng);
		cache[i] = cosf(t);
		cache[i + 1] = sinf(t);
	}
	for (int neox = 0; neox < 2; neox++) {
		memcpy(a, x, 64 * sizeof *a);
		memcpy(b, x, 64 * sizeof *b);
		ref->rope(64, b, cache, neox);
		cand->rope(64, a, cache, neox);
		exact(run, s, "llamacpp.rope", neox ? "n_rot=64 neox" : "n_rot=64 normal", a, b, 64);
	}
}

static int cpu_run(struct run *run, q42_err *err)
{
	struct bufs s = {0};
	const size_t big = (size_t)CPU_MAX_N * CPU_ROWS;
	s.w = malloc(big * 4);
	s.xq = malloc(big * 4);
	s.xq2 = malloc(big * 4);
	s.x = malloc(big * sizeof *s.x);
	s.a = malloc(big * sizeof *s.a);
	s.b = malloc(big * sizeof *s.b);
	s.wd = malloc(big * sizeof *s.wd);
	s.want = malloc(big * sizeof *s.want);
	int rc = Q42_OK;
	if (!s.w || !s.xq || !s.xq2 || !s.x || !s.a || !s.b || !s.wd || !s.want) {
		rc = q42_err_set(err, Q42_ENOMEM, "certify: out of memory");
		goto out;
	}
	const enum q42_isa isa = q42_isa_detect();
	static const int nbs[] = {1, 7, 33};
	for (size_t t = 0; t < sizeof cpu_types / sizeof cpu_types[0]; t++)
		for (size_t c = 0; c < sizeof nbs / sizeof nbs[0]; c++)
			case_type(run, &s, cpu_types[t], isa, nbs[c]);
	/* every type q42_llamacpp_select has a llama.cpp form of */
	static const uint32_t llamacpp_types[] = {Q42_DTYPE_F16,	 Q42_DTYPE_Q4_0, Q42_DTYPE_Q4_1, Q42_DTYPE_Q5_0,
						Q42_DTYPE_Q5_1,	 Q42_DTYPE_Q8_0, Q42_DTYPE_Q4_K, Q42_DTYPE_Q5_K,
						Q42_DTYPE_Q6_K,	 Q42_DTYPE_TQ1_0, Q42_DTYPE_TQ2_0, Q42_DTYPE_Q3_K,
						Q42_DTYPE_Q2_K,	 Q42_DTYPE_IQ4_NL, Q42_DTYPE_IQ4_XS};
	for (size_t t = 0; t < sizeof llamacpp_types / sizeof llamacpp_types[0]; t++) {
		case_llamacpp(run, &s, llamacpp_types[t], Q42_LLAMACPP_MATMUL);
		case_llamacpp(run, &s, llamacpp_types[t], Q42_LLAMACPP_CPU);
	}
	case_llamacpp_ops(run, &s);
out:
	free(s.w);
	free(s.xq);
	free(s.xq2);
	free(s.x);
	free(s.a);
	free(s.b);
	free(s.wd);
	free(s.want);
	return rc;
}

int q42_certify_run(const q42_backend_ops *ops, enum q42_backend backend, int32_t device,
		    uint64_t seed, q42_certify_fn fn, void *arg, uint32_t *n_fail, q42_err *err)
{
	*n_fail = 0;
	if (backend == Q42_BACKEND_CPU) {
		struct run run = {fn, arg, 0, seed};
		const int rc = cpu_run(&run, err);
		*n_fail = run.n_fail;
		return rc;
	}
	if (backend != Q42_BACKEND_VULKAN)
		return q42_err_set(err, Q42_EARG, "certify: name the backend to certify (cpu or vulkan)");
	if (ops == NULL)
		return q42_err_set(err, Q42_EUNSUPPORTED, "certify: no %s backend given",
				   q42_backend_name(backend));
	return ops->certify(device, seed, fn, arg, n_fail, err);
}
