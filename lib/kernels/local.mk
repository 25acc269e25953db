# lib/kernels: scalar reference kernels for the ggml tensor types (bit-exact
# with ggml), their AVX2/AVX-512 variants, the float ops of the forward
# pass, and q42_compat (llama.cpp's x86 arithmetic, scalar and SIMD; the
# SIMD forms under x86/, split by concern, with the one spelling of the x86
# target attributes in x86/q42_x86_target.h).
lib_libq42core_la_SOURCES += \
	lib/kernels/q42_half.c lib/kernels/q42_quants.c lib/kernels/q42_dot.c \
	lib/kernels/q42_kernels.c lib/kernels/q42_kernels_x86.c lib/kernels/q42_kernels_avx2.c \
	lib/kernels/q42_kernels_avx512.c lib/kernels/q42_kernels_x86.h lib/kernels/q42_ops.c \
	lib/kernels/q42_kernels_impl.h \
	lib/kernels/q42_compat.c lib/kernels/q42_compat_x86.h lib/kernels/q42_compat_float.h \
	lib/kernels/x86/q42_x86_target.h lib/kernels/x86/q42_x86_internal.h \
	lib/kernels/x86/q42_x86_products_q8.c lib/kernels/x86/q42_x86_products_k.c \
	lib/kernels/x86/q42_x86_products_f16.c lib/kernels/x86/q42_x86_quantize.c \
	lib/kernels/x86/q42_x86_attention.c lib/kernels/x86/q42_x86_rowops.c \
	lib/kernels/q42_amx.c lib/kernels/q42_amx.h \
	lib/kernels/q42_pack.c lib/kernels/q42_pack_x86.c lib/kernels/q42_pack.h
q42kernelsdir = $(includedir)/q42/kernels
q42kernels_HEADERS = lib/kernels/q42_kernels.h lib/kernels/q42_ops.h lib/kernels/q42_compat.h
