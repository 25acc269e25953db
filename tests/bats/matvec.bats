#!/usr/bin/env bats
# matvec.bats -- p64check --matvec: one tensor times a vector, against
# llama.cpp's own products of the same bytes (tests/golden/llamacpp from
# its sapphirerapids variant, tests/golden/zen4 from its zen4 variant; each
# README says how they were made), and its refusals.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	P64CHECK=$(q42_bin p64check)
	G="$Q42_SRCDIR/tests/golden"
	T="$BATS_TEST_TMPDIR"
}

# wrap W SHAPE TYPE OUT: a GGUF holding the raw blocks of W as tensor "w"
# of ggml type TYPE and shape SHAPE (comma-separated, fastest first)
wrap() {
	python3 - "$@" <<'PY'
import struct, sys
w, shape, typ, out = open(sys.argv[1], "rb").read(), [int(d) for d in sys.argv[2].split(",")], int(sys.argv[3]), sys.argv[4]
h = b"GGUF" + struct.pack("<IQQ", 3, 1, 0)
h += struct.pack("<Q", 1) + b"w" + struct.pack("<I", len(shape)) + b"".join(struct.pack("<Q", d) for d in shape)
h += struct.pack("<IQ", typ, 0)
h += b"\0" * (-len(h) % 32)
open(out, "wb").write(h + w)
PY
}

# same_bits GOT.tsv WANT.f32: the listing's values are WANT's, bit for bit
same_bits() {
	python3 - "$1" "$2" <<'PY'
import struct, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()[1:]]
want = open(sys.argv[2], "rb").read()
want = struct.unpack("<%df" % (len(want) // 4), want)
assert len(rows) == len(want), (len(rows), len(want))
for i, (r, v) in enumerate(rows):
    assert int(r) == i
    got = struct.pack("<f", float(v)); exp = struct.pack("<f", want[i])
    assert got == exp, "row %d: %s, llama.cpp %r" % (i, v, want[i])
PY
}

@test "--matvec: Q8_0, Q4_K, Q6_K and Q5_K products are llama.cpp's bits under --arith llamacpp and zen4" {
	head -c 2048 "$G/llamacpp/x.f32" >"$T/x.f32"
	for c in q8_0:8:cpu q4_K:12:repack q6_K:14:cpu q5_K:13:cpu; do
		IFS=: read -r t id buf <<<"$c"
		wrap "$G/llamacpp/w_$t.bin" 512,64 "$id" "$T/$t.gguf"
		"$P64CHECK" --matvec w "$T/x.f32" --arith zen4 "$T/$t.gguf" >"$T/z.tsv"
		same_bits "$T/z.tsv" "$G/zen4/mm_${t}_${buf}_m1.f32"
		"$P64CHECK" --matvec w "$T/x.f32" --arith icelake "$T/$t.gguf" >"$T/i.tsv"
		cmp "$T/z.tsv" "$T/i.tsv"
		"$P64CHECK" --matvec w "$T/x.f32" --arith llamacpp "$T/$t.gguf" >"$T/s.tsv"
		same_bits "$T/s.tsv" "$G/llamacpp/mm_${t}_m1.f32"
	done
}

@test "--matvec: a stack of matrices (3-D, as MoE experts) is one matrix of all their rows; x from stdin; --json" {
	head -c 2048 "$G/llamacpp/x.f32" >"$T/x.f32"
	wrap "$G/llamacpp/w_q8_0.bin" 512,32,2 8 "$T/e.gguf"
	"$P64CHECK" --matvec w - --arith zen4 "$T/e.gguf" <"$T/x.f32" >"$T/e.tsv"
	same_bits "$T/e.tsv" "$G/zen4/mm_q8_0_cpu_m1.f32"
	run "$P64CHECK" --matvec w "$T/x.f32" --arith zen4 --json "$T/e.gguf"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$output" | wc -l)" -eq 64 ]
	[[ ${lines[0]} == '{"row":0,"value":'* ]]
}

@test "--matvec: x of the wrong length, a NaN in x, a missing tensor or X are refused with a message" {
	head -c 2048 "$G/llamacpp/x.f32" >"$T/x.f32"
	wrap "$G/llamacpp/w_q8_0.bin" 512,64 8 "$T/m.gguf"
	head -c 2044 "$T/x.f32" >"$T/short.f32"
	run "$P64CHECK" --matvec w "$T/short.f32" "$T/m.gguf"
	[ "$status" -eq 1 ]
	[[ $output == *"x has 511 values; tensor w has rows of 512"* ]]
	head -c 2047 "$T/x.f32" >"$T/odd.f32"
	run "$P64CHECK" --matvec w "$T/odd.f32" "$T/m.gguf"
	[ "$status" -eq 1 ]
	[[ $output == *"2047 bytes: expected a whole number of float32 values"* ]]
	python3 -c 'import struct,sys; d=bytearray(open(sys.argv[1],"rb").read()); d[40:44]=struct.pack("<f",float("inf")); open(sys.argv[2],"wb").write(d)' "$T/x.f32" "$T/inf.f32"
	run "$P64CHECK" --matvec w "$T/inf.f32" "$T/m.gguf"
	[ "$status" -eq 1 ]
	[[ $output == *"x[10] is inf: expected a finite value"* ]]
	run "$P64CHECK" --matvec nope "$T/x.f32" "$T/m.gguf"
	[ "$status" -eq 1 ]
	[[ $output == *'no tensor named "nope"'* ]]
	run "$P64CHECK" --matvec w
	[ "$status" -eq 2 ]
	run "$P64CHECK" --arith zen4 --tensors "$T/m.gguf"
	[ "$status" -eq 2 ]
	[[ $output == *"--arith goes with --matvec"* ]]
}
