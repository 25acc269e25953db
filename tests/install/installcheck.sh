#!/bin/sh
# installcheck.sh -- `make installcheck`: install into a temporary DESTDIR,
# then use the installation as a user would: compile and run hello_q42.c
# with `pkg-config --cflags --libs q42` only, run every installed
# program's --version, and find the man pages and completions.
#
#   installcheck.sh MAKE CC SRCDIR PREFIX LIBDIR BINDIR MANDIR DATADIR VERSION [LDFLAGS]
#
# LDFLAGS: what the build linked with beyond pkg-config's flags (a
# sanitizer build's -fsanitize=..., which a program linking its libq42
# needs too). Run from the build directory. Exit 0 when all of it works.
set -eu

make=$1 cc=$2 srcdir=$3 prefix=$4 libdir=$5 bindir=$6 mandir=$7 datadir=$8 version=$9
extra=${10:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/q42-installcheck.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
fail() {
	echo "installcheck: $*" >&2
	exit 1
}

$make install DESTDIR="$root" >"$tmp/install.log" 2>&1 || {
	tail -n 20 "$tmp/install.log" >&2
	fail "make install DESTDIR=$root failed"
}
echo "installcheck: installed into $root$prefix"

# The library through pkg-config alone (the sysroot maps the .pc file's
# paths into DESTDIR; PKG_CONFIG_PATH puts this q42 before any other).
pc=$root$libdir/pkgconfig
[ -f "$pc/q42.pc" ] || fail "no $pc/q42.pc"
flags=$(PKG_CONFIG_PATH="$pc${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" PKG_CONFIG_SYSROOT_DIR="$root" pkg-config --cflags --libs q42) ||
	fail "pkg-config --cflags --libs q42 failed"
[ "$(PKG_CONFIG_PATH="$pc${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" pkg-config --modversion q42)" = "$version" ] ||
	fail "pkg-config --modversion q42 is not $version"
# shellcheck disable=SC2086 # flags and extra are words
$cc -std=c17 -Wall -Wextra -Werror $extra -o "$tmp/hello_q42" "$srcdir/tests/install/hello_q42.c" $flags ||
	fail "hello_q42.c does not build with: $flags"
LD_LIBRARY_PATH=$root$libdir "$tmp/hello_q42" || fail "hello_q42 failed"
# Every installed header compiles on its own: it includes only installed
# headers (one that names an uninstalled header breaks every user).
inc=$root$prefix/include/q42
n_h=0
for h in $(cd "$inc" && find . -name '*.h' | sed 's|^\./||' | sort); do
	printf '#include "%s"\n' "$h" >"$tmp/h.c"
	# shellcheck disable=SC2086
	$cc -std=c17 -Wall -Wextra -Werror -fsyntax-only $flags "$tmp/h.c" 2>"$tmp/h.err" || {
		cat "$tmp/h.err" >&2
		fail "installed header $h does not compile on its own"
	}
	n_h=$((n_h + 1))
done
echo "installcheck: hello_q42 and $n_h installed headers build with: $flags"

# Every program, its --version, its man page and its completions.
n=0
for p in p64c p64check q42run q42grd q42wal; do
	exe=$root$bindir/$p
	[ -x "$exe" ] || fail "$p is not installed in $bindir"
	out=$(LD_LIBRARY_PATH=$root$libdir "$exe" --version) || fail "$p --version exited $?"
	case $out in
	"$p"*"$version"*) echo "installcheck: $out" ;;
	*) fail "$p --version printed '$out'" ;;
	esac
	[ -f "$root$mandir/man1/$p.1" ] || fail "no man page $mandir/man1/$p.1"
	[ -f "$root$datadir/bash-completion/completions/$p" ] || fail "no bash completion for $p"
	[ -f "$root$datadir/zsh/site-functions/_$p" ] || fail "no zsh completion for $p"
	n=$((n + 1))
done
for page in p64 q42-record q42-volume q42-policy; do
	[ -f "$root$mandir/man5/$page.5" ] || fail "no man page $mandir/man5/$page.5"
done
[ "$(ls "$root$bindir" | wc -l)" -eq "$n" ] || fail "$bindir holds more than the $n programs: $(ls "$root$bindir")"
echo "installcheck: libq42 through pkg-config, $n programs, man pages and completions: ok"
