/* fuzz_grammar.c -- libFuzzer harness for the grammar (EBNF) compiler.
 *
 * Compiles the input as a --grammar file and, when it compiles, walks the
 * automaton: from the start state over the input's own bytes (the text a
 * grammar's author most likely accepts), and every byte from the start,
 * asking each state whether it accepts, is final and how bytes class.
 */
#include <stdint.h>
#include <stddef.h>
#include "constrain/q42_grammar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	q42_grammar *g;
	q42_err err;
	int32_t s;
	volatile uint32_t sink = 0;

	if (q42_grammar_compile(&g, (const char *)data, size, "fuzz", &err) != Q42_OK)
		return 0;
	s = q42_grammar_start(g);
	for (size_t i = 0; i < size && s >= 0; i++) {
		sink += q42_grammar_accepting(g, s) + q42_grammar_final(g, s);
		s = q42_grammar_next(g, s, data[i]);
	}
	s = q42_grammar_start(g);
	for (unsigned b = 0; b < 256; b++) {
		sink += q42_grammar_byte_class(g, (uint8_t)b);
		int32_t t = q42_grammar_next(g, s, (uint8_t)b);
		if (t >= 0)
			sink += q42_grammar_accepting(g, t);
	}
	sink += q42_grammar_n_states(g);
	(void)sink;
	q42_grammar_free(g);
	return 0;
}
