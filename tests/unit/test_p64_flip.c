/* test_p64_flip.c -- every single-bit flip and every truncation of a valid
 * P64 must be rejected, with a message naming the region that was hit.
 *
 * Regions are taken from the layout p64(5) defines (header, section table,
 * each section, each blob, the zero padding between them); flips are spread
 * over all of them with a fixed-seed generator. The file is compiled once;
 * each flip is made in place and undone, so the run stays short.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "p64_testlib.h"
#include "common/q42_le.h"
#include "formats/q42_p64.h"

typedef struct region {
	uint64_t start, end;
	char what[160]; /* keyword the message must contain */
	bool padding;   /* the message must also name the exact offset */
} region;

static uint64_t rng_state = 0x2545F4914F6CDD1Du;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

__attribute__((format(printf, 6, 7))) static size_t add(region *r, size_t n, uint64_t s,
							   uint64_t e, bool pad, const char *fmt, ...)
{
	if (e <= s)
		return n;
	va_list ap;
	va_start(ap, fmt);
	r[n].start = s;
	r[n].end = e;
	r[n].padding = pad;
	vsnprintf(r[n].what, sizeof r[n].what, fmt, ap);
	va_end(ap);
	return n + 1;
}

/* Regions of a valid P64, in file order, covering [0, size) exactly. */
static region *regions_of(const q42_p64 *p, size_t *count)
{
	region *r = calloc(16 + 2 * (p->n_sections + p->n_tensors), sizeof *r);
	size_t n = 0;
	uint64_t toff = q42_ld64(p->data + 24);
	uint64_t tend = toff + Q42_P64_SECTION_ENTRY_SIZE * (uint64_t)p->n_sections;
	uint64_t pos;
	n = add(r, n, 0, Q42_P64_HEADER_SIZE, false, "header");
	n = add(r, n, Q42_P64_HEADER_SIZE, toff, true, "padding");
	n = add(r, n, toff, tend, false, "section table");
	pos = tend;
	for (uint32_t i = 0; i < p->n_sections; i++) {
		const q42_p64_section *s = &p->sections[i];
		n = add(r, n, pos, s->offset, true, "padding");
		n = add(r, n, s->offset, s->offset + s->length, false, "section %s", s->tag);
		pos = s->offset + s->length;
	}
	for (uint64_t i = 0; i < p->n_tensors; i++) {
		const q42_p64_tensor *t = &p->tensors[i];
		n = add(r, n, pos, t->offset, true, "padding");
		n = add(r, n, t->offset, t->offset + t->nbytes, false, "tensor %s", t->name.p);
		pos = t->offset + t->nbytes;
	}
	n = add(r, n, pos, p->size, true, "padding");
	*count = n;
	return r;
}

static void flip_all(uint8_t *d, size_t size, const char *label, unsigned budget)
{
	q42_p64 p;
	q42_err err;
	size_t nr;
	if (q42_p64_open(&p, d, size, label, &err) != Q42_OK)
		fail_msg("valid file rejected: %s", err.msg);
	region *r = regions_of(&p, &nr);
	q42_p64_close(&p);
	uint64_t covered = 0;
	for (size_t i = 0; i < nr; i++) {
		assert_int_equal(r[i].start, covered); /* regions tile the file */
		covered = r[i].end;
	}
	assert_int_equal(covered, size);

	unsigned total = 0;
	for (size_t i = 0; i < nr; i++) {
		uint64_t len = r[i].end - r[i].start;
		uint64_t k = 8 + (uint64_t)budget * len / size;
		if (k > len * 8)
			k = len * 8;
		for (uint64_t j = 0; j < k; j++) {
			uint64_t at = r[i].start + rng() % len;
			uint8_t bit = (uint8_t)(1u << (rng() % 8));
			d[at] ^= bit;
			int rc = q42_p64_open(&p, d, size, label, &err);
			d[at] ^= bit;
			if (rc != Q42_EFORMAT)
				fail_msg("%s: flip of bit 0x%02x at %llu (%s) not rejected (rc %d)", label,
					 bit, (unsigned long long)at, r[i].what, rc);
			if (strstr(err.msg, r[i].what) == NULL)
				fail_msg("%s: flip at %llu in %s: message does not name it: %s", label,
					 (unsigned long long)at, r[i].what, err.msg);
			if (r[i].padding) {
				char off[64];
				snprintf(off, sizeof off, "padding at offset %llu:",
					 (unsigned long long)at);
				if (strstr(err.msg, off) == NULL)
					fail_msg("%s: flip at %llu: wrong offset in: %s", label,
						 (unsigned long long)at, err.msg);
			}
			total++;
		}
	}
	print_message("# %s: %u flips over %zu regions, all rejected\n", label, total, nr);
	assert_true(total >= budget);
	/* The untouched file still opens: every flip was undone. */
	assert_int_equal(q42_p64_open(&p, d, size, label, &err), Q42_OK);
	q42_p64_close(&p);
	free(r);
}

static void truncate_all(const uint8_t *d, size_t size, const char *label)
{
	q42_p64 p;
	q42_err err;
	unsigned count = 0;
	for (size_t cut = 0; cut < size; cut += cut < 128 ? 1 : 1 + size / 300) {
		if (q42_p64_open(&p, d, cut, label, &err) != Q42_EFORMAT)
			fail_msg("%s: truncated to %zu bytes but accepted", label, cut);
		if (strstr(err.msg, "header") == NULL)
			fail_msg("%s: truncated to %zu: %s", label, cut, err.msg);
		count++;
	}
	if (q42_p64_open(&p, d, size - 1, label, &err) != Q42_EFORMAT)
		fail_msg("%s: last byte cut but accepted", label);
	print_message("# %s: %u truncations rejected\n", label, count + 1);
}

static void run(uint8_t *src, size_t n, const char *label, unsigned budget)
{
	uint8_t *a;
	size_t na;
	q42_err err;
	if (t_compile(src, n, 0, true, &a, &na, &err) != Q42_OK)
		fail_msg("compile: %s", err.msg);
	flip_all(a, na, label, budget);
	truncate_all(a, na, label);
	free(a);
}

static void test_flip_stories(void **state)
{
	(void)state;
	const char *dir;
	char path[4096];
	uint8_t *src;
	size_t n;
	T_NEED_DIR(dir, "Q42_TEST_MODELS");
	snprintf(path, sizeof path, "%s/stories260K.gguf", dir);
	if (!t_read_file(path, &src, &n)) {
		if (t_ci())
			fail_msg("%s missing", path);
		skip();
	}
	run(src, n, "stories260K.p64", 2000);
	free(src);
}

static void test_flip_synthetic(void **state)
{
	(void)state;
	size_t n;
	uint8_t *src = tg_synthetic(&n);
	run(src, n, "synthetic.p64", 2000);
	free(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flip_stories),
		cmocka_unit_test(test_flip_synthetic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
