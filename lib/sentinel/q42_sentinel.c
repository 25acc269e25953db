/* q42_sentinel.c -- the Sentinel thread and its rules.
 *
 * State per request: the window of generated tokens by step (a step
 * re-sent after a denial overwrites its slot, so the window always holds
 * the committed tokens before the step being judged), the text of every
 * token (taken once, at open), the banned strings and id sequences. The
 * thread sleeps on a futex word the engine bumps after each push; the
 * engine sleeps on one the thread bumps after each verdict. Nothing here
 * allocates after q42_sentinel_open, and nothing touches the engine.
 */
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "common/q42_buf.h"
#include "common/q42_file.h"
#include "sentinel/q42_ring.h"
#include "sentinel/q42_sentinel.h"

struct banned {
	bool ids;         /* an id sequence, else a string */
	uint32_t off, n;  /* into strings (bytes) or seqs (ids) */
};

struct q42_sentinel {
	q42_ring logits;  /* LogitStream: engine -> Sentinel */
	q42_ring control; /* ControlStream: Sentinel -> engine */
	_Atomic uint32_t ev_word;   /* bumped by the engine after each push */
	_Atomic uint32_t done_word; /* bumped by the thread after each verdict */
	_Atomic uint64_t done;      /* events judged */
	_Atomic bool quit;
	uint64_t next_seq;          /* engine side */
	uint64_t dropped;           /* engine side */
	pthread_t thread;
	bool running;

	char rules[160];
	bool witness;
	uint32_t repeat_n;
	struct banned *banned;
	uint32_t n_banned;
	char *strings;
	int32_t *seqs;
	uint32_t max_string;

	/* token text */
	uint32_t n_vocab;
	uint32_t *piece_off; /* n_vocab + 1 */
	char *pieces;

	/* thread side */
	int32_t *hist;   /* Q42_SENTINEL_WINDOW, by step */
	uint32_t n_hist; /* steps known: hist holds steps [n_hist - window, n_hist) */
	char *scratch;   /* text tail + one piece */
	uint32_t max_piece;
};

const char *q42_rule_name(enum q42_rule r)
{
	switch (r) {
	case Q42_RULE_NONE: return "none";
	case Q42_RULE_NONFINITE: return "nonfinite";
	case Q42_RULE_WITNESS: return "witness";
	case Q42_RULE_BANNED: return "banned";
	case Q42_RULE_REPEAT: return "repeat";
	}
	return "?";
}

static void futex_wait(_Atomic uint32_t *w, uint32_t seen)
{
	/* bounded, so a missed wake-up costs a millisecond, not a hang */
	struct timespec ts = {0, 1000000};
	syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *w)
{
	syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void q42_logit_summary(const float *l, uint32_t n, q42_logit_event *ev)
{
	float m1 = -INFINITY, m2 = -INFINITY;
	double sum = 0.0;
	uint32_t bad = 0;
	for (uint32_t i = 0; i < n; i++) {
		float v = l[i];
		if (!isfinite(v)) {
			bad++;
			continue;
		}
		if (v > m1) {
			m2 = m1;
			m1 = v;
		} else if (v > m2) {
			m2 = v;
		}
	}
	for (uint32_t i = 0; i < n && isfinite(m1); i++)
		if (isfinite(l[i]))
			sum += exp((double)l[i] - (double)m1);
	ev->max = m1;
	ev->gap = isfinite(m2) ? m1 - m2 : 0.0f;
	ev->lse = isfinite(m1) ? (float)((double)m1 + log(sum)) : m1;
	ev->n_nonfinite = bad;
}

/* ---- banned file ---- */

static int add_banned(q42_sentinel *s, q42_buf *strs, q42_buf *ids, const char *line, size_t n,
		      uint64_t lineno, const char *path, q42_err *err)
{
	struct banned *b;
	if (s->n_banned == Q42_SENTINEL_BANNED_MAX)
		return q42_err_set(err, Q42_EARG, "%s: line %llu: more than %u entries", path,
				   (unsigned long long)lineno, Q42_SENTINEL_BANNED_MAX);
	b = &s->banned[s->n_banned];
	if (n >= 4 && memcmp(line, "ids:", 4) == 0) {
		size_t i = 4;
		b->ids = true;
		b->off = (uint32_t)(ids->len / sizeof(int32_t));
		b->n = 0;
		while (i < n) {
			unsigned long long v = 0;
			size_t st;
			if (line[i] == ' ' || line[i] == '\t') {
				i++;
				continue;
			}
			for (st = i; i < n && line[i] >= '0' && line[i] <= '9' && v < s->n_vocab; i++)
				v = v * 10 + (unsigned long long)(line[i] - '0');
			if (i == st || (i < n && line[i] != ' ' && line[i] != '\t') || v >= s->n_vocab)
				return q42_err_set(err, Q42_EARG,
						   "%s: line %llu: expected token ids in 0..%u after 'ids:'",
						   path, (unsigned long long)lineno, s->n_vocab - 1);
			if (b->n == Q42_SENTINEL_BANNED_IDS)
				return q42_err_set(err, Q42_EARG, "%s: line %llu: more than %u ids", path,
						   (unsigned long long)lineno, Q42_SENTINEL_BANNED_IDS);
			int32_t id = (int32_t)v;
			q42_buf_append(ids, &id, sizeof id);
			b->n++;
		}
		if (b->n == 0)
			return q42_err_set(err, Q42_EARG, "%s: line %llu: 'ids:' without ids", path,
					   (unsigned long long)lineno);
	} else {
		if (n > Q42_SENTINEL_BANNED_BYTES)
			return q42_err_set(err, Q42_EARG, "%s: line %llu: %zu bytes, the limit is %u",
					   path, (unsigned long long)lineno, n,
					   Q42_SENTINEL_BANNED_BYTES);
		b->ids = false;
		b->off = (uint32_t)strs->len;
		b->n = (uint32_t)n;
		q42_buf_append(strs, line, n);
		if (n > s->max_string)
			s->max_string = (uint32_t)n;
	}
	if (strs->failed || ids->failed)
		return q42_err_set(err, Q42_ENOMEM, "sentinel: out of memory");
	s->n_banned++;
	return Q42_OK;
}

static int load_banned(q42_sentinel *s, const char *path, q42_err *err)
{
	q42_map m = {0};
	q42_buf strs, ids;
	uint64_t lineno = 0;
	size_t pos = 0;
	int rc;

	m.fd = -1;
	q42_buf_init(&strs);
	q42_buf_init(&ids);
	rc = q42_map_open(&m, path, 0, err);
	if (rc != Q42_OK)
		goto done;
	if (m.size > Q42_SENTINEL_FILE_MAX) {
		rc = q42_err_set(err, Q42_EARG, "%s: %llu bytes, the limit is %u", path,
				 (unsigned long long)m.size, Q42_SENTINEL_FILE_MAX);
		goto done;
	}
	s->banned = calloc(Q42_SENTINEL_BANNED_MAX, sizeof *s->banned);
	if (s->banned == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "sentinel: out of memory");
		goto done;
	}
	while (pos < m.size) {
		const char *line = (const char *)m.data + pos;
		const char *nl = memchr(line, '\n', (size_t)m.size - pos);
		size_t n = nl ? (size_t)(nl - line) : (size_t)m.size - pos;
		pos += n + (nl ? 1 : 0);
		lineno++;
		if (n > 0 && line[n - 1] == '\r')
			n--;
		if (n == 0 || line[0] == '#')
			continue;
		rc = add_banned(s, &strs, &ids, line, n, lineno, path, err);
		if (rc != Q42_OK)
			goto done;
	}
	if (s->n_banned == 0) {
		rc = q42_err_set(err, Q42_EARG, "%s: no banned strings or ids", path);
		goto done;
	}
	s->strings = malloc(strs.len + 1);
	s->seqs = malloc(ids.len + sizeof(int32_t));
	if (s->strings == NULL || s->seqs == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "sentinel: out of memory");
		goto done;
	}
	if (strs.len)
		memcpy(s->strings, strs.data, strs.len);
	if (ids.len)
		memcpy(s->seqs, ids.data, ids.len);
	rc = Q42_OK;
done:
	q42_buf_free(&strs);
	q42_buf_free(&ids);
	if (m.path != NULL)
		q42_map_close(&m);
	return rc;
}

static void add_rule_name(q42_sentinel *s, const char *name)
{
	size_t l = strlen(s->rules);
	snprintf(s->rules + l, sizeof s->rules - l, ",%s", name);
}

static int parse_spec(q42_sentinel *s, const char *spec, q42_err *err)
{
	const char *p = spec;
	bool banned = false;
	snprintf(s->rules, sizeof s->rules, "nonfinite");
	while (p != NULL && *p != '\0') {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		char item[4096];
		if (n == 0 || n >= sizeof item)
			return q42_err_set(err, Q42_EARG, "--sentinel '%s': empty or overlong rule", spec);
		memcpy(item, p, n);
		item[n] = '\0';
		if (strcmp(item, "nonfinite") == 0) {
			/* always on; accepted so lists can name it */
		} else if (strcmp(item, "witness") == 0) {
			if (!s->witness)
				add_rule_name(s, "witness");
			s->witness = true;
		} else if (strncmp(item, "banned=", 7) == 0) {
			int rc;
			if (banned)
				return q42_err_set(err, Q42_EARG, "--sentinel: banned= given twice");
			banned = true;
			if (item[7] == '\0')
				return q42_err_set(err, Q42_EARG, "--sentinel: banned= needs a FILE");
			rc = load_banned(s, item + 7, err);
			if (rc != Q42_OK)
				return rc == Q42_EIO ? rc : Q42_EARG;
			add_rule_name(s, "banned");
		} else if (strncmp(item, "repeat=", 7) == 0) {
			char *end;
			unsigned long v = strtoul(item + 7, &end, 10);
			if (item[7] < '1' || item[7] > '9' || *end != '\0' || v > Q42_SENTINEL_REPEAT_MAX)
				return q42_err_set(err, Q42_EARG,
						   "--sentinel '%s': expected repeat=N with N in 1..%u", item,
						   Q42_SENTINEL_REPEAT_MAX);
			if (s->repeat_n == 0)
				add_rule_name(s, item);
			s->repeat_n = (uint32_t)v;
		} else {
			return q42_err_set(err, Q42_EARG,
					   "--sentinel '%s': unknown rule (expected witness, nonfinite, "
					   "banned=FILE or repeat=N)", item);
		}
		p = c ? c + 1 : NULL;
	}
	return Q42_OK;
}

static int take_pieces(q42_sentinel *s, const q42_tokenizer *tok, q42_err *err)
{
	q42_buf all, piece;
	int rc = Q42_OK;
	q42_buf_init(&all);
	q42_buf_init(&piece);
	s->piece_off = calloc((size_t)s->n_vocab + 1, sizeof *s->piece_off);
	if (s->piece_off == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "sentinel: out of memory");
		goto done;
	}
	for (uint32_t i = 0; i < s->n_vocab; i++) {
		q42_buf_reset(&piece);
		rc = q42_tokenizer_piece(tok, (int32_t)i, 0, &piece, err);
		if (rc != Q42_OK)
			goto done;
		s->piece_off[i] = (uint32_t)all.len;
		q42_buf_append(&all, piece.data, piece.len);
		if (piece.len > s->max_piece)
			s->max_piece = (uint32_t)piece.len;
		if (all.len > UINT32_MAX / 2) {
			rc = q42_err_set(err, Q42_EARG, "sentinel: token texts too large");
			goto done;
		}
	}
	s->piece_off[s->n_vocab] = (uint32_t)all.len;
	s->pieces = malloc(all.len + 1);
	if (all.failed || piece.failed || s->pieces == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "sentinel: out of memory");
		goto done;
	}
	if (all.len)
		memcpy(s->pieces, all.data, all.len);
done:
	q42_buf_free(&all);
	q42_buf_free(&piece);
	return rc;
}

int q42_sentinel_open(q42_sentinel **out, const char *spec, const q42_tokenizer *tok,
		      q42_err *err)
{
	q42_sentinel *s;
	int rc;

	*out = NULL;
	s = calloc(1, sizeof *s);
	if (s == NULL)
		return q42_err_set(err, Q42_ENOMEM, "sentinel: out of memory");
	s->n_vocab = q42_tokenizer_n_vocab(tok);
	rc = parse_spec(s, spec, err);
	if (rc != Q42_OK)
		goto fail;
	rc = take_pieces(s, tok, err);
	if (rc != Q42_OK)
		goto fail;
	rc = q42_ring_init(&s->logits, Q42_SENTINEL_RING_CAP, sizeof(q42_logit_event), err);
	if (rc == Q42_OK)
		rc = q42_ring_init(&s->control, Q42_SENTINEL_RING_CAP, sizeof(q42_deny), err);
	if (rc != Q42_OK)
		goto fail;
	s->hist = calloc(Q42_SENTINEL_WINDOW, sizeof *s->hist);
	s->scratch = malloc((size_t)s->max_string + s->max_piece + 1);
	if (s->hist == NULL || s->scratch == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "sentinel: out of memory");
		goto fail;
	}
	*out = s;
	return Q42_OK;
fail:
	q42_sentinel_close(s);
	return rc;
}

void q42_sentinel_close(q42_sentinel *s)
{
	if (s == NULL)
		return;
	q42_sentinel_stop(s);
	q42_ring_free(&s->logits);
	q42_ring_free(&s->control);
	free(s->banned);
	free(s->strings);
	free(s->seqs);
	free(s->piece_off);
	free(s->pieces);
	free(s->hist);
	free(s->scratch);
	free(s);
}

const char *q42_sentinel_rules(const q42_sentinel *s) { return s->rules; }
uint64_t q42_sentinel_dropped(const q42_sentinel *s) { return s->dropped; }

/* ---- rules (thread side) ---- */

static int32_t hist_at(const q42_sentinel *s, uint32_t step)
{
	if (step >= s->n_hist || s->n_hist - step > Q42_SENTINEL_WINDOW)
		return -1;
	return s->hist[step % Q42_SENTINEL_WINDOW];
}

static bool banned_ids_hit(const q42_sentinel *s, const struct banned *b, uint32_t step, int32_t t)
{
	const int32_t *q = s->seqs + b->off;
	if (q[b->n - 1] != t || step + 1 < b->n)
		return false;
	for (uint32_t k = 0; k + 1 < b->n; k++)
		if (hist_at(s, step - (b->n - 1) + k) != q[k])
			return false;
	return true;
}

/* Would a banned string end inside the text of t, appended at step? */
static bool banned_text_hit(q42_sentinel *s, uint32_t step, int32_t t)
{
	const char *p = s->pieces + s->piece_off[t];
	uint32_t pl = s->piece_off[t + 1] - s->piece_off[t];
	uint32_t need = s->max_string > 0 ? s->max_string - 1 : 0, have = 0;
	char *sc = s->scratch;

	/* the tail of earlier text, newest token last */
	for (uint32_t k = step; k > 0 && have < need; k--) {
		int32_t id = hist_at(s, k - 1);
		uint32_t l, take;
		if (id < 0)
			break;
		l = s->piece_off[id + 1] - s->piece_off[id];
		take = l < need - have ? l : need - have;
		memmove(sc + take, sc, have);
		memcpy(sc, s->pieces + s->piece_off[id + 1] - take, take);
		have += take;
	}
	memcpy(sc + have, p, pl);
	for (uint32_t i = 0; i < s->n_banned; i++) {
		const struct banned *b = &s->banned[i];
		const char *w = s->strings + b->off;
		if (b->ids || b->n == 0)
			continue;
		/* matches that end within the new piece */
		for (uint32_t end = have + 1; end <= have + pl; end++)
			if (end >= b->n && memcmp(sc + end - b->n, w, b->n) == 0)
				return true;
	}
	return false;
}

static bool repeat_hit(const q42_sentinel *s, uint32_t step, int32_t t)
{
	const uint32_t n = s->repeat_n;
	uint32_t lo;
	/* the n-gram ending at step (t last) against every earlier one */
	lo = step + 1 > Q42_SENTINEL_WINDOW ? step + 1 - Q42_SENTINEL_WINDOW : 0;
	for (uint32_t end = lo + n - 1; end < step; end++) {
		bool same = hist_at(s, end) == t;
		for (uint32_t k = 1; same && k < n; k++)
			same = hist_at(s, end - k) >= 0 && hist_at(s, end - k) == hist_at(s, step - k);
		if (same)
			return true;
	}
	return false;
}

static enum q42_rule judge(q42_sentinel *s, const q42_logit_event *ev)
{
	uint32_t step = ev->step;
	int32_t t = ev->token;
	enum q42_rule r = Q42_RULE_NONE;

	/* steps skipped by dropped events are unknown */
	while (s->n_hist < step) {
		s->hist[s->n_hist % Q42_SENTINEL_WINDOW] = -1;
		s->n_hist++;
	}
	s->n_hist = step; /* a re-sent step replaces its earlier token */
	if (ev->n_nonfinite > 0)
		r = Q42_RULE_NONFINITE;
	else if (t < 0 || (uint32_t)t >= s->n_vocab)
		r = Q42_RULE_NONFINITE;
	else if (s->witness) {
		unsigned char b[sizeof(float)];
		float v = ev->logit;
		memcpy(b, &v, sizeof b); /* x86-64 and every supported target are little-endian */
		for (size_t i = 0; i < sizeof b; i++)
			if (b[i] == 0x99)
				r = Q42_RULE_WITNESS;
	}
	if (r == Q42_RULE_NONE && s->n_banned > 0) {
		for (uint32_t i = 0; i < s->n_banned && r == Q42_RULE_NONE; i++)
			if (s->banned[i].ids && banned_ids_hit(s, &s->banned[i], step, t))
				r = Q42_RULE_BANNED;
		if (r == Q42_RULE_NONE && s->max_string > 0 && banned_text_hit(s, step, t))
			r = Q42_RULE_BANNED;
	}
	if (r == Q42_RULE_NONE && s->repeat_n > 0 && repeat_hit(s, step, t))
		r = Q42_RULE_REPEAT;
	s->hist[step % Q42_SENTINEL_WINDOW] = t;
	s->n_hist = step + 1;
	return r;
}

static void *sentinel_main(void *arg)
{
	q42_sentinel *s = arg;
	q42_logit_event ev;
	for (;;) {
		uint32_t seen = atomic_load_explicit(&s->ev_word, memory_order_acquire);
		bool any = false;
		while (q42_ring_pop(&s->logits, &ev)) {
			enum q42_rule r = judge(s, &ev);
			any = true;
			if (r != Q42_RULE_NONE) {
				q42_deny d = {ev.seq, ev.step, ev.token, (uint32_t)r};
				/* the engine waits for each verdict before the next step, so
				 * the ControlStream cannot be full */
				while (!q42_ring_push(&s->control, &d))
					sched_yield();
			}
			atomic_store_explicit(&s->done, ev.seq + 1, memory_order_release);
			atomic_fetch_add_explicit(&s->done_word, 1, memory_order_release);
			futex_wake(&s->done_word);
		}
		if (atomic_load_explicit(&s->quit, memory_order_acquire))
			break;
		if (!any)
			futex_wait(&s->ev_word, seen);
	}
	return NULL;
}

int q42_sentinel_start(q42_sentinel *s, q42_err *err)
{
	q42_sentinel_stop(s);
	q42_ring_clear(&s->logits);
	q42_ring_clear(&s->control);
	atomic_store(&s->done, 0);
	atomic_store(&s->quit, false);
	s->next_seq = 0;
	s->dropped = 0;
	s->n_hist = 0;
	if (pthread_create(&s->thread, NULL, sentinel_main, s) != 0)
		return q42_err_set(err, Q42_ENOMEM, "sentinel: cannot start its thread");
	s->running = true;
	return Q42_OK;
}

void q42_sentinel_stop(q42_sentinel *s)
{
	if (!s->running)
		return;
	atomic_store_explicit(&s->quit, true, memory_order_release);
	atomic_fetch_add_explicit(&s->ev_word, 1, memory_order_release);
	futex_wake(&s->ev_word);
	pthread_join(s->thread, NULL);
	s->running = false;
}

bool q42_sentinel_submit(q42_sentinel *s, q42_logit_event *ev)
{
	ev->seq = s->next_seq;
	if (!q42_ring_push(&s->logits, ev)) {
		s->dropped++;
		return false;
	}
	s->next_seq++;
	atomic_fetch_add_explicit(&s->ev_word, 1, memory_order_release);
	futex_wake(&s->ev_word);
	return true;
}

void q42_sentinel_wait(q42_sentinel *s)
{
	for (unsigned spin = 0;; spin++) {
		uint32_t seen = atomic_load_explicit(&s->done_word, memory_order_acquire);
		if (atomic_load_explicit(&s->done, memory_order_acquire) >= s->next_seq)
			return;
		if (spin < 64)
			continue;
		futex_wait(&s->done_word, seen);
	}
}

bool q42_sentinel_poll(q42_sentinel *s, q42_deny *d)
{
	return q42_ring_pop(&s->control, d);
}
