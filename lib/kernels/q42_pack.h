/* q42_pack.h -- internal to lib/kernels: the R16 layout of Q5_0 weights
 * (q42_pack.c packs it, q42_pack_x86.c multiplies it), shared so that the
 * packer and the kernel agree on one set of offsets.
 *
 * Sixteen rows' blocks j interleaved, the same bytes per group as the
 * file's layout (16 rows x nb blocks x 22), so row r0 of a multiple of 16
 * starts where it started in the file. A block of a group is 352 bytes:
 *   qs  256  four vectors l = 0..3; vector l holds byte 4l + k of row r's
 *            quants at 64 l + 4 r + k (low nibble: element 4l + k, high:
 *            element 16 + 4l + k)
 *   m    64  eight 64-bit masks v = 0..7 (little-endian); bit 4 r + k of
 *            mask v is the fifth bit (qh bit 4 v + k) of row r's element
 *            4 v + k
 *   d    32  row r's f16 scale at 2 r
 * Blocks go in pairs so that the quant vectors stay 64-byte aligned: the
 * pair (j, j + 1), j even, is qs_j qs_j+1 m_j m_j+1 d_j d_j+1 (704 bytes);
 * a last unpaired block is qs m d. Rows past the last full group keep the
 * file's layout. Never installed.
 */
#ifndef Q42_PACK_H
#define Q42_PACK_H

#include <stdint.h>

/* Q42_R16_MAX_BLOCKS: the longest rows packed (k = 32768), which bounds
 * the kernel's per-call activation tables */
enum { Q42_R16 = 16, Q42_R16_BLOCK = 352, Q42_R16_PAIR = 704, Q42_R16_MAX_BLOCKS = 1024 };

/* Byte offsets of block j's fields within a group of nb blocks. */
static inline void q42_r16_offsets(int64_t nb, int64_t j, uint64_t *qs, uint64_t *m, uint64_t *d)
{
	const uint64_t base = (uint64_t)(j / 2) * Q42_R16_PAIR;
	if (j % 2 == 0 && j + 1 == nb) {
		*qs = base;
		*m = base + 256;
		*d = base + 320;
	} else {
		const uint64_t odd = (uint64_t)(j % 2);
		*qs = base + 256 * odd;
		*m = base + 512 + 64 * odd;
		*d = base + 640 + 32 * odd;
	}
}

#endif
