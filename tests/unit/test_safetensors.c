/* test_safetensors.c -- the strict Safetensors header rules, one malformed
 * header per rule, and the model opener on files written here.
 *
 * Inputs are hand-written JSON headers following the published format
 * (8-byte little-endian length, JSON, data); the expected outcome of each is
 * the format's own rule (accepted, or refused naming the field), never a
 * value computed by libq42.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "formats/q42_safetensors.h"

/* Parse header text h as a file whose data area has data_len bytes. */
static int parse(const char *h, uint64_t data_len, q42_st_file *f, q42_err *err)
{
	uint64_t len = strlen(h);
	return q42_st_header_parse(f, (const uint8_t *)h, len, 8 + len + data_len, "t.safetensors",
				   err);
}

static void expect_bad(const char *h, uint64_t data_len, const char *needle)
{
	q42_st_file f;
	q42_err err = {0};
	int rc = parse(h, data_len, &f, &err);
	if (rc != Q42_EFORMAT || strstr(err.msg, needle) == NULL)
		fail_msg("header %s: rc %d, message \"%s\", expected EFORMAT mentioning \"%s\"", h, rc,
			 err.msg, needle);
	assert_int_equal(f.n_tensors, 0);
	assert_null(f.tensors);
}

static void test_valid(void **state)
{
	(void)state;
	q42_st_file f;
	q42_err err = {0};
	/* out of offset order in the JSON, with metadata and trailing spaces */
	const char *h = "{\"b\":{\"dtype\":\"F16\",\"shape\":[2,3],\"data_offsets\":[8,20]},"
			"\"__metadata__\":{\"format\":\"pt\"},"
			"\"a\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,8]},"
			"\"z\":{\"dtype\":\"F32\",\"shape\":[0,5],\"data_offsets\":[20,20]}}   ";
	assert_int_equal(parse(h, 20, &f, &err), Q42_OK);
	assert_int_equal(f.n_tensors, 3);
	assert_string_equal(f.tensors[0].name, "a");
	assert_string_equal(f.tensors[1].name, "b");
	assert_int_equal(f.tensors[1].dtype, Q42_ST_F16);
	assert_int_equal(f.tensors[1].rank, 2);
	assert_int_equal(f.tensors[1].shape[0], 2);
	assert_int_equal(f.tensors[1].n_elems, 6);
	assert_int_equal(f.tensors[2].n_elems, 0);
	assert_int_equal(f.data_start, 8 + strlen(h));
	q42_st_file_free(&f);
}

static void test_header_len(void **state)
{
	(void)state;
	uint8_t b[8];
	uint64_t len;
	q42_err err = {0};
	memset(b, 0, 8);
	b[0] = 100;
	assert_int_equal(q42_st_header_len(b, 108, "x", &len, &err), Q42_OK);
	assert_int_equal(len, 100);
	assert_int_equal(q42_st_header_len(b, 107, "x", &len, &err), Q42_EFORMAT);
	assert_non_null(strstr(err.msg, "header length"));
	assert_int_equal(q42_st_header_len(b, 4, "x", &len, &err), Q42_EFORMAT);
	b[0] = 0;
	b[3] = 0x10; /* 256 MiB: above the 100 MiB cap even when the file is larger */
	assert_int_equal(q42_st_header_len(b, 1ull << 40, "x", &len, &err), Q42_EFORMAT);
	assert_non_null(strstr(err.msg, "cap"));
	memset(b, 0xFF, 8);
	assert_int_equal(q42_st_header_len(b, UINT64_MAX, "x", &len, &err), Q42_EFORMAT);
}

static void test_malformed(void **state)
{
	(void)state;
	expect_bad("[1,2]", 0, "expected '{'");
	expect_bad("{\"a\":1", 0, "header at offset");
	expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
		   "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
		   8, "duplicate");
	expect_bad("{\"a\":{\"dtype\":\"F33\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "dtype");
	expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4, "shape[0]");
	expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 4,
		   "data_offsets");
	expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4, "data_offsets");
	/* dtype x shape != length */
	expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4,
		   "byte length");
	/* out of bounds */
	expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4,
		   "beyond the data area");
	/* a gap, an overlap, bytes after the last tensor */
	expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
		   "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
		   12, "contiguous");
	expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
		   "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
		   8, "overlaps");
	expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 6, "cover 4");
	expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}", 4,
		   "exactly the fields");
	expect_bad("{\"__metadata__\":{\"k\":1}}", 0, "__metadata__");
	expect_bad("{\"\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "empty name");
	/* element count overflow */
	expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],"
		   "\"data_offsets\":[0,4]}}", 4, "shape[1]");
}

/* Write a minimal file and open it as a model (weights only). */
static void test_model_file(void **state)
{
	(void)state;
	char path[] = "/tmp/q42-st-XXXXXX";
	int fd = mkstemp(path);
	const char *h = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
	uint8_t len[8] = {0};
	float data[2] = {1.0f, 2.0f};
	q42_st_model m;
	q42_err err = {0};
	FILE *fp;
	assert_true(fd >= 0);
	fp = fdopen(fd, "wb");
	len[0] = (uint8_t)strlen(h);
	fwrite(len, 1, 8, fp);
	fwrite(h, 1, strlen(h), fp);
	fwrite(data, 1, sizeof data, fp);
	fclose(fp);
	assert_true(q42_st_is_candidate(path));
	assert_int_equal(q42_st_model_open(&m, path, &err), Q42_OK);
	assert_int_equal(m.kind, Q42_ST_KIND_FILE);
	assert_int_equal(m.n_files, 1);
	assert_int_equal(m.max_tensor_bytes, 8);
	q42_st_model_close(&m);
	/* truncated: the data area is shorter than the header says */
	assert_int_equal(truncate(path, 8 + (off_t)strlen(h) + 4), 0);
	assert_int_equal(q42_st_model_open(&m, path, &err), Q42_EFORMAT);
	q42_st_model_close(&m);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_header_len),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_model_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
