/* q42_ops.c -- scalar reference float operations (see q42_ops.h).
 *
 * Written to match ggml-cpu's scalar arithmetic step by step; a rewrite
 * that looks equivalent (a sum in float, exp of a difference folded into
 * a division, a fused multiply-add) changes results in the last bit and
 * breaks agreement with llama.cpp. Never allocates.
 */
#include <math.h>
#include "kernels/q42_kernels_impl.h"
#include "kernels/q42_ops.h"

/* The scaling step of rmsnorm for the row sum of squares sum. */
static void rms_scale(int64_t n, float *y, const float *x, const float *w, float eps, double sum)
{
	const float mean = (float)(sum / (double)n);
	const float scale = 1.0f / sqrtf(mean + eps);
	for (int64_t i = 0; i < n; i++) {
		const float v = x[i] * scale;
		y[i] = w != NULL ? v * w[i] : v;
	}
}

void q42_op_rmsnorm(int64_t n, float *y, const float *x, const float *w, float eps)
{
	double sum = 0.0;
	for (int64_t i = 0; i < n; i++)
		sum += (double)(x[i] * x[i]);
	rms_scale(n, y, x, w, eps, sum);
}

void q42_op_rmsnorm_rows(int64_t n, int64_t n_rows, float *y, const float *x, const float *w,
			 float eps)
{
	int64_t r = 0;
	/* four latency-bound chains of double adds at once */
	for (; r + 4 <= n_rows; r += 4) {
		const float *a = x + (uint64_t)r * (uint64_t)n;
		const float *b = a + n, *c = b + n, *d = c + n;
		double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
		for (int64_t i = 0; i < n; i++) {
			s0 += (double)(a[i] * a[i]);
			s1 += (double)(b[i] * b[i]);
			s2 += (double)(c[i] * c[i]);
			s3 += (double)(d[i] * d[i]);
		}
		const double s[4] = {s0, s1, s2, s3};
		for (int k = 0; k < 4; k++)
			rms_scale(n, y + (uint64_t)(r + k) * (uint64_t)n, x + (uint64_t)(r + k) * (uint64_t)n,
				  w, eps, s[k]);
	}
	for (; r < n_rows; r++)
		q42_op_rmsnorm(n, y + (uint64_t)r * (uint64_t)n, x + (uint64_t)r * (uint64_t)n, w, eps);
}

void q42_op_softmax(int64_t n, float *y, const float *x)
{
	float max = -INFINITY;
	/* ggml's MAX(max, x): a NaN in x propagates, as in ggml */
	for (int64_t i = 0; i < n; i++)
		max = max > x[i] ? max : x[i];
	double sum = 0.0;
	for (int64_t i = 0; i < n; i++) {
		const float v = expf(x[i] - max);
		sum += (double)v;
		y[i] = v;
	}
	const float inv = (float)(1.0 / sum);
	for (int64_t i = 0; i < n; i++)
		y[i] *= inv;
}

static float silu(float v)
{
	return v / (1.0f + expf(-v));
}

void q42_op_silu(int64_t n, float *y, const float *x)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = silu(x[i]);
}

void q42_op_swiglu(int64_t n, float *y, const float *x, const float *g)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = silu(x[i]) * g[i];
}

void q42_op_add(int64_t n, float *y, const float *a, const float *b)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = a[i] + b[i];
}

void q42_op_mul(int64_t n, float *y, const float *a, const float *b)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = a[i] * b[i];
}

void q42_op_scale(int64_t n, float *y, const float *x, float s)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = x[i] * s;
}
