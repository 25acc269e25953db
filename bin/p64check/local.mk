# bin/p64check: validate and inspect P64 and GGUF files (see p64check(1)).
bin_PROGRAMS += bin/p64check/p64check
bin_p64check_p64check_SOURCES = bin/p64check/p64check.c bin/p64check/p64check.h \
	bin/p64check/list.c bin/p64check/rows.c bin/p64check/rows.h bin/p64check/quality.c
bin_p64check_p64check_LDADD = $(Q42_PROGRAM_LIBS)

# q42_source: a model file opened as GGUF or P64 by its magic bytes (shared
# with p64c; lives in the library because it decides which reader runs).
lib_libq42core_la_SOURCES += lib/formats/q42_source.c lib/formats/q42_source.h
q42formats_HEADERS += lib/formats/q42_source.h

dist_man_MANS += man/p64check.1
dist_bashcompletion_DATA += completions/p64check
dist_zshcompletion_DATA += completions/_p64check

EXTRA_DIST += tests/bats/p64check.bats tests/bats/helpers.bash \
	tests/tools/gguf_py_dump.py tests/golden/gguf-py/README.md \
	tests/golden/gguf-py/ggml-vocab-gpt-2.metadata.tsv \
	tests/golden/gguf-py/ggml-vocab-gpt-2.tensors.tsv \
	tests/golden/gguf-py/ggml-vocab-llama-bpe.metadata.tsv \
	tests/golden/gguf-py/ggml-vocab-llama-bpe.tensors.tsv \
	tests/golden/gguf-py/ggml-vocab-llama-spm.metadata.tsv \
	tests/golden/gguf-py/ggml-vocab-llama-spm.tensors.tsv \
	tests/golden/gguf-py/ggml-vocab-qwen2.metadata.tsv \
	tests/golden/gguf-py/ggml-vocab-qwen2.tensors.tsv \
	tests/golden/gguf-py/quant-tiny.gguf \
	tests/golden/gguf-py/quant-tiny.metadata.tsv \
	tests/golden/gguf-py/quant-tiny.tensors.tsv \
	tests/golden/gguf-py/quant-tiny.values-bf16.tsv \
	tests/golden/gguf-py/quant-tiny.values-f16.tsv \
	tests/golden/gguf-py/quant-tiny.values-f32.tsv \
	tests/golden/gguf-py/quant-tiny.values-q2_K.tsv \
	tests/golden/gguf-py/quant-tiny.values-q3_K.tsv \
	tests/golden/gguf-py/quant-tiny.values-q4_0.tsv \
	tests/golden/gguf-py/quant-tiny.values-q4_1.tsv \
	tests/golden/gguf-py/quant-tiny.values-q4_K.tsv \
	tests/golden/gguf-py/quant-tiny.values-q5_0.tsv \
	tests/golden/gguf-py/quant-tiny.values-q5_1.tsv \
	tests/golden/gguf-py/quant-tiny.values-q5_K.tsv \
	tests/golden/gguf-py/quant-tiny.values-q6_K.tsv \
	tests/golden/gguf-py/quant-tiny.values-q8_0.tsv \
	tests/golden/gguf-py/quant-tiny.values-tq1_0.tsv \
	tests/golden/gguf-py/quant-tiny.values-tq2_0.tsv \
	tests/golden/gguf-py/stories260K.array-tokens.tsv \
	tests/golden/gguf-py/stories260K.metadata.tsv \
	tests/golden/gguf-py/stories260K.tensors.tsv \
	tests/golden/gguf-py/stories260K.values-attn_q.tsv \
	tests/golden/gguf-py/tiny-gemma3-f32.metadata.tsv \
	tests/golden/gguf-py/tiny-gemma3-f32.tensors.tsv \
	tests/golden/gguf-py/tiny-lfm2-f32.metadata.tsv \
	tests/golden/gguf-py/tiny-lfm2-f32.tensors.tsv \
	tests/golden/gguf-py/tiny-llama-spm-f32.metadata.tsv \
	tests/golden/gguf-py/tiny-llama-spm-f32.tensors.tsv
if HAVE_BATS
TESTS += tests/bats/p64check.bats
endif
