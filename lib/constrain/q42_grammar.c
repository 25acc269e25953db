/* q42_grammar.c -- EBNF text -> syntax tree -> NFA (Thompson, rule
 * references inlined) -> DFA (subset construction over byte equivalence
 * classes) -> dead states pruned.
 *
 * Every size read from the grammar is capped (source bytes, NFA and DFA
 * states, nesting), so a hostile grammar fails with a message rather than
 * exhausting memory. The dialect is specified in q42run(1), GRAMMARS;
 * keep the two in step. Never recurses deeper than Q42_GRAMMAR_MAX_DEPTH.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/q42_buf.h"
#include "constrain/q42_grammar.h"

enum nkind { N_ALT, N_SEQ, N_REP, N_CLASS, N_STR, N_REF };

struct node {
	enum nkind kind;
	int32_t first, next; /* children (ALT, SEQ, REP), siblings */
	uint32_t min, max;   /* REP: max UINT32_MAX = unbounded */
	uint32_t a, n;       /* CLASS: class index; STR: bytes off/len; REF: name off/len */
	uint32_t line, col;
};

struct rule {
	uint32_t name_off, name_len;
	int32_t body;
	int busy; /* 1 while being inlined: a reference back is recursion */
};

struct cls {
	uint64_t bits[4];
};

enum skind { S_EPS, S_CLASS };

struct nst {
	enum skind kind;
	int32_t out1, out2;
	uint32_t cls;
};

struct q42_grammar {
	int32_t *trans;   /* n_dfa * 256 */
	uint8_t *accept;  /* n_dfa: 1 accepting, 2 accepting and final */
	uint32_t n_dfa;
	int32_t start;
	uint8_t cls[256]; /* byte -> class: bytes of one class have the same transitions */
};

struct parser {
	const char *s;
	size_t n, pos;
	uint32_t line;
	size_t line_start;
	const char *name;
	q42_err *err;
	q42_buf nodes, rules, strs, classes, states;
	int32_t single[256]; /* class index of a one-byte class, -1 if none yet */
};

#define NODES(p) ((struct node *)(p)->nodes.data)
#define RULES(p) ((struct rule *)(p)->rules.data)
#define CLASSES(p) ((struct cls *)(p)->classes.data)
#define STATES(p) ((struct nst *)(p)->states.data)

static int perr(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int perr(struct parser *p, const char *fmt, ...)
{
	char m[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m, sizeof m, fmt, ap);
	va_end(ap);
	return q42_err_set(p->err, Q42_EARG, "%s:%u:%zu: %s", p->name, p->line,
			   p->pos - p->line_start + 1, m);
}

static void skip_ws(struct parser *p)
{
	while (p->pos < p->n) {
		char c = p->s[p->pos];
		if (c == '\n') {
			p->pos++;
			p->line++;
			p->line_start = p->pos;
		} else if (c == ' ' || c == '\t' || c == '\r') {
			p->pos++;
		} else if (c == '#') {
			while (p->pos < p->n && p->s[p->pos] != '\n')
				p->pos++;
		} else {
			break;
		}
	}
}

static bool is_name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_name_char(char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9') || c == '-';
}

static size_t name_len_at(const struct parser *p, size_t at)
{
	size_t i = at;
	if (i >= p->n || !is_name_start(p->s[i]))
		return 0;
	while (i < p->n && is_name_char(p->s[i]))
		i++;
	return i - at;
}

/* Is there "NAME ::=" at the current position? */
static bool at_rule_start(const struct parser *p)
{
	size_t l = name_len_at(p, p->pos), i;
	if (l == 0)
		return false;
	i = p->pos + l;
	while (i < p->n && (p->s[i] == ' ' || p->s[i] == '\t' || p->s[i] == '\r' || p->s[i] == '\n'))
		i++;
	return i + 3 <= p->n && memcmp(p->s + i, "::=", 3) == 0;
}

static int32_t new_node(struct parser *p, enum nkind k)
{
	struct node nd = {k, -1, -1, 0, 0, 0, 0, p->line, (uint32_t)(p->pos - p->line_start + 1)};
	if (p->nodes.len / sizeof nd >= Q42_GRAMMAR_MAX_NFA)
		return -1;
	if (!q42_buf_append(&p->nodes, &nd, sizeof nd))
		return -1;
	return (int32_t)(p->nodes.len / sizeof nd - 1);
}

static int32_t new_class(struct parser *p, const struct cls *c)
{
	if (p->classes.len / sizeof *c >= Q42_GRAMMAR_MAX_NFA ||
	    !q42_buf_append(&p->classes, c, sizeof *c))
		return -1;
	return (int32_t)(p->classes.len / sizeof *c - 1);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* One byte of a literal or class, escapes decoded; -1 on error. */
static int read_byte(struct parser *p, char quote)
{
	char c;
	if (p->pos >= p->n)
		return perr(p, "unterminated literal or class"), -1;
	c = p->s[p->pos++];
	if (c == '\n')
		return perr(p, "line end inside a literal or class"), -1;
	if (c != '\\')
		return (unsigned char)c;
	if (p->pos >= p->n)
		return perr(p, "unterminated escape"), -1;
	c = p->s[p->pos++];
	switch (c) {
	case 'n': return '\n';
	case 'r': return '\r';
	case 't': return '\t';
	case '\\': return '\\';
	case '"': return '"';
	case '\'': return '\'';
	case ']': return ']';
	case '[': return '[';
	case '-': return '-';
	case '^': return '^';
	case 'x': {
		int h, l;
		if (p->pos + 2 > p->n || (h = hexval(p->s[p->pos])) < 0 ||
		    (l = hexval(p->s[p->pos + 1])) < 0)
			return perr(p, "\\x needs two hex digits"), -1;
		p->pos += 2;
		return h * 16 + l;
	}
	default:
		(void)quote;
		return perr(p, "unknown escape '\\%c'", c), -1;
	}
}

static int32_t parse_alt(struct parser *p, uint32_t depth);

static int32_t parse_primary(struct parser *p, uint32_t depth)
{
	char c = p->s[p->pos];
	int32_t id;
	if (c == '"' || c == '\'') {
		size_t off = p->strs.len;
		id = new_node(p, N_STR);
		if (id < 0)
			goto nomem;
		p->pos++;
		while (p->pos < p->n && p->s[p->pos] != c) {
			int b = read_byte(p, c);
			if (b < 0)
				return -1;
			q42_buf_u8(&p->strs, (uint8_t)b);
		}
		if (p->pos >= p->n)
			return perr(p, "unterminated literal"), -1;
		p->pos++;
		if (p->strs.len == off)
			return perr(p, "empty literal (use ? for optional parts)"), -1;
		NODES(p)[id].a = (uint32_t)off;
		NODES(p)[id].n = (uint32_t)(p->strs.len - off);
		return id;
	}
	if (c == '[') {
		struct cls k = {{0}};
		bool neg = false, any = false;
		id = new_node(p, N_CLASS);
		if (id < 0)
			goto nomem;
		p->pos++;
		if (p->pos < p->n && p->s[p->pos] == '^') {
			neg = true;
			p->pos++;
		}
		while (p->pos < p->n && p->s[p->pos] != ']') {
			int lo = read_byte(p, ']'), hi;
			if (lo < 0)
				return -1;
			hi = lo;
			if (p->pos + 1 < p->n && p->s[p->pos] == '-' && p->s[p->pos + 1] != ']') {
				p->pos++;
				hi = read_byte(p, ']');
				if (hi < 0)
					return -1;
				if (hi < lo)
					return perr(p, "class range runs backwards"), -1;
			}
			for (int b = lo; b <= hi; b++)
				k.bits[b >> 6] |= 1ull << (b & 63);
			any = true;
		}
		if (p->pos >= p->n)
			return perr(p, "unterminated class"), -1;
		p->pos++;
		if (!any)
			return perr(p, "empty class"), -1;
		if (neg)
			for (int i = 0; i < 4; i++)
				k.bits[i] = ~k.bits[i];
		int32_t ci = new_class(p, &k);
		if (ci < 0)
			goto nomem;
		NODES(p)[id].a = (uint32_t)ci;
		return id;
	}
	if (c == '(') {
		if (depth >= Q42_GRAMMAR_MAX_DEPTH)
			return perr(p, "groups nested deeper than %u", Q42_GRAMMAR_MAX_DEPTH), -1;
		p->pos++;
		id = parse_alt(p, depth + 1);
		if (id < 0)
			return -1;
		skip_ws(p);
		if (p->pos >= p->n || p->s[p->pos] != ')')
			return perr(p, "expected ')'"), -1;
		p->pos++;
		return id;
	}
	if (is_name_start(c)) {
		size_t l = name_len_at(p, p->pos);
		id = new_node(p, N_REF);
		if (id < 0)
			goto nomem;
		NODES(p)[id].a = (uint32_t)p->pos;
		NODES(p)[id].n = (uint32_t)l;
		p->pos += l;
		return id;
	}
	return perr(p, "unexpected character '%c'", c), -1;
nomem:
	q42_err_set(p->err, Q42_ENOMEM, "%s: out of memory or more than %u nodes", p->name,
		    Q42_GRAMMAR_MAX_NFA);
	return -1;
}

static int32_t parse_postfix(struct parser *p, uint32_t depth)
{
	int32_t id = parse_primary(p, depth);
	while (id >= 0 && p->pos < p->n &&
	       (p->s[p->pos] == '?' || p->s[p->pos] == '*' || p->s[p->pos] == '+')) {
		char c = p->s[p->pos++];
		int32_t r = new_node(p, N_REP);
		if (r < 0) {
			q42_err_set(p->err, Q42_ENOMEM, "%s: out of memory", p->name);
			return -1;
		}
		NODES(p)[r].first = id;
		NODES(p)[r].min = c == '+' ? 1 : 0;
		NODES(p)[r].max = c == '?' ? 1 : UINT32_MAX;
		id = r;
	}
	return id;
}

static bool at_seq_end(struct parser *p)
{
	skip_ws(p);
	return p->pos >= p->n || p->s[p->pos] == '|' || p->s[p->pos] == ')' || at_rule_start(p);
}

static int32_t parse_seq(struct parser *p, uint32_t depth)
{
	int32_t seq = new_node(p, N_SEQ), last = -1;
	if (seq < 0) {
		q42_err_set(p->err, Q42_ENOMEM, "%s: out of memory", p->name);
		return -1;
	}
	if (at_seq_end(p))
		return perr(p, "expected an element (empty alternatives are not allowed)"), -1;
	while (!at_seq_end(p)) {
		int32_t e = parse_postfix(p, depth);
		if (e < 0)
			return -1;
		if (last < 0)
			NODES(p)[seq].first = e;
		else
			NODES(p)[last].next = e;
		last = e;
	}
	return seq;
}

static int32_t parse_alt(struct parser *p, uint32_t depth)
{
	int32_t alt = new_node(p, N_ALT), last = -1;
	if (alt < 0) {
		q42_err_set(p->err, Q42_ENOMEM, "%s: out of memory", p->name);
		return -1;
	}
	for (;;) {
		int32_t s = parse_seq(p, depth);
		if (s < 0)
			return -1;
		if (last < 0)
			NODES(p)[alt].first = s;
		else
			NODES(p)[last].next = s;
		last = s;
		skip_ws(p);
		if (p->pos < p->n && p->s[p->pos] == '|') {
			p->pos++;
			continue;
		}
		return alt;
	}
}

static int parse_rules(struct parser *p)
{
	skip_ws(p);
	if (p->pos >= p->n)
		return perr(p, "no rules"), Q42_EARG;
	while (p->pos < p->n) {
		struct rule r = {0};
		size_t l;
		if (!at_rule_start(p))
			return perr(p, "expected 'NAME ::='"), Q42_EARG;
		l = name_len_at(p, p->pos);
		r.name_off = (uint32_t)p->pos;
		r.name_len = (uint32_t)l;
		for (size_t i = 0; i < p->rules.len / sizeof r; i++)
			if (RULES(p)[i].name_len == l &&
			    memcmp(p->s + RULES(p)[i].name_off, p->s + p->pos, l) == 0)
				return perr(p, "rule defined twice"), Q42_EARG;
		p->pos += l;
		skip_ws(p);
		p->pos += 3;
		r.body = parse_alt(p, 0);
		if (r.body < 0)
			return p->err->rc ? p->err->rc : Q42_EARG;
		if (!q42_buf_append(&p->rules, &r, sizeof r))
			return q42_err_set(p->err, Q42_ENOMEM, "%s: out of memory", p->name);
		skip_ws(p);
	}
	if (p->nodes.failed || p->strs.failed || p->classes.failed)
		return q42_err_set(p->err, Q42_ENOMEM, "%s: out of memory", p->name);
	return Q42_OK;
}

/* ---- NFA ---- */

static int32_t new_state(struct parser *p, enum skind k, int32_t o1, int32_t o2, uint32_t c)
{
	struct nst s = {k, o1, o2, c};
	if (p->states.len / sizeof s >= Q42_GRAMMAR_MAX_NFA || !q42_buf_append(&p->states, &s, sizeof s))
		return -1;
	return (int32_t)(p->states.len / sizeof s - 1);
}

struct frag {
	int32_t start, end; /* end: an EPS state with free outs */
};

static int build(struct parser *p, int32_t id, uint32_t depth, struct frag *f);

static int nfa_fail(struct parser *p)
{
	return q42_err_set(p->err, Q42_EARG, "%s: the grammar expands to more than %u states",
			   p->name, Q42_GRAMMAR_MAX_NFA);
}

static int32_t byte_class(struct parser *p, uint8_t b)
{
	if (p->single[b] < 0) {
		struct cls k = {{0}};
		k.bits[b >> 6] |= 1ull << (b & 63);
		p->single[b] = new_class(p, &k);
	}
	return p->single[b];
}

static int build(struct parser *p, int32_t id, uint32_t depth, struct frag *f)
{
	struct node nd = NODES(p)[id];
	int rc;
	if (depth > Q42_GRAMMAR_MAX_DEPTH * 4)
		return q42_err_set(p->err, Q42_EARG, "%s:%u:%u: rules nested too deeply", p->name,
				   nd.line, nd.col);
	switch (nd.kind) {
	case N_CLASS:
	case N_STR: {
		int32_t s = new_state(p, S_EPS, -1, -1, 0), cur = s;
		uint32_t cnt = nd.kind == N_CLASS ? 1 : nd.n;
		if (s < 0)
			return nfa_fail(p);
		for (uint32_t i = 0; i < cnt; i++) {
			int32_t c = nd.kind == N_CLASS ? (int32_t)nd.a
				    : byte_class(p, (uint8_t)p->strs.data[nd.a + i]);
			int32_t nx = new_state(p, S_EPS, -1, -1, 0);
			if (c < 0 || nx < 0)
				return nfa_fail(p);
			STATES(p)[cur].kind = S_CLASS;
			STATES(p)[cur].cls = (uint32_t)c;
			STATES(p)[cur].out1 = nx;
			cur = nx;
		}
		f->start = s;
		f->end = cur;
		return Q42_OK;
	}
	case N_SEQ: {
		struct frag a;
		bool have = false;
		for (int32_t c = nd.first; c >= 0; c = NODES(p)[c].next) {
			struct frag b;
			if ((rc = build(p, c, depth + 1, &b)) != Q42_OK)
				return rc;
			if (!have) {
				a = b;
				have = true;
			} else {
				STATES(p)[a.end].out1 = b.start;
				a.end = b.end;
			}
		}
		*f = a;
		return Q42_OK;
	}
	case N_ALT: {
		int32_t end = new_state(p, S_EPS, -1, -1, 0), prev_split = -1;
		if (end < 0)
			return nfa_fail(p);
		f->start = -1;
		for (int32_t c = nd.first; c >= 0; c = NODES(p)[c].next) {
			struct frag b;
			int32_t split;
			if ((rc = build(p, c, depth + 1, &b)) != Q42_OK)
				return rc;
			STATES(p)[b.end].out1 = end;
			split = new_state(p, S_EPS, b.start, -1, 0);
			if (split < 0)
				return nfa_fail(p);
			if (prev_split < 0)
				f->start = split;
			else
				STATES(p)[prev_split].out2 = split;
			prev_split = split;
		}
		f->end = end;
		return Q42_OK;
	}
	case N_REP: {
		struct frag b;
		int32_t s, e;
		if ((rc = build(p, nd.first, depth + 1, &b)) != Q42_OK)
			return rc;
		e = new_state(p, S_EPS, -1, -1, 0);
		if (e < 0)
			return nfa_fail(p);
		if (nd.min == 1) { /* + */
			s = b.start;
			STATES(p)[b.end].out1 = b.start;
			STATES(p)[b.end].out2 = e;
		} else {
			s = new_state(p, S_EPS, b.start, e, 0);
			if (s < 0)
				return nfa_fail(p);
			STATES(p)[b.end].out1 = nd.max == 1 ? e : s;
		}
		f->start = s;
		f->end = e;
		return Q42_OK;
	}
	case N_REF: {
		struct rule *r = NULL;
		size_t nr = p->rules.len / sizeof *r;
		for (size_t i = 0; i < nr; i++)
			if (RULES(p)[i].name_len == nd.n &&
			    memcmp(p->s + RULES(p)[i].name_off, p->s + nd.a, nd.n) == 0)
				r = &RULES(p)[i];
		if (r == NULL)
			return q42_err_set(p->err, Q42_EARG, "%s:%u:%u: undefined rule '%.*s'", p->name,
					   nd.line, nd.col, (int)nd.n, p->s + nd.a);
		if (r->busy)
			return q42_err_set(p->err, Q42_EARG,
					   "%s:%u:%u: rule '%.*s' refers to itself (recursion is not "
					   "allowed: the grammar must be regular)",
					   p->name, nd.line, nd.col, (int)nd.n, p->s + nd.a);
		r->busy = 1;
		rc = build(p, r->body, depth + 1, f);
		/* the buffer may have moved: find the rule again by index */
		RULES(p)[r - RULES(p)].busy = 0;
		return rc;
	}
	}
	return Q42_EARG;
}

/* ---- DFA ---- */

struct dfa_build {
	const struct nst *st;
	const struct cls *cls;
	uint32_t n_st;
	int32_t accept_state;
	uint32_t *mark, gen;
	int32_t *stack;
	q42_buf keys;    /* concatenated sorted important-state lists */
	q42_buf key_off; /* uint32 offset, uint32 length per DFA state */
	int32_t *hash;   /* open addressing, DFA ids, -1 empty */
	uint32_t hash_cap;
	uint32_t n_dfa;
	int32_t *list;   /* scratch: important states of one set */
	uint64_t work;   /* NFA states visited so far: the construction's cost */
};

static uint64_t key_hash(const int32_t *k, uint32_t n)
{
	uint64_t h = 1469598103934665603ull ^ n;
	for (uint32_t i = 0; i < n; i++)
		h = (h ^ (uint32_t)k[i]) * 1099511628211ull;
	return h;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* Closure of the seeds already in list[0..n) (marked); returns the number
 * of important states (CLASS states and the accept state), sorted. */
static uint32_t closure(struct dfa_build *d, uint32_t n_seed)
{
	uint32_t sp = 0, n = 0;
	for (uint32_t i = 0; i < n_seed; i++)
		d->stack[sp++] = d->list[i];
	while (sp > 0) {
		int32_t s = d->stack[--sp];
		const struct nst *x = &d->st[s];
		d->work++;
		if (x->kind == S_CLASS || s == d->accept_state)
			d->list[n++] = s;
		if (x->kind == S_EPS) {
			int32_t o[2] = {x->out1, x->out2};
			for (int k = 0; k < 2; k++)
				if (o[k] >= 0 && d->mark[o[k]] != d->gen) {
					d->mark[o[k]] = d->gen;
					d->stack[sp++] = o[k];
				}
		}
	}
	qsort(d->list, n, sizeof *d->list, cmp_i32);
	return n;
}

/* DFA id of the set list[0..n); adds it when new; -1 when too many. */
static int32_t intern(struct dfa_build *d, uint32_t n)
{
	uint64_t h = key_hash(d->list, n);
	uint32_t i = (uint32_t)h & (d->hash_cap - 1);
	for (;; i = (i + 1) & (d->hash_cap - 1)) {
		int32_t id = d->hash[i];
		const uint32_t *ko;
		if (id < 0)
			break;
		ko = (const uint32_t *)d->key_off.data + 2 * id;
		if (ko[1] == n &&
		    memcmp((const int32_t *)d->keys.data + ko[0], d->list, n * sizeof(int32_t)) == 0)
			return id;
	}
	if (d->n_dfa >= Q42_GRAMMAR_MAX_DFA)
		return -1;
	uint32_t ko[2] = {(uint32_t)(d->keys.len / sizeof(int32_t)), n};
	q42_buf_append(&d->keys, d->list, n * sizeof(int32_t));
	q42_buf_append(&d->key_off, ko, sizeof ko);
	d->hash[i] = (int32_t)d->n_dfa;
	return (int32_t)d->n_dfa++;
}

/* Spreads live (set on the accepting states) to every state that reaches
 * one, backwards over the transitions gt (n_dfa x n_grp): predecessor lists
 * and a worklist visit each transition once. Sweeping the states until
 * nothing changed was quadratic in them (a literal of 8,100 distinct-class
 * bytes: 3 s). False when out of memory. */
static bool mark_live(const int32_t *gt, uint32_t n_dfa, uint32_t n_grp, uint8_t *live)
{
	const size_t n_edge = (size_t)n_dfa * n_grp;
	uint32_t *first = calloc((size_t)n_dfa + 1, sizeof *first);
	uint32_t *pred = malloc(n_edge * sizeof *pred);
	uint32_t *todo = malloc((size_t)n_dfa * sizeof *todo);
	uint32_t top = 0;
	bool ok = first != NULL && pred != NULL && todo != NULL;

	if (ok) {
		for (size_t e = 0; e < n_edge; e++)
			if (gt[e] >= 0)
				first[gt[e] + 1]++;
		for (uint32_t q = 0; q < n_dfa; q++) {
			first[q + 1] += first[q];
			todo[q] = first[q]; /* the next free slot of q's list */
		}
		for (size_t e = 0; e < n_edge; e++)
			if (gt[e] >= 0)
				pred[todo[gt[e]]++] = (uint32_t)(e / n_grp);
		for (uint32_t q = 0; q < n_dfa; q++)
			if (live[q])
				todo[top++] = q;
		while (top > 0) {
			uint32_t t = todo[--top];
			for (uint32_t i = first[t]; i < first[t + 1]; i++)
				if (!live[pred[i]]) {
					live[pred[i]] = 1;
					todo[top++] = pred[i];
				}
		}
	}
	free(first);
	free(pred);
	free(todo);
	return ok;
}

static int determinize(struct parser *p, struct frag whole, q42_grammar *g)
{
	struct dfa_build d = {0};
	int32_t grp[256], rep[256];
	uint32_t n_grp = 1;
	uint8_t *live = NULL;
	int32_t *gt = NULL; /* per DFA state, per group */
	uint32_t gt_cap = 0;
	int rc = Q42_OK;
	const uint32_t n_cls = (uint32_t)(p->classes.len / sizeof(struct cls));

	d.st = STATES(p);
	d.cls = CLASSES(p);
	d.n_st = (uint32_t)(p->states.len / sizeof(struct nst));
	d.accept_state = whole.end;
	d.mark = calloc(d.n_st, sizeof *d.mark);
	d.stack = malloc(d.n_st * sizeof *d.stack);
	d.list = malloc(d.n_st * sizeof *d.list);
	d.hash_cap = 4 * Q42_GRAMMAR_MAX_DFA;
	d.hash = malloc(d.hash_cap * sizeof *d.hash);
	q42_buf_init(&d.keys);
	q42_buf_init(&d.key_off);
	if (!d.mark || !d.stack || !d.list || !d.hash) {
		rc = q42_err_set(p->err, Q42_ENOMEM, "%s: out of memory", p->name);
		goto done;
	}
	memset(d.hash, 0xff, d.hash_cap * sizeof *d.hash);

	/* bytes that no class tells apart share a group */
	memset(grp, 0, sizeof grp);
	for (uint32_t c = 0; c < n_cls; c++) {
		int32_t map[512];
		uint32_t ng = 0;
		memset(map, 0xff, sizeof map);
		for (int b = 0; b < 256; b++) {
			int in = (d.cls[c].bits[b >> 6] >> (b & 63)) & 1;
			int k = grp[b] * 2 + in;
			if (map[k] < 0)
				map[k] = (int32_t)ng++;
			grp[b] = map[k];
		}
		n_grp = ng;
	}
	memset(rep, 0xff, sizeof rep);
	for (int b = 0; b < 256; b++) {
		if (rep[grp[b]] < 0)
			rep[grp[b]] = b;
		g->cls[b] = (uint8_t)grp[b]; /* at most 256 classes */
	}

	d.gen = 1;
	d.mark[whole.start] = d.gen;
	d.list[0] = whole.start;
	g->start = intern(&d, closure(&d, 1));
	for (uint32_t q = 0; q < d.n_dfa; q++) {
		if (gt_cap < d.n_dfa * n_grp) {
			gt_cap = Q42_GRAMMAR_MAX_DFA * n_grp;
			gt = realloc(gt, gt_cap * sizeof *gt);
			if (gt == NULL) {
				rc = q42_err_set(p->err, Q42_ENOMEM, "%s: out of memory", p->name);
				goto done;
			}
		}
		for (uint32_t c = 0; c < n_grp; c++) {
			const uint32_t *ko = (const uint32_t *)d.key_off.data + 2 * q;
			const int b = rep[c];
			uint32_t n = 0;
			d.gen++;
			/* the cost is bounded as the size is */
			d.work += ko[1];
			if (d.work > Q42_GRAMMAR_MAX_WORK) {
				rc = q42_err_set(p->err, Q42_EARG,
						 "%s: the grammar is too complex: building its automaton visits more than %u states",
						 p->name, Q42_GRAMMAR_MAX_WORK);
				goto done;
			}
			for (uint32_t i = 0; i < ko[1]; i++) {
				int32_t s = ((const int32_t *)d.keys.data)[ko[0] + i];
				const struct nst *x = &d.st[s];
				if (x->kind == S_CLASS && ((d.cls[x->cls].bits[b >> 6] >> (b & 63)) & 1) &&
				    d.mark[x->out1] != d.gen) {
					d.mark[x->out1] = d.gen;
					d.list[n++] = x->out1;
				}
			}
			if (n == 0) {
				gt[q * n_grp + c] = -1;
				continue;
			}
			int32_t t = intern(&d, closure(&d, n));
			if (t < 0) {
				rc = q42_err_set(p->err, Q42_EARG, "%s: the grammar needs more than %u states",
						 p->name, Q42_GRAMMAR_MAX_DFA);
				goto done;
			}
			gt[q * n_grp + c] = t;
		}
		if (d.keys.failed || d.key_off.failed) {
			rc = q42_err_set(p->err, Q42_ENOMEM, "%s: out of memory", p->name);
			goto done;
		}
	}

	/* live: a complete sentence can still be reached */
	g->n_dfa = d.n_dfa;
	g->accept = calloc(d.n_dfa, 1);
	g->trans = malloc((size_t)d.n_dfa * 256 * sizeof *g->trans);
	live = calloc(d.n_dfa, 1);
	if (!g->accept || !g->trans || !live) {
		rc = q42_err_set(p->err, Q42_ENOMEM, "%s: out of memory", p->name);
		goto done;
	}
	for (uint32_t q = 0; q < d.n_dfa; q++) {
		const uint32_t *ko = (const uint32_t *)d.key_off.data + 2 * q;
		const int32_t *k = (const int32_t *)d.keys.data + ko[0];
		for (uint32_t i = 0; i < ko[1]; i++)
			if (k[i] == d.accept_state)
				g->accept[q] = live[q] = 1;
	}
	if (!mark_live(gt, d.n_dfa, n_grp, live)) {
		rc = q42_err_set(p->err, Q42_ENOMEM, "%s: out of memory", p->name);
		goto done;
	}
	if (!live[g->start]) {
		rc = q42_err_set(p->err, Q42_EARG, "%s: the grammar matches no text", p->name);
		goto done;
	}
	for (uint32_t q = 0; q < d.n_dfa; q++) {
		bool any = false;
		for (int b = 0; b < 256; b++) {
			int32_t t = gt[q * n_grp + (uint32_t)grp[b]];
			g->trans[(size_t)q * 256 + (size_t)b] = t >= 0 && live[t] ? t : -1;
			any |= t >= 0 && live[t];
		}
		if (g->accept[q] && !any)
			g->accept[q] = 2;
	}
done:
	free(d.mark);
	free(d.stack);
	free(d.list);
	free(d.hash);
	free(gt);
	free(live);
	q42_buf_free(&d.keys);
	q42_buf_free(&d.key_off);
	return rc;
}

int q42_grammar_compile(q42_grammar **out, const char *src, size_t n, const char *name,
			q42_err *err)
{
	struct parser p = {0};
	struct frag whole;
	q42_grammar *g = NULL;
	int rc;

	*out = NULL;
	if (n > Q42_GRAMMAR_MAX_BYTES)
		return q42_err_set(err, Q42_EARG, "%s: %zu bytes, the limit is %u", name, n,
				   Q42_GRAMMAR_MAX_BYTES);
	p.s = src;
	p.n = n;
	p.line = 1;
	p.name = name;
	p.err = err;
	memset(p.single, 0xff, sizeof p.single);
	q42_buf_init(&p.nodes);
	q42_buf_init(&p.rules);
	q42_buf_init(&p.strs);
	q42_buf_init(&p.classes);
	q42_buf_init(&p.states);
	err->rc = 0;
	rc = parse_rules(&p);
	if (rc != Q42_OK)
		goto done;
	RULES(&p)[0].busy = 1;
	rc = build(&p, RULES(&p)[0].body, 0, &whole);
	if (rc != Q42_OK)
		goto done;
	if (p.states.failed || p.classes.failed) {
		rc = q42_err_set(err, Q42_ENOMEM, "%s: out of memory", name);
		goto done;
	}
	g = calloc(1, sizeof *g);
	if (g == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "%s: out of memory", name);
		goto done;
	}
	rc = determinize(&p, whole, g);
	if (rc != Q42_OK)
		goto done;
	*out = g;
	g = NULL;
done:
	q42_grammar_free(g);
	q42_buf_free(&p.nodes);
	q42_buf_free(&p.rules);
	q42_buf_free(&p.strs);
	q42_buf_free(&p.classes);
	q42_buf_free(&p.states);
	return rc;
}

void q42_grammar_free(q42_grammar *g)
{
	if (g == NULL)
		return;
	free(g->trans);
	free(g->accept);
	free(g);
}

int32_t q42_grammar_start(const q42_grammar *g) { return g->start; }

int32_t q42_grammar_next(const q42_grammar *g, int32_t state, uint8_t b)
{
	return state < 0 ? -1 : g->trans[(size_t)state * 256 + b];
}

bool q42_grammar_accepting(const q42_grammar *g, int32_t state)
{
	return state >= 0 && g->accept[state] != 0;
}

bool q42_grammar_final(const q42_grammar *g, int32_t state)
{
	return state >= 0 && g->accept[state] == 2;
}

uint32_t q42_grammar_n_states(const q42_grammar *g) { return g->n_dfa; }

uint8_t q42_grammar_byte_class(const q42_grammar *g, uint8_t b) { return g->cls[b]; }

const char *q42_grammar_quin_source(void)
{
	/* A quin line as q42-policy(5), QUINS, defines it, with all five terms
	 * and single spaces or tabs between them; \u escapes and every IRI
	 * character N-Triples allows, written as bytes. */
	return "quin       ::= subject ws predicate ws object ws graph ws provenance ws? \".\"\n"
	       "subject    ::= iri | bnode\n"
	       "predicate  ::= iri\n"
	       "object     ::= iri | bnode | literal\n"
	       "graph      ::= iri | bnode\n"
	       "provenance ::= iri | bnode | literal\n"
	       "ws         ::= [ \\t]+\n"
	       "iri        ::= \"<\" [a-zA-Z] [a-zA-Z0-9+.\\-]* \":\" (ichar | uchar)* \">\"\n"
	       "ichar      ::= [^\\x00-\\x20<>\"{}|^`\\\\]\n"
	       "bnode      ::= \"_:\" [a-zA-Z0-9_] ([a-zA-Z0-9_\\-] | \".\"+ [a-zA-Z0-9_\\-])*\n"
	       "literal    ::= \"\\\"\" ([^\"\\\\\\n\\r] | echar | uchar)* \"\\\"\" (lang | \"^^\" iri)?\n"
	       "lang       ::= \"@\" [a-zA-Z]+ (\"-\" [a-zA-Z0-9]+)*\n"
	       "echar      ::= \"\\\\\" [tbnrf\"'\\\\]\n"
	       "uchar      ::= \"\\\\u\" hex hex hex hex | \"\\\\U\" hex hex hex hex hex hex hex hex\n"
	       "hex        ::= [0-9A-Fa-f]\n";
}
