/* x86/q42_x86_cpu.c -- what this x86 CPU runs: the feature checks the
 * dispatcher asks before it hands out a kernel (AVX2 with FMA and F16C;
 * Ice Lake's AVX-512 set; AVX-512 BF16; whether MXCSR's DAZ takes
 * effect), and whether the one-stream products prefetch into L1 as well
 * (Intel) or not.
 *
 * CPUID answers are cached: the checks run on every table lookup, and in
 * a virtual machine CPUID traps to the hypervisor.
 */
#include "kernels/x86/q42_x86.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#include <stdatomic.h>

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

/* Whether MXCSR's DAZ bit takes effect: a subnormal added to zero reads
 * as zero. The AVX2 form of VDPBF16PS's arithmetic flushes subnormals
 * through it; an emulator may ignore the bit (valgrind does), and there
 * that form would not give VDPBF16PS's bits, so the scalar one runs. */
int q42_cpu_daz_honoured(void)
{
	static _Atomic int known; /* 0: not probed, 1: no, 2: yes */
	int k = atomic_load(&known);
	if (k == 0) {
		const unsigned int csr = _mm_getcsr();
		volatile float sub = 0x1p-140f;
		_mm_setcsr(csr | 0x8040u);
		const float r = _mm_cvtss_f32(_mm_add_ss(_mm_set_ss(sub), _mm_setzero_ps()));
		_mm_setcsr(csr);
		k = r == 0.0f ? 2 : 1;
		atomic_store(&known, k);
	}
	return k == 2;
}

#endif
