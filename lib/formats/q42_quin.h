/* q42_quin.h -- quins: subject, predicate, object, graph, provenance.
 *
 * The unit of meaning shared by q42grd (grounding, shapes) and q42wal
 * (what a volume commits). The text form is N-Quads with an optional fifth
 * term, the provenance; plain N-Triples and N-Quads are the same syntax
 * with fewer terms, so every reader of facts accepts them. The grammar,
 * the canonical form the writer produces and the limits are specified in
 * q42-policy(5), section QUINS. This module parses and serializes only; it
 * never resolves IRIs, never fetches anything and never prints.
 */
#ifndef Q42_QUIN_H
#define Q42_QUIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/q42_buf.h"
#include "common/q42_err.h"

/* A five-term statement whose graph is the default graph writes this IRI
 * in the graph position (N-Quads has no syntax for "no graph" before a
 * further term). The reader maps it back to Q42_TERM_NONE wherever it
 * appears as a graph, so the two spellings are one quin. */
#define Q42_QUIN_DEFAULT_GRAPH "urn:q42:graph:default"

/* Literals typed xsd:string are stored and written without a datatype
 * (RDF 1.1: "abc" and "abc"^^xsd:string are the same term). */
#define Q42_XSD_STRING "http://www.w3.org/2001/XMLSchema#string"

/* Cap on one term (decoded bytes), so hostile input cannot make one huge. */
#define Q42_QUIN_MAX_TERM_BYTES (1u << 20)

enum q42_term_kind {
	Q42_TERM_NONE = 0,    /* absent (no graph, no provenance) */
	Q42_TERM_IRI = 1,     /* absolute IRI, UCHAR escapes decoded */
	Q42_TERM_BLANK = 2,   /* blank node; value is the label without "_:" */
	Q42_TERM_LITERAL = 3, /* lexical form decoded; may contain U+0000 */
};

/* One RDF term. Strings are NUL-terminated copies owned by the term;
 * `len` is the byte length of value (a literal may contain NUL bytes). */
typedef struct q42_term {
	enum q42_term_kind kind;
	char *value;
	size_t len;
	char *datatype; /* literal only: datatype IRI, NULL for a plain string */
	char *lang;     /* literal only: language tag without '@', as written, or NULL */
} q42_term;

typedef struct q42_quin {
	q42_term s; /* IRI or blank */
	q42_term p; /* IRI */
	q42_term o; /* IRI, blank or literal */
	q42_term g; /* IRI, blank or NONE (default graph) */
	q42_term prov; /* IRI, blank, literal or NONE */
} q42_quin;

/* Which statements a reader accepts. */
enum q42_quin_syntax {
	Q42_SYNTAX_NTRIPLES = 0, /* three terms */
	Q42_SYNTAX_NQUADS = 1,   /* three or four terms */
	Q42_SYNTAX_QUINS = 2,    /* three, four or five terms */
};

Q42_API void q42_term_init(q42_term *t);
Q42_API void q42_term_free(q42_term *t);
/* Deep copy; dst is overwritten (free it first if it owned anything). */
Q42_API int q42_term_copy(q42_term *dst, const q42_term *src, q42_err *err);
/* Fill t with a copy of the given strings (value of length len; datatype
 * and lang may be NULL). Validates nothing beyond kind and allocation;
 * use for terms built by code, not for text read from outside. */
Q42_API int q42_term_set(q42_term *t, enum q42_term_kind kind, const char *value, size_t len,
			 const char *datatype, const char *lang, q42_err *err);
/* RDF term equality; language tags compare case-insensitively. */
Q42_API bool q42_term_equal(const q42_term *a, const q42_term *b);

Q42_API void q42_quin_init(q42_quin *q);
Q42_API void q42_quin_free(q42_quin *q);
Q42_API int q42_quin_copy(q42_quin *dst, const q42_quin *src, q42_err *err);

/* Streaming reader over a byte buffer holding a whole document (facts
 * file mapping, one record field). The buffer must outlive the reader.
 * Blank lines and '#' comments are skipped; line ends are LF, CR or CRLF.
 * On error, err_line and err_col (1-based; the column counts Unicode
 * characters from the line start) locate the offending character and the
 * message starts with "line L, column C: ". */
typedef struct q42_quin_reader {
	const uint8_t *data;
	size_t size;
	size_t pos;
	uint64_t line;       /* current line, 1-based */
	size_t line_start;   /* offset of the current line's first byte */
	enum q42_quin_syntax syntax;
	uint64_t err_line;
	uint64_t err_col;
} q42_quin_reader;

Q42_API void q42_quin_reader_init(q42_quin_reader *r, const void *data, size_t size,
				  enum q42_quin_syntax syntax);
/* Read the next statement into q (initialised or freed by the caller;
 * on success q owns new terms, on error q is left empty). *eof is set
 * when no statement remained, and q is then left empty. */
Q42_API int q42_quin_reader_next(q42_quin_reader *r, q42_quin *q, bool *eof, q42_err *err);

/* Parse exactly one statement from s[0..n): optional whitespace, comments
 * and line ends around it, nothing else. */
Q42_API int q42_quin_parse(q42_quin *q, const char *s, size_t n, enum q42_quin_syntax syntax,
			   q42_err *err);

/* Append the canonical text of t (N-Triples canonical form: uppercase
 * UCHAR hex, ECHAR only for \b \t \n \f \r \" \\, UCHAR for other control
 * characters; nothing for NONE). */
Q42_API bool q42_term_write(q42_buf *out, const q42_term *t);
/* Append one canonical statement: terms separated by one space, then
 * " .\n". A quin with provenance and no graph writes the default-graph
 * IRI in the graph position. */
Q42_API bool q42_quin_write(q42_buf *out, const q42_quin *q);
/* Append the key that identifies the statement for matching: the canonical
 * subject, predicate and object, and the graph when with_graph is true,
 * with the language tag lower-cased; never the provenance. */
Q42_API bool q42_quin_key(q42_buf *out, const q42_quin *q, bool with_graph);

#endif
