#!/usr/bin/env bats
# completions.bats -- the bash and zsh completions offer every long option
# each program's --help lists (q42wal: per command). Bash completions run
# for real in bash (COMP_WORDS as the shell sets them); zsh is not a
# dependency, so the zsh files are read for their option specs (and
# syntax-checked with `zsh -n` where zsh is installed).

load helpers

PROGS="p64c p64check q42run q42grd q42wal"

# help_opts PROG [CMD]: the long options --help lists, one per line (for
# q42wal CMD: those on CMD's line; without CMD: the lines of no command)
help_opts() {
	local help
	help=$("$(q42_bin "$1")" --help)
	if [ "$1" = q42wal ]; then
		if [ -n "${2:-}" ]; then
			printf '%s\n' "$help" | grep -E "^  $2 "
		else
			printf '%s\n' "$help" | grep -E '^  -'
		fi | grep -oE -- '--[a-z0-9][a-z0-9-]*' | sort -u
	else
		printf '%s\n' "$help" | grep -oE -- '--[a-z0-9][a-z0-9-]*' | sort -u
	fi
}

# bash_offers PROG WORD...: what the bash completion offers for the
# command line "PROG WORD..." (the last word is the one completed)
bash_offers() {
	bash -c '
		shopt -s extglob
		source "$1"
		shift
		fn=$(complete -p "$1" | sed -n "s/.*-F \([^ ]*\) .*/\1/p")
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		"$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}"' _ "$Q42_SRCDIR/completions/$1" "$@" | sort -u
}

# zsh_offers PROG [CMD]: the long options the zsh completion's specs
# name ('--opt[...]', {-o,--opt}, '(...)--opt=...'; not those mentioned in
# descriptions); q42wal: of CMD's branch, or of the first-word branch
zsh_offers() {
	local f="$Q42_SRCDIR/completions/_$1"
	if [ "$1" = q42wal ]; then
		if [ -n "${2:-}" ]; then
			grep -E "^(\S+\|)?$2(\|\S+)?\) " "$f"
		else
			sed -n '/CURRENT == 2/,/^fi/p' "$f"
		fi
	else
		cat "$f"
	fi | grep -oE -- "(^|['{,)*])--[a-z0-9][a-z0-9-]*[=+]?[[}']" | grep -oE -- '--[a-z0-9-]*[a-z0-9]' |
		sort -u
}

# missing WANT HAVE: the lines of WANT not in HAVE
missing() {
	comm -23 <(printf '%s\n' "$1") <(printf '%s\n' "$2")
}

# bash_opts PROG [CMD]: the bash completion's offer after "PROG [CMD VOL] --"
bash_opts() {
	if [ -n "${2:-}" ]; then bash_offers "$1" "$2" vol.q42 --; else bash_offers "$1" --; fi
}

# lacking OFFERS: "PROG[ CMD]: options;" for every option of a --help that
# OFFERS PROG [CMD] does not name; nothing when none is missing
lacking() {
	local p c m
	for p in $PROGS; do
		m=$(missing "$(help_opts "$p")" "$("$1" "$p")")
		[ -z "$m" ] || printf ' %s: %s;' "$p" "$(echo $m)"
		[ "$p" = q42wal ] || continue
		for c in $("$(q42_bin q42wal)" --help | sed -n 's/^  \([a-z]\+\) .*/\1/p'); do
			m=$(missing "$(help_opts q42wal "$c")" "$("$1" q42wal "$c")")
			[ -z "$m" ] || printf ' q42wal %s: %s;' "$c" "$(echo $m)"
		done
	done
}

@test "completions: bash offers every long option of every program's --help" {
	bad=$(lacking bash_opts)
	[ -z "$bad" ] || { echo "bash completions lack:$bad"; false; }
}

@test "completions: zsh specs name every long option of every program's --help" {
	if command -v zsh >/dev/null; then
		for p in $PROGS; do zsh -n "$Q42_SRCDIR/completions/_$p"; done
	fi
	bad=$(lacking zsh_offers)
	[ -z "$bad" ] || { echo "zsh completions lack:$bad"; false; }
}

@test "completions: the test sees a missing option (a completion with one option removed fails)" {
	sed 's/ --ignore-eos//' "$Q42_SRCDIR/completions/q42run" >"$BATS_TEST_TMPDIR/q42run"
	have=$(Q42_SRCDIR="$BATS_TEST_TMPDIR/.." bash -c '
		source "$1"; COMP_WORDS=(q42run --); COMP_CWORD=1; _q42run; printf "%s\n" "${COMPREPLY[@]}"' _ "$BATS_TEST_TMPDIR/q42run" | sort -u)
	[ "$(missing "$(help_opts q42run)" "$have")" = "--ignore-eos" ]
}
