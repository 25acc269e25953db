#!/bin/bash
# demo.sh -- the tour `./build.sh demo` (make demo) gives: one model
# through the whole toolchain, one titled line per step: make or take a
# model, compile, validate, then examples/pipeline.sh (run, filter,
# commit, verify, prove) with examples/policy.json and facts.nq.
#
#   demo.sh BUILDDIR SRCDIR DEMODIR PROMPT [MODEL.gguf]
#
# Everything is written under DEMODIR, made afresh. tests/bats/demo.bats
# runs it and checks its lines.
set -euo pipefail

build=$1 src=$(cd "$2" && pwd -P) dir=$3 prompt=$4 model=${5:-}
for p in p64c p64check q42run q42grd q42wal; do
	PATH="$build/bin/$p:$PATH"
done
export PATH
step() {
	local t=$1
	shift
	printf '%-9s %s\n' "$t" "$*"
}

rm -rf "$dir"
mkdir -p "$dir"
echo "q42 demo: one model through the whole toolchain (files in $dir/)"
if [ -z "$model" ]; then
	model=$dir/demo.gguf
	"$build/tests/tools/gen_demo" "$model"
	step model "demo.gguf: a tiny llama model, real SentencePiece vocabulary, random weights (so its text is noise)"
else
	step model "$(basename "$model") (yours: $model)"
fi

# Compile, signed with a fresh Ed25519 key (openssl), and validate.
openssl genpkey -algorithm ed25519 -out "$dir/signer.pem" 2>/dev/null
openssl pkey -in "$dir/signer.pem" -pubout -out "$dir/signer.pub"
p64c --no-progress --sign="$dir/signer.pem" "$model" -o "$dir/model.p64" 2>"$dir/p64c.log"
n_tensors=$(p64check --tensors "$dir/model.p64" | tail -n +2 | wc -l)
step compile "p64c: $(basename "$model") -> model.p64 ($(stat -c %s "$dir/model.p64") bytes, $n_tensors tensors), signed with a new Ed25519 key"
verdict=$(p64check --against "$model" --verify "$dir/signer.pub" "$dir/model.p64")
checks=$(printf '%s' "$verdict" | cut -f6 | sed 's/crc32c/every CRC-32C/; s/ed25519/signature/;
	s/against/same bytes as '"$(basename "$model")"'/; s/,/, /g')
step validate "p64check: model.p64 $(printf '%s' "$verdict" | cut -f2) ($checks)"

# run | filter | commit, verify, prove: the example pipeline. The second
# prompt carries an e-mail address, which examples/policy.json keeps in.
rc=0
"$src/examples/pipeline.sh" -k "$dir/signer.pem" -K "$dir/signer.pub" "$dir/model.p64" \
	"$dir/vol.q42" "$prompt" "Send the story to bob@example.org" "The little dog ran to the park" || rc=$?
[ "$rc" -le 1 ] || exit "$rc"

step next "examples/README.md has these steps as files to copy (policy, facts, Makefile, CI);"
step "" "man -l man/q42run.1 (and p64c, p64check, q42grd, q42wal) explains every option;"
step "" "./build.sh demo MODEL.gguf runs this on your model; ./build.sh check runs the tests."
