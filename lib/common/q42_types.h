/* q42_types.h -- the ggml tensor type ids and their block geometry.
 *
 * The ids are ggml's (they appear in GGUF tensor infos and in P64
 * descriptors, where the dtype is authoritative). A type id outside this
 * table is "unknown": it may be listed with its number but never sized or
 * computed on.
 */
#ifndef Q42_TYPES_H
#define Q42_TYPES_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_err.h"

enum q42_dtype {
	Q42_DTYPE_F32 = 0,
	Q42_DTYPE_F16 = 1,
	Q42_DTYPE_Q4_0 = 2,
	Q42_DTYPE_Q4_1 = 3,
	Q42_DTYPE_Q5_0 = 6,
	Q42_DTYPE_Q5_1 = 7,
	Q42_DTYPE_Q8_0 = 8,
	Q42_DTYPE_Q8_1 = 9,
	Q42_DTYPE_Q2_K = 10,
	Q42_DTYPE_Q3_K = 11,
	Q42_DTYPE_Q4_K = 12,
	Q42_DTYPE_Q5_K = 13,
	Q42_DTYPE_Q6_K = 14,
	Q42_DTYPE_Q8_K = 15,
	Q42_DTYPE_IQ2_XXS = 16,
	Q42_DTYPE_IQ2_XS = 17,
	Q42_DTYPE_IQ3_XXS = 18,
	Q42_DTYPE_IQ1_S = 19,
	Q42_DTYPE_IQ4_NL = 20,
	Q42_DTYPE_IQ3_S = 21,
	Q42_DTYPE_IQ2_S = 22,
	Q42_DTYPE_IQ4_XS = 23,
	Q42_DTYPE_I8 = 24,
	Q42_DTYPE_I16 = 25,
	Q42_DTYPE_I32 = 26,
	Q42_DTYPE_I64 = 27,
	Q42_DTYPE_F64 = 28,
	Q42_DTYPE_IQ1_M = 29,
	Q42_DTYPE_BF16 = 30,
	Q42_DTYPE_TQ1_0 = 34,
	Q42_DTYPE_TQ2_0 = 35,
	Q42_DTYPE_MXFP4 = 39,
	Q42_DTYPE_COUNT_ = 40
};

typedef struct q42_dtype_info {
	const char *name;    /* ggml's name, e.g. "q4_K" */
	uint32_t block_elems; /* elements per block (1 for plain types) */
	uint32_t block_bytes; /* bytes per block */
} q42_dtype_info;

/* NULL when id is not a type libq42 knows the geometry of. */
Q42_API const q42_dtype_info *q42_dtype_get(uint32_t id);

/* Bytes of a tensor of n elements whose rows have row_elems elements.
 * Fails (returns false) on an unknown type, a row that is not a whole number
 * of blocks, or overflow. */
Q42_API bool q42_dtype_nbytes(uint32_t id, uint64_t n, uint64_t row_elems, uint64_t *out);

/* Case-insensitive lookup by name ("q8_0", "Q4_K", "f16"); -1 if unknown. */
Q42_API int q42_dtype_from_name(const char *name);

#endif
