/* q42_kernels_x86.c -- CPU feature checks for the x86 kernel tables, and
 * the AVX2 / AVX-512 F32.F32 dot products.
 *
 * Each function carries its own target attribute, so the build needs no
 * -m flags and the rest of libq42 stays baseline x86-64; nothing here may
 * run before q42_cpu_has_*() said yes. The F32 variants sum in float lanes
 * and differ from the double-precision reference by rounding only (bound
 * in q42_kernels.h). The other types live in q42_kernels_avx2.c and
 * q42_kernels_avx512.c.
 */
#include <stdatomic.h>
#include "kernels/q42_kernels_impl.h"
#include "kernels/x86/q42_x86_target.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>

/* F16C has no __builtin_cpu_supports name in every compiler; CPUID leaf
 * 1, ECX bit 29. Every AVX2 CPU has it. Asked once: the ISA checks run on
 * every kernel-table lookup, and in a virtual machine CPUID traps to the
 * hypervisor (measured: 0.4 % of a decode, 3 % of a load). */
static int has_f16c(void)
{
	static _Atomic int known; /* 0: not asked yet, 1: no, 2: yes */
	int v = atomic_load_explicit(&known, memory_order_relaxed);
	if (v == 0) {
		unsigned a, b, c, d;
		v = __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29)) != 0 ? 2 : 1;
		atomic_store_explicit(&known, v, memory_order_relaxed);
	}
	return v == 2;
}

/* How the one-stream (R16) decode products prefetch. On Intel cores all
 * of them prefetch into L1 and L2 (a Xeon with AMX, smol360 decode, 2
 * threads: without it 35-40 % slower). Elsewhere the heavy ones (Q5_0,
 * Q5_1, Q4_K: the most work per byte) and Q4_0 prefetch into L2 alone,
 * and the light ones (Q8_0, Q4_1, F16) not at all. Measured on AMD Zen 5
 * (EPYC guest, 2 threads, weights on 2 MiB pages):
 * - bench_rows (256 MiB, k=1024, two settings alternating pass by pass):
 *   r16-q5_0 with L2 alone takes 0.82-0.83 of the time it takes with L1
 *   (1 KiB ahead) and L2 (8 KiB), r16-q4_K 0.96; without prefetch r16-q4_K
 *   takes 2.4 times as long, r16-f16 0.75 times. r16-q4_0 without
 *   prefetch reads 0.65-0.73 of a plain read's bytes/s, with L2 alone
 *   0.90-0.96 (3 pairs of runs); r16-q4_1 0.90-0.92 without, 0.87-0.93
 *   with (no gain).
 * - q42run --bench decode, settings alternating token by token: Q4_K_M
 *   0.96-0.97 of the time with L2 alone against L1 and L2, 4 KiB ahead
 *   1-5 % faster than 2, 3, 6 or 8 KiB (Q4_K's own product, 144-byte
 *   blocks, 8 % faster at 8 KiB in bench_rows); F16 0.87-0.94 without
 *   prefetch against L1 and L2.
 * - Whole q42run --bench --tg 128 runs alternating, 10 pairs, median of the
 *   pairs' tok/s ratios: Q4_K_M with L2 alone 1.048 (0.96-1.12) of the
 *   rate with L1 and L2; Q8_0 with L2 alone (4 KiB) 0.876 (0.85-1.14) of
 *   the rate without prefetch, although alternating token by token had
 *   it 5-13 % faster. Runs are what users get, so the light kinds stay
 *   without. Rechecked at 56-59 GB/s, 4 pairs: Q8_0 with L2 alone 93-100
 *   tok/s, without 98-110. smol360 Q4_0 (llamapeer quantize), 4 pairs:
 *   124-128 tok/s without, 142-154 with L2 alone (tg read share
 *   0.67-0.69 -> 0.77-0.82).
 * - The L2 distance at 50-60 GB/s: bench_rows r16-q5_0 reads 0.76-0.79
 *   of a plain read at 2 KiB, 0.85-0.90 at 4, 0.89-0.92 at 8, 0.92-0.98
 *   at 12, 0.87-0.91 at 16 and 24 (3 rounds); yet smol360 Q4_K_M decode,
 *   4 rounds alternating, read 0.78-0.94 of the read pass at 4 KiB,
 *   0.78-0.92 at 12 and 0.79-0.89 at 8: no difference there, so 4 stays.
 * On these cores requests into L1 wait for its few fill buffers and stall
 * the loop that issues them, and the hardware keeps a light stream fed on
 * its own. Asked once, like F16C. */
_Atomic int q42_x86_stream_pf;

int q42_x86_prefetch_ask(void)
{
	int v = atomic_load_explicit(&q42_x86_stream_pf, memory_order_relaxed);
	if (v == 0) {
		unsigned a, b, c, d;
		/* the vendor string is EBX EDX ECX: "Genu" "ineI" "ntel" */
		v = __get_cpuid(0, &a, &b, &c, &d) && b == 0x756e6547u && d == 0x49656e69u && c == 0x6c65746eu
			    ? 2
			    : 1;
		atomic_store_explicit(&q42_x86_stream_pf, v, memory_order_relaxed);
	}
	return v == 2;
}

int q42_cpu_has_avx2(void)
{
	(void)q42_x86_prefetch_ask();
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c();
}

/* The AVX-512 table wants Ice Lake's set: VNNI for the int8 dots, VBMI
 * for vpermb, GFNI for one-instruction nibble splits; older AVX-512 CPUs
 * get the AVX2 table. */
int q42_cpu_has_avx512(void)
{
	__builtin_cpu_init();
	return q42_cpu_has_avx2() && __builtin_cpu_supports("avx512f") &&
	       __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
	       __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vbmi") &&
	       __builtin_cpu_supports("gfni");
}

/* VDPBF16PS (Cooper Lake, Sapphire Rapids, Zen 4): the BF16 products of
 * llama.cpp's arithmetic run on it; other CPUs compute them in scalar. */
int q42_cpu_has_avx512bf16(void)
{
	__builtin_cpu_init();
	return q42_cpu_has_avx512() && __builtin_cpu_supports("avx512bf16");
}

#define AVX2 Q42_TARGET_AVX2_FMA
#define AVX512 Q42_TARGET_AVX512_BW

AVX2 static float hsum8(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

AVX2 void q42_dot_f32_avx2(int64_t n, float *out, const void *w, const void *x)
{
	const float *a = w, *b = x;
	__m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
			 _mm256_setzero_ps()};
	int64_t i = 0;
	for (; i + 32 <= n; i += 32)
		for (int j = 0; j < 4; j++)
			acc[j] = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8 * j),
						 _mm256_loadu_ps(b + i + 8 * j), acc[j]);
	double sum = hsum8(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]),
					 _mm256_add_ps(acc[2], acc[3])));
	for (; i < n; i++)
		sum += (double)(a[i] * b[i]);
	*out = (float)sum;
}

AVX512 void q42_dot_f32_avx512(int64_t n, float *out, const void *w, const void *x)
{
	const float *a = w, *b = x;
	__m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
			 _mm512_setzero_ps()};
	int64_t i = 0;
	for (; i + 64 <= n; i += 64)
		for (int j = 0; j < 4; j++)
			acc[j] = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16 * j),
						 _mm512_loadu_ps(b + i + 16 * j), acc[j]);
	double sum = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]),
							_mm512_add_ps(acc[2], acc[3])));
	for (; i < n; i++)
		sum += (double)(a[i] * b[i]);
	*out = (float)sum;
}

#endif
