#!/usr/bin/env bats
# examples.bats -- every file of examples/ run against the demo model, so
# none can rot: policy.json and facts.nq (each q42grd gate passes one
# record and blocks another), pipeline.sh and check-proof.sh (run, filter,
# commit, verify, prove; a changed proof fails), the Makefile (pattern
# rule, signed digest, check-models failing on a changed digest or model)
# and the GitHub Actions workflow's check steps.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	EX="$Q42_SRCDIR/examples"
	T="$BATS_TEST_TMPDIR"
	for p in p64c p64check q42run q42grd q42wal; do
		d=$(dirname "$(q42_bin $p)")
		PATH="$d:$PATH"
	done
	export PATH
	need_cmd openssl
	# the demo model, made once per run of this file
	DEMO="$BATS_FILE_TMPDIR/demo.gguf"
	[ -f "$DEMO" ] || "$Q42_BUILDDIR/tests/tools/gen_demo" "$DEMO"
	[ -f "$BATS_FILE_TMPDIR/demo.p64" ] || p64c --no-progress "$DEMO" -o "$BATS_FILE_TMPDIR/demo.p64"
	P64="$BATS_FILE_TMPDIR/demo.p64"
	mkdir -p "$T/sys"
	export Q42_SYSFS_ROOT="$T/sys"
}

# edit RECORD-FILE PYTHON: each record line of the file, edited (r is the
# record); prints the lines
edit() {
	python3 - "$1" "$2" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    exec(sys.argv[2])
    print(json.dumps(r, separators=(",", ":")))
PY
}

# decide LINE [q42grd OPTION...]: q42grd's decision on one record line and
# the gates that failed or asked for review, as "decision gate,gate"
decide() {
	local line=$1
	shift
	rm -f "$T/rej" "$T/rev"
	printf '%s\n' "$line" | q42grd --policy "$EX/policy.json" --facts "$EX/facts.nq" \
		--reject "$T/rej" --review "$T/rev" "$@" >"$T/out"
	python3 - "$T/out" "$T/rej" "$T/rev" <<'PY'
import json, os, sys
for path in sys.argv[1:]:
    if os.path.exists(path) and os.path.getsize(path):
        v = json.loads(open(path).readline()).get("verdict", {})
        bad = {g["gate"] for g in v.get("gates", []) if g["result"] in ("fail", "review")}
        print(v.get("decision", "?"), ",".join(sorted(bad)) or "-")
        break
PY
}

@test "examples: policy.json and facts.nq load" {
	run q42grd --policy "$EX/policy.json" --facts "$EX/facts.nq" --check
	[ "$status" -eq 0 ]
	[[ $output == *"3 intents"*"3 egress patterns"*"1 shapes"* ]]
	[[ $output == *"5 statements"* ]]
}

@test "examples: every q42grd gate of policy.json passes one record and blocks another" {
	q42run -m "$P64" -p "Once upon a time" -n 8 --record --record-prompt --intent story >"$T/story"
	base=$(cat "$T/story")
	[ "$(decide "$base")" = "pass -" ]
	# record: not a record
	[ "$(decide 'this is not JSON')" = "block record" ]
	# thermal: a zone at 99 C blocks the story intent, not the critical alert one
	mkdir -p "$T/sys/class/thermal/thermal_zone0"
	echo 99000 >"$T/sys/class/thermal/thermal_zone0/temp"
	[ "$(decide "$base")" = "block thermal" ]
	[ "$(decide "$(edit "$T/story" 'r["intent"] = "alert"')")" = "pass -" ]
	rm -r "$T/sys/class"
	# intent: an intent the policy lacks; a kb claim outside its namespace
	[ "$(decide "$(edit "$T/story" 'r["intent"] = "chat"')")" = "block intent" ]
	kb='r["intent"] = "kb"; r["scope"] = "https://example.org/people/"; r["quins"] = ['
	alice='<https://example.org/people/alice> <http://xmlns.com/foaf/0.1'
	[ "$(decide "$(edit "$T/story" "$kb"'"<https://evil.example/x> <http://xmlns.com/foaf/0.1/name> \"X\" ."]')")" = "block grounding,intent" ]
	# egress: an e-mail address in the prompt; an AWS key in the text
	q42run -m "$P64" -p "Mail bob@example.org" -n 8 --record --record-prompt >"$T/mail"
	[ "$(decide "$(cat "$T/mail")")" = "block egress" ]
	[ "$(decide "$(edit "$T/story" 'r["text"] += " AKIAABCDEFGHIJKLMNOP"')")" = "block egress" ]
	# output: more tokens than the story intent's ceiling of 64
	q42run -m "$P64" -p "Once upon a time" -n 80 --ignore-eos --record --intent story >"$T/long"
	[ "$(decide "$(cat "$T/long")")" = "block output" ]
	# shape: a second name, and a predicate the closed shape lacks
	[ "$(decide "$(edit "$T/story" "$kb"'"'"$alice"'/name> \"Alice\" .", "'"$alice"'/name> \"Al\" ."]')")" = "block grounding,shape" ]
	[ "$(decide "$(edit "$T/story" "$kb"'"'"$alice"'/mbox> <mailto:a@example.org> ."]')")" = "block grounding,shape" ]
	# grounding: supported claims pass; half supported go to review; none: blocked
	[ "$(decide "$(edit "$T/story" "$kb"'"'"$alice"'/name> \"Alice\" .", "'"$alice"'/age> \"34\" ."]')")" = "pass -" ]
	[ "$(decide "$(edit "$T/story" "$kb"'"'"$alice"'/name> \"Alice\" .", "'"$alice"'/age> \"35\" ."]')")" = "review grounding" ]
	[ "$(decide "$(edit "$T/story" "$kb"'"'"$alice"'/age> \"35\" ."]')")" = "block grounding" ]
}

@test "examples: pipeline.sh runs, filters, commits, verifies and proves; check-proof.sh refuses a changed proof" {
	openssl genpkey -algorithm ed25519 -out "$T/k.pem" 2>/dev/null
	openssl pkey -in "$T/k.pem" -pubout -out "$T/k.pub"
	mkdir "$T/w"
	run "$EX/pipeline.sh" -k "$T/k.pem" -K "$T/k.pub" "$P64" "$T/w/vol.q42" \
		"Once upon a time" "Mail bob@example.org" "The cat sat"
	echo "$output"
	[ "$status" -eq 1 ] # one record blocked
	[ "$(printf '%s\n' "$output" | cut -c1-9 | tr -d ' ' | paste -sd,)" = run,filter,commit,verify,prove ]
	[[ ${lines[1]} == *"2 passed, 1 blocked (egress: prompt matches egress pattern \"email\")"* ]]
	[[ ${lines[3]} == *"4 frames, 3 entries"*"tree head signed"* ]]
	[ "$(wc -l <"$T/w/rejects.jsonl")" -eq 1 ]
	q42wal verify "$T/w/vol.q42" --outputs --head "$T/w/head.json" --pub "$T/k.pub"
	# the proof and head it checked; then each changed
	run "$EX/check-proof.sh" "$T/w/proof.json" "$T/w/head.json"
	[ "$status" -eq 0 ]
	[[ $output == "proof ok: entry 2 of 3, 1 hashes, root "* ]]
	q42wal prove "$T/w/vol.q42" 1 >"$T/p1.json"
	"$EX/check-proof.sh" "$T/p1.json" "$T/w/head.json"
	sed 's/"index":1/"index":0/' "$T/p1.json" >"$T/bad.json"
	run "$EX/check-proof.sh" "$T/bad.json" "$T/w/head.json"
	[ "$status" -eq 1 ]
	[[ $output == *"leads to root"* ]]
	python3 - "$T/p1.json" "$T/bad.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["path"][0] = ("0" if p["path"][0][0] != "0" else "1") + p["path"][0][1:]
open(sys.argv[2], "w").write(json.dumps(p, separators=(",", ":")) + "\n")
PY
	run "$EX/check-proof.sh" "$T/bad.json" "$T/w/head.json"
	[ "$status" -eq 1 ]
	run "$EX/check-proof.sh" "$T/p1.json" "$T/w/head.json" "$(sed -n 's/.*"leaf":"\([0-9a-f]*\)".*/\1/p' "$T/w/proof.json")"
	[ "$status" -eq 1 ]
	[[ $output == *"another entry"* ]]
	# a second run appends to the same volume
	run "$EX/pipeline.sh" "$P64" "$T/w/vol.q42" "Once more"
	[ "$status" -eq 0 ]
	[[ ${lines[3]} == *"5 frames, 4 entries"*"tree head unsigned"* ]]
}

@test "examples: Makefile compiles by pattern rule, signs the digests, and check-models fails on a change" {
	mkdir "$T/m"
	cp "$DEMO" "$T/m/demo.gguf"
	mk() { make -s -C "$T/m" -f "$EX/Makefile" "$@"; }
	mk keys sign
	[ -f "$T/m/demo.p64" ] && [ -f "$T/m/SHA256SUMS.sig" ]
	cmp "$T/m/demo.p64" "$P64" # deterministic: the same bytes as any p64c run
	run mk check-models
	[ "$status" -eq 0 ]
	[[ $output == *"demo.p64	OK	"*sha256* ]]
	# a digest changed after signing: the signature fails
	cp "$T/m/SHA256SUMS" "$T/sums"
	sed -i 's/^./0/; s/^00/11/' "$T/m/SHA256SUMS"
	run mk check-models
	[ "$status" -ne 0 ]
	cp "$T/sums" "$T/m/SHA256SUMS"
	# a container that is not the signed one: rebuilt from a changed GGUF
	python3 - "$T/m/demo.gguf" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
data[-1] ^= 0x01
open(sys.argv[1], "wb").write(data)
PY
	touch "$T/m/demo.gguf"
	run mk check-models
	[ "$status" -ne 0 ]
	[[ $output == *"demo.p64	INVALID"* ]]
	# a model that does not compile leaves no container behind
	echo "not a model" >"$T/m/bad.gguf"
	run mk bad.p64
	[ "$status" -ne 0 ]
	[ ! -e "$T/m/bad.p64" ] && [ ! -e "$T/m/bad.p64.tmp" ]
}

@test "examples: the GitHub Actions workflow's check steps pass here" {
	wf="$EX/q42-ci.yml"
	mkdir -p "$T/ci/models"
	cp "$DEMO" "$T/ci/models/demo.gguf"
	make -s -C "$T/ci/models" -f "$EX/Makefile" keys sign
	rm "$T/ci/models/signer.pem" "$T/ci/models/demo.p64" # CI has neither
	# each step as name TAB run-script (one line, \n-joined), in order
	python3 - "$wf" >"$T/steps" <<'PY'
import re, sys
steps, cur, block, ind = [], None, None, None
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if block is not None:
        if line.strip() == "" or len(line) - len(line.lstrip()) >= ind:
            block.append(line[ind:] if line.strip() else "")
            continue
        cur["run"] = "\n".join(block).strip()
        block = None
    m = re.match(r"^(\s*)- (name|uses): (.*)$", line)
    if m:
        cur = {"name": m.group(3).strip('"'), "run": ""}
        steps.append(cur)
        continue
    m = re.match(r"^(\s*)(- )?run: \|$", line)
    if m and cur is not None:
        block, ind = [], len(m.group(1)) + 2
if block is not None:
    cur["run"] = "\n".join(block).strip()
for s in steps:
    print(s["name"] + "\t" + s["run"].replace("\\", "\\\\").replace("\n", "\\n"))
PY
	grep -q $'^Setup: Debian packages\t.*apt-get install' "$T/steps"
	grep -q $'^Setup: build and install q42\t' "$T/steps"
	n=0
	while IFS=$'\t' read -r name script; do
		case $name in Setup:* | actions/*) continue ;; esac
		[ -n "$script" ]
		echo "step: $name"
		(cd "$T/ci" && Q42_EXAMPLES="$EX" MODELS_DIR=models \
			PROMPTS='"Once upon a time" "The little dog ran to the park"' \
			bash -e -c "$(printf '%b' "$script")")
		n=$((n + 1))
	done <"$T/steps"
	[ "$n" -eq 2 ]
	[ -f "$T/ci/models/demo.p64.out/proof.json" ]
}
