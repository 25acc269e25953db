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
bats_require_minimum_version 1.5.0

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

# Three threads split stories260K's 8 heads 2/3/3, so a thread computes a
# head of a kv head whose new V column another thread stores (q42_forward.c,
# att_one); with --batch 1 every prompt token is a pass of its own.
@test "stories260K: greedy ids and text are llama.cpp's, 1 to 3 threads, batch 1 and whole" {
	need_model m stories260K.gguf
	for prompt in "Once upon a time" "The little dog" "Tom and Lily went to the park."; do
		for t in 1 2 3; do
			for b in 1 512; do
				run "$Q42RUN" -m "$m" -p "$prompt" -n 32 -t "$t" -b "$b" --record
				[ "$status" -eq 0 ]
				[ "$(rec_field "$output" 'r["tokens"]["prompt"]')" = "$(golden stories260K.gguf "$prompt" 3)" ]
				[ "$(rec_field "$output" 'r["tokens"]["generated"]')" = "$(golden stories260K.gguf "$prompt" 4)" ]
			done
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

@test "the context size does not change the ids past a V cache block (64 positions), f32 and f16" {
	need_model m stories260K.gguf
	for kv in f32 f16; do
		a=$("$Q42RUN" -m "$m" -p "Once upon a time" -n 90 --kv-type "$kv" --record)
		b=$("$Q42RUN" -m "$m" -p "Once upon a time" -n 90 --kv-type "$kv" -c 97 --record)
		c=$("$Q42RUN" -m "$m" -p "Once upon a time" -n 90 --kv-type "$kv" -c 97 -b 3 -t 3 --record)
		ga=$(rec_field "$a" 'r["tokens"]["generated"]')
		[ "$(rec_field "$a" 'len(r["tokens"]["generated"])')" = 90 ]
		[ "$ga" = "$(rec_field "$b" 'r["tokens"]["generated"]')" ]
		[ "$ga" = "$(rec_field "$c" 'r["tokens"]["generated"]')" ]
	done
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

@test "--tokenize: Unigram (t5) and gemma4 vocabularies, GGUF and their P64, give llama.cpp's ids" {
	local p64c v n g f out
	p64c=$(q42_bin p64c)
	for n in nomic-bert-moe gemma-4; do
		need_vocab v "ggml-vocab-$n.gguf"
		# mixed.txt: charsmap input (U+FF41, U+00BD, U+3000), specials, bad UTF-8
		g="$Q42_SRCDIR/tests/golden/tokenizer/$n.mixed.out"
		"$p64c" "$v" -o "$BATS_TEST_TMPDIR/$n.p64"
		for f in "$v" "$BATS_TEST_TMPDIR/$n.p64"; do
			out=$("$Q42RUN" -m "$f" --tokenize --lines -f "$Q42_SRCDIR/tests/golden/tokenizer/mixed.txt")
			diff <(printf '%s\n' "$out") "$g"
		done
	done
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
	# a real model whose general.architecture value is renamed
	need_model g stories260K.gguf
	python3 - "$g" "$BATS_TEST_TMPDIR/zz.gguf" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
i = d.index(b"general.architecture") + len("general.architecture")
assert struct.unpack_from("<I", d, i)[0] == 8
n = struct.unpack_from("<Q", d, i + 4)[0]
old = bytes(d[i + 12:i + 12 + n])
d[i + 12:i + 12 + n] = b"z" * n
d = d.replace(old + b".", b"z" * n + b".")  # its keys' prefix too
open(sys.argv[2], "wb").write(d)
PY
	run "$Q42RUN" -m "$BATS_TEST_TMPDIR/zz.gguf" -p x
	[ "$status" -eq 1 ]
	[[ "$output" == *"architecture 'zzzzz' is not supported"* ]]
	[[ "$output" == *"lfm2moe"* ]]
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

@test "--isa: under --arith llamacpp every level this CPU runs gives the same logits, for every weight type family, with either KV cache" {
	all=$(seq -s, 0 511)
	for m in e256-llama-q4_k_m e256-llama-tied-f16 e256-llama-q5_0 e256-llama-q2_k e256-llama-q3_k e256-llama-tq1_0 \
		e256-llama-iq4_nl e256-llama-iq4_xs e256-llama-q8_0 e256-llama-q4_0 e256-llama-q5_1 e256-llama-q6_k \
		e256-llama-tq2_0 e256-llama-tied-bf16; do
		for kv in f32 f16; do
			ref=$("$Q42RUN" -m "$TM/$m.gguf" -p "Tom and Lily went to the park." --logits-for "$all" \
				--kv-type "$kv" --isa scalar)
			[ "$(printf '%s\n' "$ref" | wc -l)" -eq 512 ]
			for isa in avx2 avx512; do
				run "$Q42RUN" -m "$TM/$m.gguf" -p "Tom and Lily went to the park." --logits-for "$all" \
					--kv-type "$kv" --isa "$isa"
				# a level this CPU lacks is refused when the model loads
				[ "$status" -ne 0 ] && continue
				[ "$output" = "$ref" ]
			done
		done
	done
}

# qwen3, phi3, gemma3 and lfm2 through the whole program (tokenizer, prefill,
# decode, record), GGUF and the P64 p64c compiles from it: llama.cpp's ids
# (tests/golden/arch/greedy.tsv, make_golden.py), prompt ids included;
# the longest prompt passes gemma3's sliding window of 4.
@test "qwen3, phi3, gemma3, lfm2: llama.cpp's ids from GGUF and P64, 1 and 2 threads, batch 3" {
	P64C=$(q42_bin p64c)
	AG="$Q42_SRCDIR/tests/golden/arch/greedy.tsv"
	prompt="In the morning the old man walked slowly to the river and sat down."
	for mod in a64-qwen3-hd24-q8_0 a64-phi3-long-f32 a64-gemma3-swa-f32 a64-lfm2-q8_0; do
		"$P64C" --no-progress "$TM/$mod.gguf" -o "$BATS_TEST_TMPDIR/$mod.p64"
		want=$(awk -F'\t' -v m="$mod.gguf" -v p="$prompt" '$1 == m && $2 == p { print $4 }' "$AG")
		want_p=$(awk -F'\t' -v m="$mod.gguf" -v p="$prompt" '$1 == m && $2 == p { print $3 }' "$AG")
		[ -n "$want" ]
		for m in "$TM/$mod.gguf" "$BATS_TEST_TMPDIR/$mod.p64"; do
			for t in 1 2; do
				run "$Q42RUN" -m "$m" -p "$prompt" -n 32 -t $t -b 3 --record
				[ "$status" -eq 0 ]
				[ "$(rec_field "$output" 'r["tokens"]["prompt"]')" = "$want_p" ]
				[ "$(rec_field "$output" 'r["tokens"]["generated"]')" = "$want" ]
			done
		done
	done
	# Vulkan (vk_parity.bats compares it with the CPU); auto never takes
	# a software device
	run "$Q42RUN" -m "$TM/a64-gemma3-swa-f32.gguf" -p "$prompt" -n 32 --backend auto --record
	[ "$status" -eq 0 ]
	[ "$(rec_field "$output" 'r["engine"]["backend"]')" = cpu ]
}

# LongRoPE's factors are chosen as llama.cpp chooses them, by its context
# rounded up to 256 cells: a64-phi3-long's original context is 32, so
# --ctx 32 takes the long factors. Golden: llama.cpp v0.4.0 (zen4),
#   llamapeer gen tests/models/a64-phi3-long-f32.gguf "Once upon a time" 24 \
#       --threads 1 --fa off --kv f32 --ctx 32
@test "phi3: --ctx 32 over an original context of 32 takes the long factors, as llama.cpp does" {
	local want="26 392 325 26 314 266 509 149 214 333 389 501 125 427 58 324 228 423 142 188 396 379 465 304"
	local b
	for b in cpu vulkan; do
		if [ "$b" = vulkan ]; then # where this build and machine have a device
			[ "${Q42_WITH_VULKAN:-}" = yes ] && "$Q42RUN" --list-devices >/dev/null 2>&1 || continue
		fi
		run "$Q42RUN" -m "$TM/a64-phi3-long-f32.gguf" -p "Once upon a time" -n 24 --ctx 32 \
			--backend $b --record
		[ "$status" -eq 0 ]
		[ "$(rec_field "$output" 'r["tokens"]["prompt"]')" = "1 403 407 261 378" ]
		[ "$(rec_field "$output" 'r["tokens"]["generated"]')" = "$want" ]
	done
}

# lfm2moe through the whole program, --arith auto (llama.cpp's zen4
# products here): F32, Q8_0, Q4_0 (8 experts, top-2), F32 top-4, Q4_K_M
# and Q6_K (n_embd 256), GGUF and P64, 1 and 2 threads, batches 1, 3 and
# the default: llama.cpp's ids up to the first near-tie (gap < 1e-3 in
# greedy.tsv), the prompt ids too (Vulkan: vk_parity.bats).
@test "lfm2moe: llama.cpp's ids from GGUF and P64, 1 and 2 threads, batches 1, 3, 512" {
	P64C=$(q42_bin p64c)
	AG="$Q42_SRCDIR/tests/golden/arch/greedy.tsv"
	prompt="In the morning the old man walked slowly to the river and sat down."
	for mod in a64-lfm2moe-e8k2-f32 a64-lfm2moe-e8k2-q8_0 a64-lfm2moe-e8k2-q4_0 a64-lfm2moe-e8k4-f32 \
		a256-lfm2moe-q4_k_m a256-lfm2moe-q6_k; do
		"$P64C" --no-progress "$TM/$mod.gguf" -o "$BATS_TEST_TMPDIR/$mod.p64"
		row=$(awk -F'\t' -v m="$mod.gguf" -v p="$prompt" '$1 == m && $2 == p' "$AG")
		[ -n "$row" ]
		want_p=$(printf '%s' "$row" | cut -f3)
		for m in "$TM/$mod.gguf" "$BATS_TEST_TMPDIR/$mod.p64"; do
			for tb in "1 1" "2 3" "2 512"; do
				set -- $tb
				run "$Q42RUN" -m "$m" -p "$prompt" -n 32 -t $1 -b $2 --record
				[ "$status" -eq 0 ]
				[ "$(rec_field "$output" 'r["tokens"]["prompt"]')" = "$want_p" ]
				got=$(rec_field "$output" 'r["tokens"]["generated"]')
				printf '%s\n' "$row" | python3 -c '
import sys
f = sys.stdin.read().rstrip("\n").split("\t")
want, gaps, got = f[3].split(), [float(g) for g in f[4].split()], sys.argv[1].split()
for k in range(32):
    if gaps[k] < 1e-3:
        break
    assert got[k] == want[k], (k, got[k], want[k])
' "$got"
			done
		done
	done
}

# The quantized lfm2moe models' last-position logits for "Once upon a time"
# under --arith zen4 (llama.cpp's zen4 products, on any x86 CPU) equal
# llama.cpp's (tests/golden/arch/logits-*-once.txt, %.9g) for every id:
# the router, the repacked Q4_0/Q4_K experts (CPU_REPACK gemv per token),
# the Q8_0/Q6_K ones (vec_dot), 1 and 2 threads.
@test "lfm2moe: quantized logits equal llama.cpp's to the last printed digit" {
	all=$(seq -s, 0 511)
	for mod in a64-lfm2moe-e8k2-q8_0 a64-lfm2moe-e8k2-q4_0 a256-lfm2moe-q4_k_m a256-lfm2moe-q6_k; do
		for t in 1 2; do
			run -0 "$Q42RUN" -m "$TM/$mod.gguf" -p "Once upon a time" --logits-for "$all" \
				--arith zen4 -t $t
			diff <(printf '%s\n' "$output" | cut -f2) \
				"$Q42_SRCDIR/tests/golden/arch/logits-$mod-once.txt"
		done
	done
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

# ---- in-loop governance: the Sentinel, typed decisions, the sieve ----
# Expected ids are llama.cpp's (greedy.tsv); option log-likelihoods are
# tests/golden/engine/choices.tsv (make_choices_golden.py, llamapeer);
# logits are logits-*-once.txt (make_golden.sh).

# gov_check RECORD GOLDEN-IDS BANNED: the record's ids equal the golden ids
# before the first intervention, whose denied token is the golden id there,
# and the text never contains BANNED.
gov_check() {
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
r = json.loads(sys.argv[1]); gold = [int(x) for x in sys.argv[2].split()]; banned = sys.argv[3]
iv = r["interventions"]
assert iv, "no intervention"
k = iv[0]["step"]
gen = r["tokens"]["generated"]
assert gen[:k] == gold[:k], (gen[:k], gold[:k])
assert iv[0]["denied"] == gold[k] and iv[0]["substitute"] == gen[k] != gold[k], iv[0]
assert iv[0]["rule"] == "banned"
assert banned not in r["text"], r["text"]
assert r["sentinel"]["dropped"] == 0 and r["sentinel"]["rules"] == "nonfinite,banned"
PY
}

@test "--sentinel banned=FILE: a word the model would write is never emitted; ids are llama.cpp's up to that step" {
	need_model m stories260K.gguf
	gold=$(golden stories260K.gguf "Once upon a time" 4)
	printf '# names\nLily\n' > "$BATS_TEST_TMPDIR/ban"
	run "$Q42RUN" -m "$m" -p "Once upon a time" -n 32 --sentinel "banned=$BATS_TEST_TMPDIR/ban" --record
	[ "$status" -eq 0 ]
	gov_check "$output" "$gold" Lily
	# the streamed text is the record's, without the word
	want=$(rec_field "$output" 'r["text"]')
	got=$("$Q42RUN" -m "$m" -p "Once upon a time" -n 32 --sentinel "banned=$BATS_TEST_TMPDIR/ban")
	[ "$got" = "$want" ]
	[[ "$got" == ", there was a little girl named "* ]]
	# a string split across tokens, starting inside one
	printf 'rl nam\n' > "$BATS_TEST_TMPDIR/ban2"
	run "$Q42RUN" -m "$m" -p "Once upon a time" -n 32 --sentinel "banned=$BATS_TEST_TMPDIR/ban2" --record
	[ "$status" -eq 0 ]
	gov_check "$output" "$gold" "rl nam"
	# an id sequence: " little girl" as ids, from greedy.tsv (376 298)
	printf 'ids: 376 298\n' > "$BATS_TEST_TMPDIR/ban3"
	run "$Q42RUN" -m "$m" -p "Once upon a time" -n 32 --sentinel "banned=$BATS_TEST_TMPDIR/ban3" --record
	[ "$status" -eq 0 ]
	[ "$(rec_field "$output" '[(i["step"], i["denied"]) for i in r["interventions"]][0]')" = "(5, 298)" ]
}

@test "--sentinel under --strict: an intervention fails the request (4), nothing on stdout" {
	need_model m stories260K.gguf
	printf 'Lily\n' > "$BATS_TEST_TMPDIR/ban"
	run --separate-stderr "$Q42RUN" -m "$m" -p "Once upon a time" -n 32 --sentinel "banned=$BATS_TEST_TMPDIR/ban" --strict
	[ "$status" -eq 4 ]
	[ -z "$output" ]
	[[ "$stderr" == *"sentinel: rule banned denied token 317 at step 9"* ]]
	# without an intervention --strict changes nothing
	run "$Q42RUN" -m "$m" -p "Once upon a time" -n 8 --sentinel witness --strict
	[ "$status" -eq 0 ]
	[ "$output" = ", there was a little girl" ]
}

@test "--sentinel repeat=N: no n-gram twice; deterministic for any thread count" {
	need_model m stories260K.gguf
	gold=$(golden stories260K.gguf "Tom and Lily went to the park." 4)
	a=$("$Q42RUN" -m "$m" -p "Tom and Lily went to the park." -n 64 -t 1 --sentinel repeat=3,witness --record)
	b=$("$Q42RUN" -m "$m" -p "Tom and Lily went to the park." -n 64 -t 2 --sentinel repeat=3,witness --record)
	python3 - "$a" "$b" "$gold" <<'PY'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2]); gold = [int(x) for x in sys.argv[3].split()]
g = a["tokens"]["generated"]
assert g == b["tokens"]["generated"] and a["interventions"] == b["interventions"]
grams = [tuple(g[i:i + 3]) for i in range(len(g) - 2)]
assert len(grams) == len(set(grams)), "a 3-gram repeats"
assert a["interventions"], "expected interventions"
k = a["interventions"][0]["step"]
assert g[:k] == gold[:k] and a["interventions"][0]["denied"] == gold[k]
ivs = a["interventions"]
for j, iv in enumerate(ivs):
    # a substitute is generated unless it was denied in turn at that step
    nxt = ivs[j + 1] if j + 1 < len(ivs) else None
    chained = nxt is not None and nxt["step"] == iv["step"] and nxt["denied"] == iv["substitute"]
    assert iv["rule"] in ("repeat", "witness") and (chained or iv["substitute"] == g[iv["step"]])
# the golden ids do repeat a 3-gram ("a big box"), so the rule had work to do
gg = [tuple(gold[i:i + 3]) for i in range(len(gold) - 2)]
assert len(gg) != len(set(gg))
PY
}

@test "--sentinel: bad rules exit 2, an unreadable banned file exits 3" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" -p x --sentinel bogus
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown rule"* ]]
	run "$Q42RUN" -m "$m" -p x --sentinel repeat=0
	[ "$status" -eq 2 ]
	run "$Q42RUN" -m "$m" -p x --sentinel "banned=$BATS_TEST_TMPDIR/none"
	[ "$status" -eq 3 ]
	printf 'ids: 1 x\n' > "$BATS_TEST_TMPDIR/bad"
	run "$Q42RUN" -m "$m" -p x --sentinel "banned=$BATS_TEST_TMPDIR/bad"
	[ "$status" -eq 2 ]
	[[ "$output" == *"line 1"* ]]
}

# choices_check MODEL PROMPT: q42run --choices against choices.tsv (1e-4)
choices_check() {
	local model=$1 prompt=$2 opts out
	opts=$(awk -F'\t' -v m="$model" -v p="$prompt" '$1 == m && $2 == p { print $3 }' \
		"$Q42_SRCDIR/tests/golden/engine/choices.tsv" | paste -sd,)
	out=$("$Q42RUN" -m "$Q42_TEST_MODELS/$model" -p "$prompt" --choices "$opts")
	python3 - "$out" "$model" "$prompt" "$Q42_SRCDIR/tests/golden/engine/choices.tsv" <<'PY'
import math, sys
out, model, prompt, path = sys.argv[1:]
gold = [l.split("\t") for l in open(path).read().splitlines() if not l.startswith("#")]
gold = [(g[2], float(g[5])) for g in gold if g[0] == model and g[1] == prompt]
lines = [l.split("\t") for l in out.splitlines()]
assert [l[0] for l in lines] == [g[0] for g in gold]
m = max(g[1] for g in gold); z = sum(math.exp(g[1] - m) for g in gold)
for (opt, p, ll), (gopt, gll) in zip(lines, gold):
    assert abs(float(ll) - gll) <= 1e-4, (opt, ll, gll)
    assert abs(float(p) - math.exp(gll - m) / z) <= 1e-4, (opt, p)
PY
}

@test "--choices: probabilities and log-likelihoods are llama.cpp's (stories260K, tiny-llama-spm)" {
	need_model m stories260K.gguf
	need_model t tiny-llama-spm-f32.gguf
	choices_check stories260K.gguf "Once upon a time, there was a little girl named"
	choices_check stories260K.gguf "The cat sat on the"
	choices_check tiny-llama-spm-f32.gguf "The little dog"
	# --choices-file gives the same lines
	printf 'Lily\nAmy\nthe dog\n' > "$BATS_TEST_TMPDIR/opts"
	a=$("$Q42RUN" -m "$m" -p "Once upon a time, there was a little girl named" --choices "Lily,Amy,the dog")
	b=$("$Q42RUN" -m "$m" -p "Once upon a time, there was a little girl named" --choices-file "$BATS_TEST_TMPDIR/opts")
	[ "$a" = "$b" ]
}

@test "--choices --record: the receipt names model, prompt digest, option ids and build" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" -p "Once upon a time, there was a little girl named" --choices "Lily,Amy,the dog" --record
	[ "$status" -eq 0 ]
	python3 - "$output" <<'PY'
import json, sys, hashlib
r = json.loads(sys.argv[1]); c = r["choices"]
assert c["model_sha256"] == "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d"
assert c["prompt_template_sha256"] == hashlib.sha256(b"Once upon a time, there was a little girl named").hexdigest()
# option ids from choices.tsv (llamapeer tok --no-bos)
assert [o["ids"] for o in c["options"]] == [[317], [410, 447, 343], [265, 400, 428]]
assert abs(sum(o["prob"] for o in c["options"]) - 1) < 1e-9
assert c["build"]["program"] == "q42run" and c["build"]["version"] and c["build"]["arith"]
assert r["tokens"]["generated"] == [] and r["interventions"] == []
PY
}

@test "--choices and --logits-for: bad lists are usage errors" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" -p x --choices "yes,,no"
	[ "$status" -eq 2 ]
	run "$Q42RUN" -m "$m" -p x --choices "yes"
	[ "$status" -eq 2 ]
	run "$Q42RUN" -m "$m" -p x --choices-file "$BATS_TEST_TMPDIR/none"
	[ "$status" -eq 3 ]
	run "$Q42RUN" -m "$m" -p x --logits-for 1,512
	[ "$status" -eq 2 ]
	run "$Q42RUN" -m "$m" -p x --logits-for 1,,2
	[ "$status" -eq 2 ]
	run "$Q42RUN" -m "$m" -p x --logits-for 1 --record
	[ "$status" -eq 2 ]
}

@test "--logits-for: llama.cpp's logits, in the order given, duplicates kept" {
	for mod in stories260K.gguf tiny-llama-spm-f32.gguf; do
		need_model m "$mod"
		gold="$Q42_SRCDIR/tests/golden/engine/logits-${mod%.gguf}-once.txt"
		run "$Q42RUN" -m "$m" -p "Once upon a time" --logits-for 432,383,0,432,7,100
		[ "$status" -eq 0 ]
		python3 - "$output" "$gold" <<'PY'
import sys
lines = [l.split("\t") for l in sys.argv[1].splitlines()]
gold = [float(x) for x in open(sys.argv[2]).read().split()]
assert [int(l[0]) for l in lines] == [432, 383, 0, 432, 7, 100]
assert lines[0][1] == lines[3][1]
for i, v in lines:
    g = gold[int(i)]
    assert abs(float(v) - g) <= 1e-4 * max(1.0, abs(g)), (i, v, g)
PY
	done
}

# The shortest quin in stories260K's tokens is 17 tokens, read off its
# vocabulary (gguf-py): the only tokens holding one of < > _ : " . are
# ' "', '.', '"', ':', '<', '>' and the one-byte tokens, so the cheapest
# sentence is "_" ":" name, " ", "<" scheme ":" ">", ' "' '"' (a literal
# with its space), " " "_" ":" name, ' "' '"', "." = 3+1+4+2+4+2+1.

# quin_check RECORD TEXT-FILE: the record's quin and quins are the text's
# one statement, its terms read here with a regular expression after
# q42-policy(5), QUINS.
quin_check() {
	python3 - "$1" "$2" <<'PY'
import json, re, sys
r = json.loads(sys.argv[1]); text = open(sys.argv[2], encoding="utf-8").read()
assert r["text"] == text and r["stop"] == "grammar", (r["text"], r["stop"])
iri = r'<([^<>"{}|^`\\\x00-\x20]*)>'
term = r'(%s|_:([A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_-])?)|"((?:[^"\\\n\r]|\\.)*)"(@[A-Za-z]+(?:-[A-Za-z0-9]+)*|\^\^%s)?)' % (iri, iri)
m = re.fullmatch(r'%s[ \t]+%s[ \t]+%s[ \t]+%s[ \t]+%s[ \t]*\.' % ((term,) * 5), text)
assert m, text
raw, terms = [], []
for k in range(5):
    g = m.groups()[6 * k:6 * k + 6]
    raw.append(g[0])
    if g[1] is not None:
        terms.append({"kind": "iri", "value": g[1]})
    elif g[2] is not None:
        terms.append({"kind": "blank", "value": g[2]})
    else:
        assert "\\" not in g[3] and g[4] is None, "escapes, lang and datatype are not expected here"
        terms.append({"kind": "literal", "value": g[3]})
names = ["subject", "predicate", "object", "graph", "provenance"]
assert r["quin"] == dict(zip(names, terms)), (r["quin"], terms)
assert r["quins"] == [" ".join(raw) + " ."], (r["quins"], raw)
PY
}

@test "--sieve quin: a quin within the budget is parsed into the record; 1 and 2 threads agree" {
	need_model m stories260K.gguf
	Q42GRD=$(q42_bin q42grd)
	printf '{"schema":"q42-policy/1","default_intent":"q","intents":{"q":{}}}\n' >"$BATS_TEST_TMPDIR/p.json"
	for n in 17 40; do
		for t in 1 2; do
			run --separate-stderr "$Q42RUN" -m "$m" -p "Once upon a time" -n "$n" -t "$t" --sieve quin
			[ "$status" -eq 0 ]
			printf '%s' "$output" >"$BATS_TEST_TMPDIR/out-$n-$t"
			run --separate-stderr "$Q42RUN" -m "$m" -p "Once upon a time" -n "$n" -t "$t" --sieve quin --record
			[ "$status" -eq 0 ]
			quin_check "$output" "$BATS_TEST_TMPDIR/out-$n-$t"
			[ "$(rec_field "$output" 'len(r["tokens"]["generated"]) <= '"$n")" = True ]
		done
		cmp "$BATS_TEST_TMPDIR/out-$n-1" "$BATS_TEST_TMPDIR/out-$n-2"
		# q42grd's quin reader takes the text as a facts file of one statement
		cp "$BATS_TEST_TMPDIR/out-$n-1" "$BATS_TEST_TMPDIR/out.nq"
		run "$Q42GRD" -P "$BATS_TEST_TMPDIR/p.json" -F "$BATS_TEST_TMPDIR/out.nq" --check
		[ "$status" -eq 0 ]
		[ "${lines[1]}" = "facts	1 file(s)	1 statements" ]
	done
	# 17 tokens leave no room to spare: the shortest sentence, all of it used
	run "$Q42RUN" -m "$m" -p "Once upon a time" -n 17 --sieve quin --record
	[ "$(rec_field "$output" 'len(r["tokens"]["generated"])')" = 17 ]
}

@test "--sieve quin: no quin within the budget is [sieve-misaligned], exit 4, nothing printed" {
	need_model m stories260K.gguf
	run --separate-stderr "$Q42RUN" -m "$m" -p "Once upon a time" -n 16 --sieve quin
	[ "$status" -eq 4 ]
	[ -z "$output" ]
	[[ "$stderr" == *"[sieve-misaligned]"* ]]
	run --separate-stderr "$Q42RUN" -m "$m" -p "Once upon a time" -n 16 --sieve quin --record
	[ "$status" -eq 4 ]
	[ -z "$output" ]
	run "$Q42RUN" -m "$m" -p x --sieve json
	[ "$status" -eq 2 ]
	run "$Q42RUN" -m "$m" -p x --sieve quin --stop x
	[ "$status" -eq 2 ]
	run "$Q42RUN" -m "$m" -p x --sieve quin --grammar "$BATS_TEST_TMPDIR/g"
	[ "$status" -eq 2 ]
}

@test "--grammar FILE: the output is a sentence of the grammar, stop grammar; bad grammars exit 2 or 3" {
	need_model m stories260K.gguf
	cat > "$BATS_TEST_TMPDIR/g" <<'G'
# a sentence about Lily or Tom
root ::= name (" " word)+ "."
name ::= "Lily" | "Tom"
word ::= [a-z]+
G
	run "$Q42RUN" -m "$m" -p "Once upon a time" -n 64 --grammar "$BATS_TEST_TMPDIR/g" --record
	[ "$status" -eq 0 ]
	python3 - "$output" "$BATS_TEST_TMPDIR/g" <<'PY'
import json, re, sys, hashlib
r = json.loads(sys.argv[1])
assert re.fullmatch(r"(Lily|Tom)( [a-z]+)+\.", r["text"]), r["text"]
assert r["stop"] == "grammar"
assert r["sieve"]["sha256"] == hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest()
assert r["sieve"]["states"] > 0
PY
	# unconstrained, the model does not start with a name: the sieve acted
	[[ "$("$Q42RUN" -m "$m" -p "Once upon a time" -n 4)" != Lily* ]]
	printf 'root ::= "a" missing\n' > "$BATS_TEST_TMPDIR/bad"
	run "$Q42RUN" -m "$m" -p x --grammar "$BATS_TEST_TMPDIR/bad"
	[ "$status" -eq 2 ]
	[[ "$output" == *":1:14: undefined rule 'missing'"* ]]
	printf 'root ::= "a" root\n' > "$BATS_TEST_TMPDIR/rec"
	run "$Q42RUN" -m "$m" -p x --grammar "$BATS_TEST_TMPDIR/rec"
	[ "$status" -eq 2 ]
	[[ "$output" == *"refers to itself"* ]]
	run "$Q42RUN" -m "$m" -p x --grammar "$BATS_TEST_TMPDIR/none"
	[ "$status" -eq 3 ]
}

@test "--help and the completions name every governance option" {
	run "$Q42RUN" --help
	for opt in --sentinel --sieve --grammar --choices --choices-file --logits-for; do
		[[ "$output" == *"$opt"* ]]
		grep -q -- "$opt" "$Q42_SRCDIR/completions/q42run"
		grep -q -- "$opt" "$Q42_SRCDIR/completions/_q42run"
		grep -qF -- "${opt//-/\\-}" "$Q42_SRCDIR/man/q42run.1"
	done
}

# --- the quality gate (q42run(1), QUALITY). The expected perplexity is
# llama.cpp's, from tests/golden/quality/stories260K-ctx64.txt (made from
# llamapeer logits by tests/tools/gen_quality_golden.py; README there).

qgold() {
	awk -F'\t' -v k="$1" '$1 == k { print $2 }' "$Q42_SRCDIR/tests/golden/quality/stories260K-ctx64.txt"
}

@test "--perplexity: llama.cpp's PPL to 4 significant digits, same output for 1 and 2 threads" {
	need_model m stories260K.gguf
	local story="$Q42_SRCDIR/tests/golden/quality/story.txt" want
	run -0 "$Q42RUN" -m "$m" --perplexity "$story" --ctx 64 -t 1
	local one="$output"
	want=$(printf '%.4g' "$(qgold ppl)")
	[ "$(printf '%.4g' "$(sed -n 's/^Final estimate: PPL = \([0-9.]*\) +\/- [0-9.]*$/\1/p' <<<"$output")")" = "$want" ]
	[ "$(sed -n 1p <<<"$output" | tr -cd ',' | wc -c)" -eq "$(qgold n_chunks)" ]
	run -0 "$Q42RUN" -m "$m" --perplexity "$story" --ctx 64 -t 2
	[ "$output" = "$one" ]
}

@test "--kl-base and --kl-divergence: a model against itself; the file's layout" {
	need_model m stories260K.gguf
	local story="$Q42_SRCDIR/tests/golden/quality/story.txt" kb="$BATS_TEST_TMPDIR/s.klb"
	run -0 "$Q42RUN" -m "$m" --perplexity "$story" --ctx 64 --kl-base "$kb"
	# magic, then 32-byte header + 4 windows x 64 ids + 4 x 31 rows x 512 f32
	[ "$(head -c 6 "$kb")" = "Q42KLB" ]
	[ "$(stat -c %s "$kb")" -eq $((32 + 4 * 64 * 4 + 4 * 31 * 512 * 4)) ]
	run -0 "$Q42RUN" -m "$m" --kl-divergence "$kb"
	grep -qx $'kld_mean\t0\t0' <<<"$output"
	grep -qx $'same_top\t1.000000\t0.000000' <<<"$output"
	grep -q $'^count\t124$' <<<"$output"
	run -0 "$Q42RUN" -m "$m" --kl-divergence "$kb" --perplexity "$story"
}

@test "--kl-divergence refuses a base that does not match, and a damaged one" {
	need_model m stories260K.gguf
	local story="$Q42_SRCDIR/tests/golden/quality/story.txt" kb="$BATS_TEST_TMPDIR/s.klb"
	run -0 "$Q42RUN" -m "$m" --perplexity "$story" --ctx 64 --kl-base "$kb"
	run -4 "$Q42RUN" -m "$m" --kl-divergence "$kb" --ctx 32
	[[ "$output" == *"windows of 64"* ]]
	sed 's/Lily/Lucy/' "$story" >"$BATS_TEST_TMPDIR/other.txt"
	run -4 "$Q42RUN" -m "$m" --kl-divergence "$kb" --perplexity "$BATS_TEST_TMPDIR/other.txt"
	[[ "$output" == *"differs from the base"* ]]
	head -c 1000 "$kb" >"$BATS_TEST_TMPDIR/short.klb"
	run -2 "$Q42RUN" -m "$m" --kl-divergence "$BATS_TEST_TMPDIR/short.klb"
	[[ "$output" == *"size"* ]]
	run -3 "$Q42RUN" -m "$m" --kl-divergence "$BATS_TEST_TMPDIR/absent.klb"
	[ ! -e "$BATS_TEST_TMPDIR/absent.klb" ]
}

@test "--perplexity: usage errors and a text that is too short" {
	need_model m stories260K.gguf
	local story="$Q42_SRCDIR/tests/golden/quality/story.txt"
	run -2 "$Q42RUN" -m "$m" --kl-base "$BATS_TEST_TMPDIR/x.klb"
	run -2 "$Q42RUN" -m "$m" --perplexity "$story" -p "hi"
	run -2 "$Q42RUN" -m "$m" --perplexity "$story" --kl-base "$BATS_TEST_TMPDIR/x" --kl-divergence "$BATS_TEST_TMPDIR/y"
	run -4 "$Q42RUN" -m "$m" --perplexity "$story" --ctx 256 --kl-base "$BATS_TEST_TMPDIR/x.klb"
	[[ "$output" == *"2 windows"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/x.klb" ]
	run -3 "$Q42RUN" -m "$m" --perplexity "$BATS_TEST_TMPDIR/absent.txt"
}
