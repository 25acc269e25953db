#!/bin/sh
# build.sh -- the two commands of the README.
#
#   ./build.sh demo [MODEL.gguf]   install what is missing, build, run the demo
#   ./build.sh check               install what is missing, build, run every test
#
# Builds out of tree in ./build (or $Q42_BUILD_DIR). Extra configure flags:
# Q42_CONFIGURE_FLAGS.
# Dependencies are Debian packages only; nothing is downloaded otherwise.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cmd=${1:-demo}
[ $# -gt 0 ] && shift

packages="build-essential autoconf automake libtool pkgconf libssl-dev libarchive-dev \
libjansson-dev libcmocka-dev bats clang python3 openssl mandoc mesa-vulkan-drivers libvulkan-dev \
glslc"

install_missing() {
	missing=
	for p in $packages; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "build.sh: installing Debian packages:$missing" >&2
	if [ "$(id -u)" -eq 0 ]; then
		apt-get update -qq || true
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
	elif command -v sudo >/dev/null 2>&1; then
		sudo apt-get update -qq || true
		sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
	else
		echo "build.sh: please install:$missing" >&2
		exit 1
	fi
}

build() {
	cd "$here"
	[ -x configure ] || autoreconf -fi
	mkdir -p "${Q42_BUILD_DIR:-build}"
	cd "${Q42_BUILD_DIR:-build}"
	[ -f Makefile ] || "$here"/configure ${Q42_CONFIGURE_FLAGS:-}
	make -j"$(nproc)"
}

case $cmd in
demo)
	install_missing
	build
	make demo ${1:+MODEL="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"}
	;;
check)
	install_missing
	build
	make -j"$(nproc)" check
	;;
*)
	echo "usage: ./build.sh demo [MODEL.gguf] | ./build.sh check" >&2
	exit 2
	;;
esac
