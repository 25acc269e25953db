#!/bin/bash
# pipeline.sh -- the q42 pipeline end to end, one titled line per step:
# run prompts through a model (q42run --record), filter the records under
# a policy (q42grd), commit those that pass to a volume (q42wal commit),
# verify the volume against a signed tree head, and prove that the last
# record is in it (q42wal prove, checked by check-proof.sh).
#
#   pipeline.sh [-i INTENT] [-n TOKENS] [-k KEY.pem -K PUB.pem] MODEL VOLUME PROMPT...
#
# A new VOLUME is created and the model bound to it first, so that
# `q42wal verify --outputs` can tie every record to the model that wrote
# it. Policy and facts: $POLICY and $FACTS (default: policy.json and
# facts.nq beside this script). Work files go beside VOLUME: records.jsonl
# (q42run), passed.jsonl (q42grd), rejects.jsonl, commits.tsv (q42wal),
# head.json, proof.json. Without -k the tree head is unsigned.
# Exit status: 0 every record passed and is proven; 1 a record was
# blocked (the others are committed and proven); 2 usage; else the failing
# program's status.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
POLICY=${POLICY:-$here/policy.json}
FACTS=${FACTS:-$here/facts.nq}
intent=story
tokens=32
key=
pub=
usage() {
	echo "usage: pipeline.sh [-i INTENT] [-n TOKENS] [-k KEY.pem -K PUB.pem] MODEL VOLUME PROMPT..." >&2
	exit 2
}
while getopts i:n:k:K: opt; do
	case $opt in
	i) intent=$OPTARG ;;
	n) tokens=$OPTARG ;;
	k) key=$OPTARG ;;
	K) pub=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 3 ] || usage
{ [ -z "$key" ] && [ -z "$pub" ]; } || { [ -n "$key" ] && [ -n "$pub" ]; } || usage
model=$1
vol=$2
shift 2
dir=$(dirname "$vol")

step() { # step TITLE TEXT...: one line of the tour
	local t=$1
	shift
	printf '%-9s %s\n' "$t" "$*"
}

# 1. A volume of its own for this model: the binding is entry 0.
if [ ! -e "$vol" ]; then
	q42wal init "$vol"
	q42wal bind "$vol" "$model" >/dev/null
fi

# 2-4. run | filter | commit, one pipe; tee keeps what passed between them.
printf '%s\n' "$@" |
	q42run -m "$model" --lines --record --record-prompt --intent "$intent" -n "$tokens" |
	tee "$dir/records.jsonl" |
	q42grd --policy "$POLICY" --facts "$FACTS" --reject "$dir/rejects.jsonl" |
	tee "$dir/passed.jsonl" |
	q42wal commit "$vol" >"$dir/commits.tsv"

n_run=$(wc -l <"$dir/records.jsonl")
n_pass=$(wc -l <"$dir/passed.jsonl")
n_block=$((n_run - n_pass))
first_text=$(head -n 1 "$dir/records.jsonl" |
	sed -n 's/^{"schema":"[^"]*","request":[0-9]*,"text":"\(\([^"\\]\|\\.\)*\)".*$/\1/p')
# clip TEXT: at most 32 characters of it
clip() { if [ "${#1}" -le 32 ]; then printf '%s' "$1"; else printf '%s...' "${1:0:32}"; fi; }
step run "q42run: \"$(clip "$1")\" -> \"$(clip "$first_text")\" ($n_run prompts, records.jsonl)"
why=
if [ "$n_block" -gt 0 ]; then
	why=$(tail -n "$n_block" "$dir/rejects.jsonl" | head -n 1 |
		sed -n 's/.*"reasons":\[{"gate":"\([a-z]*\)","reason":"\(\([^"\\]\|\\.\)*\)".*/ (\1: \2)/p' |
		sed 's/\\"/"/g')
fi
step filter "q42grd: $n_pass passed, $n_block blocked$why -> rejects.jsonl"
last=$(awk -F'\t' '$3 == "record" { e = $1; h = $2 } END { print e "\t" h }' "$dir/commits.tsv")
last_entry=${last%%$'\t'*}
last_leaf=${last#*$'\t'}
plural=s
[ "$n_pass" -ne 1 ] || plural=
step commit "q42wal: $n_pass record$plural appended to $(basename "$vol") and fsynced (entry 0 binds the model)"

# 5. Verify: every frame and the Merkle root, every record bound to the
# model, and a tree head (signed with -k) that a reader can keep.
verdict=$(q42wal verify "$vol" --outputs | tail -n 1)
if [ -n "$key" ]; then
	q42wal head "$vol" --sign "$key" >"$dir/head.json"
	q42wal verify "$vol" --head "$dir/head.json" --pub "$pub" >/dev/null
	signed="tree head signed"
else
	q42wal head "$vol" >"$dir/head.json"
	signed="tree head unsigned (no -k)"
fi
root=$(printf '%s' "$verdict" | cut -f4)
step verify "q42wal verify: $(printf '%s' "$verdict" | cut -f2,3 | tr '\t' ' ' | sed 's/ /, /2'), root ${root:0:12}..., records bound to the model, $signed"

# 6. Prove the last record is in the tree the head describes.
if [ -z "$last_entry" ]; then
	step prove "nothing to prove: no record passed"
else
	q42wal prove "$vol" "$last_entry" >"$dir/proof.json"
	checked=$("$here/check-proof.sh" "$dir/proof.json" "$dir/head.json" "$last_leaf")
	hashes=$(printf '%s' "$checked" | sed -n 's/.*, \([0-9]*\) hashes,.*/\1/p')
	step prove "q42wal prove: entry $last_entry is in that tree (its $hashes-hash path checked by check-proof.sh)"
fi
[ "$n_block" -eq 0 ] || exit 1
