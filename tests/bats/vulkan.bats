#!/usr/bin/env bats
# vulkan.bats -- the Vulkan backend from the command line: --list-devices,
# and the refusals of a build without Vulkan. Tests that need a device skip
# without one, but fail under CI=true (CI installs mesa-vulkan-drivers).

load helpers
bats_require_minimum_version 1.5.0

setup() {
	Q42RUN=$(q42_bin q42run)
	export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
}

# list_fields: every line of $output is one device with the nine
# tab-separated fields of q42run(1), numbered from 0.
list_fields() {
	local i=0 line
	while IFS= read -r line; do
		[ "$(printf '%s' "$line" | awk -F'\t' '{ print NF }')" -eq 9 ] || return 1
		[ "${line%%$'\t'*}" = "$i" ] || return 1
		i=$((i + 1))
	done <<<"$output"
	[ "$i" -gt 0 ]
}

@test "--list-devices: one line per device, lavapipe's llvmpipe among them" {
	need_vulkan
	run "$Q42RUN" --list-devices
	[ "$status" -eq 0 ]
	list_fields
	[[ "$output" == *$'\t'vulkan=1.* ]]
	[[ "$output" == *subgroup=* ]]
	if compgen -G "/usr/share/vulkan/icd.d/lvp_icd*.json" >/dev/null; then
		[[ "$output" == *$'\tcpu\tllvmpipe'* ]]
	fi
}

@test "--list-devices --json: one JSON object per device" {
	need_vulkan
	run "$Q42RUN" --list-devices --json
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" | json_lines
	printf '%s\n' "$output" | python3 -c '
import json, sys
for i, line in enumerate(sys.stdin):
    d = json.loads(line)
    assert d["index"] == i, d
    assert d["type"] in ("other", "integrated", "discrete", "virtual", "cpu"), d
    assert d["name"] and d["vulkan"].startswith("1."), d
    assert d["device_local_bytes"] > 0 and d["subgroup_size"] >= 1, d
    for k in ("fp16", "int8", "storage16", "storage8"):
        assert isinstance(d[k], bool), d
'
}

@test "--list-devices: no Vulkan driver found is exit 3 with the reason" {
	[ "${Q42_WITH_VULKAN:-}" = yes ] || skip "built without Vulkan"
	VK_ICD_FILENAMES=/nonexistent/icd.json VK_DRIVER_FILES=/nonexistent/icd.json \
		run "$Q42RUN" --list-devices
	[ "$status" -eq 3 ]
	[[ "$output" == "q42run: --list-devices: vulkan: no Vulkan"* ]]
}

@test "--list-devices without a Vulkan build: exit 3, says how to get one" {
	[ "${Q42_WITH_VULKAN:-}" = no ] || skip "built with Vulkan"
	run "$Q42RUN" --list-devices
	[ "$status" -eq 3 ]
	[ "$output" = "q42run: --list-devices: q42 was built without Vulkan (configure --with-vulkan)" ]
}

# configure_here ARGS...: run the source tree's configure in a scratch
# directory (skip when the source tree is configured in place, which
# configure refuses for a second build).
configure_here() {
	[ -x "$Q42_SRCDIR/configure" ] || skip "no configure script in $Q42_SRCDIR"
	[ ! -f "$Q42_SRCDIR/config.status" ] || skip "source tree configured in place"
	mkdir -p "$BATS_TEST_TMPDIR/build"
	cd "$BATS_TEST_TMPDIR/build"
	run "$Q42_SRCDIR/configure" --cache-file=/dev/null "$@"
}

@test "configure --with-vulkan=bogus is refused" {
	configure_here --with-vulkan=bogus
	[ "$status" -ne 0 ]
	[[ "$output" == *"--with-vulkan takes auto, yes or no, not 'bogus'"* ]]
}

@test "configure --with-vulkan=yes without glslc names the Debian packages" {
	ac_cv_path_GLSLC= configure_here --with-vulkan=yes
	[ "$status" -ne 0 ]
	[[ "$output" == *"--with-vulkan=yes but missing: glslc"* ]]
	[[ "$output" == *"libvulkan-dev and glslc"* ]]
}

@test "--list-devices: in --help, the man page and both completions" {
	run -0 "$Q42RUN" --help
	[[ "$output" == *"--list-devices"* ]]
	grep -q -- '\\-\\-list\\-devices' "$Q42_SRCDIR/man/q42run.1"
	grep -q -- '--list-devices' "$Q42_SRCDIR/completions/_q42run"
	run -0 bash -c '
		source "$1/completions/q42run"
		COMP_WORDS=(q42run --list); COMP_CWORD=1; _q42run; printf "%s\n" "${COMPREPLY[@]}"
	' _ "$Q42_SRCDIR"
	[ "$output" = "--list-devices" ]
}

# --- --certify (helper VB) ---------------------------------------------------

# certify_cases KERNEL...: each kernel named has at least one case in $output
certify_cases() {
	local k
	for k in "$@"; do
		printf '%s\n' "$output" | grep -q "^$k " || { echo "no case for $k" >&2; return 1; }
	done
}

@test "--certify --backend vulkan: every kernel passes on the device (lavapipe here)" {
	need_vulkan
	run "$Q42RUN" --certify --backend vulkan
	[ "$status" -eq 0 ]
	[[ "${lines[-1]}" == "certify: backend=vulkan seed=0 cases="*" failed=0: PASS" ]]
	certify_cases matmul.f32 matmul.f16 matmul.q4_0 matmul.q8_0 matmul.q4_k matmul.q6_k \
		get_rows.q4_k rmsnorm rope softmax glu.silu glu.gelu add kv_store.f16 attention.f32 \
		attention.f16 argmax scale softcap copy shortconv route matmul_id.f32 matmul_id.q4_k \
		layernorm pool_mean gelu
	! printf '%s\n' "$output" | grep -q ' FAIL$'
}

@test "--certify --backend vulkan --json --seed: one object per case and a summary" {
	need_vulkan
	run "$Q42RUN" --certify --backend vulkan --json --seed 12345
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" | json_lines
	printf '%s\n' "$output" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
s = rows[-1]
assert s["summary"] and s["backend"] == "vulkan" and s["seed"] == 12345, s
assert s["failed"] == 0 and s["cases"] == len(rows) - 1, s
for r in rows[:-1]:
    assert r["pass"] is True and r["max_abs"] >= 0 and r["tol_abs"] >= 0, r
'
}

@test "--certify: the CPU's SIMD kernels against the scalar ones, exit 0" {
	run "$Q42RUN" --certify
	[ "$status" -eq 0 ]
	[[ "${lines[-1]}" == "certify: backend=cpu seed=0 cases="*" failed=0: PASS" ]]
	certify_cases vec_dot.q4_K vec_dot.tq1_0 dequant.q6_K quantize.q8_0 llamacpp.softmax llamacpp.cpu-q5_0 \
		llamacpp.cpu-tq1_0 llamacpp.cpu-tq2_0 llamacpp.amx-q5_K vec_dot.iq4_nl llamacpp.repack-iq4_nl llamacpp.cpu-iq4_nl \
		vec_dot.iq4_xs llamacpp.amx-iq4_xs
	run "$Q42RUN" --certify --backend cpu --seed 7
	[ "$status" -eq 0 ]
}

@test "--certify --backend vulkan without a Vulkan build: exit 3" {
	[ "${Q42_WITH_VULKAN:-}" = no ] || skip "built with Vulkan"
	run "$Q42RUN" --certify --backend vulkan
	[ "$status" -eq 3 ]
	[[ "$output" == *"q42 was built without Vulkan (configure --with-vulkan)"* ]]
}

@test "--certify: auto, or --device without vulkan, is a usage error" {
	run "$Q42RUN" --certify --backend auto
	[ "$status" -eq 2 ]
	[[ "$output" == *"--certify: name the backend"* ]]
	run "$Q42RUN" --certify --device 0
	[ "$status" -eq 2 ]
}

@test "--certify --backend vulkan --device N: a missing device is refused" {
	need_vulkan
	run "$Q42RUN" --certify --backend vulkan --device 99
	[ "$status" -ne 0 ]
	[ "$status" -ne 1 ]
	[[ "$output" == *"q42run: --certify --backend vulkan:"* ]]
}

@test "--certify: in --help, the man page (with CERTIFICATION) and both completions" {
	run -0 "$Q42RUN" --help
	[[ "$output" == *"--certify"* ]]
	grep -q -- '\\-\\-certify' "$Q42_SRCDIR/man/q42run.1"
	grep -q '^\.SH CERTIFICATION' "$Q42_SRCDIR/man/q42run.1"
	grep -q -- '--certify' "$Q42_SRCDIR/completions/_q42run"
	run -0 bash -c '
		source "$1/completions/q42run"
		COMP_WORDS=(q42run --certi); COMP_CWORD=1; _q42run; printf "%s\n" "${COMPREPLY[@]}"
	' _ "$Q42_SRCDIR"
	[ "$output" = "--certify" ]
}
