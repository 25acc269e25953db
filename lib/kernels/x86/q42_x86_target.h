/* q42_x86_target.h -- the x86 target attributes of lib/kernels, spelled
 * once. Every SIMD function carries one of these (the build passes no -m
 * flags), so nothing marked here may run before the matching
 * q42_cpu_has_*() said yes. Each name is one exact feature list; the lists
 * are kept as the kernels had them (a function's list decides what the
 * compiler may emit and what may be inlined into it, so merging two lists
 * would change code generation). Internal to lib/kernels, not installed.
 *
 *   Q42_TARGET_AVX2_FMA     avx2, fma               (x86/q42_x86_generic_avx2.c)
 *   Q42_TARGET_AVX2         + f16c                  (the AVX2 kernels)
 *   Q42_TARGET_AVX512_BW    avx2, fma, avx512f/bw   (x86/q42_x86_generic_avx512.c)
 *   Q42_TARGET_AVX512_VNNI  AVX2 + avx512f/bw/vl/vnni
 *   Q42_TARGET_AVX512       + avx512vbmi            (x86/q42_x86_generic_avx512.c)
 *   Q42_TARGET_AVX512_GFNI  + gfni                  (q42_llamacpp, packers)
 *   Q42_TARGET_AVX512_BF16  + gfni, avx512bf16      (BF16 products)
 *   Q42_TARGET_AMX          AVX512 + amx-tile, amx-int8
 *
 * Q42_TARGET_X is the function attribute; Q42_TARGET_X_INLINE the
 * static always-inline form of the same list; Q42_TARGET_X_STR the list.
 */
#ifndef Q42_X86_TARGET_H
#define Q42_X86_TARGET_H

#define Q42_TARGET_AVX2_FMA_STR "avx2,fma"
#define Q42_TARGET_AVX2_STR "avx2,fma,f16c"
#define Q42_TARGET_AVX512_BW_STR "avx2,fma,avx512f,avx512bw"
#define Q42_TARGET_AVX512_VNNI_STR "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni"
#define Q42_TARGET_AVX512_STR "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi"
#define Q42_TARGET_AVX512_GFNI_STR "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi,gfni"
#define Q42_TARGET_AVX512_BF16_STR "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi,gfni,avx512bf16"
#define Q42_TARGET_AMX_STR "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi,amx-tile,amx-int8"

#define Q42_TARGET_AVX2_FMA __attribute__((target(Q42_TARGET_AVX2_FMA_STR)))
#define Q42_TARGET_AVX2 __attribute__((target(Q42_TARGET_AVX2_STR)))
#define Q42_TARGET_AVX512_BW __attribute__((target(Q42_TARGET_AVX512_BW_STR)))
#define Q42_TARGET_AVX512_VNNI __attribute__((target(Q42_TARGET_AVX512_VNNI_STR)))
#define Q42_TARGET_AVX512 __attribute__((target(Q42_TARGET_AVX512_STR)))
#define Q42_TARGET_AVX512_GFNI __attribute__((target(Q42_TARGET_AVX512_GFNI_STR)))
#define Q42_TARGET_AVX512_BF16 __attribute__((target(Q42_TARGET_AVX512_BF16_STR)))
#define Q42_TARGET_AMX __attribute__((target(Q42_TARGET_AMX_STR)))

#define Q42_TARGET_AVX2_INLINE static inline __attribute__((always_inline, target(Q42_TARGET_AVX2_STR)))
#define Q42_TARGET_AVX512_VNNI_INLINE \
	static inline __attribute__((always_inline, target(Q42_TARGET_AVX512_VNNI_STR)))
#define Q42_TARGET_AVX512_INLINE static inline __attribute__((always_inline, target(Q42_TARGET_AVX512_STR)))
#define Q42_TARGET_AVX512_GFNI_INLINE \
	static inline __attribute__((always_inline, target(Q42_TARGET_AVX512_GFNI_STR)))
#define Q42_TARGET_AVX512_BF16_INLINE \
	static inline __attribute__((always_inline, target(Q42_TARGET_AVX512_BF16_STR)))
#define Q42_TARGET_AMX_INLINE static inline __attribute__((always_inline, target(Q42_TARGET_AMX_STR)))

#endif
