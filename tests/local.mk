# tests: every test is registered here -- the unit tests (cmocka, TAP),
# the command-line tests (bats), the tools the tests and benchmarks run, and
# the fuzz harnesses. Golden data and test models travel as whole folders
# (tests/golden/*/README says where each file came from).

# Unit tests: tests/unit/test_NAME.c each. They share one set of flags:
# the library's, cmocka's, and the whole internal library to link against.
UNIT_TESTS = \
	tests/unit/test_crc32c tests/unit/test_gguf tests/unit/test_p64 tests/unit/test_p64_flip \
	tests/unit/test_safetensors tests/unit/test_hf tests/unit/test_profile \
	tests/unit/test_kernels tests/unit/test_kernels_isa tests/unit/test_kernels_ops \
	tests/unit/test_llamacpp tests/unit/test_llamacpp_simd tests/unit/test_llamacpp_tiles \
	tests/unit/test_flash_attn \
	tests/unit/test_tokenizer tests/unit/test_mount tests/unit/test_engine \
	tests/unit/test_engine_golden tests/unit/test_arch tests/unit/test_sentinel tests/unit/test_sieve \
	tests/unit/test_choices tests/unit/test_quality tests/unit/test_certify \
	tests/unit/test_vk_forward tests/unit/test_quin tests/unit/test_policy tests/unit/test_grd \
	tests/unit/test_wal tests/unit/test_lora tests/unit/test_chat tests/unit/test_embed \
	tests/unit/test_prefix
# built only with Vulkan; test_vk_forward above runs in every build (without
# Vulkan it checks that --backend vulkan is refused and auto stays on the CPU)
UNIT_TESTS_VULKAN = tests/unit/test_vk tests/unit/test_vk_ops
UNIT_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -Wno-missing-prototypes
if HAVE_CMOCKA
check_PROGRAMS += $(UNIT_TESTS)
TESTS += $(UNIT_TESTS)
if Q42_VULKAN
check_PROGRAMS += $(UNIT_TESTS_VULKAN)
TESTS += $(UNIT_TESTS_VULKAN)
endif
endif
# Every program that names no LDADD of its own is a unit test (or a fuzz
# replay, below).
LDADD = $(Q42_PROGRAM_LIBS) $(CMOCKA_LIBS)
tests_unit_test_crc32c_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_embed_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_prefix_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_gguf_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_p64_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_p64_flip_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_safetensors_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_hf_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_profile_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_kernels_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_kernels_isa_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_kernels_ops_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_llamacpp_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_llamacpp_simd_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_llamacpp_tiles_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_flash_attn_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_tokenizer_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_mount_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_engine_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_engine_golden_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_arch_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_sentinel_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_sieve_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_choices_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_quality_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_certify_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_vk_forward_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_quin_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_policy_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_grd_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_wal_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_lora_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_chat_CFLAGS = $(UNIT_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_test_chat_LDADD = $(LDADD) $(JANSSON_LIBS)
tests_unit_test_vk_CFLAGS = $(UNIT_CFLAGS) $(CRYPTO_CFLAGS)
tests_unit_test_vk_ops_CFLAGS = $(UNIT_CFLAGS)
# test-side helpers some tests link
tests_unit_test_p64_SOURCES = tests/unit/test_p64.c tests/unit/p64_testlib.c tests/unit/p64_testlib.h
tests_unit_test_p64_flip_SOURCES = tests/unit/test_p64_flip.c tests/unit/p64_testlib.c tests/unit/p64_testlib.h
tests_unit_test_llamacpp_simd_SOURCES = tests/unit/test_llamacpp_simd.c tests/unit/llamacpp_testlib.h
tests_unit_test_llamacpp_tiles_SOURCES = tests/unit/test_llamacpp_tiles.c tests/unit/llamacpp_testlib.h
tests_unit_test_flash_attn_SOURCES = tests/unit/test_flash_attn.c tests/unit/llamacpp_testlib.h
tests_unit_test_vk_SOURCES = tests/unit/test_vk.c tests/unit/vk_testlib.h
tests_unit_test_vk_ops_SOURCES = tests/unit/test_vk_ops.c tests/unit/vk_testlib.h
tests_unit_test_gguf_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/tools
tests_unit_test_gguf_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc
tests_unit_test_gguf_LDADD = tests/tools/libggufbuild.la $(LDADD)
tests_unit_test_arch_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/tools
tests_unit_test_arch_LDADD = tests/tools/libggufbuild.la $(LDADD)

# libq42's one-way chain of folders (docs/ARCHITECTURE.md).
TESTS += tests/layers.sh
EXTRA_DIST += tests/layers.sh

# Every fuzz harness linked with tests/fuzz/replay.c in place of libFuzzer
# (no clang needed): tests/bats/fuzz_replay.bats replays the checked-in
# corpora, seeds and kept crash inputs, through them in every build.
FUZZ_REPLAY = \
	tests/fuzz/replay_chat tests/fuzz/replay_gguf tests/fuzz/replay_grammar \
	tests/fuzz/replay_hfconfig tests/fuzz/replay_hfvocab tests/fuzz/replay_jsonl \
	tests/fuzz/replay_lora tests/fuzz/replay_mount tests/fuzz/replay_p64 tests/fuzz/replay_policy \
	tests/fuzz/replay_quin tests/fuzz/replay_record tests/fuzz/replay_safetensors \
	tests/fuzz/replay_state tests/fuzz/replay_stmodel tests/fuzz/replay_tokenizer \
	tests/fuzz/replay_volume tests/fuzz/replay_walarc tests/fuzz/replay_walidx
check_PROGRAMS += $(FUZZ_REPLAY)
tests_fuzz_replay_chat_SOURCES = tests/fuzz/fuzz_chat.c tests/fuzz/replay.c
tests_fuzz_replay_gguf_SOURCES = tests/fuzz/fuzz_gguf.c tests/fuzz/replay.c
tests_fuzz_replay_grammar_SOURCES = tests/fuzz/fuzz_grammar.c tests/fuzz/replay.c
tests_fuzz_replay_hfconfig_SOURCES = tests/fuzz/fuzz_hfconfig.c tests/fuzz/replay.c
tests_fuzz_replay_hfvocab_SOURCES = tests/fuzz/fuzz_hfvocab.c tests/fuzz/replay.c
tests_fuzz_replay_jsonl_SOURCES = tests/fuzz/fuzz_jsonl.c tests/fuzz/replay.c
tests_fuzz_replay_lora_SOURCES = tests/fuzz/fuzz_lora.c tests/fuzz/replay.c
tests_fuzz_replay_mount_SOURCES = tests/fuzz/fuzz_mount.c tests/fuzz/replay.c
tests_fuzz_replay_p64_SOURCES = tests/fuzz/fuzz_p64.c tests/fuzz/replay.c
tests_fuzz_replay_policy_SOURCES = tests/fuzz/fuzz_policy.c tests/fuzz/replay.c
tests_fuzz_replay_quin_SOURCES = tests/fuzz/fuzz_quin.c tests/fuzz/replay.c
tests_fuzz_replay_record_SOURCES = tests/fuzz/fuzz_record.c tests/fuzz/replay.c
tests_fuzz_replay_safetensors_SOURCES = tests/fuzz/fuzz_safetensors.c tests/fuzz/replay.c
tests_fuzz_replay_state_SOURCES = tests/fuzz/fuzz_state.c tests/fuzz/replay.c
tests_fuzz_replay_stmodel_SOURCES = tests/fuzz/fuzz_stmodel.c tests/fuzz/replay.c
tests_fuzz_replay_tokenizer_SOURCES = tests/fuzz/fuzz_tokenizer.c tests/fuzz/replay.c
tests_fuzz_replay_volume_SOURCES = tests/fuzz/fuzz_volume.c tests/fuzz/replay.c
tests_fuzz_replay_walarc_SOURCES = tests/fuzz/fuzz_walarc.c tests/fuzz/replay.c
tests_fuzz_replay_walidx_SOURCES = tests/fuzz/fuzz_walidx.c tests/fuzz/replay.c

# Command-line tests (bats-core); each skips what its build lacks.
BATS_TESTS = \
	tests/bats/p64c.bats tests/bats/p64check.bats tests/bats/q42run.bats \
	tests/bats/q42run_bench.bats tests/bats/demo.bats tests/bats/q42grd.bats \
	tests/bats/q42wal.bats tests/bats/vulkan.bats tests/bats/vk_parity.bats \
	tests/bats/examples.bats tests/bats/completions.bats tests/bats/man.bats \
	tests/bats/arith.bats tests/bats/flash_attn.bats tests/bats/matvec.bats tests/bats/lora.bats tests/bats/reuse.bats \
	tests/bats/decisions.bats tests/bats/chat.bats tests/bats/embed.bats \
	tests/bats/hostile.bats tests/bats/fuzz_replay.bats
if HAVE_BATS
TESTS += $(BATS_TESTS)
endif

# tests/bats by name: the folder itself would also take the build tree's
# tests/bats/*.log into the tarball, and a stale log there stops the tests
# of `make distcheck` from running.
EXTRA_DIST += tests/golden tests/models tests/fuzz $(BATS_TESTS) tests/bats/helpers.bash tests/lsan.supp \
	$(wildcard $(srcdir)/tests/tools/*.py) $(wildcard $(srcdir)/tests/tools/*.sh) \
	tests/tools/llamacpp_oracle.c tests/tools/chat_oracle.c

# The test-side GGUF writer (test_gguf, the demo model).
noinst_LTLIBRARIES += tests/tools/libggufbuild.la
tests_tools_libggufbuild_la_SOURCES = tests/tools/gguf_build.c tests/tools/gguf_build.h

# The demo model of the README's first command (`make demo`).
noinst_PROGRAMS += tests/tools/gen_demo
tests_tools_gen_demo_SOURCES = tests/tools/gen_demo.c
tests_tools_gen_demo_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/tools
tests_tools_gen_demo_LDADD = tests/tools/libggufbuild.la $(Q42_PROGRAM_LIBS)

# The crash driver: kills committing q42wal processes, tears the volume's
# and the index's ends, and checks recovery. `make check` runs 200 kills on
# a fresh volume (tests/bats/q42wal.bats); `make crashtest` runs
# CRASH_KILLS of them on a volume first grown to CRASH_GROW entries (about
# 5 minutes at the defaults).
check_PROGRAMS += tests/tools/crashtest
tests_tools_crashtest_LDADD = $(Q42_PROGRAM_LIBS)
CRASH_KILLS = 1000
CRASH_GROW = 100000
crashtest: tests/tools/crashtest$(EXEEXT) bin/q42wal/q42wal$(EXEEXT)
	@mkdir -p crashtest.d
	tests/tools/crashtest --kills $(CRASH_KILLS) --grow $(CRASH_GROW) \
		--q42wal bin/q42wal/q42wal --dir crashtest.d
clean-local: clean-crashtest
clean-crashtest:
	rm -rf crashtest.d
.PHONY: crashtest clean-crashtest

# Which cache positions change when a prompt is split into other passes
# (the experiment behind prefix reuse's rule, run/q42_prefix.h; not a
# test): tests/tools/pass_split MODEL N THREADS SPLIT...
noinst_PROGRAMS += tests/tools/pass_split
tests_tools_pass_split_LDADD = $(Q42_PROGRAM_LIBS)

# Prefix reuse at full size (issue 36; not part of `make check`, which runs
# tests/bats/reuse.bats with 5 requests a model): REUSE_REQUESTS requests
# sharing a prefix of about 300 tokens, with reuse in one process and one
# process each, for stories260K and a synthetic model of every architecture.
REUSE_REQUESTS = 200
REUSE_BATCHES = 7,512
REUSE_THREADS = 1,2
REUSE_MODELS = $(Q42_TEST_MODELS_DIR)/stories260K.gguf \
	$(addprefix $(srcdir)/tests/models/,e256-llama-q8_0.gguf e256-llama-q4_k_m.gguf \
	e256-qwen2-q8_0.gguf a64-qwen3-hd24-q8_0.gguf a64-gemma3-swa-f32.gguf \
	a64-phi3-long-f32.gguf a64-lfm2-q8_0.gguf)
Q42_TEST_MODELS_DIR = $(srcdir)/../shared/models
check-reuse: bin/q42run/q42run$(EXEEXT)
	@for m in $(REUSE_MODELS); do \
		python3 $(srcdir)/tests/tools/reuse_check.py bin/q42run/q42run$(EXEEXT) $$m \
			$(REUSE_REQUESTS) $(REUSE_BATCHES) $(REUSE_THREADS) || exit 1; \
	done
.PHONY: check-reuse

# Yes/no decisions with and without prefix reuse (not a test;
# docs/perf/decisions.md): `make bench-decisions`, BENCH_DECISIONS_ARGS =
# documents, questions per document[, batch[, threads[, documents run
# without reuse]]] ("-": q42run's default). The default: the issue's 1,000
# decisions at q42run's default options.
BENCH_DECISIONS_MODEL = /root/.cache/q42-peer/models/smol360-q8_0.gguf
BENCH_DECISIONS_ARGS = 100 10
bench-decisions: bin/q42run/q42run$(EXEEXT)
	python3 $(srcdir)/tests/tools/bench_decisions.py bin/q42run/q42run$(EXEEXT) \
		$(BENCH_DECISIONS_MODEL) $(BENCH_DECISIONS_ARGS)
.PHONY: bench-decisions

# q42wal at growing volume sizes beside sqlite3 (not a test; docs/perf/wal.md):
# `make bench-wal`, sizes in entries, commits timed at each size.
BENCH_WAL_SIZES = 1000 10000 100000 1000000
BENCH_WAL_COMMITS = 20
bench-wal: bin/q42wal/q42wal$(EXEEXT) tests/tools/runstat$(EXEEXT)
	Q42WAL=bin/q42wal/q42wal$(EXEEXT) RUNSTAT=tests/tools/runstat$(EXEEXT) \
	BENCH_WAL_SIZES="$(BENCH_WAL_SIZES)" BENCH_WAL_COMMITS="$(BENCH_WAL_COMMITS)" \
	$(SHELL) $(srcdir)/tests/tools/bench_wal.sh
clean-local: clean-bench-wal
clean-bench-wal:
	rm -rf bench-wal.d
.PHONY: bench-wal clean-bench-wal

# Kernel micro-benchmarks (not tests): `make bench-kernels`, options via
# BENCH_KERNELS_ARGS (e.g. "--threads 2 --type q4_K") and BENCH_ROWS_ARGS
# (bench_rows: the engine's row products against a plain read of the same
# bytes; e.g. "--threads 2 --tok 128", or "--threads 2 --job-rows 960" for
# decode in jobs with barriers between them, as a one-token pass runs them).
noinst_PROGRAMS += tests/tools/bench_kernels tests/tools/bench_rows
tests_tools_bench_kernels_LDADD = $(Q42_PROGRAM_LIBS)
tests_tools_bench_rows_LDADD = $(Q42_PROGRAM_LIBS)
bench-kernels: tests/tools/bench_kernels$(EXEEXT) tests/tools/bench_rows$(EXEEXT)
	./tests/tools/bench_kernels$(EXEEXT) $(BENCH_KERNELS_ARGS)
	./tests/tools/bench_rows$(EXEEXT) $(BENCH_ROWS_ARGS)
.PHONY: bench-kernels

# libFuzzer harnesses (one rule for all): tests/fuzz/fuzz_NAME.c, built on
# request (`make fuzz`) with clang, never by `make` or `make check`. The
# library's sources are compiled once for them (fuzz-build/obj, instrumented
# for coverage, ASan and UBSan) into fuzz-build/libq42fuzz.a, which every
# harness links. `make fuzz-run FUZZ_SECONDS=600` runs each harness (or
# those named by FUZZ_RUN, e.g. FUZZ_RUN="grammar tokenizer") for that long
# (FUZZ_SECONDS_NAME=S on the command line: S seconds for harness NAME), one
# after the other, from its seed corpus (tests/fuzz/corpus-NAME, where
# there is one) with inputs up to FUZZ_MAX_LEN bytes; an input running over
# FUZZ_TIMEOUT seconds or FUZZ_RSS_MB of memory is a failure, as a crash or
# a leak is. docs/fuzzing.md lists the harnesses and their figures.
# FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION turns off checksum and signature
# comparisons in the readers, so mutated inputs reach the structure checks.
FUZZ_HARNESSES = $(basename $(notdir $(subst fuzz_,,$(wildcard $(srcdir)/tests/fuzz/fuzz_*.c))))
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_DEFS = -g -O1 -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION \
	-D_GNU_SOURCE -I$(top_srcdir)/lib -I$(top_builddir) -DQ42_VERSION='"$(PACKAGE_VERSION)"' \
	$(CRYPTO_CFLAGS) $(ARCHIVE_CFLAGS) $(JANSSON_CFLAGS) $(VULKAN_CFLAGS)
FUZZ_LIB_SRCS = $(filter %.c,$(lib_libq42core_la_SOURCES))
# generated in the build directory (the Vulkan build's SPIR-V table)
FUZZ_GEN_SRCS = $(filter %.c,$(nodist_lib_libq42core_la_SOURCES))
FUZZ_OBJS = $(addprefix fuzz-build/obj/,$(FUZZ_LIB_SRCS:.c=.o) $(FUZZ_GEN_SRCS:.c=.o))
FUZZ_SECONDS = 60
FUZZ_RUN = $(FUZZ_HARNESSES)
FUZZ_MAX_LEN = 65536
FUZZ_TIMEOUT = 1
FUZZ_RSS_MB = 2048

# the sources are found through VPATH; clang writes each object's header
# dependencies beside it (.d), read here once they exist
fuzz-build/obj/%.o: %.c
	@test -n "$(CLANG)" || { echo "make fuzz needs clang (Debian package clang)"; exit 1; }
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_DEFS) -fsanitize=fuzzer-no-link $(FUZZ_SAN) -MMD -MP -c -o $@ $<
-include $(wildcard fuzz-build/obj/lib/*/*.d fuzz-build/obj/lib/*/*/*.d)

fuzz-build/libq42fuzz.a: $(FUZZ_OBJS)
	rm -f $@ && $(AR) rcs $@ $(FUZZ_OBJS)

fuzz-build/fuzz_%: $(srcdir)/tests/fuzz/fuzz_%.c $(wildcard $(srcdir)/tests/fuzz/*.h) fuzz-build/libq42fuzz.a
	$(CLANG) $(FUZZ_DEFS) -fsanitize=fuzzer $(FUZZ_SAN) -DQ42_FUZZ_SRCDIR='"$(abs_top_srcdir)"' \
		-o $@ $< fuzz-build/libq42fuzz.a \
		$(CRYPTO_LIBS) $(ARCHIVE_LIBS) $(JANSSON_LIBS) $(VULKAN_LIBS) -pthread -lm

fuzz: $(addprefix fuzz-build/fuzz_,$(FUZZ_HARNESSES))

fuzz-run: fuzz
	@for h in $(FUZZ_RUN); do \
		mkdir -p fuzz-build/corpus-$$h; \
		seeds=; test -d $(srcdir)/tests/fuzz/corpus-$$h && seeds=$(srcdir)/tests/fuzz/corpus-$$h; \
		t=$$(printenv FUZZ_SECONDS_$$h || echo $(FUZZ_SECONDS)); \
		fuzz-build/fuzz_$$h -max_total_time=$$t -max_len=$(FUZZ_MAX_LEN) \
			-timeout=$(FUZZ_TIMEOUT) -rss_limit_mb=$(FUZZ_RSS_MB) \
			-print_final_stats=1 fuzz-build/corpus-$$h $$seeds || exit 1; \
	done

clean-local: clean-fuzz
clean-fuzz:
	rm -rf fuzz-build
.PHONY: fuzz fuzz-run clean-fuzz

# The whole suite under valgrind's memcheck (issue 39): `make
# check-valgrind` (tests/tools/valgrind_check.sh says how; hours on a small
# machine). Suppressions, third-party only: tests/valgrind.supp. The
# check programs are built first: the script wraps those the tests run.
check-valgrind: all $(check_PROGRAMS)
	$(SHELL) $(srcdir)/tests/tools/valgrind_check.sh $(top_builddir) $(top_srcdir) $(MAKE)
clean-local: clean-valgrind
clean-valgrind:
	rm -rf valgrind.d valgrind-suite.log
.PHONY: check-valgrind clean-valgrind
EXTRA_DIST += tests/valgrind.supp

# Whether the Vulkan backend was built; LeakSanitizer ignores leaks inside
# the Vulkan loader and Mesa's drivers only (tests/lsan.supp), never in
# q42's own code.
AM_TESTS_ENVIRONMENT += \
	Q42_WITH_VULKAN='$(Q42_WITH_VULKAN)'; export Q42_WITH_VULKAN; \
	LSAN_OPTIONS="suppressions=$(abs_top_srcdir)/tests/lsan.supp:print_suppressions=0$${LSAN_OPTIONS:+:$$LSAN_OPTIONS}"; \
	export LSAN_OPTIONS;

# Under the sanitizers every test process keeps the modules it loads
# (tests/tools/keep_modules.c says why); ASan's runtime then is not first
# in the library list, which is harmless here.
if SANITIZERS
check_LTLIBRARIES = tests/tools/libq42keep.la
tests_tools_libq42keep_la_SOURCES = tests/tools/keep_modules.c
tests_tools_libq42keep_la_CFLAGS = -O1
tests_tools_libq42keep_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
AM_TESTS_ENVIRONMENT += \
	LD_PRELOAD="$(abs_top_builddir)/tests/tools/.libs/libq42keep.so$${LD_PRELOAD:+ $$LD_PRELOAD}"; export LD_PRELOAD; \
	ASAN_OPTIONS="verify_asan_link_order=0$${ASAN_OPTIONS:+:$$ASAN_OPTIONS}"; export ASAN_OPTIONS;
endif
