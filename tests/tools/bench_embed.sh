#!/bin/sh
# bench_embed.sh -- q42run --bench --embed next to llama.cpp's
# `llamapeer embed --lines` on the same texts, in one run (docs/perf/embed.md).
#
# The texts: BENCH_TEXTS lines (default 256) of 19 to 55 words drawn from a
# fixed list by a fixed linear congruential generator, so every run embeds
# the same bytes (20 to 60 tokens each with the llama-spm vocabulary).
# Rounds: BENCH_REPS (default 3), each a fresh q42run --bench --embed
# --reps 1 (one untimed warm pass, one timed), then one whole q42run
# --embed --lines process and one whole llamapeer embed process (load,
# tokenize, one pass, print; llamapeer's decode_ms is its pass) under
# /usr/bin/time for their CPU seconds (user + sys). One thread each unless
# BENCH_THREADS says. On a shared machine the wall times move with the
# other load; the CPU seconds of a one-thread process much less. Prints
# each round and the medians, texts/s and tokens/s, and the ratios; then
# compares the two programs' vectors (largest absolute difference, lowest
# cosine). Not part of `make check`.
#
# Usage: MODEL=... [Q42RUN=...] [LLAMAPEER=...] sh tests/tools/bench_embed.sh
set -eu
: "${MODEL:?set MODEL to a GGUF embedding model}"
: "${Q42RUN:=build/bin/q42run/q42run}"
: "${LLAMAPEER:=${PEER_DIR:-$HOME/.cache/q42-peer}/bin/llamapeer}"
: "${BENCH_TEXTS:=256}"
: "${BENCH_REPS:=3}"
: "${BENCH_THREADS:=1}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

awk -v n="$BENCH_TEXTS" 'BEGIN {
	split("the a of to and in is for on with that by as at from this be are was it an or " \
	      "not have which has more can will their been one all two new first other some " \
	      "time people year may after most also used over such only between many into " \
	      "these would water system city world state during including known part under " \
	      "where while group since several found both three however about through large " \
	      "number high called well life work later same each because before made there " \
	      "small long government early second century area family game series name place " \
	      "university river house music film school country company national history body " \
	      "power model light energy", w, " ")
	nw = 0; for (k in w) nw++
	s = 35
	for (i = 0; i < n; i++) {
		s = (s * 1103515245 + 12345) % 2147483648; len = 19 + s % 37
		line = ""
		for (j = 0; j < len; j++) {
			s = (s * 1103515245 + 12345) % 2147483648
			line = line (j ? " " : "") w[1 + int(s / 65536) % nw]
		}
		print toupper(substr(line, 1, 1)) substr(line, 2) "."
	}
}' > "$tmp/texts"

r=1
while [ "$r" -le "$BENCH_REPS" ]; do
	"$Q42RUN" -m "$MODEL" --bench --embed -f "$tmp/texts" -t "$BENCH_THREADS" --reps 1 > "$tmp/q.$r"
	/usr/bin/time -f '%U %S' -o "$tmp/qt.$r" "$Q42RUN" -m "$MODEL" --embed --embed-format f32 \
		--lines -f "$tmp/texts" -t "$BENCH_THREADS" > /dev/null
	/usr/bin/time -f '%U %S' -o "$tmp/lt.$r" "$LLAMAPEER" embed "$MODEL" --lines "$tmp/texts" \
		--threads "$BENCH_THREADS" --fa off --kv f32 > "$tmp/lv" 2> "$tmp/l.$r"
	q=$(sed -n 's/.* ms_median=\([0-9.]*\) .*/\1/p' "$tmp/q.$r")
	l=$(sed -n 's/.* decode_ms=\([0-9.]*\) .*/\1/p' "$tmp/l.$r")
	qc=$(awk '{ print $1 + $2 }' "$tmp/qt.$r")
	lc=$(awk '{ print $1 + $2 }' "$tmp/lt.$r")
	echo "round $r: pass wall q42 ${q} ms, llama.cpp ${l} ms; process CPU q42 ${qc} s, llama.cpp ${lc} s"
	echo "$q $l $qc $lc" >> "$tmp/ms"
	r=$((r + 1))
done
tok=$(sed -n 's/.* tokens=\([0-9]*\) .*/\1/p' "$tmp/q.1")
ltok=$(sed -n 's/.* n_tokens=\([0-9]*\) .*/\1/p' "$tmp/l.1")
awk -v n="$BENCH_TEXTS" -v tok="$tok" -v ltok="$ltok" '
	function median(a, n,   i, j, t) {
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return a[int((n + 1) / 2)]
	}
	{ q[NR] = $1; l[NR] = $2; qc[NR] = $3; lc[NR] = $4; r[NR] = $2 / $1; rc[NR] = $4 / $3 }
	END {
		qm = median(q, NR); lm = median(l, NR); qcm = median(qc, NR); lcm = median(lc, NR)
		rm = median(r, NR); rcm = median(rc, NR)
		printf "q42run:    %d texts, %d tokens, median %.1f ms: %.2f texts/s, %.1f tokens/s\n", n, tok, qm, n / (qm / 1e3), tok / (qm / 1e3)
		printf "llama.cpp: %d texts, %d tokens, median %.1f ms: %.2f texts/s, %.1f tokens/s\n", n, ltok, lm, n / (lm / 1e3), ltok / (lm / 1e3)
		printf "ratio q42 / llama.cpp (texts/s), median of the rounds: %.2f\n", rm
		printf "process CPU seconds, median: q42run %.2f, llama.cpp %.2f; ratio, median of the rounds: %.2f\n", qcm, lcm, rcm
	}' "$tmp/ms"
"$Q42RUN" -m "$MODEL" --embed --embed-format tsv --lines -f "$tmp/texts" -t "$BENCH_THREADS" |
	cut -f4- | tr '\t' ' ' > "$tmp/qv"
paste -d'|' "$tmp/qv" "$tmp/lv" | awk -F'|' '{
	n = split($1, a, " "); split($2, b, " "); dot = 0; na = 0; nb = 0
	for (i = 1; i <= n; i++) { d = a[i] - b[i]; if (d < 0) d = -d; if (d > m) m = d; dot += a[i] * b[i]; na += a[i] * a[i]; nb += b[i] * b[i] }
	c = dot / sqrt(na * nb); if (NR == 1 || c < mc) mc = c
} END { printf "vectors: %d compared, max |q42 - llama.cpp| %.3g, lowest cosine %.9f\n", NR, m + 0, mc }'
