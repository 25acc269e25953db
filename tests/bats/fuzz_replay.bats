#!/usr/bin/env bats
# fuzz_replay.bats -- each fuzz harness's checked-in corpus
# (tests/fuzz/corpus-NAME: its seeds, and every input that once crashed a
# reader, kept as a regression test) replayed through the harness linked
# with tests/fuzz/replay.c instead of libFuzzer. A crash or an abort fails
# the test in every build; in the ASan/UBSan build (CI's second) so does a
# read out of bounds, a leak or undefined behaviour.

load helpers

# replay NAME: every input of NAME's corpus through its harness, once.
replay() {
	local p="$Q42_BUILDDIR/tests/fuzz/replay_$1" dir="$Q42_SRCDIR/tests/fuzz/corpus-$1" n
	[ -x "$p" ] || { echo "not built: $p (run make check)" >&2; return 1; }
	n=$(ls "$dir" | grep -vc '^README$')
	run "$p" "$dir"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "replay: $n inputs" ]
}

@test "replay: an input it cannot read is exit 2, named" {
	run "$Q42_BUILDDIR/tests/fuzz/replay_gguf" "$BATS_TEST_TMPDIR/absent"
	[ "$status" -eq 2 ]
	[[ "$output" == *"replay: $BATS_TEST_TMPDIR/absent: cannot read it"* ]]
}

@test "replay chat: chat templates" {
	replay chat
}

@test "replay gguf: GGUF container" {
	replay gguf
}

@test "replay grammar: grammar compiler" {
	replay grammar
}

@test "replay hfconfig: Hugging Face config.json" {
	replay hfconfig
}

@test "replay hfvocab: tokenizer.json" {
	replay hfvocab
}

@test "replay jsonl: --jsonl request lines" {
	replay jsonl
}

@test "replay lora: LoRA adapters" {
	replay lora
}

@test "replay mount: model mount, binding and one token" {
	replay mount
}

@test "replay p64: P64 container" {
	replay p64
}

@test "replay policy: policies" {
	replay policy
}

@test "replay quin: quin statements" {
	replay quin
}

@test "replay record: q42-record lines" {
	replay record
}

@test "replay safetensors: Safetensors header" {
	replay safetensors
}

@test "replay state: state files" {
	replay state
}

@test "replay stmodel: Safetensors models and archives" {
	replay stmodel
}

@test "replay tokenizer: tokenizers on hostile text" {
	# the vocabularies it loads once: shared models and vocabularies
	local m
	need_model m stories260K.gguf
	need_model m tiny-bert-f32.gguf
	need_model m tiny-lfm2moe-f32.gguf
	need_vocab m ggml-vocab-nomic-bert-moe.gguf
	need_vocab m ggml-vocab-gemma-4.gguf
	replay tokenizer
}

@test "replay volume: Q42 volume" {
	replay volume
}

@test "replay walarc: volume archives (import)" {
	replay walarc
}

@test "replay walidx: volume index and review state" {
	replay walidx
}
