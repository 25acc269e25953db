/* test_wal.c -- the Q42 volume under damage: a tail torn at every byte
 * offset, every single byte of a volume inverted, corruption in the middle
 * (which recovery must refuse to cut), and a writer's refusal to append to
 * a damaged volume. Volumes are built through the library's writer; what
 * is checked is only the reader's and recovery's verdicts, never bytes
 * this code computed the same way.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "wal/q42_wal.h"

static char dir[] = "/tmp/test_wal.XXXXXX";
static char vol[256];

static void write_file(const char *path, const uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	fclose(f);
}

static uint8_t *read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	rewind(f);
	uint8_t *p = malloc(*n + 1);
	assert_non_null(p);
	assert_int_equal(fread(p, 1, *n, f), *n);
	fclose(f);
	return p;
}

/* A fresh volume with n records, each carrying one quin. */
static void make_volume(int n)
{
	q42_vol_config cfg = {0};
	q42_wal w;
	q42_err err;
	q42_wal_ack acks[1 + Q42_WAL_MAX_QUINS];
	uint32_t na;
	unlink(vol);
	assert_int_equal(q42_wal_create(vol, &cfg, &err), Q42_OK);
	assert_int_equal(q42_wal_open(&w, vol, Q42_WAL_SYNC_OFF, false, &err), Q42_OK);
	for (int i = 0; i < n; i++) {
		char rec[256];
		int len = snprintf(rec, sizeof rec,
				   "{\"schema\":\"q42-record/1\",\"text\":\"r%d\",\"quin\":"
				   "\"<urn:s%d> <urn:p> \\\"o\\\" .\"}", i, i);
		assert_int_equal(q42_wal_stage_record(&w, rec, (uint64_t)len, false, acks, &na, &err),
				 Q42_OK);
		assert_int_equal(na, 2);
		assert_int_equal(q42_wal_flush(&w, &err), Q42_OK);
	}
	assert_int_equal(q42_wal_close(&w, &err), Q42_OK);
}

static void test_torn_tail_every_offset(void **state)
{
	(void)state;
	q42_err err;
	q42_volume v;
	size_t n;
	make_volume(3);
	uint8_t *orig = read_file(vol, &n);
	assert_int_equal(q42_volume_parse(&v, orig, n, "orig", &err), Q42_OK);
	uint64_t last = v.frames[v.n_frames - 1].offset, frames = v.n_frames;
	uint64_t leaves = v.n_leaves;
	q42_hash *want = malloc(leaves * sizeof *want);
	memcpy(want, v.leaves, leaves * sizeof *want);
	q42_volume_free(&v);
	for (uint64_t cut = last + 1; cut < n; cut++) {
		write_file(vol, orig, cut);
		assert_int_equal(q42_volume_parse(&v, orig, cut, "torn", &err), Q42_EFORMAT);
		assert_true(v.tail_bad);
		assert_int_equal(v.bad_frame, frames - 1);
		q42_volume_free(&v);
		q42_wal_recovery rep;
		assert_int_equal(q42_wal_recover(vol, false, false, &rep, &err), Q42_OK);
		assert_true(rep.cut);
		assert_int_equal(rep.offset, last);
		assert_int_equal(rep.frame, frames - 1);
		size_t m;
		uint8_t *after = read_file(vol, &m);
		assert_int_equal(m, last);
		assert_int_equal(q42_volume_parse(&v, after, m, "recovered", &err), Q42_OK);
		assert_int_equal(v.n_leaves, leaves - 1);
		assert_memory_equal(v.leaves, want, (leaves - 1) * sizeof *want);
		q42_volume_free(&v);
		free(after);
	}
	free(want);
	free(orig);
}

static void test_every_byte_flip_detected(void **state)
{
	(void)state;
	q42_err err;
	q42_volume v;
	size_t n;
	make_volume(3);
	uint8_t *orig = read_file(vol, &n);
	assert_int_equal(q42_volume_parse(&v, orig, n, "orig", &err), Q42_OK);
	q42_vol_frame *frames = malloc(v.n_frames * sizeof *frames);
	uint64_t nf = v.n_frames;
	memcpy(frames, v.frames, nf * sizeof *frames);
	q42_volume_free(&v);
	uint8_t *copy = malloc(n);
	for (size_t i = 0; i < n; i++) {
		memcpy(copy, orig, n);
		copy[i] ^= 0xFF;
		int rc = q42_volume_parse(&v, copy, n, "flipped", &err);
		if (rc == Q42_OK)
			fail_msg("byte %zu inverted, volume still verifies", i);
		char want[64];
		if (i < Q42_VOL_HEADER_SIZE) {
			assert_non_null(strstr(err.msg, "header"));
		} else {
			uint64_t f = 0;
			while (f + 1 < nf && frames[f + 1].offset <= i)
				f++;
			snprintf(want, sizeof want, "frame %llu at offset %llu", (unsigned long long)f,
				 (unsigned long long)frames[f].offset);
			if (!strstr(err.msg, want))
				fail_msg("byte %zu: message '%s' does not name '%s'", i, err.msg, want);
		}
		q42_volume_free(&v);
	}
	free(copy);
	free(frames);
	free(orig);
}

static void test_recover_refuses_corruption(void **state)
{
	(void)state;
	q42_err err;
	q42_volume v;
	q42_wal w;
	size_t n;
	make_volume(4);
	uint8_t *orig = read_file(vol, &n);
	assert_int_equal(q42_volume_parse(&v, orig, n, "orig", &err), Q42_OK);
	uint64_t off = v.frames[2].payload_off + 5; /* inside frame 2 */
	q42_volume_free(&v);
	orig[off] ^= 0x01;
	write_file(vol, orig, n);
	q42_wal_recovery rep;
	assert_int_equal(q42_wal_recover(vol, false, false, &rep, &err), Q42_EFORMAT);
	assert_non_null(strstr(err.msg, "frame 2"));
	assert_non_null(strstr(err.msg, "not a torn tail"));
	size_t m;
	free(read_file(vol, &m));
	assert_int_equal(m, n); /* nothing cut */
	/* A writer reads only the frames after the index's checkpoint, so the
	 * damage before it is verify's to find; without the index the writer
	 * reads every frame and refuses to append behind the damage. */
	char idx[300];
	snprintf(idx, sizeof idx, "%s.idx", vol);
	assert_int_equal(unlink(idx), 0);
	assert_int_equal(q42_wal_open(&w, vol, Q42_WAL_SYNC_OFF, true, &err), Q42_EFORMAT);
	assert_non_null(strstr(err.msg, "frame 2"));
	/* --force cuts at the damaged frame. */
	assert_int_equal(q42_wal_recover(vol, false, true, &rep, &err), Q42_OK);
	assert_true(rep.cut);
	assert_int_equal(rep.frame, 2);
	free(orig);
}

static void test_header_damage_not_recoverable(void **state)
{
	(void)state;
	q42_err err;
	size_t n;
	make_volume(1);
	uint8_t *orig = read_file(vol, &n);
	orig[20] ^= 0x40;
	write_file(vol, orig, n);
	q42_wal_recovery rep;
	assert_int_equal(q42_wal_recover(vol, false, true, &rep, &err), Q42_EFORMAT);
	assert_non_null(strstr(err.msg, "header"));
	free(orig);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_torn_tail_every_offset),
		cmocka_unit_test(test_every_byte_flip_detected),
		cmocka_unit_test(test_recover_refuses_corruption),
		cmocka_unit_test(test_header_damage_not_recoverable),
	};
	if (!mkdtemp(dir))
		return 1;
	snprintf(vol, sizeof vol, "%s/v.q42", dir);
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(vol);
	rmdir(dir);
	return rc;
}
