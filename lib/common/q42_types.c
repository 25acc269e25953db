/* q42_types.c -- geometry of the ggml tensor types (see q42_types.h).
 *
 * Sizes follow ggml's block structures; the table is the only place a type
 * id becomes a byte count.
 */
#include <strings.h>
#include "common/q42_types.h"
#include "common/q42_ckd.h"

static const q42_dtype_info dtypes[Q42_DTYPE_COUNT_] = {
	[Q42_DTYPE_F32] = {"f32", 1, 4},
	[Q42_DTYPE_F16] = {"f16", 1, 2},
	[Q42_DTYPE_Q4_0] = {"q4_0", 32, 18},
	[Q42_DTYPE_Q4_1] = {"q4_1", 32, 20},
	[Q42_DTYPE_Q5_0] = {"q5_0", 32, 22},
	[Q42_DTYPE_Q5_1] = {"q5_1", 32, 24},
	[Q42_DTYPE_Q8_0] = {"q8_0", 32, 34},
	[Q42_DTYPE_Q8_1] = {"q8_1", 32, 36},
	[Q42_DTYPE_Q2_K] = {"q2_K", 256, 84},
	[Q42_DTYPE_Q3_K] = {"q3_K", 256, 110},
	[Q42_DTYPE_Q4_K] = {"q4_K", 256, 144},
	[Q42_DTYPE_Q5_K] = {"q5_K", 256, 176},
	[Q42_DTYPE_Q6_K] = {"q6_K", 256, 210},
	[Q42_DTYPE_Q8_K] = {"q8_K", 256, 292},
	[Q42_DTYPE_IQ2_XXS] = {"iq2_xxs", 256, 66},
	[Q42_DTYPE_IQ2_XS] = {"iq2_xs", 256, 74},
	[Q42_DTYPE_IQ3_XXS] = {"iq3_xxs", 256, 98},
	[Q42_DTYPE_IQ1_S] = {"iq1_s", 256, 50},
	[Q42_DTYPE_IQ4_NL] = {"iq4_nl", 32, 18},
	[Q42_DTYPE_IQ3_S] = {"iq3_s", 256, 110},
	[Q42_DTYPE_IQ2_S] = {"iq2_s", 256, 82},
	[Q42_DTYPE_IQ4_XS] = {"iq4_xs", 256, 136},
	[Q42_DTYPE_I8] = {"i8", 1, 1},
	[Q42_DTYPE_I16] = {"i16", 1, 2},
	[Q42_DTYPE_I32] = {"i32", 1, 4},
	[Q42_DTYPE_I64] = {"i64", 1, 8},
	[Q42_DTYPE_F64] = {"f64", 1, 8},
	[Q42_DTYPE_IQ1_M] = {"iq1_m", 256, 56},
	[Q42_DTYPE_BF16] = {"bf16", 1, 2},
	[Q42_DTYPE_TQ1_0] = {"tq1_0", 256, 54},
	[Q42_DTYPE_TQ2_0] = {"tq2_0", 256, 66},
	[Q42_DTYPE_MXFP4] = {"mxfp4", 32, 17},
};

const q42_dtype_info *q42_dtype_get(uint32_t id)
{
	if (id >= Q42_DTYPE_COUNT_ || dtypes[id].name == NULL)
		return NULL;
	return &dtypes[id];
}

bool q42_dtype_nbytes(uint32_t id, uint64_t n, uint64_t row_elems, uint64_t *out)
{
	const q42_dtype_info *t = q42_dtype_get(id);
	if (t == NULL || row_elems == 0 || row_elems % t->block_elems != 0 ||
	    n % t->block_elems != 0)
		return false;
	return !q42_mul_overflow(n / t->block_elems, t->block_bytes, out);
}

int q42_dtype_from_name(const char *name)
{
	for (int i = 0; i < Q42_DTYPE_COUNT_; i++)
		if (dtypes[i].name != NULL && strcasecmp(dtypes[i].name, name) == 0)
			return i;
	return -1;
}
