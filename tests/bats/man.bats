#!/usr/bin/env bats
# man.bats -- the man pages as users read them: `mandoc -Tlint` reports
# nothing above STYLE on any page (where mandoc is installed; required
# under CI=true), every page has the sections users look for, its date is
# a date, and each program's page documents every option of its --help.

load helpers

PAGES="p64c.1 p64check.1 q42run.1 q42grd.1 q42wal.1 p64.5 q42-record.5 q42-volume.5 q42-policy.5 q42-state.5"

@test "man: mandoc -Tlint finds nothing above STYLE on any page" {
	need_cmd mandoc
	out=
	for p in $PAGES; do
		out="$out$(mandoc -Tlint -Wwarning "$Q42_SRCDIR/man/$p" 2>&1)"
	done
	[ -z "$out" ] || { echo "$out"; false; }
}

@test "man: every page has DESCRIPTION, EXIT STATUS, EXAMPLES, SEE ALSO (section 1: SYNOPSIS, OPTIONS) and a dated .TH" {
	bad=
	for p in $PAGES; do
		f="$Q42_SRCDIR/man/$p"
		want="DESCRIPTION|EXIT STATUS|EXAMPLES|SEE ALSO"
		case $p in *.1) want="SYNOPSIS|$want|OPTIONS" ;; esac
		IFS='|'
		for s in $want; do
			grep -qx "\.SH $s" "$f" || bad="$bad $p: no $s;"
		done
		unset IFS
		grep -qE '^\.TH [A-Z0-9-]+ [15] [0-9]{4}-[0-9]{2}-[0-9]{2} ' "$f" || bad="$bad $p: .TH has no YYYY-MM-DD date;"
	done
	[ -z "$bad" ] || { echo "$bad"; false; }
}

@test "man: each program's page documents every long option of its --help" {
	bad=
	for p in p64c p64check q42run q42grd q42wal; do
		text=$(sed 's/\\-/-/g; s/\\f[BIRP]//g' "$Q42_SRCDIR/man/$p.1")
		for o in $("$(q42_bin "$p")" --help | grep -oE -- '--[a-z0-9][a-z0-9-]*' | sort -u); do
			grep -qE -- "$o([^a-z0-9-]|$)" <<<"$text" || bad="$bad $p: $o;"
		done
	done
	[ -z "$bad" ] || { echo "undocumented:$bad"; false; }
}
