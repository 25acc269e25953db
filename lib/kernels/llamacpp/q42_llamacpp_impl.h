/* llamacpp/q42_llamacpp_impl.h -- internal to lib/kernels: the slots of
 * llama.cpp's row products, shared by the scalar definitions
 * (llamacpp/q42_llamacpp.c, which also decides which slot a matrix takes)
 * and the dispatcher (q42_dispatch.c, which fills each slot per ISA).
 * Never installed.
 */
#ifndef Q42_LLAMACPP_IMPL_H
#define Q42_LLAMACPP_IMPL_H

#include "kernels/q42_llamacpp.h"

/* One slot per rounding llama.cpp has for a weight type: its buffer (AMX,
 * plain CPU, CPU_REPACK) and, for F32 and BF16, whether tinyBLAS takes
 * the shape. The order is the dispatcher's table order. */
enum q42_lrows {
	Q42_LROWS_Q4_0, Q42_LROWS_Q8_0, Q42_LROWS_Q4_K, Q42_LROWS_Q6_K, Q42_LROWS_F16_F32, Q42_LROWS_F16,
	Q42_LROWS_Q5_1, Q42_LROWS_Q5_K, Q42_LROWS_Q4_1, Q42_LROWS_Q4_1_CPU, Q42_LROWS_Q5_0, Q42_LROWS_TQ1_0,
	Q42_LROWS_TQ2_0, Q42_LROWS_Q3_K, Q42_LROWS_Q2_K, Q42_LROWS_IQ4_NL, Q42_LROWS_IQ4_XS, Q42_LROWS_BF16,
	Q42_LROWS_BF16_VD, Q42_LROWS_F32, Q42_LROWS_F32_VD,
	/* the zen4 variant's own */
	Q42_LROWS_Q8_0_CPU, Q42_LROWS_Q4_K_REPACK, Q42_LROWS_Q5_K_CPU, Q42_LROWS_Q6_K_CPU, Q42_LROWS_IQ4_XS_CPU,
	Q42_LROWS_Q4_0_CPU, Q42_LROWS_Q4_K_CPU, Q42_LROWS_IQ4_XS_PANEL,
	/* the haswell variant's own */
	Q42_LROWS_Q2_K_CPU, Q42_LROWS_HW_F16, Q42_LROWS_HW_F16_VD, Q42_LROWS_HW_BF16, Q42_LROWS_HW_BF16_VD,
	Q42_LROWS_HW_F32, Q42_LROWS_HW_F32_VD,
	/* zen4's F16 of a shape llamafile takes */
	Q42_LROWS_F16_TB,
	/* icelake's BF16 */
	Q42_LROWS_BF16_WIDE, Q42_LROWS_BF16_WIDE_VD, Q42_LROWS_COUNT
};

/* The smallest pass llama.cpp's IQ panel (ggml-cpu/iqp.cpp) takes: an
 * IQ4_XS matrix of a multiple of 8 rows in the plain CPU buffer is
 * multiplied there, one fma per super-block of its exact sum with d_w *
 * d_x -- the AMX buffer's rounding (q42_llamacpp_dot_iq4_xs) -- by passes
 * of this many tokens or more, by ggml's vec_dot below. */
enum { Q42_LLAMACPP_IQP_MIN_BATCH = 8 };

/* The scalar row products, the definition of each slot
 * (llamacpp/q42_llamacpp.c). */
extern const q42_llamacpp_rows_fn q42_llamacpp_scalar_rows[Q42_LROWS_COUNT];

/* The row product of a slot on the instruction set isa, which must be one
 * q42_isa_usable() returned (q42_dispatch.c); the scalar one where isa has
 * no form of the slot. */
q42_llamacpp_rows_fn q42_llamacpp_rows_for(enum q42_lrows which, enum q42_isa isa);

/* The rest of the haswell float operations
 * (llamacpp/q42_llamacpp_float8.h): the row forms of the products, and
 * the rarer ones compiled with FMA (x86/q42_x86_rowops.c). */
#define Q42_HW_FLOAT_DECLS(S)                                                                            \
	void q42_llamacpp_hw_dot_f32_rows##S(int64_t n, int64_t n_rows, float *out, const void *w,       \
					     uint64_t w_stride, const void *x);                          \
	void q42_llamacpp_hw_dot_f32_lanes_rows##S(int64_t n, int64_t n_rows, float *out, const void *w, \
						   uint64_t w_stride, const void *x);                    \
	void q42_llamacpp_hw_dot_f16_pad_rows##S(int64_t n, int64_t n_rows, float *out, const void *w,   \
						 uint64_t w_stride, const void *x);                      \
	void q42_llamacpp_hw_dot_f16_lanes_rows##S(int64_t n, int64_t n_rows, float *out, const void *w, \
						   uint64_t w_stride, const void *x);                    \
	void q42_llamacpp_hw_dot_f16_rows##S(int64_t n, int64_t n_rows, float *out, const void *w,       \
					     uint64_t w_stride, const void *x);                          \
	void q42_llamacpp_hw_dot_f32_vrows##S(int64_t n, int64_t n_rows, float *out, const void *w,      \
					      const q42_llamacpp_vlayout *lay, const void *x);           \
	void q42_llamacpp_hw_dot_f32_lanes_vrows##S(int64_t n, int64_t n_rows, float *out, const void *w,\
						    const q42_llamacpp_vlayout *lay, const void *x);     \
	void q42_llamacpp_hw_dot_f16_pad_vrows##S(int64_t n, int64_t n_rows, float *out, const void *w,  \
						  const q42_llamacpp_vlayout *lay, const void *x);       \
	void q42_llamacpp_hw_dot_f16_lanes_vrows##S(int64_t n, int64_t n_rows, float *out, const void *w,\
						    const q42_llamacpp_vlayout *lay, const void *x);     \
	void q42_llamacpp_hw_dot_f32_vd_cols##S(int64_t n, int64_t n_cols, float *out, const float *w,   \
						int64_t col_stride, const float *x);                     \
	void q42_llamacpp_hw_f32_t16_axpy##S(int64_t n, int64_t n_rows, const float *wp, const float *x, \
					     float scale, float *y);
Q42_HW_FLOAT_DECLS()
/* the FMA build's (the rest have AVX2 forms) */
void q42_llamacpp_hw_dot_f16_fma(int64_t n, float *out, const void *w, const void *x);
void q42_llamacpp_hw_dot_f32_vd_fma(int64_t n, float *out, const void *w, const void *x);
void q42_llamacpp_hw_dot_f16_rows_fma(int64_t n, int64_t n_rows, float *out, const void *w, uint64_t w_stride,
				      const void *x);
void q42_llamacpp_hw_dot_f32_vd_cols_fma(int64_t n, int64_t n_cols, float *out, const float *w, int64_t col_stride,
					 const float *x);
void q42_llamacpp_hw_f32_t16_axpy_fma(int64_t n, int64_t n_rows, const float *wp, const float *x, float scale,
				      float *y);
void q42_llamacpp_hw_softmax_unpadded_fma(int64_t n, float *y, const float *x);
#undef Q42_HW_FLOAT_DECLS

/* ggml_v_expf and _mm512_reduce_add_ps of the AVX-512 build, one lane
 * (llamacpp/q42_llamacpp_float.h), for the flash attention reference. */
float q42_llamacpp_v_expf(float x);
float q42_llamacpp_reduce16(const float v[16]);
/* and the haswell build's (llamacpp/q42_llamacpp_float8.h) */
float q42_llamacpp_hw_v_expf(float x);
float q42_llamacpp_hsum8(const float v[8]);

#endif
