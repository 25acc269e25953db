/* rows.c -- TSV and JSON Lines rows for p64check listings (see rows.h).
 *
 * The escaping rules here are the ones p64check(1) documents and
 * tests/tools/gguf_py_dump.py reimplements independently; a change to one
 * must be made to both and to the man page.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "rows.h"

/* Length of the valid UTF-8 sequence at p (n bytes available), 0 if none:
 * no overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_seq(const uint8_t *p, uint64_t n)
{
	uint8_t c = p[0];
	size_t len;
	uint32_t cp, min;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF) {
		len = 2;
		cp = c & 0x1Fu;
		min = 0x80;
	} else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		cp = c & 0x0Fu;
		min = 0x800;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		cp = c & 0x07u;
		min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xC0u) != 0x80u)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3Fu);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return len;
}

void tsv_escape(q42_buf *b, const void *data, uint64_t n, bool quote)
{
	const uint8_t *p = data;

	if (quote)
		q42_buf_u8(b, '"');
	for (uint64_t i = 0; i < n;) {
		uint8_t c = p[i];
		size_t len = utf8_seq(p + i, n - i);
		if (len == 0) {
			q42_buf_printf(b, "\\x%02x", c);
			i++;
			continue;
		}
		if (len > 1)
			q42_buf_append(b, p + i, len);
		else if (c == '\\')
			q42_buf_append(b, "\\\\", 2);
		else if (c == '\t')
			q42_buf_append(b, "\\t", 2);
		else if (c == '\n')
			q42_buf_append(b, "\\n", 2);
		else if (c == '\r')
			q42_buf_append(b, "\\r", 2);
		else if (c < 0x20 || c == 0x7F)
			q42_buf_printf(b, "\\x%02x", c);
		else if (quote && c == '"')
			q42_buf_append(b, "\\\"", 2);
		else
			q42_buf_u8(b, c);
		i += len;
	}
	if (quote)
		q42_buf_u8(b, '"');
}

json_t *json_text(const void *data, uint64_t n)
{
	const uint8_t *p = data;
	q42_buf b;
	json_t *j;
	uint64_t i;

	for (i = 0; i < n;) {
		size_t len = utf8_seq(p + i, n - i);
		if (len == 0)
			break;
		i += len;
	}
	if (i == n)
		return json_stringn((const char *)p, (size_t)n);
	q42_buf_init(&b);
	for (i = 0; i < n;) {
		size_t len = utf8_seq(p + i, n - i);
		if (len == 0) {
			q42_buf_append(&b, "\xEF\xBF\xBD", 3);
			i++;
		} else {
			q42_buf_append(&b, p + i, len);
			i += len;
		}
	}
	j = b.failed ? NULL : json_stringn((const char *)b.data, b.len);
	q42_buf_free(&b);
	return j;
}

void fmt_float(char *buf, size_t n, double v, bool single)
{
	if (isnan(v))
		snprintf(buf, n, "nan");
	else if (isinf(v))
		snprintf(buf, n, v < 0 ? "-inf" : "inf");
	else
		snprintf(buf, n, single ? "%.9g" : "%.17g", v);
}

json_t *json_float(double v, bool single)
{
	char buf[40];

	if (isnan(v) || isinf(v)) {
		fmt_float(buf, sizeof buf, v, single);
		return json_string(buf);
	}
	return json_real(v);
}

void rows_begin(rows *r, FILE *out, bool json, const char *const *cols, size_t n_cols)
{
	memset(r, 0, sizeof *r);
	r->out = out;
	r->json = json;
	r->cols = cols;
	r->n_cols = n_cols;
	q42_buf_init(&r->line);
	if (!json) {
		for (size_t i = 0; i < n_cols; i++)
			fprintf(out, "%s%s", i ? "\t" : "", cols[i]);
		fputc('\n', out);
	}
}

bool rows_end(rows *r)
{
	bool ok = !r->failed;

	q42_buf_free(&r->line);
	json_decref(r->obj);
	r->obj = NULL;
	if (fflush(r->out) != 0 || ferror(r->out))
		ok = false;
	return ok;
}

/* Every cell ends here: its TSV text and its JSON value (stolen). */
static void cell(rows *r, const char *tsv, size_t tsv_len, json_t *jv)
{
	if (r->col >= r->n_cols) {
		r->failed = true;
		json_decref(jv);
		return;
	}
	if (r->json) {
		if (r->obj == NULL)
			r->obj = json_object();
		if (r->obj == NULL || jv == NULL ||
		    json_object_set_new(r->obj, r->cols[r->col], jv) != 0)
			r->failed = true;
	} else {
		json_decref(jv);
		if (r->col > 0)
			q42_buf_u8(&r->line, '\t');
		q42_buf_append(&r->line, tsv, tsv_len);
	}
	r->col++;
}

void row_str(rows *r, const void *p, uint64_t n)
{
	if (r->json) {
		cell(r, "", 0, json_text(p, n));
		return;
	}
	q42_buf b;
	q42_buf_init(&b);
	tsv_escape(&b, p, n, false);
	if (b.failed)
		r->failed = true;
	cell(r, (const char *)b.data, b.len, NULL);
	q42_buf_free(&b);
}

void row_cstr(rows *r, const char *s)
{
	row_str(r, s, strlen(s));
}

void row_u64(rows *r, uint64_t v)
{
	char buf[32];
	int n = snprintf(buf, sizeof buf, "%" PRIu64, v);
	cell(r, buf, (size_t)n, r->json ? json_integer((json_int_t)v) : NULL);
}

void row_i64(rows *r, int64_t v)
{
	char buf[32];
	int n = snprintf(buf, sizeof buf, "%" PRId64, v);
	cell(r, buf, (size_t)n, r->json ? json_integer((json_int_t)v) : NULL);
}

void row_f32(rows *r, float v)
{
	char buf[40];
	fmt_float(buf, sizeof buf, v, true);
	cell(r, buf, strlen(buf), r->json ? json_float(v, true) : NULL);
}

void row_f64(rows *r, double v)
{
	char buf[40];
	fmt_float(buf, sizeof buf, v, false);
	cell(r, buf, strlen(buf), r->json ? json_float(v, false) : NULL);
}

void row_bool(rows *r, bool v)
{
	cell(r, v ? "true" : "false", v ? 4 : 5, r->json ? json_boolean(v) : NULL);
}

void row_hex(rows *r, uint64_t v, int digits)
{
	char buf[32];
	int n = snprintf(buf, sizeof buf, "%0*" PRIx64, digits, v);
	cell(r, buf, (size_t)n, r->json ? json_string(buf) : NULL);
}

void row_none(rows *r)
{
	cell(r, "-", 1, r->json ? json_null() : NULL);
}

void row_raw(rows *r, const char *tsv, json_t *jv)
{
	if (!r->json) {
		json_decref(jv);
		jv = NULL;
	}
	cell(r, tsv, strlen(tsv), jv);
}

bool row_next(rows *r)
{
	bool ok = !r->failed && r->col == r->n_cols && !r->line.failed;

	if (ok && r->json) {
		char *s = json_dumps(r->obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
		if (s == NULL) {
			ok = false;
		} else {
			fputs(s, r->out);
			fputc('\n', r->out);
			free(s);
		}
	} else if (ok) {
		fwrite(r->line.data, 1, r->line.len, r->out);
		fputc('\n', r->out);
	}
	json_decref(r->obj);
	r->obj = NULL;
	q42_buf_reset(&r->line);
	r->col = 0;
	if (!ok)
		r->failed = true;
	return ok;
}
