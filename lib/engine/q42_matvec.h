/* q42_matvec.h -- one tensor of a model file times one vector, rounded as
 * a chosen arithmetic would round it in q42run: the surface on which a
 * user compares one matrix product against another implementation
 * (p64check --matvec).
 */
#ifndef Q42_MATVEC_H
#define Q42_MATVEC_H

#include <stdint.h>
#include "common/q42_err.h"
#include "formats/q42_source.h"
#include "engine/q42_engine.h"
#include "kernels/q42_kernels.h"

/* Rows of t: its leading dimensions flattened (dims[1] x dims[2] x ...),
 * so a stack of expert matrices is one matrix of all their rows; 0 when
 * t is not a matrix libq42 can multiply. */
Q42_API uint64_t q42_matvec_rows(const q42_source_tensor *t);

/* y[r] = row r of t . x for every row r (q42_matvec_rows(t) values), x of
 * t->dims[0] finite floats, with the products q42run takes for a weight
 * of t's type and shape under arith (Q42_ARITH_AUTO as q42run resolves
 * it; a type without a llama.cpp form there keeps ggml's) at isa, for one
 * token. Q42_EARG when n is not the row length or x holds a NaN or an
 * infinity (the message names the first), Q42_EUNSUPPORTED for a type
 * libq42 cannot multiply, Q42_ENOMEM. */
Q42_API int q42_matvec(const q42_source_tensor *t, enum q42_arith arith, enum q42_isa isa, const float *x,
		       uint64_t n, float *y, q42_err *err);

#endif
