#!/usr/bin/env bats
# vk_parity.bats -- q42run --backend vulkan from the command line:
# llama.cpp's greedy ids for stories260K (GGUF and P64, F16 cache, several
# prefill passes), the F16 fallback and its refusal under --strict,
# --timings/--bench/records naming the backend, and the failure paths of
# --backend and --device. The synthetic and quantized models are compared
# in tests/unit/test_vk_forward.c.
#
# Expected ids are llama.cpp's: tests/golden/engine/greedy.tsv (made by
# tests/golden/engine/make_golden.sh with the llamapeer oracle). Tests that
# need a device skip without one, but fail under CI=true.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	Q42RUN=$(q42_bin q42run)
	GOLD="$Q42_SRCDIR/tests/golden/engine/greedy.tsv"
	TM="$Q42_SRCDIR/tests/models"
	export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
}

# golden MODEL PROMPT COLUMN: a field of greedy.tsv (3 prompt ids, 4 out ids, 5 gaps)
golden() {
	awk -F'\t' -v m="$1" -v p="$2" -v c="$3" '$1 == m && $2 == p { print $c }' "$GOLD"
}

# rec_field JSON-LINE PYTHON-EXPR: evaluate EXPR with r = the record
rec_field() {
	python3 -c 'import json, sys; r = json.loads(sys.argv[1]); v = eval(sys.argv[2]); print(" ".join(map(str, v)) if isinstance(v, list) else v)' "$1" "$2"
}

@test "vulkan: stories260K's 32 greedy ids are llama.cpp's for 3 prompts; the record names backend and device" {
	need_vulkan
	need_model m stories260K.gguf
	for prompt in "Once upon a time" "The little dog" "Tom and Lily went to the park."; do
		run "$Q42RUN" -m "$m" -p "$prompt" -n 32 --backend vulkan --record
		[ "$status" -eq 0 ]
		[ "$(rec_field "$output" 'r["tokens"]["prompt"]')" = "$(golden stories260K.gguf "$prompt" 3)" ]
		[ "$(rec_field "$output" 'r["tokens"]["generated"]')" = "$(golden stories260K.gguf "$prompt" 4)" ]
		[ "$(rec_field "$output" 'r["engine"]["backend"]')" = vulkan ]
		[ -n "$(rec_field "$output" 'r["engine"]["device"]')" ]
		[ "$(rec_field "$output" 'len(r["fallbacks"])')" = 0 ]
	done
	run "$Q42RUN" -m "$m" -p "Once upon a time" -n 32 --backend vulkan
	[ "$output" = ", there was a little girl named Lily. She loved to play outside in the park. One day, she saw" ]
	run "$Q42RUN" -m "$m" -p "Once upon a time" -n 4 --record
	[ "$(rec_field "$output" 'r["engine"]["backend"] + " " + r["engine"]["device"]')" = "cpu cpu" ]
}

@test "vulkan: P64 input (p64c) gives the same ids as its GGUF" {
	need_vulkan
	need_model m stories260K.gguf
	"$(q42_bin p64c)" "$m" -o "$BATS_TEST_TMPDIR/s.p64"
	run "$Q42RUN" -m "$BATS_TEST_TMPDIR/s.p64" -p "The little dog" -n 32 --backend vulkan --record
	[ "$status" -eq 0 ]
	[ "$(rec_field "$output" 'r["tokens"]["generated"]')" = "$(golden stories260K.gguf "The little dog" 4)" ]
	[ "$(rec_field "$output" 'r["model"]["container"]')" = p64 ]
}

@test "vulkan: --kv-type f16, --batch 4 (several prefill passes) and --backend auto keep stories260K's ids" {
	need_vulkan
	need_model m stories260K.gguf
	local want
	want=$(golden stories260K.gguf "Tom and Lily went to the park." 4)
	for opts in "--kv-type f16" "--batch 4"; do
		# shellcheck disable=SC2086
		run "$Q42RUN" -m "$m" -p "Tom and Lily went to the park." -n 32 --backend vulkan $opts --record
		[ "$status" -eq 0 ]
		[ "$(rec_field "$output" 'r["tokens"]["generated"]')" = "$want" ]
	done
	# auto takes a GPU, never lavapipe: whichever it chose, the ids hold
	run "$Q42RUN" -m "$m" -p "Tom and Lily went to the park." -n 32 --backend auto --record
	[ "$status" -eq 0 ]
	[ "$(rec_field "$output" 'r["tokens"]["generated"]')" = "$want" ]
	if ! "$Q42RUN" --list-devices | grep -Eqi 'discrete|integrated'; then
		[ "$(rec_field "$output" 'r["engine"]["backend"]')" = cpu ]
	fi
}

@test "vulkan: a bf16 model is dequantized to f16 with a warning and a recorded fallback; --strict refuses it (4)" {
	need_vulkan
	need_model m stories260K.gguf
	local p="$BATS_TEST_TMPDIR/bf16.p64"
	"$(q42_bin p64c)" "$m" --type=bf16 -o "$p"
	run --separate-stderr "$Q42RUN" -m "$p" -p "Once upon a time" -n 8 --backend vulkan --record
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"warning: "*"dequantized to f16 for Vulkan"*"bf16"* ]]
	[ "$(rec_field "$output" 'r["fallbacks"][0]["kind"]')" = backend_f16 ]
	[ "$(rec_field "$output" 'len(r["tokens"]["generated"])')" = 8 ]
	run --separate-stderr "$Q42RUN" -m "$p" -p "Once upon a time" -n 8 --backend vulkan --strict
	[ "$status" -eq 4 ]
	[ -z "$output" ]
	[[ "$stderr" == *"--strict: "*"dequantized to f16"* ]]
	# the CPU runs bf16 as it is: no fallback there
	run --separate-stderr "$Q42RUN" -m "$p" -p "Once upon a time" -n 8 --strict
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
}

@test "vulkan: --timings and --bench name the backend and device" {
	need_vulkan
	need_model m stories260K.gguf
	run --separate-stderr "$Q42RUN" -m "$m" -p "Once upon a time" -n 8 --backend vulkan --timings
	[ "$status" -eq 0 ]
	[[ "$stderr" == *" backend=vulkan device_ms="*" device=\""*'"' ]]
	run --separate-stderr "$Q42RUN" -m "$m" -p "Once upon a time" -n 8 --timings
	[[ "$stderr" == *" backend=cpu" ]]
	run "$Q42RUN" -m "$m" --bench --backend vulkan --pp 16 --tg 8 --reps 2
	[ "$status" -eq 0 ]
	[[ "$output" == *"backend=vulkan pp_device_ms="*"device=\""* ]]
	run "$Q42RUN" -m "$m" --bench --backend vulkan --pp 16 --tg 8 --reps 1 --json
	[ "$status" -eq 0 ]
	python3 - "$output" <<'PY'
import json, sys
b = json.loads(sys.argv[1])
assert b["backend"] == "vulkan" and b["device"], b
assert b["pp"]["tok_s_median"] > 0 and b["tg"]["tok_s_median"] > 0, b
assert b["pp"]["device_ms"] >= 0 and b["tg"]["device_ms"] >= 0, b
PY
}

@test "--backend/--device: bad values exit 2, a device that does not exist is named" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" -p x --backend bogus
	[ "$status" -eq 2 ]
	[[ "$output" == *"--backend 'bogus': expected cpu, vulkan or auto"* ]]
	run "$Q42RUN" -m "$m" -p x --device 0
	[ "$status" -eq 2 ]
	[[ "$output" == *"--device needs --backend vulkan or auto"* ]]
	run "$Q42RUN" -m "$m" -p x --backend vulkan --device -1
	[ "$status" -eq 2 ]
	if [ "${Q42_WITH_VULKAN:-}" = yes ]; then
		need_vulkan
		run "$Q42RUN" -m "$m" -p x -n 1 --backend vulkan --device 99
		[ "$status" -eq 2 ]
		[[ "$output" == *"device 99"*"--list-devices"* ]]
		run "$Q42RUN" -m "$m" -p x -n 1 --backend auto --device 99
		[ "$status" -eq 2 ]
		[[ "$output" == *"device 99"* ]]
	fi
}

@test "--backend vulkan without a Vulkan build exits 3; auto runs on the CPU" {
	[ "${Q42_WITH_VULKAN:-}" = no ] || skip "this build has Vulkan"
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" -p "Once upon a time" -n 4 --backend vulkan
	[ "$status" -eq 3 ]
	[[ "$output" == *"built without Vulkan (configure --with-vulkan)"* ]]
	run "$Q42RUN" -m "$m" --bench --backend vulkan --pp 4 --tg 2 --reps 1
	[ "$status" -eq 3 ]
	run "$Q42RUN" -m "$m" -p "Once upon a time" -n 4 --backend auto --record
	[ "$status" -eq 0 ]
	[ "$(rec_field "$output" 'r["engine"]["backend"]')" = cpu ]
}

# The architectures of issue 34 on the device (test_vk_forward.c checks
# their logits and llama.cpp's ids at the default batch): the CPU's 32
# ids for the longest prompt -- past gemma3's window of 4 -- in prefill
# passes of 3 tokens, with an f32 and an f16 cache, from a P64, and with
# LoRA adapters; an encoder refuses to generate there as on the CPU
# (embed.bats runs the encoders on the device).
@test "vulkan: qwen3, gemma3, phi3, lfm2, lfm2moe give the CPU's ids with --batch 3, f32 and f16 caches, GGUF and P64" {
	need_vulkan
	local prompt="In the morning the old man walked slowly to the river and sat down." mod kv want
	"$(q42_bin p64c)" --no-progress "$TM/a64-gemma3-swa-f32.gguf" -o "$BATS_TEST_TMPDIR/a64-gemma3-swa-f32.p64"
	for mod in a64-qwen3-hd24-f32.gguf a64-gemma3-swa-f32.gguf a64-phi3-long-f32.gguf \
		a64-lfm2-l10-f32.gguf a64-lfm2moe-e8k4-f32.gguf "$BATS_TEST_TMPDIR/a64-gemma3-swa-f32.p64"; do
		[[ "$mod" == /* ]] || mod="$TM/$mod"
		for kv in f32 f16; do
			run "$Q42RUN" -m "$mod" -p "$prompt" -n 32 -b 3 --kv-type $kv --record
			[ "$status" -eq 0 ]
			want=$(rec_field "$output" 'r["tokens"]["generated"]')
			run "$Q42RUN" -m "$mod" -p "$prompt" -n 32 -b 3 --kv-type $kv --backend vulkan --record
			[ "$status" -eq 0 ]
			[ "$(rec_field "$output" 'r["engine"]["backend"]')" = vulkan ]
			[ "$(rec_field "$output" 'r["tokens"]["generated"]')" = "$want" ]
		done
	done
	# with adapters: the fused in_proj/out_proj of lfm2 and gemma3's f16 pairs
	for mod in a64-lfm2-f32:lora-a64-lfm2 a64-gemma3-swa-f32:lora-a64-gemma3-swa-f16; do
		run "$Q42RUN" -m "$TM/${mod%%:*}.gguf" --lora "$TM/${mod#*:}.gguf" -p "$prompt" -n 32 --record
		[ "$status" -eq 0 ]
		want=$(rec_field "$output" 'r["tokens"]["generated"]')
		run "$Q42RUN" -m "$TM/${mod%%:*}.gguf" --lora "$TM/${mod#*:}.gguf" -p "$prompt" -n 32 \
			--backend vulkan --record
		[ "$status" -eq 0 ]
		[ "$(rec_field "$output" 'r["tokens"]["generated"]')" = "$want" ]
	done
	need_model m tiny-lfm2-colbert-f32.gguf
	run "$Q42RUN" -m "$m" -p x -n 1 --backend vulkan
	[ "$status" -eq 4 ]
	[[ "$output" == *"architecture lfm2 with bidirectional attention is an encoder"* ]]
}
