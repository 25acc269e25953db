/* q42_sieve.c -- per-state token sets and completion distances over a
 * sorted list of token texts.
 *
 * Token texts are sorted once by their byte-class sequence (bytes of one
 * class step every state alike, q42_grammar.h); walking them in order
 * with a stack of automaton states indexed by depth steps every shared
 * class prefix once (the walk of an implicit trie), and a dead prefix
 * skips every text that shares it. A state's view -- its token set and
 * the states its tokens lead to -- is built on its first visit and kept
 * for the request and every later one; the first step has its own view
 * because its token texts may differ (the stripped leading space). The
 * fewest tokens that complete a sentence from a state is a breadth-first
 * search over views, on first need, reusing every distance already known;
 * each state's view is built at most once, so all of it is bounded by the
 * automaton's size. When the tokens left are fewer than a state's farthest
 * successor needs, the step uses a narrower set, built once per state and
 * number of tokens left. Never allocates while judging a step except to
 * build a view, a distance or a narrower set on its first use.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "common/q42_buf.h"
#include "constrain/q42_sieve.h"

#define DIST_NONE Q42_SIEVE_UNBOUNDED         /* no completion */
#define DIST_UNKNOWN (Q42_SIEVE_UNBOUNDED - 1) /* not computed yet */

struct view {
	uint64_t *set;     /* allowed tokens, end-of-generation ones apart; NULL until built */
	int32_t *succ;     /* the distinct states they lead to */
	uint32_t n_succ;
	bool sized;        /* need and has_none are known */
	bool has_none;     /* a successor from which no sentence can be completed */
	uint32_t need;     /* the most tokens a successor with a completion needs */
	uint64_t **tight;  /* need + 1: [k] tokens whose successor needs <= k tokens */
};

struct q42_sieve {
	const q42_grammar *g;
	uint32_t n_vocab, words, n_states;
	uint32_t *off;     /* n_vocab + 1: token text offsets */
	uint8_t *text;
	uint8_t *eog;      /* n_vocab: end-of-generation token */
	uint64_t *eog_set;
	int32_t *order;    /* tokens with text, sorted by class sequence */
	uint32_t n_order;
	uint32_t *lcp;     /* common class prefix with the previous one in order */
	uint32_t max_len;
	int32_t *stack;    /* max_len + 1 */
	struct view *views; /* per DFA state */
	struct view first;  /* the first step's */
	uint32_t *dist;     /* per DFA state: fewest tokens to a sentence */
	int32_t *queue;     /* per DFA state: search scratch */
	uint32_t *depth, *reach, *seen;
	int32_t *scratch;   /* successors of the view being built */
	uint32_t gen_reach, gen_seen;
	uint32_t n_built;
	bool strip;        /* the first token's leading space is dropped */
	int32_t state;
	bool at_first;
	uint32_t budget, used;
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

/* Sort the token list by class sequence (then length, then id) and note
 * each one's common prefix with the previous. */
static bool sort_order(q42_sieve *s)
{
	struct keyed *k = malloc((size_t)(s->n_order ? s->n_order : 1) * sizeof *k);
	uint8_t *cls = malloc((size_t)s->off[s->n_vocab] + 1);
	if (k == NULL || cls == NULL) {
		free(k);
		free(cls);
		return false;
	}
	for (uint32_t i = 0; i < s->off[s->n_vocab]; i++)
		cls[i] = q42_grammar_byte_class(s->g, s->text[i]);
	for (uint32_t i = 0; i < s->n_order; i++) {
		int32_t id = s->order[i];
		k[i] = (struct keyed){cls + s->off[id], s->off[id + 1] - s->off[id], id};
	}
	qsort(k, s->n_order, sizeof *k, cmp_text);
	for (uint32_t i = 0; i < s->n_order; i++) {
		uint32_t l = 0;
		s->order[i] = k[i].id;
		if (i > 0)
			while (l < k[i - 1].len && l < k[i].len && k[i - 1].p[l] == k[i].p[l])
				l++;
		s->lcp[i] = l;
	}
	free(k);
	free(cls);
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
	s->n_states = q42_grammar_n_states(g);
	s->n_vocab = q42_tokenizer_n_vocab(tok);
	s->words = (s->n_vocab + 63) / 64;
	s->off = calloc((size_t)s->n_vocab + 1, sizeof *s->off);
	s->eog = calloc(s->n_vocab, 1);
	s->eog_set = calloc(s->words ? s->words : 1, sizeof *s->eog_set);
	s->order = malloc((size_t)(s->n_vocab ? s->n_vocab : 1) * sizeof *s->order);
	s->lcp = calloc(s->n_vocab ? s->n_vocab : 1, sizeof *s->lcp);
	s->views = calloc(s->n_states, sizeof *s->views);
	s->dist = malloc((size_t)s->n_states * sizeof *s->dist);
	s->queue = malloc((size_t)s->n_states * sizeof *s->queue);
	s->depth = malloc((size_t)s->n_states * sizeof *s->depth);
	s->reach = calloc(s->n_states, sizeof *s->reach);
	s->seen = calloc(s->n_states, sizeof *s->seen);
	s->scratch = malloc((size_t)s->n_states * sizeof *s->scratch);
	if (!s->off || !s->eog || !s->eog_set || !s->order || !s->lcp || !s->views || !s->dist ||
	    !s->queue || !s->depth || !s->reach || !s->seen || !s->scratch)
		goto nomem;
	for (uint32_t q = 0; q < s->n_states; q++)
		s->dist[q] = q42_grammar_accepting(g, (int32_t)q) ? 0 : DIST_UNKNOWN;
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
		if (s->eog[i])
			s->eog_set[i >> 6] |= 1ull << (i & 63);
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
	rc = find_strip(s, tok, err);
	if (rc != Q42_OK)
		goto fail;
	q42_sieve_reset(s, Q42_SIEVE_UNBOUNDED);
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

static void view_free(struct view *v)
{
	if (v->tight != NULL)
		for (uint32_t k = 0; k <= v->need; k++)
			free(v->tight[k]);
	free(v->tight);
	free(v->set);
	free(v->succ);
}

void q42_sieve_close(q42_sieve *s)
{
	if (s == NULL)
		return;
	if (s->views != NULL)
		for (uint32_t i = 0; i < s->n_states; i++)
			view_free(&s->views[i]);
	view_free(&s->first);
	free(s->views);
	free(s->dist);
	free(s->queue);
	free(s->depth);
	free(s->reach);
	free(s->seen);
	free(s->scratch);
	free(s->off);
	free(s->text);
	free(s->eog);
	free(s->eog_set);
	free(s->order);
	free(s->lcp);
	free(s->stack);
	free(s);
}

void q42_sieve_reset(q42_sieve *s, uint32_t budget)
{
	s->state = q42_grammar_start(s->g);
	s->at_first = true;
	s->budget = budget;
	s->used = 0;
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

/* The tokens allowed from state q whose end state needs at most keep more
 * tokens (every distance known; DIST_UNKNOWN: any end state), and in
 * scratch[0..*n_succ) the distinct end states. */
static uint64_t *walk_set(q42_sieve *s, int32_t q, bool first, uint32_t keep, uint32_t *n_succ)
{
	uint64_t *set = calloc(s->words ? s->words : 1, sizeof *set);
	uint32_t dead_at = UINT32_MAX; /* depth of a dead prefix of the previous text */
	uint32_t ns = 0;
	if (set == NULL)
		return NULL;
	s->gen_seen++;
	s->stack[0] = q;
	for (uint32_t k = 0; k < s->n_order; k++) {
		int32_t id = s->order[k], end;
		if (first && s->strip) {
			/* texts change under the stripped space: judge each on its own */
			end = walk(s, q, id, true);
		} else {
			uint32_t len = s->off[id + 1] - s->off[id], d = s->lcp[k];
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
			end = dead_at == UINT32_MAX ? s->stack[len] : -1;
		}
		if (end < 0 || (keep != DIST_UNKNOWN && s->dist[end] > keep))
			continue;
		set[id >> 6] |= 1ull << (id & 63);
		if (s->seen[end] != s->gen_seen) {
			s->seen[end] = s->gen_seen;
			s->scratch[ns++] = end;
		}
	}
	*n_succ = ns;
	return set;
}

static bool view_build(q42_sieve *s, struct view *v, int32_t q, bool first)
{
	uint32_t ns;
	if (v->set != NULL)
		return true;
	v->set = walk_set(s, q, first, DIST_UNKNOWN, &ns);
	if (v->set == NULL)
		return false;
	v->succ = malloc((size_t)(ns ? ns : 1) * sizeof *v->succ);
	if (v->succ == NULL) {
		free(v->set);
		v->set = NULL;
		return false;
	}
	memcpy(v->succ, s->scratch, (size_t)ns * sizeof *v->succ);
	v->n_succ = ns;
	s->n_built++;
	return true;
}

/* Fewest tokens from state q0 to a complete sentence: breadth first over
 * the views, stopping at states whose distance is already known. */
static uint32_t dist_of(q42_sieve *s, int32_t q0, bool *ok)
{
	uint32_t best = DIST_NONE, head = 0, tail = 0;
	if (s->dist[q0] != DIST_UNKNOWN)
		return s->dist[q0];
	s->gen_reach++;
	s->reach[q0] = s->gen_reach;
	s->depth[q0] = 0;
	s->queue[tail++] = q0;
	while (head < tail) {
		int32_t q = s->queue[head++];
		uint32_t dq = s->depth[q];
		struct view *v = &s->views[q];
		if (dq >= best)
			break;
		if (s->dist[q] != DIST_UNKNOWN) {
			if (s->dist[q] != DIST_NONE && dq + s->dist[q] < best)
				best = dq + s->dist[q];
			continue;
		}
		if (!view_build(s, v, q, false)) {
			*ok = false;
			return DIST_NONE;
		}
		for (uint32_t i = 0; i < v->n_succ; i++) {
			int32_t t = v->succ[i];
			if (s->reach[t] != s->gen_reach) {
				s->reach[t] = s->gen_reach;
				s->depth[t] = dq + 1;
				s->queue[tail++] = t;
			}
		}
	}
	s->dist[q0] = best;
	return best;
}

/* need and has_none of a built view. */
static bool view_size(q42_sieve *s, struct view *v)
{
	bool ok = true;
	if (v->sized)
		return true;
	v->need = 0;
	v->has_none = false;
	for (uint32_t i = 0; i < v->n_succ; i++) {
		uint32_t d = dist_of(s, v->succ[i], &ok);
		if (!ok)
			return false;
		if (d == DIST_NONE)
			v->has_none = true;
		else if (d > v->need)
			v->need = d;
	}
	v->sized = true;
	return true;
}

/* The set of a built, sized view for keep tokens left after the next. */
static const uint64_t *view_tight(q42_sieve *s, struct view *v, int32_t q, bool first, uint32_t keep)
{
	uint32_t ns;
	if (v->tight == NULL) {
		v->tight = calloc((size_t)v->need + 1, sizeof *v->tight);
		if (v->tight == NULL)
			return NULL;
	}
	if (v->tight[keep] == NULL)
		v->tight[keep] = walk_set(s, q, first, keep, &ns);
	return v->tight[keep];
}

uint32_t q42_sieve_mask(q42_sieve *s, float *logits, bool *nomem)
{
	struct view *v = s->at_first ? &s->first : &s->views[s->state];
	const bool acc = q42_grammar_accepting(s->g, s->state);
	const uint64_t *set = NULL;
	uint32_t left = s->budget, n = 0;

	*nomem = false;
	if (left != Q42_SIEVE_UNBOUNDED)
		left = s->used < left ? left - s->used : 0;
	if (left > 0) {
		if (!view_build(s, v, s->state, s->at_first) || !view_size(s, v))
			goto nomem;
		set = v->set;
		if (v->has_none || (left != Q42_SIEVE_UNBOUNDED && left - 1 < v->need)) {
			uint32_t keep = left - 1 < v->need ? left - 1 : v->need;
			set = view_tight(s, v, s->state, s->at_first, keep);
			if (set == NULL)
				goto nomem;
		}
	}
	for (uint32_t w = 0; w < s->words; w++) {
		uint64_t ok = (set ? set[w] : 0) | (acc ? s->eog_set[w] : 0), bad = ~ok;
		if (w + 1 == s->words && (s->n_vocab & 63) != 0)
			bad &= (1ull << (s->n_vocab & 63)) - 1;
		n += (uint32_t)__builtin_popcountll(ok);
		while (bad != 0) {
			logits[(size_t)w * 64 + (size_t)__builtin_ctzll(bad)] = -INFINITY;
			bad &= bad - 1;
		}
	}
	return n;
nomem:
	*nomem = true;
	return 0;
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
	if (s->used < UINT32_MAX)
		s->used++;
	return true;
}

uint32_t q42_sieve_min_tokens(q42_sieve *s, bool *nomem)
{
	uint32_t best = DIST_NONE;
	bool ok = true;

	*nomem = false;
	if (q42_grammar_accepting(s->g, s->state))
		return 0;
	if (!s->at_first) {
		best = dist_of(s, s->state, &ok);
	} else if (view_build(s, &s->first, s->state, true)) {
		for (uint32_t i = 0; ok && i < s->first.n_succ; i++) {
			uint32_t d = dist_of(s, s->first.succ[i], &ok);
			if (d != DIST_NONE && d + 1 < best)
				best = d + 1;
		}
	} else {
		ok = false;
	}
	*nomem = !ok;
	return ok ? best : DIST_NONE;
}

bool q42_sieve_complete(const q42_sieve *s) { return q42_grammar_accepting(s->g, s->state); }
bool q42_sieve_final(const q42_sieve *s) { return q42_grammar_final(s->g, s->state); }
uint32_t q42_sieve_masks_built(const q42_sieve *s) { return s->n_built; }
