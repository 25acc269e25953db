/* fuzz_quin.c -- libFuzzer harness for the quin reader and writer.
 *
 * Reads the input as N-Triples, N-Quads and quins; every statement read is
 * written canonically, read back, and must give the same canonical text
 * (the round trip q42-policy(5), QUINS, promises). A difference aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "governance/q42_facts.h"
#include "formats/q42_quin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int syn = Q42_SYNTAX_NTRIPLES; syn <= Q42_SYNTAX_QUINS; syn++) {
		q42_quin_reader r;
		q42_quin q, q2;
		q42_err err;
		bool eof = false;
		q42_quin_reader_init(&r, data, size, (enum q42_quin_syntax)syn);
		while (q42_quin_reader_next(&r, &q, &eof, &err) == Q42_OK && !eof) {
			q42_buf a, b;
			q42_buf_init(&a);
			q42_buf_init(&b);
			if (!q42_quin_write(&a, &q))
				abort();
			if (q42_quin_parse(&q2, (const char *)a.data, a.len, Q42_SYNTAX_QUINS, &err) != Q42_OK)
				abort();
			if (!q42_quin_write(&b, &q2) || a.len != b.len || memcmp(a.data, b.data, a.len) != 0)
				abort();
			if (!q42_term_equal(&q.o, &q2.o) || !q42_term_equal(&q.g, &q2.g))
				abort();
			q42_quin_free(&q2);
			q42_quin_free(&q);
			q42_buf_free(&a);
			q42_buf_free(&b);
		}
	}
	q42_facts f;
	q42_err err;
	q42_facts_init(&f);
	(void)q42_facts_add(&f, data, size, "fuzz", &err);
	q42_facts_free(&f);
	return 0;
}
