/* q42_llamacpp.h -- "llama.cpp x86" arithmetic: the kernels that make a
 * matrix product round exactly as llama.cpp does on an x86 CPU with
 * AVX-512 and AMX (its libggml-cpu-sapphirerapids build), as opposed to
 * the generic ggml arithmetic of q42_kernels.h.
 *
 * On such a CPU llama.cpp stores every Q4_0, Q4_1, Q8_0, Q4_K, Q5_K, Q6_K,
 * IQ4_XS and F16 weight matrix it can in its AMX buffer (ggml-cpu/amx):
 * integer block sums are exact, but each block is accumulated as one
 * fused multiply-add fma(sumi, d_w * d_x, acc) per output element (Q4_1:
 * then fma(m_w, s_x, acc); libq42 has all of these), and F16
 * matrices multiply f32 activations in 16 FMA lanes (a token embedding
 * that doubles as the output matrix is duplicated, and the copy goes there
 * too). Weights left in the plain CPU buffer (a separate token embedding,
 * shapes the AMX buffer refuses) take ggml's x86 vec_dot instead, and so
 * does every Q5_1 matrix (no AMX or tinyBLAS form): eight float lanes with
 * one fma per block, against activations from ggml's x86 Q8_1 quantizer
 * (Q4_1 in that buffer likewise, without fifth bits); Q3_K, TQ1_0 and
 * TQ2_0 too, in eight integer lanes per 256-element block against Q8_K.
 * Q2_K matrices of a multiple of 8 rows go to llama.cpp's CPU_REPACK
 * buffer (q2_K_8x8), whose gemv and gemm round differently, and so do
 * IQ4_NL matrices (iq4_nl_8x8, one fma per block either way; other IQ4_NL
 * matrices take ggml's x86 vec_dot for one token, llamafile's tinyBLAS
 * for more). Each kernel
 * here is plain scalar C (explicit fmaf, never contraction) computing one
 * output element in that order; the weights keep their GGUF layout (no
 * repacking).
 * Never used unless the engine asks for the llama.cpp arithmetic.
 */
#ifndef Q42_LLAMACPP_H
#define Q42_LLAMACPP_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_err.h"
#include "kernels/q42_kernels.h"

/* Several products at once: y[t * y_stride + r] = dot(weight row r,
 * activation row t) for r < n_rows, t < n_tok, weight rows w_stride bytes
 * apart, activation rows x_stride bytes apart. Every element rounds exactly
 * as vec_dot of the same kernels computes it, whatever n_rows and n_tok. */
typedef void (*q42_llamacpp_rows_fn)(int64_t n, int64_t n_rows, const void *w, uint64_t w_stride,
				   int64_t n_tok, const void *x, uint64_t x_stride, float *y,
				   uint64_t y_stride);

/* One product's kernels: *out = dot(weight row, activation row), where the
 * activation row was made from f32 by quantize (NULL: the f32 row itself,
 * vec_dot_type Q42_DTYPE_F32). */
typedef struct q42_llamacpp_kernels {
	void (*vec_dot)(int64_t n, float *out, const void *w, const void *x);
	q42_llamacpp_rows_fn rows; /* the same products, many rows and tokens per call */
	void (*quantize)(const float *src, void *dst, int64_t n);
	uint32_t vec_dot_type;
	const char *name; /* e.g. "amx-q4_0", for messages and records */
} q42_llamacpp_kernels;

/* Where llama.cpp keeps a weight matrix: Q42_LLAMACPP_MATMUL for a matrix
 * only multiplied (it goes to the AMX buffer when its shape allows),
 * Q42_LLAMACPP_CPU for one also read by row lookup (the token embedding,
 * tied output), which stays in the plain CPU buffer. */
enum q42_llamacpp_place {
	Q42_LLAMACPP_MATMUL = 0,
	Q42_LLAMACPP_CPU = 1,
};

/* The llama.cpp x86 kernels for a [n_in, n_out] weight of dtype placed as
 * place; false when libq42 has none for that case (the caller then keeps
 * the generic ggml kernels). AMX is chosen as llama.cpp's supports_op
 * does: n_out a multiple of 32 and n_in of the type's alignment (32 for
 * Q4_0/Q8_0, 256 for k-quants, 16 for F16). */
Q42_API bool q42_llamacpp_select(uint32_t dtype, int64_t n_out, int64_t n_in,
			       enum q42_llamacpp_place place, q42_llamacpp_kernels *out);
/* The same with the instruction set chosen: Q42_ISA_SCALAR gives the
 * scalar functions below (the definition), Q42_ISA_AVX2 / Q42_ISA_AVX512
 * their SIMD versions (kernels/x86/q42_x86_*.c), bit-identical to them;
 * an ISA this CPU lacks falls back to the best one it has, and
 * q42_llamacpp_select uses Q42_ISA_BEST. */
Q42_API bool q42_llamacpp_select_isa(uint32_t dtype, int64_t n_out, int64_t n_in,
				   enum q42_llamacpp_place place, enum q42_isa isa,
				   q42_llamacpp_kernels *out);

/* Which llama.cpp CPU variant's rounding to follow. llama.cpp loads one
 * libggml-cpu-<variant>.so by the CPU's features; the variants differ in
 * which buffer (AMX, CPU_REPACK, plain) a matrix goes to and so in how a
 * product rounds. q42_llamacpp_select and _select_isa follow
 * sapphirerapids (AVX-512 with AMX). zen4 is AVX-512 without AMX, as
 * llama.cpp runs on AMD Zen 4 and Zen 5: Q8_0, Q4_1, Q5_K, Q6_K in the
 * plain CPU buffer (ggml's x86 vec_dot), Q4_0 and Q4_K in CPU_REPACK;
 * libq42 reproduces all of these except IQ4_XS, Q4_0 / Q4_K matrices whose
 * rows are not a multiple of 8, and F16 passes of several tokens. Any
 * variant runs on any CPU (the definitions are scalar C, its SIMD forms
 * where libq42 has them). */
enum q42_llamacpp_variant {
	Q42_LLAMACPP_SAPPHIRERAPIDS = 0,
	Q42_LLAMACPP_ZEN4 = 1,
	/* AVX2 without AVX-512 (llama.cpp's haswell build): zen4's quantized
	 * products but Q2_K (no CPU_REPACK form there: ggml's x86 vec_dot);
	 * F32, F16 and BF16 products, attention's products, softmax and
	 * SwiGLU in eight lanes with the AVX2 build's vector exp
	 * (q42_llamacpp_ops_get_variant) */
	Q42_LLAMACPP_HASWELL = 2,
	/* AVX-512 without AVX512-BF16 (llama.cpp's icelake, skylakex,
	 * cascadelake and cannonlake builds): zen4's, but BF16 widened to f32
	 * in 16 lanes instead of VDPBF16PS */
	Q42_LLAMACPP_ICELAKE = 3,
};
/* The variant whose rounding llama.cpp's own CPU variant choice gives on
 * this CPU, where libq42 has it: sapphirerapids with AMX; zen4 on every
 * other CPU with AVX-512 and AVX512-BF16 (llama.cpp's zen4 and cooperlake
 * variants), icelake on those without AVX512-BF16 (its icelake,
 * skylakex, cascadelake and cannonlake variants); haswell on CPUs with
 * AVX2 and no AVX-512; sapphirerapids on CPUs without AVX2. */
Q42_API enum q42_llamacpp_variant q42_llamacpp_variant_detect(void);
Q42_API bool q42_llamacpp_select_variant(enum q42_llamacpp_variant variant, uint32_t dtype, int64_t n_out,
				       int64_t n_in, enum q42_llamacpp_place place, enum q42_isa isa,
				       q42_llamacpp_kernels *out);

/* A weight layout repacked at load (kernels/q42_pack.h describes it): the
 * same bytes per matrix as the file's, rearranged so that sixteen rows'
 * blocks load and scale as one. rows computes exactly what the file
 * layout's product (q42_llamacpp_select_isa) computes, from the packed
 * copy; it takes w at a row that is a multiple of 16, w_stride the file's
 * row size, and n_rows a multiple of 16 or reaching the matrix's last row
 * (the rows past the last full group keep the file's layout). */
typedef struct q42_llamacpp_packed {
	q42_llamacpp_rows_fn rows;
	/* dst (n_out rows of the file's row size, 64-byte aligned for the
	 * fastest loads) from the file's n_out rows at src */
	void (*pack)(void *dst, const void *src, int64_t n_in, int64_t n_out);
	/* row r of a packed matrix of n_out rows back in the file's bytes
	 * (one row's size at dst): what a tied token embedding looks up */
	void (*row)(void *dst, const void *packed, int64_t n_in, int64_t n_out, int64_t r);
	const char *name; /* e.g. "r16-q5_0" */
} q42_llamacpp_packed;

/* The packed form of the product q42_llamacpp_select_isa would choose, where
 * libq42 has one (with the AVX-512 kernels, rows of at most 32768 values:
 * Q5_0, Q5_1, and Q4_0 / Q4_1 / Q8_0 / Q4_K / F16 in the AMX buffer, then
 * on AMX tiles for passes of several tokens where the CPU has them);
 * false otherwise, and the caller keeps the file's layout. */
Q42_API bool q42_llamacpp_select_packed(uint32_t dtype, int64_t n_out, int64_t n_in,
				      enum q42_llamacpp_place place, enum q42_isa isa,
				      q42_llamacpp_packed *out);
/* The same for a variant's products (q42_llamacpp_select_variant). */
Q42_API bool q42_llamacpp_select_packed_variant(enum q42_llamacpp_variant variant, uint32_t dtype,
					      int64_t n_out, int64_t n_in, enum q42_llamacpp_place place,
					      enum q42_isa isa, q42_llamacpp_packed *out);

/* Row products of the generic ggml arithmetic: the same bits as calling
 * q42_kernels_get(dtype, isa)->vec_dot per element, many weight rows and
 * tokens per call (the --arith ggml products, and the fallback for types
 * q42_llamacpp_select has no llama.cpp form of). NULL where libq42 has none
 * for that dtype and ISA: there are Q8_0, Q5_0, Q5_1, Q4_K and Q5_K ones on
 * AVX-512. */
Q42_API q42_llamacpp_rows_fn q42_llamacpp_generic_rows(uint32_t dtype, enum q42_isa isa);

/* ---- flash attention ----------------------------------------------------
 * ggml's CPU flash attention (ggml_compute_forward_flash_attn_ext) as
 * llama.cpp's AVX-512 build computes it over an F16 KV cache (llama.cpp
 * casts an F32 cache to F16 for it) or a Q8_0 one, one query row at a
 * time: an online softmax over the cached positions that never holds more
 * than a tile of scores. It has two forms, and which one a row takes is
 * llama.cpp's choice, not the caller's: over an F16 cache a pass of
 * Q42_FA_TILE tokens or more takes the tiled form when head_dim_v is a
 * multiple of 16, every other pass (and every pass over a Q8_0 cache) the
 * one-at-a-time form. A row's bits do not depend on which rows share its
 * tile, so the caller may group rows as it likes. */
typedef struct q42_llamacpp_fa {
	int64_t dk, dv;   /* head dims of K and V (multiples of 32 for Q8_0) */
	float scale;      /* applied to each score */
	uint32_t kv_type; /* the cache's: Q42_DTYPE_F16 or Q42_DTYPE_Q8_0 */
} q42_llamacpp_fa;

/* The one-at-a-time form (ggml's one_chunk): n_q queries sharing one kv
 * head, each in the cache's type (rows of dk, q_stride bytes apart: f16,
 * or Q8_0 from q42_llamacpp_quantize_q8_0), against n positions in order,
 * K rows k_stride and V rows v_stride bytes apart. Per query: the score is
 * the vec_dot of the K row and the query (ggml_vec_dot_f16, or
 * q42_llamacpp_dot_q8_0_cpu), scaled; a new maximum rescales the
 * accumulator by expf of the change, otherwise the weight is expf(score -
 * max); the V row is added with that weight, one fma per element, into an
 * f16 accumulator rounded at every step (F16), or into an f32 one after
 * the row's dequantisation (Q8_0). m, s: each query's running max and sum
 * (start -inf and 0); acc: its accumulator (dv values, acc_stride bytes
 * apart; start zero). A masked position is one not passed: ggml skips
 * it. */
typedef void (*q42_llamacpp_fa_one_fn)(const q42_llamacpp_fa *fa, int64_t n_q, const void *q, uint64_t q_stride,
				     const uint8_t *k, uint64_t k_stride, const uint8_t *v, uint64_t v_stride,
				     int64_t n, float *m, float *s, void *acc, uint64_t acc_stride);
Q42_API void q42_llamacpp_fa_one(const q42_llamacpp_fa *fa, int64_t n_q, const void *q, uint64_t q_stride,
			       const uint8_t *k, uint64_t k_stride, const uint8_t *v, uint64_t v_stride,
			       int64_t n, float *m, float *s, void *acc, uint64_t acc_stride);
/* llama.cpp's rotation of attention over a quantized cache (its
 * attn_rot, llama-kv-cache.cpp): x (n values, n a power of two) times the
 * orthonormal Walsh-Hadamard matrix, as the CPU backend computes it
 * (ggml_compute_forward_fwht): each value times 1 / sqrtf(n), then the
 * butterflies u + v, u - v over widths 1, 2, 4 .. n / 2. */
Q42_API void q42_llamacpp_fwht(int64_t n, float *x);

/* The output of one query of the one-at-a-time form: acc / s (zero when
 * s is 0), as f32. q42_llamacpp_fa_acc_bytes: the bytes of one query's
 * accumulator. */
Q42_API uint64_t q42_llamacpp_fa_acc_bytes(const q42_llamacpp_fa *fa);
Q42_API void q42_llamacpp_fa_one_end(const q42_llamacpp_fa *fa, float s, const void *acc, float *out);

/* The tiled form: up to Q42_FA_TILE query rows (f32) against one tile of
 * Q42_FA_TILE positions (n_kv of them present, the tile starting at a
 * multiple of Q42_FA_TILE in the cache; f16 K and V rows only). Scores are one
 * fused multiply-add chain over the head dims in f32, scaled; row r sees
 * the positions lo[r] .. hi[r]-1 of the tile, the others -inf. Per row the
 * tile's maximum updates the running max (the accumulator and sum scaled
 * by expf of the change), the weights are ggml_v_expf(score - max) summed
 * in 16-lane chunks into double, and the V rows are added as one fused
 * chain per dimension in f32. The tile's rows are lanes, so the state is
 * kept transposed, in the layout the AVX-512 form works in: m and s of
 * Q42_FA_TILE (start -inf and 0), the accumulator acc[dv][Q42_FA_TILE]
 * (start zero), and the queries qt[dk][Q42_FA_TILE]. work holds
 * q42_llamacpp_fa_tile_work(fa) floats. Rows past n_q are ignored. */
#define Q42_FA_TILE 64
typedef void (*q42_llamacpp_fa_tile_fn)(const q42_llamacpp_fa *fa, int64_t n_q, const float *qt,
				      const uint8_t *k, uint64_t k_stride, const uint8_t *v, uint64_t v_stride,
				      int64_t n_kv, const int32_t *lo, const int32_t *hi, float *m, float *s,
				      float *acc, float *work);
Q42_API void q42_llamacpp_fa_tile(const q42_llamacpp_fa *fa, int64_t n_q, const float *qt, const uint8_t *k,
				uint64_t k_stride, const uint8_t *v, uint64_t v_stride, int64_t n_kv,
				const int32_t *lo, const int32_t *hi, float *m, float *s, float *acc, float *work);
Q42_API uint64_t q42_llamacpp_fa_tile_work(const q42_llamacpp_fa *fa);
/* The two forms as llama.cpp's haswell build computes them: the
 * one-at-a-time form's scores with its eight-lane ggml_vec_dot_f16
 * (q42_llamacpp_hw_dot_f16), the tiled form's weights in 8-lane chunks of
 * its vector exp, each chunk's sum hsum_float_8'd into double
 * (ggml_vec_soft_max_f32 of that build); every other step as above. */
Q42_API void q42_llamacpp_hw_fa_one(const q42_llamacpp_fa *fa, int64_t n_q, const void *q, uint64_t q_stride,
				  const uint8_t *k, uint64_t k_stride, const uint8_t *v, uint64_t v_stride,
				  int64_t n, float *m, float *s, void *acc, uint64_t acc_stride);
Q42_API void q42_llamacpp_hw_fa_tile(const q42_llamacpp_fa *fa, int64_t n_q, const float *qt, const uint8_t *k,
				   uint64_t k_stride, const uint8_t *v, uint64_t v_stride, int64_t n_kv,
				   const int32_t *lo, const int32_t *hi, float *m, float *s, float *acc, float *work);
/* Row r of the tiled form's output: acc[.][r] / s[r] (zero when s[r] is
 * 0) into out (dv f32). */
Q42_API void q42_llamacpp_fa_tile_end(const q42_llamacpp_fa *fa, int64_t r, const float *s, const float *acc,
				    float *out);

/* The row operations of this file for one instruction set (same rules as
 * q42_llamacpp_select_isa: SIMD versions are bit-identical to the scalar
 * functions). Never NULL; the table lives as long as the process. */
/* out[r] = w_r . x for n_rows rows of n f32, w_stride bytes apart. */
typedef void (*q42_llamacpp_dots_fn)(int64_t n, int64_t n_rows, float *out, const void *w,
				   uint64_t w_stride, const void *x);
/* Where the 64-element steps of stepped rows lie (the V cache's layout,
 * q42_forward.c): row r starts at w + r * stride, and its step s (elements
 * 64 s .. 64 s + 63, contiguous) lies (s / per) * chunk + (s % per) * step
 * bytes on from there. Contiguous rows: per 1, chunk 64 elements' bytes. */
typedef struct q42_llamacpp_vlayout {
	uint64_t stride; /* from row r to row r + 1 */
	uint64_t step;   /* from step s to s + 1 within a chunk */
	uint64_t chunk;  /* from chunk c to c + 1 */
	uint32_t per;    /* steps per chunk, at least 1 */
} q42_llamacpp_vlayout;

/* out[r] = w_r . x for n_rows stepped rows of n values; x is contiguous.
 * For contiguous rows these give the bits of the q42_llamacpp_dots_fn
 * forms. */
typedef void (*q42_llamacpp_vdots_fn)(int64_t n, int64_t n_rows, float *out, const void *w,
				    const q42_llamacpp_vlayout *lay, const void *x);
/* The same for n_x vectors x_j, x_stride bytes apart, at once:
 * out[j * out_stride + r] = w_r . x_j, each row read once for all of them,
 * the bits of one q42_llamacpp_vdots_fn call per x_j. */
typedef void (*q42_llamacpp_vdots_multi_fn)(int64_t n, int64_t n_rows, int64_t n_x, float *out, uint64_t out_stride,
					  const void *w, const q42_llamacpp_vlayout *lay, const void *x,
					  uint64_t x_stride);

/* out[c] = q42_llamacpp_dot_f32_vd(n, column c, x) for n_cols columns of
 * n contiguous floats, col_stride floats apart: an encoder's V product
 * (V stored per dimension) over a pass shorter than 64 positions, every
 * output dimension in one call. */
typedef void (*q42_llamacpp_vd_cols_fn)(int64_t n, int64_t n_cols, float *out, const float *w,
				       int64_t col_stride, const float *x);

/* y[r] += scale * q42_llamacpp_dot_f32_vd(n, row r, x) for the n_rows
 * rows of an F32 matrix of n < 64 columns packed by
 * q42_llamacpp_pack_f32_t16 (see there). */
typedef void (*q42_llamacpp_t16_axpy_fn)(int64_t n, int64_t n_rows, const float *wp, const float *x,
					 float scale, float *y);

typedef struct q42_llamacpp_ops {
	enum q42_isa isa; /* the one actually used */
	void (*quantize_q8_0)(const float *src, void *dst, int64_t n);
	void (*quantize_q8_1)(const float *src, void *dst, int64_t n);
	void (*quantize_f16)(const float *src, void *dst, int64_t n);
	void (*dot_f32)(int64_t n, float *out, const void *w, const void *x);
	void (*dot_f32_lanes)(int64_t n, float *out, const void *w, const void *x);
	/* the same two products for n_rows rows w_stride bytes apart, one x:
	 * attention's K.q over positions and V.p over dimensions */
	q42_llamacpp_dots_fn dot_f32_rows;
	q42_llamacpp_dots_fn dot_f32_lanes_rows;
	/* the four of them for an f16 cache: f16 rows times f16 x */
	void (*dot_f16_pad)(int64_t n, float *out, const void *w, const void *x);
	void (*dot_f16_lanes)(int64_t n, float *out, const void *w, const void *x);
	q42_llamacpp_dots_fn dot_f16_pad_rows;
	q42_llamacpp_dots_fn dot_f16_lanes_rows;
	/* and q42_llamacpp_dot_f16 over many rows (unpadded K rows) */
	q42_llamacpp_dots_fn dot_f16_rows;
	/* the four row forms for stepped rows (attention's V.p) */
	q42_llamacpp_vdots_fn dot_f32_vrows;
	q42_llamacpp_vdots_fn dot_f32_lanes_vrows;
	q42_llamacpp_vdots_fn dot_f16_pad_vrows;
	q42_llamacpp_vdots_fn dot_f16_lanes_vrows;
	void (*softmax)(int64_t n, float *y, const float *x);
	void (*swiglu)(int64_t n, float *y, const float *x, const float *g);
	/* q42_llamacpp_geglu in every table (its fmaf is exact in scalar C
	 * too, so every ISA gives the same bits) */
	void (*geglu)(int64_t n, float *y, const float *x, const float *g);
	/* q42_llamacpp_conv_dot in every table, likewise */
	float (*conv_dot)(int64_t n, const float *s, const float *c);
	void (*rope)(int64_t n_rot, float *x, const float *cache, bool neox);
	/* y = a + b elementwise (y may be a or b): exact, so the same in
	 * both arithmetics; the engine's bias and residual adds */
	void (*add)(int64_t n, float *y, const float *a, const float *b);
	/* q42_op_rmsnorm_rows, the same bits (its serial double sums): the
	 * same in both arithmetics; the engine's norms */
	void (*rmsnorm_rows)(int64_t n, int64_t n_rows, float *y, const float *x, const float *w, float eps);
	/* q42_llamacpp_f32_t16_axpy: a LoRA adapter's B for a lone token */
	q42_llamacpp_t16_axpy_fn f32_t16_axpy;
	/* flash attention's two forms (q42_llamacpp_fa above) */
	q42_llamacpp_fa_one_fn fa_one;
	q42_llamacpp_fa_tile_fn fa_tile;
	/* q42_llamacpp_dot_f32_vd over many columns (q42_llamacpp_vd_cols_fn) */
	q42_llamacpp_vd_cols_fn dot_f32_vd_cols;
	/* ggml_vec_dot_f32 and ggml_vec_dot_f16 on a row's true length, and
	 * the softmax of an unpadded row: the scalar definitions (the same
	 * functions a matrix selection hands out) */
	void (*dot_f32_vd)(int64_t n, float *out, const void *w, const void *x);
	void (*dot_f16)(int64_t n, float *out, const void *w, const void *x);
	void (*softmax_unpadded)(int64_t n, float *y, const float *x);
	/* llamafile's tinyBLAS vector width: a row length it takes is a
	 * multiple of this (16 in the AVX-512 builds, 8 in haswell's) */
	uint32_t tb_lanes;
	/* dot_f32_vrows and dot_f32_lanes_vrows for several x at once
	 * (attention's score and V products for a block of a pass's tokens);
	 * NULL where the table has no such form (a call per x gives the same
	 * bits) */
	q42_llamacpp_vdots_multi_fn dot_f32_vrows_multi;
	q42_llamacpp_vdots_multi_fn dot_f32_lanes_vrows_multi;
} q42_llamacpp_ops;
/* The AVX-512 builds' row operations (sapphirerapids and zen4). */
Q42_API const q42_llamacpp_ops *q42_llamacpp_ops_get(enum q42_isa isa);
/* A variant's: haswell's sum in eight lanes (the q42_llamacpp_hw_
 * functions below), its flash attention too. */
Q42_API const q42_llamacpp_ops *q42_llamacpp_ops_get_variant(enum q42_llamacpp_variant variant,
							     enum q42_isa isa);

/* ---- the haswell build's float operations (AVX2, eight lanes) ----------
 * The scalar definitions of q42_llamacpp_ops_get_variant's haswell table,
 * each the AVX-512 function of the same name with eight-lane sums:
 * ggml_vec_dot_f32 / _f16 in four 8-lane accumulators over 32-element
 * steps (GGML_F32x8_REDUCE: halves added, two hadds), tinyBLAS<8> in
 * eight lanes (hsum_float_8's order), BF16 widened to f32 (no
 * VDPBF16PS), softmax and SwiGLU in 8-lane chunks with the AVX2 build's
 * ggml_v_expf. */
Q42_API void q42_llamacpp_hw_dot_f32(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_hw_dot_f32_lanes(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_hw_dot_f16_pad(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_hw_dot_f16_lanes(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_hw_dot_f16(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_hw_dot_f32_vd(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_hw_dot_bf16(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_hw_dot_bf16_tb(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_hw_softmax(int64_t n, float *y, const float *x);
Q42_API void q42_llamacpp_hw_softmax_unpadded(int64_t n, float *y, const float *x);
Q42_API void q42_llamacpp_hw_swiglu(int64_t n, float *y, const float *x, const float *g);
/* Q2_K against Q8_K in the plain CPU buffer (haswell has no CPU_REPACK
 * form of it): ggml's x86 vec_dot, per super-block fma(-d_x * dmin_w,
 * min_2l bsum_2l + min_2l+1 bsum_2l+1, lane l), then fma(d_x * d_w,
 * lane l's scaled sums of elements 32c + 4l .. 32c + 4l + 3, lane l);
 * hsum_float_8 at the end. */
Q42_API void q42_llamacpp_dot_q2_k_cpu(int64_t n, float *out, const void *w, const void *x);

/* Activation quantizer of llama.cpp's x86 build for Q8_0
 * (quantize_row_q8_0 with AVX): scale 127/amax, round half to even. */
Q42_API void q42_llamacpp_quantize_q8_0(const float *src, void *dst, int64_t n);
/* Its Q8_1 quantizer (quantize_row_q8_1, AVX2): the same quants and d,
 * and s = d * (sum of the quants) with d unrounded, then to f16. */
Q42_API void q42_llamacpp_quantize_q8_1(const float *src, void *dst, int64_t n);
/* f32 -> f16 row, round to nearest even (the F16C conversion). */
Q42_API void q42_llamacpp_quantize_f16(const float *src, void *dst, int64_t n);

/* AMX / AVX-512-VNNI block products (x: Q8_0 from q42_llamacpp_quantize_q8_0,
 * or Q8_K from the reference quantizer for k-quants). */
Q42_API void q42_llamacpp_dot_q4_0(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_dot_q8_0(int64_t n, float *out, const void *w, const void *x);
/* Q4_1 against Q8_1 from q42_llamacpp_quantize_q8_1 (AMX buffer): per
 * block fma(sumi, d_w * d_x, acc), then fma(m_w, s_x, acc). */
Q42_API void q42_llamacpp_dot_q4_1(int64_t n, float *out, const void *w, const void *x);
/* Q4_1 in the plain CPU buffer (a token embedding): ggml's x86 vec_dot,
 * the order of q42_llamacpp_dot_q5_1 without fifth bits. */
Q42_API void q42_llamacpp_dot_q4_1_cpu(int64_t n, float *out, const void *w, const void *x);
/* Q5_1 against Q8_1 from q42_llamacpp_quantize_q8_1, as ggml's x86 vec_dot
 * (llama.cpp keeps Q5_1 in the plain CPU buffer). */
Q42_API void q42_llamacpp_dot_q5_1(int64_t n, float *out, const void *w, const void *x);
/* Q5_0 against Q8_0 from q42_llamacpp_quantize_q8_0, as ggml's x86 vec_dot
 * (one token) and llamafile's tinyBLAS (several), which round alike: the
 * order of q42_llamacpp_dot_q5_1 with Q5_0's -16 offset and no min. */
Q42_API void q42_llamacpp_dot_q5_0(int64_t n, float *out, const void *w, const void *x);
/* TQ1_0 / TQ2_0 against Q8_K from the reference quantizer, as ggml's x86
 * vec_dot (the only form llama.cpp has): eight int32 lanes per
 * super-block, one fma per lane and super-block, hsum_float_8. */
Q42_API void q42_llamacpp_dot_tq1_0(int64_t n, float *out, const void *w, const void *x);
/* Q3_K against Q8_K from the reference quantizer, as ggml's x86 vec_dot
 * (no AMX or repacked form): eight int32 lanes per super-block (scaled
 * four-element sums), one fma per lane and super-block, hsum_float_8. */
Q42_API void q42_llamacpp_dot_q3_k(int64_t n, float *out, const void *w, const void *x);
/* Q2_K against Q8_K from the reference quantizer, as llama.cpp's
 * CPU_REPACK q2_K_8x8 kernels (a matrix of a multiple of 8 rows on an
 * AVX-512 CPU): per output fma(isum, d_w * d_x, acc) and fma(mins,
 * dmin_w * d_x, accm), then acc - accm; per super-block for one token
 * (gemv, this function), per 128-element half for the tokens of a pass
 * that fall in whole groups of four (gemm, _x4). The rows function of
 * its q42_llamacpp_kernels applies that split, so a prompt token's bits
 * depend on its place in the pass, as in llama.cpp. */
Q42_API void q42_llamacpp_dot_q2_k(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_dot_q2_k_x4(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_dot_tq2_0(int64_t n, float *out, const void *w, const void *x);
/* IQ4_NL against Q8_0 from q42_llamacpp_quantize_q8_0. In llama.cpp's
 * CPU_REPACK buffer (iq4_nl_8x8: a matrix of a multiple of 8 rows on an
 * AVX2 CPU), gemv and gemm alike: fma(sumi, d_w * d_x, acc) per block.
 * In the plain CPU buffer, for a pass of one token, ggml's x86 vec_dot
 * (_cpu): eight float lanes (four-element sums) in two accumulators, even
 * blocks in one and odd in the other, one fma per block and lane, the
 * accumulators added and reduced as hsum_float_8, then an odd last block
 * added as fma(d, sumi, sum); for a pass of several, llamafile's tinyBLAS (_tb):
 * the same lanes in one accumulator, every block fused, hsum_float_8.
 * The rows function of its q42_llamacpp_kernels picks by n_tok. */
Q42_API void q42_llamacpp_dot_iq4_nl(int64_t n, float *out, const void *w, const void *x);
/* IQ4_XS against Q8_K from the reference quantizer, as llama.cpp's AMX
 * buffer (VNNI kernel for one token, tiles for more): each super-block's
 * exact sum of sub-block scale (6 bits less 32) times sub-block sum, then
 * fma(isum, d_w * d_x, acc). */
Q42_API void q42_llamacpp_dot_iq4_xs(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_dot_iq4_nl_tb(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_dot_iq4_nl_cpu(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_dot_q4_k(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_dot_q5_k(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_dot_q6_k(int64_t n, float *out, const void *w, const void *x);
/* Where an AVX-512 CPU without AMX (llama.cpp's zen4 variant) rounds
 * differently: Q8_0 in the plain CPU buffer (ggml's x86 vec_dot, tinyBLAS
 * for a pass: eight float lanes, hsum_float_8), Q4_K in the CPU_REPACK
 * buffer (q4_K_8x8: fma chains of the sums and of the mins, subtracted at
 * the end), Q5_K and Q6_K in the plain CPU buffer (ggml's x86 vec_dot:
 * eight lanes of integer sums, one fma per super-block). */
Q42_API void q42_llamacpp_dot_q8_0_cpu(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_dot_q4_k_repack(int64_t n, float *out, const void *w, const void *x);
/* its gemm order, for a pass's tokens in whole groups of four */
Q42_API void q42_llamacpp_dot_q4_k_repack_x4(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_dot_q5_k_cpu(int64_t n, float *out, const void *w, const void *x);
/* The zen4 variant's plain CPU buffer for IQ4_XS (every matrix), and for
 * Q4_0 and Q4_K matrices whose rows are not a multiple of 8 (CPU_REPACK
 * declines them): ggml's x86 vec_dot (Q4_0's also llamafile's tinyBLAS
 * order), eight float lanes, hsum_float_8 (Q4_K's mins in four more).
 * An IQ4_XS matrix of a multiple of 8 rows rounds as
 * q42_llamacpp_dot_iq4_xs for passes of 8 tokens or more (llama.cpp's IQ
 * panel); the selection's rows function picks by the pass. */
Q42_API void q42_llamacpp_dot_iq4_xs_cpu(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_dot_q4_0_cpu(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_dot_q4_k_cpu(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_dot_q6_k_cpu(int64_t n, float *out, const void *w, const void *x);
/* AMX-buffer F16 weight times f32 activations (n a multiple of 16). */
Q42_API void q42_llamacpp_dot_f16_f32(int64_t n, float *out, const void *w, const void *x);
/* ggml_vec_dot_f16 of the AVX-512 build: f16 weight times f16 activations. */
Q42_API void q42_llamacpp_dot_f16(int64_t n, float *out, const void *w, const void *x);

/* BF16 weights (the plain CPU buffer) times bf16 activations, as the
 * AVX-512 BF16 build computes them (VDPBF16PS: subnormals read as zero,
 * each product added with one rounding, subnormal sums flushed):
 * ggml_vec_dot_bf16 (two accumulators, the n % 64 tail in double) and
 * llamafile's tinyBLAS (one accumulator; n a multiple of 32), which
 * llama.cpp takes for a pass of two or more tokens when the matrix has a
 * multiple of 4 rows. */
Q42_API void q42_llamacpp_dot_bf16(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_dot_bf16_tb(int64_t n, float *out, const void *w, const void *x);
/* The same in the AVX-512 builds without AVX512-BF16 (the icelake
 * variant): values widened to f32 (no flushing), ggml_vec_dot_bf16 in two
 * 16-lane accumulators over 32-element steps (elements 0..15 and 16..31;
 * each product exact, so mul then add is one fma), each reduced and added
 * in double, the n % 32 left in double; tinyBLAS<16> (n a multiple of
 * 16) in one accumulator, element k in lane k % 16, reduced. */
Q42_API void q42_llamacpp_dot_bf16_wide(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_dot_bf16_wide_tb(int64_t n, float *out, const void *w, const void *x);

/* Attention with an f32 KV cache. llama.cpp computes K.q with
 * ggml_vec_dot_f32 (q is a permuted, non-contiguous view, so llamafile is
 * skipped) and V.softmax with llamafile's tinyBLAS when the pass has two or
 * more tokens, with ggml_vec_dot_f32 when it has one. Both assume llama.cpp's
 * zero padding of the row to a multiple of 64 (rows of other lengths do
 * not round as llama.cpp does). */
Q42_API void q42_llamacpp_dot_f32(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_dot_f32_lanes(int64_t n, float *out, const void *w, const void *x);
/* ggml_vec_dot_f32 on the row's true length (no padding): K rows whose
 * head_dim is not a multiple of 64, and F32 weight matrices (plain CPU
 * buffer: this for a lone token, q42_llamacpp_dot_f32_lanes, llamafile's
 * tinyBLAS, for a pass of more when the matrix has a multiple of 4 rows of
 * a multiple of 16 values). */
Q42_API void q42_llamacpp_dot_f32_vd(int64_t n, float *out, const void *w, const void *x);
/* The scalar q42_llamacpp_vd_cols_fn: q42_llamacpp_dot_f32_vd per column. */
Q42_API void q42_llamacpp_dot_f32_vd_cols(int64_t n, int64_t n_cols, float *out, const float *w,
					  int64_t col_stride, const float *x);
/* A lone token through an F32 matrix of n < 64 columns (a LoRA
 * adapter's B: rank values a row), whose every element ggml_vec_dot_f32
 * sums as a leftover: the rows in groups of 16, each group column by
 * column (element k of its 16 rows, then k + 1; the last group's missing
 * rows zero), so that the one-token product reads 16 rows' element k as
 * one contiguous vector instead of gathering it. dst holds
 * q42_llamacpp_f32_t16_floats(n, n_rows) floats; w's rows are w_stride
 * bytes apart. */
Q42_API uint64_t q42_llamacpp_f32_t16_floats(int64_t n, int64_t n_rows);
Q42_API void q42_llamacpp_pack_f32_t16(int64_t n, int64_t n_rows, const void *w, uint64_t w_stride,
				       float *dst);
/* Its product, scaled and added: per row, s = 0, s = s + w[k] * x[k]
 * (each rounded, k in order: q42_llamacpp_dot_f32_vd), then
 * y[r] = y[r] + s * scale -- the roundings of ggml_mul_mat, ggml_scale
 * and ggml_add. The scalar definition; q42_llamacpp_ops has the SIMD
 * forms. */
Q42_API void q42_llamacpp_f32_t16_axpy(int64_t n, int64_t n_rows, const float *wp, const float *x,
				       float scale, float *y);
Q42_API void q42_llamacpp_dot_f32_rows(int64_t n, int64_t n_rows, float *out, const void *w,
				     uint64_t w_stride, const void *x);
Q42_API void q42_llamacpp_dot_f32_lanes_rows(int64_t n, int64_t n_rows, float *out, const void *w,
					   uint64_t w_stride, const void *x);

/* Attention with an f16 KV cache. q (and, for V, the softmax row) are
 * rounded to f16 first, as llama.cpp converts them to the cache's
 * vec_dot type. A pass of one token takes ggml_vec_dot_f16 for both
 * products: q42_llamacpp_dot_f16 for K.q (its row, head_dim long, is not
 * padded: elements past the last 64-step are summed in double) and
 * dot_f16_pad for V.p over the zero-padded cache row. A pass of two or
 * more takes llamafile's f16 tinyBLAS for both (dot_f16_lanes), which
 * llama.cpp only uses when the row length is a multiple of 16 and the
 * row count (cache length for K.q, head_dim for V.p) one of 4; otherwise
 * it keeps ggml_vec_dot_f16. */
Q42_API void q42_llamacpp_dot_f16_pad(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_dot_f16_lanes(int64_t n, float *out, const void *w, const void *x);
Q42_API void q42_llamacpp_dot_f16_pad_rows(int64_t n, int64_t n_rows, float *out, const void *w,
					 uint64_t w_stride, const void *x);
Q42_API void q42_llamacpp_dot_f16_lanes_rows(int64_t n, int64_t n_rows, float *out, const void *w,
					   uint64_t w_stride, const void *x);
Q42_API void q42_llamacpp_dot_f16_rows(int64_t n, int64_t n_rows, float *out, const void *w,
				     uint64_t w_stride, const void *x);
/* The four padded and lanes products over stepped rows
 * (q42_llamacpp_vdots_fn). */
Q42_API void q42_llamacpp_dot_f32_vrows(int64_t n, int64_t n_rows, float *out, const void *w,
				      const q42_llamacpp_vlayout *lay, const void *x);
Q42_API void q42_llamacpp_dot_f32_lanes_vrows(int64_t n, int64_t n_rows, float *out, const void *w,
					    const q42_llamacpp_vlayout *lay, const void *x);
Q42_API void q42_llamacpp_dot_f16_pad_vrows(int64_t n, int64_t n_rows, float *out, const void *w,
					  const q42_llamacpp_vlayout *lay, const void *x);
Q42_API void q42_llamacpp_dot_f16_lanes_vrows(int64_t n, int64_t n_rows, float *out, const void *w,
					    const q42_llamacpp_vlayout *lay, const void *x);

/* Row ops of the AVX-512 build (ggml_v_expf instead of expf): softmax of a
 * row llama.cpp pads with -inf to a multiple of 16, and SwiGLU of one row
 * (16-element chunks, the rest scalar). */
Q42_API void q42_llamacpp_softmax(int64_t n, float *y, const float *x);
/* The same on a row of exactly n (no -inf padding: an encoder's
 * attention, which llama.cpp runs without a cache): the n % 16 after the
 * whole chunks with expf, summed one by one. */
Q42_API void q42_llamacpp_softmax_unpadded(int64_t n, float *y, const float *x);
Q42_API void q42_llamacpp_swiglu(int64_t n, float *y, const float *x, const float *g);
/* GeGLU as q42_op_geglu, with the GELU table of llama.cpp's x86 builds:
 * their compiler fuses 1 + 0.044715 x * x into fma(0.044715 x, x, 1)
 * (seen in libggml-cpu-zen4.so's ggml_cpu_init), which changes one f16
 * entry of the 63,488 finite ones (x = -1.99902). The other entries and
 * the lookup are the reference's; no SIMD (ggml has none either). */
Q42_API void q42_llamacpp_geglu(int64_t n, float *y, const float *x, const float *g);

/* ggml's ssm_conv output as llama.cpp's x86 builds compile it (read in
 * libggml-cpu-zen4.so): products of 16, then of 8, are rounded and
 * added to the sum one by one, in order (q42_op_conv_dot's order); the
 * last n % 8 are fused multiply-adds. lfm2's width 3 is three fmas. */
Q42_API float q42_llamacpp_conv_dot(int64_t n, const float *s, const float *c);

/* RoPE of one head as llama.cpp's x86 build computes it: its compiler
 * fuses each rotated pair into fma(x0, c, -(x1*s)) and fma(x0, s, x1*c).
 * cache holds n_rot/2 (cos, sin) pairs; neox pairs element i with
 * i + n_rot/2, the normal mode pairs 2i with 2i+1. */
Q42_API void q42_llamacpp_rope(int64_t n_rot, float *x, const float *cache, bool neox);


#endif
