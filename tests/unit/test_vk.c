/* test_vk.c -- the Vulkan layer (q42_vk.h) on whatever device the loader
 * offers (lavapipe on the development and CI machines), and the embedded
 * SPIR-V table against the shaders/NAME.comp of the source tree.
 *
 * Expected values come from formulas, not from the device: shaders/fill.comp
 * writes MUL * (a * i + b), with a, b and MUL chosen so every value is exact
 * in binary32 whatever the device contracts. Without a device the tests
 * skip, except under CI=true, where they fail.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "vk_testlib.h"
#include <openssl/evp.h>
#include "vulkan/q42_vk.h"
#include "vulkan/q42_vk_internal.h"
#include "vulkan/q42_vk_spirv.h"

#define FILL_PUSH 12 /* uint n; float a; float b */

static q42_vk *g_vk;
static q42_err g_open_err;

static int group_setup(void **state)
{
	(void)state;
	q42_vk_open(&g_vk, -1, true, &g_open_err);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	q42_vk_close(g_vk);
	g_vk = NULL;
	return 0;
}

/* The shared device, or skip (fail under CI=true) when none opened. */
#define NEED_VK() VK_TEST_NEED(g_vk != NULL, g_open_err.msg)

static void fill_push(uint8_t push[FILL_PUSH], uint32_t n, float a, float b)
{
	memcpy(push, &n, 4);
	memcpy(push + 4, &a, 4);
	memcpy(push + 8, &b, 4);
}

/* Record one fill dispatch of n floats into v with workgroups of wg. */
static void record_fill(q42_vk_pipe *p, q42_vk_view v, uint32_t n, float a, float b, uint32_t wg)
{
	uint8_t push[FILL_PUSH];
	q42_err err = {0};
	fill_push(push, n, a, b);
	assert_int_equal(q42_vk_dispatch(g_vk, p, &v, 1, push, FILL_PUSH, (n + wg - 1) / wg, 1, 1, &err),
			 Q42_OK);
}

static void check_fill(const float *y, uint32_t n, float a, float b, uint32_t mul)
{
	for (uint32_t i = 0; i < n; i++) {
		float want = (float)mul * (a * (float)i + b);
		if (y[i] != want)
			fail_msg("y[%u] = %g, want %g", i, (double)y[i], (double)want);
	}
}

static void test_devices_listed(void **state)
{
	(void)state;
	q42_vk_device_info info[8];
	uint32_t n = 0;
	q42_err err = {0};
	int rc = q42_vk_devices(info, 8, &n, &err);
	if (rc == Q42_EUNSUPPORTED) {
		print_message("# %s\n", err.msg);
		if (vk_test_ci())
			fail_msg("a Vulkan device is required under CI=true");
		skip();
	}
	assert_int_equal(rc, Q42_OK);
	assert_true(n >= 1);
	for (uint32_t i = 0; i < n && i < 8; i++) {
		assert_int_equal(info[i].index, i);
		assert_true(info[i].name[0] != '\0');
		assert_true(info[i].api_version != 0);
		assert_non_null(q42_vk_devtype_name(info[i].type));
	}
	/* cap 0 counts without writing. */
	uint32_t n2 = 0;
	assert_int_equal(q42_vk_devices(NULL, 0, &n2, &err), Q42_OK);
	assert_int_equal(n2, n);
}

static void test_open_info(void **state)
{
	(void)state;
	NEED_VK();
	const q42_vk_device_info *info = q42_vk_info(g_vk);
	assert_true(info->name[0] != '\0');
	assert_true(info->storage16);
	assert_true(info->subgroup_size >= 1);
	assert_true(info->device_local_bytes > 0);
}

static void test_bad_device_index(void **state)
{
	(void)state;
	NEED_VK();
	q42_vk *vk = NULL;
	q42_err err = {0};
	assert_int_equal(q42_vk_open(&vk, 9999, true, &err), Q42_EARG);
	assert_null(vk);
	assert_non_null(strstr(err.msg, "no device 9999"));
}

/* Round trips of odd sizes at odd offsets, through the host mapping or the
 * staging buffer, and across the staging buffer's chunk size. */
static void round_trips(enum q42_vk_mem mem, bool staging)
{
	static const uint64_t sizes[] = {1, 3, 17, 4093, 65537};
	static const uint64_t offs[] = {0, 1, 5, 4099};
	q42_err err = {0};
	q42_vk_buf *b = NULL;
	uint64_t cap = 70000;
	uint8_t *src = malloc(cap), *dst = malloc(cap);
	assert_non_null(src);
	assert_non_null(dst);
	q42_vk_force_staging(g_vk, staging);
	assert_int_equal(q42_vk_buf_create(g_vk, cap, mem, &b, &err), Q42_OK);
	assert_true(q42_vk_buf_size(b) >= cap);
	assert_true(q42_vk_buf_size(b) % 16 == 0);
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		for (size_t o = 0; o < sizeof offs / sizeof offs[0]; o++) {
			uint64_t n = sizes[s], off = offs[o];
			if (off + n > cap)
				continue;
			for (uint64_t i = 0; i < n; i++)
				src[i] = (uint8_t)(i * 131 + s * 7 + o + 1);
			memset(dst, 0, n);
			assert_int_equal(q42_vk_buf_upload(g_vk, b, off, src, n, &err), Q42_OK);
			assert_int_equal(q42_vk_buf_download(g_vk, b, off, dst, n, &err), Q42_OK);
			assert_memory_equal(src, dst, n);
		}
	}
	/* Out of range is refused, not clipped. */
	assert_int_equal(q42_vk_buf_upload(g_vk, b, q42_vk_buf_size(b) - 2, src, 3, &err), Q42_EARG);
	assert_int_equal(q42_vk_buf_download(g_vk, b, UINT64_MAX, dst, 2, &err), Q42_EARG);
	q42_vk_buf_free(g_vk, b);
	q42_vk_force_staging(g_vk, false);
	free(src);
	free(dst);
}

static void test_round_trip_device(void **state)
{
	(void)state;
	NEED_VK();
	round_trips(Q42_VK_MEM_DEVICE, false);
	round_trips(Q42_VK_MEM_DEVICE, true);
}

static void test_round_trip_host(void **state)
{
	(void)state;
	NEED_VK();
	round_trips(Q42_VK_MEM_HOST, false);
	q42_vk_buf *b = NULL;
	q42_err err = {0};
	assert_int_equal(q42_vk_buf_create(g_vk, 64, Q42_VK_MEM_HOST, &b, &err), Q42_OK);
	assert_non_null(q42_vk_buf_map(b));
	q42_vk_buf_free(g_vk, b);
	assert_int_equal(q42_vk_buf_create(g_vk, 64, Q42_VK_MEM_DEVICE, &b, &err), Q42_OK);
	assert_null(q42_vk_buf_map(b));
	q42_vk_buf_free(g_vk, b);
}

/* More than the staging buffer holds, so the copy is chunked. */
static void test_round_trip_chunked(void **state)
{
	(void)state;
	NEED_VK();
	uint64_t n = (9u << 20) + 13;
	q42_err err = {0};
	q42_vk_buf *b = NULL;
	uint8_t *src = malloc(n), *dst = calloc(1, n);
	assert_non_null(src);
	assert_non_null(dst);
	for (uint64_t i = 0; i < n; i++)
		src[i] = (uint8_t)(i ^ (i >> 11));
	q42_vk_force_staging(g_vk, true);
	assert_int_equal(q42_vk_buf_create(g_vk, n + 3, Q42_VK_MEM_DEVICE, &b, &err), Q42_OK);
	assert_int_equal(q42_vk_buf_upload(g_vk, b, 3, src, n, &err), Q42_OK);
	assert_int_equal(q42_vk_buf_download(g_vk, b, 3, dst, n, &err), Q42_OK);
	q42_vk_force_staging(g_vk, false);
	assert_memory_equal(src, dst, n);
	q42_vk_buf_free(g_vk, b);
	free(src);
	free(dst);
}

static void test_dispatch_fill(void **state)
{
	(void)state;
	NEED_VK();
	const uint32_t n = 1001;
	uint32_t spec[2] = {1, 64};
	q42_err err = {0};
	q42_vk_pipe *p = NULL;
	q42_vk_buf *b = NULL;
	float *y = malloc(n * sizeof *y);
	assert_non_null(y);
	assert_int_equal(q42_vk_pipe_get(g_vk, "fill", 1, FILL_PUSH, spec, 2, &p, &err), Q42_OK);
	assert_int_equal(q42_vk_buf_create(g_vk, n * sizeof(float), Q42_VK_MEM_DEVICE, &b, &err),
			 Q42_OK);
	assert_int_equal(q42_vk_begin(g_vk, &err), Q42_OK);
	record_fill(p, (q42_vk_view){b, 0, 0}, n, 0.5f, -3.0f, 64);
	assert_int_equal(q42_vk_submit(g_vk, &err), Q42_OK);
	assert_int_equal(q42_vk_buf_download(g_vk, b, 0, y, n * sizeof *y, &err), Q42_OK);
	check_fill(y, n, 0.5f, -3.0f, 1);
	q42_vk_buf_free(g_vk, b);
	free(y);
}

/* The same shader under another MUL is another pipeline and another result;
 * the same constants give back the cached pipeline. */
static void test_spec_constant(void **state)
{
	(void)state;
	NEED_VK();
	const uint32_t n = 320; /* 1280 bytes: a multiple of any offset alignment */
	uint32_t s1[2] = {1, 32}, s3[2] = {3, 32};
	q42_err err = {0};
	q42_vk_pipe *p1 = NULL, *p3 = NULL, *again = NULL;
	q42_vk_buf *b = NULL;
	assert_int_equal(q42_vk_pipe_get(g_vk, "fill", 1, FILL_PUSH, s1, 2, &p1, &err), Q42_OK);
	assert_int_equal(q42_vk_pipe_get(g_vk, "fill", 1, FILL_PUSH, s3, 2, &p3, &err), Q42_OK);
	assert_int_equal(q42_vk_pipe_get(g_vk, "fill", 1, FILL_PUSH, s3, 2, &again, &err), Q42_OK);
	assert_ptr_not_equal(p1, p3);
	assert_ptr_equal(p3, again);
	assert_int_equal(q42_vk_buf_create(g_vk, 2 * n * sizeof(float), Q42_VK_MEM_HOST, &b, &err),
			 Q42_OK);
	/* Two views of one buffer at an aligned offset. */
	uint64_t half = n * sizeof(float);
	assert_int_equal(q42_vk_begin(g_vk, &err), Q42_OK);
	record_fill(p1, (q42_vk_view){b, 0, half}, n, 2.0f, 1.0f, 32);
	record_fill(p3, (q42_vk_view){b, half, 0}, n, 2.0f, 1.0f, 32);
	assert_int_equal(q42_vk_submit(g_vk, &err), Q42_OK);
	const float *y = q42_vk_buf_map(b);
	check_fill(y, n, 2.0f, 1.0f, 1);
	check_fill(y + n, n, 2.0f, 1.0f, 3);
	q42_vk_buf_free(g_vk, b);
}

/* A dispatch then a copy of its output in the same pass (the barrier makes
 * the copy see the writes), and a second pass on the same objects. */
static void test_two_passes(void **state)
{
	(void)state;
	NEED_VK();
	const uint32_t n = 777;
	uint32_t spec[2] = {1, 64};
	q42_err err = {0};
	q42_vk_pipe *p = NULL;
	q42_vk_buf *a = NULL, *h = NULL;
	uint64_t bytes = n * sizeof(float);
	assert_int_equal(q42_vk_pipe_get(g_vk, "fill", 1, FILL_PUSH, spec, 2, &p, &err), Q42_OK);
	assert_int_equal(q42_vk_buf_create(g_vk, bytes, Q42_VK_MEM_DEVICE, &a, &err), Q42_OK);
	assert_int_equal(q42_vk_buf_create(g_vk, bytes, Q42_VK_MEM_HOST, &h, &err), Q42_OK);
	for (int pass = 0; pass < 2; pass++) {
		float a0 = pass == 0 ? 1.0f : -0.25f, b0 = pass == 0 ? 7.0f : 100.0f;
		assert_int_equal(q42_vk_begin(g_vk, &err), Q42_OK);
		record_fill(p, (q42_vk_view){a, 0, 0}, n, a0, b0, 64);
		assert_int_equal(q42_vk_copy(g_vk, (q42_vk_view){a, 0, bytes}, (q42_vk_view){h, 0, 0},
					     &err),
				 Q42_OK);
		assert_int_equal(q42_vk_submit(g_vk, &err), Q42_OK);
		check_fill(q42_vk_buf_map(h), n, a0, b0, 1);
	}
	q42_vk_buf_free(g_vk, a);
	q42_vk_buf_free(g_vk, h);
}

/* More dispatches in one pass than the first descriptor pool holds: the
 * pool grows, and the next pass still works. */
static void test_many_dispatches(void **state)
{
	(void)state;
	NEED_VK();
	const uint32_t n = 16, k = 700;
	uint32_t spec[2] = {1, 16};
	q42_err err = {0};
	q42_vk_pipe *p = NULL;
	q42_vk_buf *b = NULL;
	assert_int_equal(q42_vk_pipe_get(g_vk, "fill", 1, FILL_PUSH, spec, 2, &p, &err), Q42_OK);
	assert_int_equal(q42_vk_buf_create(g_vk, n * sizeof(float), Q42_VK_MEM_HOST, &b, &err), Q42_OK);
	for (int pass = 0; pass < 2; pass++) {
		assert_int_equal(q42_vk_begin(g_vk, &err), Q42_OK);
		for (uint32_t i = 0; i < k; i++)
			record_fill(p, (q42_vk_view){b, 0, 0}, n, (float)i, (float)pass, 16);
		assert_int_equal(q42_vk_submit(g_vk, &err), Q42_OK);
		check_fill(q42_vk_buf_map(b), n, (float)(k - 1), (float)pass, 1);
	}
	q42_vk_buf_free(g_vk, b);
}

static void test_timestamps(void **state)
{
	(void)state;
	NEED_VK();
	const uint32_t n = 4096;
	uint32_t spec[2] = {1, 64};
	q42_err err = {0};
	q42_vk_pipe *p = NULL;
	q42_vk_buf *b = NULL;
	const char *labels[4];
	double ns[4];
	assert_int_equal(q42_vk_pipe_get(g_vk, "fill", 1, FILL_PUSH, spec, 2, &p, &err), Q42_OK);
	assert_int_equal(q42_vk_buf_create(g_vk, n * sizeof(float), Q42_VK_MEM_DEVICE, &b, &err),
			 Q42_OK);
	assert_int_equal(q42_vk_begin(g_vk, &err), Q42_OK);
	q42_vk_stamp(g_vk, "start");
	record_fill(p, (q42_vk_view){b, 0, 0}, n, 1.0f, 0.0f, 64);
	q42_vk_stamp(g_vk, "fill1");
	record_fill(p, (q42_vk_view){b, 0, 0}, n, 2.0f, 0.0f, 64);
	q42_vk_stamp(g_vk, "fill2");
	assert_int_equal(q42_vk_submit(g_vk, &err), Q42_OK);
	uint32_t got = q42_vk_stamps(g_vk, labels, ns, 4);
	if (got == 0) {
		print_message("# the device's compute queue has no timestamps\n");
		skip();
	}
	assert_int_equal(got, 2);
	assert_string_equal(labels[0], "fill1");
	assert_string_equal(labels[1], "fill2");
	assert_true(ns[0] >= 0.0 && ns[1] >= 0.0);
	assert_int_equal(q42_vk_stamps(g_vk, labels, ns, 1), 1);
	q42_vk_buf_free(g_vk, b);
}

static void test_huge_buffer(void **state)
{
	(void)state;
	NEED_VK();
	q42_vk_buf *b = NULL;
	q42_err err = {0};
	assert_int_equal(q42_vk_buf_create(g_vk, UINT64_C(1) << 50, Q42_VK_MEM_DEVICE, &b, &err),
			 Q42_ENOMEM);
	assert_null(b);
	assert_non_null(strstr(err.msg, "out of device memory allocating 1125899906842624 bytes"));
	assert_non_null(strstr(err.msg, "heap"));
	assert_int_equal(q42_vk_buf_create(g_vk, 0, Q42_VK_MEM_DEVICE, &b, &err), Q42_EARG);
}

static void test_bad_calls(void **state)
{
	(void)state;
	NEED_VK();
	uint32_t spec[2] = {1, 64};
	uint8_t push[FILL_PUSH];
	q42_err err = {0};
	q42_vk_pipe *p = NULL;
	q42_vk_buf *b = NULL;
	assert_int_equal(q42_vk_pipe_get(g_vk, "no_such_shader", 1, 0, NULL, 0, &p, &err),
			 Q42_ENOTFOUND);
	assert_non_null(strstr(err.msg, "no_such_shader"));
	assert_int_equal(q42_vk_pipe_get(g_vk, "fill", 1, FILL_PUSH, spec, 2, &p, &err), Q42_OK);
	/* The cached pipeline asked for with another interface. */
	assert_int_equal(q42_vk_pipe_get(g_vk, "fill", 2, FILL_PUSH, spec, 2, &p, &err), Q42_EARG);
	assert_int_equal(q42_vk_pipe_get(g_vk, "fill", 1, FILL_PUSH, spec, 2, &p, &err), Q42_OK);
	assert_int_equal(q42_vk_buf_create(g_vk, 4096, Q42_VK_MEM_DEVICE, &b, &err), Q42_OK);
	fill_push(push, 4, 1.0f, 0.0f);
	q42_vk_view v = {b, 0, 0};
	assert_int_equal(q42_vk_dispatch(g_vk, p, &v, 1, push, FILL_PUSH, 1, 1, 1, &err), Q42_EARG);
	assert_int_equal(q42_vk_submit(g_vk, &err), Q42_EARG);
	assert_int_equal(q42_vk_begin(g_vk, &err), Q42_OK);
	assert_int_equal(q42_vk_buf_upload(g_vk, b, 0, push, 4, &err), Q42_EARG);
	assert_non_null(strstr(err.msg, "inside a recording"));
	v.off = 1; /* below any storage-buffer offset alignment */
	assert_int_equal(q42_vk_dispatch(g_vk, p, &v, 1, push, FILL_PUSH, 1, 1, 1, &err), Q42_EARG);
	v = (q42_vk_view){b, 4096, 0};
	assert_int_equal(q42_vk_dispatch(g_vk, p, &v, 1, push, FILL_PUSH, 1, 1, 1, &err), Q42_EARG);
	v = (q42_vk_view){b, 0, 8192};
	assert_int_equal(q42_vk_dispatch(g_vk, p, &v, 1, push, FILL_PUSH, 1, 1, 1, &err), Q42_EARG);
	v = (q42_vk_view){b, 0, 0};
	assert_int_equal(q42_vk_dispatch(g_vk, p, &v, 1, push, 8, 1, 1, 1, &err), Q42_EARG);
	assert_int_equal(q42_vk_dispatch(g_vk, p, &v, 1, push, FILL_PUSH, UINT32_MAX, 1, 1, &err),
			 Q42_EARG);
	/* The pass stays usable after refused calls. */
	assert_int_equal(q42_vk_dispatch(g_vk, p, &v, 1, push, FILL_PUSH, 1, 1, 1, &err), Q42_OK);
	assert_int_equal(q42_vk_submit(g_vk, &err), Q42_OK);
	float y[4];
	assert_int_equal(q42_vk_buf_download(g_vk, b, 0, y, sizeof y, &err), Q42_OK);
	check_fill(y, 4, 1.0f, 0.0f, 1);
	/* An abandoned recording is discarded by the next begin. */
	assert_int_equal(q42_vk_begin(g_vk, &err), Q42_OK);
	assert_int_equal(q42_vk_begin(g_vk, &err), Q42_OK);
	assert_int_equal(q42_vk_submit(g_vk, &err), Q42_OK);
	q42_vk_buf_free(g_vk, b);
}

static void sha256_file(const char *path, char hex[65])
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		fail_msg("cannot open %s", path);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	assert_non_null(ctx);
	assert_int_equal(EVP_DigestInit_ex(ctx, EVP_sha256(), NULL), 1);
	unsigned char buf[8192], md[32];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		assert_int_equal(EVP_DigestUpdate(ctx, buf, n), 1);
	assert_int_equal(ferror(f), 0);
	fclose(f);
	unsigned int len = 0;
	assert_int_equal(EVP_DigestFinal_ex(ctx, md, &len), 1);
	EVP_MD_CTX_free(ctx);
	for (unsigned int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

/* Every shaders/NAME.comp of the source tree has a blob built from exactly
 * its current text, and every blob has its source. Needs no device. */
static void test_spirv_fresh(void **state)
{
	(void)state;
	const char *src = getenv("Q42_SRCDIR");
	if (src == NULL)
		src = ".";
	char dir[4096], path[4096 + 256];
	snprintf(dir, sizeof dir, "%s/shaders", src);
	DIR *d = opendir(dir);
	if (d == NULL)
		fail_msg("cannot open %s (set Q42_SRCDIR)", dir);
	uint32_t seen = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		if (len <= 5 || strcmp(e->d_name + len - 5, ".comp") != 0)
			continue;
		char name[256];
		snprintf(name, sizeof name, "%.*s", (int)(len - 5), e->d_name);
		const q42_vk_spirv *sp = NULL;
		for (uint32_t i = 0; i < q42_vk_spirv_count; i++)
			if (strcmp(q42_vk_spirv_table[i].name, name) == 0)
				sp = &q42_vk_spirv_table[i];
		if (sp == NULL)
			fail_msg("shaders/%s has no embedded SPIR-V (add it to shaders/list.mk)",
				 e->d_name);
		char hex[65];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		sha256_file(path, hex);
		if (strcmp(hex, sp->sha256) != 0)
			fail_msg("the SPIR-V of shaders/%s is stale: built from %s, source is %s",
				 e->d_name, sp->sha256, hex);
		assert_true(sp->n_words > 5);
		assert_int_equal(sp->words[0], 0x07230203u); /* the SPIR-V magic number */
		seen++;
	}
	closedir(d);
	assert_int_equal(seen, q42_vk_spirv_count);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spirv_fresh),
		cmocka_unit_test(test_devices_listed),
		cmocka_unit_test(test_open_info),
		cmocka_unit_test(test_bad_device_index),
		cmocka_unit_test(test_round_trip_device),
		cmocka_unit_test(test_round_trip_host),
		cmocka_unit_test(test_round_trip_chunked),
		cmocka_unit_test(test_dispatch_fill),
		cmocka_unit_test(test_spec_constant),
		cmocka_unit_test(test_two_passes),
		cmocka_unit_test(test_many_dispatches),
		cmocka_unit_test(test_timestamps),
		cmocka_unit_test(test_huge_buffer),
		cmocka_unit_test(test_bad_calls),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
