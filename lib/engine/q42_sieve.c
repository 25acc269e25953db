/* q42_sieve.c -- per-state token sets over a sorted list of token texts.
 *
 * Token texts are sorted once; walking them in order with a stack of
 * automaton states indexed by depth steps every shared prefix once (the
 * walk of an implicit trie), and a dead prefix skips every text that
 * shares it. Sets are built on a state's first visit and kept for the
 * request and every later one; the first step has its own set because its
 * token texts may differ (the stripped leading space). Never allocates
 * while judging a step except to build a state's set on its first visit.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "common/q42_buf.h"
#include "engine/q42_sieve.h"

struct q42_sieve {
	const q42_grammar *g;
	uint32_t n_vocab, words;
	uint32_t *off;     /* n_vocab + 1: token text offsets */
	uint8_t *text;
	uint8_t *eog;      /* n_vocab: end-of-generation token */
	int32_t *order;    /* tokens with text, sorted by text */
	uint32_t n_order;
	uint32_t *lcp;     /* common prefix with the previous one in order */
	uint32_t max_len;
	int32_t *stack;    /* max_len + 1 */
	uint64_t **sets;   /* per DFA state, NULL until visited */
	uint64_t *first;   /* the first step's set */
	uint32_t n_built;
	bool strip;        /* the first token's leading space is dropped */
	int32_t state;
	bool at_first;
};

struct keyed {
	const uint8_t *p;
	uint32_t len;
	int32_t id;
};

static int cmp_text(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int c = memcmp(x->p, y->p, x->len < y->len ? x->len : y->len);
	if (c != 0)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* Sort the token list by text (bytes, then length, then id). */
static bool sort_order(q42_sieve *s)
{
	struct keyed *k = malloc((size_t)(s->n_order ? s->n_order : 1) * sizeof *k);
	if (k == NULL)
		return false;
	for (uint32_t i = 0; i < s->n_order; i++) {
		int32_t id = s->order[i];
		k[i] = (struct keyed){s->text + s->off[id], s->off[id + 1] - s->off[id], id};
	}
	qsort(k, s->n_order, sizeof *k, cmp_text);
	for (uint32_t i = 0; i < s->n_order; i++)
		s->order[i] = k[i].id;
	free(k);
	return true;
}

/* Does the vocabulary drop the first token's leading space? Decided on
 * one token whose text starts with a space, as the request loop does. */
static int find_strip(q42_sieve *s, const q42_tokenizer *tok, q42_err *err)
{
	for (uint32_t i = 0; i < s->n_vocab; i++) {
		if (s->off[i + 1] > s->off[i] && s->text[s->off[i]] == ' ') {
			q42_buf d;
			int32_t id = (int32_t)i;
			int rc;
			q42_buf_init(&d);
			rc = q42_tokenizer_decode(tok, &id, 1, 0, &d, err);
			s->strip = rc == Q42_OK && (d.len == 0 || d.data[0] != ' ');
			q42_buf_free(&d);
			return rc;
		}
	}
	return Q42_OK;
}

int q42_sieve_open(q42_sieve **out, const q42_grammar *g, const q42_tokenizer *tok, q42_err *err)
{
	q42_sieve *s;
	q42_buf all, piece;
	int rc = Q42_OK;

	*out = NULL;
	q42_buf_init(&all);
	q42_buf_init(&piece);
	s = calloc(1, sizeof *s);
	if (s == NULL)
		return q42_err_set(err, Q42_ENOMEM, "sieve: out of memory");
	s->g = g;
	s->n_vocab = q42_tokenizer_n_vocab(tok);
	s->words = (s->n_vocab + 63) / 64;
	s->off = calloc((size_t)s->n_vocab + 1, sizeof *s->off);
	s->eog = calloc(s->n_vocab, 1);
	s->order = malloc((size_t)s->n_vocab * sizeof *s->order);
	s->lcp = calloc(s->n_vocab, sizeof *s->lcp);
	s->sets = calloc(q42_grammar_n_states(g), sizeof *s->sets);
	if (!s->off || !s->eog || !s->order || !s->lcp || !s->sets)
		goto nomem;
	for (uint32_t i = 0; i < s->n_vocab; i++) {
		q42_buf_reset(&piece);
		rc = q42_tokenizer_piece(tok, (int32_t)i, 0, &piece, err);
		if (rc != Q42_OK)
			goto fail;
		s->off[i] = (uint32_t)all.len;
		q42_buf_append(&all, piece.data, piece.len);
		if (piece.len > s->max_len)
			s->max_len = (uint32_t)piece.len;
		s->eog[i] = q42_tokenizer_is_eog(tok, (int32_t)i);
		if (piece.len > 0 && !s->eog[i])
			s->order[s->n_order++] = (int32_t)i;
		if (all.len > UINT32_MAX / 2) {
			rc = q42_err_set(err, Q42_EARG, "sieve: token texts too large");
			goto fail;
		}
	}
	s->off[s->n_vocab] = (uint32_t)all.len;
	if (all.failed || piece.failed)
		goto nomem;
	s->text = malloc(all.len + 1);
	s->stack = malloc(((size_t)s->max_len + 1) * sizeof *s->stack);
	if (!s->text || !s->stack)
		goto nomem;
	if (all.len)
		memcpy(s->text, all.data, all.len);
	if (!sort_order(s))
		goto nomem;
	for (uint32_t k = 1; k < s->n_order; k++) {
		int32_t a = s->order[k - 1], b = s->order[k];
		uint32_t la = s->off[a + 1] - s->off[a], lb = s->off[b + 1] - s->off[b], l = 0;
		while (l < la && l < lb && s->text[s->off[a] + l] == s->text[s->off[b] + l])
			l++;
		s->lcp[k] = l;
	}
	rc = find_strip(s, tok, err);
	if (rc != Q42_OK)
		goto fail;
	q42_sieve_reset(s);
	q42_buf_free(&all);
	q42_buf_free(&piece);
	*out = s;
	return Q42_OK;
nomem:
	rc = q42_err_set(err, Q42_ENOMEM, "sieve: out of memory");
fail:
	q42_buf_free(&all);
	q42_buf_free(&piece);
	q42_sieve_close(s);
	return rc;
}

void q42_sieve_close(q42_sieve *s)
{
	if (s == NULL)
		return;
	if (s->sets != NULL)
		for (uint32_t i = 0; i < q42_grammar_n_states(s->g); i++)
			free(s->sets[i]);
	free(s->sets);
	free(s->first);
	free(s->off);
	free(s->text);
	free(s->eog);
	free(s->order);
	free(s->lcp);
	free(s->stack);
	free(s);
}

void q42_sieve_reset(q42_sieve *s)
{
	s->state = q42_grammar_start(s->g);
	s->at_first = true;
}

/* The state after token id's text from state q (-1: dead). */
static int32_t walk(const q42_sieve *s, int32_t q, int32_t id, bool first)
{
	uint32_t a = s->off[id], b = s->off[id + 1];
	if (first && s->strip && b > a && s->text[a] == ' ')
		a++;
	if (a == b)
		return -1;
	for (uint32_t i = a; i < b && q >= 0; i++)
		q = q42_grammar_next(s->g, q, s->text[i]);
	return q;
}

static uint64_t *build_set(q42_sieve *s, int32_t q, bool first)
{
	uint64_t *set = calloc(s->words, sizeof *set);
	uint32_t dead_at = UINT32_MAX; /* depth of a dead prefix of the previous text */
	if (set == NULL)
		return NULL;
	if (first && s->strip) {
		/* texts change under the stripped space: judge each on its own */
		for (uint32_t k = 0; k < s->n_order; k++)
			if (walk(s, q, s->order[k], true) >= 0)
				set[s->order[k] >> 6] |= 1ull << (s->order[k] & 63);
	} else {
		s->stack[0] = q;
		for (uint32_t k = 0; k < s->n_order; k++) {
			int32_t id = s->order[k];
			uint32_t len = s->off[id + 1] - s->off[id], d = k ? s->lcp[k] : 0;
			const uint8_t *t = s->text + s->off[id];
			if (dead_at != UINT32_MAX && d > dead_at)
				continue; /* shares a dead prefix */
			dead_at = UINT32_MAX;
			for (; d < len; d++) {
				int32_t nq = q42_grammar_next(s->g, s->stack[d], t[d]);
				if (nq < 0) {
					dead_at = d;
					break;
				}
				s->stack[d + 1] = nq;
			}
			if (dead_at == UINT32_MAX)
				set[id >> 6] |= 1ull << (id & 63);
		}
	}
	s->n_built++;
	return set;
}

uint32_t q42_sieve_mask(q42_sieve *s, float *logits, bool *nomem)
{
	uint64_t *set;
	uint32_t n = 0;
	const bool acc = q42_grammar_accepting(s->g, s->state);

	*nomem = false;
	if (s->at_first) {
		if (s->first == NULL)
			s->first = build_set(s, s->state, true);
		set = s->first;
	} else {
		if (s->sets[s->state] == NULL)
			s->sets[s->state] = build_set(s, s->state, false);
		set = s->sets[s->state];
	}
	if (set == NULL) {
		*nomem = true;
		return 0;
	}
	for (uint32_t i = 0; i < s->n_vocab; i++) {
		bool ok = s->eog[i] ? acc : ((set[i >> 6] >> (i & 63)) & 1) != 0;
		if (ok)
			n++;
		else
			logits[i] = -INFINITY;
	}
	return n;
}

bool q42_sieve_accept(q42_sieve *s, int32_t id)
{
	int32_t q;
	if (id < 0 || (uint32_t)id >= s->n_vocab)
		return false;
	if (s->eog[id])
		return q42_grammar_accepting(s->g, s->state);
	q = walk(s, s->state, id, s->at_first);
	if (q < 0)
		return false;
	s->state = q;
	s->at_first = false;
	return true;
}

bool q42_sieve_complete(const q42_sieve *s) { return q42_grammar_accepting(s->g, s->state); }
bool q42_sieve_final(const q42_sieve *s) { return q42_grammar_final(s->g, s->state); }
uint32_t q42_sieve_masks_built(const q42_sieve *s) { return s->n_built; }
