/* matvec.c -- p64check --matvec: one tensor times a vector read from a
 * file of little-endian float32 (or stdin), printed as a listing (row,
 * value). The product is libq42's (engine/q42_matvec.h); this file reads
 * X and prints.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "p64check.h"
#include "rows.h"
#include "common/q42_le.h"
#include "engine/q42_matvec.h"

/* Most values X may hold: far beyond any row length, bounding the read. */
#define MATVEC_X_MAX (64u << 20)

/* X's values (n of them); Q42_EIO when it cannot be read, Q42_EARG when it
 * is not a whole number of float32 values or is too long. */
static int read_x(const char *path, float **out, uint64_t *n, q42_err *err)
{
	const bool in = strcmp(path, "-") == 0;
	FILE *f = in ? stdin : fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	int rc = Q42_OK;
	if (f == NULL)
		return q42_err_set(err, Q42_EIO, "%s: %s", path, strerror(errno));
	for (;;) {
		if (len == cap) {
			cap = cap ? 2 * cap : 4096;
			if (cap > (size_t)MATVEC_X_MAX * 4 + 4) {
				rc = q42_err_set(err, Q42_EARG, "%s: more than %u float32 values", path,
						 MATVEC_X_MAX);
				goto done;
			}
			uint8_t *p = realloc(buf, cap);
			if (p == NULL) {
				rc = q42_err_set(err, Q42_ENOMEM, "%s: out of memory", path);
				goto done;
			}
			buf = p;
		}
		const size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		rc = q42_err_set(err, Q42_EIO, "%s: read failed", path);
		goto done;
	}
	if (len == 0 || len % 4 != 0) {
		rc = q42_err_set(err, Q42_EARG, "%s: %zu bytes: expected a whole number of float32 values", path,
				 len);
		goto done;
	}
	*n = len / 4;
	*out = malloc(len);
	if (*out == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "%s: out of memory", path);
		goto done;
	}
	for (size_t i = 0; i < len / 4; i++)
		(*out)[i] = q42_ldf32(buf + 4 * i);
done:
	free(buf);
	if (!in)
		fclose(f);
	return rc;
}

int list_matvec(q42_source *s, const char *name, const char *x_path, enum q42_arith arith, FILE *out,
		bool json, q42_err *err)
{
	static const char *const cols[] = {"row", "value"};
	q42_source_tensor t;
	float *x = NULL, *y = NULL;
	uint64_t n = 0, rows_n;
	int rc = q42_source_find_tensor(s, name, &t, err);
	if (rc != Q42_OK)
		return rc;
	rows_n = q42_matvec_rows(&t);
	rc = read_x(x_path, &x, &n, err);
	if (rc == Q42_OK && rows_n != 0) {
		y = malloc((size_t)rows_n * sizeof *y);
		if (y == NULL)
			rc = q42_err_set(err, Q42_ENOMEM, "out of memory for %llu results",
					 (unsigned long long)rows_n);
	}
	if (rc == Q42_OK)
		rc = q42_matvec(&t, arith, Q42_ISA_BEST, x, n, y, err);
	if (rc == Q42_OK) {
		rows r;
		rows_begin(&r, out, json, cols, 2);
		bool ok = true;
		for (uint64_t i = 0; i < rows_n && ok; i++) {
			row_u64(&r, i);
			row_f32(&r, y[i]);
			ok = row_next(&r);
		}
		if (!rows_end(&r) || !ok)
			rc = q42_err_set(err, Q42_EIO, "stdout: write failed");
	}
	free(x);
	free(y);
	return rc;
}
