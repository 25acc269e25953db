#!/usr/bin/env bats
# p64check.bats -- every option and every exit status of p64check(1).
#
# Expected listings of GGUF files come from llama.cpp's gguf-py reader
# (tests/golden/gguf-py/, made by tests/tools/gguf_py_dump.py; see the README
# there), digests from sha256sum, signatures from the openssl command line:
# none of them is computed by libq42.

bats_require_minimum_version 1.5.0
load helpers

GOLDEN="$Q42_SRCDIR/tests/golden/gguf-py"

setup_file() {
	local m="$Q42_TEST_MODELS/stories260K.gguf" c
	c="$Q42_BUILDDIR/bin/p64c/p64c"
	if [ -f "$m" ] && [ -x "$c" ]; then
		"$c" --no-progress "$m" -o "$BATS_FILE_TMPDIR/s.p64"
	fi
}

setup() {
	P64CHECK=$(q42_bin p64check)
	P64C=$(q42_bin p64c)
	T="$BATS_TEST_TMPDIR"
}

# need_p64: the stories260K P64 compiled in setup_file, as $P64 (a private copy
# when the test is going to damage it).
need_p64() {
	need_model SRC stories260K.gguf
	[ -f "$BATS_FILE_TMPDIR/s.p64" ]
	P64="$T/s.p64"
	cp "$BATS_FILE_TMPDIR/s.p64" "$P64"
}

# ---- generic options ------------------------------------------------------

@test "p64check --help lists every option and exits 0" {
	run -0 "$P64CHECK" --help
	for opt in --against --sha256 --sha256-file --verify --header --metadata --array \
		--tensors --tokenizer --tokens --manifold --values --json --help --version; do
		[[ "$output" == *"$opt"* ]] || { echo "help lacks $opt"; return 1; }
	done
}

@test "p64check --version prints the package version" {
	run -0 "$P64CHECK" --version
	[[ "$output" =~ ^p64check\ \(q42\)\ [0-9]+\.[0-9]+ ]]
}

@test "p64check: usage errors exit 2" {
	need_p64
	run -2 "$P64CHECK"
	[[ "$output" == *"no FILE"* ]]
	run -2 "$P64CHECK" --no-such-option "$P64"
	run -2 "$P64CHECK" --header --tensors "$P64"
	run -2 "$P64CHECK" --tensors "$P64" "$P64"
	run -2 "$P64CHECK" --tensors --sha256-file x "$P64"
	run -2 "$P64CHECK" --sha256 abc "$P64"
	run -2 "$P64CHECK" --sha256 "$(printf '%064d' 0)" "$P64" "$P64"
	run -2 "$P64CHECK" --verify key.pem - <"$P64"
	run -2 "$P64CHECK" --array
}

@test "p64check: a nonexistent file is an I/O error (3) with an ERROR line" {
	run -3 --separate-stderr "$P64CHECK" "$T/nope.p64"
	[[ "$output" == "$T/nope.p64	ERROR	"*"No such file"* ]]
	run -3 "$P64CHECK" --tensors "$T/nope.p64"
}

# ---- verdicts ---------------------------------------------------------------

@test "p64check: a valid P64 gives an OK verdict line and exit 0" {
	need_p64
	run -0 --separate-stderr "$P64CHECK" "$P64"
	[ "$output" = "$P64	OK	p64 v3	48 tensors	$(stat -c %s "$P64") bytes	structure,crc32c" ]
}

@test "p64check: every shared GGUF validates as GGUF (magic decides)" {
	need_ggufs
	local f n
	for f in "${GGUFS[@]}"; do
		n=$(($(wc -l <"$GOLDEN/$(basename "$f" .gguf).tensors.tsv") - 1))
		run -0 --separate-stderr "$P64CHECK" "$f"
		[[ "$output" == "$f	OK	gguf v"[23]"	$n tensors	$(stat -c %s "$f") bytes	structure" ]]
	done
}

@test "p64check: the file name does not matter, only the magic" {
	need_p64
	cp "$P64" "$T/model.gguf"
	run -0 "$P64CHECK" "$T/model.gguf"
	[[ "$output" == *"OK	p64 v3"* ]]
	cp "$SRC" "$T/model.p64"
	run -0 "$P64CHECK" "$T/model.p64"
	[[ "$output" == *"OK	gguf v3"* ]]
}

@test "p64check: stdin '-' is validated too" {
	need_p64
	run -0 bash -c "cat '$P64' | '$P64CHECK' -"
	[[ "$output" == "-	OK	p64 v3	48 tensors"* ]]
}

@test "p64check: a file that is neither GGUF nor P64 is INVALID (1)" {
	printf 'hello world\n' >"$T/x"
	run -1 --separate-stderr "$P64CHECK" "$T/x"
	[[ "$output" == "$T/x	INVALID	"*magic* ]]
	: >"$T/empty"
	run -1 "$P64CHECK" "$T/empty"
}

@test "p64check: a flipped blob byte is INVALID and the message names the tensor" {
	need_p64
	local off
	off=$("$P64CHECK" --tensors "$P64" | awk -F'\t' '$1 == "output.weight" { print $4 + 100 }')
	flip_byte "$P64" "$off"
	run -1 --separate-stderr "$P64CHECK" "$P64"
	[[ "$output" == *"INVALID"*"tensor output.weight"*"CRC-32C"* ]]
}

@test "p64check: a flipped metadata byte is INVALID and the message names the section" {
	need_p64
	local off
	off=$("$P64CHECK" --header "$P64" | awk -F'\t' '$1 == "section.Q42T" { split($2, a, "[= ]"); print a[2] + 16 }')
	flip_byte "$P64" "$off"
	run -1 --separate-stderr "$P64CHECK" "$P64"
	[[ "$output" == *"INVALID"*"Q42T"* ]]
}

@test "p64check: a flipped header byte is INVALID and the message names the header" {
	need_p64
	flip_byte "$P64" 12
	run -1 --separate-stderr "$P64CHECK" "$P64"
	[[ "$output" == *"INVALID"*"header"* ]]
}

@test "p64check: a truncated P64 is INVALID" {
	need_p64
	head -c 100000 "$P64" >"$T/short.p64"
	run -1 "$P64CHECK" "$T/short.p64"
	[[ "$output" == *"INVALID"* ]]
}

@test "p64check: several files, one verdict each, exit status of the worst" {
	need_p64
	printf 'junk' >"$T/junk"
	run -1 --separate-stderr "$P64CHECK" "$P64" "$T/junk" "$SRC"
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[0]}" == *"	OK	"* ]]
	[[ "${lines[1]}" == *"	INVALID	"* ]]
	[[ "${lines[2]}" == *"	OK	"* ]]
	run -3 "$P64CHECK" "$P64" "$T/junk" "$T/missing"
}

@test "p64check --json: verdicts are JSON Lines" {
	need_p64
	printf 'junk' >"$T/junk"
	run -1 --separate-stderr "$P64CHECK" --json "$P64" "$T/junk"
	printf '%s\n' "$output" | json_lines
	printf '%s\n' "${lines[0]}" | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["verdict"] == "OK" and j["format"] == "p64" and j["tensors"] == 48, j
assert j["checks"] == ["structure", "crc32c"], j'
	printf '%s\n' "${lines[1]}" | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["verdict"] == "INVALID" and "magic" in j["message"], j'
}

# ---- --against ----------------------------------------------------------

@test "p64check --against: the P64 holds exactly its source GGUF" {
	need_p64
	run -0 --separate-stderr "$P64CHECK" --against "$SRC" "$P64"
	[[ "$output" == *"OK"*"against" ]]
}

@test "p64check --against a different GGUF is INVALID" {
	need_p64
	need_model OTHER tiny-llama-spm-f32.gguf
	run -1 --separate-stderr "$P64CHECK" --against "$OTHER" "$P64"
	[[ "$output" == *"INVALID"*"$OTHER"* ]]
}

@test "p64check --against a GGUF differing in one tensor byte is INVALID" {
	need_p64
	local off
	cp "$SRC" "$T/src.gguf"
	off=$(awk -F'\t' '$1 == "blk.2.ffn_up.weight" { print $4 + 7 }' "$GOLDEN/stories260K.tensors.tsv")
	flip_byte "$T/src.gguf" "$off"
	run -1 --separate-stderr "$P64CHECK" --against "$T/src.gguf" "$P64"
	[[ "$output" == *"INVALID"* ]]
}

@test "p64check --against: FILE must be P64 and SOURCE must be GGUF" {
	need_p64
	run -1 "$P64CHECK" --against "$SRC" "$SRC"
	run -1 "$P64CHECK" --against "$P64" "$P64"
	run -3 "$P64CHECK" --against "$T/missing.gguf" "$P64"
}

# ---- digests -----------------------------------------------------------------

@test "p64check --sha256: the right digest passes, a wrong one is INVALID" {
	need_p64
	local sum
	sum=$(sha256sum "$P64" | cut -d' ' -f1)
	run -0 "$P64CHECK" --sha256 "$sum" "$P64"
	[[ "$output" == *"OK"*"sha256" ]]
	run -0 "$P64CHECK" --sha256 "${sum^^}" "$P64"
	run -1 --separate-stderr "$P64CHECK" --sha256 "$(printf '%064d' 0)" "$P64"
	[[ "$output" == *"INVALID	sha256: expected 000"*"found $sum" ]]
}

@test "p64check --sha256-file: entries from sha256sum are checked per file" {
	need_p64
	cp "$SRC" "$T/src.gguf"
	(cd "$T" && sha256sum s.p64 src.gguf >SUMS)
	run -0 "$P64CHECK" --sha256-file "$T/SUMS" "$P64" "$T/src.gguf"
	[ "${#lines[@]}" -eq 2 ]
	(cd "$T" && sha256sum -b s.p64 >BIN)
	run -0 "$P64CHECK" --sha256-file "$T/BIN" "$P64"
	(cd "$T" && sha256sum src.gguf | sed 's/^\(.*\)  src.gguf$/\1  s.p64/' >WRONG)
	run -1 "$P64CHECK" --sha256-file "$T/WRONG" "$P64"
	[[ "$output" == *"INVALID	sha256: expected"* ]]
	run -1 "$P64CHECK" --sha256-file "$T/BIN" "$T/src.gguf"
	[[ "$output" == *"not listed"* ]]
	printf 'not a sums line\n' >"$T/BAD"
	run -2 "$P64CHECK" --sha256-file "$T/BAD" "$P64"
	run -3 "$P64CHECK" --sha256-file "$T/none" "$P64"
}

# ---- signatures ------------------------------------------------------------

@test "p64check --verify: an openssl signature verifies; tampering is INVALID" {
	need_cmd openssl
	need_p64
	openssl genpkey -algorithm ed25519 -out "$T/key.pem"
	openssl pkey -in "$T/key.pem" -pubout -out "$T/pub.pem"
	openssl pkeyutl -sign -inkey "$T/key.pem" -rawin -in "$P64" -out "$P64.sig"
	run -0 "$P64CHECK" --verify "$T/pub.pem" "$P64"
	[[ "$output" == *"OK"*"ed25519" ]]
	# A different key.
	openssl genpkey -algorithm ed25519 -out "$T/key2.pem"
	openssl pkey -in "$T/key2.pem" -pubout -out "$T/pub2.pem"
	run -1 "$P64CHECK" --verify "$T/pub2.pem" "$P64"
	# A tampered signature.
	cp "$P64.sig" "$T/good.sig"
	flip_byte "$P64.sig" 5
	run -1 "$P64CHECK" --verify "$T/pub.pem" "$P64"
	[[ "$output" == *"INVALID"*"signature"* ]]
	# A truncated signature.
	head -c 63 "$T/good.sig" >"$P64.sig"
	run -1 "$P64CHECK" --verify "$T/pub.pem" "$P64"
	# A missing signature or key is an I/O error.
	rm "$P64.sig"
	run -3 "$P64CHECK" --verify "$T/pub.pem" "$P64"
	cp "$T/good.sig" "$P64.sig"
	run -3 "$P64CHECK" --verify "$T/nokey.pem" "$P64"
	run -0 "$P64CHECK" --verify "$T/pub.pem" "$P64"
}

# ---- listings agree with gguf-py ------------------------------------------

@test "p64check --metadata and --tensors agree with gguf-py on every shared GGUF" {
	need_ggufs
	local f b
	for f in "${GGUFS[@]}"; do
		b=$(basename "$f" .gguf)
		[ -f "$GOLDEN/$b.metadata.tsv" ] || { echo "no golden file for $f"; return 1; }
		"$P64CHECK" --metadata "$f" | diff -u "$GOLDEN/$b.metadata.tsv" -
		"$P64CHECK" --tensors "$f" | diff -u "$GOLDEN/$b.tensors.tsv" -
	done
}

@test "p64check --array agrees with gguf-py (stories260K tokens)" {
	local m
	need_model m stories260K.gguf
	"$P64CHECK" --array tokenizer.ggml.tokens "$m" | diff -u "$GOLDEN/stories260K.array-tokens.tsv" -
}

@test "p64check on a P64: --metadata is its source's, --tensors keep source offsets" {
	need_p64
	"$P64CHECK" --metadata "$P64" | diff -u "$GOLDEN/stories260K.metadata.tsv" -
	# name dtype dims bytes, and the source offset = gguf-py's offset.
	diff -u <(cut -f1-3,5 "$GOLDEN/stories260K.tensors.tsv") \
		<("$P64CHECK" --tensors "$P64" | cut -f1-3,5)
	diff -u <(cut -f4 "$GOLDEN/stories260K.tensors.tsv" | tail -n +2) \
		<("$P64CHECK" --tensors "$P64" | cut -f9 | tail -n +2)
	run -0 "$P64CHECK" --tensors "$P64"
	[ "${lines[0]}" = "name	dtype	dims	offset	bytes	role	layer	crc32c	source_offset	name_hash" ]
	[[ "${lines[1]}" == "token_embd.weight	f32	64x512	"*"	131072	token_embd	-1	"* ]]
	[[ "$output" == *"blk.4.ffn_down.weight	f32	172x64	"*"	ffn_down	4	"* ]]
}

@test "p64check --array: absent key or a scalar key is exit 1" {
	local m
	need_model m stories260K.gguf
	run -1 "$P64CHECK" --array no.such.key "$m"
	[[ "$output" == *"no.such.key"* ]]
	run -1 "$P64CHECK" --array general.architecture "$m"
}

# ---- the other listings ------------------------------------------------

@test "p64check --header: GGUF and P64 fields" {
	need_p64
	run -0 "$P64CHECK" --header "$SRC"
	[ "${lines[0]}" = "field	value" ]
	[[ "$output" == *"format	gguf"* && "$output" == *"version	3"* ]]
	[[ "$output" == *"tensor_count	48"* && "$output" == *"kv_count	19"* ]]
	[[ "$output" == *"file_size	$(stat -c %s "$SRC")"* ]]
	run -0 "$P64CHECK" --header "$P64"
	[[ "$output" == *"format	p64"* && "$output" == *"page_log2	12"* ]]
	[[ "$output" == *"source_sha256	$(sha256sum "$SRC" | cut -d' ' -f1)"* ]]
	[[ "$output" == *"source_size	$(stat -c %s "$SRC")"* ]]
	for s in STRS TDSC MANI PROV; do
		[[ "$output" == *"section.$s	offset="* ]]
	done
}

@test "p64check --tokenizer: the values gguf-py reads from the metadata" {
	need_p64
	local f
	for f in "$SRC" "$P64"; do
		run -0 "$P64CHECK" --tokenizer "$f"
		[[ "$output" == *"model	llama"* ]]
		[[ "$output" == *"tokens	512"* ]]
		[[ "$output" == *"bos	1"* && "$output" == *"eos	2"* && "$output" == *"unk	0"* ]]
	done
}

@test "p64check --tokens: one row per token, the same strings as gguf-py" {
	need_p64
	local f
	for f in "$SRC" "$P64"; do
		diff -u <(cut -f2 "$GOLDEN/stories260K.array-tokens.tsv" | tail -n +2) \
			<("$P64CHECK" --tokens "$f" | cut -f2 | tail -n +2)
	done
	run -0 "$P64CHECK" --tokens "$P64"
	[ "${lines[0]}" = "id	token	score	type" ]
	[ "${lines[1]}" = "0	<unk>	0	unknown" ]
	[ "${lines[2]}" = "1	<s>	0	control" ]
	[ "${lines[4]}" = "3	<0x00>	0	byte" ]
}

@test "p64check --manifold: one record per layer plus the global one; GGUF has none" {
	need_p64
	run -0 "$P64CHECK" --manifold "$P64"
	[ "${#lines[@]}" -eq 7 ]
	[[ "${lines[0]}" == "layer	tensors	elems	skipped	"* ]]
	[[ "${lines[1]}" == "0	9	"* ]]
	[[ "${lines[6]}" == "-1	48	292800	0	"* ]]
	run -1 "$P64CHECK" --manifold "$SRC"
}

@test "p64check --values: dequantized values agree with gguf-py" {
	need_p64
	local f
	for f in "$SRC" "$P64"; do
		"$P64CHECK" --values blk.0.attn_q.weight:0:16 "$f" |
			diff -u "$GOLDEN/stories260K.values-attn_q.tsv" -
		run -0 "$P64CHECK" --values blk.0.attn_q.weight:5:3 "$f"
		[ "${#lines[@]}" -eq 4 ]
		[ "${lines[1]}" = "$(sed -n 7p "$GOLDEN/stories260K.values-attn_q.tsv")" ]
		[ "${lines[3]}" = "$(sed -n 9p "$GOLDEN/stories260K.values-attn_q.tsv")" ]
	done
	run -0 "$P64CHECK" --values output_norm.weight "$P64"
	[ "${#lines[@]}" -eq 65 ]
	run -0 "$P64CHECK" --values output_norm.weight:60 "$P64"
	[ "${#lines[@]}" -eq 5 ]
	[[ "${lines[4]}" == "63	"* ]]
}

@test "p64check --values: quantized tensors agree with gguf-py; errors exit 1" {
	local q="$GOLDEN/quant-tiny.gguf" t
	"$P64CHECK" --tensors "$q" | diff -u "$GOLDEN/quant-tiny.tensors.tsv" -
	for t in $(cut -f1 "$GOLDEN/quant-tiny.tensors.tsv" | tail -n +2); do
		[ "$t" != iq2_xxs ] || continue
		"$P64CHECK" --values "$t" "$q" | diff -u "$GOLDEN/quant-tiny.values-$t.tsv" -
	done
	# The same through a P64 (a middle slice of a k-quant super-block).
	"$P64C" --no-progress "$q" -o "$T/q.p64" 2>/dev/null
	diff -u <(sed -n '1p;102,141p' "$GOLDEN/quant-tiny.values-q4_K.tsv") \
		<("$P64CHECK" --values q4_K:100:40 "$T/q.p64")
	# A type libq42 has no dequantizer for: a clear error, exit 1.
	run -1 --separate-stderr "$P64CHECK" --values iq2_xxs "$q"
	[[ "$stderr" == *"iq2_xxs"*"cannot be dequantized"* ]]
	run -1 "$P64CHECK" --values no.such.tensor "$q"
	[[ "$output" == *"no.such.tensor"* ]]
	run -1 "$P64CHECK" --values q8_0:1000000 "$q"
	run -1 "$P64CHECK" --values q8_0:0:1000000 "$q"
}

@test "p64check --json: every listing is JSON Lines" {
	need_p64
	local opt
	for opt in --header --metadata --tensors --tokenizer --tokens --manifold \
		"--array tokenizer.ggml.scores" "--values output.weight:0:10"; do
		# shellcheck disable=SC2086
		"$P64CHECK" --json $opt "$P64" | json_lines
	done
	"$P64CHECK" --json --metadata "$SRC" | python3 -c '
import json, sys
rows = {j["key"]: j for j in map(json.loads, sys.stdin)}
assert rows["llama.block_count"] == {"key": "llama.block_count", "type": "u32", "value": 5}
v = rows["tokenizer.ggml.tokens"]["value"]
assert v["type"] == "string" and v["count"] == 512 and v["first"][:2] == ["<unk>", "<s>"], v'
}

# ---- man page and completions ------------------------------------------------

@test "p64check: man page, bash and zsh completions know every option of --help" {
	local opts o
	opts=$("$P64CHECK" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
	[ -n "$opts" ]
	for o in $opts; do
		grep -q -- "${o//-/\\\\-}" "$Q42_SRCDIR/man/p64check.1" || { echo "man lacks $o"; return 1; }
		grep -q -- "$o" "$Q42_SRCDIR/completions/_p64check" || { echo "zsh lacks $o"; return 1; }
	done
	run -0 bash -c '
		source "$1/completions/p64check"
		COMP_WORDS=(p64check --); COMP_CWORD=1; _p64check; printf "%s\n" "${COMPREPLY[@]}"
	' _ "$Q42_SRCDIR"
	for o in $opts; do
		[[ $'\n'"$output"$'\n' == *$'\n'"$o"$'\n'* ]] || { echo "bash lacks $o"; return 1; }
	done
}

# --- --quality (p64check(1), QUALITY GATE): stories260K's P64 against
# itself and against p64c's q8_0 and ffn-q4_0 profiles. A model against
# itself must give KL 0 and the same top token everywhere; the profiles
# must differ (KL > 0) and the thresholds decide the exit status.

@test "--quality: a model against itself passes with KL 0 and same top 1" {
	need_p64
	local story="$Q42_SRCDIR/tests/golden/quality/story.txt"
	run -0 "$P64CHECK" --quality "$P64" --ctx 64 --max-kl 0 --min-same-top 1 "$story" "$P64"
	grep -qx $'kld_mean\t0\t0' <<<"$output"
	grep -qx $'same_top\t1.000000\t0.000000' <<<"$output"
	[ "$(tail -n 1 <<<"$output")" = $'quality\tPASS' ]
}

@test "--quality: q8_0 and ffn-q4_0 profiles, thresholds and exit status" {
	need_p64
	local story="$Q42_SRCDIR/tests/golden/quality/story.txt" kl
	"$P64C" --no-progress --profile q8_0 "$SRC" -o "$T/q8.p64"
	"$P64C" --no-progress --profile ffn-q4_0 "$SRC" -o "$T/q4.p64"
	run -0 "$P64CHECK" --quality "$P64" --ctx 64 --max-kl 0.01 --min-same-top 0.9 "$story" "$T/q8.p64"
	kl=$(awk -F'\t' '$1 == "kld_mean" { print $2 }' <<<"$output")
	awk -v k="$kl" 'BEGIN { exit !(k > 0 && k < 0.01) }'
	run -1 "$P64CHECK" --quality "$P64" --ctx 64 --max-kl 0.01 "$story" "$T/q4.p64"
	[[ "$(tail -n 1 <<<"$output")" == $'quality\tFAIL\tkld_mean '* ]]
	run -1 "$P64CHECK" --quality "$P64" --ctx 64 --min-same-top 0.99 "$story" "$T/q4.p64"
	[[ "$(tail -n 1 <<<"$output")" == $'quality\tFAIL\tsame_top '* ]]
	run -0 "$P64CHECK" --quality "$P64" --ctx 64 "$story" "$T/q4.p64"
}

@test "--quality: usage errors" {
	need_p64
	local story="$Q42_SRCDIR/tests/golden/quality/story.txt"
	run -2 "$P64CHECK" --quality "$P64" "$story"
	run -2 "$P64CHECK" --max-kl 0.1 "$P64"
	run -2 "$P64CHECK" --quality "$P64" --min-same-top 2 "$story" "$P64"
	run -2 "$P64CHECK" --quality "$P64" --max-kl x "$story" "$P64"
	run -2 "$P64CHECK" --quality "$P64" --header "$story" "$P64"
	run -2 "$P64CHECK" --quality "$P64" --ctx 256 "$story" "$P64"
	run -3 "$P64CHECK" --quality "$P64" --ctx 64 "$T/absent.txt" "$P64"
}
