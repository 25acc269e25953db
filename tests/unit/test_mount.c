/* test_mount.c -- a mount copies no weight bytes: every tensor a GGUF or
 * P64 mount hands out points into one read-only mapping of the model file
 * itself, as the kernel lists it in /proc/self/maps (proc(5)), and an
 * engine opened on the mount leaves that so.
 *
 * Inputs: tests/models/e256-llama-q8_0.gguf (in the tree) and a P64
 * compiled from it here with q42_p64_write. Linux only (/proc).
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/q42_file.h"
#include "measure/q42_bench.h"
#include "engine/q42_engine.h"
#include "engine/q42_mount.h"
#include "formats/q42_gguf.h"
#include "formats/q42_p64.h"

#define MAX_RANGES 16

typedef struct range {
	uintptr_t lo, hi;
	char perms[5];
} range;

/* The mappings of the file at the absolute path real (proc(5) names the
 * file by path, which also holds on overlay file systems, where device
 * numbers differ from stat's). */
static size_t file_ranges(const char *real, range *out)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[PATH_MAX + 256];
	size_t n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof line, f) != NULL && n < MAX_RANGES) {
		unsigned long lo, hi;
		char perms[5];
		int name_at = 0;
		size_t len;
		if (sscanf(line, "%lx-%lx %4s %*x %*x:%*x %*u %n", &lo, &hi, perms, &name_at) != 3 ||
		    name_at == 0)
			continue;
		len = strcspn(line + name_at, "\n");
		if (len != strlen(real) || memcmp(line + name_at, real, len) != 0)
			continue;
		out[n].lo = lo;
		out[n].hi = hi;
		memcpy(out[n].perms, perms, sizeof perms);
		n++;
	}
	fclose(f);
	return n;
}

static void check_in_mapping(const char *path)
{
	q42_mount *m = NULL;
	q42_engine *e = NULL;
	q42_err err = {0};
	q42_engine_opts eo = {.n_threads = 1, .n_ctx = 64};
	q42_bench_mem mem;
	range r[MAX_RANGES];
	struct stat st;
	char real[PATH_MAX];
	uint64_t weights = 0;
	size_t n;

	assert_int_equal(stat(path, &st), 0);
	assert_non_null(realpath(path, real));
	assert_int_equal(q42_mount_open(&m, path, 0, &err), Q42_OK);
	n = file_ranges(real, r);
	/* one mapping (madvise may split it, never copy it), never writable */
	assert_true(n >= 1);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(r[i].perms[0], 'r');
		assert_int_equal(r[i].perms[1], '-');
		if (i > 0)
			assert_true(r[i].lo == r[i - 1].hi);
	}
	assert_true(r[n - 1].hi - r[0].lo >= (uintptr_t)st.st_size);
	assert_true(q42_mount_n_tensors(m) > 0);
	for (uint64_t i = 0; i < q42_mount_n_tensors(m); i++) {
		q42_source_tensor tv;
		assert_true(q42_mount_tensor_at(m, i, &tv));
		assert_true((uintptr_t)tv.data >= r[0].lo);
		assert_true((uintptr_t)tv.data + tv.nbytes <= r[0].lo + (uintptr_t)st.st_size);
		weights += tv.nbytes;
	}
	/* the engine binds the same views and allocates only cache and
	 * activations: the weights never appear in its own memory */
	assert_int_equal(q42_engine_open(&e, m, &eo, &err), Q42_OK);
	q42_bench_mem_measure(e, &mem);
	assert_true(mem.kv_bytes > 0 && mem.act_bytes > 0);
	assert_int_equal(file_ranges(real, r), n);
	assert_true(weights > 0);
	q42_engine_close(e);
	q42_mount_close(m);
}

static const char *gguf_path(void)
{
	static char buf[PATH_MAX];
	const char *src = getenv("Q42_SRCDIR");
	snprintf(buf, sizeof buf, "%s/tests/models/e256-llama-q8_0.gguf", src ? src : ".");
	return buf;
}

static void test_gguf_weights_in_mapping(void **state)
{
	(void)state;
	check_in_mapping(gguf_path());
}

static void test_p64_weights_in_mapping(void **state)
{
	q42_map src;
	q42_gguf g;
	q42_err err = {0};
	q42_p64_write_opts wo = {0};
	const char *dir = getenv("TMPDIR");
	char tmpl[PATH_MAX];
	int fd;
	FILE *out;

	(void)state;
	snprintf(tmpl, sizeof tmpl, "%s/q42-test-mount-XXXXXX", dir && *dir ? dir : "/tmp");
	wo.no_source_sha256 = true;
	assert_int_equal(q42_map_open(&src, gguf_path(), 0, &err), Q42_OK);
	assert_int_equal(q42_gguf_parse(&g, src.data, src.size, src.path, &err), Q42_OK);
	fd = mkstemp(tmpl);
	assert_true(fd >= 0);
	out = fdopen(fd, "w+b");
	assert_non_null(out);
	assert_int_equal(q42_p64_write(&g, &wo, out, NULL, &err), Q42_OK);
	assert_int_equal(fclose(out), 0);
	q42_gguf_free(&g);
	q42_map_close(&src);
	check_in_mapping(tmpl);
	unlink(tmpl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gguf_weights_in_mapping),
		cmocka_unit_test(test_p64_weights_in_mapping),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
