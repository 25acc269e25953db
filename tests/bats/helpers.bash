# helpers.bash -- shared set-up for q42's command-line tests (bats-core).
#
# Load with `load helpers`. Finds the programs in $Q42_BUILDDIR and the
# shared models in $Q42_TEST_MODELS / $Q42_TEST_VOCAB (exported by
# `make check`; defaults let `bats tests/bats/x.bats` run from an in-tree
# build). A missing model skips its test, except under CI=true, where a
# test that cannot run is a failure.

: "${Q42_SRCDIR:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
: "${Q42_BUILDDIR:=$Q42_SRCDIR}"
: "${Q42_TEST_MODELS:=$Q42_SRCDIR/../shared/models}"
: "${Q42_TEST_VOCAB:=$Q42_SRCDIR/../shared/vocab}"
export Q42_SRCDIR Q42_BUILDDIR Q42_TEST_MODELS Q42_TEST_VOCAB

# q42_bin NAME: path of a built program (fails, never skips, when absent:
# the build is what is under test).
q42_bin() {
	local p="$Q42_BUILDDIR/bin/$1/$1"
	if [ ! -x "$p" ]; then
		echo "program not built: $p (run make)" >&2
		return 1
	fi
	printf '%s\n' "$p"
}

# q42_missing WHAT: skip, or fail under CI=true.
q42_missing() {
	if [ "${CI:-}" = true ]; then
		echo "required test input missing under CI=true: $1" >&2
		return 1
	fi
	skip "missing test input: $1"
}

# need_vulkan: skip unless this build has Vulkan and a device answers
# (fail under CI=true when the build has Vulkan but no device).
need_vulkan() {
	[ "${Q42_WITH_VULKAN:-}" = yes ] || skip "built without Vulkan"
	"$(q42_bin q42run)" --list-devices >/dev/null 2>&1 || q42_missing "a Vulkan device"
}

# need_model VAR NAME: set VAR to the path of a shared model
# ($Q42_TEST_MODELS/NAME). Call it directly, not in $(...): skip must run
# in the test's own shell.
need_model() {
	local p="$Q42_TEST_MODELS/$2"
	[ -f "$p" ] || q42_missing "$p" || return 1
	printf -v "$1" '%s' "$p"
}

# need_vocab VAR NAME: the same for $Q42_TEST_VOCAB/NAME.
need_vocab() {
	local p="$Q42_TEST_VOCAB/$2"
	[ -f "$p" ] || q42_missing "$p" || return 1
	printf -v "$1" '%s' "$p"
}

# need_ggufs: set the array GGUFS to every shared GGUF (models and
# vocabularies); skips (fails under CI=true) when there is none.
need_ggufs() {
	local f
	GGUFS=()
	for f in "$Q42_TEST_MODELS"/*.gguf "$Q42_TEST_VOCAB"/*.gguf; do
		[ -f "$f" ] && GGUFS+=("$f")
	done
	[ "${#GGUFS[@]}" -gt 0 ] ||
		q42_missing "GGUF files in $Q42_TEST_MODELS and $Q42_TEST_VOCAB"
}

# need_cmd NAME: skip (or fail under CI=true) when a tool is not installed.
need_cmd() {
	command -v "$1" >/dev/null 2>&1 || q42_missing "command $1"
}

# flip_byte FILE OFFSET: invert every bit of one byte in place.
flip_byte() {
	python3 - "$1" "$2" <<'EOF'
import sys
path, off = sys.argv[1], int(sys.argv[2])
with open(path, "r+b") as f:
    f.seek(off)
    b = f.read(1)
    f.seek(off)
    f.write(bytes([b[0] ^ 0xFF]))
EOF
}

# json_lines: succeed when every line of stdin is a JSON object.
json_lines() {
	python3 -c '
import json, sys
n = 0
for line in sys.stdin:
    obj = json.loads(line)
    assert isinstance(obj, dict), line
    n += 1
assert n > 0, "no lines"
'
}

# only_files DIR NAME...: DIR holds exactly these names
# (catches temporary files a failed write left behind).
only_files() {
	local dir="$1"
	shift
	local want have
	want=$(printf '%s\n' "$@" | sort)
	have=$(cd "$dir" && ls -A | sort)
	if [ "$want" != "$have" ]; then
		echo "expected files: [$want]; found: [$have]" >&2
		return 1
	fi
}

# golden_ids RECORD WANT LABEL [CHECK]: q42run's record (--record) gave
# llama.cpp's greedy ids WANT (space-separated), or, since q42run stops at
# an end-of-generation token and llama.cpp's gen does not, a prefix of
# them ending there. CHECK: a Python expression on the record r that must
# hold too (the engine's mode).
golden_ids() {
	python3 - "$1" "$2" "$3" "${4:-True}" <<'PY'
import json, sys
r = json.loads(sys.argv[1]); want = sys.argv[2].split(); got = [str(i) for i in r["tokens"]["generated"]]
assert eval(sys.argv[4]), "%s: %s" % (sys.argv[3], r["engine"])
ok = got == want or (len(got) < len(want) and got == want[:len(got)] and r["stop"] in ("eos", "eog"))
if not ok:
    sys.exit("%s\n  llama.cpp: %s\n  q42:       %s (stop %s)" % (sys.argv[3], " ".join(want), " ".join(got), r["stop"]))
PY
}
