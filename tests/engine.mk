# tests/engine.mk: engine unit tests (cmocka) and q42run command-line tests
# (bats). Golden data: tests/golden/engine/ (README there); models:
# tests/models/ (README there) and $(Q42_TEST_MODELS).
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_engine tests/unit/test_engine_golden \
	tests/unit/test_sentinel tests/unit/test_sieve tests/unit/test_choices
TESTS += tests/unit/test_engine tests/unit/test_engine_golden \
	tests/unit/test_sentinel tests/unit/test_sieve tests/unit/test_choices
tests_unit_test_sentinel_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -Wno-missing-prototypes
tests_unit_test_sentinel_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
tests_unit_test_sieve_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -Wno-missing-prototypes
tests_unit_test_sieve_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
tests_unit_test_choices_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -Wno-missing-prototypes
tests_unit_test_choices_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
tests_unit_test_engine_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -Wno-missing-prototypes
tests_unit_test_engine_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
tests_unit_test_engine_golden_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -Wno-missing-prototypes
tests_unit_test_engine_golden_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
endif
if HAVE_BATS
TESTS += tests/bats/q42run.bats
endif
EXTRA_DIST += tests/bats/q42run.bats tests/golden/engine/README tests/golden/engine/make_golden.sh \
	tests/golden/engine/greedy.tsv tests/golden/engine/logits-tiny-llama-spm-f32-once.txt \
	tests/golden/engine/logits-stories260K-once.txt \
	tests/golden/engine/logits-e256-llama-tied-f16-kvf16-once.txt \
	tests/golden/engine/logits-e256-llama-tied-f16-kvf16-steps.txt \
	tests/golden/engine/logits-e256-llama-tied-bf16-once.txt \
	tests/golden/engine/logits-e256-llama-q4_k_m-once.txt \
	tests/golden/engine/logits-e256-llama-q4_0-once.txt \
	tests/golden/engine/logits-e256-llama-q8_0-once.txt \
	tests/golden/engine/logits-e256-llama-q5_0-once.txt \
	tests/golden/engine/logits-e256-llama-q5_1-once.txt \
	tests/golden/engine/logits-e256-llama-tq1_0-once.txt \
	tests/golden/engine/logits-e256-llama-tq2_0-once.txt \
	tests/golden/engine/logits-e256-llama-q3_k-once.txt \
	tests/golden/engine/logits-e256-llama-q2_k-once.txt \
	tests/golden/engine/logits-e256-llama-iq4_nl-once.txt \
	tests/golden/engine/logits-e256-llama-iq4_xs-once.txt \
	tests/golden/engine/choices.tsv tests/golden/engine/make_choices_golden.py \
	tests/models/README tests/models/make_models.sh \
	tests/models/e256-llama-q8_0.gguf tests/models/e256-llama-q4_0.gguf \
	tests/models/e256-llama-q4_k_m.gguf tests/models/e256-llama-q6_k.gguf \
	tests/models/e256-llama-tied-f16.gguf tests/models/e256-llama-tied-bf16.gguf \
	tests/models/e256-qwen2-q8_0.gguf \
	tests/models/e256-llama-q5_0.gguf tests/models/e256-llama-q5_1.gguf \
	tests/models/e256-llama-tq1_0.gguf tests/models/e256-llama-tq2_0.gguf \
	tests/models/e256-llama-q3_k.gguf tests/models/e256-llama-q2_k.gguf \
	tests/models/e256-llama-iq4_nl.gguf tests/models/e256-llama-iq4_xs.gguf \
	tests/models/no-tokenizer.gguf tests/models/strip_tokenizer.py tests/models/ggml-vocab-phi-3.gguf
# q42_compat against llama.cpp's compiled x86 code (tests/golden/compat/README)
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_compat
TESTS += tests/unit/test_compat
tests_unit_test_compat_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -Wno-missing-prototypes
tests_unit_test_compat_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
endif
EXTRA_DIST += tests/golden/compat/README tests/tools/gen_compat_golden.py tests/tools/compat_oracle.c \
	tests/golden/compat/dot_f16.bin tests/golden/compat/dot_f32.bin \
	tests/golden/compat/mm_f16_m1.f32 tests/golden/compat/mm_f16_m19.f32 \
	tests/golden/compat/mm_f16_m4.f32 tests/golden/compat/mm_f32_cpu.bin \
	tests/golden/compat/mm_f32_odd_cpu.bin \
	tests/golden/compat/mm_q4_0_m1.f32 tests/golden/compat/mm_q4_0_m19.f32 \
	tests/golden/compat/mm_q4_0_m4.f32 tests/golden/compat/mm_q4_K_m1.f32 \
	tests/golden/compat/mm_q4_K_m19.f32 tests/golden/compat/mm_q4_K_m4.f32 \
	tests/golden/compat/mm_q6_K_m1.f32 tests/golden/compat/mm_q6_K_m19.f32 \
	tests/golden/compat/mm_q6_K_m4.f32 tests/golden/compat/mm_q8_0_m1.f32 \
	tests/golden/compat/mm_q8_0_m19.f32 tests/golden/compat/mm_q8_0_m4.f32 \
	tests/golden/compat/q8_0.bin tests/golden/compat/rope_neox.bin tests/golden/compat/rope_norm.bin \
	tests/golden/compat/q8_1.bin tests/golden/compat/w_q5_1.bin \
	tests/golden/compat/mm_q5_1_cpu_m1.f32 tests/golden/compat/mm_q5_1_cpu_m4.f32 \
	tests/golden/compat/mm_q5_1_cpu_m19.f32 tests/golden/compat/w_q5_K.bin \
	tests/golden/compat/mm_q5_K_m1.f32 tests/golden/compat/mm_q5_K_m4.f32 \
	tests/golden/compat/mm_q5_K_m19.f32 tests/golden/compat/w_q4_1.bin \
	tests/golden/compat/mm_q4_1_m1.f32 tests/golden/compat/mm_q4_1_m4.f32 \
	tests/golden/compat/mm_q4_1_m19.f32 tests/golden/compat/mm_q4_1_cpu_m1.f32 \
	tests/golden/compat/mm_q4_1_cpu_m4.f32 tests/golden/compat/mm_q4_1_cpu_m19.f32 \
	tests/golden/compat/w_q5_0.bin tests/golden/compat/mm_q5_0_cpu_m1.f32 \
	tests/golden/compat/mm_q5_0_cpu_m4.f32 tests/golden/compat/mm_q5_0_cpu_m19.f32 \
	tests/golden/compat/w_tq1_0.bin tests/golden/compat/mm_tq1_0_cpu_m1.f32 \
	tests/golden/compat/mm_tq1_0_cpu_m4.f32 tests/golden/compat/mm_tq1_0_cpu_m19.f32 \
	tests/golden/compat/w_tq2_0.bin tests/golden/compat/mm_tq2_0_cpu_m1.f32 \
	tests/golden/compat/mm_tq2_0_cpu_m4.f32 tests/golden/compat/mm_tq2_0_cpu_m19.f32 \
	tests/golden/compat/w_q3_K.bin tests/golden/compat/mm_q3_K_cpu_m1.f32 \
	tests/golden/compat/mm_q3_K_cpu_m4.f32 tests/golden/compat/mm_q3_K_cpu_m19.f32 \
	tests/golden/compat/w_q2_K.bin tests/golden/compat/mm_q2_K_repack_m1.f32 \
	tests/golden/compat/mm_q2_K_repack_m4.f32 tests/golden/compat/mm_q2_K_repack_m19.f32 \
	tests/golden/compat/w_iq4_nl.bin tests/golden/compat/w_iq4_nl_odd.bin \
	tests/golden/compat/mm_iq4_nl_repack_m1.f32 tests/golden/compat/mm_iq4_nl_repack_m4.f32 \
	tests/golden/compat/mm_iq4_nl_repack_m19.f32 tests/golden/compat/mm_iq4_nl_cpu_m1.f32 \
	tests/golden/compat/mm_iq4_nl_cpu_m4.f32 tests/golden/compat/mm_iq4_nl_cpu_m19.f32 \
	tests/golden/compat/mm_iq4_nl_odd_cpu_m1.f32 tests/golden/compat/mm_iq4_nl_odd_cpu_m4.f32 \
	tests/golden/compat/mm_iq4_nl_odd_cpu_m19.f32 \
	tests/golden/compat/w_bf16.bin tests/golden/compat/w_bf16_odd.bin \
	tests/golden/compat/mm_bf16_cpu_m1.f32 tests/golden/compat/mm_bf16_cpu_m4.f32 \
	tests/golden/compat/mm_bf16_cpu_m19.f32 tests/golden/compat/mm_bf16_odd_cpu_m1.f32 \
	tests/golden/compat/mm_bf16_odd_cpu_m4.f32 tests/golden/compat/mm_bf16_odd_cpu_m19.f32 \
	tests/golden/compat/w_iq4_xs.bin tests/golden/compat/mm_iq4_xs_m1.f32 \
	tests/golden/compat/mm_iq4_xs_m4.f32 tests/golden/compat/mm_iq4_xs_m19.f32 \
	tests/golden/compat/soft_max.bin \
	tests/golden/compat/swiglu_100.bin tests/golden/compat/swiglu_512.bin \
	tests/golden/compat/w_f16.bin tests/golden/compat/w_q4_0.bin tests/golden/compat/w_q4_K.bin \
	tests/golden/compat/w_q6_K.bin tests/golden/compat/w_q8_0.bin tests/golden/compat/x.f32
# SIMD q42_compat kernels against their scalar definitions
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_compat_simd
TESTS += tests/unit/test_compat_simd
tests_unit_test_compat_simd_SOURCES = tests/unit/test_compat_simd.c tests/unit/compat_testlib.h
tests_unit_test_compat_simd_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_compat_simd_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
endif
# the quality gate (perplexity against llama.cpp, KL-base files);
# golden data: tests/golden/quality/ (README there)
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_quality
TESTS += tests/unit/test_quality
tests_unit_test_quality_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -Wno-missing-prototypes
tests_unit_test_quality_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
endif
EXTRA_DIST += tests/golden/quality/README tests/golden/quality/story.txt \
	tests/golden/quality/stories260K-ctx64.txt tests/tools/gen_quality_golden.py
# q42run --bench and --timings figures (time to first token, peak RSS)
if HAVE_BATS
TESTS += tests/bats/q42run_bench.bats
endif
EXTRA_DIST += tests/bats/q42run_bench.bats
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_mount
TESTS += tests/unit/test_mount
tests_unit_test_mount_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_mount_LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
endif
