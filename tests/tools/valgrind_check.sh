#!/bin/sh
# valgrind_check.sh -- the whole test suite under valgrind's memcheck
# (`make check-valgrind`, issue 39).
#
# Usage: valgrind_check.sh BUILDDIR SRCDIR MAKE [make arguments...]
#
# BUILDDIR/valgrind.d mirrors the build tree with each program q42 ships
# (bin/NAME/NAME), each fuzz harness's replay program
# (tests/fuzz/replay_NAME) and each test tool (tests/tools/NAME) replaced
# by a script that runs it under valgrind, so the command-line tests, which find the programs through
# Q42_BUILDDIR, run every one of them under memcheck; the unit tests run
# under it through LOG_COMPILER. Every process writes its own log to
# valgrind.d/logs. The suite's own verdict stands (a test that fails under
# valgrind fails), and on top of it the run fails when any log reports a
# memory error or a definite leak. Suppressions: tests/valgrind.supp (third-party only).
# VALGRIND (default valgrind), VALGRIND_FLAGS (added to the defaults) and
# Q42_TEST_TIMEOUT_SCALE (default 50) come from the environment; the
# script sets Q42_TEST_UNDER_VALGRIND=1 for the tests.
set -u
b=$(cd "$1" && pwd) || exit 2
s=$(cd "$2" && pwd) || exit 2
mk=$3
shift 3
vg=${VALGRIND:-valgrind}
d=$b/valgrind.d
flags="--error-exitcode=0 --leak-check=full --show-leak-kinds=definite
 --errors-for-leak-kinds=definite --num-callers=40 --suppressions=$s/tests/valgrind.supp
 ${VALGRIND_FLAGS:-}"
flags=$(echo $flags)

command -v "$vg" >/dev/null || { echo "check-valgrind needs valgrind (Debian package valgrind)" >&2; exit 2; }
rm -rf "$d" && mkdir -p "$d/logs" "$d/bin" "$d/tests" || exit 2
# wrap PROGRAM OUT [ARGS]: OUT runs PROGRAM under memcheck, ARGS first
wrap() {
	printf '#!/bin/sh\nexec %s %s --log-file=%s/logs/%s.%%p.log %s %s "$@"\n' \
		"$vg" "$flags" "$d" "${1##*/}" "$1" "${3:-}" >"$2" && chmod +x "$2"
}
for e in "$b"/*; do
	case ${e##*/} in bin | tests | valgrind.d) ;; *) ln -s "$e" "$d/${e##*/}" ;; esac
done
for p in "$b"/bin/*/; do
	n=${p%/}
	n=${n##*/}
	if [ -x "$b/bin/$n/$n" ]; then
		mkdir -p "$d/bin/$n"
		# memcheck runs q42run some fifty times slower (lavapipe's
		# shader compiles alone take minutes), so its default 30 s
		# wall-clock deadline would cut generations the tests compare
		# token for token: --deadline 0 goes first, and a test's own
		# --deadline still wins
		pre=
		[ "$n" = q42run ] && pre='--deadline 0'
		wrap "$b/bin/$n/$n" "$d/bin/$n/$n" "$pre" || exit 2
	else
		ln -s "$p" "$d/bin/$n"
	fi
done
# the programs the tests run from tests/: the fuzz harnesses' replay
# programs (fuzz_replay.bats: libq42's readers over every input of the
# corpora) and the test tools (gen_demo, crashtest), under memcheck as well
for e in "$b"/tests/*; do
	case ${e##*/} in fuzz | tools) ;; *) [ -e "$e" ] && ln -s "$e" "$d/tests/${e##*/}" ;; esac
done
for e in "$b"/tests/fuzz/* "$b"/tests/tools/*; do
	[ -e "$e" ] || continue
	t=$d/${e#"$b"/}
	mkdir -p "${t%/*}" || exit 2
	# ELF programs only: an in-tree build has the scripts here as well
	if [ -f "$e" ] && [ -x "$e" ] && [ "$(head -c 4 "$e" | tail -c 3)" = ELF ]; then
		wrap "$e" "$t" || exit 2
	else
		ln -s "$e" "$t"
	fi
done

# a test's own limit on a hung process (hostile_models.py's minute) is
# scaled to memcheck's pace
Q42_TEST_TIMEOUT_SCALE=${Q42_TEST_TIMEOUT_SCALE:-50}
export Q42_TEST_TIMEOUT_SCALE
# the programs see valgrind's CPUID, not /proc/cpuinfo's CPU, and its
# allocator, whose calloc writes every byte (so no page stays untouched
# until first use): a test that predicts q42's choices from /proc/cpuinfo,
# or counts the huge pages the cache was given, skips that comparison
Q42_TEST_UNDER_VALGRIND=1
export Q42_TEST_UNDER_VALGRIND
start=$(date +%s)
"$mk" -C "$b" check Q42_TEST_BUILDDIR="$d" TEST_SUITE_LOG=valgrind-suite.log \
	LOG_COMPILER="/bin/sh $s/tests/cmocka-tap.sh $vg $flags --log-file=$d/logs/unit.%p.log" "$@"
suite=$?
end=$(date +%s)

n=$(ls "$d/logs" | wc -l)
bad=$(grep -l -E 'ERROR SUMMARY: [1-9]|definitely lost: [1-9]' "$d"/logs/*.log 2>/dev/null)
echo "check-valgrind: suite exit $suite, $n processes under memcheck, $((end - start)) s"
if [ -n "$bad" ]; then
	echo "check-valgrind: memcheck reports errors in:"
	for f in $bad; do
		echo "  $f"
		grep -m1 -E '^==[0-9]+== Command:' "$f"
	done
	exit 1
fi
exit $suite
