/* test_wal.c -- the Q42 volume under damage: a tail torn at every byte
 * offset, every single byte of a volume inverted, corruption in the middle
 * (which recovery must refuse to cut), and a writer's refusal to append to
 * a damaged volume; its index (VOL.idx) torn at every offset, inverted at
 * every byte and left stale by a cut volume, never changing what readers
 * return; a volume large enough for the threaded scan read as the
 * in-memory reader reads it; proofs from the index equal to proofs from the leaf array. Volumes are built through the library's writer; what
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
static char idxp[300];

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
	unlink(idxp);
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

/* A volume over 4 MiB is scanned with its frames hashed ahead by several
 * threads: the same root and entry count as the in-memory reader, and for
 * bytes inverted anywhere (chunk edges included) the same verdict naming
 * the same frame. */
static void test_parallel_scan_matches_sequential(void **state)
{
	(void)state;
	q42_err err, err2;
	q42_volume v;
	q42_wal_verify_report rep;
	q42_hash root;
	size_t n;
	make_volume(20000);
	uint8_t *orig = read_file(vol, &n);
	assert_true(n > (UINT64_C(4) << 20));
	assert_int_equal(q42_volume_parse(&v, orig, n, "ref", &err), Q42_OK);
	assert_int_equal(q42_volume_root(&v, v.n_leaves, root, &err), Q42_OK);
	assert_int_equal(q42_wal_verify(vol, Q42_VOL_NONE, NULL, NULL, &rep, &err), Q42_OK);
	assert_int_equal(rep.n_leaves, v.n_leaves);
	assert_int_equal(rep.n_frames, v.n_frames);
	assert_memory_equal(rep.root, root, sizeof root);
	q42_wal_verify_free(&rep);
	q42_volume_free(&v);
	size_t at[] = {n / 2, (size_t)1 << 20, ((size_t)1 << 20) - 1, ((size_t)1 << 20) + 51,
		       n - 5, n - 60, n / 3 + 17, n / 5 + 100, 70000, 3u << 20};
	for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
		uint8_t *copy = malloc(n);
		assert_non_null(copy);
		memcpy(copy, orig, n);
		copy[at[k]] ^= 0x10;
		write_file(vol, copy, n);
		assert_int_not_equal(q42_volume_parse(&v, copy, n, "ref", &err), Q42_OK);
		q42_volume_free(&v);
		assert_int_not_equal(q42_wal_verify(vol, Q42_VOL_NONE, NULL, NULL, &rep, &err2),
				     Q42_OK);
		q42_wal_verify_free(&rep);
		const char *a = strstr(err.msg, "frame "), *b = strstr(err2.msg, "frame ");
		if (!a || !b || strcmp(a, b) != 0)
			fail_msg("byte %zu: in memory '%s', streamed '%s'", at[k], err.msg, err2.msg);
		free(copy);
	}
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


/* Everything a reader says about the volume, against the in-memory parse:
 * every entry's leaf, the root of every size, the last entry's path. */
static void check_reader(const q42_volume *ref)
{
	q42_wal_reader r;
	q42_err err;
	assert_int_equal(q42_wal_reader_open(&r, vol, &err), Q42_OK);
	assert_int_equal(r.n_leaves, ref->n_leaves);
	for (uint64_t i = 0; i < ref->n_leaves; i++) {
		q42_vol_entry e;
		uint64_t seq;
		q42_hash leaf, a, b;
		assert_int_equal(q42_wal_reader_entry(&r, i, &e, &seq, leaf, &err), Q42_OK);
		assert_memory_equal(leaf, ref->leaves[i], 32);
		assert_int_equal(seq, ref->leaf_frame[i]);
		assert_int_equal(q42_wal_reader_root(&r, i + 1, a, &err), Q42_OK);
		assert_int_equal(q42_volume_root(ref, i + 1, b, &err), Q42_OK);
		assert_memory_equal(a, b, 32);
	}
	q42_wal_reader_close(&r);
}

static q42_volume ref_parse(uint8_t **data)
{
	q42_volume v;
	q42_err err;
	size_t n;
	*data = read_file(vol, &n);
	assert_int_equal(q42_volume_parse(&v, *data, n, "ref", &err), Q42_OK);
	return v;
}

/* The volume verifies and its index matches it in all n records. */
static void verify_index_whole(uint64_t n)
{
	q42_wal_verify_report rep;
	q42_err err;
	assert_int_equal(q42_wal_verify(vol, Q42_VOL_NONE, NULL, NULL, &rep, &err), Q42_OK);
	assert_false(rep.idx_bad);
	assert_int_equal(rep.idx_records, n);
	assert_int_equal(rep.n_leaves, n);
	q42_wal_verify_free(&rep);
}

static void reopen_writer(void)
{
	q42_wal w;
	q42_err err;
	assert_int_equal(q42_wal_open(&w, vol, Q42_WAL_SYNC_OFF, false, &err), Q42_OK);
	assert_int_equal(q42_wal_close(&w, &err), Q42_OK);
}

static void test_index_torn_every_offset(void **state)
{
	(void)state;
	uint8_t *data;
	size_t in;
	make_volume(6);
	q42_volume ref = ref_parse(&data);
	uint8_t *orig = read_file(idxp, &in);
	for (size_t cut = 0; cut < in; cut++) {
		write_file(idxp, orig, cut);
		check_reader(&ref);
		/* the next writer completes it, byte for byte as it was */
		reopen_writer();
		size_t m;
		uint8_t *now = read_file(idxp, &m);
		assert_int_equal(m, in);
		if (memcmp(now, orig, in) != 0)
			fail_msg("index torn at %zu was not rebuilt to the same bytes", cut);
		free(now);
	}
	/* no index at all: an old volume, upgraded by q42wal index */
	unlink(idxp);
	check_reader(&ref);
	uint64_t before, after;
	q42_err err;
	assert_int_equal(q42_wal_reindex(vol, false, &before, &after, &err), Q42_OK);
	assert_int_equal(before, 0);
	assert_int_equal(after, ref.n_leaves);
	free(orig);
	q42_volume_free(&ref);
	free(data);
}

static void test_index_flip_every_byte(void **state)
{
	(void)state;
	uint8_t *data;
	size_t in;
	q42_err err;
	make_volume(5);
	q42_volume ref = ref_parse(&data);
	uint8_t *orig = read_file(idxp, &in);
	uint8_t *copy = malloc(in);
	for (size_t i = 0; i < in; i++) {
		memcpy(copy, orig, in);
		copy[i] ^= 0xFF;
		write_file(idxp, copy, in);
		check_reader(&ref);
		q42_wal_verify_report rep;
		assert_int_equal(q42_wal_verify(vol, Q42_VOL_NONE, NULL, NULL, &rep, &err), Q42_OK);
		if (!rep.idx_bad && rep.idx_records == ref.n_leaves)
			fail_msg("index byte %zu inverted, verify found nothing", i);
		if (i % 61 == 0) { /* (each rebuild fsyncs: a sample keeps make check fast) */
			uint64_t before, after;
			assert_int_equal(q42_wal_reindex(vol, true, &before, &after, &err), Q42_OK);
			size_t m;
			uint8_t *now = read_file(idxp, &m);
			assert_int_equal(m, in);
			assert_memory_equal(now, orig, in);
			free(now);
		}
	}
	free(copy);
	free(orig);
	q42_volume_free(&ref);
	free(data);
}

static void test_index_stale_after_cut(void **state)
{
	(void)state;
	uint8_t *data, *short_vol;
	size_t sn, n;
	q42_wal w;
	q42_err err;
	q42_wal_ack acks[1 + Q42_WAL_MAX_QUINS];
	uint32_t na;
	make_volume(3);
	short_vol = read_file(vol, &sn);
	make_volume(5); /* a longer history, its index */
	uint8_t *long_vol = read_file(vol, &n);
	/* the volume goes back to 3 records (as a cut would leave it), the
	 * index stays ahead; the next writer must cut the index, not trust it */
	write_file(vol, short_vol, sn);
	assert_int_equal(q42_wal_open(&w, vol, Q42_WAL_SYNC_OFF, false, &err), Q42_OK);
	const char *rec = "{\"schema\":\"q42-record/1\",\"text\":\"another\"}";
	assert_int_equal(q42_wal_stage_record(&w, rec, strlen(rec), false, acks, &na, &err), Q42_OK);
	assert_int_equal(q42_wal_close(&w, &err), Q42_OK);
	q42_volume ref = ref_parse(&data);
	assert_int_equal(ref.n_leaves, 7);
	check_reader(&ref);
	verify_index_whole(7);
	q42_volume_free(&ref);
	free(data);
	free(short_vol);
	free(long_vol);
}

static void test_index_proofs_match_arrays(void **state)
{
	(void)state;
	uint8_t *data;
	q42_err err;
	make_volume(19); /* 38 entries */
	q42_volume ref = ref_parse(&data);
	for (int pass = 0; pass < 2; pass++) {
		/* pass 1: the index covers 21 entries, the reader holds the rest */
		if (pass == 1) {
			size_t in;
			uint8_t *x = read_file(idxp, &in);
			write_file(idxp, x, 64 + 100 * 21 + 32 * (21 - 3));
			free(x);
		}
		q42_wal_reader r;
		assert_int_equal(q42_wal_reader_open(&r, vol, &err), Q42_OK);
		assert_int_equal(r.n_idx, pass ? 21u : ref.n_leaves);
		for (uint64_t n = 1; n <= ref.n_leaves; n++) {
			for (uint64_t m = 0; m < n; m++) {
				q42_hash p1[Q42_MERKLE_MAX_PATH], p2[Q42_MERKLE_MAX_PATH];
				q42_hash c1[Q42_MERKLE_MAX_CONSISTENCY], c2[Q42_MERKLE_MAX_CONSISTENCY];
				uint32_t l1, l2;
				assert_int_equal(q42_wal_reader_path(&r, n, m, p1, &l1, &err), Q42_OK);
				assert_int_equal(q42_merkle_path(ref.leaves, n, m, p2, &l2, &err), Q42_OK);
				assert_int_equal(l1, l2);
				assert_memory_equal(p1, p2, l1 * 32u);
				assert_int_equal(q42_wal_reader_consistency(&r, n, m + 1, c1, &l1, &err),
						 Q42_OK);
				assert_int_equal(q42_merkle_consistency(ref.leaves, n, m + 1, c2, &l2, &err),
						 Q42_OK);
				assert_int_equal(l1, l2);
				assert_memory_equal(c1, c2, l1 * 32u);
			}
		}
		assert_false(r.fell_back);
		q42_wal_reader_close(&r);
	}
	q42_volume_free(&ref);
	free(data);
}

static void test_index_damage_before_checkpoint(void **state)
{
	(void)state;
	q42_wal w;
	q42_err err;
	q42_wal_ack acks[1 + Q42_WAL_MAX_QUINS];
	uint32_t na;
	uint64_t idx_leaf;
	q42_hash h;
	uint8_t body[80] = {0};
	char rec[256];
	memset(body, 0xAB, 32); /* the "P64" digest records will name */
	unlink(vol);
	unlink(idxp);
	q42_vol_config cfg = {0};
	assert_int_equal(q42_wal_create(vol, &cfg, &err), Q42_OK);
	assert_int_equal(q42_wal_open(&w, vol, Q42_WAL_SYNC_OFF, false, &err), Q42_OK);
	assert_int_equal(q42_wal_stage(&w, Q42_VOL_F_ENTRY, Q42_VOL_K_BINDING, Q42_VOL_NONE,
				       Q42_VOL_NONE, body, sizeof body, &idx_leaf, h, &err), Q42_OK);
	int len = snprintf(rec, sizeof rec, "{\"schema\":\"q42-record/1\",\"text\":\"x\",\"model\":"
			   "{\"container\":\"p64\",\"sha256\":\"%s\"}}",
			   "abababababababababababababababababababababababababababababababab");
	assert_int_equal(q42_wal_stage_record(&w, rec, (uint64_t)len, false, acks, &na, &err), Q42_OK);
	assert_int_equal(q42_wal_close(&w, &err), Q42_OK);
	/* a third entry, a record bound to leaf 0; then the index is put back
	 * as it was before it, covering leaves 0 and 1 only */
	size_t in;
	uint8_t *x = read_file(idxp, &in);
	assert_int_equal(q42_wal_open(&w, vol, Q42_WAL_SYNC_OFF, false, &err), Q42_OK);
	assert_int_equal(q42_wal_stage_record(&w, rec, (uint64_t)len, false, acks, &na, &err), Q42_OK);
	assert_int_equal(acks[0].index, 2);
	assert_int_equal(q42_wal_close(&w, &err), Q42_OK);
	/* damage leaf 0's record (not the checkpoint, not in the compact
	 * range of 2 leaves): the tail's reference to leaf 0 meets it */
	x[64 + 40] ^= 0x01;
	write_file(idxp, x, in);
	q42_wal_reader r;
	assert_int_equal(q42_wal_reader_open(&r, vol, &err), Q42_OK);
	assert_int_equal(r.n_leaves, 3);
	q42_wal_reader_close(&r);
	/* the writer is not stopped by the index: it reads from frame 0,
	 * rewrites the index, and the record still finds its binding */
	assert_int_equal(q42_wal_open(&w, vol, Q42_WAL_SYNC_OFF, false, &err), Q42_OK);
	assert_int_equal(q42_wal_find_binding(&w, body, NULL), 0);
	assert_int_equal(q42_wal_close(&w, &err), Q42_OK);
	verify_index_whole(3);
	free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_torn_tail_every_offset),
		cmocka_unit_test(test_every_byte_flip_detected),
		cmocka_unit_test(test_parallel_scan_matches_sequential),
		cmocka_unit_test(test_recover_refuses_corruption),
		cmocka_unit_test(test_header_damage_not_recoverable),
		cmocka_unit_test(test_index_torn_every_offset),
		cmocka_unit_test(test_index_flip_every_byte),
		cmocka_unit_test(test_index_stale_after_cut),
		cmocka_unit_test(test_index_proofs_match_arrays),
		cmocka_unit_test(test_index_damage_before_checkpoint),
	};
	if (!mkdtemp(dir))
		return 1;
	snprintf(vol, sizeof vol, "%s/v.q42", dir);
	snprintf(idxp, sizeof idxp, "%s.idx", vol);
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(vol);
	unlink(idxp);
	rmdir(dir);
	return rc;
}
