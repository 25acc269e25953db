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
 * hypervisor (docs/perf/loading.md). */
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
 * of them prefetch into L1 and L2 (without it 35-40 % slower).
 * Elsewhere the heavy ones (Q5_0,
 * Q5_1, Q4_K: the most work per byte) and Q4_0 prefetch into L2 alone,
 * and the light ones (Q8_0, Q4_1, F16) not at all: on AMD Zen 5, L2
 * alone streams the heavy kinds faster than L1 and L2, and whole decode
 * runs of the light kinds are faster without prefetch. The L2 distance
 * is 4 KiB; longer ones gained nothing in decode. The measurements
 * (bench_rows and q42run --bench): docs/perf/prefetch.md.
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
