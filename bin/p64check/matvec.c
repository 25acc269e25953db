/* matvec.c -- p64check --matvec: one tensor times a vector read from a
 * file of little-endian float32 (or stdin), printed as a listing (row,
 * value). The product is libq42's (engine/q42_matvec.h); this file reads
 * X and prints.
 */
#include <stdlib.h>
#include <string.h>
#include "p64check.h"
#include "rows.h"
#include "common/q42_file.h"
#include "common/q42_le.h"
#include "engine/q42_matvec.h"

/* Most values X may hold: far beyond any row length, bounding the read. */
#define MATVEC_X_MAX (64u << 20)

/* X's values (n of them); Q42_EIO when it cannot be read, Q42_EARG when it
 * is not a whole number of float32 values or is too long. */
static int read_x(const char *path, float **out, uint64_t *n, q42_err *err)
{
	q42_map m;
	int rc = q42_map_open(&m, path, 0, err);
	if (rc != Q42_OK)
		return rc;
	if (m.size == 0 || m.size % 4 != 0)
		rc = q42_err_set(err, Q42_EARG, "%s: %llu bytes: expected a whole number of float32 values", path,
				 (unsigned long long)m.size);
	else if (m.size / 4 > MATVEC_X_MAX)
		rc = q42_err_set(err, Q42_EARG, "%s: more than %u float32 values", path, MATVEC_X_MAX);
	else if ((*out = malloc((size_t)m.size)) == NULL)
		rc = q42_err_set(err, Q42_ENOMEM, "%s: out of memory", path);
	if (rc == Q42_OK) {
		*n = m.size / 4;
		for (uint64_t i = 0; i < *n; i++)
			(*out)[i] = q42_ldf32(m.data + 4 * i);
	}
	q42_map_close(&m);
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
