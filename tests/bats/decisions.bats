#!/usr/bin/env bats
# decisions.bats -- typed decisions (issue 36): q42run --decisions scores
# only the allowed options of each --jsonl request's kind (yesno, choice,
# score), the record's choices receipt says what produced the answer, and
# q42grd gates on it (an intent with "decision", q42-policy(5)).

load helpers
bats_require_minimum_version 1.5.0

setup() {
	Q42RUN=$(q42_bin q42run)
	Q42GRD=$(q42_bin q42grd)
	need_model M stories260K.gguf
	REQ='{"prefix": "Lily had a red ball. ", "questions": [{"question": "Was the ball red? Answer:", "kind": "yesno"}, {"question": "How happy was she, 1 to 5?", "kind": "score", "min": 1, "max": 5}, {"question": "The ball was", "kind": "choice", "options": [" red", " blue", " green"]}]}'
}

# field JSON-LINE PYTHON-EXPR (r = the record)
field() {
	python3 -c 'import json, sys; r = json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"
}

@test "--decisions: each kind scores its own options; the answer is the most probable" {
	run "$Q42RUN" -m "$M" --jsonl --decisions --record <<<"$REQ"
	[ "$status" -eq 0 ]
	mapfile -t recs <<<"$output"
	[ "${#recs[@]}" -eq 3 ]
	[ "$(field "${recs[0]}" 'r["choices"]["kind"]')" = yesno ]
	[ "$(field "${recs[0]}" '[o["option"] for o in r["choices"]["options"]]')" = "[' yes', ' no']" ]
	[ "$(field "${recs[1]}" '[o["option"] for o in r["choices"]["options"]]')" = "[' 1', ' 2', ' 3', ' 4', ' 5']" ]
	[ "$(field "${recs[2]}" 'r["choices"]["kind"]')" = choice ]
	for r in "${recs[@]}"; do
		[ "$(field "$r" 'max(r["choices"]["options"], key=lambda o: o["prob"])["option"] == r["choices"]["answer"]')" = True ]
		[ "$(field "$r" 'abs(sum(o["prob"] for o in r["choices"]["options"]) - 1) < 1e-9')" = True ]
	done
	# the same probabilities as --choices with the same options, one per process
	run "$Q42RUN" -m "$M" -p "Lily had a red ball. The ball was" --choices " red, blue, green" --record
	[ "$status" -eq 0 ]
	[ "$(field "$output" 'r["choices"]["options"]')" = "$(field "${recs[2]}" 'r["choices"]["options"]')" ]
	[ "$(field "$output" 'r["choices"]["kind"]')" = options ]
}

@test "--decisions: a request without a kind, or a bad kind, fails with exit 4 and says why" {
	run "$Q42RUN" -m "$M" --jsonl --decisions <<<'{"prompt": "x"}'
	[ "$status" -eq 4 ]
	[[ $output == *'has no "kind"'* ]]
	run "$Q42RUN" -m "$M" --jsonl --decisions <<<'{"prompt": "x", "kind": "maybe"}'
	[ "$status" -eq 4 ]
	[[ $output == *'"kind" must be'* ]]
	run "$Q42RUN" -m "$M" --jsonl --decisions <<<'{"prompt": "x", "kind": "score", "min": 5, "max": 1}'
	[ "$status" -eq 4 ]
	[[ $output == *"score range 5..1"* ]]
	run "$Q42RUN" -m "$M" --jsonl --decisions <<<'{"prompt": "x", "kind": "choice", "options": ["a"]}'
	[ "$status" -eq 4 ]
	[[ $output == *"at least 2 options"* ]]
	run "$Q42RUN" -m "$M" --jsonl --decisions <<<'{"prompt": "x", "kind": "yesno", "min": 1}'
	[ "$status" -eq 4 ]
	run "$Q42RUN" -m "$M" --decisions -p x
	[ "$status" -eq 2 ]
	# with --choices, a request without a kind scores LIST
	run "$Q42RUN" -m "$M" --jsonl --decisions --choices " a, b" <<<'{"prompt": "x"}'
	[ "$status" -eq 0 ]
}

@test "q42grd: an intent with decision passes receipts that agree and blocks the rest" {
	sha=$(sha256sum "$M" | cut -d' ' -f1)
	other=$(printf '0%.0s' $(seq 64))
	P="$BATS_TEST_TMPDIR/p.json"
	printf '{"schema":"q42-policy/1","default_intent":"d","intents":{"d":{"decision":true,"decision_models":["%s"]},"o":{"decision":true,"decision_models":["%s"]}}}\n' "$sha" "$other" >"$P"
	"$Q42RUN" -m "$M" --jsonl --decisions --record --intent d <<<"$REQ" >"$BATS_TEST_TMPDIR/d"
	run "$Q42GRD" --policy "$P" <"$BATS_TEST_TMPDIR/d"
	[ "$status" -eq 0 ]
	[ "$(wc -l <<<"$output")" -eq 3 ]
	# another model than the intent allows
	sed 's/"intent":"d"/"intent":"o"/' "$BATS_TEST_TMPDIR/d" | "$Q42GRD" --policy "$P" --reject "$BATS_TEST_TMPDIR/rej" >"$BATS_TEST_TMPDIR/pass"
	[ ! -s "$BATS_TEST_TMPDIR/pass" ]
	grep -q "is not one of intent" "$BATS_TEST_TMPDIR/rej"
	# a receipt whose answer was changed
	head -1 "$BATS_TEST_TMPDIR/d" | python3 -c 'import json, sys
r = json.loads(sys.stdin.read())
c = r["choices"]
c["answer"] = " yes" if c["answer"] == " no" else " no"
print(json.dumps(r))' >"$BATS_TEST_TMPDIR/t"
	run "$Q42GRD" --policy "$P" --reject "$BATS_TEST_TMPDIR/rej2" <"$BATS_TEST_TMPDIR/t"
	[ -z "$output" ]
	grep -q "not the most probable option" "$BATS_TEST_TMPDIR/rej2"
	# a generation record has no receipt
	"$Q42RUN" -m "$M" -p Lily -n 2 --record --intent d | "$Q42GRD" --policy "$P" --reject "$BATS_TEST_TMPDIR/rej3" >"$BATS_TEST_TMPDIR/pass3"
	[ ! -s "$BATS_TEST_TMPDIR/pass3" ]
	grep -q "no choices receipt" "$BATS_TEST_TMPDIR/rej3"
	# decision_models without decision is a policy error
	printf '{"schema":"q42-policy/1","intents":{"d":{"decision_models":["%s"]}}}\n' "$sha" >"$P"
	run "$Q42GRD" --policy "$P" </dev/null
	[ "$status" -ne 0 ]
	[[ $output == *'needs "decision": true'* ]]
}
