#!/usr/bin/env bats
# demo.bats -- the embedded demo model: generated deterministically, and run
# through p64c, p64check and q42run with llama.cpp's greedy ids
# (tests/golden/engine/demo.tsv says how those were produced).

load helpers

setup() {
	GEN="$Q42_BUILDDIR/tests/tools/gen_demo"
	P64C=$(q42_bin p64c)
	P64CHECK=$(q42_bin p64check)
	Q42RUN=$(q42_bin q42run)
	TMP=$(mktemp -d)
}

teardown() {
	rm -rf "$TMP"
}

ids_of() { # ids_of RECORD-LINE FIELD
	python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(" ".join(map(str, r["tokens"][sys.argv[2]])))' "$1" "$2"
}

@test "gen_demo writes the same bytes every time" {
	"$GEN" "$TMP/a.gguf"
	"$GEN" "$TMP/b.gguf"
	cmp "$TMP/a.gguf" "$TMP/b.gguf"
}

@test "demo model: greedy ids equal llama.cpp's, from GGUF and from P64, 1 and 2 threads" {
	"$GEN" "$TMP/demo.gguf"
	"$P64C" --no-progress "$TMP/demo.gguf" -o "$TMP/demo.p64"
	run "$P64CHECK" --against "$TMP/demo.gguf" "$TMP/demo.p64"
	[ "$status" -eq 0 ]
	n=0
	while IFS=$'\t' read -r prompt pids oids; do
		case $prompt in '#'*) continue ;; esac
		for model in "$TMP/demo.gguf" "$TMP/demo.p64"; do
			for t in 1 2; do
				rec=$("$Q42RUN" -m "$model" -p "$prompt" -n 32 -t "$t" --record)
				[ "$(ids_of "$rec" prompt)" = "$pids" ]
				[ "$(ids_of "$rec" generated)" = "$oids" ]
				n=$((n + 1))
			done
		done
	done < "$Q42_SRCDIR/tests/golden/engine/demo.tsv"
	[ "$n" -eq 8 ]
}
