/* rows.h -- the two listing formats of p64check: TSV and JSON Lines.
 *
 * A listing is a fixed list of column names; every row gives one cell per
 * column, in order. In TSV the names form the first line and text cells are
 * escaped as p64check(1) "OUTPUT FORMATS" says; in JSON Lines each row is
 * an object whose keys are the column names. Only this file knows either
 * syntax, so the listings cannot disagree between the two.
 */
#ifndef P64CHECK_ROWS_H
#define P64CHECK_ROWS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "common/q42_buf.h"

typedef struct rows {
	FILE *out;
	bool json;
	const char *const *cols;
	size_t n_cols;
	size_t col;       /* next cell of the current row */
	q42_buf line;     /* TSV line being built */
	json_t *obj;      /* JSON row being built */
	bool failed;      /* allocation failed somewhere in the row */
} rows;

/* Start a listing (prints the TSV header line). */
void rows_begin(rows *r, FILE *out, bool json, const char *const *cols, size_t n_cols);
/* Finish the listing; false when writing to out failed. */
bool rows_end(rows *r);

void row_str(rows *r, const void *p, uint64_t n);   /* text cell */
void row_cstr(rows *r, const char *s);
void row_u64(rows *r, uint64_t v);
void row_i64(rows *r, int64_t v);
void row_f32(rows *r, float v);                     /* %.9g; JSON number */
void row_f64(rows *r, double v);                    /* %.17g; JSON number */
void row_bool(rows *r, bool v);
void row_hex(rows *r, uint64_t v, int digits);      /* lower-case hex, zero-padded */
void row_none(rows *r);                             /* "-" / null */
/* A composite cell: tsv as written (already escaped), jv (stolen) for JSON. */
void row_raw(rows *r, const char *tsv, json_t *jv);
/* Emit the row; false on allocation failure. */
bool row_next(rows *r);

/* Append the TSV escaping of p[0, n) to b; quote adds surrounding double
 * quotes and escapes '"' (used in array previews). */
void tsv_escape(q42_buf *b, const void *p, uint64_t n, bool quote);
/* A JSON string of p[0, n); bytes that are not valid UTF-8 become U+FFFD. */
json_t *json_text(const void *p, uint64_t n);
/* A JSON number for a float, or a string ("nan", "inf", "-inf") where JSON
 * has no number. */
json_t *json_float(double v, bool single);
/* Format a float as the TSV cell does. */
void fmt_float(char *buf, size_t n, double v, bool single);

#endif
