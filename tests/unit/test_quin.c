/* test_quin.c -- the quin reader and writer against N-Triples/N-Quads cases.
 *
 * The cases follow the W3C RDF 1.1 test suites' style (positive and
 * negative syntax tests) and were written by hand from the grammars of
 * RDF 1.1 N-Triples (https://www.w3.org/TR/n-triples/, section 7) and
 * N-Quads (https://www.w3.org/TR/n-quads/, section 6) and their canonical
 * form; the expected canonical text, line and column of every case was
 * worked out from the spec, not taken from this implementation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "common/q42_buf.h"
#include "governance/q42_facts.h"
#include "formats/q42_quin.h"

/* Parse every statement of in and return the canonical text of all. */
static char *canon(const char *in, size_t n, enum q42_quin_syntax syn)
{
	q42_quin_reader r;
	q42_buf out;
	q42_err err = {0};
	q42_quin q;
	bool eof = false;
	q42_buf_init(&out);
	q42_quin_reader_init(&r, in, n, syn);
	for (;;) {
		int rc = q42_quin_reader_next(&r, &q, &eof, &err);
		if (rc != Q42_OK)
			fail_msg("unexpected error on %s: %s", in, err.msg);
		if (eof)
			break;
		assert_true(q42_quin_write(&out, &q));
		q42_quin_free(&q);
	}
	assert_true(q42_buf_u8(&out, 0));
	return (char *)out.data;
}

struct pos_case {
	const char *in;
	const char *want;
	enum q42_quin_syntax syn;
};

static const struct pos_case positive[] = {
	/* nt-syntax-uri-01 style: plain triple */
	{"<http://example/s> <http://example/p> <http://example/o> .\n",
	 "<http://example/s> <http://example/p> <http://example/o> .\n", Q42_SYNTAX_NTRIPLES},
	/* comments and blank lines around a statement; no final newline */
	{"# comment\n\n  \t\n<http://example/s> <http://example/p> <http://example/o> . # trailing",
	 "<http://example/s> <http://example/p> <http://example/o> .\n", Q42_SYNTAX_NTRIPLES},
	/* no whitespace at all between terms */
	{"<http://example/s><http://example/p><http://example/o>.",
	 "<http://example/s> <http://example/p> <http://example/o> .\n", Q42_SYNTAX_NTRIPLES},
	/* tabs as separators */
	{"<a:s>\t<a:p>\t<a:o>\t.\n", "<a:s> <a:p> <a:o> .\n", Q42_SYNTAX_NTRIPLES},
	/* literal, language tags, datatypes */
	{"<http://example/s> <http://example/p> \"string\" .", "<http://example/s> <http://example/p> \"string\" .\n",
	 Q42_SYNTAX_NTRIPLES},
	{"<http://example/s> <http://example/p> \"chat\"@en-US .",
	 "<http://example/s> <http://example/p> \"chat\"@en-US .\n", Q42_SYNTAX_NTRIPLES},
	{"<http://example/s> <http://example/p> \"x\"@de-1996 .", "<http://example/s> <http://example/p> \"x\"@de-1996 .\n",
	 Q42_SYNTAX_NTRIPLES},
	{"<http://example/s> <http://example/p> \"1\"^^<http://www.w3.org/2001/XMLSchema#integer> .",
	 "<http://example/s> <http://example/p> \"1\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n",
	 Q42_SYNTAX_NTRIPLES},
	/* xsd:string is the plain literal (canonical form drops it) */
	{"<http://example/s> <http://example/p> \"x\"^^<http://www.w3.org/2001/XMLSchema#string> .",
	 "<http://example/s> <http://example/p> \"x\" .\n", Q42_SYNTAX_NTRIPLES},
	/* every ECHAR; \' needs no escape in canonical form */
	{"<a:s> <a:p> \"\\t\\b\\n\\r\\f\\\"\\'\\\\\" .", "<a:s> <a:p> \"\\t\\b\\n\\r\\f\\\"'\\\\\" .\n",
	 Q42_SYNTAX_NTRIPLES},
	/* UCHAR, short and long, decode to UTF-8 (A, U+00E9, U+1F600) */
	{"<a:s> <a:p> \"\\u0041\\u00e9\\U0001F600\" .", "<a:s> <a:p> \"A\xC3\xA9\xF0\x9F\x98\x80\" .\n",
	 Q42_SYNTAX_NTRIPLES},
	/* control characters without an ECHAR are written as uppercase UCHAR */
	{"<a:s> <a:p> \"\\u0000\\u001f\\u007F\" .", "<a:s> <a:p> \"\\u0000\\u001F\\u007F\" .\n", Q42_SYNTAX_NTRIPLES},
	/* UCHAR in an IRI */
	{"<http://example/\\u0073> <a:p> <http://example/\\U000000E9> .",
	 "<http://example/s> <a:p> <http://example/\xC3\xA9> .\n", Q42_SYNTAX_NTRIPLES},
	/* raw non-ASCII in IRIs and literals */
	{"<http://example/\xC3\xA9> <a:p> \"\xE6\x97\xA5\xE6\x9C\xAC\" .",
	 "<http://example/\xC3\xA9> <a:p> \"\xE6\x97\xA5\xE6\x9C\xAC\" .\n", Q42_SYNTAX_NTRIPLES},
	/* blank nodes: digits first, dots inside, ':' allowed, final '.' ends the statement */
	{"_:a <a:p> _:b.c .\n_:1 <a:p> _:x:y.\n_:s <a:p> _:o.\n",
	 "_:a <a:p> _:b.c .\n_:1 <a:p> _:x:y .\n_:s <a:p> _:o .\n", Q42_SYNTAX_NTRIPLES},
	/* CRLF and lone CR line ends */
	{"<a:s> <a:p> <a:o> .\r\n<a:s> <a:p> <a:o2> .\r<a:s> <a:p> <a:o3> .",
	 "<a:s> <a:p> <a:o> .\n<a:s> <a:p> <a:o2> .\n<a:s> <a:p> <a:o3> .\n", Q42_SYNTAX_NTRIPLES},
	/* N-Quads: IRI and blank graph labels */
	{"<http://example/s> <http://example/p> <http://example/o> <http://example/g> .",
	 "<http://example/s> <http://example/p> <http://example/o> <http://example/g> .\n", Q42_SYNTAX_NQUADS},
	{"<a:s> <a:p> \"o\"@en _:g .", "<a:s> <a:p> \"o\"@en _:g .\n", Q42_SYNTAX_NQUADS},
	/* N-Triples input is valid N-Quads and quins */
	{"<a:s> <a:p> <a:o> .", "<a:s> <a:p> <a:o> .\n", Q42_SYNTAX_QUINS},
	/* quins: provenance as IRI, blank node or literal */
	{"<a:s> <a:p> <a:o> <a:g> <a:prov> .", "<a:s> <a:p> <a:o> <a:g> <a:prov> .\n", Q42_SYNTAX_QUINS},
	{"<a:s> <a:p> <a:o> <a:g> _:p .", "<a:s> <a:p> <a:o> <a:g> _:p .\n", Q42_SYNTAX_QUINS},
	{"<a:s> <a:p> <a:o> <urn:q42:graph:default> \"run 7\" .",
	 "<a:s> <a:p> <a:o> <urn:q42:graph:default> \"run 7\" .\n", Q42_SYNTAX_QUINS},
	/* the default-graph IRI alone is the default graph */
	{"<a:s> <a:p> <a:o> <urn:q42:graph:default> .", "<a:s> <a:p> <a:o> .\n", Q42_SYNTAX_QUINS},
};

static void test_positive(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(positive) / sizeof(positive[0]); i++) {
		char *got = canon(positive[i].in, strlen(positive[i].in), positive[i].syn);
		if (strcmp(got, positive[i].want) != 0)
			fail_msg("case %zu: got [%s] want [%s]", i, got, positive[i].want);
		/* canonical text reads back to itself */
		char *again = canon(got, strlen(got), Q42_SYNTAX_QUINS);
		assert_string_equal(again, got);
		free(again);
		free(got);
	}
}

struct neg_case {
	const char *in;
	enum q42_quin_syntax syn;
	uint64_t line, col;
	const char *msg_part;
};

static const struct neg_case negative[] = {
	/* nt-syntax-bad-uri-01: space in IRI */
	{"<http://example/ space> <a:p> <a:o> .", Q42_SYNTAX_NTRIPLES, 1, 17, "space"},
	/* nt-syntax-bad-uri-02/03: bad \u and \U escapes (at the first bad digit) */
	{"<http://example/\\u00ZZ11> <a:p> <a:o> .", Q42_SYNTAX_NTRIPLES, 1, 21, "hex digits"},
	{"<http://example/\\U00ZZ1111> <a:p> <a:o> .", Q42_SYNTAX_NTRIPLES, 1, 21, "hex digits"},
	/* nt-syntax-bad-uri-04: character escape in IRI */
	{"<http://example/\\n> <a:p> <a:o> .", Q42_SYNTAX_NTRIPLES, 1, 17, "only \\u and \\U"},
	/* nt-syntax-bad-uri-05: { in IRI */
	{"<http://example/{abc}> <a:p> <a:o> .", Q42_SYNTAX_NTRIPLES, 1, 17, "not allowed in an IRI"},
	/* relative IRIs (nt-syntax-bad-uri-06..09 style) */
	{"<s> <http://example/p> <http://example/o> .", Q42_SYNTAX_NTRIPLES, 1, 1, "relative"},
	{"<a:s> <a:p> <#o> .", Q42_SYNTAX_NTRIPLES, 1, 13, "relative"},
	{"<a:s> <a:p> <a:o> <> .", Q42_SYNTAX_NQUADS, 1, 19, "relative"},
	/* an escape that decodes to a character IRIs exclude */
	{"<http://example/\\u0020> <a:p> <a:o> .", Q42_SYNTAX_NTRIPLES, 1, 17, "U+0020"},
	/* wrong term kinds (nt-syntax-bad-struct style) */
	{"\"s\" <a:p> <a:o> .", Q42_SYNTAX_NTRIPLES, 1, 1, "subject"},
	{"<a:s> _:p <a:o> .", Q42_SYNTAX_NTRIPLES, 1, 7, "predicate"},
	{"<a:s> \"p\" <a:o> .", Q42_SYNTAX_NTRIPLES, 1, 7, "predicate"},
	{"<a:s> <a:p> <a:o> \"g\" .", Q42_SYNTAX_NQUADS, 1, 19, "graph"},
	{"<a:s> <a:p> <a:o> <a:g> <a:v> .", Q42_SYNTAX_NQUADS, 1, 25, "N-Quads has no fifth"},
	{"<a:s> <a:p> <a:o> \"g\" .", Q42_SYNTAX_QUINS, 1, 19, "graph"},
	/* missing '.' at end of input: column after the last character */
	{"<a:s> <a:p> <a:o>", Q42_SYNTAX_NTRIPLES, 1, 18, "expected '.'"},
	/* two statements on one line */
	{"<a:s> <a:p> <a:o> . <a:s> <a:p> <a:o> .", Q42_SYNTAX_NTRIPLES, 1, 21, "end of line"},
	/* unterminated literal (nt-syntax-bad-string-01 style) */
	{"<a:s> <a:p> \"abc", Q42_SYNTAX_NTRIPLES, 1, 17, "no closing"},
	{"<a:s> <a:p> \"a\rb\" .", Q42_SYNTAX_NTRIPLES, 1, 15, "no closing"},
	/* bad escapes in literals (nt-syntax-bad-esc-01..03 style) */
	{"<a:s> <a:p> \"\\z\" .", Q42_SYNTAX_NTRIPLES, 1, 14, "unknown escape"},
	{"<a:s> <a:p> \"\\uWXYZ\" .", Q42_SYNTAX_NTRIPLES, 1, 16, "hex digits"},
	{"<a:s> <a:p> \"\\U0000WXYZ\" .", Q42_SYNTAX_NTRIPLES, 1, 20, "hex digits"},
	/* surrogates and values past U+10FFFF are not characters */
	{"<a:s> <a:p> \"\\uD800\" .", Q42_SYNTAX_NTRIPLES, 1, 14, "scalar"},
	{"<a:s> <a:p> \"\\U00110000\" .", Q42_SYNTAX_NTRIPLES, 1, 14, "scalar"},
	/* bad language tags (nt-syntax-bad-lang-01 style) */
	{"<a:s> <a:p> \"x\"@ .", Q42_SYNTAX_NTRIPLES, 1, 17, "language tag"},
	{"<a:s> <a:p> \"x\"@1en .", Q42_SYNTAX_NTRIPLES, 1, 17, "language tag"},
	{"<a:s> <a:p> \"x\"@en- .", Q42_SYNTAX_NTRIPLES, 1, 20, "subtag"},
	/* language tag and datatype together */
	{"<a:s> <a:p> \"x\"@en^^<a:t> .", Q42_SYNTAX_NTRIPLES, 1, 19, "expected '.'"},
	/* datatype not an IRIREF (nt-syntax-bad-num / prefixed name) */
	{"<a:s> <a:p> \"1\"^^xsd:integer .", Q42_SYNTAX_NTRIPLES, 1, 16, "^^<IRI>"},
	/* N-Triples has no graph term (nt-syntax-bad-quad-01) */
	{"<a:s> <a:p> <a:o> <a:g> .", Q42_SYNTAX_NTRIPLES, 1, 19, "N-Triples"},
	/* blank node labels */
	{"_:-a <a:p> <a:o> .", Q42_SYNTAX_NTRIPLES, 1, 3, "blank node label"},
	{"_ <a:p> <a:o> .", Q42_SYNTAX_NTRIPLES, 1, 2, "'_:'"},
	/* Turtle-only syntax is not N-Triples (nt-syntax-bad-prefix/base style) */
	{"@prefix : <http://example/> .", Q42_SYNTAX_NTRIPLES, 1, 1, "subject"},
	{"<a:s> <a:p> 1 .", Q42_SYNTAX_NTRIPLES, 1, 13, "object"},
	{"<a:s> <a:p> true .", Q42_SYNTAX_NTRIPLES, 1, 13, "object"},
	{"<a:s> <a:p> <a:o> ;", Q42_SYNTAX_NTRIPLES, 1, 19, "expected '.'"},
	/* invalid UTF-8 in a literal, an IRI, a comment */
	{"<a:s> <a:p> \"a\xFF\" .", Q42_SYNTAX_NTRIPLES, 1, 15, "UTF-8"},
	{"<a:\xC0\xAF> <a:p> <a:o> .", Q42_SYNTAX_NTRIPLES, 1, 4, "UTF-8"},
	{"# \xFE\n", Q42_SYNTAX_NTRIPLES, 1, 3, "UTF-8"},
	/* the line is counted across comments, blank lines and CRLF; the column
	 * counts characters, so the two-byte e-acute is one column */
	{"# one\r\n\r\n<a:s> <a:p> \"\xC3\xA9\\q\" .", Q42_SYNTAX_NTRIPLES, 3, 15, "unknown escape"},
};

static void test_negative(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(negative) / sizeof(negative[0]); i++) {
		const struct neg_case *c = &negative[i];
		q42_quin_reader r;
		q42_quin q;
		q42_err err = {0};
		bool eof = false;
		int rc;
		q42_quin_reader_init(&r, c->in, strlen(c->in), c->syn);
		do {
			rc = q42_quin_reader_next(&r, &q, &eof, &err);
			if (rc == Q42_OK && !eof)
				q42_quin_free(&q);
		} while (rc == Q42_OK && !eof);
		if (rc != Q42_EFORMAT)
			fail_msg("case %zu [%s]: accepted", i, c->in);
		if (r.err_line != c->line || r.err_col != c->col)
			fail_msg("case %zu [%s]: at %llu:%llu, want %llu:%llu (%s)", i, c->in,
				 (unsigned long long)r.err_line, (unsigned long long)r.err_col,
				 (unsigned long long)c->line, (unsigned long long)c->col, err.msg);
		if (!strstr(err.msg, c->msg_part))
			fail_msg("case %zu: message [%s] lacks [%s]", i, err.msg, c->msg_part);
		char where[64];
		snprintf(where, sizeof(where), "line %llu, column %llu: ", (unsigned long long)c->line,
			 (unsigned long long)c->col);
		assert_true(strncmp(err.msg, where, strlen(where)) == 0);
	}
}

static void test_parse_one(void **state)
{
	q42_quin q;
	q42_err err = {0};
	(void)state;
	assert_int_equal(q42_quin_parse(&q, "<a:s> <a:p> \"o\"@EN <a:g> <a:v> .\n", strlen("<a:s> <a:p> \"o\"@EN <a:g> <a:v> .\n"), Q42_SYNTAX_QUINS, &err), Q42_OK);
	assert_int_equal(q.s.kind, Q42_TERM_IRI);
	assert_string_equal(q.s.value, "a:s");
	assert_int_equal(q.o.kind, Q42_TERM_LITERAL);
	assert_string_equal(q.o.lang, "EN");
	assert_null(q.o.datatype);
	assert_string_equal(q.g.value, "a:g");
	assert_string_equal(q.prov.value, "a:v");
	q42_quin_free(&q);
	/* a literal with U+0000 keeps its length */
	assert_int_equal(q42_quin_parse(&q, "<a:s> <a:p> \"a\\u0000b\" .", strlen("<a:s> <a:p> \"a\\u0000b\" ."), Q42_SYNTAX_NTRIPLES, &err), Q42_OK);
	assert_int_equal(q.o.len, 3);
	assert_memory_equal(q.o.value, "a\0b", 3);
	q42_quin_free(&q);
	assert_int_equal(q42_quin_parse(&q, "# only a comment\n", strlen("# only a comment\n"), Q42_SYNTAX_QUINS, &err), Q42_EFORMAT);
	assert_int_equal(q42_quin_parse(&q, "<a:s> <a:p> <a:o> .\n<a:s> <a:p> <a:o> .\n", strlen("<a:s> <a:p> <a:o> .\n<a:s> <a:p> <a:o> .\n"), Q42_SYNTAX_QUINS, &err),
			 Q42_EFORMAT);
}

static void test_equal_and_key(void **state)
{
	q42_quin a, b;
	q42_err err = {0};
	q42_buf k1, k2;
	(void)state;
	/* RDF term equality: lexical form exact, language tag case-insensitive,
	 * escapes and xsd:string irrelevant */
	assert_int_equal(q42_quin_parse(&a, "<a:s> <a:p> \"chat\"@en-US .", strlen("<a:s> <a:p> \"chat\"@en-US ."), Q42_SYNTAX_QUINS, &err), Q42_OK);
	assert_int_equal(q42_quin_parse(&b, "<a:s> <a:p> \"\\u0063hat\"@EN-us <a:g> <a:x> .", strlen("<a:s> <a:p> \"\\u0063hat\"@EN-us <a:g> <a:x> ."), Q42_SYNTAX_QUINS, &err),
			 Q42_OK);
	assert_true(q42_term_equal(&a.o, &b.o));
	assert_false(q42_term_equal(&a.g, &b.g));
	q42_buf_init(&k1);
	q42_buf_init(&k2);
	assert_true(q42_quin_key(&k1, &a, false));
	assert_true(q42_quin_key(&k2, &b, false));
	assert_int_equal(k1.len, k2.len);
	assert_memory_equal(k1.data, k2.data, k1.len);
	assert_memory_equal(k1.data, "<a:s> <a:p> \"chat\"@en-us", k1.len);
	q42_buf_free(&k1);
	q42_buf_free(&k2);
	q42_quin_free(&b);
	assert_int_equal(q42_quin_parse(&b, "<a:s> <a:p> \"chat\"@fr .", strlen("<a:s> <a:p> \"chat\"@fr ."), Q42_SYNTAX_QUINS, &err), Q42_OK);
	assert_false(q42_term_equal(&a.o, &b.o));
	q42_quin_free(&b);
	/* copy is deep and equal */
	assert_int_equal(q42_quin_copy(&b, &a, &err), Q42_OK);
	assert_true(q42_term_equal(&a.s, &b.s) && q42_term_equal(&a.o, &b.o));
	assert_ptr_not_equal(a.o.value, b.o.value);
	q42_quin_free(&b);
	q42_quin_free(&a);
}

static void test_write_built(void **state)
{
	q42_quin q;
	q42_buf out;
	(void)state;
	q42_quin_init(&q);
	q42_buf_init(&out);
	assert_int_equal(q42_term_set(&q.s, Q42_TERM_BLANK, "b0", 2, NULL, NULL, NULL), Q42_OK);
	assert_int_equal(q42_term_set(&q.p, Q42_TERM_IRI, "a:p", 3, NULL, NULL, NULL), Q42_OK);
	assert_int_equal(q42_term_set(&q.o, Q42_TERM_LITERAL, "5", 1, "http://www.w3.org/2001/XMLSchema#int", NULL,
				      NULL), Q42_OK);
	assert_int_equal(q42_term_set(&q.prov, Q42_TERM_IRI, "a:run", 5, NULL, NULL, NULL), Q42_OK);
	assert_true(q42_quin_write(&out, &q));
	const char *want = "_:b0 <a:p> \"5\"^^<http://www.w3.org/2001/XMLSchema#int> <urn:q42:graph:default> <a:run> .\n";
	assert_int_equal(out.len, strlen(want));
	assert_memory_equal(out.data, want, out.len);
	q42_buf_free(&out);
	q42_quin_free(&q);
}

static void test_facts(void **state)
{
	const char *doc = "<a:s> <a:p> \"v\"@en .\n"
			  "<a:s> <a:p> <a:o> <a:g1> .\n"
			  "<a:s> <a:q> <a:o> <urn:q42:graph:default> <a:prov> .\n";
	q42_facts f;
	q42_quin q;
	q42_err err = {0};
	(void)state;
	q42_facts_init(&f);
	assert_int_equal(q42_facts_add(&f, doc, strlen(doc), "doc", &err), Q42_OK);
	assert_int_equal(f.n_statements, 3);
	struct {
		const char *claim;
		bool supported;
	} cases[] = {
		{"<a:s> <a:p> \"v\"@EN .", true},          /* language tag case */
		{"<a:s> <a:p> \"v\" .", false},            /* plain is not @en */
		{"<a:s> <a:p> <a:o> .", true},             /* default-graph claim, fact in g1 */
		{"<a:s> <a:p> <a:o> <a:g1> .", true},
		{"<a:s> <a:p> <a:o> <a:g2> .", false},     /* other graph */
		{"<a:s> <a:q> <a:o> <a:g1> <a:x> .", false},
		{"<a:s> <a:q> <a:o> _:anything .", false},
		{"<a:s> <a:q> <a:o> <urn:q42:graph:default> <a:other> .", true}, /* provenance not matched */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(q42_quin_parse(&q, cases[i].claim, strlen(cases[i].claim), Q42_SYNTAX_QUINS, &err),
				 Q42_OK);
		if (q42_facts_supports(&f, &q) != cases[i].supported)
			fail_msg("case %zu: %s", i, cases[i].claim);
		q42_quin_free(&q);
	}
	/* a bad second document leaves the set as it was, and says where */
	assert_int_equal(q42_facts_add(&f, "<a:x> <a:y> <a:z> .\n<a:x> <a:y>\n", strlen("<a:x> <a:y> <a:z> .\n<a:x> <a:y>\n"), "bad.nq", &err), Q42_EFORMAT);
	assert_non_null(strstr(err.msg, "bad.nq: line 2, column 12"));
	assert_int_equal(f.n_statements, 3);
	q42_facts_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_positive),
		cmocka_unit_test(test_negative),
		cmocka_unit_test(test_parse_one),
		cmocka_unit_test(test_equal_and_key),
		cmocka_unit_test(test_write_built),
		cmocka_unit_test(test_facts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
