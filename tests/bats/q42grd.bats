#!/usr/bin/env bats
# q42grd.bats -- q42grd from the command line: every option and exit status
# of q42grd(1), every gate blocking a record with that gate named in the
# reject file, streaming (one decision per line, flushed), and the pipeline
# q42run --record | q42grd on shared/models/stories260K.gguf.
#
# Records are written here by hand after q42-record(5); digests come from
# sha256sum (coreutils); the stories260K text is REFERENCE.md's story.

load helpers

# printf 'Once upon a time' | sha256sum
PROMPT_SHA=e286222c229ec73b1bc520d88583191572ae0cbbaa66ea68053994a5e50ac87a
MODEL_SHA=270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d

setup() {
	Q42GRD=$(q42_bin q42grd)
	T="$BATS_TEST_TMPDIR"
	cat >"$T/p.json" <<'EOF'
{"schema":"q42-policy/1","default_intent":"story",
 "intents":{"story":{"max_generated_tokens":256},
            "short":{"max_generated_tokens":32},
            "hot":{"critical":true},
            "kb":{"grounding":true,"structured":true,"shape":"person",
                  "scopes":["http://ex.org/"],"namespaces":["http://ex.org/"]}},
 "shapes":{"person":{"closed":true,"properties":[
   {"predicate":"http://ex.org/name","object":"literal","max_count":1},
   {"predicate":"http://ex.org/knows","object":"iri"}]}},
 "egress":{"patterns":[{"name":"aws-key","regex":"AKIA[0-9A-Z]{16}"},
                       {"name":"email","regex":"[a-z]+@[a-z]+\\.org","targets":["prompt"]}]},
 "grounding":{"threshold":1.0,"review_threshold":0.5},
 "thermal":{"limit_c":90}}
EOF
	printf '%s\n' '<http://ex.org/alice> <http://ex.org/name> "Alice" .' \
		'<http://ex.org/alice> <http://ex.org/knows> <http://ex.org/bob> .' >"$T/f.nq"
	mkdir -p "$T/sys"
	export Q42_SYSFS_ROOT="$T/sys"
}

# mkrec PYTHON-STATEMENTS: one record line, base record edited by the
# statements (r is the record as a dict).
mkrec() {
	python3 - "$PROMPT_SHA" "$MODEL_SHA" "$1" <<'EOF'
import json, sys
r = {"schema": "q42-record/1", "request": 0, "text": ", there was a little girl",
     "stop": "max_tokens",
     "prompt": {"sha256": sys.argv[1], "bytes": 16, "add_special": True, "parse_special": True},
     "tokens": {"prompt": [1, 403, 407, 261, 378], "generated": [432, 383, 286, 261]},
     "counts": {"prompt": 5, "generated": 4, "decode_steps": 3, "text_replaced_bytes": 0},
     "model": {"container": "gguf", "sha256": sys.argv[2]},
     "provenance": []}
exec(sys.argv[3])
print(json.dumps(r, separators=(",", ":")))
EOF
}

# jq-free field access: jget JSON-LINE PYTHON-EXPR (v = the parsed line)
jget() {
	python3 -c 'import json, sys; v = json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"
}

# gates_in FILE: the gates named in the reasons of each line, "gate,gate" per line
gates_in() {
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    v = json.loads(line)["verdict"]
    print(",".join(sorted({r["gate"] for r in v["reasons"]})))' "$1"
}

# fake_zone TEMP_MC [CRITICAL_TRIP_MC]
fake_zone() {
	local z="$T/sys/class/thermal/thermal_zone0"
	mkdir -p "$z"
	echo "$1" >"$z/temp"
	if [ -n "${2:-}" ]; then
		echo critical >"$z/trip_point_0_type"
		echo "$2" >"$z/trip_point_0_temp"
	fi
}

@test "--help, --version" {
	run "$Q42GRD" --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"Usage: q42grd --policy FILE"* ]]
	[[ "$output" == *"--fail-on-block"* ]]
	run "$Q42GRD" --version
	[ "$status" -eq 0 ]
	[[ "$output" == "q42grd "[0-9]* ]]
}

@test "usage errors exit 2" {
	run "$Q42GRD" </dev/null
	[ "$status" -eq 2 ]
	[[ "$output" == *"--policy is required"* ]]
	run "$Q42GRD" --bogus -P "$T/p.json"
	[ "$status" -eq 2 ]
	run "$Q42GRD" -P "$T/p.json" a b
	[ "$status" -eq 2 ]
	run "$Q42GRD" -P "$T/p.json" --preflight
	[ "$status" -eq 2 ]
	[[ "$output" == *"--preflight needs --prompt"* ]]
	run "$Q42GRD" -P "$T/p.json" --preflight --prompt x recs.jsonl
	[ "$status" -eq 2 ]
	run "$Q42GRD" -P "$T/p.json" --prompt x --prompt-file y
	[ "$status" -eq 2 ]
	run "$Q42GRD" -P "$T/p.json" -r "$T/x" --review "$T/x"
	[ "$status" -eq 2 ]
	run "$Q42GRD" -P "$T/p.json" -F - </dev/null
	[ "$status" -eq 2 ]
	run "$Q42GRD" -P "$T/p.json" --intent ""
	[ "$status" -eq 2 ]
	head -c 70000000 /dev/zero >"$T/big"
	run "$Q42GRD" -P "$T/p.json" --preflight --prompt-file "$T/big"
	[ "$status" -eq 2 ]
}

@test "bad or missing policy and facts exit 3, naming file and place" {
	run "$Q42GRD" -P "$T/missing.json" </dev/null
	[ "$status" -eq 3 ]
	[[ "$output" == *"missing.json"* ]]
	echo '{"schema":"q42-policy/1","intents":{"a":{"max_tokens":3}}}' >"$T/bad.json"
	run "$Q42GRD" -P "$T/bad.json" </dev/null
	[ "$status" -eq 3 ]
	[[ "$output" == *"bad.json: intents.a: unknown key \"max_tokens\""* ]]
	echo '{"schema":' >"$T/trunc.json"
	run "$Q42GRD" -P "$T/trunc.json" </dev/null
	[ "$status" -eq 3 ]
	printf '<http://ex.org/a> <http://ex.org/b> <http://ex.org/c> .\n<http://ex.org/a> <b> <c> .\n' >"$T/bad.nq"
	run "$Q42GRD" -P "$T/p.json" -F "$T/bad.nq" </dev/null
	[ "$status" -eq 3 ]
	[[ "$output" == *"bad.nq: line 2, column 19: IRI <b> is relative"* ]]
	run "$Q42GRD" -P "$T/p.json" -F "$T/none.nq" </dev/null
	[ "$status" -eq 3 ]
}

@test "--check validates and summarises" {
	run "$Q42GRD" -P "$T/p.json" -F "$T/f.nq" --check
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "policy	$T/p.json	4 intents	2 egress patterns	1 shapes	sha256 $(sha256sum <"$T/p.json" | cut -d' ' -f1)" ]]
	[ "${lines[1]}" = "facts	1 file(s)	2 statements" ]
}

@test "a good record passes with its verdict and agent quin" {
	mkrec '' >"$T/in.jsonl"
	run "$Q42GRD" -P "$T/p.json" -F "$T/f.nq" "$T/in.jsonl"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[ "$(jget "$output" 'v["verdict"]["decision"]')" = pass ]
	[ "$(jget "$output" 'v["text"]')" = ", there was a little girl" ]
	local psha
	psha=$(sha256sum <"$T/p.json" | cut -d' ' -f1)
	[ "$(jget "$output" 'v["provenance"][0]["quin"]')" = "<urn:q42:model:sha256:$MODEL_SHA> <urn:q42:vocab:servesIntent> \"story\" <urn:q42:graph:agents> <urn:q42:policy:sha256:$psha> ." ]
	[ "$(jget "$output" 'v["verdict"]["policy_sha256"]')" = "$psha" ]
	# stdin and "-" read the same
	run "$Q42GRD" -P "$T/p.json" - <"$T/in.jsonl"
	[ "$status" -eq 0 ]
	[ "$(jget "$output" 'v["verdict"]["decision"]')" = pass ]
}

@test "every gate blocks its record and is named in the reject file" {
	fake_zone 20000
	{
		echo 'this is not json'
		mkrec 'r["intent"] = "nope"'
		mkrec 'r["text"] = "key AKIAABCDEFGHIJKLMNOP"'
		mkrec 'r["counts"]["generated"] = 300; r["tokens"]["generated"] = list(range(300))'
		mkrec 'r["intent"] = "kb"; r["scope"] = "http://ex.org/kb"; r["quins"] = ["<http://ex.org/alice> <http://ex.org/age> \"3\" ."]'
		mkrec 'r["intent"] = "kb"; r["scope"] = "http://ex.org/kb"; r["quins"] = ["<http://ex.org/bob> <http://ex.org/name> \"Bob\" ."]'
		mkrec ''
	} >"$T/in.jsonl"
	run "$Q42GRD" -P "$T/p.json" -F "$T/f.nq" -r "$T/rej.jsonl" "$T/in.jsonl"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	run gates_in "$T/rej.jsonl"
	[ "${lines[0]}" = record ]
	[ "${lines[1]}" = intent ]
	[ "${lines[2]}" = egress ]
	[ "${lines[3]}" = output ]
	[ "${lines[4]}" = grounding,shape ]
	[ "${lines[5]}" = grounding ]
	[ "${#lines[@]}" -eq 6 ]
	# the reject line of the non-record names its line
	[ "$(jget "$(head -n1 "$T/rej.jsonl")" 'v["line"]')" = 1 ]
	# the secret is not copied into the reject file's verdicts
	run python3 -c 'import json,sys; print(json.dumps([json.loads(l)["verdict"] for l in open(sys.argv[1])]))' "$T/rej.jsonl"
	[[ "$output" != *AKIAABCDEFGHIJKLMNOP* ]]
	[[ "$output" == *'egress pattern \"aws-key\"'* ]]
	# thermal: a hot zone blocks non-critical intents only
	fake_zone 95000
	mkrec '' >"$T/in2.jsonl"
	mkrec 'r["intent"] = "hot"' >>"$T/in2.jsonl"
	run "$Q42GRD" -P "$T/p.json" -r "$T/rej2.jsonl" "$T/in2.jsonl"
	[ "$status" -eq 0 ]
	[ "$(jget "$output" 'v["verdict"]["intent"]')" = hot ]
	[ "$(gates_in "$T/rej2.jsonl")" = thermal ]
}

@test "without --reject, blocks are reported on stderr" {
	mkrec 'r["intent"] = "nope"' >"$T/in.jsonl"
	run "$Q42GRD" -P "$T/p.json" "$T/in.jsonl"
	[ "$status" -eq 0 ]
	[[ "$output" == *"line 1 blocked: intent: intent \"nope\" is not in the policy"* ]]
}

@test "--fail-on-block exits 1 when something was blocked, 0 otherwise" {
	mkrec '' >"$T/ok.jsonl"
	mkrec 'r["intent"] = "nope"' >"$T/bad.jsonl"
	run "$Q42GRD" -P "$T/p.json" --fail-on-block -r "$T/r" "$T/ok.jsonl"
	[ "$status" -eq 0 ]
	run "$Q42GRD" -P "$T/p.json" --fail-on-block -r "$T/r" "$T/bad.jsonl"
	[ "$status" -eq 1 ]
	run "$Q42GRD" -P "$T/p.json" -r "$T/r" "$T/bad.jsonl"
	[ "$status" -eq 0 ]
}

@test "--review takes weak grounding; absent support stays blocked" {
	{
		mkrec 'r["intent"] = "kb"; r["scope"] = "http://ex.org/kb"; r["quins"] = ["<http://ex.org/alice> <http://ex.org/name> \"Alice\" .", "<http://ex.org/bob> <http://ex.org/knows> <http://ex.org/alice> ."]'
		mkrec 'r["intent"] = "kb"; r["scope"] = "http://ex.org/kb"; r["quins"] = ["<http://ex.org/bob> <http://ex.org/knows> <http://ex.org/alice> ."]'
	} >"$T/in.jsonl"
	run "$Q42GRD" -P "$T/p.json" -F "$T/f.nq" --review "$T/rev.jsonl" -r "$T/rej.jsonl" "$T/in.jsonl"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(wc -l <"$T/rev.jsonl")" -eq 1 ]
	[ "$(jget "$(cat "$T/rev.jsonl")" 'v["verdict"]["decision"]')" = review ]
	[ "$(jget "$(cat "$T/rev.jsonl")" 'v["verdict"]["grounding"]["supported"]')" = 1 ]
	[ "$(gates_in "$T/rej.jsonl")" = grounding ]
	# without --review both are blocked
	run "$Q42GRD" -P "$T/p.json" -F "$T/f.nq" -r "$T/rej2.jsonl" "$T/in.jsonl"
	[ "$(wc -l <"$T/rej2.jsonl")" -eq 2 ]
	# the files are appended to, never truncated
	run "$Q42GRD" -P "$T/p.json" -F "$T/f.nq" -r "$T/rej2.jsonl" "$T/in.jsonl"
	[ "$(wc -l <"$T/rej2.jsonl")" -eq 4 ]
}

@test "--intent and --scope declare for records that do not" {
	mkrec 'r["quins"] = ["<http://ex.org/alice> <http://ex.org/name> \"Alice\" ."]' >"$T/in.jsonl"
	run "$Q42GRD" -P "$T/p.json" -F "$T/f.nq" -i kb -s http://ex.org/kb "$T/in.jsonl"
	[ "$status" -eq 0 ]
	[ "$(jget "$output" 'v["verdict"]["decision"]')" = pass ]
	[ "$(jget "$output" 'v["verdict"]["scope"]')" = http://ex.org/kb ]
	run "$Q42GRD" -P "$T/p.json" -F "$T/f.nq" -i kb -s http://evil.org/ -r "$T/rej.jsonl" "$T/in.jsonl"
	[ -z "$output" ]
	[ "$(gates_in "$T/rej.jsonl")" = intent ]
	# a record's own declaration must agree with the command line
	mkrec 'r["intent"] = "story"' >"$T/in2.jsonl"
	run "$Q42GRD" -P "$T/p.json" -i hot -r "$T/rej2.jsonl" "$T/in2.jsonl"
	[[ "$(cat "$T/rej2.jsonl")" == *"the command line"* ]]
}

@test "--prompt and --prompt-file feed the egress gate, tied to prompt.sha256" {
	mkrec '' >"$T/in.jsonl"
	run "$Q42GRD" -P "$T/p.json" --prompt "Once upon a time" "$T/in.jsonl"
	[ "$status" -eq 0 ]
	[[ "$(jget "$output" 'v["verdict"]["gates"][3]["detail"]')" == *"prompt checked"* ]]
	run "$Q42GRD" -P "$T/p.json" --prompt "Once upon a tim" -r "$T/rej.jsonl" "$T/in.jsonl"
	[ -z "$output" ]
	[ "$(gates_in "$T/rej.jsonl")" = egress ]
	printf 'mail bob@example.org now' >"$T/prompt.txt"
	mkrec "r['prompt']['sha256'] = '$(sha256sum <"$T/prompt.txt" | cut -d' ' -f1)'" >"$T/in2.jsonl"
	run "$Q42GRD" -P "$T/p.json" --prompt-file "$T/prompt.txt" -r "$T/rej2.jsonl" "$T/in2.jsonl"
	[ -z "$output" ]
	[[ "$(cat "$T/rej2.jsonl")" == *'prompt matches egress pattern \"email\"'* ]]
}

@test "--preflight: 0 when the prompt may run, 1 when blocked" {
	run "$Q42GRD" -P "$T/p.json" --preflight -i story --prompt "Once upon a time"
	[ "$status" -eq 0 ]
	[ "$(jget "$output" 'v["preflight"]["sha256"]')" = "$PROMPT_SHA" ]
	[ "$(jget "$output" 'v["verdict"]["decision"]')" = pass ]
	run "$Q42GRD" -P "$T/p.json" --preflight --prompt "mail bob@example.org now" -r "$T/rej.jsonl"
	[ "$status" -eq 1 ]
	[ "$(gates_in "$T/rej.jsonl")" = egress ]
	run "$Q42GRD" -P "$T/p.json" --preflight -i nope --prompt "hi"
	[ "$status" -eq 1 ]
	fake_zone 99000
	run "$Q42GRD" -P "$T/p.json" --preflight --prompt "hi"
	[ "$status" -eq 1 ]
	[[ "$output" == *thermal* ]]
	run "$Q42GRD" -P "$T/p.json" --preflight -i hot --prompt "hi"
	[ "$status" -eq 0 ]
}

@test "--sysfs-root overrides Q42_SYSFS_ROOT" {
	fake_zone 95000
	mkdir -p "$T/cool/class/thermal/thermal_zone3"
	echo 30000 >"$T/cool/class/thermal/thermal_zone3/temp"
	mkrec '' >"$T/in.jsonl"
	run "$Q42GRD" -P "$T/p.json" --sysfs-root "$T/cool" "$T/in.jsonl"
	[ "$(jget "$output" 'v["verdict"]["gates"][1]["detail"]')" = "1 zone(s), hottest 30.0 C" ]
	fake_zone 70000 65000
	run "$Q42GRD" -P "$T/p.json" -r "$T/rej.jsonl" "$T/in.jsonl"
	[[ "$(cat "$T/rej.jsonl")" == *"critical trip point 65.0 C"* ]]
}

@test "I/O errors exit 4" {
	mkrec '' >"$T/in.jsonl"
	run "$Q42GRD" -P "$T/p.json" "$T/nonexistent.jsonl"
	[ "$status" -eq 4 ]
	run "$Q42GRD" -P "$T/p.json" -r "$T/no/such/dir/rej" "$T/in.jsonl"
	[ "$status" -eq 4 ]
	run "$Q42GRD" -P "$T/p.json" --prompt-file "$T/nope.txt" "$T/in.jsonl"
	[ "$status" -eq 4 ]
	[ -w /dev/full ] || skip "no /dev/full"
	run bash -c '"$1" -P "$2" "$3" >/dev/full' _ "$Q42GRD" "$T/p.json" "$T/in.jsonl"
	[ "$status" -eq 4 ]
}

@test "streaming: each decision is written before the next line is read" {
	mkrec '' >"$T/one.jsonl"
	mkfifo "$T/fifo"
	"$Q42GRD" -P "$T/p.json" "$T/fifo" >"$T/out.jsonl" &
	local pid=$!
	exec 8>"$T/fifo"
	cat "$T/one.jsonl" >&8
	local i
	for i in $(seq 50); do
		[ -s "$T/out.jsonl" ] && break
		sleep 0.1
	done
	# the writer is still open: the first decision is out anyway
	[ "$(wc -l <"$T/out.jsonl")" -eq 1 ]
	cat "$T/one.jsonl" >&8
	exec 8>&-
	wait "$pid"
	[ "$(wc -l <"$T/out.jsonl")" -eq 2 ]
}

@test "lines: CRLF, blank lines, NUL bytes, over-long lines" {
	{
		printf '%s\r\n' "$(mkrec '')"
		printf '\n'
		printf '{"schema":"q42-record/1",\0"x":1}\n'
		mkrec ''
	} >"$T/in.jsonl"
	run "$Q42GRD" -P "$T/p.json" -r "$T/rej.jsonl" "$T/in.jsonl"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[ "$(gates_in "$T/rej.jsonl")" = record ]
	[ "$(jget "$(cat "$T/rej.jsonl")" 'v["line"]')" = 3 ]
	python3 -c 'import sys; sys.stdout.write("{\"a\":\"" + "x" * (17 << 20) + "\"}\n")' >"$T/long.jsonl"
	mkrec '' >>"$T/long.jsonl"
	run "$Q42GRD" -P "$T/p.json" -r "$T/rej2.jsonl" "$T/long.jsonl"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$(cat "$T/rej2.jsonl")" == *"longer than 16777216 bytes"* ]]
}

@test "pipeline: q42run --record | q42grd on stories260K, every gate" {
	need_model m stories260K.gguf
	local q42run="$Q42_BUILDDIR/bin/q42run/q42run"
	[ -x "$q42run" ] || skip "q42run not built"
	run bash -c '"$1" -m "$2" --record -p "Once upon a time" | "$3" --policy "$4" --facts "$5"' _ \
		"$q42run" "$m" "$Q42GRD" "$T/p.json" "$T/f.nq"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[ "$(jget "$output" 'v["verdict"]["decision"]')" = pass ]
	[ "$(jget "$output" 'v["prompt"]["sha256"]')" = "$PROMPT_SHA" ]
	[[ "$(jget "$output" 'v["text"]')" == ", there was a little girl named Lily."* ]]
	[[ "$(jget "$output" 'v["provenance"][0]["quin"]')" == "<urn:q42:model:sha256:$(sha256sum <"$m" | cut -d' ' -f1)> "* ]]
	# a record violating each gate, from the same run, ends up in the reject file
	"$q42run" -m "$m" --record -n 40 -p "Once upon a time" >"$T/rec40.jsonl"
	"$q42run" -m "$m" --record -n 8 -p "Once upon a time" >"$T/rec8.jsonl"
	cat >"$T/lily.json" <<'EOF'
{"schema":"q42-policy/1","default_intent":"story","intents":{"story":{}},
 "egress":{"patterns":[{"name":"name-lily","regex":"Lily"}]}}
EOF
	fake_zone 20000
	"$Q42GRD" -P "$T/p.json" -i short -r "$T/r-out.jsonl" "$T/rec40.jsonl"
	"$Q42GRD" -P "$T/lily.json" -r "$T/r-egress.jsonl" "$T/rec40.jsonl"
	"$Q42GRD" -P "$T/p.json" -i nope -r "$T/r-intent.jsonl" "$T/rec8.jsonl"
	"$Q42GRD" -P "$T/p.json" -F "$T/f.nq" -i kb -s http://ex.org/kb -r "$T/r-shape.jsonl" "$T/rec8.jsonl"
	(printf 'garbage\n'; cat "$T/rec8.jsonl") | "$Q42GRD" -P "$T/p.json" -r "$T/r-record.jsonl" >/dev/null
	fake_zone 99000
	"$Q42GRD" -P "$T/p.json" -r "$T/r-thermal.jsonl" "$T/rec8.jsonl"
	[ "$(gates_in "$T/r-out.jsonl")" = output ]
	[ "$(gates_in "$T/r-egress.jsonl")" = egress ]
	[ "$(gates_in "$T/r-intent.jsonl")" = intent ]
	[ "$(gates_in "$T/r-shape.jsonl")" = grounding,shape ]
	[ "$(gates_in "$T/r-record.jsonl")" = record ]
	[ "$(gates_in "$T/r-thermal.jsonl")" = thermal ]
}

@test "--facts-volume grounds against a volume's committed quins" {
	local q42wal="$Q42_BUILDDIR/bin/q42wal/q42wal"
	[ -x "$q42wal" ] || skip "q42wal not built"
	"$q42wal" init "$T/v.q42"
	mkrec 'r["quins"] = ["<http://ex.org/carol> <http://ex.org/knows> <http://ex.org/dave> ."]' |
		"$q42wal" commit "$T/v.q42" >/dev/null
	mkrec 'r["intent"] = "kb"; r["scope"] = "http://ex.org/kb"; r["quins"] = ["<http://ex.org/carol> <http://ex.org/knows> <http://ex.org/dave> ."]' >"$T/in.jsonl"
	run "$Q42GRD" -P "$T/p.json" --facts-volume "$T/v.q42" "$T/in.jsonl"
	[ "$status" -eq 0 ]
	[ "$(jget "$output" 'v["verdict"]["decision"]')" = pass ]
	# the same claim against plain facts that lack it is blocked
	run "$Q42GRD" -P "$T/p.json" -F "$T/f.nq" -r "$T/rej.jsonl" "$T/in.jsonl"
	[ -z "$output" ]
	[ "$(gates_in "$T/rej.jsonl")" = grounding ]
	# a file that is not a volume is a bad facts source
	run "$Q42GRD" -P "$T/p.json" --facts-volume "$T/f.nq" "$T/in.jsonl"
	[ "$status" -eq 3 ]
}

@test "pipeline: q42run --intent --record-prompt | q42grd | q42wal commit: the passing record is in the volume, the blocked ones are not" {
	need_model m stories260K.gguf
	local q42run q42wal
	q42run=$(q42_bin q42run)
	q42wal=$(q42_bin q42wal)
	"$q42wal" init "$T/v.q42"
	run bash -c '"$1" -m "$2" --record --intent short --record-prompt -n 8 -p "Once upon a time" |
		"$3" --policy "$4" -r "$5" | "$6" commit "$7"' _ \
		"$q42run" "$m" "$Q42GRD" "$T/p.json" "$T/rej.jsonl" "$q42wal" "$T/v.q42"
	[ "$status" -eq 0 ]
	[[ "$output" == "0	"*"	record" ]]
	run "$q42wal" verify "$T/v.q42"
	[ "$status" -eq 0 ]
	[[ "$output" == "ok	"*"	1 entries	"* ]]
	run "$q42wal" show "$T/v.q42" 0
	[ "$(jget "$output" 'v["intent"]')" = short ]
	[ "$(jget "$output" 'v["prompt"]["text"]')" = "Once upon a time" ]
	[ "$(jget "$output" 'v["verdict"]["decision"]')" = pass ]
	# q42run's declared intent and recorded prompt drive the intent and
	# egress gates; neither record reaches the volume
	run bash -c '"$1" -m "$2" --record --intent nope -n 4 -p "Once upon a time" |
		"$3" --policy "$4" -r "$5" | "$6" commit "$7"' _ \
		"$q42run" "$m" "$Q42GRD" "$T/p.json" "$T/rej.jsonl" "$q42wal" "$T/v.q42"
	[ "$status" -eq 0 ]
	run bash -c '"$1" -m "$2" --record --record-prompt -n 4 -p "mail bob@ex.org now" |
		"$3" --policy "$4" -r "$5" | "$6" commit "$7"' _ \
		"$q42run" "$m" "$Q42GRD" "$T/p.json" "$T/rej.jsonl" "$q42wal" "$T/v.q42"
	[ "$status" -eq 0 ]
	[ "$(gates_in "$T/rej.jsonl" | tr '\n' ' ')" = "intent egress " ]
	run "$q42wal" verify "$T/v.q42"
	[[ "$output" == "ok	"*"	1 entries	"* ]]
}
