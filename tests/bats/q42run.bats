#!/usr/bin/env bats
# q42run.bats -- q42run from the command line: greedy output against
# llama.cpp, P64 and GGUF alike, tokenize/detokenize, records, and every
# documented bad-input exit status (q42run(1), "EXIT STATUS").
#
# Expected ids and texts are llama.cpp's: shared/models/REFERENCE.md and
# tests/golden/engine/greedy.tsv (made by tests/golden/engine/make_golden.sh
# with the llamapeer oracle); "Hello world" ids are from
# shared/tools/llamapeer/README.md (`llamapeer tok`).

load helpers

setup() {
	Q42RUN=$(q42_bin q42run)
	GOLD="$Q42_SRCDIR/tests/golden/engine/greedy.tsv"
	TM="$Q42_SRCDIR/tests/models"
}

# golden MODEL PROMPT COLUMN: a field of greedy.tsv (3 prompt ids, 4 out ids)
golden() {
	awk -F'\t' -v m="$1" -v p="$2" -v c="$3" '$1 == m && $2 == p { print $c }' "$GOLD"
}

# rec_field JSON-LINE PYTHON-EXPR: evaluate EXPR with r = the record
rec_field() {
	python3 -c 'import json, sys; r = json.loads(sys.argv[1]); v = eval(sys.argv[2]); print(" ".join(map(str, v)) if isinstance(v, list) else v)' "$1" "$2"
}

@test "stories260K: greedy ids and text are llama.cpp's, 1 and 2 threads" {
	need_model m stories260K.gguf
	for prompt in "Once upon a time" "The little dog" "Tom and Lily went to the park."; do
		for t in 1 2; do
			run "$Q42RUN" -m "$m" -p "$prompt" -n 32 -t "$t" --record
			[ "$status" -eq 0 ]
			[ "$(rec_field "$output" 'r["tokens"]["prompt"]')" = "$(golden stories260K.gguf "$prompt" 3)" ]
			[ "$(rec_field "$output" 'r["tokens"]["generated"]')" = "$(golden stories260K.gguf "$prompt" 4)" ]
		done
	done
}

@test "stories260K: the streamed text is the story of REFERENCE.md" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" -p "Once upon a time" -n 32
	[ "$status" -eq 0 ]
	[ "$output" = ", there was a little girl named Lily. She loved to play outside in the park. One day, she saw" ]
	run "$Q42RUN" -m "$m" -p "Tom and Lily went to the park." -n 32 -t 1
	[ "$output" = "They saw a big box with a big box. They wanted to play with it. They wanted to play with the box" ]
	run "$Q42RUN" -m "$m" -p "The little dog" -n 32 -t 2
	[ "$output" = "was a little girl named Lily. She loved to play with her toys and her toys. One day, she saw a big" ]
}

@test "stories260K as P64 (p64c) gives the same ids as its GGUF" {
	need_model m stories260K.gguf
	local p64c="$Q42_BUILDDIR/bin/p64c/p64c"
	[ -x "$p64c" ] || skip "p64c not built"
	"$p64c" "$m" -o "$BATS_TEST_TMPDIR/s.p64"
	run "$Q42RUN" -m "$BATS_TEST_TMPDIR/s.p64" -p "The little dog" -n 32 --record
	[ "$status" -eq 0 ]
	[ "$(rec_field "$output" 'r["tokens"]["generated"]')" = "$(golden stories260K.gguf "The little dog" 4)" ]
	[ "$(rec_field "$output" 'r["model"]["container"]')" = p64 ]
	[ "$(rec_field "$output" 'r["model"]["source_sha256"]')" = 270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d ]
}

@test "qwen2 (biases, NeoX RoPE) and tied f16: prompt and greedy ids are llama.cpp's" {
	for mod in e256-qwen2-q8_0.gguf e256-llama-q8_0.gguf; do
		run "$Q42RUN" -m "$TM/$mod" -p "The little dog" -n 32 --record
		[ "$status" -eq 0 ]
		[ "$(rec_field "$output" 'r["tokens"]["prompt"]')" = "$(golden $mod "The little dog" 3)" ]
		[ "$(rec_field "$output" 'r["tokens"]["generated"]')" = "$(golden $mod "The little dog" 4)" ]
	done
	# tied output: the first 11 ids precede the first near-tie (gap < 0.004)
	run "$Q42RUN" -m "$TM/e256-llama-tied-f16.gguf" -p "Once upon a time" -n 11 --record
	[ "$(rec_field "$output" 'r["tokens"]["generated"]')" = "$(golden e256-llama-tied-f16.gguf "Once upon a time" 4 | cut -d' ' -f1-11)" ]
}

@test "record: one q42-record/1 line with every documented field" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" -p "Once upon a time" -n 4 --record
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	python3 - "$output" <<'PY'
import json, sys, hashlib
r = json.loads(sys.argv[1])
assert r["schema"] == "q42-record/1"
for k in ("request", "text", "stop", "prompt", "tokens", "counts", "timings", "memory", "model",
          "sampling", "limits", "engine", "build", "strict", "fallbacks", "provenance"):
    assert k in r, k
assert r["prompt"]["sha256"] == hashlib.sha256(b"Once upon a time").hexdigest()
assert r["counts"] == {"prompt": 5, "generated": 4, "decode_steps": 3, "text_replaced_bytes": 0}
assert r["stop"] == "max_tokens" and r["provenance"] == [] and r["fallbacks"] == []
assert r["model"]["sha256"] == "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d"
assert r["sampling"]["mode"] == "greedy" and r["engine"]["kv_type"] == "f32"
assert r["memory"]["peak_rss_bytes"] > 0 and r["timings"]["prefill_ms"] >= 0
PY
}

@test "--lines: one record per line; --timings counts decode steps like llama.cpp" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" -n 32 --record --lines --timings < <(printf 'Once upon a time\nThe little dog\n')
	[ "$status" -eq 0 ]
	echo "$output" | grep -q 'decode_steps=31'
	recs=$(echo "$output" | grep '^{')
	[ "$(echo "$recs" | wc -l)" -eq 2 ]
	[ "$(rec_field "$(echo "$recs" | sed -n 2p)" 'r["tokens"]["generated"]')" = "$(golden stories260K.gguf "The little dog" 4)" ]
}

@test "--stop cuts the text before the stop string" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" -p "Once upon a time" -n 32 --stop Lily --record
	[ "$status" -eq 0 ]
	[ "$(rec_field "$output" 'r["stop"]')" = stop ]
	[ "$(rec_field "$output" 'r["text"]')" = ", there was a little girl named " ]
	run "$Q42RUN" -m "$m" -p "Once upon a time" -n 32 --stop Lily
	[ "$output" = ", there was a little girl named " ]
}

@test "--kv-type f16 keeps stories260K's ids; sampling is seeded" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" -p "The little dog" -n 32 --kv-type f16 --record
	[ "$(rec_field "$output" 'r["tokens"]["generated"]')" = "$(golden stories260K.gguf "The little dog" 4)" ]
	a=$("$Q42RUN" -m "$m" -p "The little dog" -n 16 --temp 0.9 --seed 7)
	b=$("$Q42RUN" -m "$m" -p "The little dog" -n 16 --temp 0.9 --seed 7)
	[ "$a" = "$b" ]
}

@test "prompt from stdin and from a file" {
	need_model m stories260K.gguf
	printf 'Once upon a time' > "$BATS_TEST_TMPDIR/p.txt"
	a=$("$Q42RUN" -m "$m" -n 8 < "$BATS_TEST_TMPDIR/p.txt")
	b=$("$Q42RUN" -m "$m" -n 8 -f "$BATS_TEST_TMPDIR/p.txt")
	[ "$a" = ", there was a little girl" ]
	[ "$a" = "$b" ]
}

@test "--tokenize/--detokenize work on a vocabulary-only GGUF" {
	need_vocab v ggml-vocab-llama-spm.gguf
	run "$Q42RUN" -m "$v" --tokenize -p "Hello world"
	[ "$status" -eq 0 ]
	[ "$output" = "1 15043 3186" ]
	run "$Q42RUN" -m "$v" --tokenize --no-bos -p "Hello world"
	[ "$output" = "15043 3186" ]
	run "$Q42RUN" -m "$v" --tokenize --lines < <(printf 'Hello world\nHello world\n')
	[ "${#lines[@]}" -eq 2 ]
	run "$Q42RUN" -m "$v" --detokenize -p "15043 3186"
	[ "$output" = "Hello world" ]
	run "$Q42RUN" -m "$v" --detokenize -p "15043 99999"
	[ "$status" -eq 4 ]
	# a vocabulary-only file cannot generate
	run "$Q42RUN" -m "$v" -p "Hello"
	[ "$status" -eq 1 ]
}

@test "--no-special: special-token text stays text" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" --tokenize --no-bos -p "<s>"
	[ "$output" = 1 ]
	run "$Q42RUN" -m "$m" --tokenize --no-bos --no-special -p "<s>"
	[ "$output" != 1 ]
}

@test "--max-tokens 0: prefill only, empty text, exit 0" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" -p "Once upon a time" -n 0 --record
	[ "$status" -eq 0 ]
	[ "$(rec_field "$output" 'r["stop"]')" = max_tokens ]
	[ "$(rec_field "$output" 'len(r["tokens"]["generated"])')" -eq 0 ]
	[ "$(rec_field "$output" 'r["text"]')" = "" ]
}

@test "invalid UTF-8 prompt: replaced and reported, refused under --strict (4)" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" -p $'Once \xff upon' -n 2 --record
	[ "$status" -eq 0 ]
	[ "$(rec_field "$output" 'r["fallbacks"][0]["kind"]')" = prompt_utf8 ]
	run "$Q42RUN" -m "$m" -p $'Once \xff upon' -n 2 --strict
	[ "$status" -eq 4 ]
	[[ "$output" == *"invalid UTF-8 at byte offset 5"* ]]
}

@test "a prompt longer than the context fails with 4; a full context stops ctx_full" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" -p "Tom and Lily went to the park." --ctx 8
	[ "$status" -eq 4 ]
	[[ "$output" == *"13 tokens do not fit the context of 8"* ]]
	run "$Q42RUN" -m "$m" -p "Once upon a time" --ctx 8 -n 100 --record
	[ "$status" -eq 0 ]
	[ "$(rec_field "$output" 'r["stop"]')" = ctx_full ]
	[ "$(rec_field "$output" 'r["counts"]["generated"]')" -eq 4 ]
}

@test "bad models: nonexistent (3), truncated (1), no tokenizer (1), unknown architecture (1), not a model (1)" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$BATS_TEST_TMPDIR/nope.gguf" -p x
	[ "$status" -eq 3 ]
	head -c 100000 "$m" > "$BATS_TEST_TMPDIR/trunc.gguf"
	run "$Q42RUN" -m "$BATS_TEST_TMPDIR/trunc.gguf" -p x
	[ "$status" -eq 1 ]
	run "$Q42RUN" -m "$TM/no-tokenizer.gguf" -p x
	[ "$status" -eq 1 ]
	[[ "$output" == *tokenizer* ]]
	printf 'hello, I am not a model\n' > "$BATS_TEST_TMPDIR/text.gguf"
	run "$Q42RUN" -m "$BATS_TEST_TMPDIR/text.gguf" -p x
	[ "$status" -eq 1 ]
	[[ "$output" == *"not a model file"* ]]
	need_model g tiny-gemma3-f32.gguf
	run "$Q42RUN" -m "$g" -p x
	[ "$status" -eq 1 ]
	[[ "$output" == *"architecture 'gemma3' is not supported"* ]]
}

@test "usage errors exit 2; an unreadable prompt file exits 3" {
	need_model m stories260K.gguf
	run "$Q42RUN" -p x
	[ "$status" -eq 2 ]
	run "$Q42RUN" -m "$m" -p x -f y
	[ "$status" -eq 2 ]
	run "$Q42RUN" -m "$m" -p x --threads 0
	[ "$status" -eq 2 ]
	run "$Q42RUN" -m "$m" -p x --kv-type q4_0
	[ "$status" -eq 2 ]
	run "$Q42RUN" -m "$m" -p x --bogus
	[ "$status" -eq 2 ]
	run "$Q42RUN" -m "$m" -f "$BATS_TEST_TMPDIR/missing.txt"
	[ "$status" -eq 3 ]
	run "$Q42RUN" --help
	[ "$status" -eq 0 ]
	run "$Q42RUN" --version
	[[ "$output" == "q42run (q42) "* ]]
}

@test "--deadline stops a long generation with stop reason deadline" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" -p "Once upon a time" -n 100000 --deadline 0.01 --record
	[ "$status" -eq 0 ]
	[ "$(rec_field "$output" 'r["stop"]')" = deadline ]
}

@test "streamed text equals the record's text, split characters included" {
	need_model m tiny-llama-spm-f32.gguf
	# this random model emits byte tokens that split characters (REFERENCE.md)
	run "$Q42RUN" -m "$m" -p "The little dog" -n 32 --record
	[ "$status" -eq 0 ]
	want=$(rec_field "$output" 'r["text"]')
	[ "$(rec_field "$output" 'r["counts"]["text_replaced_bytes"] > 0')" = True ]
	got=$("$Q42RUN" -m "$m" -p "The little dog" -n 32)
	[ "$got" = "$want" ]
	[ "$(rec_field "$output" 'r["tokens"]["generated"]')" = "$(golden tiny-llama-spm-f32.gguf "The little dog" 4)" ]
}

@test "--arith: both modes give llama.cpp's 32 greedy ids on stories260K (f32), the record names the mode, a bad mode is a usage error" {
	need_model M stories260K.gguf || return 1
	# llama.cpp's ids for this prompt, from shared/models/REFERENCE.md
	want="432 383 286 261 376 298 315 421 395 317 426 338 401 396 267 337 410 408 419 292 411 322 265 282 295 433 426 385 328 432 358 394"
	for mode in llamacpp ggml; do
		rec=$("$Q42RUN" -m "$M" -p "Once upon a time" -n 32 --arith "$mode" --record)
		got=$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(" ".join(map(str, r["tokens"]["generated"])), r["engine"]["arith"])' "$rec")
		[ "$got" = "$want $mode" ]
	done
	run "$Q42RUN" -m "$M" -p x --arith fast
	[ "$status" -eq 2 ]
	[[ $output == *"--arith 'fast'"* ]]
}

@test "phi-3 vocabulary: name-dependent special-token rules apply from GGUF and from P64" {
	V="$Q42_SRCDIR/tests/models/ggml-vocab-phi-3.gguf"
	P64C=$(q42_bin p64c)
	"$P64C" --no-progress "$V" -o "$BATS_TEST_TMPDIR/phi3.p64"
	text=$'<|user|>\n hi<|end|>\n <|assistant|>  x</s> y'
	# llama.cpp: `llamapeer tok tests/models/ggml-vocab-phi-3.gguf "$text"`
	want="1 32010 7251 32007 32001 921 2 343"
	for m in "$V" "$BATS_TEST_TMPDIR/phi3.p64"; do
		run "$Q42RUN" -m "$m" --tokenize -p "$text"
		[ "$status" -eq 0 ]
		[ "$output" = "$want" ]
	done
}
