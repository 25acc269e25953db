/* q42_ops.c -- scalar reference float operations (see q42_ops.h).
 *
 * Written to match ggml-cpu's scalar arithmetic step by step; a rewrite
 * that looks equivalent (a sum in float, exp of a difference folded into
 * a division, a fused multiply-add) changes results in the last bit and
 * breaks agreement with llama.cpp. Never allocates.
 */
#include <math.h>
#include <pthread.h>
#include "kernels/q42_kernels_impl.h"
#include "kernels/q42_ops.h"

float q42_op_rmsnorm_scale(int64_t n, double sum, float eps)
{
	const float mean = (float)(sum / (double)n);
	return 1.0f / sqrtf(mean + eps);
}

/* The scaling step of rmsnorm for the row sum of squares sum. */
static void rms_scale(int64_t n, float *y, const float *x, const float *w, float eps, double sum)
{
	const float scale = q42_op_rmsnorm_scale(n, sum, eps);
	for (int64_t i = 0; i < n; i++) {
		const float v = x[i] * scale;
		y[i] = w != NULL ? v * w[i] : v;
	}
}

void q42_op_rmsnorm_sums(int64_t n, int64_t n_rows, const float *x, double *sum)
{
	if (n_rows == 4) {
		/* four latency-bound chains of double adds at once */
		const float *a = x, *b = a + n, *c = b + n, *d = c + n;
		double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
		for (int64_t i = 0; i < n; i++) {
			s0 += (double)(a[i] * a[i]);
			s1 += (double)(b[i] * b[i]);
			s2 += (double)(c[i] * c[i]);
			s3 += (double)(d[i] * d[i]);
		}
		sum[0] = s0;
		sum[1] = s1;
		sum[2] = s2;
		sum[3] = s3;
		return;
	}
	for (int64_t r = 0; r < n_rows; r++) {
		const float *a = x + (uint64_t)r * (uint64_t)n;
		double s = 0.0;
		for (int64_t i = 0; i < n; i++)
			s += (double)(a[i] * a[i]);
		sum[r] = s;
	}
}

void q42_op_rmsnorm(int64_t n, float *y, const float *x, const float *w, float eps)
{
	double sum;
	q42_op_rmsnorm_sums(n, 1, x, &sum);
	rms_scale(n, y, x, w, eps, sum);
}

void q42_op_rmsnorm_rows(int64_t n, int64_t n_rows, float *y, const float *x, const float *w,
			 float eps)
{
	for (int64_t r = 0; r < n_rows; r += 4) {
		const int64_t k = n_rows - r < 4 ? n_rows - r : 4;
		double sum[4];
		q42_op_rmsnorm_sums(n, k, x + (uint64_t)r * (uint64_t)n, sum);
		for (int64_t j = 0; j < k; j++)
			rms_scale(n, y + (uint64_t)(r + j) * (uint64_t)n, x + (uint64_t)(r + j) * (uint64_t)n,
				  w, eps, sum[j]);
	}
}

/* _mm512_reduce_add_ps of v[0..15]: halves added, then quarters, then
 * pairs of pairs, then the last two. */
static float reduce16(const float *v)
{
	float a[8], c[4];
	for (int i = 0; i < 8; i++)
		a[i] = v[i] + v[i + 8];
	for (int i = 0; i < 4; i++)
		c[i] = a[i] + a[i + 4];
	return (c[0] + c[2]) + (c[1] + c[3]);
}

void q42_op_layernorm_rows(int64_t n, int64_t n_rows, float *y, const float *x, const float *w,
			   const float *b, float eps)
{
	for (int64_t r = 0; r < n_rows; r++) {
		const float *xr = x + (uint64_t)r * (uint64_t)n;
		float *yr = y + (uint64_t)r * (uint64_t)n;
		double sum = 0.0, sq = 0.0;
		int64_t i = 0;
		for (int64_t k = 0; k < n; k++)
			sum += (double)xr[k];
		const float mean = (float)sum / (float)n;
		for (; i + 15 < n; i += 16) {
			float v[16];
			for (int k = 0; k < 16; k++) {
				yr[i + k] = xr[i + k] - mean;
				v[k] = yr[i + k] * yr[i + k];
			}
			sq += (double)reduce16(v);
		}
		for (; i < n; i++) {
			yr[i] = xr[i] - mean;
			sq += (double)(yr[i] * yr[i]);
		}
		const float variance = (float)(sq / (double)n);
		const float scale = 1.0f / sqrtf(variance + eps);
		for (int64_t k = 0; k < n; k++) {
			yr[k] *= scale;
			if (w != NULL)
				yr[k] *= w[k];
			if (b != NULL)
				yr[k] += b[k];
		}
	}
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

/* ggml_gelu_f32; with fma, 1 + a x x fused as llama.cpp's x86 builds
 * compile it (seen in libggml-cpu-zen4.so's ggml_cpu_init), which
 * changes one f16 entry of the 63,488 finite ones (x = -1.99902) */
static float gelu(float x, bool fma)
{
	const float a = 0.044715f, s = 0.79788456080286535587989211986876f;
	const float inner = fma ? fmaf(a * x, x, 1.0f) : 1.0f + a * x * x;
	return 0.5f * x * (1.0f + tanhf(s * x * inner));
}

static uint16_t gelu_tables[2][65536];
static pthread_once_t gelu_once[2] = {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT};

static void gelu_fill(bool fma)
{
	for (uint32_t h = 0; h < 65536u; h++)
		gelu_tables[fma][h] = q42_f32_to_f16(gelu(q42_f16_to_f32((uint16_t)h), fma));
}

static void gelu_init_plain(void) { gelu_fill(false); }
static void gelu_init_fma(void) { gelu_fill(true); }

const uint16_t *q42_gelu_table(bool fma)
{
	pthread_once(&gelu_once[fma], fma ? gelu_init_fma : gelu_init_plain);
	return gelu_tables[fma];
}

void q42_gelu_table_geglu(int64_t n, float *y, const float *x, const float *g,
			  const uint16_t *table)
{
	for (int64_t i = 0; i < n; i++) {
		if (x[i] <= -10.0f)
			y[i] = 0.0f;
		else if (x[i] >= 10.0f)
			y[i] = x[i] * g[i];
		else
			y[i] = q42_f16_to_f32(table[q42_f32_to_f16(x[i])]) * g[i];
	}
}

void q42_op_geglu(int64_t n, float *y, const float *x, const float *g)
{
	q42_gelu_table_geglu(n, y, x, g, q42_gelu_table(false));
}

void q42_op_softcap(int64_t n, float *y, const float *x, float cap)
{
	const float inv = 1.0f / cap;
	for (int64_t i = 0; i < n; i++) {
		const float t = tanhf(x[i] * inv);
		y[i] = t * cap;
	}
}

/* Whether expert i, of selection score v, goes before the best so far
 * (index b, score bv; b < 0: none yet): larger first, NaN last, the lower
 * index among equals (scanning upwards, the first one found). */
static int route_before(float v, int64_t b, float bv)
{
	if (b < 0)
		return 1;
	if (isnan(v))
		return 0;
	return isnan(bv) || v > bv;
}

void q42_op_route_sigmoid(int64_t n_expert, int64_t k, float *p, const float *bias, int32_t *id,
			  float *w)
{
	double sum = 0.0;
	for (int64_t i = 0; i < n_expert; i++)
		p[i] = 1.0f / (1.0f + expf(-p[i]));
	for (int64_t j = 0; j < k; j++) {
		int64_t best = -1;
		float bv = 0.0f;
		for (int64_t i = 0; i < n_expert; i++) {
			const float v = bias != NULL ? p[i] + bias[i] : p[i];
			int taken = 0;
			for (int64_t c = 0; c < j; c++)
				taken |= id[c] == (int32_t)i;
			if (!taken && route_before(v, best, bv)) {
				best = i;
				bv = v;
			}
		}
		id[j] = (int32_t)best;
		w[j] = p[best];
		sum += (double)w[j];
	}
	float s = (float)sum;
	if (!(s >= 6.103515625e-5f))
		s = 6.103515625e-5f;
	for (int64_t j = 0; j < k; j++)
		w[j] = w[j] / s;
}

float q42_op_conv_dot(int64_t n, const float *s, const float *c)
{
	float sum = 0.0f;
	for (int64_t i = 0; i < n; i++)
		sum += s[i] * c[i];
	return sum;
}
