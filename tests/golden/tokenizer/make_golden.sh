#!/bin/sh
# make_golden.sh -- regenerate the tokenizer golden files with llama.cpp.
#
# Every *.out file here is output of llama.cpp (llamapeer, see
# shared/tools/llamapeer/README.md), never of q42. Inputs (extra.inp,
# lines.txt) are hand-written. Run from anywhere:
#   PEER_DIR=/work/peer sh tests/golden/tokenizer/make_golden.sh
# It needs shared/vocab (Q42_TEST_VOCAB) and python3 for the GGUF patch.
#
#  <vocab>.pre-<pre>.out llamapeer tokfile <vocab with tokenizer.ggml.pre=<pre>> extra.inp --vocab-test
#                      (no BOS, no special parsing; the .gguf copy differs from the shared one
#                      only in that string, patched by the python below)
#  <vocab>.<mode>.out  llamapeer tokfile <vocab> lines.txt [--no-bos] [--no-special]
#                      mode: bos-special (no flag), nobos-special (--no-bos),
#                      bos-nospecial (--no-special)
#  <vocab>.mixed.out   llamapeer tokfile <vocab> mixed.txt (gemma-4 and nomic-bert-moe;
#                      mixed.txt is written by make_mixed.py)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
PEER_DIR=${PEER_DIR:-$HOME/.cache/q42-peer}
LP=$PEER_DIR/bin/llamapeer
VOCAB=${Q42_TEST_VOCAB:-$here/../../../../shared/vocab}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

patch_pre() { # in out pre
	python3 - "$1" "$2" "$3" <<'PY'
import struct, sys
src, dst, pre = sys.argv[1], sys.argv[2], sys.argv[3].encode()
b = open(src, "rb").read()
assert b[:4] == b"GGUF" and struct.unpack_from("<Q", b, 8)[0] == 0, "expects a vocab-only GGUF"
key = b"tokenizer.ggml.pre"
pat = struct.pack("<Q", len(key)) + key + struct.pack("<I", 8)
i = b.index(pat) + len(pat)
n = struct.unpack_from("<Q", b, i)[0]
open(dst, "wb").write(b[:i] + struct.pack("<Q", len(pre)) + pre + b[i + 8 + n:])
PY
}

for v in gpt-2 qwen2; do
	for pre in default gpt-2 llama-bpe dbrx qwen2 qwen35 bailingmoe deepseek-llm deepseek-coder \
		deepseek-v3 falcon starcoder command-r poro-chat viking laguna afmoe; do
		patch_pre "$VOCAB/ggml-vocab-$v.gguf" "$tmp/v.gguf" "$pre"
		"$LP" tokfile "$tmp/v.gguf" "$here/extra.inp" --vocab-test > "$here/$v.pre-$pre.out"
	done
done
for v in llama-spm llama-bpe qwen2 gpt-2 gemma-4 nomic-bert-moe; do
	"$LP" tokfile "$VOCAB/ggml-vocab-$v.gguf" "$here/lines.txt" > "$here/$v.bos-special.out"
	"$LP" tokfile "$VOCAB/ggml-vocab-$v.gguf" "$here/lines.txt" --no-bos > "$here/$v.nobos-special.out"
	"$LP" tokfile "$VOCAB/ggml-vocab-$v.gguf" "$here/lines.txt" --no-special > "$here/$v.bos-nospecial.out"
	"$LP" tokfile "$VOCAB/ggml-vocab-$v.gguf" "$here/extra.inp" --vocab-test > "$here/$v.extra.out"
done
python3 "$here/make_mixed.py" > "$here/mixed.txt"
for v in gemma-4 nomic-bert-moe; do
	"$LP" tokfile "$VOCAB/ggml-vocab-$v.gguf" "$here/mixed.txt" > "$here/$v.mixed.out"
done
