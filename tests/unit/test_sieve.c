/* test_sieve.c -- the grammar dialect (q42run(1), GRAMMARS) and the sieve
 * over a real vocabulary.
 *
 * Expected acceptance is read off the grammars by hand; the quin cases are
 * examples in the style of the W3C RDF 1.1 N-Quads specification with a
 * fifth term, and every sentence the quin grammar accepts must also be
 * accepted by the independent quin reader (lib/governance/q42_quin.c).
 * The token walk and the completion distances use stories260K's
 * vocabulary ($Q42_TEST_MODELS; skipped when absent, a failure under
 * CI=true); expected distances are counted by hand from its token list.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "constrain/q42_grammar.h"
#include "engine/q42_mount.h"
#include "constrain/q42_sieve.h"
#include "formats/q42_quin.h"

/* 1: accepting, 0: a valid prefix, -1: dead */
static int run_text(const q42_grammar *g, const char *s)
{
	int32_t q = q42_grammar_start(g);
	for (size_t i = 0; s[i] && q >= 0; i++)
		q = q42_grammar_next(g, q, (uint8_t)s[i]);
	if (q < 0)
		return -1;
	return q42_grammar_accepting(g, q) ? 1 : 0;
}

static q42_grammar *compile(const char *src)
{
	q42_grammar *g = NULL;
	q42_err err = {0};
	if (q42_grammar_compile(&g, src, strlen(src), "t", &err) != Q42_OK)
		fail_msg("compile failed: %s", err.msg);
	return g;
}

static void test_dialect(void **state)
{
	(void)state;
	q42_grammar *g = compile("# a comment\n"
				 "root ::= \"a\" (\"b\" | \"cd\")* tail?\n"
				 "tail ::= [x-z] | '!'+  # another\n");
	assert_int_equal(run_text(g, "a"), 1);
	assert_int_equal(run_text(g, "ab"), 1);
	assert_int_equal(run_text(g, "acdbcd"), 1);
	assert_int_equal(run_text(g, "abz"), 1);
	assert_int_equal(run_text(g, "a!!!"), 1);
	assert_int_equal(run_text(g, "ac"), 0);
	assert_int_equal(run_text(g, ""), 0);
	assert_int_equal(run_text(g, "b"), -1);
	assert_int_equal(run_text(g, "ad"), -1);
	assert_int_equal(run_text(g, "azb"), -1);
	assert_int_equal(run_text(g, "a!x"), -1);
	q42_grammar_free(g);

	/* classes: negation, escapes, ranges; final state */
	g = compile("r ::= [^\\x00-\\x1f\"]+ \"\\\"\" [\\-\\]]");
	assert_int_equal(run_text(g, "ab c\"-"), 1);
	assert_int_equal(run_text(g, "x\"]"), 1);
	assert_int_equal(run_text(g, "\n"), -1);
	{
		int32_t q = q42_grammar_start(g);
		const char *t = "x\"]";
		for (size_t i = 0; t[i]; i++)
			q = q42_grammar_next(g, q, (uint8_t)t[i]);
		assert_true(q42_grammar_final(g, q));
	}
	q42_grammar_free(g);

	/* a state with no way to a complete sentence is dead */
	g = compile("r ::= \"a\" \"b\" | \"a\" [^\\x00-\\xff]* \"c\"");
	assert_int_equal(run_text(g, "a"), 0);
	assert_int_equal(run_text(g, "ac"), 1);
	q42_grammar_free(g);
}

/* Liveness (a complete sentence still reachable) spreads backwards over
 * the transitions: through a chain of 8,101 states, through a loop back to
 * a lower state, and not into a loop that only leads to nothing. */
static void test_liveness(void **state)
{
	enum { N = 8100 };
	char *src = malloc(16 + 4 * N), *text = malloc(N + 1);
	size_t n = (size_t)sprintf(src, "r ::= \"");
	(void)state;
	assert_non_null(src);
	assert_non_null(text);
	for (int i = 0; i < N; i++) {
		text[i] = (char)(i % 255 + 1);
		n += (size_t)sprintf(src + n, "\\x%02x", (unsigned)(uint8_t)text[i]);
	}
	text[N] = 0;
	strcpy(src + n, "\"");
	q42_grammar *g = compile(src);
	assert_int_equal(run_text(g, text), 1);
	text[N - 1] = 0;
	assert_int_equal(run_text(g, text), 0);
	text[3] = 'x';
	assert_int_equal(run_text(g, text), -1);
	q42_grammar_free(g);
	free(src);
	free(text);

	g = compile("r ::= (\"a\" | \"b\" \"c\")* \"z\" | \"d\" (\"x\" \"y\")* [^\\x00-\\xff] \"e\"");
	assert_int_equal(run_text(g, "bcb"), 0);
	assert_int_equal(run_text(g, "bcbcaz"), 1);
	assert_int_equal(run_text(g, "d"), -1);
	assert_int_equal(run_text(g, "dxy"), -1);
	q42_grammar_free(g);
}

static void expect_error(const char *src, const char *what)
{
	q42_grammar *g = NULL;
	q42_err err = {0};
	assert_int_equal(q42_grammar_compile(&g, src, strlen(src), "t", &err), Q42_EARG);
	assert_null(g);
	if (strstr(err.msg, what) == NULL)
		fail_msg("'%s': message '%s' lacks '%s'", src, err.msg, what);
}

static void test_dialect_errors(void **state)
{
	(void)state;
	expect_error("", "no rules");
	expect_error("r ::= x", "t:1:7: undefined rule 'x'");
	expect_error("r ::= \"a\" r?", "refers to itself");
	expect_error("r ::= s\ns ::= \"b\" r", "t:2:11: rule 'r' refers to itself");
	expect_error("r ::= \"abc", "unterminated");
	expect_error("r ::= []", "empty class");
	expect_error("r ::= [z-a]", "backwards");
	expect_error("r ::= \"a\" |", "empty alternatives");
	expect_error("r ::= (\"a\"", "expected ')'");
	expect_error("r ::= \"a\"\nr ::= \"b\"", "t:2:1: rule defined twice");
	expect_error("r ::= \"\\q\"", "unknown escape");
	expect_error("r ::= \"\"", "empty literal");
	expect_error("r ::= [^\\x00-\\xff]", "matches no text");
	expect_error("\"a\"", "expected 'NAME ::='");
	/* the automaton's bounds: the 14th byte from the end is 'a' needs
	 * 2^14 states; over sixteen overlapping classes, the construction's
	 * cost passes its bound first (a hostile grammar, refused quickly) */
	expect_error("r ::= [ab]* \"a\" [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab]",
		     "needs more than 8192 states");
	char big[2048], cls[512];
	int n = 0;
	for (int i = 0; i < 16; i++)
		n += snprintf(cls + n, sizeof cls - (size_t)n, "%s[%c-%c]", i ? " | " : "", 'a' + i, 'a' + i + 9);
	n = snprintf(big, sizeof big, "r ::= (%s)* \"a\"", cls);
	for (int i = 0; i < 12; i++)
		n += snprintf(big + n, sizeof big - (size_t)n, " (%s)", cls);
	expect_error(big, "the grammar is too complex");
}

static void test_quin_grammar(void **state)
{
	(void)state;
	const char *src = q42_grammar_quin_source();
	q42_grammar *g = compile(src);
	static const char *good[] = {
		("<http://example.org/s> <http://example.org/p> <http://example.org/o> "
		 "<http://example.org/g> <http://example.org/prov> ."),
		"_:b0 <http://xmlns.com/foaf/0.1/name> \"Alice\"@en-GB _:g1 \"from a model\" .",
		"<urn:a> <urn:p> \"3\"^^<http://www.w3.org/2001/XMLSchema#integer> <urn:g> <urn:w>.",
		"<urn:a>\t<urn:p> \"line\\nbreak \\u00E9\" <urn:g>   _:x.y .",
	};
	static const char *bad[] = {
		"<urn:a> <urn:p> <urn:o> .",               /* three terms */
		"<urn:a> <urn:p> <urn:o> <urn:g> .",       /* four terms: no provenance */
		"<a> <urn:p> <urn:o> <urn:g> <urn:w> .",   /* relative IRI */
		"\"s\" <urn:p> <urn:o> <urn:g> <urn:w> .", /* literal subject */
		"<urn:a> <urn:p> <urn:o> <urn:g> <urn:w>", /* no dot */
	};
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		q42_quin q;
		q42_err err = {0};
		if (run_text(g, good[i]) != 1)
			fail_msg("quin grammar refuses: %s", good[i]);
		q42_quin_init(&q);
		if (q42_quin_parse(&q, good[i], strlen(good[i]), Q42_SYNTAX_QUINS, &err) != Q42_OK)
			fail_msg("the quin reader refuses what the grammar accepts: %s (%s)", good[i], err.msg);
		assert_int_not_equal(q.prov.kind, Q42_TERM_NONE);
		q42_quin_free(&q);
	}
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		if (run_text(g, bad[i]) == 1)
			fail_msg("quin grammar accepts: %s", bad[i]);
	q42_grammar_free(g);
}

/* The sieve over stories260K's vocabulary: the tokens of a sentence of the
 * grammar are allowed one by one, others are masked, EOS only at the end. */
static void test_sieve_walk(void **state)
{
	char path[4096];
	const char *d = getenv("Q42_TEST_MODELS");
	q42_mount *m = NULL;
	q42_err err = {0};
	q42_grammar *g;
	q42_sieve *sv = NULL;
	q42_tokens t = {0};
	float *l;
	uint32_t nv;
	bool oom;
	(void)state;
	snprintf(path, sizeof path, "%s/stories260K.gguf", d && *d ? d : "../shared/models");
	if (access(path, R_OK) != 0) {
		if (getenv("CI") && strcmp(getenv("CI"), "true") == 0)
			fail_msg("missing %s under CI=true", path);
		skip();
	}
	assert_int_equal(q42_mount_open(&m, path, Q42_MOUNT_VOCAB_ONLY, &err), Q42_OK);
	const q42_tokenizer *tok = q42_mount_tokenizer(m);
	nv = q42_tokenizer_n_vocab(tok);
	g = compile("r ::= \"Lily\" (\" \" [a-z]+)+ \".\"");
	assert_int_equal(q42_sieve_open(&sv, g, tok, &err), Q42_OK);
	l = malloc(nv * sizeof *l);
	/* " Lily" (317) is allowed first: the output drops its leading space */
	assert_int_equal(q42_tokenizer_encode(tok, "Lily was happy.", 15, 0, &t, &err), Q42_OK);
	assert_int_equal(t.ids[0], 317);
	for (size_t i = 0; i < t.n; i++) {
		uint32_t allowed;
		for (uint32_t k = 0; k < nv; k++)
			l[k] = 0.0f;
		allowed = q42_sieve_mask(sv, l, &oom);
		assert_false(oom);
		assert_true(allowed > 0 && allowed < nv);
		assert_true(isfinite(l[t.ids[i]]));
		assert_false(isfinite(l[q42_tokenizer_eos(tok)]));
		assert_false(q42_sieve_complete(sv));
		assert_true(q42_sieve_accept(sv, t.ids[i]));
	}
	assert_true(q42_sieve_complete(sv));
	assert_true(q42_sieve_final(sv));
	/* start over: a token that cannot begin the sentence is masked */
	q42_sieve_reset(sv, Q42_SIEVE_UNBOUNDED);
	for (uint32_t k = 0; k < nv; k++)
		l[k] = 0.0f;
	q42_sieve_mask(sv, l, &oom);
	assert_false(isfinite(l[265])); /* " the" */
	assert_false(q42_sieve_accept(sv, 265));
	assert_true(q42_sieve_masks_built(sv) >= 2);
	free(l);
	q42_tokens_free(&t);
	q42_sieve_close(sv);
	q42_grammar_free(g);
	q42_mount_close(m);
}

/* Open stories260K's vocabulary, or skip (fail under CI=true). */
static q42_mount *open_vocab(void)
{
	char path[4096];
	const char *d = getenv("Q42_TEST_MODELS");
	q42_mount *m = NULL;
	q42_err err = {0};
	snprintf(path, sizeof path, "%s/stories260K.gguf", d && *d ? d : "../shared/models");
	if (access(path, R_OK) != 0) {
		if (getenv("CI") && strcmp(getenv("CI"), "true") == 0)
			fail_msg("missing %s under CI=true", path);
		return NULL;
	}
	assert_int_equal(q42_mount_open(&m, path, Q42_MOUNT_VOCAB_ONLY, &err), Q42_OK);
	return m;
}

static uint32_t mask_zero(q42_sieve *sv, float *l, uint32_t nv)
{
	bool oom;
	uint32_t n;
	for (uint32_t k = 0; k < nv; k++)
		l[k] = 0.0f;
	n = q42_sieve_mask(sv, l, &oom);
	assert_false(oom);
	return n;
}

static uint32_t min_tokens(q42_sieve *sv)
{
	bool oom;
	uint32_t n = q42_sieve_min_tokens(sv, &oom);
	assert_false(oom);
	return n;
}

/* Fewest tokens to a sentence, and the budget, on grammars whose answer
 * follows from stories260K's vocabulary (listed with gguf-py: the only
 * tokens whose text holds one of < > _ : " . are 313 ' "', 426 '.',
 * 436 '"', 467 ':', 504 '<', 505 '>' and the byte tokens <0xNN>, ids
 * 3..258, one byte each; " Lily" is 317). */
static void test_sieve_distance(void **state)
{
	q42_mount *m = open_vocab();
	q42_err err = {0};
	q42_grammar *g;
	q42_sieve *sv = NULL;
	float *l;
	uint32_t nv;
	(void)state;
	if (m == NULL)
		skip();
	const q42_tokenizer *tok = q42_mount_tokenizer(m);
	nv = q42_tokenizer_n_vocab(tok);
	l = malloc(nv * sizeof *l);

	/* byte 0x01 is only in its byte token (id 4): three bytes, three tokens */
	g = compile("r ::= \"\\x01\\x01\\x01\"");
	assert_int_equal(q42_sieve_open(&sv, g, tok, &err), Q42_OK);
	assert_int_equal(min_tokens(sv), 3);
	q42_sieve_reset(sv, 2);
	assert_int_equal(mask_zero(sv, l, nv), 0); /* no completion fits */
	q42_sieve_reset(sv, 3);
	assert_int_equal(mask_zero(sv, l, nv), 1);
	assert_true(isfinite(l[4]));
	assert_true(q42_sieve_accept(sv, 4));
	assert_int_equal(min_tokens(sv), 2);
	assert_int_equal(mask_zero(sv, l, nv), 1);
	assert_true(q42_sieve_accept(sv, 4));
	assert_true(q42_sieve_accept(sv, 4));
	assert_int_equal(min_tokens(sv), 0);
	/* complete, no token left: only end of generation */
	assert_int_equal(mask_zero(sv, l, nv), 1);
	assert_true(isfinite(l[q42_tokenizer_eos(tok)]));
	q42_sieve_close(sv);
	q42_grammar_free(g);

	/* the long way (four byte tokens) is closed when one token is left */
	g = compile("r ::= \"\\x01\\x01\\x01\\x01\" | \"Lily\"");
	assert_int_equal(q42_sieve_open(&sv, g, tok, &err), Q42_OK);
	assert_int_equal(min_tokens(sv), 1);
	q42_sieve_reset(sv, 1);
	mask_zero(sv, l, nv);
	assert_true(isfinite(l[317]));
	assert_false(isfinite(l[4]));
	q42_sieve_reset(sv, 4);
	mask_zero(sv, l, nv);
	assert_true(isfinite(l[317]));
	assert_true(isfinite(l[4]));
	assert_true(q42_sieve_accept(sv, 4));
	assert_int_equal(min_tokens(sv), 3);
	q42_sieve_close(sv);
	q42_grammar_free(g);

	/* a quin: "_" ":" name (3), " " (1), "<" scheme ":" ">" (4), ' "' '"'
	 * for a literal with its space (2), " " "_" ":" name (4), ' "' '"' (2),
	 * "." (1): 17; nothing shorter, since every other piece of a term is a
	 * token of its own */
	g = compile(q42_grammar_quin_source());
	assert_int_equal(q42_sieve_open(&sv, g, tok, &err), Q42_OK);
	assert_int_equal(min_tokens(sv), 17);
	q42_sieve_reset(sv, 16);
	assert_int_equal(mask_zero(sv, l, nv), 0);
	/* with exactly 17 tokens, any choice among the allowed ones completes:
	 * take the lowest id, then the highest */
	for (int pass = 0; pass < 2; pass++) {
		uint32_t n = 0;
		q42_sieve_reset(sv, 17);
		while (!q42_sieve_complete(sv)) {
			int32_t pick = -1;
			assert_true(n < 17);
			assert_true(mask_zero(sv, l, nv) > 0);
			for (uint32_t k = 0; k < nv; k++)
				if (isfinite(l[k]) && (pick < 0 || pass == 1))
					pick = (int32_t)k;
			assert_true(q42_sieve_accept(sv, pick));
			n++;
			assert_true(min_tokens(sv) <= 17 - n);
		}
		assert_int_equal(n, 17);
	}
	q42_sieve_close(sv);
	q42_grammar_free(g);
	free(l);
	q42_mount_close(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dialect),
		cmocka_unit_test(test_dialect_errors),
		cmocka_unit_test(test_liveness),
		cmocka_unit_test(test_quin_grammar),
		cmocka_unit_test(test_sieve_walk),
		cmocka_unit_test(test_sieve_distance),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
