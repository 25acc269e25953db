#!/bin/sh
# tests/layers.sh -- libq42's one-way chain of folders, checked (TAP).
#
# The order is the one Makefile.am includes lib/*/local.mk in, bottom
# first: a folder may include its own headers and those of folders before
# it, never one after it (files in a folder's subfolders count as the
# folder's). Also: no file includes another folder's *_impl.h (a folder's
# insides stay its own); Q42_WITH_VULKAN appears in lib/ and bin/ only
# inside lib/vulkan -- the engine reaches backends through
# engine/q42_backend.h alone; and outside lib/kernels/x86 only the
# dispatcher (lib/kernels/q42_dispatch.c) includes an x86 kernel header,
# so that it is the one place naming an ISA-specific kernel. Each failure
# names the file, the line and the rule. Run from anywhere: Q42_SRCDIR or the script's own tree.
set -u
src=${Q42_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$src" || exit 1

order=$(sed -n 's|^include lib/\([a-z0-9_]*\)/local\.mk$|\1|p' Makefile.am)
rank() { echo "$order" | awk -v f="$1" '$0 == f { print NR; exit }'; }

echo "1..5"
n=0
report() { # ok|not ok, description, details file
	n=$((n + 1))
	if [ -s "$3" ]; then
		echo "not ok $n - $2"
		sed 's/^/# /' "$3"
	else
		echo "ok $n - $2"
	fi
}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# 1: every folder of lib/ has a place in the order
for d in lib/*/; do
	d=${d#lib/}; d=${d%/}
	[ -n "$(rank "$d")" ] || echo "lib/$d: not in Makefile.am's list of lib/*/local.mk"
done >"$tmp/1"
report ok "every folder of lib/ has a place in the chain" "$tmp/1"

# 2: includes point down the chain only
grep -rHn --include='*.[ch]' '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z0-9_]*/' lib |
while IFS=: read -r file line text; do
	from=${file#lib/}; from=${from%%/*}
	to=$(echo "$text" | sed 's|.*include[[:space:]]*"\([a-z0-9_]*\)/.*|\1|')
	[ "$from" = "$to" ] && continue
	rf=$(rank "$from"); rt=$(rank "$to")
	if [ -z "$rt" ]; then
		echo "$file:$line: includes $to/, which is not a folder of the chain"
	elif [ -n "$rf" ] && [ "$rt" -gt "$rf" ]; then
		echo "$file:$line: $from includes $to, which sits above it"
	fi
done >"$tmp/2"
report ok "no folder includes a folder above it" "$tmp/2"

# 3: nobody includes another folder's _impl.h
grep -rHn --include='*.[ch]' '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z0-9_/]*_impl\.h"' \
	lib bin 2>/dev/null |
while IFS=: read -r file line text; do
	case $file in lib/*) from=${file#lib/}; from=${from%%/*} ;; *) from=bin ;; esac
	to=$(echo "$text" | sed 's|.*include[[:space:]]*"\([a-z0-9_]*\)/.*|\1|')
	[ "$from" = "$to" ] || echo "$file:$line: includes $to's internal header"
done >"$tmp/3"
report ok "no file includes another folder's _impl.h" "$tmp/3"

# 4: the Vulkan backend's #ifdef stays in the Vulkan backend
grep -rHn --include='*.[ch]' 'Q42_WITH_VULKAN' lib bin 2>/dev/null | grep -v '^lib/vulkan/' >"$tmp/4"
report ok "no Q42_WITH_VULKAN outside lib/vulkan and the build glue" "$tmp/4"

# 5: ISA-specific kernels are named by the dispatcher alone
grep -rHn --include='*.[ch]' '^[[:space:]]*#[[:space:]]*include[[:space:]]*"kernels/x86/' lib bin 2>/dev/null |
	grep -v '^lib/kernels/x86/' | grep -v '^lib/kernels/q42_dispatch\.c:' |
	sed 's/^\([^:]*:[0-9]*\):.*/\1: includes an x86 kernel header outside the dispatcher/' >"$tmp/5"
report ok "only lib/kernels/q42_dispatch.c names ISA-specific kernels" "$tmp/5"

grep -q . "$tmp/1" "$tmp/2" "$tmp/3" "$tmp/4" "$tmp/5" && exit 1
exit 0
