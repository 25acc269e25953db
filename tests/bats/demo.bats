#!/usr/bin/env bats
# demo.bats -- the embedded demo model: generated deterministically, and run
# through p64c, p64check and q42run with llama.cpp's greedy ids
# (tests/golden/engine/demo.tsv says how those were produced).

load helpers

setup() {
	GEN="$Q42_BUILDDIR/tests/tools/gen_demo"
	P64C=$(q42_bin p64c)
	P64CHECK=$(q42_bin p64check)
	Q42RUN=$(q42_bin q42run)
	TMP=$(mktemp -d)
}

teardown() {
	rm -rf "$TMP"
}

ids_of() { # ids_of RECORD-LINE FIELD
	python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(" ".join(map(str, r["tokens"][sys.argv[2]])))' "$1" "$2"
}

@test "gen_demo writes the same bytes every time" {
	"$GEN" "$TMP/a.gguf"
	"$GEN" "$TMP/b.gguf"
	cmp "$TMP/a.gguf" "$TMP/b.gguf"
}

@test "demo model: greedy ids equal llama.cpp's, from GGUF and from P64, 1 and 2 threads" {
	"$GEN" "$TMP/demo.gguf"
	"$P64C" --no-progress "$TMP/demo.gguf" -o "$TMP/demo.p64"
	run "$P64CHECK" --against "$TMP/demo.gguf" "$TMP/demo.p64"
	[ "$status" -eq 0 ]
	n=0
	while IFS=$'\t' read -r prompt pids oids; do
		case $prompt in '#'*) continue ;; esac
		for model in "$TMP/demo.gguf" "$TMP/demo.p64"; do
			for t in 1 2; do
				rec=$("$Q42RUN" -m "$model" -p "$prompt" -n 32 -t "$t" --record)
				[ "$(ids_of "$rec" prompt)" = "$pids" ]
				[ "$(ids_of "$rec" generated)" = "$oids" ]
				n=$((n + 1))
			done
		done
	done < "$Q42_SRCDIR/tests/golden/engine/demo.tsv"
	[ "$n" -eq 8 ]
}

# --ignore-eos (q42run(1)): the demo model, sampled with seed 4, ends at EOS
# after 35 tokens; told to ignore EOS, the same request runs to -n and no
# generated id is an end-of-generation id. Greedy on a prompt that never
# reaches EOS, the flag changes nothing.
@test "q42run --ignore-eos: a request that stops at EOS goes on to the requested count" {
	"$GEN" "$TMP/demo.gguf"
	eos=$("$Q42RUN" -m "$TMP/demo.gguf" --tokenize --no-bos -p '</s>')
	[ "$eos" = 2 ]
	sample=(--temp 1.5 --top-k 0 --top-p 1 --min-p 0 --seed 4 -n 64 --record)
	rec=$("$Q42RUN" -m "$TMP/demo.gguf" -p "Once upon a time" "${sample[@]}")
	[ "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["stop"])' "$rec")" = eos ]
	n=$(ids_of "$rec" generated | wc -w)
	[ "$n" -lt 64 ]
	rec=$("$Q42RUN" -m "$TMP/demo.gguf" -p "Once upon a time" "${sample[@]}" --ignore-eos)
	python3 - "$rec" "$eos" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
assert r["stop"] == "max_tokens", r["stop"]
assert r["counts"]["generated"] == 64, r["counts"]
assert int(sys.argv[2]) not in r["tokens"]["generated"]
assert r["limits"]["ignore_eos"] is True
PY
	a=$("$Q42RUN" -m "$TMP/demo.gguf" -p "Once upon a time" -n 32 --record)
	b=$("$Q42RUN" -m "$TMP/demo.gguf" -p "Once upon a time" -n 32 --record --ignore-eos)
	[ "$(ids_of "$a" generated)" = "$(ids_of "$b" generated)" ]
	run "$Q42RUN" -m "$TMP/demo.gguf" -p x --ignore-eos --tokenize
	[ "$status" -eq 2 ]
}

# The tour of `./build.sh demo` (tests/tools/demo.sh): every step of the
# toolchain, one titled line each, in order, the blocked prompt blocked
# and the proof checked, then where to go next.
@test "make demo: compile, validate, run, filter, commit, verify, prove, one titled line each" {
	need_cmd openssl
	run bash "$Q42_SRCDIR/tests/tools/demo.sh" "$Q42_BUILDDIR" "$Q42_SRCDIR" "$TMP/d" \
		"Once upon a time, the little dog"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 12 ]
	[ "$(printf '%s\n' "${lines[@]:1}" | cut -c1-9 | tr -d ' ' | paste -sd,)" = \
		model,compile,validate,run,filter,commit,verify,prove,next,, ]
	[[ ${lines[3]} == *"model.p64 OK (structure, every CRC-32C, signature, same bytes as demo.gguf)" ]]
	[[ ${lines[5]} == *"2 passed, 1 blocked (egress:"* ]]
	[[ ${lines[7]} == *"4 frames, 3 entries, root "*"records bound to the model, tree head signed" ]]
	[[ ${lines[8]} == *"entry 2 is in that tree"*"checked by check-proof.sh"* ]]
	"$Q42_SRCDIR/examples/check-proof.sh" "$TMP/d/proof.json" "$TMP/d/head.json"
	"$P64CHECK" --against "$TMP/d/demo.gguf" "$TMP/d/model.p64"
}
