#!/usr/bin/env bats
# vulkan.bats -- the Vulkan backend from the command line: --list-devices,
# and the refusals of a build without Vulkan. Tests that need a device skip
# without one, but fail under CI=true (CI installs mesa-vulkan-drivers).

load helpers

setup() {
	Q42RUN=$(q42_bin q42run)
	export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
}

# need_vulkan: skip unless this build has Vulkan and a device answers
# (fail under CI=true when the build has Vulkan but no device).
need_vulkan() {
	[ "${Q42_WITH_VULKAN:-}" = yes ] || skip "built without Vulkan"
	"$Q42RUN" --list-devices >/dev/null 2>&1 || q42_missing "a Vulkan device"
}
