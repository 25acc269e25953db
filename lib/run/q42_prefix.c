/* q42_prefix.c -- prefix reuse (q42_prefix.h): the live state, a cache
 * of copies bounded in bytes, and the choice of the longest reusable
 * start among them.
 *
 * A state is a token list and the cache bytes of its positions; its
 * reusable length is always the settled part of a cold run (q42_prefix_settled).
 * Copies are made only when a request is about to overwrite live
 * positions no copy holds, so a run of requests over one prefix copies
 * nothing. Never prints.
 */
#include <stdlib.h>
#include <string.h>
#include "run/q42_prefix.h"

struct entry {
	int32_t *ids;
	uint32_t n;       /* reusable positions: a prompt's settled ones */
	uint32_t n_stored; /* positions in state (n or more) */
	uint8_t *state;   /* n_stored * pos_bytes */
	uint64_t bytes;
	uint64_t used;    /* clock of the last use */
	bool tiled;       /* flash attention: its prompt's last pass took the tiled form */
};

struct q42_prefix {
	q42_engine *e;
	uint64_t cap, pos_bytes;
	uint32_t nb;
	int32_t *live;    /* the live state's ids, n_ctx of room */
	uint32_t n_live;  /* its reusable positions */
	bool live_tiled;  /* flash attention: its prompt's last pass took the tiled form */
	struct entry *ent;
	uint32_t n_ent, cap_ent;
	uint64_t clock;
	q42_prefix_stats st;
};

int q42_prefix_open(q42_prefix **out, q42_engine *e, uint64_t cache_bytes, q42_err *err)
{
	q42_prefix *p;
	uint64_t b;
	int rc;

	*out = NULL;
	rc = q42_engine_state_bytes(e, 1, &b, err);
	if (rc != Q42_OK)
		return rc;
	p = calloc(1, sizeof *p);
	if (p == NULL || (p->live = malloc((size_t)q42_engine_n_ctx(e) * sizeof *p->live)) == NULL) {
		free(p);
		return q42_err_set(err, Q42_ENOMEM, "prefix reuse: out of memory");
	}
	p->e = e;
	p->cap = cache_bytes;
	p->pos_bytes = b;
	p->nb = q42_engine_n_batch(e);
	*out = p;
	return Q42_OK;
}

static void entry_drop(q42_prefix *p, uint32_t i)
{
	free(p->ent[i].ids);
	free(p->ent[i].state);
	p->st.bytes -= p->ent[i].bytes;
	p->ent[i] = p->ent[--p->n_ent];
}

void q42_prefix_close(q42_prefix *p)
{
	if (p == NULL)
		return;
	while (p->n_ent > 0)
		entry_drop(p, p->n_ent - 1);
	free(p->ent);
	free(p->live);
	free(p);
}

static uint32_t common(const int32_t *a, uint32_t na, const int32_t *b, uint32_t nb)
{
	uint32_t i = 0;
	while (i < na && i < nb && a[i] == b[i])
		i++;
	return i;
}

/* A token's rounding depends on its pass in two ways only (q42_prefix.h):
 * whether the pass has one token, and whether the token lies in a whole
 * group of this many from the pass's start. */
#define GRAIN 4u

uint32_t q42_prefix_settled(uint32_t n_batch, uint32_t n)
{
	const uint32_t s = n / n_batch * n_batch;
	return s + (n - s) / GRAIN * GRAIN;
}

/* Where a prompt x of nx tokens may start from a state holding the
 * settled positions ids[0..n): within their common tokens and below x's
 * last, at a pass boundary of x's cold run or whole groups of GRAIN past one,
 * such that the pass x then evaluates first (up to the cold run's next
 * boundary) has one token only if the cold run's pass has, and, under
 * flash attention, a tile's worth or more if the cold run's pass has. */
static uint32_t reusable(const q42_prefix *p, const int32_t *ids, uint32_t n, bool tiled, const int32_t *x,
			 uint32_t nx)
{
	const uint32_t c = common(ids, n, x, nx - 1), s = c / p->nb * p->nb;
	const uint32_t end = nx - s < p->nb ? nx : s + p->nb;
	const uint32_t tile = q42_engine_flash_tile(p->e);
	uint32_t from = s + (c - s) / GRAIN * GRAIN;
	/* flash attention's form follows the pass length: the positions
	 * reused past the boundary took the form x's cold pass takes, and
	 * the warm pass keeps the cold one's side of the tile */
	if (tile != 0 && from > s && tiled != (end - s >= tile))
		from = s;
	if (tile != 0 && end - s >= tile && end - from < tile)
		from = s + (end - tile - s) / GRAIN * GRAIN;
	if (from > s && end - from == 1)
		from -= GRAIN;
	return from;
}

/* Evict the least recently used copies, never the one at *pin (its
 * index followed as others go; pin NULL: none), until need more bytes
 * fit; false when they cannot. */
static bool make_room(q42_prefix *p, uint64_t need, uint32_t *pin)
{
	if (need > p->cap)
		return false;
	while (p->st.bytes + need > p->cap) {
		uint32_t lru = UINT32_MAX;
		for (uint32_t i = 0; i < p->n_ent; i++)
			if ((pin == NULL || i != *pin) && (lru == UINT32_MAX || p->ent[i].used < p->ent[lru].used))
				lru = i;
		if (lru == UINT32_MAX)
			return false;
		entry_drop(p, lru);
		p->st.evictions++;
		if (pin != NULL && *pin == p->n_ent)
			*pin = lru;
	}
	return true;
}

static int entry_push(q42_prefix *p, int32_t *ids, uint32_t n, uint32_t n_stored, uint8_t *state,
		      bool tiled, q42_err *err)
{
	if (p->n_ent == p->cap_ent) {
		uint32_t c = p->cap_ent ? 2 * p->cap_ent : 8;
		struct entry *ne = realloc(p->ent, c * sizeof *ne);
		if (ne == NULL) {
			free(ids);
			free(state);
			return q42_err_set(err, Q42_ENOMEM, "prefix reuse: out of memory");
		}
		p->ent = ne;
		p->cap_ent = c;
	}
	p->ent[p->n_ent++] = (struct entry){ids, n, n_stored, state, n_stored * p->pos_bytes, ++p->clock, tiled};
	p->st.bytes += n_stored * p->pos_bytes;
	return Q42_OK;
}

/* Copy the live state's positions from..n_live into the cache, unless a
 * copy already holds them or they do not fit; a copy that fails is
 * simply not kept. */
static void save_live(q42_prefix *p, uint32_t from, uint32_t *pin)
{
	const uint64_t bytes = p->n_live * p->pos_bytes;
	int32_t *ids;
	uint8_t *st;
	q42_err err = {0};

	if (p->n_live <= from)
		return;
	for (uint32_t i = 0; i < p->n_ent; i++)
		if (p->ent[i].n >= p->n_live && common(p->ent[i].ids, p->ent[i].n, p->live, p->n_live) == p->n_live) {
			p->ent[i].used = ++p->clock;
			return;
		}
	if (!make_room(p, bytes, pin))
		return;
	ids = malloc(p->n_live * sizeof *ids);
	st = malloc(bytes);
	if (ids == NULL || st == NULL ||
	    q42_engine_state_get(p->e, p->n_live, st, &err) != Q42_OK) {
		free(ids);
		free(st);
		return;
	}
	memcpy(ids, p->live, p->n_live * sizeof *ids);
	if (entry_push(p, ids, p->n_live, p->n_live, st, p->live_tiled, &err) == Q42_OK)
		p->st.copies_out++;
}

int q42_prefix_begin(q42_prefix *p, const int32_t *ids, uint32_t n, uint32_t *from, q42_err *err)
{
	uint32_t best, best_ent = UINT32_MAX;
	int rc;

	p->st.prompts++;
	p->st.tokens += n;
	*from = 0;
	/* the engine may have run past the prompt (generation, options):
	 * the live positions are still those of n_live */
	best = p->n_live <= q42_engine_n_past(p->e) ? reusable(p, p->live, p->n_live, p->live_tiled, ids, n) : 0;
	for (uint32_t i = 0; i < p->n_ent; i++) {
		uint32_t r = reusable(p, p->ent[i].ids, p->ent[i].n, p->ent[i].tiled, ids, n);
		if (r > best) {
			best = r;
			best_ent = i;
		}
	}
	/* whatever the live state has past best is about to be overwritten */
	save_live(p, best, best_ent != UINT32_MAX ? &best_ent : NULL);
	if (best_ent != UINT32_MAX) {
		struct entry *en = &p->ent[best_ent];
		rc = q42_engine_state_put(p->e, en->state, en->n_stored, best, err);
		if (rc != Q42_OK) {
			q42_engine_reset(p->e);
			p->n_live = 0;
			return rc;
		}
		en->used = ++p->clock;
		p->live_tiled = en->tiled;
		p->st.copies_in++;
		/* a copy added beyond the bound was for this use only */
		if (p->st.bytes > p->cap) {
			entry_drop(p, best_ent);
			p->st.evictions++;
		}
	} else if (best > 0) {
		rc = q42_engine_truncate(p->e, best, err);
		if (rc != Q42_OK) {
			q42_engine_reset(p->e);
			p->n_live = 0;
			return rc;
		}
	} else {
		q42_engine_reset(p->e);
	}
	memcpy(p->live, ids, best * sizeof *ids);
	p->n_live = best;
	p->st.reused += best;
	*from = best;
	return Q42_OK;
}

int q42_prefix_end(q42_prefix *p, const int32_t *ids, uint32_t n_done, q42_err *err)
{
	const uint32_t n = q42_prefix_settled(p->nb, n_done), tile = q42_engine_flash_tile(p->e);
	(void)err;
	memcpy(p->live, ids, n * sizeof *ids);
	p->n_live = n;
	p->live_tiled = tile != 0 && n_done - n_done / p->nb * p->nb >= tile;
	return Q42_OK;
}

int q42_prefix_add(q42_prefix *p, int32_t *ids, uint32_t n, uint8_t *state, q42_err *err)
{
	/* a file does not say which form its last pass took under flash
	 * attention: its whole passes only */
	const uint32_t n_use = q42_engine_flash_tile(p->e) != 0 ? n / p->nb * p->nb : q42_prefix_settled(p->nb, n);
	if (n_use == 0) {
		free(ids);
		free(state);
		return Q42_OK;
	}
	make_room(p, n * p->pos_bytes, NULL);
	return entry_push(p, ids, n_use, n, state, false, err);
}

uint32_t q42_prefix_live(const q42_prefix *p, const int32_t **ids)
{
	*ids = p->live;
	return p->n_live;
}

void q42_prefix_get_stats(const q42_prefix *p, q42_prefix_stats *s)
{
	*s = p->st;
}
