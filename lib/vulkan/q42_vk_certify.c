/* q42_vk_certify.c -- the Vulkan cases of q42_certify_run: every kernel of
 * q42_vk_ops.h on seeded random inputs of several shapes (odd sizes, token
 * counts 1/3/17, GQA ratios 1 and 4, positions near the context's end)
 * against the CPU scalar reference: weights dequantized by the scalar
 * kernels and dotted in double, the float ops of kernels/q42_ops.h, and
 * attention composed from them. Tolerances, and why each is what it is:
 * q42run(1), CERTIFICATION -- change one there and here together.
 * Buffers are host-visible so the inputs are written in place.
 */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "measure/q42_certify_cases.h"
#include "common/q42_types.h"
#include "kernels/q42_kernels.h"
#include "kernels/q42_ops.h"
#include "vulkan/q42_vk.h"
#include "vulkan/q42_vk_forward.h"
#include "vulkan/q42_vk_ops.h"

#define MAX_BUFS 8
#define U (0x1p-24) /* the unit roundoff of float */

struct vc {
	q42_vk *vk;
	q42_vk_ops *ops;
	q42_certify_fn fn;
	void *arg;
	uint32_t n_fail;
	uint64_t rng;
	q42_vk_buf *buf[MAX_BUFS];
	uint32_t n_buf;
	/* host scratch, grown as cases need */
	double *want, *floor;
	float *got;
	uint64_t cap;
};

static int scratch(struct vc *c, uint64_t n, q42_err *err)
{
	if (n <= c->cap)
		return Q42_OK;
	free(c->want);
	free(c->floor);
	free(c->got);
	c->want = malloc(n * sizeof *c->want);
	c->floor = malloc(n * sizeof *c->floor);
	c->got = malloc(n * sizeof *c->got);
	c->cap = n;
	if (c->want == NULL || c->floor == NULL || c->got == NULL) {
		c->cap = 0;
		return q42_err_set(err, Q42_ENOMEM, "certify: out of memory");
	}
	return Q42_OK;
}

/* A host-visible buffer of the current case; its mapping in *map. A
 * case asks for its buffers one after the other and looks at *rc once:
 * after a failure the next asks do nothing. */
static void hbuf(struct vc *c, int *rc, uint64_t bytes, q42_vk_view *v, void **map, q42_err *err)
{
	q42_vk_buf *b = NULL;
	if (*rc != Q42_OK || (*rc = q42_vk_buf_create(c->vk, bytes, Q42_VK_MEM_HOST, &b, err)) != Q42_OK)
		return;
	c->buf[c->n_buf++] = b;
	*v = (q42_vk_view){b, 0, 0};
	*map = q42_vk_buf_map(b);
	memset(*map, 0, bytes);
}

static void case_end(struct vc *c)
{
	for (uint32_t i = 0; i < c->n_buf; i++)
		q42_vk_buf_free(c->vk, c->buf[i]);
	c->n_buf = 0;
}

static void emit(struct vc *c, const q42_certify_result *r)
{
	if (!r->pass)
		c->n_fail++;
	if (c->fn != NULL)
		c->fn(r, c->arg);
}

/* The case's n results (c->got) against the reference (c->want), with
 * q42_certify_compare's floors (NULL: its default), reported. */
static void verdict(struct vc *c, q42_certify_result *r, const double *floors, uint64_t n)
{
	q42_certify_compare(r, c->got, c->want, floors, n);
	emit(c, r);
}

static void fill(struct vc *c, float *x, uint64_t n, float scale)
{
	for (uint64_t i = 0; i < n; i++)
		x[i] = scale * q42_certify_unit(&c->rng);
}

static const char *tname(uint32_t dtype)
{
	switch (dtype) {
	case Q42_DTYPE_F32: return "f32";
	case Q42_DTYPE_F16: return "f16";
	case Q42_DTYPE_Q4_0: return "q4_0";
	case Q42_DTYPE_Q8_0: return "q8_0";
	case Q42_DTYPE_Q4_K: return "q4_k";
	default: return "q6_k";
	}
}

/* ---- matmul, get_rows -------------------------------------------------- */

static int case_matmul(struct vc *c, uint32_t dtype, uint32_t n_in, uint32_t n_out, uint32_t n_tok,
		       q42_err *err)
{
	uint64_t rb = 0;
	q42_dtype_nbytes(dtype, n_in, n_in, &rb);
	const uint32_t ys = n_out + 3; /* a stride wider than the row */
	q42_vk_view w, x, y;
	uint8_t *wm;
	float *xm, *ym, *wd = NULL;
	int rc = scratch(c, (uint64_t)n_out * n_tok, err);
	hbuf(c, &rc, rb * n_out, &w, (void **)&wm, err);
	hbuf(c, &rc, (uint64_t)n_in * n_tok * 4, &x, (void **)&xm, err);
	hbuf(c, &rc, (uint64_t)ys * n_tok * 4, &y, (void **)&ym, err);
	if (rc == Q42_OK && (wd = malloc((uint64_t)n_in * n_out * sizeof *wd)) == NULL)
		rc = q42_err_set(err, Q42_ENOMEM, "certify: out of memory");
	if (rc != Q42_OK)
		goto out;
	q42_certify_weights(dtype, wm, (int64_t)n_in * n_out, &c->rng);
	fill(c, xm, (uint64_t)n_in * n_tok, 1.0f);
	if ((rc = q42_vk_begin(c->vk, err)) != Q42_OK ||
	    (rc = q42_vk_op_matmul(c->ops, dtype, w, rb, n_in, n_out, x, n_tok, y, ys, err)) != Q42_OK ||
	    (rc = q42_vk_submit(c->vk, err)) != Q42_OK)
		goto out;
	q42_dequant(dtype, wm, wd, (int64_t)n_in * n_out);
	for (uint32_t t = 0; t < n_tok; t++)
		for (uint32_t r = 0; r < n_out; r++) {
			double s = 0.0, sa = 0.0;
			for (uint32_t i = 0; i < n_in; i++) {
				const double p = (double)wd[(uint64_t)r * n_in + i] * (double)xm[(uint64_t)t * n_in + i];
				s += p;
				sa += fabs(p);
			}
			const uint64_t k = (uint64_t)t * n_out + r;
			c->want[k] = s;
			c->floor[k] = sa > 0.0 ? sa : Q42_CERTIFY_FLOOR;
			c->got[k] = ym[(uint64_t)t * ys + r];
		}
	char kernel[48];
	snprintf(kernel, sizeof kernel, "matmul.%s", tname(dtype));
	q42_certify_result res;
	q42_certify_begin(&res, kernel, 0.0, (64.0 + n_in / 64.0) * U, "n_in=%u n_out=%u n_tok=%u", n_in,
			  n_out, n_tok);
	verdict(c, &res, c->floor, (uint64_t)n_out * n_tok);
out:
	free(wd);
	case_end(c);
	return rc;
}

static int case_get_rows(struct vc *c, uint32_t dtype, uint32_t n, q42_err *err)
{
	const uint32_t n_rows = 11, n_tok = 5;
	uint64_t rb = 0;
	q42_dtype_nbytes(dtype, n, n, &rb);
	q42_vk_view tab, ids, y;
	uint8_t *tm;
	int32_t *im;
	float *ym, *wd = NULL;
	int rc = scratch(c, (uint64_t)n * n_tok, err);
	hbuf(c, &rc, rb * n_rows, &tab, (void **)&tm, err);
	hbuf(c, &rc, n_tok * 4, &ids, (void **)&im, err);
	hbuf(c, &rc, (uint64_t)n * n_tok * 4, &y, (void **)&ym, err);
	if (rc == Q42_OK && (wd = malloc((uint64_t)n * n_rows * sizeof *wd)) == NULL)
		rc = q42_err_set(err, Q42_ENOMEM, "certify: out of memory");
	if (rc != Q42_OK)
		goto out;
	q42_certify_weights(dtype, tm, (int64_t)n * n_rows, &c->rng);
	for (uint32_t t = 0; t < n_tok; t++)
		im[t] = (int32_t)(q42_certify_next(&c->rng) % n_rows);
	im[n_tok - 1] = (int32_t)n_rows - 1; /* the last row, read to its end */
	if ((rc = q42_vk_begin(c->vk, err)) != Q42_OK ||
	    (rc = q42_vk_op_get_rows(c->ops, dtype, tab, rb, ids, n_tok, n, y, err)) != Q42_OK ||
	    (rc = q42_vk_submit(c->vk, err)) != Q42_OK)
		goto out;
	q42_dequant(dtype, tm, wd, (int64_t)n * n_rows);
	double big = 0.0;
	for (uint32_t t = 0; t < n_tok; t++)
		for (uint32_t i = 0; i < n; i++) {
			const uint64_t k = (uint64_t)t * n + i;
			c->want[k] = wd[(uint64_t)im[t] * n + i];
			c->got[k] = ym[k];
			big = fmax(big, fabs(c->want[k]));
		}
	for (uint64_t k = 0; k < (uint64_t)n * n_tok; k++)
		c->floor[k] = big;
	char kernel[48];
	snprintf(kernel, sizeof kernel, "get_rows.%s", tname(dtype));
	q42_certify_result res;
	/* q4_K's d*q - m may be fused on a device; every other value is one
	 * correctly rounded product, as on the CPU */
	q42_certify_begin(&res, kernel, 0.0, dtype == Q42_DTYPE_Q4_K ? 2 * U : 0.0, "n=%u n_tok=%u", n,
			  n_tok);
	verdict(c, &res, c->floor, (uint64_t)n * n_tok);
out:
	free(wd);
	case_end(c);
	return rc;
}

/* ---- row and element-wise ops ------------------------------------------ */

static int case_rmsnorm(struct vc *c, uint32_t n, uint32_t rows, q42_err *err)
{
	q42_vk_view x, w, y;
	float *xm, *wm, *ym;
	const float eps = 1e-5f;
	int rc = scratch(c, (uint64_t)n * rows, err);
	hbuf(c, &rc, (uint64_t)n * rows * 4, &x, (void **)&xm, err);
	hbuf(c, &rc, (uint64_t)n * 4, &w, (void **)&wm, err);
	hbuf(c, &rc, (uint64_t)n * rows * 4, &y, (void **)&ym, err);
	if (rc != Q42_OK)
		goto out;
	fill(c, xm, (uint64_t)n * rows, 1.0f);
	fill(c, wm, n, 2.0f);
	if ((rc = q42_vk_begin(c->vk, err)) != Q42_OK ||
	    (rc = q42_vk_op_rmsnorm(c->ops, x, w, y, n, rows, eps, err)) != Q42_OK ||
	    (rc = q42_vk_submit(c->vk, err)) != Q42_OK)
		goto out;
	for (uint32_t r = 0; r < rows; r++) {
		q42_op_rmsnorm(n, c->got + (uint64_t)r * n, xm + (uint64_t)r * n, wm, eps);
		for (uint32_t i = 0; i < n; i++) {
			const uint64_t k = (uint64_t)r * n + i;
			c->want[k] = c->got[k];
			c->got[k] = ym[k];
		}
	}
	q42_certify_result res;
	q42_certify_begin(&res, "rmsnorm", 0.0, 0x1p-18, "n=%u rows=%u", n, rows);
	verdict(c, &res, NULL, (uint64_t)n * rows);
out:
	case_end(c);
	return rc;
}

/* BERT's LayerNorm with bias, in place as the forward pass runs it */
static int case_layernorm(struct vc *c, uint32_t n, uint32_t rows, q42_err *err)
{
	q42_vk_view x, w, b;
	float *xm, *wm, *bm;
	const float eps = 1e-12f;
	int rc = scratch(c, (uint64_t)n * rows, err);
	hbuf(c, &rc, (uint64_t)n * rows * 4, &x, (void **)&xm, err);
	hbuf(c, &rc, (uint64_t)n * 4, &w, (void **)&wm, err);
	hbuf(c, &rc, (uint64_t)n * 4, &b, (void **)&bm, err);
	if (rc != Q42_OK)
		goto out;
	/* rows off centre, so the mean matters */
	fill(c, xm, (uint64_t)n * rows, 1.0f);
	for (uint64_t i = 0; i < (uint64_t)n * rows; i++)
		xm[i] += 0.5f;
	fill(c, wm, n, 2.0f);
	fill(c, bm, n, 1.0f);
	q42_op_layernorm_rows(n, rows, c->got, xm, wm, bm, eps);
	for (uint64_t k = 0; k < (uint64_t)n * rows; k++)
		c->want[k] = c->got[k];
	if ((rc = q42_vk_begin(c->vk, err)) != Q42_OK ||
	    (rc = q42_vk_op_layernorm(c->ops, x, w, b, x, n, rows, eps, err)) != Q42_OK ||
	    (rc = q42_vk_submit(c->vk, err)) != Q42_OK)
		goto out;
	for (uint64_t k = 0; k < (uint64_t)n * rows; k++)
		c->got[k] = xm[k];
	q42_certify_result res;
	/* the mean and the variance are float sums in another order than
	 * the reference's double ones: an absolute bound near zero */
	q42_certify_begin(&res, "layernorm", 0x1p-18, 0x1p-18, "n=%u rows=%u", n, rows);
	verdict(c, &res, NULL, (uint64_t)n * rows);
out:
	case_end(c);
	return rc;
}

/* mean pooling against the sum of x * (1/n_tok) in double */
static int case_pool_mean(struct vc *c, uint32_t n, uint32_t n_tok, q42_err *err)
{
	q42_vk_view x, y;
	float *xm, *ym;
	int rc = scratch(c, n, err);
	hbuf(c, &rc, (uint64_t)n * n_tok * 4, &x, (void **)&xm, err);
	hbuf(c, &rc, (uint64_t)n * 4, &y, (void **)&ym, err);
	if (rc != Q42_OK)
		goto out;
	fill(c, xm, (uint64_t)n * n_tok, 1.0f);
	if ((rc = q42_vk_begin(c->vk, err)) != Q42_OK ||
	    (rc = q42_vk_op_pool_mean(c->ops, x, y, n, n_tok, err)) != Q42_OK ||
	    (rc = q42_vk_submit(c->vk, err)) != Q42_OK)
		goto out;
	const float w = 1.0f / (float)n_tok;
	for (uint32_t d = 0; d < n; d++) {
		double a = 0.0;
		for (uint32_t t = 0; t < n_tok; t++)
			a += (double)(xm[(uint64_t)t * n + d] * w);
		c->want[d] = a;
		c->got[d] = ym[d];
	}
	q42_certify_result res;
	/* n_tok float additions of terms at most 1/n_tok: their rounding
	 * stays below (n_tok + 2) units of 1 */
	q42_certify_begin(&res, "pool_mean", (double)(n_tok + 2) * U, 0.0, "n=%u n_tok=%u", n, n_tok);
	verdict(c, &res, NULL, n);
out:
	case_end(c);
	return rc;
}

static int case_softmax(struct vc *c, uint32_t n, uint32_t rows, float scale, q42_err *err)
{
	q42_vk_view x, y;
	float *xm, *ym;
	int rc = scratch(c, (uint64_t)n * rows, err);
	hbuf(c, &rc, (uint64_t)n * rows * 4, &x, (void **)&xm, err);
	hbuf(c, &rc, (uint64_t)n * rows * 4, &y, (void **)&ym, err);
	if (rc != Q42_OK)
		goto out;
	fill(c, xm, (uint64_t)n * rows, 8.0f);
	if ((rc = q42_vk_begin(c->vk, err)) != Q42_OK ||
	    (rc = q42_vk_op_softmax(c->ops, x, y, n, rows, scale, err)) != Q42_OK ||
	    (rc = q42_vk_submit(c->vk, err)) != Q42_OK)
		goto out;
	for (uint32_t r = 0; r < rows; r++) {
		float *g = c->got + (uint64_t)r * n;
		q42_op_scale(n, g, xm + (uint64_t)r * n, scale);
		q42_op_softmax(n, g, g);
		for (uint32_t i = 0; i < n; i++) {
			const uint64_t k = (uint64_t)r * n + i;
			c->want[k] = c->got[k];
			c->got[k] = ym[k];
		}
	}
	q42_certify_result res;
	q42_certify_begin(&res, "softmax", 0x1p-30, 0x1p-16, "n=%u rows=%u scale=%g", n, rows,
			  (double)scale);
	verdict(c, &res, NULL, (uint64_t)n * rows);
out:
	case_end(c);
	return rc;
}

/* op 0: swiglu; op 1: add with b of n_b; op 2: GeGLU; op 3: GELU alone
 * (BERT's FFN: the CPU's GeGLU with a gate of ones) */
static int case_elt(struct vc *c, int op, uint32_t n, uint32_t n_b, q42_err *err)
{
	q42_vk_view a, b, y;
	float *am, *bm, *ym;
	int rc = scratch(c, n, err);
	hbuf(c, &rc, (uint64_t)n * 4, &a, (void **)&am, err);
	hbuf(c, &rc, (uint64_t)n_b * 4, &b, (void **)&bm, err);
	hbuf(c, &rc, (uint64_t)n * 4, &y, (void **)&ym, err);
	if (rc != Q42_OK)
		goto out;
	fill(c, am, n, op != 1 ? 8.0f : 1.0f);
	fill(c, bm, n_b, 1.0f);
	if ((rc = q42_vk_begin(c->vk, err)) != Q42_OK)
		goto out;
	if (op >= 2 && n > 2) { /* both tails of the table's range, and its edges */
		am[0] = -11.0f;
		am[1] = 10.5f;
		am[2] = -10.0f;
	}
	if (op == 3)
		rc = q42_vk_op_gelu(c->ops, a, y, n, err);
	else
		rc = op != 1 ? q42_vk_op_glu(c->ops, op == 2, a, b, y, n, 1, n, 0, err)
			     : q42_vk_op_add(c->ops, a, b, y, n, n_b, err);
	if (rc != Q42_OK || (rc = q42_vk_submit(c->vk, err)) != Q42_OK)
		goto out;
	static const float one = 1.0f;
	for (uint32_t i = 0; i < n; i++) {
		float v;
		if (op == 0)
			q42_op_swiglu(1, &v, am + i, bm + i);
		else if (op == 2)
			q42_op_geglu(1, &v, am + i, bm + i);
		else if (op == 3)
			q42_op_geglu(1, &v, am + i, &one);
		else
			q42_op_add(1, &v, am + i, bm + i % n_b);
		c->want[i] = v;
		c->got[i] = ym[i];
	}
	q42_certify_result res;
	if (op == 0)
		q42_certify_begin(&res, "glu.silu", 0x1p-30, 0x1p-16, "n=%u", n);
	else if (op >= 2) /* a gate near an f16 rounding boundary may round the other way */
		q42_certify_begin(&res, op == 2 ? "glu.gelu" : "gelu", 0x1p-20, 0x1p-10, "n=%u", n);
	else
		q42_certify_begin(&res, "add", 0.0, 0.0, "n=%u n_b=%u", n, n_b);
	verdict(c, &res, NULL, n);
out:
	case_end(c);
	return rc;
}

/* y = x * s, or (cap > 0) the soft cap */
static int case_scale(struct vc *c, uint32_t n, float s, float cap, q42_err *err)
{
	q42_vk_view x, y;
	float *xm, *ym;
	int rc = scratch(c, n, err);
	hbuf(c, &rc, (uint64_t)n * 4, &x, (void **)&xm, err);
	hbuf(c, &rc, (uint64_t)n * 4, &y, (void **)&ym, err);
	if (rc != Q42_OK)
		goto out;
	fill(c, xm, n, cap > 0.0f ? 4.0f * cap : 1.0f);
	if ((rc = q42_vk_begin(c->vk, err)) != Q42_OK ||
	    (rc = q42_vk_op_scale(c->ops, x, y, n, s, cap, err)) != Q42_OK ||
	    (rc = q42_vk_submit(c->vk, err)) != Q42_OK)
		goto out;
	if (cap > 0.0f)
		q42_op_softcap(n, c->got, xm, cap);
	else
		q42_op_scale(n, c->got, xm, s);
	for (uint32_t i = 0; i < n; i++) {
		c->want[i] = c->got[i];
		c->got[i] = ym[i];
	}
	q42_certify_result res;
	if (cap > 0.0f) /* tanh from exp: a few ulps of the cap */
		q42_certify_begin(&res, "softcap", 8 * U * cap, 0.0, "n=%u cap=%g", n, (double)cap);
	else
		q42_certify_begin(&res, "scale", 0.0, 0.0, "n=%u s=%g", n, (double)s);
	verdict(c, &res, NULL, n);
out:
	case_end(c);
	return rc;
}

/* GeGLU over the halves of a fused product's rows (phi3's layout) */
static int case_glu_fused(struct vc *c, uint32_t n, uint32_t rows, q42_err *err)
{
	const uint64_t no = (uint64_t)n * rows;
	q42_vk_view h, y;
	float *hm, *ym;
	int rc = scratch(c, no, err);
	hbuf(c, &rc, 2 * no * 4, &h, (void **)&hm, err);
	hbuf(c, &rc, no * 4, &y, (void **)&ym, err);
	if (rc != Q42_OK)
		goto out;
	fill(c, hm, 2 * no, 4.0f);
	if ((rc = q42_vk_begin(c->vk, err)) != Q42_OK ||
	    (rc = q42_vk_op_glu(c->ops, true, h, h, y, n, rows, 2 * n, n, err)) != Q42_OK ||
	    (rc = q42_vk_submit(c->vk, err)) != Q42_OK)
		goto out;
	for (uint32_t t = 0; t < rows; t++)
		q42_op_geglu(n, c->got + (uint64_t)t * n, hm + 2ull * t * n, hm + 2ull * t * n + n);
	for (uint64_t i = 0; i < no; i++) {
		c->want[i] = c->got[i];
		c->got[i] = ym[i];
	}
	q42_certify_result res;
	q42_certify_begin(&res, "glu.gelu", 0x1p-20, 0x1p-10, "n=%u rows=%u fused", n, rows);
	verdict(c, &res, NULL, no);
out:
	case_end(c);
	return rc;
}

/* the k rows of a fused qkv product: columns 37.. of rows of 101 */
static int case_copy(struct vc *c, q42_err *err)
{
	const uint32_t n = 29, rows = 6, xs = 101, xo = 37, ys = 31, yo = 2;
	q42_vk_view x, y;
	float *xm, *ym;
	int rc = scratch(c, (uint64_t)ys * rows, err);
	hbuf(c, &rc, (uint64_t)xs * rows * 4, &x, (void **)&xm, err);
	hbuf(c, &rc, (uint64_t)ys * rows * 4, &y, (void **)&ym, err);
	if (rc != Q42_OK)
		goto out;
	fill(c, xm, (uint64_t)xs * rows, 1.0f);
	if ((rc = q42_vk_begin(c->vk, err)) != Q42_OK ||
	    (rc = q42_vk_op_copy(c->ops, x, xo, xs, y, yo, ys, n, rows, err)) != Q42_OK ||
	    (rc = q42_vk_submit(c->vk, err)) != Q42_OK)
		goto out;
	/* the whole destination: what lies outside the rows stays zero */
	for (uint32_t t = 0; t < rows; t++)
		for (uint32_t i = 0; i < ys; i++) {
			const uint64_t k = (uint64_t)t * ys + i;
			c->want[k] = i >= yo && i < yo + n ? xm[(uint64_t)t * xs + xo + i - yo] : 0.0;
			c->got[k] = ym[k];
		}
	q42_certify_result res;
	q42_certify_begin(&res, "copy", 0.0, 0.0, "n=%u rows=%u strides=%u/%u", n, rows, xs, ys);
	verdict(c, &res, NULL, (uint64_t)ys * rows);
out:
	case_end(c);
	return rc;
}

/* lfm2's short convolution: n_tok tokens at pos0 over a history whose
 * other rows are set (those past the pass must not be read), against
 * q42_op_mul and q42_op_conv_dot; ahead > 0: a bidirectional model's
 * centred window */
static int case_shortconv(struct vc *c, uint32_t n_tok, uint32_t n, uint32_t l, uint32_t pos0,
			  uint32_t ahead, q42_err *err)
{
	const uint32_t n_ctx = pos0 + n_tok + 3;
	q42_vk_view b, k, h, y;
	float *bm, *km, *hm, *ym, *ref = NULL, win[64];
	int rc = scratch(c, (uint64_t)n * n_tok, err);
	hbuf(c, &rc, 3ull * n * n_tok * 4, &b, (void **)&bm, err);
	hbuf(c, &rc, (uint64_t)n * l * 4, &k, (void **)&km, err);
	hbuf(c, &rc, (uint64_t)n * n_ctx * 4, &h, (void **)&hm, err);
	hbuf(c, &rc, (uint64_t)n * n_tok * 4, &y, (void **)&ym, err);
	if (rc == Q42_OK && (ref = malloc((uint64_t)n * n_ctx * sizeof *ref)) == NULL)
		rc = q42_err_set(err, Q42_ENOMEM, "certify: out of memory");
	if (rc != Q42_OK)
		goto out;
	fill(c, bm, 3ull * n * n_tok, 1.0f);
	fill(c, km, (uint64_t)n * l, 1.0f);
	fill(c, hm, (uint64_t)n * n_ctx, 1.0f);
	memcpy(ref, hm, (uint64_t)n * n_ctx * sizeof *ref);
	if ((rc = q42_vk_begin(c->vk, err)) != Q42_OK ||
	    (rc = q42_vk_op_shortconv(c->ops, b, k, h, y, n_tok, n, l, n_ctx, pos0, ahead, err)) != Q42_OK ||
	    (rc = q42_vk_submit(c->vk, err)) != Q42_OK)
		goto out;
	for (uint32_t t = 0; t < n_tok; t++) {
		const float *r = bm + 3ull * n * t;
		q42_op_mul(n, ref + (uint64_t)(pos0 + t) * n, r, r + 2 * n);
	}
	for (uint32_t t = 0; t < n_tok; t++)
		for (uint32_t d = 0; d < n; d++) {
			const uint32_t pos = pos0 + t;
			for (uint32_t i = 0; i < l; i++) {
				const uint32_t at = pos + i + 1 + ahead;
				win[i] = at >= l && at - l < pos0 + n_tok ? ref[(uint64_t)(at - l) * n + d] : 0.0f;
			}
			const uint64_t o = (uint64_t)t * n + d;
			c->want[o] = bm[3ull * n * t + n + d] * q42_op_conv_dot(l, win, km + (uint64_t)d * l);
			c->got[o] = ym[o];
			c->floor[o] = 1.0;
		}
	q42_certify_result res;
	/* a device may fuse a product into the sum */
	q42_certify_begin(&res, "shortconv", 0.0, 8 * l * U, "n_tok=%u n=%u l=%u pos0=%u ahead=%u", n_tok,
			  n, l, pos0, ahead);
	verdict(c, &res, c->floor, (uint64_t)n * n_tok);
out:
	free(ref);
	case_end(c);
	return rc;
}

/* the sigmoid router: ids exactly, weights and scores to rounding */
static int case_route(struct vc *c, uint32_t n_tok, uint32_t n_exp, uint32_t k, q42_err *err)
{
	const uint64_t nl = (uint64_t)n_tok * n_exp, nk = (uint64_t)n_tok * k;
	q42_vk_view lg, b, id, w;
	float *lm, *bm, *wm, *ref = NULL, *rw = NULL;
	uint32_t *im;
	int32_t *rid = NULL;
	int rc = scratch(c, nl + nk, err);
	hbuf(c, &rc, nl * 4, &lg, (void **)&lm, err);
	hbuf(c, &rc, (uint64_t)n_exp * 4, &b, (void **)&bm, err);
	hbuf(c, &rc, nk * 4, &id, (void **)&im, err);
	hbuf(c, &rc, nk * 4, &w, (void **)&wm, err);
	if (rc == Q42_OK && ((ref = malloc(nl * sizeof *ref)) == NULL ||
			     (rw = malloc(nk * sizeof *rw)) == NULL ||
			     (rid = malloc(nk * sizeof *rid)) == NULL))
		rc = q42_err_set(err, Q42_ENOMEM, "certify: out of memory");
	if (rc != Q42_OK)
		goto out;
	fill(c, lm, nl, 4.0f);
	fill(c, bm, n_exp, 0.25f);
	memcpy(ref, lm, nl * sizeof *ref);
	if ((rc = q42_vk_begin(c->vk, err)) != Q42_OK ||
	    (rc = q42_vk_op_route(c->ops, lg, b, id, w, n_tok, n_exp, k, err)) != Q42_OK ||
	    (rc = q42_vk_submit(c->vk, err)) != Q42_OK)
		goto out;
	bool ids_equal = true;
	for (uint32_t t = 0; t < n_tok; t++)
		q42_op_route_sigmoid(n_exp, k, ref + (uint64_t)t * n_exp, bm, rid + (uint64_t)t * k,
				     rw + (uint64_t)t * k);
	for (uint64_t i = 0; i < nl; i++) {
		c->want[i] = ref[i];
		c->got[i] = lm[i];
	}
	for (uint64_t i = 0; i < nk; i++) {
		ids_equal = ids_equal && im[i] == (uint32_t)rid[i];
		c->want[nl + i] = rw[i];
		c->got[nl + i] = wm[i];
	}
	q42_certify_result res;
	q42_certify_begin(&res, "route", 0.0, 16 * U, "n_tok=%u experts=%u k=%u", n_tok, n_exp, k);
	q42_certify_compare(&res, c->got, c->want, NULL, nl + nk);
	if (!ids_equal)
		res.pass = false; /* a different expert is wrong, however close its score */
	emit(c, &res);
out:
	free(ref);
	free(rw);
	free(rid);
	case_end(c);
	return rc;
}

/* the experts' products: n_tok tokens, k of n_exp experts each (ids
 * chosen here), then moe_sum of the pairs into a residual */
static int case_matmul_id(struct vc *c, uint32_t dtype, uint32_t n_in, uint32_t n_tok, uint32_t k,
			  q42_err *err)
{
	const uint32_t n_exp = 6, n_out = 37, np = n_tok * k;
	uint64_t rb = 0;
	q42_dtype_nbytes(dtype, n_in, n_in, &rb);
	const uint64_t eb = rb * n_out;
	q42_vk_view w, id, x, y, pw, r;
	uint8_t *wm;
	uint32_t *im;
	float *xm, *ym, *pm, *rm, *wd = NULL;
	int rc = scratch(c, (uint64_t)np * n_out + (uint64_t)n_tok * n_out, err);
	hbuf(c, &rc, eb * n_exp, &w, (void **)&wm, err);
	hbuf(c, &rc, np * 4ull, &id, (void **)&im, err);
	hbuf(c, &rc, (uint64_t)n_in * n_tok * 4, &x, (void **)&xm, err);
	hbuf(c, &rc, (uint64_t)np * n_out * 4, &y, (void **)&ym, err);
	hbuf(c, &rc, np * 4ull, &pw, (void **)&pm, err);
	hbuf(c, &rc, (uint64_t)n_tok * n_out * 4, &r, (void **)&rm, err);
	if (rc == Q42_OK && (wd = malloc((uint64_t)n_in * n_out * n_exp * sizeof *wd)) == NULL)
		rc = q42_err_set(err, Q42_ENOMEM, "certify: out of memory");
	if (rc != Q42_OK)
		goto out;
	q42_certify_weights(dtype, wm, (int64_t)n_in * n_out * n_exp, &c->rng);
	fill(c, xm, (uint64_t)n_in * n_tok, 1.0f);
	fill(c, pm, np, 1.0f);
	fill(c, rm, (uint64_t)n_tok * n_out, 1.0f);
	for (uint32_t j = 0; j < np; j++)
		im[j] = (uint32_t)(q42_certify_next(&c->rng) % n_exp);
	im[np - 1] = n_exp - 1; /* the last expert, read to its end */
	float *r0 = malloc((uint64_t)n_tok * n_out * sizeof *r0);
	if (r0 == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "certify: out of memory");
		goto out;
	}
	memcpy(r0, rm, (uint64_t)n_tok * n_out * sizeof *r0);
	if ((rc = q42_vk_begin(c->vk, err)) != Q42_OK ||
	    (rc = q42_vk_op_matmul_id(c->ops, dtype, w, rb, eb, n_in, n_out, id, x, k, np, y, n_out,
				      err)) != Q42_OK ||
	    (rc = q42_vk_op_moe_sum(c->ops, y, pw, r, n_out, n_tok, k, err)) != Q42_OK ||
	    (rc = q42_vk_submit(c->vk, err)) != Q42_OK) {
		free(r0);
		goto out;
	}
	q42_dequant(dtype, wm, wd, (int64_t)n_in * n_out * n_exp);
	const uint64_t ny = (uint64_t)np * n_out;
	for (uint32_t j = 0; j < np; j++)
		for (uint32_t o = 0; o < n_out; o++) {
			double s = 0.0, sa = 0.0;
			const float *wr = wd + ((uint64_t)im[j] * n_out + o) * n_in;
			for (uint32_t i = 0; i < n_in; i++) {
				const double p = (double)wr[i] * (double)xm[(uint64_t)(j / k) * n_in + i];
				s += p;
				sa += fabs(p);
			}
			const uint64_t q = (uint64_t)j * n_out + o;
			c->want[q] = s;
			c->floor[q] = sa > 0.0 ? sa : Q42_CERTIFY_FLOOR;
			c->got[q] = ym[q];
		}
	/* the sum from the device's own pair outputs, the CPU's order */
	for (uint32_t t = 0; t < n_tok; t++)
		for (uint32_t o = 0; o < n_out; o++) {
			float acc = ym[(uint64_t)t * k * n_out + o] * pm[t * k];
			for (uint32_t j = 1; j < k; j++)
				acc += ym[((uint64_t)t * k + j) * n_out + o] * pm[t * k + j];
			const uint64_t q = ny + (uint64_t)t * n_out + o;
			c->want[q] = r0[(uint64_t)t * n_out + o] + acc;
			c->floor[q] = 1.0;
			c->got[q] = rm[(uint64_t)t * n_out + o];
		}
	free(r0);
	char kernel[48];
	snprintf(kernel, sizeof kernel, "matmul_id.%s", tname(dtype));
	q42_certify_result res;
	q42_certify_begin(&res, kernel, 0.0, (64.0 + n_in / 64.0) * U,
			  "n_in=%u n_out=%u experts=%u n_tok=%u k=%u +moe_sum", n_in, n_out, n_exp,
			  n_tok, k);
	verdict(c, &res, c->floor, ny + (uint64_t)n_tok * n_out);
out:
	free(wd);
	case_end(c);
	return rc;
}

struct rope_shape {
	bool neox, freqs;
	uint32_t n_tok, n_heads, hd, n_rot, pos0;
	float freq_scale, mscale;
};

static int case_rope(struct vc *c, const struct rope_shape *s, q42_err *err)
{
	const uint64_t n = (uint64_t)s->n_tok * s->n_heads * s->hd;
	const float base = 10000.0f;
	q42_vk_view x, f = {0};
	float *xm, *fm = NULL, *ref = NULL;
	int rc = scratch(c, n, err);
	hbuf(c, &rc, n * 4, &x, (void **)&xm, err);
	if (s->freqs)
		hbuf(c, &rc, (uint64_t)s->n_rot / 2 * 4, &f, (void **)&fm, err);
	if (rc == Q42_OK && (ref = malloc(n * sizeof *ref)) == NULL)
		rc = q42_err_set(err, Q42_ENOMEM, "certify: out of memory");
	if (rc != Q42_OK)
		goto out;
	fill(c, xm, n, 1.0f);
	memcpy(ref, xm, n * sizeof *ref);
	for (uint32_t i = 0; fm != NULL && i < s->n_rot / 2; i++)
		fm[i] = 2.5f + 1.5f * q42_certify_unit(&c->rng);
	if ((rc = q42_vk_begin(c->vk, err)) != Q42_OK ||
	    (rc = q42_vk_op_rope(c->ops, x, f, s->n_tok, s->n_heads, s->hd, s->n_rot, s->pos0, s->neox,
				 powf(base, -2.0f / (float)s->n_rot), s->freq_scale, s->mscale, err)) != Q42_OK ||
	    (rc = q42_vk_submit(c->vk, err)) != Q42_OK)
		goto out;
	/* the CPU engine's angles (q42_forward.c): theta advanced by repeated
	 * multiplication, cosf/sinf of freq_scale * (theta / freq) */
	const float theta_scale = powf(base, -2.0f / (float)s->n_rot);
	for (uint32_t t = 0; t < s->n_tok; t++) {
		float theta = (float)(s->pos0 + t);
		for (uint32_t i = 0; i < s->n_rot / 2; i++) {
			const float fr = fm != NULL ? fm[i] : 1.0f;
			const float a = s->freq_scale * (theta / fr);
			const float cs = cosf(a) * s->mscale, sn = sinf(a) * s->mscale;
			theta *= theta_scale;
			for (uint32_t h = 0; h < s->n_heads; h++) {
				float *v = ref + ((uint64_t)t * s->n_heads + h) * s->hd;
				const uint32_t ia = s->neox ? i : 2 * i, ib = s->neox ? i + s->n_rot / 2 : 2 * i + 1;
				const float x0 = v[ia], x1 = v[ib];
				v[ia] = x0 * cs - x1 * sn;
				v[ib] = x0 * sn + x1 * cs;
			}
		}
	}
	for (uint64_t i = 0; i < n; i++) {
		c->want[i] = ref[i];
		c->got[i] = xm[i];
	}
	q42_certify_result res;
	q42_certify_begin(&res, "rope", 0x1p-18 + 0x1p-22 * (double)(s->pos0 + s->n_tok), 0.0,
			  "%s n_tok=%u heads=%u hd=%u n_rot=%u pos0=%u%s mscale=%g", s->neox ? "neox" : "norm",
			  s->n_tok, s->n_heads, s->hd, s->n_rot, s->pos0, s->freqs ? " freqs" : "",
			  (double)s->mscale);
	verdict(c, &res, NULL, n);
out:
	free(ref);
	case_end(c);
	return rc;
}

/* ---- KV cache and attention -------------------------------------------- */

/* bidir: an encoder's attention over the whole pass; sym: its window is
 * symmetric (gemma-embedding) */
struct att_shape {
	uint32_t n_tok, n_heads, n_kv, hd_k, hd_v, n_ctx, pos0, n_swa;
	bool bidir, sym;
};

static float kv_value(const void *cache, uint32_t kvdt, uint64_t i)
{
	if (kvdt == Q42_DTYPE_F32)
		return ((const float *)cache)[i];
	return q42_f16_to_f32(((const uint16_t *)cache)[i]);
}

static int case_kv_store(struct vc *c, uint32_t kvdt, const struct att_shape *s, q42_err *err)
{
	const uint32_t es = kvdt == Q42_DTYPE_F32 ? 4 : 2;
	const uint64_t nk = (uint64_t)s->n_tok * s->n_kv * s->hd_k, nv = (uint64_t)s->n_tok * s->n_kv * s->hd_v;
	const uint64_t ck = (uint64_t)s->n_kv * s->n_ctx * s->hd_k, cv = (uint64_t)s->n_kv * s->n_ctx * s->hd_v;
	q42_vk_view k, v, kc, vcv;
	float *km, *vm;
	void *kcm, *vcm;
	int rc = scratch(c, ck + cv, err);
	hbuf(c, &rc, nk * 4, &k, (void **)&km, err);
	hbuf(c, &rc, nv * 4, &v, (void **)&vm, err);
	hbuf(c, &rc, ck * es, &kc, &kcm, err);
	hbuf(c, &rc, cv * es, &vcv, &vcm, err);
	if (rc != Q42_OK)
		goto out;
	fill(c, km, nk, 1.0f);
	fill(c, vm, nv, 1.0f);
	if ((rc = q42_vk_begin(c->vk, err)) != Q42_OK ||
	    (rc = q42_vk_op_kv_store(c->ops, kvdt, k, v, kc, vcv, s->n_tok, s->n_kv, s->hd_k, s->hd_v,
				     s->n_ctx, s->pos0, err)) != Q42_OK ||
	    (rc = q42_vk_submit(c->vk, err)) != Q42_OK)
		goto out;
	/* the whole cache: untouched positions must still be zero */
	for (uint64_t i = 0; i < ck + cv; i++) {
		c->want[i] = 0.0;
		c->got[i] = i < ck ? kv_value(kcm, kvdt, i) : kv_value(vcm, kvdt, i - ck);
	}
	for (uint32_t t = 0; t < s->n_tok; t++)
		for (uint32_t h = 0; h < s->n_kv; h++) {
			for (uint32_t d = 0; d < s->hd_k; d++) {
				const float x = km[((uint64_t)t * s->n_kv + h) * s->hd_k + d];
				c->want[((uint64_t)h * s->n_ctx + s->pos0 + t) * s->hd_k + d] =
					kvdt == Q42_DTYPE_F32 ? x : q42_f16_to_f32(q42_f32_to_f16(x));
			}
			for (uint32_t d = 0; d < s->hd_v; d++) {
				const float x = vm[((uint64_t)t * s->n_kv + h) * s->hd_v + d];
				c->want[ck + ((uint64_t)h * s->n_ctx + s->pos0 + t) * s->hd_v + d] =
					kvdt == Q42_DTYPE_F32 ? x : q42_f16_to_f32(q42_f32_to_f16(x));
			}
		}
	for (uint64_t i = 0; i < ck + cv; i++)
		c->floor[i] = 0x1p-14;
	q42_certify_result res;
	/* f16: one f16 ulp, whatever rounding the device's conversion uses */
	q42_certify_begin(&res, kvdt == Q42_DTYPE_F32 ? "kv_store.f32" : "kv_store.f16",
			  kvdt == Q42_DTYPE_F32 ? 0.0 : 0x1p-24, kvdt == Q42_DTYPE_F32 ? 0.0 : 0x1p-10,
			  "n_tok=%u kv=%u hd=%u/%u n_ctx=%u pos0=%u", s->n_tok, s->n_kv, s->hd_k, s->hd_v,
			  s->n_ctx, s->pos0);
	verdict(c, &res, c->floor, ck + cv);
out:
	case_end(c);
	return rc;
}

static int case_attention(struct vc *c, uint32_t kvdt, const struct att_shape *s, q42_err *err)
{
	const uint32_t es = kvdt == Q42_DTYPE_F32 ? 4 : 2;
	const uint64_t nq = (uint64_t)s->n_tok * s->n_heads * s->hd_k, no = (uint64_t)s->n_tok * s->n_heads * s->hd_v;
	const uint64_t ck = (uint64_t)s->n_kv * s->n_ctx * s->hd_k, cv = (uint64_t)s->n_kv * s->n_ctx * s->hd_v;
	const float scale = 1.0f / sqrtf((float)s->hd_k);
	q42_vk_view q, kc, vcv, o;
	float *qm, *om, *sc = NULL;
	void *kcm, *vcm;
	int rc = scratch(c, no, err);
	hbuf(c, &rc, nq * 4, &q, (void **)&qm, err);
	hbuf(c, &rc, ck * es, &kc, &kcm, err);
	hbuf(c, &rc, cv * es, &vcv, &vcm, err);
	hbuf(c, &rc, no * 4, &o, (void **)&om, err);
	if (rc == Q42_OK && (sc = malloc((uint64_t)s->n_ctx * sizeof *sc)) == NULL)
		rc = q42_err_set(err, Q42_ENOMEM, "certify: out of memory");
	if (rc != Q42_OK)
		goto out;
	fill(c, qm, nq, 1.0f);
	for (int which = 0; which < 2; which++) {
		void *m = which == 0 ? kcm : vcm;
		const uint64_t cn = which == 0 ? ck : cv;
		for (uint64_t i = 0; i < cn; i++) {
			const float x = q42_certify_unit(&c->rng);
			if (kvdt == Q42_DTYPE_F32)
				((float *)m)[i] = x;
			else
				((uint16_t *)m)[i] = q42_f32_to_f16(x);
		}
	}
	if ((rc = q42_vk_begin(c->vk, err)) != Q42_OK ||
	    (rc = q42_vk_op_attention(c->ops, kvdt, q, kc, vcv, o, s->n_tok, s->n_heads, s->n_kv, s->hd_k,
				      s->hd_v, s->n_ctx, s->pos0, scale, s->n_swa, !s->bidir, s->sym,
				      err)) != Q42_OK ||
	    (rc = q42_vk_submit(c->vk, err)) != Q42_OK)
		goto out;
	const uint32_t group = s->n_heads / s->n_kv;
	for (uint32_t t = 0; t < s->n_tok; t++)
		for (uint32_t h = 0; h < s->n_heads; h++) {
			const uint32_t kvh = h / group, pos = s->pos0 + t;
			const uint32_t n_pos = s->bidir ? s->pos0 + s->n_tok : pos + 1, half = s->n_swa / 2;
			const float *qv = qm + ((uint64_t)t * s->n_heads + h) * s->hd_k;
			for (uint32_t j = 0; j < n_pos; j++) {
				double d = 0.0;
				for (uint32_t i = 0; i < s->hd_k; i++)
					d += (double)qv[i] *
					     kv_value(kcm, kvdt, ((uint64_t)kvh * s->n_ctx + j) * s->hd_k + i);
				/* a window: the CPU's -inf scores, which softmax makes 0 */
				const bool out = s->n_swa != 0 && (s->sym ? j + half < pos || j > pos + half
									  : j + s->n_swa < n_pos);
				sc[j] = out ? -INFINITY : (float)d * scale;
			}
			q42_op_softmax(n_pos, sc, sc);
			for (uint32_t i = 0; i < s->hd_v; i++) {
				double a = 0.0;
				for (uint32_t j = 0; j < n_pos; j++)
					a += (double)sc[j] *
					     kv_value(vcm, kvdt, ((uint64_t)kvh * s->n_ctx + j) * s->hd_v + i);
				const uint64_t k = ((uint64_t)t * s->n_heads + h) * s->hd_v + i;
				c->want[k] = a;
				c->got[k] = om[k];
			}
		}
	q42_certify_result res;
	q42_certify_begin(&res, kvdt == Q42_DTYPE_F32 ? "attention.f32" : "attention.f16", 0x1p-16, 0.0,
			  "n_tok=%u heads=%u/%u hd=%u/%u n_ctx=%u pos0=%u swa=%u%s%s", s->n_tok, s->n_heads,
			  s->n_kv, s->hd_k, s->hd_v, s->n_ctx, s->pos0, s->n_swa,
			  s->bidir ? " bidir" : "", s->sym ? " sym" : "");
	verdict(c, &res, NULL, no);
out:
	free(sc);
	case_end(c);
	return rc;
}

/* ---- argmax -------------------------------------------------------------- */

/* A maximum planted at two places (the lower one must win) or only at the
 * last element (tie_at == 0). Exact: index and value bits. */
static int case_argmax(struct vc *c, uint32_t n, uint32_t tie_at, q42_err *err)
{
	q42_vk_view x, o;
	float *xm;
	uint32_t *om;
	int rc = Q42_OK;
	hbuf(c, &rc, (uint64_t)n * 4, &x, (void **)&xm, err);
	hbuf(c, &rc, 8, &o, (void **)&om, err);
	if (rc != Q42_OK)
		goto out;
	fill(c, xm, n, 1.0f);
	uint32_t want = n - 1;
	if (tie_at != 0 && tie_at < n) {
		want = tie_at;
		xm[n - 1] = 2.0f;
	}
	xm[want] = 2.0f;
	if ((rc = q42_vk_begin(c->vk, err)) != Q42_OK ||
	    (rc = q42_vk_op_argmax(c->ops, x, n, o, err)) != Q42_OK ||
	    (rc = q42_vk_submit(c->vk, err)) != Q42_OK)
		goto out;
	float v;
	memcpy(&v, &om[1], 4);
	q42_certify_result res;
	q42_certify_begin(&res, "argmax", 0.0, 0.0, "n=%u max at %u%s", n, want,
			  tie_at != 0 && tie_at < n ? " and n-1" : "");
	const float got[2] = {(float)om[0], v};
	const double wants[2] = {(double)want, 2.0};
	q42_certify_compare(&res, got, wants, NULL, 2);
	if (om[0] != want)
		res.pass = false; /* an index off by less than a float ulp is still wrong */
	emit(c, &res);
out:
	case_end(c);
	return rc;
}

/* ---- the case list ------------------------------------------------------- */

static int run_cases(struct vc *c, q42_err *err)
{
	static const uint32_t types[] = {Q42_DTYPE_F32, Q42_DTYPE_F16, Q42_DTYPE_Q4_0,
					 Q42_DTYPE_Q8_0, Q42_DTYPE_Q4_K, Q42_DTYPE_Q6_K};
	/* n_in per type family: any length for floats, 32-multiples, 256-multiples */
	static const uint32_t mm[3][3][3] = {
		{{100, 37, 1}, {515, 65, 3}, {256, 33, 17}},
		{{96, 37, 1}, {1056, 65, 3}, {4096, 33, 17}},
		{{256, 37, 1}, {768, 65, 3}, {4096, 33, 17}},
	};
	static const uint32_t rows_n[3] = {100, 96, 512};
	int rc = Q42_OK;
	for (size_t t = 0; t < 6 && rc == Q42_OK; t++) {
		const int fam = t < 2 ? 0 : t < 4 ? 1 : 2;
		for (int s = 0; s < 3 && rc == Q42_OK; s++)
			rc = case_matmul(c, types[t], mm[fam][s][0], mm[fam][s][1], mm[fam][s][2], err);
		if (rc == Q42_OK)
			rc = case_get_rows(c, types[t], rows_n[fam], err);
	}
	/* the last: per-head norms of a long pass, more rows than a grid
	 * dimension holds */
	static const uint32_t norm[4][2] = {{64, 1}, {896, 3}, {4097, 2}, {16, 70001}};
	for (int i = 0; i < 4 && rc == Q42_OK; i++)
		rc = case_rmsnorm(c, norm[i][0], norm[i][1], err);
	static const uint32_t ln[3][2] = {{64, 1}, {768, 7}, {4097, 2}};
	for (int i = 0; i < 3 && rc == Q42_OK; i++)
		rc = case_layernorm(c, ln[i][0], ln[i][1], err);
	static const uint32_t pm[3][2] = {{64, 1}, {768, 7}, {300, 513}};
	for (int i = 0; i < 3 && rc == Q42_OK; i++)
		rc = case_pool_mean(c, pm[i][0], pm[i][1], err);
	static const struct rope_shape ropes[] = {
		{false, false, 1, 4, 64, 64, 0, 1.0f, 1.0f},
		{true, true, 3, 5, 64, 32, 4090, 0.5f, 1.0f},
		{true, false, 17, 2, 128, 128, 100, 1.0f, 1.0f},
		{false, false, 17, 3, 80, 80, 4079, 1.0f, 1.0f},
		{true, true, 5, 3, 96, 48, 200, 1.0f, 1.1902381f}, /* phi3: partial, LongRoPE */
	};
	for (size_t i = 0; i < sizeof ropes / sizeof ropes[0] && rc == Q42_OK; i++)
		rc = case_rope(c, &ropes[i], err);
	static const uint32_t sm[4][2] = {{1, 1}, {100, 3}, {4097, 2}, {32000, 1}};
	static const float sm_scale[4] = {1.0f, 0.125f, 1.0f, 1.0f};
	for (int i = 0; i < 4 && rc == Q42_OK; i++)
		rc = case_softmax(c, sm[i][0], sm[i][1], sm_scale[i], err);
	static const uint32_t sw[3] = {1, 1000, 70001};
	for (int i = 0; i < 3 && rc == Q42_OK; i++)
		rc = case_elt(c, 0, sw[i], sw[i], err);
	for (int i = 0; i < 3 && rc == Q42_OK; i++)
		rc = case_elt(c, 2, sw[i], sw[i], err);
	for (int i = 0; i < 3 && rc == Q42_OK; i++)
		rc = case_elt(c, 3, sw[i], sw[i], err);
	static const uint32_t sc[3] = {1, 1000, 70001};
	static const float sc_f[3][2] = {{0.5f, 0.0f}, {16.0f, 0.0f}, {1.0f, 30.0f}};
	for (int i = 0; i < 3 && rc == Q42_OK; i++)
		rc = case_scale(c, sc[i], sc_f[i][0], sc_f[i][1], err);
	if (rc == Q42_OK)
		rc = case_glu_fused(c, 70, 5, err);
	if (rc == Q42_OK)
		rc = case_copy(c, err);
	/* the last two: lfm2's centred window (ahead (l-1)/2) */
	static const uint32_t cv[5][5] = {{1, 64, 3, 0, 0}, {7, 100, 3, 1, 0}, {17, 48, 4, 200, 0},
					  {7, 100, 3, 0, 1}, {17, 48, 5, 0, 2}};
	for (int i = 0; i < 5 && rc == Q42_OK; i++)
		rc = case_shortconv(c, cv[i][0], cv[i][1], cv[i][2], cv[i][3], cv[i][4], err);
	static const uint32_t rt[3][3] = {{1, 8, 2}, {5, 32, 4}, {17, 64, 8}};
	for (int i = 0; i < 3 && rc == Q42_OK; i++)
		rc = case_route(c, rt[i][0], rt[i][1], rt[i][2], err);
	for (size_t t = 0; t < 6 && rc == Q42_OK; t++)
		rc = case_matmul_id(c, types[t], t < 2 ? 100 : t < 4 ? 96 : 256, 3, 4, err);
	static const uint32_t ad[3][2] = {{1000, 1000}, {1000, 100}, {70001, 70001}};
	for (int i = 0; i < 3 && rc == Q42_OK; i++)
		rc = case_elt(c, 1, ad[i][0], ad[i][1], err);
	static const struct att_shape kvs[] = {
		{1, 2, 2, 64, 64, 16, 5, 0, false, false},
		{17, 2, 2, 64, 32, 64, 47, 0, false, false},
	};
	static const struct att_shape atts[] = {
		{1, 4, 4, 64, 64, 32, 0, 0, false, false},
		{3, 8, 2, 64, 64, 4096, 4093, 0, false, false},
		{17, 4, 1, 128, 128, 256, 100, 0, false, false},
		{1, 2, 2, 64, 32, 4096, 4095, 0, false, false},
		{17, 4, 2, 256, 256, 256, 100, 37, false, false}, /* gemma3: a window shorter than the pass */
		{1, 4, 2, 80, 80, 512, 300, 100, false, false},
		/* encoders: the whole pass, in one chunk and in two; gemma-
		 * embedding's symmetric window, inside the pass and wider */
		{7, 4, 2, 64, 64, 32, 0, 0, true, false},
		{70, 4, 4, 64, 64, 128, 0, 0, true, false},
		{17, 4, 2, 64, 64, 64, 0, 8, true, true},
		{70, 4, 2, 128, 128, 128, 0, 40, true, true},
		{5, 2, 1, 32, 32, 16, 0, 512, true, true},
	};
	for (uint32_t f16 = 0; f16 < 2 && rc == Q42_OK; f16++) {
		const uint32_t dt = f16 ? Q42_DTYPE_F16 : Q42_DTYPE_F32;
		for (size_t i = 0; i < sizeof kvs / sizeof kvs[0] && rc == Q42_OK; i++)
			rc = case_kv_store(c, dt, &kvs[i], err);
		for (size_t i = 0; i < sizeof atts / sizeof atts[0] && rc == Q42_OK; i++)
			rc = case_attention(c, dt, &atts[i], err);
	}
	static const uint32_t am[4][2] = {{1, 0}, {1000, 17}, {151936, 70000}, {151936, 0}};
	for (int i = 0; i < 4 && rc == Q42_OK; i++)
		rc = case_argmax(c, am[i][0], am[i][1], err);
	return rc;
}

static int certify_on(struct vc *c, q42_err *err)
{
	int rc = run_cases(c, err);
	free(c->want);
	free(c->floor);
	free(c->got);
	return rc;
}

int q42_vk_certify_run(int32_t device, uint64_t seed, q42_certify_fn fn, void *arg,
		       uint32_t *n_fail, q42_err *err)
{
	struct vc c = {.fn = fn, .arg = arg, .rng = seed};
	int rc = q42_vk_open(&c.vk, device, true, err);
	if (rc == Q42_OK)
		rc = q42_vk_ops_open(&c.ops, c.vk, err);
	if (rc == Q42_OK)
		rc = certify_on(&c, err);
	*n_fail = c.n_fail;
	q42_vk_ops_close(c.ops);
	if (c.vk != NULL)
		q42_vk_close(c.vk);
	return rc;
}

int q42_vk_certify_device(q42_vk *vk, q42_vk_ops *ops, uint64_t seed, q42_certify_fn fn,
			  void *arg, uint32_t *n_fail, q42_err *err)
{
	struct vc c = {.fn = fn, .arg = arg, .rng = seed, .vk = vk, .ops = ops};
	int rc = certify_on(&c, err);
	*n_fail = c.n_fail;
	return rc;
}
