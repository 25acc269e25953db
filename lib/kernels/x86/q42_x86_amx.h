/* x86/q42_x86_amx.h -- internal to lib/kernels: AMX-INT8 versions of the
 * quantized q42_llamacpp row products (Q8_0, Q4_0, Q4_1, Q4_K, Q5_K, Q6_K,
 * Q2_K) and of the
 * generic Q8_0 / Q5_0 / Q5_1 ones, for calls with several tokens (prompt
 * processing).
 *
 * They return the same bits as the scalar definitions in llamacpp/q42_llamacpp.c: a
 * tile product only forms exact integer block sums, the float steps stay
 * the scalar chain. Calls the tiles do not pay for (few tokens, a row tail
 * under 16 rows, no scratch memory) go to the AVX-512 row products. Never
 * call one before q42_amx_usable() said yes. Never installed.
 */
#ifndef Q42_X86_AMX_H
#define Q42_X86_AMX_H

#include <stdbool.h>
#include "kernels/x86/q42_x86.h"

/* Fewest tokens per call for which the tiles beat the AVX-512 kernels. */
#define Q42_AMX_MIN_TOK 4

/* AMX-TILE and AMX-INT8 present, the OS saves tile state, and Linux
 * granted this process tile data (asked once, on the first call). */
bool q42_amx_usable(void);

/* The tile kernels exist where Linux grants tile data: x86-64 Linux. */
#if defined(__x86_64__) && defined(__linux__)
#define Q42_HAVE_AMX 1
void q42_llamacpp_rows_q8_0_amx(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q4_0_amx(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q4_k_amx(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q6_k_amx(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q5_k_amx(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q4_1_amx(Q42_LLAMACPP_ROWS_ARGS);
/* Q4_0 / Q4_1 / Q8_0 / Q4_K weights in the R16 layout (q42_pack.h), the
 * same products */
void q42_llamacpp_rows_q4_0_r16_amx(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q4_1_r16_amx(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q8_0_r16_amx(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q4_k_r16_amx(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_iq4_nl_amx(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_iq4_xs_amx(Q42_LLAMACPP_ROWS_ARGS);
void q42_llamacpp_rows_q2_k_amx(Q42_LLAMACPP_ROWS_ARGS);
/* the generic arithmetic's products (q42_llamacpp_generic_rows) */
void q42_generic_rows_q8_0_amx(Q42_LLAMACPP_ROWS_ARGS);
void q42_generic_rows_q5_0_amx(Q42_LLAMACPP_ROWS_ARGS);
void q42_generic_rows_q5_1_amx(Q42_LLAMACPP_ROWS_ARGS);
#endif

#endif
