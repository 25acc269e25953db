/* q42_pack.c -- weight layouts repacked at load (q42_compat_select_packed):
 * the file's bytes rearranged, never changed, so that a product reads
 * sixteen rows' worth of one block with a few aligned vector loads and
 * applies one scale vector to sixteen rows at once. The arithmetic is the
 * llama.cpp one of the file's layout, bit for bit; only the order in
 * which bytes lie in memory differs. The packers and kernels are in
 * q42_pack_x86.c; this file says which matrices get them.
 */
#include "kernels/q42_compat.h"
#include "kernels/q42_compat_x86.h"
#include "kernels/q42_amx.h"
#include "kernels/q42_kernels_impl.h"
#include "kernels/q42_pack.h"
#include "common/q42_types.h"
#include "common/q42_le.h"

bool q42_compat_select_packed(uint32_t dtype, int64_t n_out, int64_t n_in, enum q42_compat_place place,
			      enum q42_isa isa, q42_compat_packed *out)
{
	q42_compat_kernels ck;
	if (n_out < Q42_R16 || n_in % Q42_QK != 0 || n_in > Q42_QK * Q42_R16_MAX_BLOCKS ||
	    !q42_compat_select_isa(dtype, n_out, n_in, place, isa, &ck))
		return false;
#if defined(__x86_64__) || defined(__i386__)
	/* the packed products stand in for the file layout's AVX-512 (and
	 * AMX) ones of the same arithmetic: Q5_0 in the plain CPU buffer
	 * and Q5_1 in either buffer (llama.cpp has no AMX form of them), Q4_0,
	 * Q4_1, Q8_0, Q4_K and F16 in the AMX one, Q6_K where its products
	 * are the plain AVX-512 ones (no AMX tiles),
	 * with AMX tiles for passes of several tokens where the CPU has them */
	static const struct {
		uint32_t dtype;
		q42_compat_rows_fn file; /* the file layout's product */
		q42_compat_packed packed;
	} forms[] = {
		{Q42_DTYPE_Q5_0, q42_compat_rows_q5_0_avx512,
		 {q42_compat_rows_q5_0_r16_avx512, q42_compat_pack_q5_0_r16_avx512,
		  q42_compat_row_q5_0_r16, "r16-q5_0"}},
		{Q42_DTYPE_Q5_1, q42_compat_rows_q5_1_avx512,
		 {q42_compat_rows_q5_1_r16_avx512, q42_compat_pack_q5_1_r16_avx512,
		  q42_compat_row_q5_1_r16, "r16-q5_1"}},
		{Q42_DTYPE_Q4_0, q42_compat_rows_q4_0_avx512,
		 {q42_compat_rows_q4_0_r16_avx512, q42_compat_pack_q4_0_r16_avx512,
		  q42_compat_row_q4_0_r16, "r16-q4_0"}},
		{Q42_DTYPE_Q4_1, q42_compat_rows_q4_1_avx512,
		 {q42_compat_rows_q4_1_r16_avx512, q42_compat_pack_q4_1_r16_avx512,
		  q42_compat_row_q4_1_r16, "r16-q4_1"}},
		{Q42_DTYPE_Q8_0, q42_compat_rows_q8_0_avx512,
		 {q42_compat_rows_q8_0_r16_avx512, q42_compat_pack_q8_0_r16_avx512,
		  q42_compat_row_q8_0_r16, "r16-q8_0"}},
		{Q42_DTYPE_F16, q42_compat_rows_f16_f32_avx512,
		 {q42_compat_rows_f16_f32_r16_avx512, q42_compat_pack_f16_r16_avx512,
		  q42_compat_row_f16_r16, "r16-f16"}},
		{Q42_DTYPE_Q4_K, q42_compat_rows_q4_k_avx512,
		 {q42_compat_rows_q4_k_r16_avx512, q42_compat_pack_q4_k_r16_avx512,
		  q42_compat_row_q4_k_r16, "r16-q4_K"}},
		{Q42_DTYPE_Q6_K, q42_compat_rows_q6_k_avx512,
		 {q42_compat_rows_q6_k_r16_avx512, q42_compat_pack_q6_k_r16_avx512,
		  q42_compat_row_q6_k_r16, "r16-q6_K"}},
#if defined(Q42_HAVE_AMX)
		{Q42_DTYPE_Q4_0, q42_compat_rows_q4_0_amx,
		 {q42_compat_rows_q4_0_r16_amx, q42_compat_pack_q4_0_r16_avx512,
		  q42_compat_row_q4_0_r16, "amx-r16-q4_0"}},
		{Q42_DTYPE_Q4_1, q42_compat_rows_q4_1_amx,
		 {q42_compat_rows_q4_1_r16_amx, q42_compat_pack_q4_1_r16_avx512,
		  q42_compat_row_q4_1_r16, "amx-r16-q4_1"}},
		{Q42_DTYPE_Q8_0, q42_compat_rows_q8_0_amx,
		 {q42_compat_rows_q8_0_r16_amx, q42_compat_pack_q8_0_r16_avx512,
		  q42_compat_row_q8_0_r16, "amx-r16-q8_0"}},
		{Q42_DTYPE_Q4_K, q42_compat_rows_q4_k_amx,
		 {q42_compat_rows_q4_k_r16_amx, q42_compat_pack_q4_k_r16_avx512,
		  q42_compat_row_q4_k_r16, "amx-r16-q4_K"}},
#endif
	};
	for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
		if (forms[i].dtype == dtype && forms[i].file == ck.rows) {
			*out = forms[i].packed;
			return true;
		}
	return false;
#else
	(void)out;
	return false;
#endif
}
