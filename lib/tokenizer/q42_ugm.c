/* q42_ugm.c -- Unigram tokenization with llama.cpp's UGM rules.
 *
 * Owns three things: the precompiled charsmap (SentencePiece's normalizer:
 * a darts-clone double array over input bytes whose leaves name
 * NUL-terminated replacement strings), the whitespace policy applied to
 * the normalized text, and the segmentation that maximizes the summed
 * token scores, found left to right over a byte trie of the tokens with
 * one unknown token per unmatched codepoint. Every index the charsmap can
 * lead to is checked once at open, so encoding never reads outside it.
 * The rules follow llama.cpp's llm_tokenizer_ugm (read for facts only).
 */
#include "tokenizer/q42_ugm.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/q42_ckd.h"
#include "common/q42_le.h"
#include "tokenizer/q42_unicode.h"

#define CHARSMAP "tokenizer.ggml.precompiled_charsmap"

/* Children of a node are consecutive nodes, in byte order; node 0 is the
 * root, so 0 also means "no child". */
typedef struct trie {
	uint32_t n;
	uint32_t *first;
	uint16_t *count;
	int32_t *value;    /* token id, -1 for an inner node */
	uint8_t *label;    /* the byte that leads to the node */
	uint32_t root[256];
} trie;

typedef struct best {
	double score;      /* sum of scores of the best segmentation ending here */
	int32_t id;        /* its last token */
	uint32_t start;    /* where that token starts */
} best;

struct q42_ugm {
	trie tok, user;
	float *score;      /* per token, as the segmentation counts it */
	float unk_score;
	int32_t unk;
	uint32_t *xcda;    /* charsmap double array, host order */
	uint32_t n_xcda;
	uint8_t *repl;     /* replacement strings */
	size_t n_repl;
	bool add_space_prefix, merge_spaces;
};

/* ---- trie ------------------------------------------------------------------ */

typedef struct key {
	const uint8_t *p;
	uint32_t len;
	int32_t id;
} key;

static int cmp_key(const void *a, const void *b)
{
	const key *x = a, *y = b;
	uint32_t m = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->p, y->p, m);
	if (c != 0)
		return c;
	return x->len < y->len ? -1 : (x->len > y->len);
}

static void trie_free(trie *t)
{
	free(t->first);
	free(t->count);
	free(t->value);
	free(t->label);
	memset(t, 0, sizeof *t);
}

static uint32_t trie_child(const trie *t, uint32_t node, uint8_t c)
{
	const uint8_t *l, *m;
	if (node == 0)
		return t->root[c];
	l = t->label + t->first[node];
	m = memchr(l, c, t->count[node]);
	return m != NULL ? t->first[node] + (uint32_t)(m - l) : 0;
}

/* Breadth first over the sorted keys: a node covers the keys [lo, hi)
 * that share its depth-byte prefix; at most one of them ends there (texts
 * are unique) and it sorts first. */
static int trie_build(trie *t, const q42_ugm_opts *o, unsigned role, q42_err *err)
{
	key *k = NULL;
	uint32_t nk = 0, *lo = NULL, *hi = NULL, *depth = NULL;
	uint64_t cap = 1;
	int rc = Q42_OK;

	memset(t, 0, sizeof *t);
	for (uint32_t i = 0; i < o->n; i++)
		if (o->role[i] & role) {
			if (q42_add_overflow(cap, o->text[i].len, &cap))
				cap = UINT64_MAX;
			nk++;
		}
	if (cap > UINT32_MAX)
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "tokenizer: the token texts hold more than %u bytes", UINT32_MAX);
	k = malloc((nk ? nk : 1) * sizeof *k);
	t->first = malloc(cap * sizeof *t->first);
	t->count = malloc(cap * sizeof *t->count);
	t->value = malloc(cap * sizeof *t->value);
	t->label = malloc(cap);
	lo = malloc(cap * sizeof *lo);
	hi = malloc(cap * sizeof *hi);
	depth = malloc(cap * sizeof *depth);
	if (!k || !t->first || !t->count || !t->value || !t->label || !lo || !hi || !depth) {
		rc = q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
		goto done;
	}
	nk = 0;
	for (uint32_t i = 0; i < o->n; i++)
		if (o->role[i] & role)
			k[nk++] = (key){(const uint8_t *)o->text[i].p, (uint32_t)o->text[i].len, (int32_t)i};
	qsort(k, nk, sizeof *k, cmp_key);
	t->n = 1;
	lo[0] = 0;
	hi[0] = nk;
	depth[0] = 0;
	t->label[0] = 0;
	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t a = lo[i], b = hi[i], d = depth[i];
		t->value[i] = -1;
		if (a < b && k[a].len == d)
			t->value[i] = k[a++].id;
		t->first[i] = t->n;
		t->count[i] = 0;
		while (a < b) {
			uint8_t c = k[a].p[d];
			uint32_t e = a + 1, child = t->n++;
			while (e < b && k[e].p[d] == c)
				e++;
			t->label[child] = c;
			lo[child] = a;
			hi[child] = e;
			depth[child] = d + 1;
			t->count[i]++;
			a = e;
		}
	}
	for (uint32_t j = 0; j < t->count[0]; j++)
		t->root[t->label[1 + j]] = 1 + j;
done:
	free(k);
	free(lo);
	free(hi);
	free(depth);
	if (rc != Q42_OK)
		trie_free(t);
	return rc;
}

/* ---- charsmap ---------------------------------------------------------------- */

/* A double-array unit: BASE in bits 10..30 (shifted left 8 more when bit 9
 * is set), LEAF in bit 8, the label in bits 0..7 (bit 31 marks a value
 * unit, so it never equals a label), a value unit's payload in bits 0..30. */
static uint32_t xbase(uint32_t u)
{
	return (u >> 10) << ((u & (1u << 9)) >> 6);
}

static uint32_t xlabel(uint32_t u)
{
	return u & ((1u << 31) | 0xFFu);
}

static bool xleaf(uint32_t u)
{
	return (u >> 8) & 1u;
}

static uint32_t xvalue(uint32_t u)
{
	return u & ((1u << 31) - 1);
}

/* Walk every node reachable from the root once; each leaf must name a
 * value unit inside the array and a NUL-terminated replacement string. */
static int charsmap_check(const q42_ugm *u, q42_err *err)
{
	uint32_t *stack, sp = 0;
	uint8_t *seen;
	int rc = Q42_OK;
	if (u->n_xcda == 0)
		return Q42_OK;
	stack = malloc(((size_t)u->n_xcda + 1) * sizeof *stack);
	seen = calloc(u->n_xcda, 1);
	if (stack == NULL || seen == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
		goto done;
	}
	stack[sp++] = xbase(u->xcda[0]);
	while (sp > 0 && rc == Q42_OK) {
		uint32_t s = stack[--sp];
		for (uint32_t c = 1; c < 256; c++) {
			uint32_t j = s ^ c, next, v;
			if (j >= u->n_xcda || xlabel(u->xcda[j]) != c || seen[j])
				continue;
			seen[j] = 1;
			next = j ^ xbase(u->xcda[j]);
			if (xleaf(u->xcda[j])) {
				if (next >= u->n_xcda) {
					rc = q42_err_set(err, Q42_EFORMAT,
						"tokenizer: " CHARSMAP ": trie unit %u at offset %llu leads to "
						"unit %u, outside the %u units", j, 4ull + 4ull * j, next,
						u->n_xcda);
					break;
				}
				v = xvalue(u->xcda[next]);
				if (v >= u->n_repl) {
					rc = q42_err_set(err, Q42_EFORMAT,
						"tokenizer: " CHARSMAP ": replacement offset %u in unit %u at "
						"offset %llu is outside the %zu bytes of replacements",
						v, next, 4ull + 4ull * next, u->n_repl);
					break;
				}
				if (memchr(u->repl + v, 0, u->n_repl - v) == NULL) {
					rc = q42_err_set(err, Q42_EFORMAT,
						"tokenizer: " CHARSMAP ": replacement at offset %llu has no "
						"terminating NUL", 4ull + 4ull * u->n_xcda + v);
					break;
				}
			}
			stack[sp++] = next;
		}
	}
done:
	free(stack);
	free(seen);
	return rc;
}

static int charsmap_load(q42_ugm *u, const uint8_t *cm, size_t len, q42_err *err)
{
	uint32_t blob;
	if (cm == NULL || len == 0)
		return Q42_OK;
	if (len < 4)
		return q42_err_set(err, Q42_EFORMAT,
				   "tokenizer: " CHARSMAP ": %zu bytes, expected at least the 4-byte "
				   "trie size at offset 0", len);
	blob = q42_ld32(cm);
	if ((uint64_t)blob + 4 >= len)
		return q42_err_set(err, Q42_EFORMAT,
				   "tokenizer: " CHARSMAP ": trie size %u at offset 0 leaves no "
				   "replacement strings in %zu bytes (expected below %zu)",
				   blob, len, len - 4);
	u->n_xcda = blob / 4;
	u->n_repl = len - 4 - blob;
	u->xcda = malloc(((size_t)u->n_xcda ? u->n_xcda : 1) * sizeof *u->xcda);
	u->repl = malloc(u->n_repl);
	if (u->xcda == NULL || u->repl == NULL)
		return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
	for (uint32_t i = 0; i < u->n_xcda; i++)
		u->xcda[i] = q42_ld32(cm + 4 + 4 * (size_t)i);
	memcpy(u->repl, cm + 4 + blob, u->n_repl);
	return charsmap_check(u, err);
}

/* ---- open / close -------------------------------------------------------------- */

int q42_ugm_open(q42_ugm **out, const q42_ugm_opts *o, q42_err *err)
{
	q42_ugm *u;
	float min_score = FLT_MAX;
	int rc;

	*out = NULL;
	u = calloc(1, sizeof *u);
	if (u == NULL)
		return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
	u->unk = o->unk;
	u->add_space_prefix = o->add_space_prefix;
	u->merge_spaces = o->remove_extra_whitespaces;
	u->score = malloc((size_t)o->n * sizeof *u->score);
	if (u->score == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
		goto fail;
	}
	for (uint32_t i = 0; i < o->n; i++) {
		float s = o->score != NULL ? o->score[i] : 0.0f;
		if ((o->role[i] & Q42_UGM_NORMAL) && s < min_score)
			min_score = s;
		u->score[i] = (o->role[i] & Q42_UGM_ZERO) ? 0.0f : s;
	}
	/* llama.cpp's penalty: ten below the lowest normal score, in float */
	u->unk_score = min_score - 10.0f;
	if ((rc = charsmap_load(u, o->charsmap, o->charsmap_len, err)) != Q42_OK ||
	    (rc = trie_build(&u->tok, o, Q42_UGM_MATCH, err)) != Q42_OK ||
	    (rc = trie_build(&u->user, o, Q42_UGM_PROTECT, err)) != Q42_OK)
		goto fail;
	*out = u;
	return Q42_OK;
fail:
	q42_ugm_close(u);
	return rc;
}

void q42_ugm_close(q42_ugm *u)
{
	if (u == NULL)
		return;
	trie_free(&u->tok);
	trie_free(&u->user);
	free(u->score);
	free(u->xcda);
	free(u->repl);
	free(u);
}

void q42_ugm_work_free(q42_ugm_work *w)
{
	free(w->norm);
	free(w->best);
	memset(w, 0, sizeof *w);
}

/* ---- normalization --------------------------------------------------------------- */

static bool reserve(void **p, size_t *cap, uint64_t need, size_t elem)
{
	uint64_t c = *cap ? *cap : 256, bytes;
	void *q;
	if (need <= *cap)
		return true;
	while (c < need)
		if (q42_mul_overflow(c, 2, &c))
			return false;
	if (q42_mul_overflow(c, elem, &bytes) || bytes > SIZE_MAX)
		return false;
	q = realloc(*p, (size_t)bytes);
	if (q == NULL)
		return false;
	*p = q;
	*cap = (size_t)c;
	return true;
}

/* The normalized form of the longest input prefix at s[0..len) that
 * something claims: a user-defined token's trie path (its deepest node,
 * as llama.cpp walks it, whether or not a token ends there), else the
 * longest charsmap match, else one codepoint as is (an invalid byte
 * becomes U+FFFD). */
static size_t norm_prefix(const q42_ugm *u, const uint8_t *s, size_t len, const uint8_t **piece,
			  size_t *plen)
{
	size_t d = 0, match = 0, off = 0;
	uint32_t node = 0, val = 0;
	while (d < len && (node = trie_child(&u->user, node, s[d])) != 0)
		d++;
	if (d > 0) {
		*piece = s;
		*plen = d;
		return d;
	}
	if (u->n_xcda > 0) {
		uint32_t st = xbase(u->xcda[0]);
		for (size_t i = 0; i < len && s[i] != 0; i++) {
			uint32_t j = st ^ s[i];
			if (j >= u->n_xcda || xlabel(u->xcda[j]) != s[i])
				break;
			st = j ^ xbase(u->xcda[j]);
			if (xleaf(u->xcda[j])) {
				match = i + 1;
				val = xvalue(u->xcda[st]); /* in range: charsmap_check */
			}
		}
	}
	if (match > 0) {
		*piece = u->repl + val;
		*plen = strlen((const char *)*piece);
		return match;
	}
	q42_utf8_decode(s, len, &off);
	if (off == 1 && s[0] >= 0x80) {
		*piece = (const uint8_t *)"\xef\xbf\xbd";
		*plen = 3;
	} else {
		*piece = s;
		*plen = off;
	}
	return off;
}

/* Normalize s[0..len) into w->norm; spaces become U+2581, with one before
 * the first word (add_space_prefix) or, when extra whitespace goes, one
 * before every word and none elsewhere. */
static int normalize(const q42_ugm *u, q42_ugm_work *w, const uint8_t *s, size_t len, size_t *n_out,
		     q42_err *err)
{
	size_t n = 0;
	bool prepended = false, in_word = false;
	for (size_t off = 0; off < len;) {
		const uint8_t *p;
		size_t pl, used = norm_prefix(u, s + off, len - off, &p, &pl);
		uint64_t need;
		if (q42_mul_overflow(pl, 3, &need) || q42_add_overflow(need, (uint64_t)n + 3, &need) ||
		    need > UINT32_MAX || !reserve((void **)&w->norm, &w->cap_norm, need, 1))
			return q42_err_set(err, need > UINT32_MAX ? Q42_EARG : Q42_ENOMEM,
					   need > UINT32_MAX ? "tokenizer: input normalizes to more "
							       "than 4 GiB"
							     : "tokenizer: out of memory");
		for (size_t i = 0; i < pl; i++) {
			if (p[i] != ' ') {
				if (!in_word) {
					in_word = true;
					if ((u->add_space_prefix && !prepended) || u->merge_spaces) {
						memcpy(w->norm + n, "\xe2\x96\x81", 3);
						n += 3;
						prepended = true;
					}
				}
				w->norm[n++] = p[i];
			} else {
				in_word = false;
				if (!u->merge_spaces) {
					memcpy(w->norm + n, "\xe2\x96\x81", 3);
					n += 3;
				}
			}
		}
		off += used;
	}
	*n_out = n;
	return Q42_OK;
}

/* ---- segmentation ------------------------------------------------------------------ */

int q42_ugm_encode(const q42_ugm *u, q42_ugm_work *w, const uint8_t *s, size_t len,
		   q42_tokens *out, q42_err *err)
{
	size_t n = 0, n0 = out->n;
	best *b;
	int rc;
	uint32_t pos;
	bool prev_unk = false;

	if ((rc = normalize(u, w, s, len, &n, err)) != Q42_OK)
		return rc;
	if (n == 0)
		return Q42_OK;
	if (!reserve(&w->best, &w->cap_best, (uint64_t)n + 1, sizeof(best)))
		return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
	b = w->best;
	b[0] = (best){0.0, u->unk, 0};
	for (size_t i = 1; i <= n; i++)
		b[i] = (best){-DBL_MAX, u->unk, 0};
	/* Ties keep the earlier candidate: starts in text order, shorter
	 * tokens first, the unknown token last. */
	for (size_t off = 0; off < n;) {
		size_t k = q42_utf8_len(w->norm[off]), p = off;
		const double cur = b[off].score;
		bool whole = false;
		uint32_t node = 0;
		if (k > n - off)
			k = n - off;
		while (p < n && (node = trie_child(&u->tok, node, w->norm[p])) != 0) {
			int32_t id = u->tok.value[node];
			p++;
			if (id >= 0) {
				double sc = cur + (double)u->score[id];
				if (p - off == k)
					whole = true;
				if (sc > b[p].score)
					b[p] = (best){sc, id, (uint32_t)off};
			}
		}
		if (!whole) {
			double sc = cur + (double)u->unk_score;
			if (sc > b[off + k].score)
				b[off + k] = (best){sc, u->unk, (uint32_t)off};
		}
		off += k;
	}
	/* Back from the end; a run of unknown tokens comes out as one. */
	for (pos = (uint32_t)n;;) {
		const best *t = &b[pos];
		bool unk = t->id == u->unk;
		if (!(prev_unk && unk) && !q42_tokens_push(out, t->id)) {
			out->n = n0;
			return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
		}
		if (t->start == 0)
			break;
		prev_unk = unk;
		pos = t->start;
	}
	for (size_t i = n0, j = out->n - 1; i < j; i++, j--) {
		int32_t x = out->ids[i];
		out->ids[i] = out->ids[j];
		out->ids[j] = x;
	}
	return Q42_OK;
}
