#!/usr/bin/env bats
# hostile.bats -- hostile models and resource bounds (issue 39): mutants of
# the shipped small models' metadata and tensor descriptors through q42run
# (open, one evaluated token), p64c and p64check, each refused naming the
# field or run, none crashing (tests/tools/hostile_models.py); and
# q42run --max-memory.

load helpers

setup() {
	Q42RUN=$(q42_bin q42run)
	q42_bin p64c >/dev/null
	q42_bin p64check >/dev/null
}

# mutants BASE: the sample of BASE's mutants `make check` runs.
mutants() {
	run python3 "$Q42_SRCDIR/tests/tools/hostile_models.py" "$Q42_BUILDDIR" "$Q42_SRCDIR" \
		"$BATS_TEST_TMPDIR" --only "$1"
	echo "$output" | grep -v '^ok '
	[ "$status" -eq 0 ]
	[[ "$output" == *"mutants ($1 "* ]]
}

@test "hostile mutants of e256-llama-q8_0 are refused naming the field or run" {
	mutants e256-llama-q8_0.gguf
}
@test "hostile mutants of e256-qwen2-q8_0 are refused naming the field or run" {
	mutants e256-qwen2-q8_0.gguf
}
@test "hostile mutants of a64-qwen3-hd24-q8_0 are refused naming the field or run" {
	mutants a64-qwen3-hd24-q8_0.gguf
}
@test "hostile mutants of a64-gemma3-swa-q8_0 are refused naming the field or run" {
	mutants a64-gemma3-swa-q8_0.gguf
}
@test "hostile mutants of a64-phi3-short-f32 are refused naming the field or run" {
	mutants a64-phi3-short-f32.gguf
}
@test "hostile mutants of a64-lfm2-q8_0 are refused naming the field or run" {
	mutants a64-lfm2-q8_0.gguf
}
@test "hostile mutants of a64-lfm2moe-e8k2-q4_0 are refused naming the field or run" {
	mutants a64-lfm2moe-e8k2-q4_0.gguf
}

@test "--max-memory: a model needing more is refused before loading, exit 5 with the figure" {
	m="$Q42_SRCDIR/tests/models/e256-llama-q8_0.gguf"
	run "$Q42RUN" -m "$m" -p Once -n 1 --ctx 4096 --max-memory 1000000
	[ "$status" -eq 5 ]
	[[ "$output" == *"needs "*" bytes ("*"KV cache "*" for 4096 positions"*"more than the limit of 1000000 bytes"* ]]
	need=$(sed -n 's/.*needs \([0-9]*\) bytes.*/\1/p' <<<"$output")
	# the figure grows with the context, and is exactly the limit that passes
	run "$Q42RUN" -m "$m" -p Once -n 1 --ctx 4096 --max-memory "$need"
	[ "$status" -eq 0 ]
	run "$Q42RUN" -m "$m" -p Once -n 1 --ctx 8192 --max-memory "$need"
	[ "$status" -eq 5 ]
	run "$Q42RUN" -m "$m" -p Once -n 1 --max-memory 0
	[ "$status" -eq 0 ]
	run "$Q42RUN" -m "$m" -p Once --max-memory 12k
	[ "$status" -eq 2 ]
}
