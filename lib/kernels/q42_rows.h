/* q42_rows.h -- several rows per call for a single-row vec_dot of the
 * kernel tables (q42_kernels.h), with every row rounding exactly as that
 * vec_dot rounds it.
 *
 * A vec_dot that adds its block terms one by one is bound by the latency
 * of that chain of adds; running the chains of several weight rows side by
 * side keeps the core busy while each chain keeps its own order. The
 * engine uses these for the matrices that have no llama.cpp row kernel
 * (kernels/q42_compat.h), such as a token embedding that doubles as the
 * output matrix.
 */
#ifndef Q42_ROWS_H
#define Q42_ROWS_H

#include "common/q42_err.h"
#include "kernels/q42_compat.h"

/* The multi-row form of dot (a vec_dot taken from q42_kernels_get), NULL
 * when there is none: y[t * y_stride + r] equals dot(n, w row r, x row t)
 * bit for bit, for any n_rows and n_tok. */
Q42_API q42_compat_rows_fn q42_rows_for(void (*dot)(int64_t n, float *out, const void *w,
						     const void *x));

#endif
