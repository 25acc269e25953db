#!/bin/sh
# bench.sh -- `make bench`: q42run next to llama.cpp's llamapeer on one model.
#
# Measures, in one run and with the same thread count and context size:
# prompt processing and generation tokens/s (q42run --bench, llamapeer
# bench); time to first token and peak RSS of a fresh process that loads
# the model and evaluates a BENCH_PP-token prompt (q42run --bench --tg 0,
# llamapeer gen --no-warmup, both under runstat); and tokenizer MB/s over
# the same text (q42run --tokenize --lines, llamapeer tokfile; their ids
# are compared too). Prints one table with the ratios q42 / llama.cpp.
# Without llamapeer it prints q42's column only. Not part of `make check`.
#
# Throughput runs in BENCH_REPS rounds, each membw, a fresh q42run
# --bench --reps 1, membw again, then llamapeer bench --reps 1: the memory
# bandwidth of a shared VM moves by a third within minutes, and measuring
# all of one program and then all of the other turned such a drift into
# the ratio (q42run's read pass, tg_vs_read, pairs each generation step
# with a read of the same bytes instead: its row beside membw's). The
# round's bandwidth is the mean of the two membw runs on
# either side of q42run (one run after llamapeer missed swings that came
# and went within a round). Each round gives its own ratios (q42 /
# llama.cpp, q42's weight stream / membw); the table shows the medians of
# the values and, as the ratio, the median of the rounds' ratios.
#
# Both programs keep their KV cache in BENCH_KV (f16 by default: llama.cpp's
# and llama-bench's default type; q42run --kv-type, llamapeer --kv; q8_0
# runs q42 with --flash-attn on, which such a cache needs in both).
# llama.cpp keeps its other defaults (flash attention on for the CPU).
#
# BENCH_ISA (q42run --isa: best by default, scalar, avx2, avx512) picks
# q42's kernels; with avx2, llama.cpp runs its AVX2 build too (the
# "haswell" CPU variant in llamapeer's backend folder, loaded alone through
# GGML_BACKEND_DIR), so that both are measured as on a CPU without
# AVX-512. The table's first line names llama.cpp's variant.
#
# Environment (set by the Makefile): MODEL, Q42RUN, RUNSTAT, LLAMAPEER,
# BENCH_PP, BENCH_TG, BENCH_REPS, BENCH_THREADS, BENCH_DEPTHS (section 5), BENCH_CTX (empty: q42's
# default), BENCH_KV, BENCH_ISA, BENCH_TEXT (empty: BENCH_TEXT_MB MB built from the tree's man
# pages and sources), BENCH_TOK_REPS, SRCDIR.
set -u

die() { echo "make bench: $*" >&2; exit 1; }
[ -n "${MODEL:-}" ] || die "set MODEL=path/to/model.gguf"
[ -r "$MODEL" ] || die "$MODEL: cannot read"
pp=${BENCH_PP:-128} tg=${BENCH_TG:-64} reps=${BENCH_REPS:-5} th=${BENCH_THREADS:-2}
tok_reps=${BENCH_TOK_REPS:-3} kv=${BENCH_KV:-f16} isa=${BENCH_ISA:-best}
case $isa in best | scalar | avx2 | avx512) ;; *) die "BENCH_ISA=$isa: best, scalar, avx2 or avx512" ;; esac
# q42's cache options (a Q8_0 cache needs flash attention)
kvopt="--kv-type $kv"
[ "$kv" = q8_0 ] && kvopt="$kvopt --flash-attn on"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/q42-bench.XXXXXX") || die "cannot create a temporary folder"
trap 'rm -rf "$tmp"' EXIT INT TERM

# key=value field of a line
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1; }
# median of the numbers on standard input, one per line
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

peer=
if [ -x "${LLAMAPEER:-}" ]; then peer=$LLAMAPEER
elif [ -n "${LLAMAPEER:-}" ]; then echo "make bench: llama.cpp: $LLAMAPEER not found, q42 only" >&2
fi

# llama.cpp's AVX2 build for BENCH_ISA=avx2 (see above)
if [ -n "$peer" ] && [ "$isa" = avx2 ]; then
	bdir=$(LLAMAPEER_VERBOSE=1 "$peer" info "$MODEL" 2>&1 | sed -n 's/.*, backend dir \(.*\), cpu variant .*/\1/p' | head -n 1)
	if [ -n "$bdir" ] && [ -r "$bdir/libggml-cpu-haswell.so" ]; then
		mkdir "$tmp/ggml" && ln -s "$bdir/libggml-cpu-haswell.so" "$tmp/ggml/" || die "cannot link llama.cpp's AVX2 build"
		GGML_BACKEND_DIR=$tmp/ggml
		export GGML_BACKEND_DIR
	else
		echo "make bench: no AVX2 build of llama.cpp beside llamapeer (libggml-cpu-haswell.so), q42 only" >&2
		peer=
	fi
fi
variant=
[ -n "$peer" ] && variant=$("$peer" info "$MODEL" 2>/dev/null | sed -n 's/^cpu_variant: //p')

# 1. throughput, in rounds (see above); membw is built beside llamapeer
ctxopt=
[ -n "${BENCH_CTX:-}" ] && ctxopt="-c $BENCH_CTX"
mb=$(dirname "${peer:-/nonexistent}")/membw
[ -x "$mb" ] || mb=
: >"$tmp/rounds"; : >"$tmp/stream"; : >"$tmp/read"
r=0 ctx= l=
# the median bandwidth of one membw run, GB/s (empty without membw)
membw() { [ -n "$peer" ] && [ -n "$mb" ] && field "$("$mb" --threads "$th" --reps 5 2>/dev/null | tail -n 1)" median_GBps; }
while [ "$r" -lt "$reps" ]; do
	bw0=$(membw)
	q=$("$Q42RUN" -m "$MODEL" --bench --pp "$pp" --tg "$tg" --reps 1 -t "$th" $kvopt --isa "$isa" $ctxopt) ||
		die "q42run --bench failed"
	bw1=$(membw)
	[ -n "$ctx" ] || ctx=$(field "$q" ctx)
	l= bw=
	[ -n "$bw0" ] && [ -n "$bw1" ] && bw=$(awk -v a="$bw0" -v b="$bw1" 'BEGIN { printf "%.2f", (a + b) / 2 }')
	if [ -n "$peer" ]; then
		l=$("$peer" bench "$MODEL" --pp "$pp" --tg "$tg" --reps 1 --threads "$th" --kv "$kv" 2>/dev/null |
			grep pp_tok_s) || { echo "make bench: llamapeer bench failed, q42 only" >&2; peer=; l=; }
	fi
	[ -n "$peer" ] || bw=
	echo "round $((r + 1)): q42 pp $(field "$q" pp_tok_s) tg $(field "$q" tg_tok_s)" \
		"($(field "$q" tg_weight_gb_s) GB/s)${l:+ | llama.cpp pp $(field "$l" pp_tok_s) tg $(field "$l" tg_tok_s)}${bw:+ | membw $bw GB/s ($bw0 before, $bw1 after)}"
	echo "$(field "$q" pp_tok_s) $(field "$q" tg_tok_s) $(field "$q" tg_weight_gb_s)" \
		"$(field "$l" pp_tok_s) $(field "$l" tg_tok_s) $bw" >>"$tmp/rounds"
	st=$(field "$q" tg_stream_gb_s)
	[ -n "$bw" ] && [ -n "$st" ] && [ "$st" != - ] && echo "$st $bw" >>"$tmp/stream"
	rd=$(field "$q" tg_read_gb_s)
	[ -n "$rd" ] && [ "$rd" != - ] && echo "$(field "$q" tg_weight_gb_s) $rd $(field "$q" tg_vs_read)" \
		"$st $(field "$q" tg_mm_vs_read) $(field "$q" tg_read_ops_gb_s)" >>"$tmp/read"
	r=$((r + 1))
done
# median of column c of the rounds (1..6), or of its ratio to column d
col() { awk -v c="$1" 'NF >= c { print $c }' "$tmp/rounds" | median; }
ratio() { awk -v c="$1" -v d="$2" 'NF >= d && $d + 0 > 0 { print $c / $d }' "$tmp/rounds" | median; }

# 2. time to first token and peak RSS, fresh processes, context $ctx
: >"$tmp/q_ttft"; : >"$tmp/q_rss"; : >"$tmp/l_ttft"; : >"$tmp/l_rss"
ids=
if [ -n "$peer" ]; then
	nv=$("$peer" info "$MODEL" 2>/dev/null | sed -n 's/^n_vocab: \([0-9]*\).*/\1/p')
	[ -n "$nv" ] || nv=256
	ids=$(awk -v n="$pp" -v nv="$nv" 'BEGIN { x = 12345; s = "ids:";
		for (i = 0; i < n; i++) { x = (x * 1103515245 + 12345) % 2147483648; s = s " " (x % nv) }
		print s }')
fi
r=0
while [ "$r" -lt "$reps" ]; do
	o=$("$RUNSTAT" -o "$tmp/rs" "$Q42RUN" -m "$MODEL" --bench --pp "$pp" --tg 0 --reps 1 -t "$th" \
		$kvopt --isa "$isa" -c "$ctx") || die "q42run --bench --tg 0 failed"
	field "$o" ttft_first_ms >>"$tmp/q_ttft"
	field "$(cat "$tmp/rs")" maxrss_kib >>"$tmp/q_rss"
	if [ -n "$peer" ]; then
		o=$("$RUNSTAT" -o "$tmp/rs" "$peer" gen "$MODEL" "$ids" 1 --ctx "$ctx" --threads "$th" \
			--kv "$kv" --no-warmup 2>/dev/null | grep '^timing:') || { echo "make bench: llamapeer gen failed" >&2; peer=; }
		if [ -n "$peer" ]; then
			echo "$(field "$o" load_ms) $(field "$o" prefill_ms)" | awk '{ print $1 + $2 }' >>"$tmp/l_ttft"
			field "$(cat "$tmp/rs")" maxrss_kib >>"$tmp/l_rss"
		fi
	fi
	r=$((r + 1))
done

# 3. tokenizer throughput on the same text, one request per line
text=${BENCH_TEXT:-}
if [ -z "$text" ]; then
	text=$tmp/text.txt
	mb=${BENCH_TEXT_MB:-3}
	n=0
	: >"$text"
	while [ "$(wc -c <"$text")" -lt $((mb * 1000000)) ] && [ "$n" -lt 10000 ]; do
		cat "$SRCDIR"/man/*.[15] "$SRCDIR"/README.md "$SRCDIR"/lib/*/*.c >>"$text" 2>/dev/null
		n=$((n + 1))
	done
	head -c $((mb * 1000000)) "$text" >"$tmp/t" && mv "$tmp/t" "$text"
fi
bytes=$(wc -c <"$text")
: >"$tmp/q_tok"; : >"$tmp/l_tok"
same=-
r=0
while [ "$r" -lt "$tok_reps" ]; do
	"$Q42RUN" -m "$MODEL" --tokenize --lines --timings -f "$text" >"$tmp/q_ids" 2>"$tmp/q_err" ||
		die "q42run --tokenize failed: $(cat "$tmp/q_err")"
	ms=$(field "$(grep 'timings:' "$tmp/q_err")" tokenize_ms)
	awk -v b="$bytes" -v ms="$ms" 'BEGIN { print b / 1e6 / (ms / 1e3) }' >>"$tmp/q_tok"
	if [ -n "$peer" ]; then
		"$peer" tokfile "$MODEL" "$text" >"$tmp/l_ids" 2>"$tmp/l_err" || { echo "make bench: llamapeer tokfile failed" >&2; peer=; }
		if [ -n "$peer" ]; then
			ms=$(field "$(grep 'tokfile' "$tmp/l_err")" ms)
			awk -v b="$bytes" -v ms="$ms" 'BEGIN { print b / 1e6 / (ms / 1e3) }' >>"$tmp/l_tok"
			if cmp -s "$tmp/q_ids" "$tmp/l_ids"; then same=yes; else same=NO; fi
		fi
	fi
	r=$((r + 1))
done

# 4. the table
qpp=$(col 1) qtg=$(col 2) qgb=$(col 3)
qttft=$(median <"$tmp/q_ttft") qrss=$(median <"$tmp/q_rss") qtok=$(median <"$tmp/q_tok")
lpp= ltg= lttft= lrss= ltok= bw=
if [ -n "$peer" ] && [ -n "$l" ]; then
	lpp=$(col 4) ltg=$(col 5) bw=$(col 6)
	lttft=$(median <"$tmp/l_ttft") lrss=$(median <"$tmp/l_rss") ltok=$(median <"$tmp/l_tok")
fi
echo
echo "make bench: $(basename "$MODEL"), $th threads, context $ctx, KV cache $kv, q42 kernels $isa" \
	"${variant:+(llama.cpp $variant) }medians of $reps rounds" \
	"(ratios: of the rounds' ratios; tokenizer: $tok_reps runs over $bytes bytes; same ids: $same)"
row() { # label q42 llama better [ratio, default q42 / llama]
	awk -v lab="$1" -v a="$2" -v b="$3" -v good="$4" -v pr="${5:-}" 'BEGIN {
		r = (a != "" && b != "" && b + 0 > 0) ? sprintf("%.2f", pr != "" ? pr : a / b) : "-"
		printf "%-26s %12s %12s %8s   %s\n", lab, a == "" ? "-" : sprintf("%.2f", a),
			b == "" ? "-" : sprintf("%.2f", b), r, good }'
}
# issue targets by weight type: decode 1.25x llama.cpp and 90/85 % of the
# memory bandwidth for Q8_0 / Q4_K_M, 1.0x and 95 % for F16
case $(basename "$MODEL" | tr 'A-Z' 'a-z') in
*q8_0*) tgt=1.25 bwt=0.90 ;;
*q4_k*) tgt=1.25 bwt=0.85 ;;
*f16*) tgt=1.0 bwt=0.95 ;;
*) tgt=1.0 bwt= ;;
esac
# the share of the machine's read bandwidth (membw, same rounds) the
# decode's weight stream reaches
printf "%-26s %12s %12s %8s   %s\n" metric q42 llama.cpp ratio target
row "pp$pp tok/s" "$qpp" "$lpp" ">= 1.0" "$([ -n "$lpp" ] && ratio 1 4)"
row "tg$tg tok/s" "$qtg" "$ltg" ">= $tgt" "$([ -n "$ltg" ] && ratio 2 5)"
[ -n "$bw" ] && row "tg GB/s vs membw" "$qgb" "$bw" ">= ${bwt:-?}" "$(ratio 3 6)"
# the same bytes over the time of the product jobs alone (q42run --bench
# tg_stream_gb_s): how close the kernels come, without attention and the
# steps between products
[ -s "$tmp/stream" ] && row "tg products GB/s vs membw" "$(awk '{ print $1 }' "$tmp/stream" | median)" "$bw" \
	"(kernels)" "$(awk '$2 + 0 > 0 { print $1 / $2 }' "$tmp/stream" | median)"
# q42run's read pass (tg_read_gb_s): membw's loop over the same weight
# bytes, in the same process, after every other generation step; the ratio
# is the median of the rounds' medians of step / pass pairs, each step set
# against the bandwidth of the same moment rather than of membw runs
# seconds away
rcol() { awk -v c="$1" '{ print $c }' "$tmp/read" | median; }
[ -s "$tmp/read" ] && row "tg GB/s vs read pass" "$(rcol 1)" "$(rcol 2)" ">= ${bwt:-?}" "$(rcol 3)"
[ -s "$tmp/read" ] && row "tg products vs read pass" "$(rcol 4)" "$(rcol 2)" "(kernels)" "$(rcol 5)"
# the read pass again, one job per matrix: what the hand-overs alone cost
[ -s "$tmp/read" ] && row "read per matrix vs one job" "$(rcol 6)" "$(rcol 2)" "(ceiling)" \
	"$(awk '$2 + 0 > 0 && $6 + 0 > 0 { print $6 / $2 }' "$tmp/read" | median)"
row "TTFT pp$pp ms" "$qttft" "$lttft" "<= 1.0"
row "peak RSS MiB" "$(awk -v k="$qrss" 'BEGIN { print k / 1024 }')" \
	"$([ -n "$lrss" ] && awk -v k="$lrss" 'BEGIN { print k / 1024 }')" "<= 1.0"
row "tokenizer MB/s" "$qtok" "$ltok" ">= 1.0"

# 5. depth rows (BENCH_DEPTHS, space-separated; empty: none): prompt
# processing and generation with D tokens already in the cache (q42run
# --bench --depth, llamapeer bench --depth, as llama-bench -d), and each
# process's peak RSS. q42 runs with flash attention on (its fastest form
# at depth); llama.cpp runs both with its default (on) and with
# --fa off, and the ratio is q42 over the better of the two. One round
# each: a depth of 16384 takes minutes per program on two cores.
depths=${BENCH_DEPTHS:-}
[ -n "$depths" ] && printf "\n%-26s %12s %12s %12s %8s\n" "depth rows (1 round)" "q42 fa on" "llama fa on" "llama fa off" "ratio"
for d in $depths; do
	most=$pp
	[ "$tg" -gt "$most" ] && most=$tg
	dctx=$(( (d + most + 255) / 256 * 256 ))
	q=$("$RUNSTAT" -o "$tmp/rs" "$Q42RUN" -m "$MODEL" --bench --pp "$pp" --tg "$tg" --depth "$d" --reps 1 \
		-t "$th" -c "$dctx" --kv-type "$kv" --flash-attn on --isa "$isa") || die "q42run --bench --depth $d failed"
	qr=$(field "$(cat "$tmp/rs")" maxrss_kib)
	lon= loff= lonr= loffr=
	if [ -n "$peer" ]; then
		lon=$("$RUNSTAT" -o "$tmp/rs" "$peer" bench "$MODEL" --pp "$pp" --tg "$tg" --depth "$d" --reps 1 \
			--threads "$th" --kv "$kv" --fa on 2>/dev/null | grep pp_tok_s) && lonr=$(field "$(cat "$tmp/rs")" maxrss_kib)
		# (a quantized V cache needs flash attention in llama.cpp)
		if [ "$kv" != q8_0 ]; then
			loff=$("$RUNSTAT" -o "$tmp/rs" "$peer" bench "$MODEL" --pp "$pp" --tg "$tg" --depth "$d" --reps 1 \
				--threads "$th" --kv "$kv" --fa off 2>/dev/null | grep pp_tok_s) &&
				loffr=$(field "$(cat "$tmp/rs")" maxrss_kib)
		fi
	fi
	# (a comparison among printf's arguments is parenthesised: bare, awk
	# reads its > as a redirection into a file)
	for k in pp_tok_s tg_tok_s; do
		a=$(field "$q" $k) b=$(field "$lon" $k) c=$(field "$loff" $k)
		awk -v lab="${k%%_*}@$d tok/s" -v a="$a" -v b="$b" -v c="$c" 'BEGIN {
			best = (b + 0 > c + 0) ? b : c
			printf "%-26s %12s %12s %12s %8s\n", lab, a, b == "" ? "-" : b, c == "" ? "-" : c,
				(best + 0 > 0 ? sprintf("%.2f", a / best) : "-") }'
	done
	awk -v lab="peak RSS MiB @$d" -v a="$qr" -v b="$lonr" -v c="$loffr" 'BEGIN {
		printf "%-26s %12.1f %12s %12s %8s\n", lab, a / 1024, b == "" ? "-" : sprintf("%.1f", b / 1024),
			c == "" ? "-" : sprintf("%.1f", c / 1024), (b + 0 > 0 ? sprintf("%.2f", a / b) : "-") }'
done
