/* q42_quin.c -- N-Triples / N-Quads / quin text: reader and canonical writer.
 *
 * Follows the grammar of W3C RDF 1.1 N-Triples and N-Quads, plus an
 * optional fifth (provenance) term; see q42-policy(5), QUINS. The reader
 * works on a caller's buffer one statement at a time, checks every byte
 * (UTF-8, escapes, absolute IRIs, blank-node label characters) and locates
 * errors by line and column. It never reads past data[size), never keeps a
 * pointer into the buffer in a returned term, and never prints.
 */
#include "formats/q42_quin.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/q42_utf8.h"

void q42_term_init(q42_term *t)
{
	memset(t, 0, sizeof(*t));
}

void q42_term_free(q42_term *t)
{
	if (!t)
		return;
	free(t->value);
	free(t->datatype);
	free(t->lang);
	q42_term_init(t);
}

static char *dup_bytes(const char *s, size_t n)
{
	char *p = malloc(n + 1);
	if (!p)
		return NULL;
	if (n)
		memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

int q42_term_set(q42_term *t, enum q42_term_kind kind, const char *value, size_t len,
		 const char *datatype, const char *lang, q42_err *err)
{
	q42_term_init(t);
	if (kind == Q42_TERM_NONE)
		return Q42_OK;
	if (kind != Q42_TERM_IRI && kind != Q42_TERM_BLANK && kind != Q42_TERM_LITERAL)
		return q42_err_set(err, Q42_EARG, "term kind %d is not a term kind", (int)kind);
	if (!value)
		return q42_err_set(err, Q42_EARG, "term without a value");
	t->kind = kind;
	t->len = len;
	t->value = dup_bytes(value, len);
	if (!t->value)
		goto nomem;
	if (kind == Q42_TERM_LITERAL && datatype && strcmp(datatype, Q42_XSD_STRING) != 0) {
		t->datatype = dup_bytes(datatype, strlen(datatype));
		if (!t->datatype)
			goto nomem;
	}
	if (kind == Q42_TERM_LITERAL && lang) {
		t->lang = dup_bytes(lang, strlen(lang));
		if (!t->lang)
			goto nomem;
	}
	return Q42_OK;
nomem:
	q42_term_free(t);
	return q42_err_set(err, Q42_ENOMEM, "out of memory copying a term");
}

int q42_term_copy(q42_term *dst, const q42_term *src, q42_err *err)
{
	if (src->kind == Q42_TERM_NONE) {
		q42_term_init(dst);
		return Q42_OK;
	}
	return q42_term_set(dst, src->kind, src->value, src->len, src->datatype, src->lang, err);
}

static bool str_eq_opt(const char *a, const char *b, bool nocase)
{
	if (!a || !b)
		return a == b;
	return nocase ? strcasecmp(a, b) == 0 : strcmp(a, b) == 0;
}

bool q42_term_equal(const q42_term *a, const q42_term *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == Q42_TERM_NONE)
		return true;
	if (a->len != b->len || memcmp(a->value, b->value, a->len) != 0)
		return false;
	return str_eq_opt(a->datatype, b->datatype, false) && str_eq_opt(a->lang, b->lang, true);
}

void q42_quin_init(q42_quin *q)
{
	memset(q, 0, sizeof(*q));
}

void q42_quin_free(q42_quin *q)
{
	if (!q)
		return;
	q42_term_free(&q->s);
	q42_term_free(&q->p);
	q42_term_free(&q->o);
	q42_term_free(&q->g);
	q42_term_free(&q->prov);
}

int q42_quin_copy(q42_quin *dst, const q42_quin *src, q42_err *err)
{
	int rc;
	q42_quin_init(dst);
	if ((rc = q42_term_copy(&dst->s, &src->s, err)) != Q42_OK ||
	    (rc = q42_term_copy(&dst->p, &src->p, err)) != Q42_OK ||
	    (rc = q42_term_copy(&dst->o, &src->o, err)) != Q42_OK ||
	    (rc = q42_term_copy(&dst->g, &src->g, err)) != Q42_OK ||
	    (rc = q42_term_copy(&dst->prov, &src->prov, err)) != Q42_OK) {
		q42_quin_free(dst);
		return rc;
	}
	return Q42_OK;
}

/* ---- reader ---------------------------------------------------------- */

void q42_quin_reader_init(q42_quin_reader *r, const void *data, size_t size,
			  enum q42_quin_syntax syntax)
{
	memset(r, 0, sizeof(*r));
	r->data = data;
	r->size = size;
	r->line = 1;
	r->syntax = syntax;
}

/* Column of byte offset pos on the current line, counted in characters. */
static uint64_t column_of(const q42_quin_reader *r, size_t pos)
{
	uint64_t col = 1;
	for (size_t i = r->line_start; i < pos && i < r->size; i++)
		if ((r->data[i] & 0xC0) != 0x80)
			col++;
	return col;
}

static int fail_at(q42_quin_reader *r, size_t pos, q42_err *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail_at(q42_quin_reader *r, size_t pos, q42_err *err, const char *fmt, ...)
{
	char what[Q42_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	r->err_line = r->line;
	r->err_col = column_of(r, pos);
	return q42_err_set(err, Q42_EFORMAT, "line %llu, column %llu: %s",
			   (unsigned long long)r->err_line, (unsigned long long)r->err_col, what);
}

/* Describe the byte at pos for an error message. */
static const char *found_at(const q42_quin_reader *r, size_t pos, char *tmp, size_t tmpsz)
{
	if (pos >= r->size)
		return "end of input";
	uint8_t c = r->data[pos];
	if (c == '\n' || c == '\r')
		return "end of line";
	if (c >= 0x21 && c < 0x7F)
		snprintf(tmp, tmpsz, "'%c'", c);
	else
		snprintf(tmp, tmpsz, "byte 0x%02X", c);
	return tmp;
}

/* Decode one UTF-8 character at pos; returns its length, 0 when invalid. */
static int decode_utf8(const q42_quin_reader *r, size_t pos, uint32_t *cp)
{
	const uint8_t *p = r->data + pos;
	int n = q42_utf8_seq(p, r->size - pos);
	if (n <= 0)
		return 0;
	if (n == 1)
		*cp = p[0];
	else if (n == 2)
		*cp = ((uint32_t)(p[0] & 0x1F) << 6) | (p[1] & 0x3Fu);
	else if (n == 3)
		*cp = ((uint32_t)(p[0] & 0x0F) << 12) | ((uint32_t)(p[1] & 0x3F) << 6) | (p[2] & 0x3Fu);
	else
		*cp = ((uint32_t)(p[0] & 0x07) << 18) | ((uint32_t)(p[1] & 0x3F) << 12) |
		      ((uint32_t)(p[2] & 0x3F) << 6) | (p[3] & 0x3Fu);
	return n;
}

static bool put_utf8(q42_buf *b, uint32_t cp)
{
	uint8_t u[4];
	size_t n;
	if (cp < 0x80) {
		u[0] = (uint8_t)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (uint8_t)(0xC0 | (cp >> 6));
		u[1] = (uint8_t)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (uint8_t)(0xE0 | (cp >> 12));
		u[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
		u[2] = (uint8_t)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		u[0] = (uint8_t)(0xF0 | (cp >> 18));
		u[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
		u[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
		u[3] = (uint8_t)(0x80 | (cp & 0x3F));
		n = 4;
	}
	return q42_buf_append(b, u, n);
}

static int hexval(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* UCHAR at pos (pointing at the backslash, next byte 'u' or 'U'). */
static int read_uchar(q42_quin_reader *r, size_t *pos, uint32_t *cp, q42_err *err)
{
	size_t start = *pos;
	unsigned ndig = r->data[start + 1] == 'u' ? 4 : 8;
	uint32_t v = 0;
	for (unsigned i = 0; i < ndig; i++) {
		size_t at = start + 2 + i;
		int h = at < r->size ? hexval(r->data[at]) : -1;
		if (h < 0) {
			char tmp[16];
			return fail_at(r, at, err, "\\%c escape needs %u hex digits, found %s",
				       r->data[start + 1], ndig, found_at(r, at, tmp, sizeof(tmp)));
		}
		v = (v << 4) | (uint32_t)h;
	}
	if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		return fail_at(r, start, err, "escape \\%c%0*X is not a Unicode scalar value",
			       r->data[start + 1], (int)ndig, v);
	*cp = v;
	*pos = start + 2 + ndig;
	return Q42_OK;
}

/* Characters IRIREF excludes: controls, space and <>"{}|^`\ . */
static bool iri_forbidden(uint32_t cp)
{
	return cp <= 0x20 || cp == '<' || cp == '>' || cp == '"' || cp == '{' || cp == '}' ||
	       cp == '|' || cp == '^' || cp == '`' || cp == '\\';
}

static bool is_alpha(uint32_t c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool is_digit(uint32_t c)
{
	return c >= '0' && c <= '9';
}

/* An absolute IRI starts with a scheme: ALPHA *(ALPHA / DIGIT / + - .) ':' */
static bool has_scheme(const uint8_t *v, size_t n)
{
	if (n == 0 || !is_alpha(v[0]))
		return false;
	for (size_t i = 1; i < n; i++) {
		if (v[i] == ':')
			return true;
		if (!is_alpha(v[i]) && !is_digit(v[i]) && v[i] != '+' && v[i] != '-' && v[i] != '.')
			return false;
	}
	return false;
}

static int term_take(q42_term *t, enum q42_term_kind kind, q42_buf *b, q42_err *err)
{
	if (b->failed || !q42_buf_u8(b, 0))
		return q42_err_set(err, Q42_ENOMEM, "out of memory reading a term");
	t->kind = kind;
	t->len = b->len - 1;
	t->value = (char *)b->data;
	q42_buf_init(b);
	return Q42_OK;
}

static int check_term_size(q42_quin_reader *r, size_t start, const q42_buf *b, q42_err *err)
{
	if (b->len > Q42_QUIN_MAX_TERM_BYTES)
		return fail_at(r, start, err, "term longer than %u bytes", Q42_QUIN_MAX_TERM_BYTES);
	return Q42_OK;
}

/* IRIREF at r->pos ('<'). */
static int read_iri(q42_quin_reader *r, q42_buf *b, q42_err *err)
{
	size_t start = r->pos, pos = r->pos + 1;
	int rc;
	for (;;) {
		uint32_t cp;
		char tmp[16];
		if (pos >= r->size || r->data[pos] == '\n' || r->data[pos] == '\r')
			return fail_at(r, pos, err, "IRI opened at column %llu has no closing '>'",
				       (unsigned long long)column_of(r, start));
		uint8_t c = r->data[pos];
		if (c == '>')
			break;
		if (c == '\\') {
			if (pos + 1 >= r->size || (r->data[pos + 1] != 'u' && r->data[pos + 1] != 'U'))
				return fail_at(r, pos, err,
					       "only \\u and \\U escapes are allowed in an IRI, found \\ then %s",
					       found_at(r, pos + 1, tmp, sizeof(tmp)));
			size_t esc = pos;
			if ((rc = read_uchar(r, &pos, &cp, err)) != Q42_OK)
				return rc;
			if (iri_forbidden(cp))
				return fail_at(r, esc, err, "escape decodes to U+%04X, which an IRI must not contain", cp);
		} else {
			int n = decode_utf8(r, pos, &cp);
			if (n == 0)
				return fail_at(r, pos, err, "invalid UTF-8 (%s)", found_at(r, pos, tmp, sizeof(tmp)));
			if (iri_forbidden(cp)) {
				if (cp == ' ')
					return fail_at(r, pos, err, "space is not allowed in an IRI");
				return fail_at(r, pos, err, "%s is not allowed in an IRI",
					       found_at(r, pos, tmp, sizeof(tmp)));
			}
			pos += (size_t)n;
		}
		if (!put_utf8(b, cp))
			return q42_err_set(err, Q42_ENOMEM, "out of memory reading an IRI");
		if ((rc = check_term_size(r, start, b, err)) != Q42_OK)
			return rc;
	}
	if (!has_scheme(b->data, b->len))
		return fail_at(r, start, err, "IRI <%.*s> is relative; an absolute IRI (scheme:...) is required",
			       (int)(b->len > 64 ? 64 : b->len), b->len ? (const char *)b->data : "");
	r->pos = pos + 1;
	return Q42_OK;
}

static bool pn_chars_base(uint32_t c)
{
	return is_alpha(c) || (c >= 0xC0 && c <= 0xD6) || (c >= 0xD8 && c <= 0xF6) ||
	       (c >= 0xF8 && c <= 0x2FF) || (c >= 0x370 && c <= 0x37D) || (c >= 0x37F && c <= 0x1FFF) ||
	       (c >= 0x200C && c <= 0x200D) || (c >= 0x2070 && c <= 0x218F) ||
	       (c >= 0x2C00 && c <= 0x2FEF) || (c >= 0x3001 && c <= 0xD7FF) ||
	       (c >= 0xF900 && c <= 0xFDCF) || (c >= 0xFDF0 && c <= 0xFFFD) ||
	       (c >= 0x10000 && c <= 0xEFFFF);
}

static bool pn_chars_u(uint32_t c)
{
	return pn_chars_base(c) || c == '_' || c == ':';
}

static bool pn_chars(uint32_t c)
{
	return pn_chars_u(c) || c == '-' || is_digit(c) || c == 0xB7 || (c >= 0x300 && c <= 0x36F) ||
	       (c >= 0x203F && c <= 0x2040);
}

/* BLANK_NODE_LABEL at r->pos ('_'). A label cannot end in '.', so dots
 * read at the end are given back (they end the statement). */
static int read_blank(q42_quin_reader *r, q42_buf *b, q42_err *err)
{
	size_t start = r->pos, pos = r->pos + 1, end_ok;
	uint32_t cp;
	char tmp[16];
	int n;
	if (pos >= r->size || r->data[pos] != ':')
		return fail_at(r, pos, err, "blank node needs '_:', found '_' then %s",
			       found_at(r, pos, tmp, sizeof(tmp)));
	pos++;
	n = pos < r->size ? decode_utf8(r, pos, &cp) : 0;
	if (n == 0 || !(pn_chars_u(cp) || is_digit(cp)))
		return fail_at(r, pos, err, "blank node label must start with a letter, digit, '_' or ':', found %s",
			       found_at(r, pos, tmp, sizeof(tmp)));
	pos += (size_t)n;
	end_ok = pos;
	while (pos < r->size) {
		n = decode_utf8(r, pos, &cp);
		if (n == 0 || !(pn_chars(cp) || cp == '.'))
			break;
		pos += (size_t)n;
		if (cp != '.')
			end_ok = pos;
	}
	size_t len = end_ok - (start + 2);
	if (len > Q42_QUIN_MAX_TERM_BYTES)
		return fail_at(r, start, err, "term longer than %u bytes", Q42_QUIN_MAX_TERM_BYTES);
	if (!q42_buf_append(b, r->data + start + 2, len))
		return q42_err_set(err, Q42_ENOMEM, "out of memory reading a blank node");
	r->pos = end_ok;
	return Q42_OK;
}

/* STRING_LITERAL_QUOTE with optional LANGTAG or '^^' IRIREF at r->pos. */
static int read_literal(q42_quin_reader *r, q42_term *t, q42_err *err)
{
	size_t start = r->pos, pos = r->pos + 1;
	q42_buf b;
	int rc;
	q42_buf_init(&b);
	for (;;) {
		uint32_t cp;
		char tmp[16];
		if (pos >= r->size || r->data[pos] == '\n' || r->data[pos] == '\r') {
			rc = fail_at(r, pos, err, "literal opened at column %llu has no closing '\"'",
				     (unsigned long long)column_of(r, start));
			goto fail;
		}
		uint8_t c = r->data[pos];
		if (c == '"')
			break;
		if (c == '\\') {
			uint8_t e = pos + 1 < r->size ? r->data[pos + 1] : 0;
			if (e == 'u' || e == 'U') {
				if ((rc = read_uchar(r, &pos, &cp, err)) != Q42_OK)
					goto fail;
			} else {
				switch (e) {
				case 't': cp = '\t'; break;
				case 'b': cp = '\b'; break;
				case 'n': cp = '\n'; break;
				case 'r': cp = '\r'; break;
				case 'f': cp = '\f'; break;
				case '"': cp = '"'; break;
				case '\'': cp = '\''; break;
				case '\\': cp = '\\'; break;
				default:
					rc = fail_at(r, pos, err, "unknown escape \\ then %s in a literal",
						     found_at(r, pos + 1, tmp, sizeof(tmp)));
					goto fail;
				}
				pos += 2;
			}
		} else {
			int n = decode_utf8(r, pos, &cp);
			if (n == 0) {
				rc = fail_at(r, pos, err, "invalid UTF-8 (%s)", found_at(r, pos, tmp, sizeof(tmp)));
				goto fail;
			}
			pos += (size_t)n;
		}
		if (!put_utf8(&b, cp)) {
			rc = q42_err_set(err, Q42_ENOMEM, "out of memory reading a literal");
			goto fail;
		}
		if ((rc = check_term_size(r, start, &b, err)) != Q42_OK)
			goto fail;
	}
	pos++;
	r->pos = pos;
	if ((rc = term_take(t, Q42_TERM_LITERAL, &b, err)) != Q42_OK)
		goto fail;
	if (pos < r->size && r->data[pos] == '@') {
		size_t ls = pos + 1, p2 = ls;
		while (p2 < r->size && is_alpha(r->data[p2]))
			p2++;
		if (p2 == ls) {
			rc = fail_at(r, p2, err, "language tag must start with a letter");
			goto fail;
		}
		while (p2 < r->size && r->data[p2] == '-') {
			size_t sub = ++p2;
			while (p2 < r->size && (is_alpha(r->data[p2]) || is_digit(r->data[p2])))
				p2++;
			if (p2 == sub) {
				rc = fail_at(r, p2, err, "language subtag after '-' is empty");
				goto fail;
			}
		}
		if (p2 - ls > 255) {
			rc = fail_at(r, ls, err, "language tag longer than 255 characters");
			goto fail;
		}
		t->lang = dup_bytes((const char *)r->data + ls, p2 - ls);
		if (!t->lang) {
			rc = q42_err_set(err, Q42_ENOMEM, "out of memory reading a language tag");
			goto fail;
		}
		r->pos = p2;
	} else if (pos < r->size && r->data[pos] == '^') {
		char tmp[16];
		if (pos + 2 >= r->size || r->data[pos + 1] != '^' || r->data[pos + 2] != '<') {
			rc = fail_at(r, pos, err, "datatype must be written ^^<IRI>, found %s",
				     found_at(r, pos + (pos + 1 < r->size && r->data[pos + 1] == '^' ? 2 : 1),
					      tmp, sizeof(tmp)));
			goto fail;
		}
		r->pos = pos + 2;
		if ((rc = read_iri(r, &b, err)) != Q42_OK)
			goto fail;
		if (!q42_buf_u8(&b, 0)) {
			rc = q42_err_set(err, Q42_ENOMEM, "out of memory reading a datatype");
			goto fail;
		}
		if (strcmp((const char *)b.data, Q42_XSD_STRING) != 0) {
			t->datatype = (char *)b.data;
			q42_buf_init(&b);
		}
	}
	q42_buf_free(&b);
	return Q42_OK;
fail:
	q42_buf_free(&b);
	q42_term_free(t);
	return rc;
}

/* One term of the kinds allowed by mask (1 << kind) at r->pos. */
static int read_term(q42_quin_reader *r, q42_term *t, unsigned mask, const char *role, q42_err *err)
{
	q42_buf b;
	int rc;
	char tmp[16];
	uint8_t c = r->pos < r->size ? r->data[r->pos] : 0;
	q42_buf_init(&b);
	q42_term_init(t);
	if (c == '<' && (mask & (1u << Q42_TERM_IRI))) {
		if ((rc = read_iri(r, &b, err)) != Q42_OK)
			goto fail;
		return term_take(t, Q42_TERM_IRI, &b, err);
	}
	if (c == '_' && (mask & (1u << Q42_TERM_BLANK))) {
		if ((rc = read_blank(r, &b, err)) != Q42_OK)
			goto fail;
		return term_take(t, Q42_TERM_BLANK, &b, err);
	}
	if (c == '"' && (mask & (1u << Q42_TERM_LITERAL)))
		return read_literal(r, t, err);
	rc = fail_at(r, r->pos, err, "expected %s (%s%s%s), found %s", role,
		     (mask & (1u << Q42_TERM_IRI)) ? "IRI" : "",
		     (mask & (1u << Q42_TERM_BLANK)) ? ", blank node" : "",
		     (mask & (1u << Q42_TERM_LITERAL)) ? ", literal" : "",
		     found_at(r, r->pos, tmp, sizeof(tmp)));
fail:
	q42_buf_free(&b);
	return rc;
}

static void skip_ws(q42_quin_reader *r)
{
	while (r->pos < r->size && (r->data[r->pos] == ' ' || r->data[r->pos] == '\t'))
		r->pos++;
}

/* Skip a '#' comment up to (not including) the line end. */
static int skip_comment(q42_quin_reader *r, q42_err *err)
{
	while (r->pos < r->size && r->data[r->pos] != '\n' && r->data[r->pos] != '\r') {
		int n = q42_utf8_seq(r->data + r->pos, r->size - r->pos);
		if (n <= 0)
			return fail_at(r, r->pos, err, "invalid UTF-8 in a comment (byte 0x%02X)", r->data[r->pos]);
		r->pos += (size_t)n;
	}
	return Q42_OK;
}

static void take_eol(q42_quin_reader *r)
{
	if (r->data[r->pos] == '\r' && r->pos + 1 < r->size && r->data[r->pos + 1] == '\n')
		r->pos++;
	r->pos++;
	r->line++;
	r->line_start = r->pos;
}

static bool at_term_start(const q42_quin_reader *r)
{
	if (r->pos >= r->size)
		return false;
	uint8_t c = r->data[r->pos];
	return c == '<' || c == '_' || c == '"';
}

int q42_quin_reader_next(q42_quin_reader *r, q42_quin *q, bool *eof, q42_err *err)
{
	const unsigned node = (1u << Q42_TERM_IRI) | (1u << Q42_TERM_BLANK);
	const unsigned any = node | (1u << Q42_TERM_LITERAL);
	char tmp[16];
	int rc;
	q42_quin_init(q);
	*eof = false;
	for (;;) {
		skip_ws(r);
		if (r->pos >= r->size) {
			*eof = true;
			return Q42_OK;
		}
		uint8_t c = r->data[r->pos];
		if (c == '#') {
			if ((rc = skip_comment(r, err)) != Q42_OK)
				return rc;
			continue;
		}
		if (c == '\n' || c == '\r') {
			take_eol(r);
			continue;
		}
		break;
	}
	if ((rc = read_term(r, &q->s, node, "subject", err)) != Q42_OK)
		goto fail;
	skip_ws(r);
	if ((rc = read_term(r, &q->p, 1u << Q42_TERM_IRI, "predicate", err)) != Q42_OK)
		goto fail;
	skip_ws(r);
	if ((rc = read_term(r, &q->o, any, "object", err)) != Q42_OK)
		goto fail;
	skip_ws(r);
	if (at_term_start(r)) {
		if (r->syntax == Q42_SYNTAX_NTRIPLES) {
			rc = fail_at(r, r->pos, err, "N-Triples has no graph term; expected '.'");
			goto fail;
		}
		if ((rc = read_term(r, &q->g, node, "graph", err)) != Q42_OK)
			goto fail;
		if (q->g.kind == Q42_TERM_IRI && strcmp(q->g.value, Q42_QUIN_DEFAULT_GRAPH) == 0)
			q42_term_free(&q->g);
		skip_ws(r);
		if (at_term_start(r)) {
			if (r->syntax != Q42_SYNTAX_QUINS) {
				rc = fail_at(r, r->pos, err, "N-Quads has no fifth term; expected '.'");
				goto fail;
			}
			if ((rc = read_term(r, &q->prov, any, "provenance", err)) != Q42_OK)
				goto fail;
			skip_ws(r);
		}
	}
	if (r->pos >= r->size || r->data[r->pos] != '.') {
		rc = fail_at(r, r->pos, err, "expected '.' to end the statement, found %s",
			     found_at(r, r->pos, tmp, sizeof(tmp)));
		goto fail;
	}
	r->pos++;
	skip_ws(r);
	if (r->pos < r->size && r->data[r->pos] == '#' && (rc = skip_comment(r, err)) != Q42_OK)
		goto fail;
	if (r->pos < r->size) {
		if (r->data[r->pos] != '\n' && r->data[r->pos] != '\r') {
			rc = fail_at(r, r->pos, err, "expected end of line after '.', found %s",
				     found_at(r, r->pos, tmp, sizeof(tmp)));
			goto fail;
		}
		take_eol(r);
	}
	return Q42_OK;
fail:
	q42_quin_free(q);
	return rc;
}

int q42_quin_parse(q42_quin *q, const char *s, size_t n, enum q42_quin_syntax syntax, q42_err *err)
{
	q42_quin_reader r;
	q42_quin extra;
	bool eof;
	int rc;
	q42_quin_reader_init(&r, s, n, syntax);
	if ((rc = q42_quin_reader_next(&r, q, &eof, err)) != Q42_OK)
		return rc;
	if (eof)
		return q42_err_set(err, Q42_EFORMAT, "line 1, column 1: no statement found");
	rc = q42_quin_reader_next(&r, &extra, &eof, err);
	if (rc == Q42_OK && !eof) {
		q42_quin_free(&extra);
		rc = q42_err_set(err, Q42_EFORMAT, "more than one statement where one was expected");
	}
	if (rc != Q42_OK)
		q42_quin_free(q);
	return rc;
}

/* ---- writer ---------------------------------------------------------- */

static bool put_uchar(q42_buf *out, uint32_t cp)
{
	if (cp <= 0xFFFF)
		return q42_buf_printf(out, "\\u%04X", cp);
	return q42_buf_printf(out, "\\U%08X", cp);
}

static bool write_iri(q42_buf *out, const char *v, size_t n)
{
	bool ok = q42_buf_u8(out, '<');
	for (size_t i = 0; i < n && ok; i++) {
		uint8_t c = (uint8_t)v[i];
		/* Only terms built in code can hold these (the reader rejects
		 * them); escape so the output at least stays one token. */
		if (c < 0x80 && iri_forbidden(c))
			ok = put_uchar(out, c);
		else
			ok = q42_buf_u8(out, c);
	}
	return ok && q42_buf_u8(out, '>');
}

static bool write_literal_body(q42_buf *out, const char *v, size_t n)
{
	bool ok = q42_buf_u8(out, '"');
	for (size_t i = 0; i < n && ok; i++) {
		uint8_t c = (uint8_t)v[i];
		switch (c) {
		case '"': ok = q42_buf_append(out, "\\\"", 2); break;
		case '\\': ok = q42_buf_append(out, "\\\\", 2); break;
		case '\n': ok = q42_buf_append(out, "\\n", 2); break;
		case '\r': ok = q42_buf_append(out, "\\r", 2); break;
		case '\t': ok = q42_buf_append(out, "\\t", 2); break;
		case '\b': ok = q42_buf_append(out, "\\b", 2); break;
		case '\f': ok = q42_buf_append(out, "\\f", 2); break;
		default:
			if (c < 0x20 || c == 0x7F)
				ok = put_uchar(out, c);
			else
				ok = q42_buf_u8(out, c);
		}
	}
	return ok && q42_buf_u8(out, '"');
}

static bool write_term(q42_buf *out, const q42_term *t, bool lower_lang)
{
	switch (t->kind) {
	case Q42_TERM_IRI:
		return write_iri(out, t->value, t->len);
	case Q42_TERM_BLANK:
		return q42_buf_append(out, "_:", 2) && q42_buf_append(out, t->value, t->len);
	case Q42_TERM_LITERAL:
		if (!write_literal_body(out, t->value, t->len))
			return false;
		if (t->lang) {
			if (!q42_buf_u8(out, '@'))
				return false;
			for (const char *l = t->lang; *l; l++) {
				char ch = *l;
				if (lower_lang && ch >= 'A' && ch <= 'Z')
					ch = (char)(ch - 'A' + 'a');
				if (!q42_buf_u8(out, (uint8_t)ch))
					return false;
			}
			return true;
		}
		if (t->datatype)
			return q42_buf_append(out, "^^", 2) && write_iri(out, t->datatype, strlen(t->datatype));
		return true;
	case Q42_TERM_NONE:
		return true;
	}
	return true;
}

bool q42_term_write(q42_buf *out, const q42_term *t)
{
	return write_term(out, t, false);
}

bool q42_quin_write(q42_buf *out, const q42_quin *q)
{
	bool ok = write_term(out, &q->s, false) && q42_buf_u8(out, ' ') &&
		  write_term(out, &q->p, false) && q42_buf_u8(out, ' ') && write_term(out, &q->o, false);
	if (ok && (q->g.kind != Q42_TERM_NONE || q->prov.kind != Q42_TERM_NONE)) {
		ok = q42_buf_u8(out, ' ');
		if (ok && q->g.kind != Q42_TERM_NONE)
			ok = write_term(out, &q->g, false);
		else if (ok)
			ok = write_iri(out, Q42_QUIN_DEFAULT_GRAPH, strlen(Q42_QUIN_DEFAULT_GRAPH));
	}
	if (ok && q->prov.kind != Q42_TERM_NONE)
		ok = q42_buf_u8(out, ' ') && write_term(out, &q->prov, false);
	return ok && q42_buf_append(out, " .\n", 3);
}

bool q42_quin_key(q42_buf *out, const q42_quin *q, bool with_graph)
{
	bool ok = write_term(out, &q->s, true) && q42_buf_u8(out, ' ') && write_term(out, &q->p, true) &&
		  q42_buf_u8(out, ' ') && write_term(out, &q->o, true);
	if (ok && with_graph) {
		ok = q42_buf_u8(out, ' ');
		if (ok && q->g.kind != Q42_TERM_NONE)
			ok = write_term(out, &q->g, true);
	}
	return ok;
}
