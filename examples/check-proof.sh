#!/bin/bash
# check-proof.sh -- check a q42wal inclusion proof without q42: fold the
# audit path of `q42wal prove` into a root as RFC 9162, section 2.1.3.2,
# says, and compare it with the root of a tree head (`q42wal head`, whose
# signature `q42wal verify --head` checks). Needs bash and openssl only.
#
#   check-proof.sh PROOF.json HEAD.json [LEAF-HASH]
#
# LEAF-HASH, when given, is the hash `q42wal commit` printed for the entry:
# the proof must be about that entry. Exit 0: the entry is in the tree the
# head describes; 1: it is not (or the files disagree); 2: usage.
set -eu

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	echo "usage: check-proof.sh PROOF.json HEAD.json [LEAF-HASH]" >&2
	exit 2
fi
proof=$(cat "$1")
head=$(cat "$2")
want_leaf=${3:-}

fail() {
	echo "check-proof: $*" >&2
	exit 1
}

# field JSON NAME: a number or string field of the compact one-line JSON
# that q42wal prints (it never nests these fields).
field() {
	printf '%s\n' "$1" | sed -n 's/.*"'"$2"'":"\{0,1\}\([0-9a-f]*\)"\{0,1\}[,}].*/\1/p'
}

index=$(field "$proof" index)
size=$(field "$proof" size)
leaf=$(field "$proof" leaf)
root=$(field "$head" root)
head_size=$(field "$head" size)
path=$(printf '%s\n' "$proof" | sed -n 's/.*"path":\[\([^]]*\)\].*/\1/p' | tr -d '"' | tr ',' ' ')
hex64='^[0-9a-f]{64}$'
[[ $index =~ ^[0-9]+$ && $size =~ ^[0-9]+$ && $leaf =~ $hex64 ]] || fail "$1 is not a q42wal proof"
[[ $root =~ $hex64 && $head_size =~ ^[0-9]+$ ]] || fail "$2 is not a q42wal tree head"
[ "$size" = "$head_size" ] || fail "the proof is for a tree of $size entries, the head for $head_size"
[ -z "$want_leaf" ] || [ "$leaf" = "$want_leaf" ] || fail "the proof is about another entry (leaf $leaf)"
[ "$index" -lt "$size" ] || fail "entry $index is outside a tree of $size entries"

# node LEFT RIGHT: SHA-256(0x01 || LEFT || RIGHT), in hex
node() {
	local x="01$1$2" bin=
	bin=$(printf '%s' "$x" | sed 's/../\\x&/g')
	printf "$bin" | openssl dgst -sha256 -binary | od -An -v -tx1 | tr -d ' \n'
}

fn=$index
sn=$((size - 1))
r=$leaf
n=0
for p in $path; do
	[[ $p =~ $hex64 ]] || fail "bad hash in the path: $p"
	[ "$sn" -gt 0 ] || fail "the path is longer than the tree is deep"
	if [ $((fn % 2)) -eq 1 ] || [ "$fn" -eq "$sn" ]; then
		r=$(node "$p" "$r")
		while [ $((fn % 2)) -eq 0 ] && [ "$fn" -ne 0 ]; do
			fn=$((fn >> 1))
			sn=$((sn >> 1))
		done
	else
		r=$(node "$r" "$p")
	fi
	fn=$((fn >> 1))
	sn=$((sn >> 1))
	n=$((n + 1))
done
[ "$sn" -eq 0 ] || fail "the path is too short for a tree of $size entries"
[ "$r" = "$root" ] || fail "the path leads to root $r, not the head's $root"
echo "proof ok: entry $index of $size, $n hashes, root $root"
