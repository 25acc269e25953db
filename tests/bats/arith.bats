#!/usr/bin/env bats
# arith.bats -- q42run's arithmetic modes. --arith zen4 gives the greedy
# ids llama.cpp gives on an AVX-512 CPU without AMX (its
# libggml-cpu-zen4.so), on every quantized model of tests/models, whatever
# CPU runs the test: the mode is an arithmetic, not a CPU check.
# --arith portable gives the same bytes at every ISA level and thread
# count; auto names the mode it chose. llama.cpp's other AVX-512 variants
# without AMX compute zen4's bits (tests/golden/variants), and their names
# select it. --arith zen4 and --arith haswell give the top logits of
# llama.cpp's zen4 and AVX2 variants (tests/golden/{zen4,haswell}/
# logits.tsv: every generating model of tests/models and ../shared/models,
# three prompts) bit for bit.
#
# Expected ids: tests/golden/zen4/gen.tsv (llamapeer on an AMD EPYC guest
# that loads the zen4 variant; tests/golden/zen4/README). q42run stops at
# an end-of-generation token and llama.cpp's gen does not, so a shorter
# q42 output must be the golden's prefix ending at the model's EOS id.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	Q42RUN=$(q42_bin q42run)
	GOLD="$Q42_SRCDIR/tests/golden/zen4/gen.tsv"
	TM="$Q42_SRCDIR/tests/models"
	G="$Q42_SRCDIR/tests/golden"
}

# check MODEL PROMPT WANT [OPTION...]: q42run's ids under --arith zen4
check_ids() {
	local model=$1 prompt=$2 want=$3
	shift 3
	run "$Q42RUN" -m "$TM/$model" -p "$prompt" -n 32 --arith zen4 --record "$@"
	[ "$status" -eq 0 ] || { echo "$model: exit $status: $output"; return 1; }
	golden_ids "$output" "$want" "$model | $prompt" "r['engine']['arith'] == 'zen4'"
}

@test "--arith zen4: llama.cpp zen4's greedy ids on every quantized model of tests/models, three prompts" {
	[ -s "$GOLD" ]
	local n=0
	while IFS=$'\t' read -r model prompt want; do
		check_ids "$model" "$prompt" "$want"
		n=$((n + 1))
	done <"$GOLD"
	[ "$n" -eq 42 ]
}

# Q4_K's repacked kernels round a prompt token by its place in its pass
# (in a group of four or not), as in llama.cpp: only the whole prompt as
# one pass gives llama.cpp's bits there, so --batch is varied elsewhere.
@test "--arith zen4: the same ids for 1 and 2 threads, and for batch 1, 3 and whole without Q4_K" {
	while IFS=$'\t' read -r model prompt want; do
		case $model in
		e256-llama-q4_k_m.gguf) batches=512 ;;
		e256-llama-q8_0.gguf | e256-llama-q6_k.gguf) batches="1 3 512" ;;
		*) continue ;;
		esac
		for t in 1 2; do
			for b in $batches; do
				check_ids "$model" "$prompt" "$want" -t "$t" -b "$b"
			done
		done
	done <"$GOLD"
}

@test "--arith: sapphirerapids is llamacpp's other name, alderlake haswell's; a bad mode names them all" {
	run "$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -p "Once upon a time" -n 4 --arith sapphirerapids --record
	[ "$status" -eq 0 ]
	[[ $output == *'"arith":"llamacpp"'* ]]
	run "$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -p "Once upon a time" -n 4 --arith alderlake --record
	[ "$status" -eq 0 ]
	[[ $output == *'"arith":"haswell"'* ]]
	run "$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -p x --arith zen5
	[ "$status" -eq 2 ]
	[[ $output == *"expected auto, portable, llamacpp, sapphirerapids, zen4, icelake, skylakex, cascadelake, cannonlake, cooperlake, haswell, alderlake or ggml"* ]]
}

# The same ids and logits bytes at every ISA level this CPU runs and for 1
# to 3 threads: the property that lets one machine's results be checked on
# another. Weight families: K-quants, legacy blocks, ternary, F16.
@test "--arith portable: byte-identical ids and logits under --isa scalar, avx2, avx512 and 1 to 3 threads" {
	all=$(seq -s, 0 511)
	for m in e256-llama-q4_k_m e256-llama-q5_0 e256-llama-tq1_0 e256-llama-tied-f16; do
		ref=$("$Q42RUN" -m "$TM/$m.gguf" -p "Tom and Lily went to the park." -n 16 --arith portable --isa scalar -t 1 --record |
			python3 -c 'import json,sys; r=json.loads(sys.stdin.readline()); print(r["tokens"]["generated"], r["engine"]["arith"])')
		lref=$("$Q42RUN" -m "$TM/$m.gguf" -p "Tom and Lily went to the park." --logits-for "$all" --arith portable --isa scalar)
		[[ $ref == *llamacpp ]]
		for isa in avx2 avx512; do
			for t in 1 2 3; do
				run "$Q42RUN" -m "$TM/$m.gguf" -p "Tom and Lily went to the park." -n 16 --arith portable --isa "$isa" \
					-t "$t" --record
				# a level this CPU lacks is refused when the model loads
				[ "$status" -ne 0 ] && continue
				got=$(printf '%s\n' "$output" | python3 -c 'import json,sys; r=json.loads(sys.stdin.readline()); print(r["tokens"]["generated"], r["engine"]["arith"])')
				[ "$got" = "$ref" ]
				run "$Q42RUN" -m "$TM/$m.gguf" -p "Tom and Lily went to the park." --logits-for "$all" --arith portable \
					--isa "$isa" -t "$t"
				[ "$output" = "$lref" ]
			done
		done
	done
}

@test "--arith auto (the default) names the mode it chose: llamacpp with AMX, zen4 or icelake with AVX-512, haswell with AVX2 alone" {
	run "$Q42RUN" -m "$TM/e256-llama-q8_0.gguf" -p "Once upon a time" -n 2 --record
	[ "$status" -eq 0 ]
	mode=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["engine"]["arith"])' "$output")
	# under `make check-valgrind` q42run sees valgrind's CPUID (no
	# AVX-512), not the CPU /proc/cpuinfo describes
	[ -z "${Q42_TEST_UNDER_VALGRIND:-}" ] ||
		skip "q42run runs on valgrind's CPU, not the one /proc/cpuinfo describes"
	flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
	want=llamacpp
	[[ $flags == *" avx2 "* ]] && want=haswell
	[[ $flags == *" avx512f "* ]] && want=icelake
	[[ $flags == *" avx512f "* && $flags == *" avx512_bf16 "* ]] && want=zen4
	[[ $flags == *" amx_int8 "* ]] && want=llamacpp
	[ "$mode" = "$want" ]
}

@test "--arith: llama.cpp's AVX-512 variants without AMX are zen4's bits (their digests), and their names run it" {
	cd "$G/zen4"
	for v in icelake skylakex cascadelake cannonlake cooperlake; do
		run sha256sum -c "../variants/$v.sha256"
		# every product and generation; the logits too with AVX512-BF16
		# (cooperlake), all but the BF16 model's without it
		if [ "$v" = cooperlake ]; then
			[ "$status" -eq 0 ]
			[ "$(grep -c ': OK$' <<<"$output")" -eq 35 ]
		else
			[ "$(grep -c ': OK$' <<<"$output")" -eq 34 ]
			[ "$(grep -c '^logits.tsv: FAILED' <<<"$output")" -eq 1 ]
		fi
		run "$Q42RUN" -m "$TM/e256-llama-q4_k_m.gguf" -p "Once upon a time" -n 8 --arith "$v" --record
		[ "$status" -eq 0 ]
		if [ "$v" = cooperlake ]; then
			[[ "$output" == *'"arith":"zen4"'* ]]
		else
			[[ "$output" == *'"arith":"icelake"'* ]]
		fi
	done
	# the icelake builds' logits are their own golden's
	[ "$(sed -n '$p' ../variants/icelake.sha256 | cut -d' ' -f1)" = "$(sha256sum <../icelake/logits.tsv | cut -d' ' -f1)" ]
	# haswell (AVX2): every quantized product and generation, not the F16
	# and F32 products nor the logits (its own mode)
	run sha256sum -c ../variants/haswell.sha256
	[ "$(grep -c ': OK$' <<<"$output")" -eq 28 ]
	[ "$(grep -v ': OK$' <<<"$output" | grep -c '^mm_f16_\|^mm_f32_\|^logits')" -eq 7 ]
}

# check_logits MODEL PROMPT IDS WANT [OPTION...]: q42run's logits of IDS
# (space-separated) equal WANT's strings (llama.cpp prints 9 digits, which
# tell every float apart); a PROMPT of @FILE is read from FILE
check_logits() {
	local model=$1 prompt=$2 ids=$3 want=$4 f
	shift 4
	f="$TM/$model"
	[ -f "$f" ] || f="$Q42_SRCDIR/../shared/models/$model"
	if [ "${prompt:0:1}" = @ ]; then
		run "$Q42RUN" -m "$f" -f "${prompt:1}" --logits-for "${ids// /,}" "$@"
	else
		run "$Q42RUN" -m "$f" -p "$prompt" --logits-for "${ids// /,}" "$@"
	fi
	[ "$status" -eq 0 ] || { echo "$model: exit $status: $output"; return 1; }
	got=$(cut -f2 <<<"$output" | tr '\n' ' ')
	[ "$got" = "$want " ] || { echo "$model | $prompt | $*: q42 $got, llama.cpp $want"; return 1; }
}

# check_variant MODE: every row of tests/golden/MODE/logits.tsv under
# --arith MODE at the best ISA, and its first prompt's rows under --isa
# scalar and avx2 too
check_variant() {
	local mode=$1 n=0 first
	first=$(head -1 "$G/$mode/logits.tsv" | cut -f2)
	while IFS=$'\t' read -r model prompt ids want; do
		check_logits "$model" "$prompt" "$ids" "$want" --arith "$mode"
		if [ "$prompt" = "$first" ]; then
			check_logits "$model" "$prompt" "$ids" "$want" --arith "$mode" --isa scalar
			check_logits "$model" "$prompt" "$ids" "$want" --arith "$mode" --isa avx2
		fi
		n=$((n + 1))
	done <"$G/$mode/logits.tsv"
	[ "$n" -eq 111 ]
}

@test "--arith zen4: llama.cpp zen4's top logits bit for bit on every generating model, three prompts" {
	check_variant zen4
}

@test "--arith icelake: llama.cpp icelake's top logits bit for bit on every generating model, three prompts" {
	check_variant icelake
	run "$Q42RUN" -m "$TM/e256-llama-tied-bf16.gguf" -p "Once upon a time" -n 4 --arith skylakex --record
	[ "$status" -eq 0 ]
	[[ "$output" == *'"arith":"icelake"'* ]]
}

@test "--arith haswell: llama.cpp haswell's top logits bit for bit on every generating model, three prompts" {
	check_variant haswell
	# the zen4 arithmetic does not give them: the check can fail
	IFS=$'\t' read -r model prompt ids want < <(grep -m1 '^e256-llama-tied-f16' "$G/haswell/logits.tsv")
	! check_logits "$model" "$prompt" "$ids" "$want" --arith zen4
	run "$Q42RUN" -m "$TM/e256-llama-tied-f16.gguf" -p "Once upon a time" -n 4 --arith haswell --record
	[ "$status" -eq 0 ]
	[[ "$output" == *'"arith":"haswell"'* ]]
}

# llama.cpp's sapphirerapids build is its zen4 build plus the AMX buffer:
# every function the two share is the same machine code
# (tests/tools/variant_disasm.py; docs/q42run.md). So a model none of
# whose matrices the AMX buffer takes (F32, BF16, Q5_0, Q5_1, Q2_K, Q3_K,
# IQ4_NL, TQ1_0, TQ2_0; it takes Q4_0, Q4_1, Q8_0, Q4_K, Q5_K, Q6_K, IQ4_XS
# and F16) has zen4's logits there, and --arith llamacpp must give them.
@test "--arith llamacpp: zen4's logits on the models the AMX buffer leaves alone (sapphirerapids' other code is zen4's)" {
	local n=0
	while IFS=$'\t' read -r model prompt ids want; do
		case $model in
		*-f32.gguf | *-bf16.gguf | *-q5_0.gguf | *-q5_1.gguf | *-q2_k.gguf | *-q3_k.gguf | *-iq4_nl.gguf | \
			*-tq1_0.gguf | *-tq2_0.gguf | stories260K.gguf) ;;
		*) continue ;;
		esac
		check_logits "$model" "$prompt" "$ids" "$want" --arith llamacpp
		n=$((n + 1))
	done <"$G/zen4/logits.tsv"
	[ "$n" -eq 69 ]
	# and a model the AMX buffer takes does not: the check can fail
	IFS=$'\t' read -r model prompt ids want < <(grep -m1 '^e256-llama-q8_0' "$G/zen4/logits.tsv")
	! check_logits "$model" "$prompt" "$ids" "$want" --arith llamacpp
}

# check_fa MODE: tests/golden/MODE/fa_logits.tsv (llama.cpp with flash
# attention on and its f16 cache) under --arith MODE --flash-attn on:
# the one-at-a-time form (a short prompt) and the tiled one (1,772 tokens
# in passes of 512)
check_fa() {
	local mode=$1 n=0 prompt
	while IFS=$'\t' read -r model label ids want; do
		prompt="Once upon a time"
		[ "$label" = long ] && prompt="@$G/fa/long.txt"
		check_logits "$model" "$prompt" "$ids" "$want" --arith "$mode" --flash-attn on
		n=$((n + 1))
	done <"$G/$mode/fa_logits.tsv"
	[ "$n" -eq 16 ]
}

@test "--arith zen4 and haswell --flash-attn on: llama.cpp's top logits bit for bit, both forms, head widths 8 to 64" {
	check_fa zen4
	check_fa haswell
	# haswell's forms under --isa avx2 too (the AVX-512 CPU's table runs them)
	IFS=$'\t' read -r model label ids want < <(grep -m1 $'\tlong\t' "$G/haswell/fa_logits.tsv")
	check_logits "$model" "@$G/fa/long.txt" "$ids" "$want" --arith haswell --flash-attn on --isa avx2
}
