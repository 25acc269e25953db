#!/usr/bin/env bats
# q42run_bench.bats -- the figures of q42run --bench (time to first token,
# peak RSS, engine memory) and of --timings, as q42run(1) documents them:
# present, numeric, consistent with each other and with the model's shape.
# `make bench` itself is not run here (it needs llama.cpp and minutes).
#
# stories260K: 5 layers, 4 KV heads of 8 dims, 512 tokens, n_ctx_train 2048
# (llamapeer info); an F32 cache of C positions is 5*4*8*4*2*C bytes.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	Q42RUN=$(q42_bin q42run)
}

# kv FIELD LINE: the value of key FIELD in a key=value line
kv() {
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

@test "--bench: time to first token, peak RSS and engine memory, numeric and consistent" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" --bench --pp 32 --tg 4 --reps 3 -t 1 -c 256
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	python3 - "$output" <<'PY'
import sys
f = dict(kv.split("=", 1) for kv in sys.argv[1].split())
# huge_mib is "-" where the kernel does not report huge pages
num = {k: float(v) for k, v in f.items() if k not in ("isa", "backend", "kv_type", "fa") and v != "-"}
assert f["kv_type"] == "f32" and f["fa"] == "off" and num["depth"] == 0, f
for k in ("ttft_ms", "ttft_min", "ttft_max", "ttft_first_ms", "ttft_load_ms", "ttft_prefill_ms",
          "peak_rss_mib", "kv_mib", "act_mib", "pp_tok_s", "tg_tok_s"):
    assert num[k] > 0, (k, f)
assert num["scratch_mib"] >= 0, f  # a few KiB here: 0.00 at two decimals
assert num["ttft_min"] <= num["ttft_ms"] <= num["ttft_max"], f
assert num["ttft_min"] <= num["ttft_first_ms"] <= num["ttft_max"], f
assert num["ttft_prefill_ms"] < num["ttft_max"] + 0.01, f
assert num["ctx"] == 256 and num["pp"] == 32 and num["reps"] == 3, f
# the cache as allocated: 5*4*8*4*2*256 bytes = 0.3125 MiB (printed to 0.1)
assert abs(num["kv_mib"] - 0.3125) < 0.06, f
# resident memory includes at least what the process touched of its cache
assert num["peak_rss_mib"] > 1.0, f
PY
}

@test "--bench: the cache grows with --ctx, the activations with --batch" {
	need_model m stories260K.gguf
	a=$("$Q42RUN" -m "$m" --bench --pp 8 --tg 1 --reps 1 -t 1 -c 256 -b 64 --json)
	b=$("$Q42RUN" -m "$m" --bench --pp 8 --tg 1 --reps 1 -t 1 -c 1024 -b 256 --json)
	python3 - "$a" "$b" <<'PY'
import json, sys
a, b = (json.loads(x)["memory"] for x in sys.argv[1:3])
kv = 5 * 4 * 8 * 4 * 2
assert kv * 256 <= a["kv_bytes"] < kv * 256 + 65536, a
assert kv * 1024 <= b["kv_bytes"] < kv * 1024 + 65536, b
assert b["act_bytes"] > 3 * a["act_bytes"] - 4 * 512 * 4, (a, b)   # logits do not scale
assert b["scratch_bytes"] > a["scratch_bytes"], (a, b)               # n_ctx scores per thread
PY
}

@test "--bench --json: one object that parses; ttft is null without a prompt" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" --bench --pp 16 --tg 2 --reps 2 -t 2 --json
	[ "$status" -eq 0 ]
	echo "$output" | python3 -m json.tool >/dev/null
	python3 - "$output" <<'PY'
import json, sys
j = json.loads(sys.argv[1])
t, m = j["ttft"], j["memory"]
assert t["n"] == 16 and 0 < t["ms_min"] <= t["ms_median"] <= t["ms_max"], t
assert t["load_ms_median"] > 0 and t["prefill_ms_median"] > 0, t
assert 0 <= t["first_token"] < 512, t
assert m["peak_rss_bytes"] > m["kv_bytes"] > 0 and m["act_bytes"] > 0, m
assert j["ctx"] == 2048 and j["kv_type"] == "f32" and j["reps"] == 2, j
PY
	run "$Q42RUN" -m "$m" --bench --pp 0 --tg 2 --reps 1 --json
	[ "$status" -eq 0 ]
	python3 -c 'import json, sys; j = json.loads(sys.argv[1]); assert j["ttft"] is None, j' "$output"
}

@test "--bench: the generation phase clock (stream GB/s, product and attention shares)" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" --bench --pp 0 --tg 48 --reps 1 -t 2 -c 256
	[ "$status" -eq 0 ]
	python3 - "$output" <<'PY'
import sys
f = dict(kv.split("=", 1) for kv in sys.argv[1].split())
w, s = float(f["tg_weight_gb_s"]), float(f["tg_stream_gb_s"])
mm, att = float(f["tg_mm_pct"]), float(f["tg_att_pct"])
# one repetition: the same bytes over the product jobs' part of its time
assert s >= w * 0.999 and w > 0, f
assert mm > 0 and att > 0 and mm + att <= 100.1, f
PY
	run "$Q42RUN" -m "$m" --bench --pp 0 --tg 8 --reps 2 -t 1 --json
	[ "$status" -eq 0 ]
	python3 - "$output" <<'PY'
import json, sys
t = json.loads(sys.argv[1])["tg"]
assert t["stream_gb_s"] > 0, t
assert 0 < t["products_share"] < 1 and 0 < t["attention_share"] < 1, t
assert t["products_share"] + t["attention_share"] <= 1.001, t
PY
	# no generation, no clock
	run "$Q42RUN" -m "$m" --bench --pp 4 --tg 0 --reps 1
	[ "$status" -eq 0 ]
	[[ "$output" == *" tg_stream_gb_s=- tg_mm_pct=- tg_att_pct=- "* ]]
	run "$Q42RUN" -m "$m" --bench --pp 4 --tg 0 --reps 1 --json
	python3 -c 'import json, sys; t = json.loads(sys.argv[1])["tg"]; assert t["stream_gb_s"] is None, t' "$output"
}

# Which rate is faster is a matter of timing, and timing is not tested here
# (on a busy machine any of them can lose). What is tested is that each
# figure is there and measures what q42run(1) says: with one step, the
# step is the only sample and the read pass the only pass, so the ratios
# are exactly quotients of the printed rates.
@test "--bench: the read pass after each generation step (tg_read_gb_s, tg_vs_read)" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" --bench --pp 0 --tg 48 --reps 2 -t 2 -c 256
	[ "$status" -eq 0 ]
	python3 - "$output" <<'PY'
import math, sys
f = dict(kv.split("=", 1) for kv in sys.argv[1].split())
for k in ("tg_read_gb_s", "tg_vs_read", "tg_mm_vs_read", "tg_read_ops_gb_s"):
    assert math.isfinite(float(f[k])) and float(f[k]) > 0, (k, f)
PY
	for t in 1 2; do
		run "$Q42RUN" -m "$m" --bench --pp 0 --tg 1 --reps 1 -t $t --json
		[ "$status" -eq 0 ]
		python3 - "$output" <<'PY'
import json, sys
j = json.loads(sys.argv[1])
t = j["tg"]
w, r, s = t["weight_gb_s"], t["read_gb_s"], t["stream_gb_s"]
assert w > 0 and r > 0 and s > 0, t
# the weight rate is the model's bytes over the step
assert abs(w - j["weight_bytes"] * t["tok_s_median"] / 1e9) <= 0.0005 + w * 1e-6, j
# printed to 3 and 4 decimals: allow for the rounding of each figure
def close(ratio, a, b, places):
    slack = 0.5 * 10 ** -places + a / b * (0.0005 / a + 0.0005 / b)
    return abs(ratio - a / b) <= slack
# step time over pass time, and product time over pass time
assert close(t["vs_read"], w, r, 4), t
assert close(t["products_vs_read"], s, r, 4), t
# one step is one pass in one job: none per matrix
assert t["read_ops_gb_s"] is None, t
PY
	done
	run "$Q42RUN" -m "$m" --bench --pp 0 --tg 8 --reps 1 -t 1 --json
	[ "$status" -eq 0 ]
	python3 - "$output" <<'PY'
import json, sys
t = json.loads(sys.argv[1])["tg"]
assert t["read_gb_s"] > 0 and 0 < t["vs_read"] and 0 < t["products_vs_read"], t
assert t["read_ops_gb_s"] > 0, t
PY
	run "$Q42RUN" -m "$m" --bench --pp 0 --tg 1 --reps 1
	[ "$status" -eq 0 ]
	[[ "$output" == *" tg_read_ops_gb_s=- "* ]]
	[[ "$output" != *" tg_read_gb_s=- "* ]]
	run "$Q42RUN" -m "$m" --bench --pp 4 --tg 0 --reps 1
	[ "$status" -eq 0 ]
	[[ "$output" == *" tg_read_gb_s=- tg_vs_read=- tg_mm_vs_read=- tg_read_ops_gb_s=- "* ]]
	run "$Q42RUN" -m "$m" --bench --pp 4 --tg 0 --reps 1 --json
	python3 -c 'import json, sys; t = json.loads(sys.argv[1])["tg"]; assert t["read_gb_s"] is None and t["vs_read"] is None, t' "$output"
}

# With --batch 1 the prompt is one-token passes, all but the last without
# logits: their last layer stores its K and V and stops (q42_forward.c).
# tiny-llama-spm's first token changes when that V column is left out.
@test "--bench: the first token does not depend on the thread count or the batch" {
	for name in stories260K.gguf tiny-llama-spm-f32.gguf; do
		need_model m "$name"
		a=$("$Q42RUN" -m "$m" --bench --pp 40 --tg 0 --reps 1 -t 1 --json)
		ta=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["ttft"]["first_token"])' "$a")
		for opt in "-t 2" "-t 1 -b 1" "-t 3 -b 1"; do
			b=$("$Q42RUN" -m "$m" --bench --pp 40 --tg 0 --reps 1 $opt --json)
			tb=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["ttft"]["first_token"])' "$b")
			[ "$ta" = "$tb" ]
		done
	done
}

@test "--no-huge-pages: the cache leaves huge pages (huge_mib), the results stay the same; a short prompt commits only the V cache's first chunk" {
	need_model s stories260K.gguf
	m="$Q42_SRCDIR/tests/models/e256-llama-tied-f16.gguf"
	thp=/sys/kernel/mm/transparent_hugepage/enabled
	if [ ! -r "$thp" ] || grep -q '\[never\]' "$thp" || [ ! -r /proc/self/smaps_rollup ]; then
		skip "this kernel gives no transparent huge pages ($thp)"
	fi
	# a 16384-position F32 cache: 8 MiB of V in chunks of 512 positions
	# (256 KiB each for this one-layer model, two kv heads of 64). An
	# 8800-token prompt writes the first 4.3 MiB of it, so it reaches into
	# at least one of the 2 MiB spans advised
	a=$("$Q42RUN" -m "$m" --bench --pp 8800 --tg 4 --reps 1 -t 1 -c 16384 --json)
	b=$("$Q42RUN" -m "$m" --bench --pp 8800 --tg 4 --reps 1 -t 1 -c 16384 --json --no-huge-pages)
	# stories260K's 10 MiB of V at 16384 positions: 20 layers and kv
	# heads, 320 KiB a chunk; 32 tokens write into the first chunk only,
	# and so into at most one span (laid out per layer and kv head, 512
	# KiB apart, they would reach every span). K's 10 MiB are chunked the
	# same way, so K adds at most one span more: each first chunk reaches
	# the first span advised when the allocation starts less than 320 KiB
	# before a 2 MiB boundary (2 MiB one run in a few, 4 MiB one in about
	# forty, which CI once met)
	c=$("$Q42RUN" -m "$s" --bench --pp 32 --tg 4 --reps 1 -t 1 -c 16384 --json)
	always=0
	grep -q '\[always\]' "$thp" && always=1
	# under valgrind the huge-page figures say nothing of q42: its calloc
	# writes every byte of the cache before q42's advice, so every span is
	# resident on small pages and becomes huge only if khugepaged's scan
	# (every 10 s by default) falls inside the run
	python3 - "$a" "$b" "$c" "$always" "${Q42_TEST_UNDER_VALGRIND:-}" <<'PY'
import json, sys
a, b, c = (json.loads(x) for x in sys.argv[1:4])
ha, hb, hc = (x["memory"]["anon_huge_bytes"] for x in (a, b, c))
assert a["ttft"]["first_token"] == b["ttft"]["first_token"], (a, b)
if sys.argv[5] == "":
    # other allocations may be huge either way where the kernel's policy
    # is "always"; the cache is huge only without the option, and only as
    # far as the positions reach
    assert ha - hb >= 2 << 20, (ha, hb)
    if sys.argv[4] == "0":
        assert hc <= 4 << 20, hc
PY
	want=$("$Q42RUN" -m "$m" -p "Once upon a time" -n 24 -c 16384)
	got=$("$Q42RUN" -m "$m" -p "Once upon a time" -n 24 -c 16384 --no-huge-pages)
	[ "$got" = "$want" ]
	[ -z "${Q42_TEST_UNDER_VALGRIND:-}" ] ||
		skip "results compared; the huge-page figures are not q42's under valgrind (its calloc commits the whole cache)"
}

@test "--bench refuses a model on standard input (exit 2)" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m - --bench --reps 1 < "$m"
	[ "$status" -eq 2 ]
	[[ "$output" == *"give a file, not standard input"* ]]
}

@test "--bench: a prompt longer than the context is a usage error (exit 2)" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" --bench --pp 300 --tg 1 --reps 1 -c 256
	[ "$status" -eq 2 ]
	[[ "$output" == *"does not fit a context of 256"* ]]
}

@test "--timings: ttft_ms is load + tokenize + prefill, then tokenize + prefill" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" -n 4 --lines --timings < <(printf 'Once upon a time\nThe little dog\n')
	[ "$status" -eq 0 ]
	t=$(echo "$output" | grep 'timings:')
	[ "$(echo "$t" | wc -l)" -eq 2 ]
	python3 - "$t" <<'PY'
import sys
for i, line in enumerate(sys.argv[1].splitlines()):
    f = dict(kv.split("=", 1) for kv in line.split()[2:])
    want = float(f["tokenize_ms"]) + float(f["prefill_ms"]) + (float(f["load_ms"]) if i == 0 else 0)
    assert abs(float(f["ttft_ms"]) - want) < 0.01, (i, f)
    assert float(f["ttft_ms"]) > 0
PY
}

@test "--tokenize --timings: bytes, tokens and MB/s of what was tokenized" {
	need_model m stories260K.gguf
	run --separate-stderr "$Q42RUN" -m "$m" --tokenize --lines --timings < <(printf 'Once upon a time\nThe little dog\n')
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | wc -w)" -eq "$(kv tokens "$stderr")" ]
	[ "$(kv bytes "$stderr")" -eq 30 ]
	python3 -c 'import sys; assert float(sys.argv[1]) > 0 and float(sys.argv[2]) > 0' \
		"$(kv tokenize_ms "$stderr")" "$(kv tokenize_mb_s "$stderr")"
}
