# lib/engine: model mount (P64 or GGUF), architecture descriptions, the CPU
# forward pass, thread pool, sampling, the request loop and q42-record; in
# the loop, the Sentinel (rings, rules) and the sieve (grammar, token sets);
# option scoring (choices).
lib_libq42core_la_SOURCES += \
	lib/engine/q42_mount.c lib/engine/q42_arch.c lib/engine/q42_engine.c \
	lib/engine/q42_forward.c lib/engine/q42_pool.c lib/engine/q42_sample.c \
	lib/engine/q42_generate.c lib/engine/q42_record.c lib/engine/q42_utf8.c \
	lib/engine/q42_ring.c lib/engine/q42_sentinel.c lib/engine/q42_grammar.c \
	lib/engine/q42_sieve.c lib/engine/q42_choices.c lib/engine/q42_bench.c \
	lib/engine/q42_engine_impl.h
# the quality gate: perplexity, KL divergence, KL-base files
lib_libq42core_la_SOURCES += lib/engine/q42_quality.c
q42enginedir = $(includedir)/q42/engine
q42engine_HEADERS = lib/engine/q42_mount.h lib/engine/q42_arch.h lib/engine/q42_engine.h \
	lib/engine/q42_pool.h lib/engine/q42_sample.h lib/engine/q42_generate.h \
	lib/engine/q42_record.h lib/engine/q42_utf8.h lib/engine/q42_ring.h \
	lib/engine/q42_sentinel.h lib/engine/q42_grammar.h lib/engine/q42_sieve.h \
	lib/engine/q42_bench.h \
	lib/engine/q42_choices.h
q42engine_HEADERS += lib/engine/q42_quality.h
include tests/engine.mk
include lib/engine/certify.mk
