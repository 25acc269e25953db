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
#include "kernels/q42_kernels_impl.h"
#include "kernels/q42_pack.h"
#include "formats/q42_types.h"
#include "common/q42_le.h"

bool q42_compat_select_packed(uint32_t dtype, int64_t n_out, int64_t n_in, enum q42_compat_place place,
			      enum q42_isa isa, q42_compat_packed *out)
{
	q42_compat_kernels ck;
	/* the packed product stands in for the plain CPU buffer's Q5_0 one
	 * (llama.cpp has no AMX form of Q5_0), for the AVX-512 kernels only */
	if (dtype != Q42_DTYPE_Q5_0 || n_out < Q42_R16 || n_in % Q42_QK != 0 ||
	    n_in > Q42_QK * Q42_R16_MAX_BLOCKS ||
	    !q42_compat_select_isa(dtype, n_out, n_in, place, isa, &ck))
		return false;
#if defined(__x86_64__) || defined(__i386__)
	if (ck.rows != q42_compat_rows_q5_0_avx512)
		return false;
	out->rows = q42_compat_rows_q5_0_r16_avx512;
	out->pack = q42_compat_pack_q5_0_r16_avx512;
	out->name = "r16-q5_0";
	return true;
#else
	(void)out;
	return false;
#endif
}
