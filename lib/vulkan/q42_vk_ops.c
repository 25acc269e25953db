/* q42_vk_ops.c -- the Vulkan kernels (q42_vk_ops.h): argument checks, push
 * constants and workgroup counts for the shaders in shaders/.
 *
 * Every pipeline is built at open, so a device that cannot build one fails
 * there and never mid-pass. Workgroup sizes and the matrix kernels' row
 * and token tiles are specialization constants fixed here; the shaders'
 * reduction orders depend on them, so changing one changes results (within
 * the certified tolerances) and must be re-certified. Push-constant structs
 * mirror the `Push` blocks of the shaders field for field (all 4 bytes).
 */
#include <stdlib.h>
#include "common/q42_types.h"
#include "vulkan/q42_vk_ops.h"

#define WG_MATMUL 64u
#define MV_ROWS 2u   /* rows per workgroup, matrix-vector */
#define MM_ROWS 2u   /* rows per workgroup, matrix-matrix */
#define MM_TILE 8u   /* tokens per workgroup, matrix-matrix */
#define WG_ROW 256u  /* rmsnorm, softmax: one workgroup per row */
#define WG_ELT 256u  /* element-wise kernels */
#define WG_ROWS 64u  /* get_rows: 32-element units per workgroup */
#define WG_ATT 64u   /* attention: positions per chunk */
#define WG_ARGMAX 256u
#define MAX_GROUPS 65535u
#define ATT_MAX_HD 256u /* MAX_HD of attention.comp */
#define ROUTE_MAX_K 64u /* MAX_K of route.comp */
#define WG_ROUTE 64u

enum { N_TYPES = 6 };
static const uint32_t mm_types[N_TYPES] = {Q42_DTYPE_F32, Q42_DTYPE_F16, Q42_DTYPE_Q4_0,
					   Q42_DTYPE_Q8_0, Q42_DTYPE_Q4_K, Q42_DTYPE_Q6_K};

struct q42_vk_ops {
	q42_vk *vk;
	q42_vk_pipe *mv[N_TYPES], *mm[N_TYPES], *rows[N_TYPES], *mid[N_TYPES];
	q42_vk_pipe *kv[2], *att[2], *glu[3], *conv[2];
	q42_vk_pipe *rmsnorm, *layernorm, *pool_mean, *rope, *softmax, *add, *argmax, *scale, *copy, *route, *moe_sum;
};

static int type_slot(uint32_t dtype)
{
	for (int i = 0; i < N_TYPES; i++)
		if (mm_types[i] == dtype)
			return i;
	return -1;
}

bool q42_vk_ops_has_matmul(uint32_t dtype)
{
	return type_slot(dtype) >= 0;
}

int q42_vk_ops_open(q42_vk_ops **out, q42_vk *vk, q42_err *err)
{
	*out = NULL;
	q42_vk_ops *o = calloc(1, sizeof *o);
	if (o == NULL)
		return q42_err_set(err, Q42_ENOMEM, "vulkan ops: out of memory");
	o->vk = vk;
	int rc = Q42_OK;
	for (int i = 0; i < N_TYPES && rc == Q42_OK; i++) {
		const uint32_t mv[4] = {WG_MATMUL, mm_types[i], MV_ROWS, 1};
		const uint32_t mm[4] = {WG_MATMUL, mm_types[i], MM_ROWS, MM_TILE};
		const uint32_t gr[2] = {WG_ROWS, mm_types[i]};
		rc = q42_vk_pipe_get(vk, "matmul", 3, 24, mv, 4, &o->mv[i], err);
		if (rc == Q42_OK)
			rc = q42_vk_pipe_get(vk, "matmul", 3, 24, mm, 4, &o->mm[i], err);
		if (rc == Q42_OK)
			rc = q42_vk_pipe_get(vk, "get_rows", 3, 12, gr, 2, &o->rows[i], err);
		if (rc == Q42_OK)
			rc = q42_vk_pipe_get(vk, "matmul_id", 4, 36, mv, 4, &o->mid[i], err);
	}
	for (uint32_t f16 = 0; f16 < 2 && rc == Q42_OK; f16++) {
		const uint32_t kv[2] = {WG_ELT, f16};
		const uint32_t at[2] = {WG_ATT, f16};
		rc = q42_vk_pipe_get(vk, "kv_store", 2, 24, kv, 2, &o->kv[f16], err);
		if (rc == Q42_OK)
			rc = q42_vk_pipe_get(vk, "attention", 4, 44, at, 2, &o->att[f16], err);
	}
	for (uint32_t k = 0; k < 2 && rc == Q42_OK; k++) {
		const uint32_t sc[2] = {WG_ELT, k};
		rc = q42_vk_pipe_get(vk, "glu", 3, 20, sc, 2, &o->glu[k], err);
		if (rc == Q42_OK)
			rc = q42_vk_pipe_get(vk, "shortconv", 4, 24, sc, 2, &o->conv[k], err);
	}
	const uint32_t gelu[2] = {WG_ELT, 2};
	if (rc == Q42_OK)
		rc = q42_vk_pipe_get(vk, "glu", 3, 20, gelu, 2, &o->glu[2], err);
	const uint32_t wrow = WG_ROW, welt = WG_ELT, wam = WG_ARGMAX, wrt = WG_ROUTE;
	if (rc == Q42_OK)
		rc = q42_vk_pipe_get(vk, "rmsnorm", 3, 16, &wrow, 1, &o->rmsnorm, err);
	if (rc == Q42_OK)
		rc = q42_vk_pipe_get(vk, "layernorm", 4, 16, &wrow, 1, &o->layernorm, err);
	if (rc == Q42_OK)
		rc = q42_vk_pipe_get(vk, "pool_mean", 2, 8, &welt, 1, &o->pool_mean, err);
	if (rc == Q42_OK)
		rc = q42_vk_pipe_get(vk, "softmax", 2, 12, &wrow, 1, &o->softmax, err);
	if (rc == Q42_OK)
		rc = q42_vk_pipe_get(vk, "rope", 2, 44, &welt, 1, &o->rope, err);
	if (rc == Q42_OK)
		rc = q42_vk_pipe_get(vk, "scale", 2, 16, &welt, 1, &o->scale, err);
	if (rc == Q42_OK)
		rc = q42_vk_pipe_get(vk, "copy", 2, 28, &welt, 1, &o->copy, err);
	if (rc == Q42_OK)
		rc = q42_vk_pipe_get(vk, "route", 4, 16, &wrt, 1, &o->route, err);
	if (rc == Q42_OK)
		rc = q42_vk_pipe_get(vk, "moe_sum", 3, 16, &welt, 1, &o->moe_sum, err);
	if (rc == Q42_OK)
		rc = q42_vk_pipe_get(vk, "add", 3, 12, &welt, 1, &o->add, err);
	if (rc == Q42_OK)
		rc = q42_vk_pipe_get(vk, "argmax", 2, 4, &wam, 1, &o->argmax, err);
	if (rc != Q42_OK) {
		q42_err_prefix(err, "vulkan kernels");
		free(o);
		return rc;
	}
	*out = o;
	return Q42_OK;
}

void q42_vk_ops_close(q42_vk_ops *o)
{
	free(o); /* the pipelines belong to the layer's cache */
}

/* A 1-D range of `items` threads in groups of wg, folded into x and y
 * when it exceeds the per-dimension limit; *gx is the shaders' groups_x. */
static int grid(uint64_t items, uint32_t wg, uint32_t *gx, uint32_t *gy, q42_err *err)
{
	const uint64_t groups = (items + wg - 1) / wg;
	*gx = groups < MAX_GROUPS ? (uint32_t)groups : MAX_GROUPS;
	if (*gx == 0)
		*gx = 1;
	const uint64_t y = (groups + *gx - 1) / *gx;
	if (y > MAX_GROUPS || items > UINT32_MAX / 2)
		return q42_err_set(err, Q42_EARG, "vulkan kernels: %llu elements is too many for one dispatch",
				   (unsigned long long)items);
	*gy = y == 0 ? 1 : (uint32_t)y;
	return Q42_OK;
}

static int too_big(uint64_t bytes, const char *what, q42_err *err)
{
	if (bytes <= UINT32_MAX)
		return Q42_OK;
	return q42_err_set(err, Q42_EARG, "vulkan kernels: %s spans %llu bytes, more than the 4 GiB "
			   "one binding addresses", what, (unsigned long long)bytes);
}

int q42_vk_op_matmul(q42_vk_ops *o, uint32_t dtype, q42_vk_view w, uint64_t row_bytes,
		     uint32_t n_in, uint32_t n_out, q42_vk_view x, uint32_t n_tok, q42_vk_view y,
		     uint32_t y_stride, q42_err *err)
{
	const int slot = type_slot(dtype);
	const q42_dtype_info *ti = q42_dtype_get(dtype);
	if (slot < 0 || ti == NULL)
		return q42_err_set(err, Q42_EUNSUPPORTED, "vulkan matmul: no kernel for type %u", dtype);
	uint64_t need = 0;
	if (n_in == 0 || n_out == 0 || n_tok == 0 || y_stride < n_out ||
	    !q42_dtype_nbytes(dtype, n_in, n_in, &need) || row_bytes < need ||
	    (dtype == Q42_DTYPE_F32 && row_bytes % 4 != 0) || row_bytes % 2 != 0)
		return q42_err_set(err, Q42_EARG, "vulkan matmul: bad shape (type %s, n_in %u, n_out %u, "
				   "n_tok %u, row_bytes %llu, y_stride %u)", ti->name, n_in, n_out, n_tok,
				   (unsigned long long)row_bytes, y_stride);
	int rc = too_big(row_bytes * n_out, "the weight matrix", err);
	if (rc == Q42_OK)
		rc = too_big((uint64_t)n_tok * n_in * 4, "the activations", err);
	if (rc == Q42_OK)
		rc = too_big((uint64_t)n_tok * y_stride * 4, "the output", err);
	if (rc != Q42_OK)
		return rc;
	const uint32_t rows = n_tok == 1 ? MV_ROWS : MM_ROWS, tile = n_tok == 1 ? 1 : MM_TILE;
	uint32_t gx, gy;
	if ((rc = grid((uint64_t)n_out, rows, &gx, &gy, err)) != Q42_OK)
		return rc;
	const uint32_t push[6] = {(uint32_t)row_bytes, n_in, n_out, n_tok, y_stride, gx};
	const q42_vk_view b[3] = {w, x, y};
	return q42_vk_dispatch(o->vk, n_tok == 1 ? o->mv[slot] : o->mm[slot], b, 3, push, sizeof push,
			       gx, gy, (n_tok + tile - 1) / tile, err);
}

int q42_vk_op_rmsnorm(q42_vk_ops *o, q42_vk_view x, q42_vk_view w, q42_vk_view y, uint32_t n,
		      uint32_t n_rows, float eps, q42_err *err)
{
	uint32_t gx, gy;
	if (n == 0 || n_rows == 0)
		return q42_err_set(err, Q42_EARG, "vulkan rmsnorm: bad shape (n %u, rows %u)", n, n_rows);
	int rc = grid(n_rows, 1, &gx, &gy, err);
	if (rc != Q42_OK)
		return rc;
	struct { uint32_t n, n_rows; float eps; uint32_t groups_x; } push = {n, n_rows, eps, gx};
	const q42_vk_view b[3] = {x, w, y};
	return q42_vk_dispatch(o->vk, o->rmsnorm, b, 3, &push, sizeof push, gx, gy, 1, err);
}

int q42_vk_op_layernorm(q42_vk_ops *o, q42_vk_view x, q42_vk_view w, q42_vk_view b, q42_vk_view y,
			uint32_t n, uint32_t n_rows, float eps, q42_err *err)
{
	uint32_t gx, gy;
	if (n == 0 || n_rows == 0)
		return q42_err_set(err, Q42_EARG, "vulkan layernorm: bad shape (n %u, rows %u)", n, n_rows);
	int rc = grid(n_rows, 1, &gx, &gy, err);
	if (rc != Q42_OK)
		return rc;
	struct { uint32_t n, n_rows; float eps; uint32_t groups_x; } push = {n, n_rows, eps, gx};
	const q42_vk_view v[4] = {x, w, b, y};
	return q42_vk_dispatch(o->vk, o->layernorm, v, 4, &push, sizeof push, gx, gy, 1, err);
}

int q42_vk_op_pool_mean(q42_vk_ops *o, q42_vk_view x, q42_vk_view y, uint32_t n, uint32_t n_tok,
			q42_err *err)
{
	if (n == 0 || n_tok == 0 || n > MAX_GROUPS * WG_ELT)
		return q42_err_set(err, Q42_EARG, "vulkan pool_mean: bad shape (n %u, tokens %u)", n, n_tok);
	int rc = too_big((uint64_t)n * n_tok * 4, "the rows", err);
	if (rc != Q42_OK)
		return rc;
	const uint32_t push[2] = {n, n_tok};
	const q42_vk_view b[2] = {x, y};
	return q42_vk_dispatch(o->vk, o->pool_mean, b, 2, push, sizeof push, (n + WG_ELT - 1) / WG_ELT, 1,
			       1, err);
}

int q42_vk_op_rope(q42_vk_ops *o, q42_vk_view x, q42_vk_view freqs, uint32_t n_tok,
		   uint32_t n_heads, uint32_t hd, uint32_t n_rot, uint32_t pos0, bool neox,
		   float theta_scale, float freq_scale, float mscale, q42_err *err)
{
	if (n_tok == 0 || n_heads == 0 || n_rot == 0 || n_rot % 2 != 0 || n_rot > hd)
		return q42_err_set(err, Q42_EARG, "vulkan rope: bad shape (n_rot %u, head dim %u)", n_rot,
				   hd);
	uint32_t gx, gy;
	int rc = grid((uint64_t)n_tok * n_heads * (n_rot / 2), WG_ELT, &gx, &gy, err);
	if (rc != Q42_OK)
		return rc;
	struct {
		uint32_t n_tok, n_heads, hd, n_rot, pos0, neox, has_freqs, groups_x;
		float theta_scale, freq_scale, mscale;
	} push = {n_tok, n_heads, hd, n_rot, pos0, neox, freqs.buf != NULL, gx, theta_scale, freq_scale,
		  mscale};
	/* without freqs the binding still needs a buffer; the shader never reads it */
	const q42_vk_view b[2] = {x, freqs.buf != NULL ? freqs : x};
	return q42_vk_dispatch(o->vk, o->rope, b, 2, &push, sizeof push, gx, gy, 1, err);
}

int q42_vk_op_softmax(q42_vk_ops *o, q42_vk_view x, q42_vk_view y, uint32_t n, uint32_t n_rows,
		      float scale, q42_err *err)
{
	if (n == 0 || n_rows == 0 || n_rows > MAX_GROUPS)
		return q42_err_set(err, Q42_EARG, "vulkan softmax: bad shape (n %u, rows %u)", n, n_rows);
	struct { uint32_t n, n_rows; float scale; } push = {n, n_rows, scale};
	const q42_vk_view b[2] = {x, y};
	return q42_vk_dispatch(o->vk, o->softmax, b, 2, &push, sizeof push, n_rows, 1, 1, err);
}

int q42_vk_op_glu(q42_vk_ops *o, bool gelu, q42_vk_view g, q42_vk_view u, q42_vk_view y,
		  uint32_t n, uint32_t n_rows, uint32_t in_stride, uint32_t u_off, q42_err *err)
{
	if (n == 0 || n_rows == 0 || in_stride < n || u_off > in_stride - n)
		return q42_err_set(err, Q42_EARG, "vulkan glu: bad shape (n %u, rows %u, stride %u, "
				   "up at %u)", n, n_rows, in_stride, u_off);
	uint32_t gx, gy;
	int rc = grid((uint64_t)n * n_rows, WG_ELT, &gx, &gy, err);
	if (rc != Q42_OK)
		return rc;
	const uint32_t push[5] = {n, n_rows, in_stride, u_off, gx};
	const q42_vk_view b[3] = {g, u, y};
	return q42_vk_dispatch(o->vk, o->glu[gelu], b, 3, push, sizeof push, gx, gy, 1, err);
}

int q42_vk_op_gelu(q42_vk_ops *o, q42_vk_view x, q42_vk_view y, uint32_t n, q42_err *err)
{
	if (n == 0)
		return q42_err_set(err, Q42_EARG, "vulkan gelu: no elements");
	uint32_t gx, gy;
	int rc = grid(n, WG_ELT, &gx, &gy, err);
	if (rc != Q42_OK)
		return rc;
	const uint32_t push[5] = {n, 1, n, 0, gx};
	const q42_vk_view b[3] = {x, x, y}; /* the gate's binding is unread */
	return q42_vk_dispatch(o->vk, o->glu[2], b, 3, push, sizeof push, gx, gy, 1, err);
}

int q42_vk_op_scale(q42_vk_ops *o, q42_vk_view x, q42_vk_view y, uint32_t n, float s, float cap,
		    q42_err *err)
{
	uint32_t gx, gy;
	int rc = grid(n, WG_ELT, &gx, &gy, err);
	if (rc != Q42_OK)
		return rc;
	struct { uint32_t n, groups_x; float s, cap; } push = {n, gx, cap > 0.0f ? 1.0f / cap : s,
								 cap > 0.0f ? cap : 0.0f};
	const q42_vk_view b[2] = {x, y};
	return q42_vk_dispatch(o->vk, o->scale, b, 2, &push, sizeof push, gx, gy, 1, err);
}

int q42_vk_op_copy(q42_vk_ops *o, q42_vk_view x, uint32_t x_off, uint32_t x_stride, q42_vk_view y,
		   uint32_t y_off, uint32_t y_stride, uint32_t n, uint32_t n_rows, q42_err *err)
{
	if (n == 0 || n_rows == 0 || x_stride < n || y_stride < n)
		return q42_err_set(err, Q42_EARG, "vulkan copy: bad shape (n %u, rows %u, strides %u/%u)",
				   n, n_rows, x_stride, y_stride);
	uint32_t gx, gy;
	int rc = grid((uint64_t)n * n_rows, WG_ELT, &gx, &gy, err);
	if (rc == Q42_OK)
		rc = too_big((uint64_t)x_stride * n_rows + x_off, "the source", err);
	if (rc == Q42_OK)
		rc = too_big((uint64_t)y_stride * n_rows + y_off, "the destination", err);
	if (rc != Q42_OK)
		return rc;
	const uint32_t push[7] = {n, n_rows, x_off, x_stride, y_off, y_stride, gx};
	const q42_vk_view b[2] = {x, y};
	return q42_vk_dispatch(o->vk, o->copy, b, 2, push, sizeof push, gx, gy, 1, err);
}

int q42_vk_op_shortconv(q42_vk_ops *o, q42_vk_view bcx, q42_vk_view kern, q42_vk_view hist,
			q42_vk_view y, uint32_t n_tok, uint32_t n, uint32_t l, uint32_t n_ctx,
			uint32_t pos0, uint32_t ahead, q42_err *err)
{
	if (n_tok == 0 || n == 0 || l == 0 || ahead >= l || pos0 > n_ctx || n_tok > n_ctx - pos0)
		return q42_err_set(err, Q42_EARG, "vulkan shortconv: bad shape (tokens %u at %u of %u, "
				   "n %u, width %u, %u ahead)", n_tok, pos0, n_ctx, n, l, ahead);
	uint32_t gx, gy;
	int rc = grid((uint64_t)n_tok * n, WG_ELT, &gx, &gy, err);
	if (rc == Q42_OK)
		rc = too_big((uint64_t)n_ctx * n * 4, "the history", err);
	if (rc == Q42_OK)
		rc = too_big((uint64_t)n_tok * n * 12, "the input rows", err);
	if (rc != Q42_OK)
		return rc;
	const uint32_t push[6] = {n_tok, n, l, pos0, gx, ahead};
	const q42_vk_view b[4] = {bcx, kern, hist, y};
	rc = q42_vk_dispatch(o->vk, o->conv[0], b, 4, push, sizeof push, gx, gy, 1, err);
	if (rc == Q42_OK)
		rc = q42_vk_dispatch(o->vk, o->conv[1], b, 4, push, sizeof push, gx, gy, 1, err);
	return rc;
}

int q42_vk_op_route(q42_vk_ops *o, q42_vk_view logits, q42_vk_view bias, q42_vk_view ids,
		    q42_vk_view w, uint32_t n_tok, uint32_t n_expert, uint32_t k, q42_err *err)
{
	if (n_tok == 0 || n_expert == 0 || k == 0 || k > n_expert || k > ROUTE_MAX_K ||
	    (uint64_t)n_tok * n_expert > UINT32_MAX / 4)
		return q42_err_set(err, Q42_EARG, "vulkan route: bad shape (tokens %u, experts %u, k %u, "
				   "at most %u)", n_tok, n_expert, k, ROUTE_MAX_K);
	const uint32_t push[4] = {n_tok, n_expert, k, bias.buf != NULL};
	/* without bias the binding still needs a buffer; the shader never reads it */
	const q42_vk_view b[4] = {logits, bias.buf != NULL ? bias : logits, ids, w};
	return q42_vk_dispatch(o->vk, o->route, b, 4, push, sizeof push,
			       (n_tok + WG_ROUTE - 1) / WG_ROUTE, 1, 1, err);
}

int q42_vk_op_matmul_id(q42_vk_ops *o, uint32_t dtype, q42_vk_view w, uint64_t row_bytes,
			uint64_t expert_bytes, uint32_t n_in, uint32_t n_out, q42_vk_view ids,
			q42_vk_view x, uint32_t x_div, uint32_t n_pair, q42_vk_view y,
			uint32_t y_stride, q42_err *err)
{
	const int slot = type_slot(dtype);
	uint64_t need = 0;
	if (slot < 0)
		return q42_err_set(err, Q42_EUNSUPPORTED, "vulkan matmul_id: no kernel for type %u", dtype);
	if (n_in == 0 || n_out == 0 || n_pair == 0 || x_div == 0 || y_stride < n_out ||
	    !q42_dtype_nbytes(dtype, n_in, n_in, &need) || row_bytes < need ||
	    row_bytes % 2 != 0 || (dtype == Q42_DTYPE_F32 && row_bytes % 4 != 0) ||
	    expert_bytes < row_bytes * n_out || expert_bytes % 2 != 0)
		return q42_err_set(err, Q42_EARG, "vulkan matmul_id: bad shape (n_in %u, n_out %u, pairs "
				   "%u, row_bytes %llu, expert_bytes %llu)", n_in, n_out, n_pair,
				   (unsigned long long)row_bytes, (unsigned long long)expert_bytes);
	/* the shader adds expert offsets in 32 bits: the whole stack must fit */
	int rc = too_big(w.size != 0 ? w.size : q42_vk_buf_size(w.buf), "the experts' matrices", err);
	if (rc == Q42_OK)
		rc = too_big((uint64_t)(n_pair / x_div + 1) * n_in * 4, "the activations", err);
	if (rc == Q42_OK)
		rc = too_big((uint64_t)n_pair * y_stride * 4, "the output", err);
	uint32_t gx, gy;
	if (rc == Q42_OK)
		rc = grid((uint64_t)n_out, MV_ROWS, &gx, &gy, err);
	if (rc != Q42_OK)
		return rc;
	/* a dispatch's z holds at most MAX_GROUPS pairs */
	const q42_vk_view b[4] = {w, x, y, ids};
	for (uint32_t p0 = 0; p0 < n_pair && rc == Q42_OK; p0 += MAX_GROUPS) {
		const uint32_t push[9] = {(uint32_t)row_bytes, n_in, n_out, n_pair, y_stride, gx,
					  (uint32_t)expert_bytes, x_div, p0};
		rc = q42_vk_dispatch(o->vk, o->mid[slot], b, 4, push, sizeof push, gx, gy,
				     n_pair - p0 < MAX_GROUPS ? n_pair - p0 : MAX_GROUPS, err);
	}
	return rc;
}

int q42_vk_op_moe_sum(q42_vk_ops *o, q42_vk_view y, q42_vk_view w, q42_vk_view x, uint32_t n,
		      uint32_t n_tok, uint32_t k, q42_err *err)
{
	if (n == 0 || n_tok == 0 || k == 0)
		return q42_err_set(err, Q42_EARG, "vulkan moe_sum: bad shape (n %u, tokens %u, k %u)", n,
				   n_tok, k);
	uint32_t gx, gy;
	int rc = grid((uint64_t)n * n_tok, WG_ELT, &gx, &gy, err);
	if (rc == Q42_OK)
		rc = too_big((uint64_t)n * n_tok * k * 4, "the experts' outputs", err);
	if (rc != Q42_OK)
		return rc;
	const uint32_t push[4] = {n, n_tok, k, gx};
	const q42_vk_view b[3] = {y, w, x};
	return q42_vk_dispatch(o->vk, o->moe_sum, b, 3, push, sizeof push, gx, gy, 1, err);
}

int q42_vk_op_add(q42_vk_ops *o, q42_vk_view a, q42_vk_view b_, q42_vk_view y, uint32_t n,
		  uint32_t n_b, q42_err *err)
{
	if (n_b == 0 || n_b > n)
		return q42_err_set(err, Q42_EARG, "vulkan add: bad shape (n %u, n_b %u)", n, n_b);
	uint32_t gx, gy;
	int rc = grid(n, WG_ELT, &gx, &gy, err);
	if (rc != Q42_OK)
		return rc;
	const uint32_t push[3] = {n, n_b, gx};
	const q42_vk_view b[3] = {a, b_, y};
	return q42_vk_dispatch(o->vk, o->add, b, 3, push, sizeof push, gx, gy, 1, err);
}

int q42_vk_op_get_rows(q42_vk_ops *o, uint32_t dtype, q42_vk_view table, uint64_t row_bytes,
		       q42_vk_view ids, uint32_t n_tok, uint32_t n, q42_vk_view y, q42_err *err)
{
	const int slot = type_slot(dtype);
	uint64_t need = 0;
	if (slot < 0)
		return q42_err_set(err, Q42_EUNSUPPORTED, "vulkan get_rows: no kernel for type %u", dtype);
	if (n == 0 || n_tok == 0 || n_tok > MAX_GROUPS || !q42_dtype_nbytes(dtype, n, n, &need) ||
	    row_bytes < need || row_bytes % 2 != 0 || (dtype == Q42_DTYPE_F32 && row_bytes % 4 != 0))
		return q42_err_set(err, Q42_EARG, "vulkan get_rows: bad shape (n %u, n_tok %u, row_bytes %llu)",
				   n, n_tok, (unsigned long long)row_bytes);
	const uint32_t push[3] = {(uint32_t)row_bytes, n, n_tok};
	const q42_vk_view b[3] = {table, ids, y};
	const uint32_t units = (n + 31) / 32;
	return q42_vk_dispatch(o->vk, o->rows[slot], b, 3, push, sizeof push,
			       (units + WG_ROWS - 1) / WG_ROWS, n_tok, 1, err);
}

static int kv_one(q42_vk_ops *o, uint32_t f16, q42_vk_view src, q42_vk_view dst, uint32_t n_tok,
		  uint32_t n_kv_heads, uint32_t hd, uint32_t n_ctx, uint32_t pos0, q42_err *err)
{
	uint32_t gx, gy;
	int rc = grid((uint64_t)n_tok * n_kv_heads * (f16 ? hd / 2 : hd), WG_ELT, &gx, &gy, err);
	if (rc != Q42_OK)
		return rc;
	const uint32_t push[6] = {n_tok, n_kv_heads, hd, n_ctx, pos0, gx};
	const q42_vk_view b[2] = {src, dst};
	return q42_vk_dispatch(o->vk, o->kv[f16], b, 2, push, sizeof push, gx, gy, 1, err);
}

int q42_vk_op_kv_store(q42_vk_ops *o, uint32_t kv_dtype, q42_vk_view k, q42_vk_view v,
		       q42_vk_view kc, q42_vk_view vc, uint32_t n_tok, uint32_t n_kv_heads,
		       uint32_t hd_k, uint32_t hd_v, uint32_t n_ctx, uint32_t pos0, q42_err *err)
{
	if (kv_dtype != Q42_DTYPE_F32 && kv_dtype != Q42_DTYPE_F16)
		return q42_err_set(err, Q42_EUNSUPPORTED, "vulkan kv_store: cache type %u is not f32 or f16",
				   kv_dtype);
	const uint32_t f16 = kv_dtype == Q42_DTYPE_F16;
	if (n_tok == 0 || n_kv_heads == 0 || hd_k == 0 || hd_v == 0 || pos0 > n_ctx ||
	    n_tok > n_ctx - pos0 || (f16 && (hd_k % 2 != 0 || hd_v % 2 != 0)))
		return q42_err_set(err, Q42_EARG, "vulkan kv_store: bad shape (tokens %u at %u of %u, head "
				   "dims %u/%u)", n_tok, pos0, n_ctx, hd_k, hd_v);
	int rc = kv_one(o, f16, k, kc, n_tok, n_kv_heads, hd_k, n_ctx, pos0, err);
	if (rc == Q42_OK)
		rc = kv_one(o, f16, v, vc, n_tok, n_kv_heads, hd_v, n_ctx, pos0, err);
	return rc;
}

int q42_vk_op_attention(q42_vk_ops *o, uint32_t kv_dtype, q42_vk_view q, q42_vk_view kc,
			q42_vk_view vc, q42_vk_view out, uint32_t n_tok, uint32_t n_heads,
			uint32_t n_kv_heads, uint32_t hd_k, uint32_t hd_v, uint32_t n_ctx,
			uint32_t pos0, float scale, uint32_t n_swa, bool causal, bool swa_symmetric,
			q42_err *err)
{
	if (kv_dtype != Q42_DTYPE_F32 && kv_dtype != Q42_DTYPE_F16)
		return q42_err_set(err, Q42_EUNSUPPORTED, "vulkan attention: cache type %u is not f32 or f16",
				   kv_dtype);
	if (n_tok == 0 || n_tok > MAX_GROUPS || n_heads == 0 || n_heads > MAX_GROUPS ||
	    n_kv_heads == 0 || n_heads % n_kv_heads != 0 || hd_k == 0 || hd_v == 0 ||
	    hd_k > ATT_MAX_HD || hd_v > ATT_MAX_HD || pos0 > n_ctx || n_tok > n_ctx - pos0)
		return q42_err_set(err, Q42_EARG, "vulkan attention: bad shape (tokens %u at %u of %u, "
				   "heads %u/%u, head dims %u/%u, at most %u)", n_tok, pos0, n_ctx,
				   n_heads, n_kv_heads, hd_k, hd_v, ATT_MAX_HD);
	struct {
		uint32_t n_tok, n_heads, n_kv_heads, hd_k, hd_v, n_ctx, pos0;
		float scale;
		uint32_t n_swa, causal, sym;
	} push = {n_tok, n_heads, n_kv_heads, hd_k, hd_v, n_ctx, pos0, scale, n_swa, causal,
		  swa_symmetric};
	const q42_vk_view b[4] = {q, kc, vc, out};
	return q42_vk_dispatch(o->vk, o->att[kv_dtype == Q42_DTYPE_F16], b, 4, &push, sizeof push,
			       n_heads, n_tok, 1, err);
}

int q42_vk_op_argmax(q42_vk_ops *o, q42_vk_view x, uint32_t n, q42_vk_view out, q42_err *err)
{
	if (n == 0)
		return q42_err_set(err, Q42_EARG, "vulkan argmax: empty input");
	const uint32_t push = n;
	const q42_vk_view b[2] = {x, out};
	return q42_vk_dispatch(o->vk, o->argmax, b, 2, &push, sizeof push, 1, 1, 1, err);
}
