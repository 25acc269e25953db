# tests/engine.mk: engine unit tests (cmocka) and q42run command-line tests
# (bats). Golden data: tests/golden/engine/ (README there); models:
# tests/models/ (README there) and $(Q42_TEST_MODELS).
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_engine tests/unit/test_engine_golden
TESTS += tests/unit/test_engine tests/unit/test_engine_golden
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
	tests/golden/engine/logits-e256-llama-q4_k_m-once.txt \
	tests/models/README tests/models/make_models.sh \
	tests/models/e256-llama-q8_0.gguf tests/models/e256-llama-q4_0.gguf \
	tests/models/e256-llama-q4_k_m.gguf tests/models/e256-llama-q6_k.gguf \
	tests/models/e256-llama-tied-f16.gguf tests/models/e256-qwen2-q8_0.gguf \
	tests/models/no-tokenizer.gguf tests/models/strip_tokenizer.py
