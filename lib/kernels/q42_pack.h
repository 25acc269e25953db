/* q42_pack.h -- internal to lib/kernels: the R16 layouts of Q5_0, Q5_1,
 * Q4_0, Q4_1, Q8_0, Q4_K, Q6_K and F16 weights (x86/q42_x86_pack.c packs and
 * multiplies the quantized ones, x86/q42_x86_amx.c multiplies them on tiles,
 * x86/q42_x86_products_f16.c packs and multiplies F16), shared so that packers and
 * kernels agree on one set of offsets.
 *
 * F16: sixteen rows' 16-element chunks c interleaved: chunk c of the
 * group's row r (its bytes 32 c .. 32 c + 31 in the file) at 512 c + 32 r.
 *
 * Q4_K: sixteen rows' super-blocks j interleaved, 2304 bytes each (16 x
 * 144), at 2304 j: the quants, 32 vectors v = 8 h + l of 64 bytes, vector
 * v holding bytes 4 l .. 4 l + 3 of row r's 32-byte chunk h of qs at 64 v
 * + 4 r (low nibbles: elements 64 h + 4 l .., high: 64 h + 32 + 4 l ..);
 * then at 2048 the twelve scale bytes, byte b of row r at 2048 + 16 b + r;
 * then row r's d at 2240 + 2 r and its dmin at 2272 + 2 r.
 *
 * Q6_K: sixteen rows' super-blocks j interleaved in pairs, as the
 * quantized types below (q42_r16_at with q42_r16_q6_k_shape): a super-
 * block's part is 3360 bytes (16 x 210): 48 vectors of 64 bytes, vector
 * v < 32 holding bytes 4 l .. 4 l + 3 of row r's 32-byte ql chunk c (v =
 * 8 c + l; chunk c is bytes 32 c .. 32 c + 31 of ql) and vector 32 + v,
 * v < 16, bytes 4 l .. 4 l + 3 of row r's qh chunk c (v = 8 c + l), each
 * at 64 v + 4 r; then the sixteen scale bytes (byte s of row r at 16 s +
 * r); then row r's d at 2 r.
 *
 * The quantized types:
 * Sixteen rows' blocks j interleaved, the same bytes per group as the
 * file's layout (16 rows x nb blocks x the block size), so row r0 of a
 * multiple of 16 starts where it started in the file. A block of a group
 * is its quants, then the type's fields in this order:
 *   qs  256  four vectors l = 0..3; vector l holds byte 4l + k of row r's
 *            quants at 64 l + 4 r + k (low nibble: element 4l + k, high:
 *            element 16 + 4l + k); Q8_0: 512, eight vectors l = 0..7
 *            laid out the same way, byte 4l + k being element 4l + k
 *   m    64  Q5_0, Q5_1: eight 64-bit masks v = 0..7 (little-endian); bit
 *            4 r + k of mask v is the fifth bit (qh bit 4 v + k) of row r's
 *            element 4 v + k
 *   d    32  row r's f16 scale at 2 r
 *   mn   32  Q4_1, Q5_1: row r's f16 min at 2 r
 * Blocks go in pairs so that the quant vectors stay 64-byte aligned: the
 * pair (j, j + 1), j even, is qs_j qs_j+1, then each field of j followed
 * by the same field of j + 1 (Q5_0: qs qs m m d d, 704 bytes; Q4_0: qs qs
 * d d, 576; Q4_1: qs qs d d mn mn, 640; Q5_1: qs qs m m d d mn mn, 768;
 * Q8_0: qs qs d d, 1088);
 * a last unpaired block is qs and its fields in order.
 *
 * For every type, rows past the last full group keep the file's layout.
 * Never installed.
 */
#ifndef Q42_PACK_H
#define Q42_PACK_H

#include <stdint.h>

/* Q42_R16_MAX_BLOCKS: the longest rows packed (k = 32768), which bounds
 * the kernels' per-call activation tables */
enum { Q42_R16 = 16, Q42_R16_MAX_BLOCKS = 1024 };

/* Q4_K: offsets in a group's super-block, and its size */
enum { Q42_R16_K4_SC = 2048, Q42_R16_K4_D = 2240, Q42_R16_K4_DM = 2272, Q42_R16_K4_BLOCK = 2304 };

/* The fields after qs, in order; the byte size of each (0: absent). */
enum q42_r16_field { Q42_R16_F_M, Q42_R16_F_D, Q42_R16_F_MN, Q42_R16_NF };

typedef struct q42_r16_shape {
	uint32_t qs; /* quant bytes of sixteen rows: 256, Q8_0 512 */
	uint32_t size[Q42_R16_NF];
} q42_r16_shape;

static inline q42_r16_shape q42_r16_shape_of(int bits8, int has_m, int has_mn)
{
	q42_r16_shape s = {bits8 ? 512u : 256u, {has_m ? 64u : 0u, 32u, has_mn ? 32u : 0u}};
	return s;
}

/* Q6_K: the quants, then the scales (field 0) and d (field 1) */
static inline q42_r16_shape q42_r16_q6_k_shape(void)
{
	q42_r16_shape s = {3072u, {256u, 32u, 0u}};
	return s;
}

/* Bytes of one block of a group: qs and the fields. */
static inline uint64_t q42_r16_block(q42_r16_shape s)
{
	return (uint64_t)s.qs + s.size[0] + s.size[1] + s.size[2];
}

/* Byte offset within a group of nb blocks of block j's quants (f < 0) or
 * of its field f. */
static inline uint64_t q42_r16_at(q42_r16_shape s, int64_t nb, int64_t j, int f)
{
	const uint64_t base = (uint64_t)(j / 2) * 2 * q42_r16_block(s);
	const uint64_t odd = (uint64_t)(j % 2);
	const uint64_t pairs = j % 2 == 0 && j + 1 == nb ? 1 : 2; /* blocks in this pair */
	uint64_t o = base + pairs * s.qs;
	if (f < 0)
		return base + odd * s.qs;
	for (int i = 0; i < f; i++)
		o += pairs * s.size[i];
	return o + odd * s.size[f];
}

#endif
