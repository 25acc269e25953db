# lib/measure: measuring a model and its kernels: bench (q42run --bench),
# the quality gate (perplexity, KL divergence, KL-base files) and kernel
# certification (q42run --certify; the cases backends share are in
# q42_certify_cases.h, not installed).
lib_libq42core_la_SOURCES += \
	lib/measure/q42_bench.c lib/measure/q42_quality.c lib/measure/q42_certify.c \
	lib/measure/q42_certify_cases.h
q42measuredir = $(includedir)/q42/measure
q42measure_HEADERS = lib/measure/q42_bench.h lib/measure/q42_quality.h lib/measure/q42_certify.h
