/* q42_matvec.c -- one tensor times one vector in q42run's rounding (see
 * q42_matvec.h). The kernels are the engine's choice for a weight of that
 * type and shape (q42_weight_choose_product), the activation quantized as
 * that product's; then one vec_dot per row, which is what a pass of one
 * token computes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "engine/q42_matvec.h"
#include "engine/q42_engine_impl.h"
#include "common/q42_ckd.h"
#include "common/q42_types.h"

uint64_t q42_matvec_rows(const q42_source_tensor *t)
{
	const q42_dtype_info *ti = q42_dtype_get(t->dtype);
	if (ti == NULL || t->dims[0] == 0 || t->dims[0] % ti->block_elems != 0)
		return 0;
	return t->n_elems / t->dims[0];
}

int q42_matvec(const q42_source_tensor *t, enum q42_arith arith, enum q42_isa isa, const float *x, uint64_t n,
	       float *y, q42_err *err)
{
	const q42_type_kernels *wk = q42_kernels_get(t->dtype, Q42_ISA_SCALAR);
	const q42_dtype_info *ti = q42_dtype_get(t->dtype);
	const uint64_t rows = q42_matvec_rows(t);
	uint64_t row_bytes = 0, x_bytes = 0;
	if (wk == NULL || wk->vec_dot == NULL || rows == 0 ||
	    !q42_dtype_nbytes(t->dtype, t->dims[0], t->dims[0], &row_bytes))
		return q42_err_set(err, Q42_EUNSUPPORTED, "tensor %.*s: type %s with rows of %llu cannot be multiplied",
				   (int)t->name.len, t->name.p, ti != NULL ? ti->name : "unknown",
				   (unsigned long long)t->dims[0]);
	if (n != t->dims[0])
		return q42_err_set(err, Q42_EARG, "x has %llu values; tensor %.*s has rows of %llu",
				   (unsigned long long)n, (int)t->name.len, t->name.p,
				   (unsigned long long)t->dims[0]);
	for (uint64_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return q42_err_set(err, Q42_EARG, "x[%llu] is %g: expected a finite value",
					   (unsigned long long)i, (double)x[i]);
	if (isa == Q42_ISA_BEST)
		isa = q42_isa_detect();
	/* q42run's choice for a weight of this type and shape */
	q42_weight pw = {.dtype = t->dtype, .k = q42_kernels_get(t->dtype, isa), .n_in = (int64_t)n,
			 .n_out = (int64_t)rows};
	if (pw.k == NULL)
		return q42_err_set(err, Q42_EUNSUPPORTED, "--isa %s: not available on this CPU", q42_isa_name(isa));
	q42_weight_choose_product(&pw, q42_arith_resolve(arith), isa, Q42_LLAMACPP_MATMUL);
	if (!q42_dtype_nbytes(pw.vdt, n, n, &x_bytes))
		return q42_err_set(err, Q42_EUNSUPPORTED, "tensor %.*s: rows of %llu cannot be quantized",
				   (int)t->name.len, t->name.p, (unsigned long long)n);
	void *qx = malloc(x_bytes != 0 ? x_bytes : 1);
	if (qx == NULL)
		return q42_err_set(err, Q42_ENOMEM, "out of memory for x (%llu bytes)", (unsigned long long)x_bytes);
	if (pw.aq != NULL)
		pw.aq(x, qx, (int64_t)n);
	else
		memcpy(qx, x, (size_t)n * sizeof(float));
	/* rows x row_bytes is the tensor's size, which its reader checked */
	for (uint64_t r = 0; r < rows; r++)
		pw.dot((int64_t)n, &y[r], t->data + r * row_bytes, qx);
	free(qx);
	return Q42_OK;
}
