#!/usr/bin/env bats
# embed.bats -- q42run --embed and --rank (q42run(1), "EMBEDDINGS"):
# llama.cpp's vectors for the synthetic encoders (tests/golden/embed),
# independence from threads and from the other inputs of a run, the
# options' checks, and ranking; the same vectors and ranks with --backend
# vulkan (skipped without Vulkan or a device, failing under CI=true when
# the build has Vulkan).

load helpers

setup() {
	Q42RUN=$(q42_bin q42run)
	GOLD="$Q42_SRCDIR/tests/golden/embed/reference_embed.tsv"
}

# compare MODEL [TOL [OPTION...]]: every golden row of MODEL against
# q42run's TSV output for all of the model's texts in one run (--lines),
# each value within TOL (default 1e-5); the OPTIONs go to q42run.
compare() {
	local model=$1 tol=${2:-1e-5} path
	shift $(($# < 2 ? $# : 2))
	need_model path "$model"
	awk -F'\t' -v m="$model" '$1 == m { print $2 }' "$GOLD" > "$BATS_TEST_TMPDIR/texts"
	"$Q42RUN" -m "$path" --embed --embed-format tsv -t 1 --lines -f "$BATS_TEST_TMPDIR/texts" "$@" \
		> "$BATS_TEST_TMPDIR/got"
	awk -F'\t' -v m="$model" -v tol="$tol" '
		BEGIN { n = 0 }
		NR == FNR { if ($1 == m) { pool[n] = $3; ref[n++] = $4 } next }
		{
			i = $1; k = $2 + 1; seen[i]++; what = m ": text " i " row " k
			nr = split(ref[i], rows, ";"); o = pool[i] == "none" ? 1 : 0
			if (k > nr) { print what ": past the " nr " golden rows"; bad = 1; next }
			nv = split(rows[k], r, " ")
			if (o && r[1] != $3) { print what ": id " $3 " vs " r[1]; bad = 1 }
			if (NF - 3 != nv - o) { print what ": " NF - 3 " values, expected " nv - o; bad = 1; next }
			for (j = 4; j <= NF; j++) { d = $j - r[j - 3 + o]; if (d < 0) d = -d; if (d > tol + 0) { print what ": value " j - 3 " off by " d; bad = 1 } }
		}
		END {
			if (n == 0) { print m ": no golden rows"; bad = 1 }
			for (i = 0; i < n; i++) if (seen[i] != split(ref[i], rows, ";")) { print m ": text " i ": " seen[i] + 0 " rows, expected " split(ref[i], rows, ";"); bad = 1 }
			exit bad
		}' "$GOLD" "$BATS_TEST_TMPDIR/got"
}

@test "embed: tiny-gemma-embedding within 1e-5 of llama.cpp (mean pooling, dense_2, dense_3)" {
	compare tiny-gemma-embedding-f32.gguf
}

@test "embed: tiny-nomic-bert within 1e-5 of llama.cpp (WordPiece, RoPE, SwiGLU, post-norm LayerNorm, mean pooling)" {
	compare tiny-nomic-bert-f32.gguf
}

@test "embed: tiny-bert within 1e-5 of llama.cpp (learned positions, GELU, CLS pooling)" {
	compare tiny-bert-f32.gguf
}

@test "embed: tiny-lfm2-colbert within 1e-5 of llama.cpp (per token, centred convolution, dense_2)" {
	compare tiny-lfm2-colbert-f32.gguf
}

# The texts of a run of n lines: line k of the sample, the others fillers.
lines_with() {
	local n=$1 k=$2 i
	for ((i = 0; i < n; i++)); do
		if [ "$i" -eq "$k" ]; then echo "How do I reset my password?"; else echo "filler $i, a line of another length"; fi
	done
}

@test "embed: a vector is the same bits alone, among 7 or 64 inputs, on 1 or 2 threads" {
	local m
	need_model m tiny-gemma-embedding-f32.gguf
	local alone
	alone=$("$Q42RUN" -m "$m" --embed --embed-format tsv -t 1 -p "How do I reset my password?" | cut -f4-)
	[ -n "$alone" ]
	for t in 1 2; do
		run "$Q42RUN" -m "$m" --embed --embed-format tsv -t "$t" -p "How do I reset my password?"
		[ "$status" -eq 0 ]
		[ "$(cut -f4- <<<"$output")" = "$alone" ]
		for n in 7 64; do
			lines_with "$n" 5 > "$BATS_TEST_TMPDIR/in"
			run "$Q42RUN" -m "$m" --embed --embed-format tsv -t "$t" --lines -f "$BATS_TEST_TMPDIR/in"
			[ "$status" -eq 0 ]
			[ "$(wc -l <<<"$output")" -eq "$n" ]
			[ "$(sed -n 6p <<<"$output" | cut -f4-)" = "$alone" ]
		done
	done
}

@test "embed: per-token vectors the same alone and among 7 inputs, 1 or 2 threads" {
	local m
	need_model m tiny-lfm2-colbert-f32.gguf
	local alone
	alone=$("$Q42RUN" -m "$m" --embed --embed-format tsv -t 1 -p "How do I reset my password?" | cut -f2-)
	lines_with 7 5 > "$BATS_TEST_TMPDIR/in"
	run "$Q42RUN" -m "$m" --embed --embed-format tsv -t 2 --lines -f "$BATS_TEST_TMPDIR/in"
	[ "$status" -eq 0 ]
	[ "$(awk -F'\t' '$1 == 5' <<<"$output" | cut -f2-)" = "$alone" ]
}

@test "embed: --embed-format f32 is the TSV's values as little-endian float32" {
	local m
	need_model m tiny-gemma-embedding-f32.gguf
	"$Q42RUN" -m "$m" --embed --embed-format f32 -p "The little dog" > "$BATS_TEST_TMPDIR/v.f32"
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/v.f32")" -eq $((64 * 4)) ]
	tsv=$("$Q42RUN" -m "$m" --embed --embed-format tsv -p "The little dog" | cut -f4- | tr '\t' '\n')
	# od prints 7 or 8 digits: equal to that precision
	od -An -v -t f4 -w4 "$BATS_TEST_TMPDIR/v.f32" | paste - <(cat <<<"$tsv") |
		awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-7 || NF != 2) bad = 1 } END { exit bad || NR != 64 }'
}

@test "embed: the record line carries dims, pooling, normalisation and the model digest" {
	local m
	need_model m tiny-gemma-embedding-f32.gguf
	run "$Q42RUN" -m "$m" --embed --dims 16 --task retrieval_query -p "The little dog"
	[ "$status" -eq 0 ]
	[[ "$output" == *'"schema":"q42-record/1"'* ]]
	[[ "$output" == *'"kind":"embedding"'* ]]
	[[ "$output" == *'"dims":16'* ]]
	[[ "$output" == *'"pooling":"mean"'* ]]
	[[ "$output" == *'"normalize":"l2"'* ]]
	[[ "$output" == *'"task":"retrieval_query"'* ]]
	[[ "$output" == *"\"sha256\":\"$(sha256sum "$m" | cut -c1-64)\""* ]]
}

@test "embed: --dims keeps the leading values and L2-normalises them" {
	local m
	need_model m tiny-gemma-embedding-f32.gguf
	full=$("$Q42RUN" -m "$m" --embed --embed-format tsv --embd-normalize none -p "The little dog" | cut -f4-)
	cut8=$("$Q42RUN" -m "$m" --embed --embed-format tsv --dims 8 -p "The little dog" | cut -f4-)
	awk -F'\t' -v full="$full" '{
		split(full, f, "\t"); s = 0; for (i = 1; i <= 8; i++) s += f[i] * f[i]; s = sqrt(s)
		if (NF != 8) exit 1
		for (i = 1; i <= 8; i++) { d = $i - f[i] / s; if (d < 0) d = -d; if (d > 1e-6) exit 1 }
	}' <<<"$cut8"
}

@test "embed: bad --task, --pooling, --embed-format and --embd-normalize are usage errors" {
	run "$Q42RUN" -m x --embed --task nope -p a
	[ "$status" -eq 2 ]
	[[ "$output" == *"retrieval_query, retrieval_document"*"raw"* ]]
	run "$Q42RUN" -m x --embed --pooling max -p a
	[ "$status" -eq 2 ]
	run "$Q42RUN" -m x --embed --embed-format csv -p a
	[ "$status" -eq 2 ]
	run "$Q42RUN" -m x --embed --embd-normalize cube -p a
	[ "$status" -eq 2 ]
	run "$Q42RUN" -m x --dims 4 -p a
	[ "$status" -eq 2 ]
	run "$Q42RUN" -m x --rank q
	[ "$status" -eq 2 ]
}

@test "embed: an encoder refuses to generate, a decoder's --dims past its width is refused" {
	local m
	need_model m tiny-gemma-embedding-f32.gguf
	run "$Q42RUN" -m "$m" -p "hello" -n 2
	[ "$status" -ne 0 ]
	[[ "$output" == *"encoder"* ]]
	run "$Q42RUN" -m "$m" --embed --dims 65 -p "hello"
	[ "$status" -eq 2 ]
}

@test "rank: the document equal to the query ranks first, near copies next, ties in input order" {
	local m
	need_model m tiny-gemma-embedding-f32.gguf
	printf '%s\n' "Bananas are yellow fruit" "How do I reset my password?" "The stock market fell today" \
		"How do I reset my password" "Bananas are yellow fruit" > "$BATS_TEST_TMPDIR/docs"
	run "$Q42RUN" -m "$m" --rank "How do I reset my password?" --docs "$BATS_TEST_TMPDIR/docs"
	[ "$status" -eq 0 ]
	[ "$(wc -l <<<"$output")" -eq 5 ]
	[ "$(sed -n 1p <<<"$output" | cut -f2)" = 2 ]
	awk -F'\t' 'NR == 1 { if ($3 < 0.99999) exit 1 }' <<<"$output"
	# the two equal documents have equal scores: input order between them
	[ "$(awk -F'\t' '$2 == 1 { print NR }' <<<"$output")" -lt "$(awk -F'\t' '$2 == 5 { print NR }' <<<"$output")" ]
	run "$Q42RUN" -m "$m" --rank "How do I reset my password?" --docs "$BATS_TEST_TMPDIR/docs"
	[ "$status" -eq 0 ]
}

@test "rank: ColBERT MaxSim ranks the copy of the query first" {
	local m
	need_model m tiny-lfm2-colbert-f32.gguf
	printf '%s\n' "The stock market fell today" "How do I reset my password?" "Bananas are yellow" > "$BATS_TEST_TMPDIR/docs"
	run "$Q42RUN" -m "$m" --rank "How do I reset my password?" --docs "$BATS_TEST_TMPDIR/docs"
	[ "$status" -eq 0 ]
	[ "$(sed -n 1p <<<"$output" | cut -f2)" = 2 ]
}

@test "rank: no documents, an empty document, a missing file are clear errors" {
	local m
	need_model m tiny-gemma-embedding-f32.gguf
	: > "$BATS_TEST_TMPDIR/none"
	run "$Q42RUN" -m "$m" --rank q --docs "$BATS_TEST_TMPDIR/none"
	[ "$status" -eq 4 ]
	[[ "$output" == *"no documents"* ]]
	printf 'a\n\nb\n' > "$BATS_TEST_TMPDIR/gap"
	run "$Q42RUN" -m "$m" --rank q --docs "$BATS_TEST_TMPDIR/gap"
	[ "$status" -eq 4 ]
	[[ "$output" == *"line 2 is empty"* ]]
	run "$Q42RUN" -m "$m" --rank q --docs "$BATS_TEST_TMPDIR/absent"
	[ "$status" -eq 3 ]
}

@test "embed: an encoder compiled to P64 gives the GGUF's vectors (causality, pooling and dense_2 carried in HPAR)" {
	local m p64c
	p64c=$(q42_bin p64c)
	for name in tiny-gemma-embedding-f32 tiny-lfm2-colbert-f32 tiny-bert-f32; do
		need_model m "$name.gguf"
		"$p64c" "$m" -o "$BATS_TEST_TMPDIR/$name.p64"
		"$(q42_bin p64check)" "$BATS_TEST_TMPDIR/$name.p64" > /dev/null
		a=$("$Q42RUN" -m "$m" --embed --embed-format tsv -t 1 -p "The little dog")
		b=$("$Q42RUN" -m "$BATS_TEST_TMPDIR/$name.p64" --embed --embed-format tsv -t 1 -p "The little dog")
		[ -n "$a" ]
		[ "$a" = "$b" ]
	done
}

@test "bench --embed: one line with texts/s and tokens/s over the lines of -f; no -f is a usage error" {
	local m
	need_model m tiny-gemma-embedding-f32.gguf
	printf '%s\n' "Once upon a time" "The little dog" "How do I reset my password?" > "$BATS_TEST_TMPDIR/t"
	run "$Q42RUN" -m "$m" --bench --embed -f "$BATS_TEST_TMPDIR/t" --reps 2 -t 1
	[ "$status" -eq 0 ]
	[[ "$output" == "embed texts=3 tokens="*" reps=2 "*"texts_s_median="*"tok_s_median="*" backend=cpu arch=gemma-embedding" ]]
	run "$Q42RUN" -m "$m" --bench --embed -p "hello"
	[ "$status" -eq 2 ]
}

@test "embed: --colbert puts [Q] or [D] first, cuts queries to 32 tokens and drops a document's punctuation" {
	local m
	need_model m tiny-lfm2-colbert-f32.gguf
	q=$("$Q42RUN" -m "$m" --tokenize -p "[Q] hello")
	run "$Q42RUN" -m "$m" --embed --colbert query --embed-format tsv -p "hello"
	[ "$status" -eq 0 ]
	[ "$(cut -f3 <<<"$output" | tr '\n' ' ' | sed 's/ $//')" = "$q" ]
	long=$(printf 'word %.0s' $(seq 60))
	run "$Q42RUN" -m "$m" --embed --colbert query --embed-format tsv -p "$long"
	[ "$(wc -l <<<"$output")" -eq 32 ]
	d=$("$Q42RUN" -m "$m" --tokenize -p "[D] Hello, world.")
	run "$Q42RUN" -m "$m" --embed --colbert document --embed-format tsv -p "Hello, world."
	[ "$status" -eq 0 ]
	# gpt-2's "[" 58, "]" 60, "," 11 and "." 13 are one punctuation
	# character each and go; the others stay, in order
	[ "$(cut -f3 <<<"$output" | tr '\n' ' ')" = "$(tr ' ' '\n' <<<"$d" | grep -vx -e 58 -e 60 -e 11 -e 13 | tr '\n' ' ')" ]
	[ "$(wc -l <<<"$output")" -eq 3 ]
}

# The same on the Vulkan device (lavapipe here): the whole pass, pooling
# and projections there, normalisation on the CPU as for the CPU backend.
# test_vk_forward.c compares every pooling with the CPU's vectors.
@test "embed --backend vulkan: the four synthetic encoders within 1e-5 of llama.cpp" {
	need_vulkan
	for model in tiny-gemma-embedding-f32.gguf tiny-nomic-bert-f32.gguf tiny-bert-f32.gguf \
		tiny-lfm2-colbert-f32.gguf; do
		compare "$model" 1e-5 --backend vulkan
	done
}

@test "embed --backend vulkan: the same bits run to run, alone and among 7 inputs; --rank and --colbert run there" {
	need_vulkan
	local m c alone
	need_model m tiny-gemma-embedding-f32.gguf
	need_model c tiny-lfm2-colbert-f32.gguf
	lines_with 7 5 > "$BATS_TEST_TMPDIR/in"
	for model in "$m" "$c"; do
		alone=$("$Q42RUN" -m "$model" --embed --embed-format tsv --backend vulkan \
			-p "How do I reset my password?" | cut -f2-)
		[ -n "$alone" ]
		run "$Q42RUN" -m "$model" --embed --embed-format tsv --backend vulkan -p "How do I reset my password?"
		[ "$status" -eq 0 ]
		[ "$(cut -f2- <<<"$output")" = "$alone" ]
		run "$Q42RUN" -m "$model" --embed --embed-format tsv --backend vulkan --lines -f "$BATS_TEST_TMPDIR/in"
		[ "$status" -eq 0 ]
		[ "$(awk -F'\t' '$1 == 5' <<<"$output" | cut -f2-)" = "$alone" ]
	done
	printf '%s\n' "The stock market fell today" "How do I reset my password?" "Bananas are yellow" \
		> "$BATS_TEST_TMPDIR/docs"
	for model in "$m" "$c"; do
		run "$Q42RUN" -m "$model" --rank "How do I reset my password?" --docs "$BATS_TEST_TMPDIR/docs" \
			--backend vulkan
		[ "$status" -eq 0 ]
		[ "$(sed -n 1p <<<"$output" | cut -f2)" = 2 ]
	done
	run "$Q42RUN" -m "$c" --embed --colbert query --embed-format tsv --backend vulkan -p "hello"
	[ "$status" -eq 0 ]
	[ "$(cut -f3 <<<"$output" | tr '\n' ' ' | sed 's/ $//')" = "$("$Q42RUN" -m "$c" --tokenize -p "[Q] hello")" ]
}

@test "embed --backend vulkan without a Vulkan build: exit 3" {
	[ "${Q42_WITH_VULKAN:-}" = no ] || skip "this build has Vulkan"
	local m
	need_model m tiny-bert-f32.gguf
	run "$Q42RUN" -m "$m" --embed -p "hello" --backend vulkan
	[ "$status" -eq 3 ]
	[[ "$output" == *"built without Vulkan"* ]]
}

# The ColBERT settings a model states replace the defaults: q42's GGUF keys
# colbert.* (added here with tests/tools/hostile_models.py's GGUF editor),
# the P64 compiled from that GGUF (HPAR's ColBERT fields) and a Hugging Face
# folder's config_sentence_transformers.json (pylate's names).
@test "embed: --colbert reads the markers, lengths, skiplist and attention setting from the model" {
	local m p64c q d long
	need_model m tiny-lfm2-colbert-f32.gguf
	p64c=$(q42_bin p64c)
	python3 - "$Q42_SRCDIR/tests/tools" "$m" "$BATS_TEST_TMPDIR" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from hostile_models import Gguf, STR, U32, BOOL, ARR
base = open(sys.argv[2], "rb").read()
for name, attend in (("cb", True), ("noattend", False)):
    g = Gguf(base)
    g.kv += [["colbert.query_prefix", STR, "[q] "], ["colbert.document_prefix", STR, "[d] "],
             ["colbert.query_length", U32, 12], ["colbert.document_length", U32, 6],
             ["colbert.attend_to_expansion_tokens", BOOL, attend],
             ["colbert.skiplist_words", ARR, (STR, [","])]]
    open(f"{sys.argv[3]}/{name}.gguf", "wb").write(g.bytes())
PY
	"$p64c" --no-progress "$BATS_TEST_TMPDIR/cb.gguf" -o "$BATS_TEST_TMPDIR/cb.p64"
	python3 "$Q42_SRCDIR/tests/tools/export_hf.py" "$m" "$BATS_TEST_TMPDIR/hf" \
		--colbert-config 'query_prefix="[q] "' --colbert-config 'document_prefix="[d] "' \
		--colbert-config query_length=12 --colbert-config document_length=6 \
		--colbert-config 'skiplist_words=[","]' --colbert-config attend_to_expansion_tokens=true
	"$p64c" --no-progress "$BATS_TEST_TMPDIR/hf" -o "$BATS_TEST_TMPDIR/hf.p64"
	q=$("$Q42RUN" -m "$m" --tokenize -p "[q] hello")
	long=$(printf 'word %.0s' $(seq 60))
	# the first 6 ids of the marked document, less gpt-2's "," (11)
	d=$("$Q42RUN" -m "$m" --tokenize -p "[d] Hello, world. Good day, friend" | tr ' ' '\n' | head -6 |
		grep -vx 11 | tr '\n' ' ')
	for model in cb.gguf cb.p64 hf.p64; do
		run -0 "$Q42RUN" -m "$BATS_TEST_TMPDIR/$model" --embed --colbert query --embed-format tsv -p "hello"
		[ "$(cut -f3 <<<"$output" | tr '\n' ' ' | sed 's/ $//')" = "$q" ]
		run -0 "$Q42RUN" -m "$BATS_TEST_TMPDIR/$model" --embed --colbert query --embed-format tsv -p "$long"
		[ "$(wc -l <<<"$output")" -eq 12 ]
		run -0 "$Q42RUN" -m "$BATS_TEST_TMPDIR/$model" --embed --colbert document --embed-format tsv \
			-p "Hello, world. Good day, friend"
		[ "$(cut -f3 <<<"$output" | tr '\n' ' ')" = "$d" ]
	done
	# the three sources give the same vectors
	a=$("$Q42RUN" -m "$BATS_TEST_TMPDIR/cb.gguf" --embed --colbert document --embed-format tsv -p "a, b")
	[ "$a" = "$("$Q42RUN" -m "$BATS_TEST_TMPDIR/cb.p64" --embed --colbert document --embed-format tsv -p "a, b")" ]
	[ "$a" = "$("$Q42RUN" -m "$BATS_TEST_TMPDIR/hf.p64" --embed --colbert document --embed-format tsv -p "a, b")" ]
	# padding hidden from attention is not computed: queries refused, documents run
	run -1 "$Q42RUN" -m "$BATS_TEST_TMPDIR/noattend.gguf" --embed --colbert query -p "hello"
	[[ "$output" == *"attend_to_expansion_tokens false"* ]]
	run -0 "$Q42RUN" -m "$BATS_TEST_TMPDIR/noattend.gguf" --embed --colbert document -p "hello"
}
