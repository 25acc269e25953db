#!/usr/bin/env bats
# p64c.bats -- every option and every exit status of p64c(1).
#
# The reference for --to-gguf is the original GGUF itself (cmp), for digests
# sha256sum, for signatures the openssl command line: nothing expected here
# is computed by libq42.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	P64C=$(q42_bin p64c)
	P64CHECK=$(q42_bin p64check)
	T="$BATS_TEST_TMPDIR"
	GOLDEN="$Q42_SRCDIR/tests/golden/gguf-py"
}

# ---- generic options ------------------------------------------------------

@test "p64c --help lists every option and exits 0" {
	run -0 "$P64C" --help
	for opt in --output --page-log2 --to-gguf --type --profile --sign --progress \
		--no-progress --json --help --version; do
		[[ "$output" == *"$opt"* ]] || { echo "help lacks $opt"; return 1; }
	done
}

@test "p64c --version prints the package version" {
	run -0 "$P64C" --version
	[[ "$output" =~ ^p64c\ \(q42\)\ [0-9]+\.[0-9]+ ]]
}

@test "p64c: usage errors exit 2 and write nothing" {
	local m
	need_model m stories260K.gguf
	cd "$T"
	run -2 "$P64C"
	[[ "$output" == *"no INPUT"* ]]
	run -2 "$P64C" "$m" "$m"
	run -2 "$P64C" --no-such-option "$m"
	run -2 "$P64C" "$m" -o
	run -2 "$P64C" --sign key.pem "$m" -o -
	run -2 "$P64C" --to-gguf --page-log2 13 x.p64
	cp "$m" in.gguf
	run -2 "$P64C" in.gguf -o in.gguf
	# never renamed over something that is not a regular file
	mkdir dir
	mkfifo fifo
	run -2 "$P64C" in.gguf -o dir
	run -2 "$P64C" in.gguf -o fifo
	[ -p fifo ] && [ -d dir ]
	only_files "$T" in.gguf dir fifo
}

@test "p64c --page-log2 out of range or not a number exits 2, no output" {
	local m n
	need_model m stories260K.gguf
	for n in 11 22 0 -1 abc 12x ""; do
		run -2 "$P64C" --page-log2 "$n" "$m" -o "$T/x.p64"
		[[ "$output" == *"--page-log2"* ]]
	done
	only_files "$T"
}

@test "p64c --page-log2: blobs are aligned to the page asked for" {
	local m n
	need_model m stories260K.gguf
	for n in 12 16 21; do
		"$P64C" --page-log2 "$n" "$m" -o "$T/p$n.p64"
		run -0 "$P64CHECK" --header "$T/p$n.p64"
		[[ "$output" == *"page_log2	$n"* ]]
		"$P64CHECK" --tensors "$T/p$n.p64" | tail -n +2 |
			awk -F'\t' -v page=$((1 << n)) '$4 % page != 0 { bad = 1 } END { exit bad }'
		"$P64CHECK" --against "$m" "$T/p$n.p64"
	done
	! cmp -s "$T/p12.p64" "$T/p16.p64"
}

# ---- compile, validate, rebuild --------------------------------------------

@test "p64c: every shared GGUF compiles, validates, and rebuilds byte-identical" {
	need_ggufs
	local f b
	for f in "${GGUFS[@]}"; do
		b=$(basename "$f" .gguf)
		"$P64C" --no-progress "$f" -o "$T/$b.p64" 2>"$T/$b.err"
		run -0 "$P64CHECK" --against "$f" "$T/$b.p64"
		[[ "$output" == *"	OK	p64 v3	"* ]]
		# What gguf-py reads from the source, p64check reads from the P64.
		"$P64CHECK" --metadata "$T/$b.p64" | diff -u "$GOLDEN/$b.metadata.tsv" -
		"$P64CHECK" --tensors "$T/$b.p64" | cut -f1-3,5,9 |
			diff -u <(awk -F'\t' -v OFS='\t' '{ print $1, $2, $3, $5, NR == 1 ? "source_offset" : $4 }' \
				"$GOLDEN/$b.tensors.tsv") -
		"$P64C" --to-gguf "$T/$b.p64" -o "$T/$b.gguf"
		cmp "$f" "$T/$b.gguf"
		rm -f "$T/$b.p64" "$T/$b.gguf"
	done
}

@test "p64c: the quantized fixture compiles (warnings, no hparams) and rebuilds" {
	local q="$GOLDEN/quant-tiny.gguf"
	run -0 --separate-stderr "$P64C" "$q" -o "$T/q.p64"
	[[ "$stderr" == *"warning"* ]]
	"$P64CHECK" --against "$q" "$T/q.p64"
	"$P64CHECK" --tensors "$T/q.p64" | cut -f1-3,5 | diff -u <(cut -f1-3,5 "$GOLDEN/quant-tiny.tensors.tsv") -
	"$P64C" --to-gguf "$T/q.p64" -o "$T/q.gguf"
	cmp "$q" "$T/q.gguf"
}

@test "p64c: compiling twice gives identical bytes" {
	local m
	need_model m tiny-llama-spm-f32.gguf
	"$P64C" "$m" -o "$T/a.p64"
	"$P64C" "$m" -o "$T/b.p64"
	cmp "$T/a.p64" "$T/b.p64"
}

@test "p64c: default output replaces .gguf by .p64 (and --to-gguf the reverse)" {
	local m
	need_model m stories260K.gguf
	cp "$m" "$T/model.gguf"
	run -0 "$P64C" "$T/model.gguf"
	[ -f "$T/model.p64" ]
	mv "$T/model.gguf" "$T/orig.gguf"
	run -0 "$P64C" --to-gguf "$T/model.p64"
	cmp "$T/model.gguf" "$T/orig.gguf"
	cp "$m" "$T/weights.bin"
	run -0 "$P64C" "$T/weights.bin"
	[ -f "$T/weights.bin.p64" ]
}

@test "p64c: the input format is told by magic bytes, not the name" {
	local m
	need_model m stories260K.gguf
	cp "$m" "$T/looks-like.p64"
	"$P64C" "$T/looks-like.p64" -o "$T/real.p64"
	"$P64CHECK" --against "$m" "$T/real.p64"
	cp "$T/real.p64" "$T/looks-like.gguf"
	run -1 "$P64C" "$T/looks-like.gguf" -o "$T/again.p64"
	[[ "$output" == *"already P64"*"--to-gguf"* ]]
	run -1 "$P64C" --to-gguf "$T/looks-like.p64" -o "$T/x.gguf"
	[[ "$output" == *"needs a P64"* ]]
	[ ! -e "$T/again.p64" ] && [ ! -e "$T/x.gguf" ]
}

@test "p64c: stdin '-' and '-o -' give the same bytes as files" {
	local m
	need_model m stories260K.gguf
	"$P64C" "$m" -o "$T/file.p64"
	"$P64C" - -o "$T/stdin.p64" <"$m"
	cmp "$T/file.p64" "$T/stdin.p64"
	# stdout to a file (seekable) and through a pipe (not seekable)
	"$P64C" "$m" -o - >"$T/stdout.p64"
	cmp "$T/file.p64" "$T/stdout.p64"
	cat "$m" | "$P64C" - -o - | cat >"$T/pipe.p64"
	cmp "$T/file.p64" "$T/pipe.p64"
	# '-' alone writes to stdout
	"$P64C" - <"$m" | cmp - "$T/file.p64"
	"$P64C" --to-gguf - -o - <"$T/file.p64" | cmp - "$m"
}

# ---- --json ---------------------------------------------------------------------

@test "p64c --json: a summary on stdout with counts, sizes and digests" {
	local m
	need_model m stories260K.gguf
	run -0 --separate-stderr "$P64C" --json "$m" -o "$T/s.p64"
	printf '%s\n' "$output" | json_lines
	printf '%s\n' "$output" | python3 -c '
import json, sys
j = json.load(sys.stdin)
src, out, size = sys.argv[1:4]
assert j["mode"] == "gguf-to-p64" and j["tensors"] == 48, j
assert j["input_bytes"] == 1185376 and j["output_bytes"] == int(size), j
assert j["sha256"]["input"] == src and j["sha256"]["output"] == out, j
assert j["page_log2"] == 12 and j["signature"] is None, j
assert all(j["timings_ms"][k] >= 0 for k in ("read", "write", "sign", "total")), j
' "$(sha256sum "$m" | cut -d' ' -f1)" "$(sha256sum "$T/s.p64" | cut -d' ' -f1)" \
		"$(stat -c %s "$T/s.p64")"
	run -0 --separate-stderr "$P64C" --json --to-gguf "$T/s.p64" -o "$T/s.gguf"
	printf '%s\n' "$output" | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["mode"] == "p64-to-gguf" and j["sha256"]["output"] == sys.argv[1], j
' "$(sha256sum "$m" | cut -d' ' -f1)"
}

@test "p64c --json with -o -: the summary goes to stderr, stdout is the P64" {
	local m
	need_model m stories260K.gguf
	"$P64C" "$m" -o "$T/ref.p64"
	"$P64C" --json "$m" -o - >"$T/out.p64" 2>"$T/summary"
	cmp "$T/ref.p64" "$T/out.p64"
	json_lines <"$T/summary"
}

# ---- --progress ------------------------------------------------------------------

@test "p64c --progress draws on stderr; --no-progress is silent; bytes unchanged" {
	local m
	need_model m stories260K.gguf
	run -0 --separate-stderr "$P64C" --progress "$m" -o "$T/a.p64"
	[[ "$stderr" == *"100.0%"* ]]
	run -0 --separate-stderr "$P64C" --no-progress "$m" -o "$T/b.p64"
	[ -z "$stderr" ]
	cmp "$T/a.p64" "$T/b.p64"
	"$P64C" --progress "$m" -o - 2>/dev/null | cat >"$T/c.p64"
	cmp "$T/a.p64" "$T/c.p64"
}

# ---- --sign ----------------------------------------------------------------------

@test "p64c --sign: openssl verifies the signature, p64check --verify too; tampering fails" {
	local m
	need_cmd openssl
	need_model m stories260K.gguf
	openssl genpkey -algorithm ed25519 -out "$T/key.pem"
	openssl pkey -in "$T/key.pem" -pubout -out "$T/pub.pem"
	run -0 --separate-stderr "$P64C" --json --sign "$T/key.pem" "$m" -o "$T/s.p64"
	[ "$(stat -c %s "$T/s.p64.sig")" -eq 64 ]
	[[ "$output" == *"\"signature\":\"$T/s.p64.sig\""* ]]
	openssl pkeyutl -verify -pubin -inkey "$T/pub.pem" -rawin -in "$T/s.p64" \
		-sigfile "$T/s.p64.sig"
	run -0 "$P64CHECK" --verify "$T/pub.pem" "$T/s.p64"
	[[ "$output" == *"ed25519" ]]
	cp "$T/s.p64.sig" "$T/good.sig"
	flip_byte "$T/s.p64.sig" 40
	run -1 "$P64CHECK" --verify "$T/pub.pem" "$T/s.p64"
	cp "$T/good.sig" "$T/s.p64.sig"
	cp "$T/s.p64" "$T/t.p64"
	cp "$T/good.sig" "$T/t.p64.sig"
	flip_byte "$T/t.p64" 100000
	run -1 "$P64CHECK" --verify "$T/pub.pem" "$T/t.p64"
	# Ed25519 is deterministic: signing the same bytes again gives the same .sig.
	"$P64C" --sign "$T/key.pem" "$m" -o "$T/u.p64"
	cmp "$T/good.sig" "$T/u.p64.sig"
}

@test "p64c --sign with a missing or wrong key: I/O (3) or invalid (1), no output" {
	local m
	need_model m stories260K.gguf
	mkdir "$T/out"
	run -3 "$P64C" --sign "$T/none.pem" "$m" -o "$T/out/s.p64"
	only_files "$T/out"
	printf 'not a key\n' >"$T/bad.pem"
	run -1 "$P64C" --sign "$T/bad.pem" "$m" -o "$T/out/s.p64"
	only_files "$T/out"
}

# ---- failures leave nothing --------------------------------------------------------

@test "p64c: invalid input exits 1 and leaves no output or temporary file" {
	local m
	need_model m stories260K.gguf
	mkdir "$T/out"
	printf 'hello\n' >"$T/junk"
	run -1 "$P64C" "$T/junk" -o "$T/out/x.p64"
	[[ "$output" == *"magic"* ]]
	head -c 50000 "$m" >"$T/short.gguf"
	run -1 "$P64C" "$T/short.gguf" -o "$T/out/x.p64"
	: >"$T/empty"
	run -1 "$P64C" "$T/empty" -o "$T/out/x.p64"
	only_files "$T/out"
	# A corrupted P64 is refused by --to-gguf.
	"$P64C" "$m" -o "$T/s.p64"
	flip_byte "$T/s.p64" 200000
	run -1 "$P64C" --to-gguf "$T/s.p64" -o "$T/out/x.gguf"
	[[ "$output" == *"CRC-32C"* ]]
	only_files "$T/out"
}

@test "p64c: an existing output is left untouched when compiling fails" {
	printf 'old contents\n' >"$T/x.p64"
	printf 'junk\n' >"$T/junk"
	run -1 "$P64C" "$T/junk" -o "$T/x.p64"
	[ "$(cat "$T/x.p64")" = "old contents" ]
}

@test "p64c: unreadable input or unwritable output is an I/O error (3)" {
	local m
	need_model m stories260K.gguf
	run -3 "$P64C" "$T/missing.gguf" -o "$T/x.p64"
	[[ "$output" == *"missing.gguf"* ]]
	run -3 "$P64C" "$m" -o "$T/no/such/dir/x.p64"
	# A folder is a Hugging Face input: one without weights is invalid (1).
	run -1 "$P64C" "$T" -o "$T/x.p64"
	[[ "$output" == *"no weights"* ]]
}

# ---- man page and completions ------------------------------------------------

@test "p64c: man page, bash and zsh completions know every option of --help" {
	local opts o
	opts=$("$P64C" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
	[ -n "$opts" ]
	for o in $opts; do
		grep -q -- "${o//-/\\\\-}" "$Q42_SRCDIR/man/p64c.1" || { echo "man lacks $o"; return 1; }
		grep -q -- "$o" "$Q42_SRCDIR/completions/_p64c" || { echo "zsh lacks $o"; return 1; }
	done
	run -0 bash -c '
		source "$1/completions/p64c"
		COMP_WORDS=(p64c --); COMP_CWORD=1; _p64c; printf "%s\n" "${COMPREPLY[@]}"
	' _ "$Q42_SRCDIR"
	for o in $opts; do
		[[ $'\n'"$output"$'\n' == *$'\n'"$o"$'\n'* ]] || { echo "bash lacks $o"; return 1; }
	done
	run -0 bash -c '
		source "$1/completions/p64c"
		COMP_WORDS=(p64c --page-log2 ""); COMP_CWORD=2; _p64c; printf "%s\n" "${COMPREPLY[@]}"
	' _ "$Q42_SRCDIR"
	[ "${#lines[@]}" -eq 10 ]
}

# ---- Safetensors, Hugging Face folders and archives --------------------------
#
# tests/golden/hf holds stories260K.gguf exported by tests/tools/export_hf.py
# (gguf-py + numpy, see tests/golden/hf/README). The reference for a compiled
# folder is the GGUF itself: q42run must give the same greedy ids from both.

hf_setup() {
	HF="$Q42_SRCDIR/tests/golden/hf"
	Q42RUN=$(q42_bin q42run)
}

# greedy_ids MODEL: the 32 greedy ids q42run generates for a fixed prompt.
greedy_ids() {
	"$Q42RUN" -m "$1" -p "Once upon a time" -n 32 -t 1 --record |
		python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["tokens"]["generated"])'
}

@test "p64c: an HF folder, its shards and each archive type give one P64 that runs like the GGUF" {
	local m a want
	need_model m stories260K.gguf
	need_cmd zip
	hf_setup
	want=$(greedy_ids "$m")
	[ -n "$want" ]
	run -0 --separate-stderr "$P64C" --no-progress "$HF/stories260K" -o "$T/dir.p64"
	[ -z "$stderr" ]
	"$P64CHECK" "$T/dir.p64"
	[ "$(greedy_ids "$T/dir.p64")" = "$want" ]
	"$P64C" --no-progress "$HF/stories260K-sharded" -o "$T/sharded.p64"
	[ "$(greedy_ids "$T/sharded.p64")" = "$want" ]
	# archives are read in place, with or without a top folder
	tar -C "$HF" -cf "$T/m.tar" stories260K
	tar -C "$HF" -czf "$T/m.tar.gz" stories260K
	tar -C "$HF" --zstd -cf "$T/m.tar.zst" stories260K
	(cd "$HF/stories260K" && zip -q -r "$T/m.zip" .)
	tar -C "$HF" -czf "$T/s.tar.gz" stories260K-sharded
	for a in m.tar m.tar.gz m.tar.zst m.zip; do
		"$P64C" --no-progress "$T/$a" -o "$T/$a.p64"
		cmp "$T/dir.p64" "$T/$a.p64"
	done
	"$P64C" --no-progress "$T/s.tar.gz" -o "$T/s.p64"
	[ "$(greedy_ids "$T/s.p64")" = "$want" ]
	# the default output name drops the archive suffix
	(cd "$T" && "$P64C" --no-progress m.tar.gz && [ -f m.p64 ])
}

# same_tensors FOLDER GGUF NAME MIN: both compiled (T/NAME-hf.p64,
# T/NAME.p64) hold the same tensors (name, type, shape, CRC-32C of the
# bytes), more than MIN of them.
same_tensors() {
	"$P64C" --no-progress "$1" -o "$T/$3-hf.p64"
	"$P64C" --no-progress "$2" -o "$T/$3.p64"
	"$P64CHECK" --tensors "$T/$3-hf.p64" | cut -f1-3,8 | sort > "$T/hf.tsv"
	"$P64CHECK" --tensors "$T/$3.p64" | cut -f1-3,8 | sort > "$T/gguf.tsv"
	[ "$(wc -l < "$T/gguf.tsv")" -gt "$4" ]
	diff "$T/hf.tsv" "$T/gguf.tsv"
}

# qwen3, gemma3 ("+1" norms), lfm2 (conv.weight squeezed), lfm2moe
# (one tensor per expert, stacked by p64c) and phi3 (fused qkv_proj and
# gate_up_proj, LongRoPE factors made from config.json) exported by
# tests/tools/export_hf.py from tests/models/a64-*-f32.gguf: the folder's
# P64 holds the GGUF's tensors (name, type, shape, CRC-32C of the bytes)
# and runs to the GGUF's ids.
@test "p64c: qwen3, gemma3, lfm2, lfm2moe and phi3 HF folders give the GGUF's tensors and ids" {
	hf_setup
	for m in a64-qwen3-hd24 a64-gemma3-swa a64-lfm2 a64-lfm2moe-e8k2 a64-phi3-long; do
		same_tensors "$HF/$m" "$Q42_SRCDIR/tests/models/$m-f32.gguf" "$m" 10
		[ "$(greedy_ids "$T/$m-hf.p64")" = "$(greedy_ids "$T/$m.p64")" ]
	done
	# one expert's tensor taken out: refused with the stack and expert named
	cp -r "$HF/a64-lfm2moe-e8k2" "$T/bad"
	python3 - "$T/bad/model.safetensors" <<'PY'
import json, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h, data = json.loads(b[8:8 + n]), b[8 + n:]
out, blobs, off = {"__metadata__": h.pop("__metadata__")}, [], 0
for k, v in h.items():
    if k != "model.layers.1.feed_forward.experts.5.w1.weight":
        s, e = v["data_offsets"]
        blobs.append(data[s:e])
        out[k] = dict(v, data_offsets=[off, off + e - s])
        off += e - s
hj = json.dumps(out, separators=(",", ":")).encode()
hj += b" " * ((8 - len(hj) % 8) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(hj)) + hj + b"".join(blobs))
PY
	run "$P64C" --no-progress "$T/bad" -o "$T/bad.p64"
	[ "$status" -eq 1 ]
	[[ "$output" == *"blk.1.ffn_gate_exps.weight: expert 5 of 8"* ]]
	[ ! -e "$T/bad.p64" ]
}

# hpar P64: the bytes of its HPAR section (the hyperparameters), as hex,
# found through p64check --header's section table.
hpar() {
	local sec
	sec=$("$P64CHECK" --header "$1" | awk -F'\t' '$1 == "section.HPAR" { print $2 }')
	python3 - "$1" "$sec" <<'PY'
import sys
f = dict(x.split("=") for x in sys.argv[2].split())
with open(sys.argv[1], "rb") as fp:
    fp.seek(int(f["offset"]))
    print(fp.read(int(f["length"])).hex())
PY
}

# The synthetic encoders of ../shared/models exported as sentence-transformers
# folders by tests/tools/export_hf.py (standard library only): the folder's
# P64 holds the GGUF's tensors (bytes included) and hyperparameters, and
# embeds to the GGUF's vectors, bit for bit.
@test "p64c: bert, nomic-bert, EmbeddingGemma and LFM2-ColBERT HF folders give the GGUF's tensors, hyperparameters and vectors" {
	local m g a b digest text="The little dog's café, naïve résumé: 42 things!"
	hf_setup
	for m in bert nomic-bert gemma-embedding lfm2-colbert; do
		need_model g "tiny-$m-f32.gguf"
		python3 "$Q42_SRCDIR/tests/tools/export_hf.py" "$g" "$T/$m"
		same_tensors "$T/$m" "$g" "$m" 20
		[ "$(hpar "$T/$m-hf.p64")" = "$(hpar "$T/$m.p64")" ]
		a=$("$Q42RUN" -m "$T/$m.p64" --embed --embed-format tsv -t 1 -p "$text")
		b=$("$Q42RUN" -m "$T/$m-hf.p64" --embed --embed-format tsv -t 1 -p "$text")
		[ -n "$a" ]
		[ "$a" = "$b" ]
	done
	# the module folders read from an archive: the folder's bytes
	tar -C "$T" -czf "$T/ge.tar.gz" gemma-embedding
	"$P64C" --no-progress "$T/ge.tar.gz" -o "$T/ge-tar.p64"
	cmp "$T/ge-tar.p64" "$T/gemma-embedding-hf.p64"
	run -0 "$P64CHECK" --header "$T/ge-tar.p64"
	digest=$(cd "$T/gemma-embedding" && LC_ALL=C sha256sum 1_Pooling/config.json \
		2_Dense/config.json 2_Dense/model.safetensors 3_Dense/config.json \
		3_Dense/model.safetensors config.json model.safetensors modules.json tokenizer.json \
		tokenizer_config.json | sha256sum | cut -d' ' -f1)
	[[ "$output" == *$'source_sha256\t'"$digest"* ]]
}

# edit_json FILE PYTHON: rewrite a JSON file in place (j is its value).
edit_json() {
	python3 - "$1" "$2" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(j, open(sys.argv[1], "w"))
PY
}

# expect_refused DIR TEXT: p64c exits 1 naming TEXT and writes nothing.
expect_refused() {
	run "$P64C" --no-progress "$1" -o "$T/x.p64"
	[ "$status" -eq 1 ] || { echo "status $status: $output"; return 1; }
	[[ "$output" == *"$2"* ]] || { echo "$output"; return 1; }
	[ ! -e "$T/x.p64" ]
}

@test "p64c: sentence-transformers modules q42 does not run are refused by name" {
	local g
	need_model g tiny-gemma-embedding-f32.gguf
	python3 "$Q42_SRCDIR/tests/tools/export_hf.py" "$g" "$T/ok"
	cp -r "$T/ok" "$T/tanh"
	edit_json "$T/tanh/2_Dense/config.json" 'j["activation_function"] = "torch.nn.modules.activation.Tanh"'
	expect_refused "$T/tanh" 'activation_function "torch.nn.modules.activation.Tanh"'
	cp -r "$T/ok" "$T/bias"
	edit_json "$T/bias/3_Dense/config.json" 'j["bias"] = True'
	expect_refused "$T/bias" "3_Dense/config.json: bias true"
	cp -r "$T/ok" "$T/max"
	edit_json "$T/max/1_Pooling/config.json" 'j["pooling_mode_mean_tokens"] = False; j["pooling_mode_max_tokens"] = True'
	expect_refused "$T/max" "1_Pooling/config.json: pooling mode"
	cp -r "$T/ok" "$T/ln"
	edit_json "$T/ln/modules.json" 'j.insert(3, {"idx": 9, "name": "9", "path": "9_LayerNorm", "type": "sentence_transformers.models.LayerNorm"})'
	expect_refused "$T/ln" 'type "sentence_transformers.models.LayerNorm"'
	cp -r "$T/ok" "$T/nodense"
	rm "$T/nodense/3_Dense/model.safetensors"
	expect_refused "$T/nodense" "3_Dense/model.safetensors is missing"
	cp -r "$T/ok" "$T/up"
	edit_json "$T/up/modules.json" 'j[2]["path"] = "../2_Dense"'
	expect_refused "$T/up" 'path "../2_Dense"'
	# Normalize (in the export) is accepted: q42run's default L2
	grep -q Normalize "$T/ok/modules.json"
	"$P64C" --no-progress "$T/ok" -o "$T/ok.p64"
}

@test "p64c: a Safetensors P64 records its source digest and policy and is not byte-preserving" {
	local digest
	hf_setup
	"$P64C" --no-progress "$HF/stories260K" -o "$T/a.p64"
	run -0 "$P64CHECK" --header "$T/a.p64"
	[[ "$output" == *$'flag_names\thparams,tokenizer,bootable'* ]]
	[[ "$output" == *$'policy\ttranscode'* ]]
	[[ "$output" == *$'source_format\tsafetensors'* ]]
	digest=$(cd "$HF/stories260K" && sha256sum config.json model.safetensors tokenizer.json \
		tokenizer_config.json | sha256sum | cut -d' ' -f1)
	[[ "$output" == *$'source_sha256\t'"$digest"* ]]
	run -1 "$P64C" --to-gguf "$T/a.p64" -o "$T/a.gguf"
	[ ! -e "$T/a.gguf" ]
	# a single file: its own SHA-256, weights only, not bootable
	run -0 --separate-stderr "$P64C" --no-progress "$HF/stories260K/model.safetensors" -o "$T/raw.p64"
	[[ "$stderr" == *"warning: no hyperparameters"* ]]
	run -0 "$P64CHECK" --header "$T/raw.p64"
	[[ "$output" == *$'flag_names\t'$'\n'* ]]
	[[ "$output" == *$'source_sha256\t'"$(sha256sum "$HF/stories260K/model.safetensors" | cut -d' ' -f1)"* ]]
	"$P64CHECK" --tensors "$T/raw.p64" | grep -q '^model.layers.0.self_attn.q_proj.weight	f32	64x64	'
}

@test "p64c: BF16 weights in, --type f32|f16|bf16|q8_0 out" {
	local m want t
	need_model m stories260K.gguf
	hf_setup
	want=$(greedy_ids "$m")
	"$P64C" --no-progress "$HF/stories260K-bf16" -o "$T/bf.p64"
	"$P64CHECK" --tensors "$T/bf.p64" | tail -n +2 | cut -f2 | sort -u | diff - <(echo bf16)
	"$P64C" --no-progress --type f32 "$HF/stories260K-bf16" -o "$T/bf32.p64"
	"$P64CHECK" --tensors "$T/bf32.p64" | tail -n +2 | cut -f2 | sort -u | diff - <(echo f32)
	# bf16 -> f32 is exact: the values are the bf16 ones widened
	"$P64CHECK" --values blk.0.ffn_up.weight "$T/bf.p64" |
		diff - <("$P64CHECK" --values blk.0.ffn_up.weight "$T/bf32.p64")
	for t in f16 bf16 q8_0; do
		"$P64C" --no-progress --type $t "$HF/stories260K" -o "$T/$t.p64"
		# 2-D weights take the type (q8_0 only where rows are whole blocks of
		# 32, f32 otherwise), 1-D norms become f32
		"$P64CHECK" --tensors "$T/$t.p64" | tail -n +2 | awk -F'\t' -v t=$t '
			{ split($3, d, "x"); want = $3 ~ /x/ ? t : "f32" }
			t == "q8_0" && d[1] % 32 != 0 { want = "f32" }
			$2 != want { print; bad = 1 } END { exit bad }'
		run -0 "$P64CHECK" --header "$T/$t.p64"
		[[ "$output" == *$'policy\ttranscode type='"$t"* ]]
	done
	[ "$(greedy_ids "$T/q8_0.p64")" = "$want" ]
}

# check_profile P64 BASE BLOCK DTYPE ROLES: every tensor of ROLES (comma
# list) whose rows are whole BLOCKs has DTYPE and dequantizes within one
# quantization step of BASE's values (ternary: each value is 0 or +-the
# block's mean |x|); every other tensor is byte-identical (same dtype and
# CRC) to BASE's. Prints how many tensors were rewritten.
check_profile() {
	python3 -c '
import subprocess, sys
chk, p64, base, block, dtype, roles = sys.argv[1:7]
block, roles = int(block), roles.split(",")
def table(f):
    out = subprocess.run([chk, "--tensors", f], check=True, capture_output=True, text=True).stdout
    rows = [l.split("\t") for l in out.splitlines()]
    return {r[0]: dict(zip(rows[0], r)) for r in rows[1:]}
def values(f, name):
    out = subprocess.run([chk, "--values", name, f], check=True, capture_output=True, text=True).stdout
    return [float(l.split("\t")[1]) for l in out.splitlines()[1:]]
a, b = table(p64), table(base)
assert a.keys() == b.keys()
n = 0
for name, t in a.items():
    row = int(t["dims"].split("x")[0])
    if t["role"] in roles and "x" in t["dims"] and row % block == 0:
        assert t["dtype"] == dtype, (name, t["dtype"])
        q, x = values(p64, name), values(base, name)
        step = {"q4_0": 1 / 8, "q8_0": 1 / 127}.get(dtype)
        for i in range(0, len(x), block):
            bx, bq = x[i:i + block], q[i:i + block]
            if step is None:
                d = sum(abs(v) for v in bx) / block
                assert all(v == 0 or abs(abs(v) - d) <= d * 1e-3 for v in bq), (name, i)
            else:
                amax = max(abs(v) for v in bx)
                assert all(abs(u - v) <= amax * step * 1.01 + 1e-12 for u, v in zip(bx, bq)), (name, i)
        n += 1
    else:
        assert t["dtype"] == b[name]["dtype"] and t["crc32c"] == b[name]["crc32c"], name
print(n)
' "$P64CHECK" "$@"
}

@test "p64c --profile: ffn-q4_0, ffn-tq, q8_0 rewrite by role; other tensors stay byte-identical" {
	local m
	need_model m stories260K.gguf
	hf_setup
	"$P64C" --no-progress "$HF/stories260K" -o "$T/base.p64"
	"$P64C" --no-progress --profile ffn-q4_0 "$HF/stories260K" -o "$T/q4.p64"
	run -0 check_profile "$T/q4.p64" "$T/base.p64" 32 q4_0 ffn_gate,ffn_up,ffn_down
	# gate and up of 5 layers; ffn_down rows of 172 are not whole blocks
	[ "$output" -eq 10 ]
	"$P64C" --no-progress --profile q8_0 "$HF/stories260K" -o "$T/q8.p64"
	run -0 check_profile "$T/q8.p64" "$T/base.p64" 32 q8_0 \
		token_embd,output,attn_q,attn_k,attn_v,attn_output,ffn_gate,ffn_up,ffn_down
	[ "$output" -eq 32 ]
	# stories260K has no row of 256 elements: ffn-tq leaves every tensor as it was
	"$P64C" --no-progress --profile ffn-tq "$HF/stories260K" -o "$T/tq.p64"
	run -0 check_profile "$T/tq.p64" "$T/base.p64" 256 tq2_0 ffn_gate,ffn_up,ffn_down
	[ "$output" -eq 0 ]
	run -0 "$P64CHECK" --header "$T/q4.p64"
	[[ "$output" == *$'policy\ttranscode profile=ffn-q4_0'* ]]
	[[ "$output" != *"byte-preserving"* ]]
	# the same profile on the GGUF: the same dtypes, the same greedy ids
	"$P64C" --no-progress --profile ffn-q4_0 "$m" -o "$T/g.p64"
	diff <("$P64CHECK" --tensors "$T/g.p64" | cut -f1,2 | sort) \
		<("$P64CHECK" --tensors "$T/q4.p64" | cut -f1,2 | sort)
	[ "$(greedy_ids "$T/g.p64")" = "$(greedy_ids "$T/q4.p64")" ]
	run -0 "$P64CHECK" --header "$T/g.p64"
	[[ "$output" == *$'source_sha256\t'"$(sha256sum "$m" | cut -d' ' -f1)"* ]]
	[[ "$output" == *$'policy\ttranscode profile=ffn-q4_0'* ]]
}

# mk_st FILE HEADER N: a Safetensors file with that JSON header and N zero bytes.
mk_st() {
	python3 -c '
import struct, sys
h = sys.argv[2].encode()
open(sys.argv[1], "wb").write(struct.pack("<Q", len(h)) + h + bytes(int(sys.argv[3])))
' "$@"
}

@test "p64c: malformed Safetensors headers exit 1 with the field named, and write nothing" {
	hf_setup
	mkdir "$T/out"
	mk_st "$T/overlap.st" '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}' 8
	run -1 "$P64C" "$T/overlap.st" -o "$T/out/x.p64"
	[[ "$output" == *"tensor b"*"overlaps"* ]]
	mk_st "$T/len.st" '{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}' 8
	run -1 "$P64C" "$T/len.st" -o "$T/out/x.p64"
	[[ "$output" == *"byte length"* ]]
	mk_st "$T/dup.st" '{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}' 8
	run -1 "$P64C" "$T/dup.st" -o "$T/out/x.p64"
	[[ "$output" == *"duplicate"* ]]
	mk_st "$T/i8.st" '{"a":{"dtype":"I8","shape":[4],"data_offsets":[0,4]}}' 4
	run -1 "$P64C" "$T/i8.st" -o "$T/out/x.p64"
	[[ "$output" == *"dtype I8"* ]]
	# a shard that the index names is missing
	cp -r "$HF/stories260K-sharded" "$T/sh"
	rm "$T/sh/model-00002-of-00003.safetensors"
	run -1 "$P64C" "$T/sh" -o "$T/out/x.p64"
	[[ "$output" == *"is missing"* ]]
	only_files "$T/out"
}

@test "p64c --type/--profile: bad values and --to-gguf are usage errors; a pipe is refused" {
	hf_setup
	run -2 "$P64C" --type q4_K "$HF/stories260K" -o "$T/x.p64"
	[[ "$output" == *"--type"* ]]
	run -2 "$P64C" --profile fast "$HF/stories260K" -o "$T/x.p64"
	[[ "$output" == *"--profile"* ]]
	run -2 "$P64C" --to-gguf --type f16 x.p64
	run -2 bash -c '"$1" "$2" -o - | cat >/dev/null; exit ${PIPESTATUS[0]}' _ "$P64C" "$HF/stories260K"
	[[ "$output" == *"seekable"* ]]
	only_files "$T"
}
