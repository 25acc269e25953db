# lib/kernels: the numeric kernels, laid out as ggml-cpu lays out its own.
# ref/ is ggml's generic (scalar) arithmetic, the definition every other
# kernel is tested against; llamacpp/ is the scalar definition of the
# arithmetic llama.cpp's x86 build rounds with, and which of its paths a
# matrix takes; x86/ holds every SIMD form, split by concern, with the one
# spelling of the target attributes (x86/q42_x86_target.h) and the CPU
# checks; q42_dispatch.c is the one file that names an ISA-specific kernel.
lib_libq42core_la_SOURCES += \
	lib/kernels/q42_dispatch.c lib/kernels/q42_kernels_impl.h lib/kernels/q42_pack.h \
	lib/kernels/ref/q42_half.c lib/kernels/ref/q42_quants.c lib/kernels/ref/q42_dot.c \
	lib/kernels/ref/q42_ops.c \
	lib/kernels/llamacpp/q42_llamacpp.c lib/kernels/llamacpp/q42_llamacpp_impl.h \
	lib/kernels/llamacpp/q42_llamacpp_fa.c \
	lib/kernels/llamacpp/q42_llamacpp_float.h lib/kernels/llamacpp/q42_llamacpp_float8.h \
	lib/kernels/x86/q42_x86.h lib/kernels/x86/q42_x86_target.h lib/kernels/x86/q42_x86_cpu.c \
	lib/kernels/x86/q42_x86_generic.h lib/kernels/x86/q42_x86_generic_avx2.c \
	lib/kernels/x86/q42_x86_generic_avx512.c \
	lib/kernels/x86/q42_x86_internal.h lib/kernels/x86/q42_x86_products_q8.c \
	lib/kernels/x86/q42_x86_products_k.c lib/kernels/x86/q42_x86_products_f16.c \
	lib/kernels/x86/q42_x86_quantize.c lib/kernels/x86/q42_x86_attention.c \
	lib/kernels/x86/q42_x86_rowops.c lib/kernels/x86/q42_x86_pack.c lib/kernels/x86/q42_x86_fa.c \
	lib/kernels/x86/q42_x86_amx.c lib/kernels/x86/q42_x86_amx.h
q42kernelsdir = $(includedir)/q42/kernels
q42kernels_HEADERS = lib/kernels/q42_kernels.h lib/kernels/q42_ops.h lib/kernels/q42_llamacpp.h
