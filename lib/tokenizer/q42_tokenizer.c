/* q42_tokenizer.c -- text <-> token ids with llama.cpp's rules.
 *
 * Owns the tokenizer built from a q42_vocab: token attributes (the GGUF
 * token types plus llama.cpp's text-based detection of end-of-generation
 * and FIM tokens), the special-token partition of the input, the
 * SentencePiece score merges ("llama"), the BPE rank merges ("gpt2",
 * split first by q42_pretok.c, byte-level or, for gemma4's pre-tokenizer,
 * on raw UTF-8 with U+2581 for spaces), WordPiece ("bert"), Unigram ("t5",
 * in q42_ugm.c), and detokenization. The rules are
 * those of llama.cpp's llama-vocab.cpp (read for facts only). A vocab this
 * file cannot honour exactly is refused at open with a message; it never
 * falls back to another tokenization. It never prints and never writes to
 * the vocab.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include "tokenizer/q42_tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer/q42_pretok.h"
#include "tokenizer/q42_ugm.h"
#include "tokenizer/q42_unicode.h"

/* Token attributes, the bits of llama.cpp's llama_token_attr. */
enum {
	A_UNKNOWN = 1 << 0,
	A_UNUSED = 1 << 1,
	A_NORMAL = 1 << 2,
	A_CONTROL = 1 << 3,
	A_USER_DEFINED = 1 << 4,
	A_BYTE = 1 << 5,
	A_LSTRIP = 1 << 7,
	A_RSTRIP = 1 << 8,
};

enum tk_kind { TK_SPM, TK_BPE, TK_WPM, TK_UGM };

typedef struct merge_slot {
	int32_t left, right; /* token ids; left < 0 marks an empty slot */
	int32_t rank;
	int32_t result;      /* id of left+right, or -1 when that is no token */
} merge_slot;

typedef struct fragment {
	int32_t tok;         /* special token id, or -1 for raw text */
	size_t off, len;
} fragment;

typedef struct frag_vec {
	fragment *v;
	size_t n, cap;
} frag_vec;

struct q42_tokenizer {
	int kind;
	q42_pretok_info pre;
	uint32_t n;
	q42_str *text;          /* token texts; empty ones renamed "[EMPTY_i]" */
	char *renamed;          /* storage of those names */
	uint16_t *attr;
	const float *score;     /* NULL: all 0 */
	uint32_t *slot;         /* text -> id + 1, open addressing */
	uint64_t slot_mask;
	merge_slot *merge;      /* (left, right) -> rank, BPE only */
	uint64_t merge_mask;
	int32_t byte_tok[256];  /* SPM: byte fallback token; BPE: the byte's own token */
	uint8_t bytechar[256][2]; /* BPE: byte -> its printable stand-in (UTF-8) */
	uint8_t bytechar_len[256];
	int16_t unbyte[324];    /* BPE: stand-in codepoint -> byte, -1 if none */
	int32_t *special;       /* control/user-defined/unknown ids, longest text first */
	uint32_t n_special;
	uint8_t *eog;
	int32_t bos, eos, eot, eom, unk, sep;
	bool add_bos, add_eos, add_space_prefix;
	uint32_t max_token_len; /* WPM: the longest token text, in bytes */
	bool no_default_ids;    /* gemma4: every special id comes from the file */
	uint64_t *piece_off;    /* n + 1 offsets into piece_data */
	uint8_t *piece_data;    /* each token rendered with specials shown */
	q42_ugm *ugm;           /* UGM only */
};

/* ---- hashing ------------------------------------------------------------ */

static uint64_t hash_bytes(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

#define HASH_SEED 0xcbf29ce484222325ull

static uint64_t hash_final(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

/* Open addressing with linear probing, filled to at most half (the text
 * index, 4 bytes a slot) or three quarters (the merge table, 16 bytes a
 * slot: llama-3's 280147 merges take 8 MiB instead of 16 MiB of resident
 * memory; its 128256 tokens still leave it half empty). */
static uint64_t table_size(uint64_t n, uint64_t load_num, uint64_t load_den)
{
	uint64_t s = 16;
	while (s * load_num < n * load_den)
		s <<= 1;
	return s;
}

/* Id of the token whose text is a followed by b (b may be empty), or -1. */
static int32_t lookup2(const q42_tokenizer *t, const uint8_t *a, size_t alen, const uint8_t *b,
		       size_t blen)
{
	uint64_t h = hash_final(hash_bytes(hash_bytes(HASH_SEED, a, alen), b, blen));
	for (uint64_t i = h & t->slot_mask;; i = (i + 1) & t->slot_mask) {
		uint32_t s = t->slot[i];
		const q42_str *x;
		if (s == 0)
			return -1;
		x = &t->text[s - 1];
		if (x->len == alen + blen && memcmp(x->p, a, alen) == 0 &&
		    (blen == 0 || memcmp(x->p + alen, b, blen) == 0))
			return (int32_t)(s - 1);
	}
}

static int32_t lookup(const q42_tokenizer *t, const void *p, size_t n)
{
	return lookup2(t, p, n, NULL, 0);
}

static int32_t lookup_cstr(const q42_tokenizer *t, const char *s)
{
	return lookup(t, s, strlen(s));
}

static uint64_t pair_hash(int32_t l, int32_t r)
{
	uint64_t x = ((uint64_t)(uint32_t)l << 32) | (uint32_t)r;
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	x ^= x >> 29;
	return x;
}

static const merge_slot *merge_find(const q42_tokenizer *t, int32_t l, int32_t r)
{
	for (uint64_t i = pair_hash(l, r) & t->merge_mask;; i = (i + 1) & t->merge_mask) {
		const merge_slot *m = &t->merge[i];
		if (m->left < 0)
			return NULL;
		if (m->left == l && m->right == r)
			return m;
	}
}

/* ---- open ---------------------------------------------------------------- */

static bool str_is(q42_str s, const char *c)
{
	size_t n = strlen(c);
	return s.len == n && memcmp(s.p, c, n) == 0;
}

static bool str_has(q42_str s, const char *c)
{
	size_t n = strlen(c);
	if (n > s.len)
		return false;
	for (uint64_t i = 0; i + n <= s.len; i++)
		if (memcmp(s.p + i, c, n) == 0)
			return true;
	return false;
}

static int build_text(q42_tokenizer *t, const q42_vocab *v, q42_err *err)
{
	size_t extra = 0, used = 0;
	t->text = calloc(t->n, sizeof *t->text);
	if (t->text == NULL)
		return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
	for (uint32_t i = 0; i < t->n; i++) {
		if (v->tokens[i].len == 0)
			extra += 20;
		else if (v->tokens[i].p == NULL || v->tokens[i].len > UINT32_MAX)
			return q42_err_set(err, Q42_EFORMAT, "tokenizer: token %u has no valid text", i);
		t->text[i] = v->tokens[i];
	}
	if (extra == 0)
		return Q42_OK;
	/* llama.cpp names an empty token "[EMPTY_<id>]"; so do we, or its
	 * text would collide with nothing and could never be decoded. */
	t->renamed = malloc(extra);
	if (t->renamed == NULL)
		return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
	for (uint32_t i = 0; i < t->n; i++) {
		if (v->tokens[i].len != 0)
			continue;
		int w = snprintf(t->renamed + used, extra - used, "[EMPTY_%u]", i);
		t->text[i].p = t->renamed + used;
		t->text[i].len = (uint64_t)w;
		used += (size_t)w;
	}
	return Q42_OK;
}

static int build_index(q42_tokenizer *t, q42_err *err)
{
	uint64_t size = table_size(t->n, 1, 2);
	t->slot = calloc(size, sizeof *t->slot);
	if (t->slot == NULL)
		return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
	t->slot_mask = size - 1;
	for (uint32_t id = 0; id < t->n; id++) {
		const q42_str *s = &t->text[id];
		uint64_t h = hash_final(hash_bytes(HASH_SEED, (const uint8_t *)s->p, s->len));
		uint64_t i = h & t->slot_mask;
		for (; t->slot[i] != 0; i = (i + 1) & t->slot_mask) {
			const q42_str *x = &t->text[t->slot[i] - 1];
			if (x->len == s->len && memcmp(x->p, s->p, s->len) == 0)
				return q42_err_set(err, Q42_EFORMAT,
						   "tokenizer: tokens %u and %u have the same text '%.*s'",
						   t->slot[i] - 1, id, (int)(s->len > 64 ? 64 : s->len),
						   s->p);
		}
		t->slot[i] = id + 1;
	}
	return Q42_OK;
}

static void init_attrs(q42_tokenizer *t, const q42_vocab *v)
{
	for (uint32_t i = 0; i < t->n; i++) {
		uint16_t a = A_NORMAL;
		if (v->types != NULL) {
			switch (v->types[i]) {
			case Q42_TOK_NORMAL: a = A_NORMAL; break;
			case Q42_TOK_UNKNOWN: a = A_UNKNOWN; break;
			case Q42_TOK_CONTROL: a = A_CONTROL; break;
			case Q42_TOK_USER_DEFINED: a = A_USER_DEFINED; break;
			case Q42_TOK_UNUSED: a = A_UNUSED; break;
			case Q42_TOK_BYTE: a = A_BYTE; break;
			default: a = 0; break;
			}
		}
		t->attr[i] = a;
	}
}

/* Lowest id among the tokens named in list (NULL-terminated), or -1. */
static int32_t find_named(const q42_tokenizer *t, const char *const *list)
{
	int32_t best = -1;
	for (size_t i = 0; list[i] != NULL; i++) {
		int32_t id = lookup_cstr(t, list[i]);
		if (id >= 0 && (best < 0 || id < best))
			best = id;
	}
	return best;
}

static const char *const eot_names[] = {
	"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
	"<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>",
	"<end_of_utterance>", NULL};
static const char *const eom_names[] = {"<|eom_id|>", NULL};
static const char *const fim_pre_names[] = {
	"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\xef\xbd\x9c" "fim\xe2\x96\x81" "begin\xef\xbd\x9c>",
	"<PRE>", "\xe2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>", NULL};
static const char *const fim_suf_names[] = {
	"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\xef\xbd\x9c" "fim\xe2\x96\x81hole\xef\xbd\x9c>",
	"<SUF>", "\xe2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>", NULL};
static const char *const fim_mid_names[] = {
	"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\xef\xbd\x9c" "fim\xe2\x96\x81" "end\xef\xbd\x9c>",
	"<MID>", "\xe2\x96\x81<MID>", "<|code_middle|>", "<|middle|>", NULL};
static const char *const fim_pad_names[] = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]", NULL};
static const char *const fim_rep_names[] = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>",
					    "<reponame>", NULL};
static const char *const fim_sep_names[] = {"<|file_sep|>", NULL};
static const char *const eog_names[] = {
	"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
	"<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
	"<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
	"<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>", "[e~[", NULL};
static const char *const always_user_defined[] = {"<|channel|>", "<|message|>", "<|start|>",
						  "<|constrain|>", NULL};

/* llama.cpp's text-based detection: EOT/EOM/FIM tokens become control
 * tokens, and the end-of-generation set is built from ids and names. */
static void detect_specials(q42_tokenizer *t)
{
	const char *const *fim[] = {fim_pre_names, fim_suf_names, fim_mid_names,
				    fim_pad_names, fim_rep_names, fim_sep_names};
	int32_t fim_id[6];
	int32_t id;

	if (t->eot < 0) {
		t->eot = find_named(t, eot_names);
		if (t->eot >= 0)
			t->attr[t->eot] |= A_CONTROL;
	}
	if (t->eom < 0) {
		t->eom = find_named(t, eom_names);
		if (t->eom >= 0)
			t->attr[t->eom] |= A_CONTROL;
	}
	for (size_t i = 0; i < 6; i++) {
		fim_id[i] = find_named(t, fim[i]);
		if (fim_id[i] >= 0)
			t->attr[fim_id[i]] |= A_CONTROL;
	}
	for (size_t i = 3; i < 6; i++)
		if (fim_id[i] >= 0)
			t->eog[fim_id[i]] = 1;
	for (size_t i = 0; eog_names[i] != NULL; i++) {
		id = lookup_cstr(t, eog_names[i]);
		if (id >= 0) {
			t->eog[id] = 1;
			t->attr[id] |= A_CONTROL;
		}
	}
	for (size_t i = 0; always_user_defined[i] != NULL; i++) {
		id = lookup_cstr(t, always_user_defined[i]);
		if (id >= 0)
			t->attr[id] = A_USER_DEFINED;
	}
	if (t->eos >= 0)
		t->eog[t->eos] = 1;
	if (t->eot >= 0)
		t->eog[t->eot] = 1;
	if (t->eom >= 0)
		t->eog[t->eom] = 1;

	/* o200k_harmony and solar-open: "<|end|>" ends a message, not the
	 * generation, when "<|return|>"/"<|call|>" or "<|calls|>"/"<|flush|>"
	 * are there. */
	{
		int32_t ret = lookup_cstr(t, "<|return|>"), call = lookup_cstr(t, "<|call|>");
		int32_t calls = lookup_cstr(t, "<|calls|>"), flush = lookup_cstr(t, "<|flush|>");
		int32_t end = lookup_cstr(t, "<|end|>");
		bool has_call = (call >= 0 && t->eog[call]) || (calls >= 0 && t->eog[calls]);
		bool has_ret = ret >= 0 && t->eog[ret], has_flush = flush >= 0 && t->eog[flush];
		if (end >= 0 && t->eog[end] && has_call && (has_ret || has_flush)) {
			t->eog[end] = 0;
			t->attr[end] = A_USER_DEFINED;
		}
	}
	/* gemma4 and paddleocr: "</s>" is no end of generation next to
	 * "<|tool_response>". */
	{
		int32_t tr = lookup_cstr(t, "<|tool_response>"), s = lookup_cstr(t, "</s>");
		if (tr >= 0 && t->eog[tr] && s >= 0 && t->eog[s]) {
			t->eog[s] = 0;
			t->attr[s] = A_NORMAL;
		}
	}
}

typedef struct len_id {
	uint64_t len;
	int32_t id;
} len_id;

/* Longest text first; llama.cpp leaves ties in an unspecified order, we
 * take the lower id first. */
static int cmp_len_id(const void *a, const void *b)
{
	const len_id *x = a, *y = b;
	if (x->len != y->len)
		return x->len > y->len ? -1 : 1;
	return x->id < y->id ? -1 : (x->id > y->id);
}

static int build_special_cache(q42_tokenizer *t, q42_err *err)
{
	uint32_t n = 0;
	len_id *tmp;
	for (uint32_t i = 0; i < t->n; i++)
		if (t->attr[i] & (A_CONTROL | A_USER_DEFINED | A_UNKNOWN))
			n++;
	t->special = malloc((n ? n : 1) * sizeof *t->special);
	tmp = malloc((n ? n : 1) * sizeof *tmp);
	if (t->special == NULL || tmp == NULL) {
		free(tmp);
		return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
	}
	for (uint32_t i = 0; i < t->n; i++)
		if (t->attr[i] & (A_CONTROL | A_USER_DEFINED | A_UNKNOWN))
			tmp[t->n_special++] = (len_id){t->text[i].len, (int32_t)i};
	qsort(tmp, t->n_special, sizeof *tmp, cmp_len_id);
	for (uint32_t i = 0; i < t->n_special; i++)
		t->special[i] = tmp[i].id;
	free(tmp);
	return Q42_OK;
}

/* lstrip/rstrip: llama.cpp sets them from the model name, architecture
 * and pre-tokenizer, never from the file's token data. */
static void strip_attrs(q42_tokenizer *t, const q42_vocab *v, const q42_tokenizer_opts *o)
{
	q42_str name = o ? o->general_name : (q42_str){0};
	q42_str arch = o ? o->general_arch : (q42_str){0};
	char lname[256];
	q42_str ln;
	int32_t id;
	size_t k = name.len < sizeof lname ? (size_t)name.len : sizeof lname - 1;
	for (size_t i = 0; i < k; i++) {
		char c = name.p[i];
		lname[i] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
	}
	ln.p = lname;
	ln.len = k;
	if (str_has(v->pre, "jina-v2-de") || str_has(v->pre, "jina-v2-es") ||
	    str_has(v->pre, "jina-v2-code") || str_has(arch, "nomic-bert-moe") ||
	    str_has(arch, "jina-bert-v3")) {
		id = lookup_cstr(t, "<mask>");
		if (id >= 0)
			t->attr[id] |= A_LSTRIP;
	} else if (str_has(ln, "phi-3") || str_has(ln, "phi3")) {
		for (uint32_t i = 0; i < t->n_special; i++)
			t->attr[t->special[i]] |= A_RSTRIP;
		id = lookup_cstr(t, "</s>");
		if (id >= 0)
			t->attr[id] |= A_RSTRIP;
		static const char *const keep[] = {"<unk>", "<s>", "<|endoftext|>"};
		for (size_t i = 0; i < 3; i++) {
			id = lookup_cstr(t, keep[i]);
			if (id >= 0)
				t->attr[id] &= (uint16_t)~A_RSTRIP;
		}
	} else if (str_has(ln, "modern-bert")) {
		id = lookup_cstr(t, "[MASK]");
		if (id >= 0)
			t->attr[id] |= A_LSTRIP;
	}
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* "<0xHH>" -> HH, or -1. */
static int byte_token_value(q42_str s)
{
	int hi, lo;
	if (s.len != 6 || memcmp(s.p, "<0x", 3) != 0 || s.p[5] != '>')
		return -1;
	hi = hexval(s.p[3]);
	lo = hexval(s.p[4]);
	return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

/* GPT-2's byte <-> printable codepoint table: printable Latin-1 bytes stand
 * for themselves, the others map to U+0100 and up in byte order. */
static void build_bytechars(q42_tokenizer *t)
{
	uint32_t next = 256;
	for (int i = 0; i < 324; i++)
		t->unbyte[i] = -1;
	for (uint32_t b = 0; b < 256; b++) {
		bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) ||
				 (b >= 0xAE && b <= 0xFF);
		uint32_t cpt = printable ? b : next++;
		t->bytechar_len[b] = (uint8_t)q42_utf8_encode(cpt, t->bytechar[b]);
		t->unbyte[cpt] = (int16_t)b;
	}
}

static int build_merges(q42_tokenizer *t, const q42_vocab *v, q42_err *err)
{
	uint64_t size = table_size(v->n_merges, 3, 4);
	t->merge = malloc(size * sizeof *t->merge);
	if (t->merge == NULL)
		return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
	for (uint64_t i = 0; i < size; i++)
		t->merge[i].left = -1;
	t->merge_mask = size - 1;
	for (uint32_t r = 0; r < v->n_merges; r++) {
		q42_str m = v->merges[r];
		const uint8_t *p = (const uint8_t *)m.p;
		const uint8_t *sp = m.len > 1 ? memchr(p + 1, ' ', m.len - 1) : NULL;
		size_t a, b;
		int32_t l, rr;
		if (sp == NULL)
			return q42_err_set(err, Q42_EFORMAT,
					   "tokenizer: merge %u '%.*s' is not two tokens separated by a space",
					   r, (int)(m.len > 64 ? 64 : m.len), m.p);
		a = (size_t)(sp - p);
		b = m.len - a - 1;
		l = lookup(t, p, a);
		rr = lookup(t, sp + 1, b);
		if (l < 0 || rr < 0)
			return q42_err_set(err, Q42_EFORMAT,
					   "tokenizer: merge %u '%.*s' names %s that is not in the vocabulary",
					   r, (int)(m.len > 64 ? 64 : m.len), m.p,
					   l < 0 ? "a left token" : "a right token");
		for (uint64_t i = pair_hash(l, rr) & t->merge_mask;; i = (i + 1) & t->merge_mask) {
			merge_slot *s = &t->merge[i];
			if (s->left == l && s->right == rr)
				break; /* a repeated pair keeps its first (best) rank */
			if (s->left < 0) {
				s->left = l;
				s->right = rr;
				s->rank = (int32_t)r;
				s->result = lookup2(t, p, a, sp + 1, b);
				break;
			}
		}
	}
	return Q42_OK;
}

static void append_piece(q42_buf *b, const q42_tokenizer *t, int32_t id)
{
	q42_str s = t->text[id];
	uint16_t a = t->attr[id];
	if (a & (A_UNKNOWN | A_CONTROL | A_USER_DEFINED)) {
		q42_buf_append(b, s.p, s.len);
	} else if (a & A_NORMAL) {
		const uint8_t *p = (const uint8_t *)s.p;
		if (t->kind != TK_BPE || t->pre.escape_ws) { /* U+2581 is a space */
			for (uint64_t i = 0; i < s.len; i++) {
				if (i + 2 < s.len && p[i] == 0xE2 && p[i + 1] == 0x96 && p[i + 2] == 0x81) {
					q42_buf_u8(b, ' ');
					i += 2;
				} else {
					q42_buf_u8(b, p[i]);
				}
			}
			return;
		}
		for (size_t off = 0; off < s.len;) {
			uint32_t c = q42_utf8_decode(p, s.len, &off);
			if (c < 324 && t->unbyte[c] >= 0) {
				q42_buf_u8(b, (uint8_t)t->unbyte[c]);
			} else {
				/* llama.cpp's marker for a codepoint outside
				 * the byte table, text included. */
				uint8_t u[4];
				size_t k = q42_utf8_encode(c, u);
				q42_buf_printf(b, "[UNK_BYTE_0x");
				for (size_t j = 0; j < k; j++)
					q42_buf_printf(b, "%02x", u[j]);
				q42_buf_append(b, s.p, s.len);
				q42_buf_u8(b, ']');
			}
		}
	} else if (a & A_BYTE) {
		q42_buf_u8(b, (uint8_t)byte_token_value(s));
	}
}

static int build_pieces(q42_tokenizer *t, q42_err *err)
{
	q42_buf b;
	q42_buf_init(&b);
	/* Never a null piece_data, even when every piece is empty: the
	 * readers add an offset to it, and null + 0 is undefined. */
	q42_buf_reserve(&b, 1);
	t->piece_off = malloc(((size_t)t->n + 1) * sizeof *t->piece_off);
	if (t->piece_off == NULL)
		return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
	for (uint32_t i = 0; i < t->n; i++) {
		t->piece_off[i] = b.len;
		append_piece(&b, t, (int32_t)i);
	}
	t->piece_off[t->n] = b.len;
	if (b.failed) {
		q42_buf_free(&b);
		return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
	}
	t->piece_data = b.data;
	return Q42_OK;
}

/* Default special ids per model, as llama.cpp has them, then the file's. */
static void set_ids(q42_tokenizer *t, const q42_vocab *v)
{
	int32_t bos = -1, eos = -1, unk = -1;
	if (t->kind == TK_SPM) {
		bos = 1;
		eos = 2;
		unk = 0;
	} else if (t->kind == TK_WPM) {
		bos = 101; /* [CLS] */
		unk = 100;
	} else if (t->kind == TK_UGM) {
		eos = 1;
		unk = 2;
	} else if (!t->no_default_ids) {
		bos = t->pre.no_bos ? -1 : 11;
		eos = 11;
	}
	t->bos = bos >= 0 && (uint32_t)bos < t->n ? bos : -1;
	t->eos = eos >= 0 && (uint32_t)eos < t->n ? eos : -1;
	t->unk = unk >= 0 && (uint32_t)unk < t->n ? unk : -1;
	t->sep = t->kind == TK_WPM && 102 < t->n ? 102 : -1;
	if (v->sep >= 0 && (uint32_t)v->sep < t->n)
		t->sep = v->sep;
	t->eot = -1;
	t->eom = -1;
	if (v->bos >= 0 && (uint32_t)v->bos < t->n)
		t->bos = v->bos;
	if (v->eos >= 0 && (uint32_t)v->eos < t->n)
		t->eos = v->eos;
	if (v->unk >= 0 && (uint32_t)v->unk < t->n)
		t->unk = v->unk;
	if (v->eot >= 0 && (uint32_t)v->eot < t->n)
		t->eot = v->eot;
	if (v->eom >= 0 && (uint32_t)v->eom < t->n)
		t->eom = v->eom;
}

/* role holds the trie roles from the file's types; the zero-score role
 * (user-defined) is taken from the final attributes, as llama.cpp reads
 * them while it tokenizes. */
static int open_ugm(q42_tokenizer *t, const q42_vocab *v, uint8_t *role, q42_err *err)
{
	q42_ugm_opts uo;
	if (t->unk < 0)
		return q42_err_set(err, Q42_EFORMAT,
				   "tokenizer: t5 (Unigram) vocabulary without an unknown token "
				   "(tokenizer.ggml.unknown_token_id)");
	for (uint32_t i = 0; i < t->n; i++)
		if (t->attr[i] & A_USER_DEFINED)
			role[i] |= Q42_UGM_ZERO;
	uo = (q42_ugm_opts){
		.n = t->n,
		.text = t->text,
		.score = t->score,
		.role = role,
		.charsmap = (const uint8_t *)v->charsmap.p,
		.charsmap_len = (size_t)v->charsmap.len,
		.add_space_prefix = t->add_space_prefix,
		.remove_extra_whitespaces = v->remove_extra_whitespaces > 0,
		.unk = t->unk,
	};
	return q42_ugm_open(&t->ugm, &uo, err);
}

int q42_tokenizer_open_ex(q42_tokenizer **out, const q42_vocab *v, const q42_tokenizer_opts *o,
			  q42_err *err)
{
	q42_tokenizer *t;
	uint8_t *role = NULL;
	int rc;

	*out = NULL;
	if (v == NULL || v->n_tokens == 0 || v->tokens == NULL)
		return q42_err_set(err, Q42_EARG, "tokenizer: empty vocabulary");
	if (v->n_tokens > (uint32_t)INT32_MAX)
		return q42_err_set(err, Q42_EFORMAT, "tokenizer: %u tokens, at most %d supported",
				   v->n_tokens, INT32_MAX);
	t = calloc(1, sizeof *t);
	if (t == NULL)
		return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
	t->n = v->n_tokens;
	t->score = v->scores;

	if (str_is(v->model, "llama")) {
		t->kind = TK_SPM;
	} else if (str_is(v->model, "gpt2")) {
		t->kind = TK_BPE;
		if (!q42_pretok_lookup(v->pre.p, v->pre.len, &t->pre)) {
			rc = q42_err_set(err, Q42_EUNSUPPORTED,
					 "tokenizer: unknown or unsupported pre-tokenizer "
					 "tokenizer.ggml.pre='%.*s' (model gpt2)",
					 (int)(v->pre.len > 64 ? 64 : v->pre.len), v->pre.p ? v->pre.p : "");
			goto fail;
		}
		if (v->merges == NULL) {
			rc = q42_err_set(err, Q42_EFORMAT,
					 "tokenizer: gpt2 vocabulary without tokenizer.ggml.merges");
			goto fail;
		}
	} else if (str_is(v->model, "gemma4")) {
		/* BPE whatever tokenizer.ggml.pre says, as llama.cpp does */
		t->kind = TK_BPE;
		t->no_default_ids = true;
		q42_pretok_lookup("gemma4", 6, &t->pre);
		if (v->merges == NULL) {
			rc = q42_err_set(err, Q42_EFORMAT,
					 "tokenizer: gemma4 vocabulary without tokenizer.ggml.merges");
			goto fail;
		}
	} else if (str_is(v->model, "bert")) {
		t->kind = TK_WPM;
	} else if (str_is(v->model, "t5")) {
		t->kind = TK_UGM;
	} else {
		rc = q42_err_set(err, Q42_EUNSUPPORTED,
				 "tokenizer: unknown or unsupported tokenizer model "
				 "tokenizer.ggml.model='%.*s' (supported: llama, gpt2, gemma4, bert, t5)",
				 (int)(v->model.len > 64 ? 64 : v->model.len), v->model.p ? v->model.p : "");
		goto fail;
	}

	t->attr = calloc(t->n, sizeof *t->attr);
	t->eog = calloc(t->n, 1);
	if (t->attr == NULL || t->eog == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
		goto fail;
	}
	if ((rc = build_text(t, v, err)) != Q42_OK || (rc = build_index(t, err)) != Q42_OK)
		goto fail;
	init_attrs(t, v);
	for (uint32_t i = 0; i < t->n; i++) {
		if ((t->attr[i] & A_BYTE) && byte_token_value(t->text[i]) < 0) {
			rc = q42_err_set(err, Q42_EFORMAT,
					 "tokenizer: token %u has type byte but text '%.*s', expected <0xHH>",
					 i, (int)(t->text[i].len > 32 ? 32 : t->text[i].len), t->text[i].p);
			goto fail;
		}
	}

	if (t->kind == TK_SPM) {
		t->add_space_prefix = true;
		t->add_bos = true;
		t->add_eos = false;
		for (int b = 0; b < 256; b++) {
			char hex[7], one = (char)b;
			snprintf(hex, sizeof hex, "<0x%02X>", b);
			t->byte_tok[b] = lookup_cstr(t, hex);
			if (t->byte_tok[b] < 0)
				t->byte_tok[b] = lookup(t, &one, 1);
		}
	} else if (t->kind == TK_WPM) {
		/* [CLS] first and [SEP] last whenever specials are added
		 * (llama.cpp ignores add_bos and add_eos here) */
		t->add_bos = true;
		for (uint32_t i = 0; i < t->n; i++)
			if (t->text[i].len > t->max_token_len)
				t->max_token_len = (uint32_t)t->text[i].len;
	} else if (t->kind == TK_UGM) {
		t->add_space_prefix = false;
		t->add_bos = false;
		t->add_eos = true;
		role = malloc(t->n);
		if (role == NULL) {
			rc = q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
			goto fail;
		}
		/* llama.cpp builds its tries from the file's token types, before
		 * the name-based detection below changes any */
		for (uint32_t i = 0; i < t->n; i++) {
			uint16_t a = t->attr[i];
			role[i] = (uint8_t)(((a & (A_NORMAL | A_USER_DEFINED | A_UNUSED)) ? Q42_UGM_MATCH : 0) |
					    ((a & A_USER_DEFINED) ? Q42_UGM_PROTECT : 0) |
					    ((a & A_NORMAL) ? Q42_UGM_NORMAL : 0));
		}
	} else {
		t->add_space_prefix = false;
		t->add_bos = t->pre.add_bos == 1;
		t->add_eos = false;
		if (t->pre.escape_ws) {
			for (int b = 0; b < 256; b++) {
				char hex[7];
				snprintf(hex, sizeof hex, "<0x%02X>", b);
				t->byte_tok[b] = lookup_cstr(t, hex);
			}
		} else {
			build_bytechars(t);
			for (int b = 0; b < 256; b++)
				t->byte_tok[b] = lookup(t, t->bytechar[b], t->bytechar_len[b]);
		}
		if ((rc = build_merges(t, v, err)) != Q42_OK)
			goto fail;
	}
	if (v->add_space_prefix >= 0)
		t->add_space_prefix = v->add_space_prefix != 0;
	if (v->add_bos >= 0 && t->kind != TK_WPM)
		t->add_bos = v->add_bos != 0;
	if (v->add_eos >= 0 && t->kind != TK_WPM)
		t->add_eos = v->add_eos != 0;
	/* llama.cpp forces BOS for gemma4's pre-tokenizer (the one that
	 * escapes whitespace) */
	if (t->kind == TK_BPE && t->pre.escape_ws)
		t->add_bos = true;

	set_ids(t, v);
	detect_specials(t);
	if ((rc = build_special_cache(t, err)) != Q42_OK || (rc = build_pieces(t, err)) != Q42_OK)
		goto fail;
	if (t->kind == TK_UGM && (rc = open_ugm(t, v, role, err)) != Q42_OK)
		goto fail;
	strip_attrs(t, v, o);
	free(role);
	*out = t;
	return Q42_OK;
fail:
	free(role);
	q42_tokenizer_close(t);
	return rc;
}

int q42_tokenizer_open(q42_tokenizer **out, const q42_vocab *v, q42_err *err)
{
	return q42_tokenizer_open_ex(out, v, NULL, err);
}

void q42_tokenizer_close(q42_tokenizer *t)
{
	if (t == NULL)
		return;
	free(t->text);
	free(t->renamed);
	free(t->attr);
	free(t->slot);
	free(t->merge);
	free(t->special);
	free(t->eog);
	free(t->piece_off);
	free(t->piece_data);
	q42_ugm_close(t->ugm);
	free(t);
}

/* ---- tokens vector -------------------------------------------------------- */

bool q42_tokens_push(q42_tokens *tk, int32_t id)
{
	if (tk->n == tk->cap) {
		size_t cap = tk->cap ? tk->cap * 2 : 64;
		int32_t *p = realloc(tk->ids, cap * sizeof *p);
		if (p == NULL)
			return false;
		tk->ids = p;
		tk->cap = cap;
	}
	tk->ids[tk->n++] = id;
	return true;
}

void q42_tokens_free(q42_tokens *tk)
{
	free(tk->ids);
	tk->ids = NULL;
	tk->n = tk->cap = 0;
}

/* ---- special-token partition --------------------------------------------- */

static bool frag_push(frag_vec *f, int32_t tok, size_t off, size_t len)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 16;
		fragment *p = realloc(f->v, cap * sizeof *p);
		if (p == NULL)
			return false;
		f->v = p;
		f->cap = cap;
	}
	f->v[f->n++] = (fragment){tok, off, len};
	return true;
}

static bool c_isspace(uint8_t c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Split raw-text fragments at special-token texts, one token at a time,
 * longest first, each at every non-overlapping occurrence from the left
 * (llama.cpp's tokenizer_st_partition). Without parse_special only
 * user-defined tokens are matched. */
static bool partition(const q42_tokenizer *t, const uint8_t *text, size_t len, bool parse_special,
		      frag_vec *cur, frag_vec *next)
{
	bool present[256] = {false};
	for (size_t i = 0; i < len; i++)
		present[text[i]] = true;
	cur->n = 0;
	if (len == 0)
		return true;
	if (!frag_push(cur, -1, 0, len))
		return false;
	for (uint32_t s = 0; s < t->n_special; s++) {
		int32_t id = t->special[s];
		uint16_t a = t->attr[id];
		const uint8_t *tt = (const uint8_t *)t->text[id].p;
		size_t tl = (size_t)t->text[id].len;
		bool hit = false;
		if (!parse_special && (a & (A_CONTROL | A_UNKNOWN)))
			continue;
		if (!present[tt[0]])
			continue;
		next->n = 0;
		for (size_t i = 0; i < cur->n; i++) {
			fragment f = cur->v[i];
			size_t base = f.off, end = f.off + f.len;
			if (f.tok >= 0) {
				if (!frag_push(next, f.tok, f.off, f.len))
					return false;
				continue;
			}
			while (base < end) {
				const uint8_t *m = memmem(text + base, end - base, tt, tl);
				size_t at, left;
				if (m == NULL)
					break;
				hit = true;
				at = (size_t)(m - text);
				left = at - base;
				if (a & A_LSTRIP)
					while (left > 0 && c_isspace(text[base + left - 1]))
						left--;
				if (left > 0 && !frag_push(next, -1, base, left))
					return false;
				if (!frag_push(next, id, 0, 0))
					return false;
				base = at + tl;
				if (a & A_RSTRIP)
					while (base < end && c_isspace(text[base]))
						base++;
			}
			if (base < end && !frag_push(next, -1, base, end - base))
				return false;
		}
		if (hit) {
			frag_vec sw = *cur;
			*cur = *next;
			*next = sw;
		}
	}
	return true;
}

/* ---- SentencePiece --------------------------------------------------------- */

typedef struct sym {
	int32_t prev, next;
	int32_t id;         /* BPE: token id of the text, -1 if none */
	uint32_t start, n;  /* bytes (SPM) or symbols' text bytes (BPE) */
} sym;

typedef struct bigram {
	float score;        /* SPM */
	int32_t rank;       /* BPE */
	int32_t left, right;
	int32_t result;     /* BPE: id of the merged text, -1 if none */
	uint32_t size;
} bigram;

typedef struct work {
	sym *sym;
	size_t nsym, capsym;
	bigram *heap;
	size_t nheap, capheap;
	uint8_t *buf;
	size_t nbuf, capbuf;
	uint32_t *cp;
	size_t ncp, capcp;
	q42_u32vec words, tmp[2];
	frag_vec frag[2];
	q42_ugm_work ugm;
} work;

static void work_free(work *w)
{
	free(w->sym);
	free(w->heap);
	free(w->buf);
	free(w->cp);
	q42_u32vec_free(&w->words);
	q42_u32vec_free(&w->tmp[0]);
	q42_u32vec_free(&w->tmp[1]);
	free(w->frag[0].v);
	free(w->frag[1].v);
	q42_ugm_work_free(&w->ugm);
}

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 64;
	void *q;
	if (need <= *cap)
		return true;
	while (c < need)
		c *= 2;
	q = realloc(*p, c * elem);
	if (q == NULL)
		return false;
	*p = q;
	*cap = c;
	return true;
}

/* Heap order: SPM pops the best score, BPE the lowest rank; both then the
 * leftmost pair. */
static bool bg_before(int kind, const bigram *a, const bigram *b)
{
	if (kind == TK_SPM) {
		if (a->score != b->score)
			return a->score > b->score;
	} else if (a->rank != b->rank) {
		return a->rank < b->rank;
	}
	return a->left < b->left;
}

static bool heap_push(work *w, int kind, bigram g)
{
	size_t i;
	if (!grow((void **)&w->heap, &w->capheap, w->nheap + 1, sizeof *w->heap))
		return false;
	i = w->nheap++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!bg_before(kind, &g, &w->heap[p]))
			break;
		w->heap[i] = w->heap[p];
		i = p;
	}
	w->heap[i] = g;
	return true;
}

static bigram heap_pop(work *w, int kind)
{
	bigram top = w->heap[0], last = w->heap[--w->nheap];
	size_t i = 0, n = w->nheap;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && bg_before(kind, &w->heap[c + 1], &w->heap[c]))
			c++;
		if (!bg_before(kind, &w->heap[c], &last))
			break;
		w->heap[i] = w->heap[c];
		i = c;
	}
	if (n > 0)
		w->heap[i] = last;
	return top;
}

static bool spm_try(const q42_tokenizer *t, work *w, int32_t l, int32_t r)
{
	int32_t id;
	bigram g;
	if (l < 0 || r < 0)
		return true;
	id = lookup(t, w->buf + w->sym[l].start, (size_t)w->sym[l].n + w->sym[r].n);
	if (id < 0)
		return true;
	g.score = t->score ? t->score[id] : 0.0f;
	g.rank = 0;
	g.result = id;
	g.left = l;
	g.right = r;
	g.size = w->sym[l].n + w->sym[r].n;
	return heap_push(w, TK_SPM, g);
}

/* SentencePiece on w->buf[0..nbuf): merge the best-scoring adjacent pair
 * that is a token until none is left; leftovers go out as byte tokens. */
static int spm_encode(const q42_tokenizer *t, work *w, q42_tokens *out, q42_err *err)
{
	size_t off = 0;
	w->nsym = 0;
	w->nheap = 0;
	while (off < w->nbuf) {
		size_t n = q42_utf8_len(w->buf[off]);
		if (n > w->nbuf - off)
			n = w->nbuf - off;
		if (!grow((void **)&w->sym, &w->capsym, w->nsym + 1, sizeof *w->sym))
			return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
		w->sym[w->nsym] = (sym){(int32_t)w->nsym - 1, off + n == w->nbuf ? -1 : (int32_t)w->nsym + 1,
					-1, (uint32_t)off, (uint32_t)n};
		w->nsym++;
		off += n;
	}
	for (size_t i = 1; i < w->nsym; i++)
		if (!spm_try(t, w, (int32_t)i - 1, (int32_t)i))
			return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
	while (w->nheap > 0) {
		bigram g = heap_pop(w, TK_SPM);
		sym *l = &w->sym[g.left], *r = &w->sym[g.right];
		if (l->n == 0 || r->n == 0 || l->n + r->n != g.size)
			continue;
		l->n += r->n;
		r->n = 0;
		l->next = r->next;
		if (r->next >= 0)
			w->sym[r->next].prev = g.left;
		if (!spm_try(t, w, l->prev, g.left) || !spm_try(t, w, g.left, w->sym[g.left].next))
			return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
	}
	for (int32_t i = w->nsym ? 0 : -1; i != -1; i = w->sym[i].next) {
		const sym *s = &w->sym[i];
		int32_t id = lookup(t, w->buf + s->start, s->n);
		if (id >= 0) {
			if (!q42_tokens_push(out, id))
				return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
			continue;
		}
		for (uint32_t j = 0; j < s->n; j++) {
			uint8_t b = w->buf[s->start + j];
			if (t->byte_tok[b] < 0)
				return q42_err_set(err, Q42_EUNSUPPORTED,
						   "tokenizer: byte 0x%02X has no token (<0x%02X>) to fall back on",
						   b, b);
			if (!q42_tokens_push(out, t->byte_tok[b]))
				return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
		}
	}
	return Q42_OK;
}

/* ---- byte-level BPE ------------------------------------------------------- */

static bool bpe_try(const q42_tokenizer *t, work *w, int32_t l, int32_t r)
{
	const merge_slot *m;
	bigram g;
	if (l < 0 || r < 0 || w->sym[l].id < 0 || w->sym[r].id < 0)
		return true;
	m = merge_find(t, w->sym[l].id, w->sym[r].id);
	if (m == NULL)
		return true;
	g.score = 0.0f;
	g.rank = m->rank;
	g.result = m->result;
	g.left = l;
	g.right = r;
	g.size = w->sym[l].n + w->sym[r].n;
	return heap_push(w, TK_BPE, g);
}

static bool all_newlines(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != '\n')
			return false;
	return true;
}

/* One pre-tokenized word, already in byte-encoded form in w->buf (raw
 * UTF-8 with U+2581 for spaces when the pre-tokenizer escapes them; a
 * word of newlines that is a token is then that token, llama.cpp's
 * gemma4 rule). */
static int bpe_word(const q42_tokenizer *t, work *w, q42_tokens *out, q42_err *err)
{
	size_t off = 0;
	if (t->pre.ignore_merges || (t->pre.escape_ws && all_newlines(w->buf, w->nbuf))) {
		int32_t id = lookup(t, w->buf, w->nbuf);
		if (id >= 0)
			return q42_tokens_push(out, id) ? Q42_OK
				: q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
	}
	w->nsym = 0;
	w->nheap = 0;
	while (off < w->nbuf) {
		size_t n = q42_utf8_len(w->buf[off]);
		if (n > w->nbuf - off)
			n = w->nbuf - off;
		if (!grow((void **)&w->sym, &w->capsym, w->nsym + 1, sizeof *w->sym))
			return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
		w->sym[w->nsym] = (sym){(int32_t)w->nsym - 1, off + n == w->nbuf ? -1 : (int32_t)w->nsym + 1,
					lookup(t, w->buf + off, n), (uint32_t)off, (uint32_t)n};
		w->nsym++;
		off += n;
	}
	for (size_t i = 1; i < w->nsym; i++)
		if (!bpe_try(t, w, (int32_t)i - 1, (int32_t)i))
			return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
	while (w->nheap > 0) {
		bigram g = heap_pop(w, TK_BPE);
		sym *l = &w->sym[g.left], *r = &w->sym[g.right];
		if (l->n == 0 || r->n == 0 || l->n + r->n != g.size)
			continue;
		l->n += r->n;
		r->n = 0;
		l->id = g.result;
		l->next = r->next;
		if (r->next >= 0)
			w->sym[r->next].prev = g.left;
		if (!bpe_try(t, w, l->prev, g.left) || !bpe_try(t, w, g.left, w->sym[g.left].next))
			return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
	}
	for (size_t i = 0; i < w->nsym; i++) {
		const sym *s = &w->sym[i];
		if (s->n == 0)
			continue;
		if (s->id >= 0) {
			if (!q42_tokens_push(out, s->id))
				return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
			continue;
		}
		/* Not a token: llama.cpp tries each byte of its text as a
		 * one-byte token (<0xHH> without byte encoding) and drops the
		 * bytes that are none. */
		for (uint32_t j = 0; j < s->n; j++) {
			int32_t id = t->pre.escape_ws ? t->byte_tok[w->buf[s->start + j]]
						      : lookup(t, w->buf + s->start + j, 1);
			if (id >= 0 && !q42_tokens_push(out, id))
				return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
		}
	}
	return Q42_OK;
}

static int bpe_encode(const q42_tokenizer *t, work *w, const uint8_t *text, size_t len,
		      q42_tokens *out, q42_err *err)
{
	size_t off = 0, start = 0;
	w->ncp = 0;
	while (off < len) {
		if (!grow((void **)&w->cp, &w->capcp, w->ncp + 1, sizeof *w->cp))
			return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
		w->cp[w->ncp++] = q42_utf8_decode(text, len, &off);
	}
	w->words.n = 0;
	if (!q42_pretok_split(t->pre.kind, w->cp, w->ncp, &w->words, w->tmp))
		return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
	for (size_t i = 0; i < w->words.n; i++) {
		size_t end = start + w->words.v[i];
		int rc;
		w->nbuf = 0;
		for (size_t k = start; k < end; k++) {
			uint8_t u[4];
			size_t n = q42_utf8_encode(w->cp[k], u);
			if (!grow((void **)&w->buf, &w->capbuf, w->nbuf + 8, 1)) /* 4 bytes, each up to 2 */
				return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
			if (t->pre.escape_ws) {
				if (w->cp[k] == ' ')
					n = q42_utf8_encode(0x2581, u);
				memcpy(w->buf + w->nbuf, u, n);
				w->nbuf += n;
				continue;
			}
			for (size_t j = 0; j < n; j++) {
				memcpy(w->buf + w->nbuf, t->bytechar[u[j]], t->bytechar_len[u[j]]);
				w->nbuf += t->bytechar_len[u[j]];
			}
		}
		rc = bpe_word(t, w, out, err);
		if (rc != Q42_OK)
			return rc;
		start = end;
	}
	return Q42_OK;
}

/* ---- encode ---------------------------------------------------------------- */

/* ---- WordPiece (bert) ----------------------------------------------------- */

/* The CJK ideograph blocks BERT splits into single-character words
 * (llama.cpp's list, which follows Hugging Face's). */
static bool wpm_cjk(uint32_t c)
{
	return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
	       (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
	       (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
	       (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

/* The ids of one word (bytes w[0..n) after the U+2581 the caller put
 * first): greedy longest match from each position; a position no token
 * starts at makes the whole word [UNK]. */
static int wpm_word(const q42_tokenizer *t, const uint8_t *w, size_t n, q42_tokens *out)
{
	const size_t n0 = out->n;
	for (size_t i = 0; i < n;) {
		size_t j = n - i > t->max_token_len ? i + t->max_token_len : n;
		int32_t id = -1;
		for (; j > i && (id = lookup(t, w + i, j - i)) < 0; j--)
			;
		if (id < 0) {
			out->n = n0;
			break;
		}
		if (!q42_tokens_push(out, id))
			return Q42_ENOMEM;
		i = j;
	}
	if (out->n == n0 && !q42_tokens_push(out, t->unk))
		return Q42_ENOMEM;
	return Q42_OK;
}

/* BERT's basic tokenizer then WordPiece on s[0..len), as llama.cpp's
 * llm_tokenizer_wpm_session: each codepoint replaced by the first of its
 * canonical decomposition; whitespace ends a word; NUL, U+FFFD, control
 * characters and nonspacing marks are dropped (strip_accents); the rest
 * lowercased; punctuation, ASCII symbols and CJK ideographs are words of
 * their own. */
static int wpm_encode(const q42_tokenizer *t, work *w, const uint8_t *s, size_t len,
		      q42_tokens *out, q42_err *err)
{
	if (!grow((void **)&w->buf, &w->capbuf, 3 + 4 * len, 1))
		return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
	w->nbuf = 0;
	for (size_t off = 0; off <= len;) {
		const uint32_t c = q42_uc_nfd_first(off < len ? q42_utf8_decode(s, len, &off) : 0x20);
		const uint8_t f = q42_uc_flags(c), cat = f & Q42_UC_CAT_MASK;
		const bool alone = cat == Q42_UC_PUNCT || (c < 0x7F && cat == Q42_UC_SYMBOL) || wpm_cjk(c);
		if (off >= len && c == 0x20)
			off = len + 1;
		if ((f & Q42_UC_WS) || alone) {
			if (w->nbuf > 0 && wpm_word(t, w->buf, w->nbuf, out) != Q42_OK)
				return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
			w->nbuf = 0;
			if (!alone)
				continue;
		}
		if (c == 0 || c == Q42_UC_REPLACEMENT || cat == Q42_UC_CONTROL || q42_uc_is_mn(c))
			continue;
		if (w->nbuf == 0) {
			memcpy(w->buf, "\xe2\x96\x81", 3);
			w->nbuf = 3;
		}
		w->nbuf += q42_utf8_encode(q42_uc_tolower(c), w->buf + w->nbuf);
		if (alone) {
			if (wpm_word(t, w->buf, w->nbuf, out) != Q42_OK)
				return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
			w->nbuf = 0;
		}
	}
	return Q42_OK;
}

static int push_special(int32_t id, const char *what, q42_tokens *out, q42_err *err)
{
	if (id < 0)
		return q42_err_set(err, Q42_EFORMAT,
				   "tokenizer: the vocabulary asks for %s but has no %s token", what, what);
	return q42_tokens_push(out, id) ? Q42_OK : q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
}

int q42_tokenizer_encode(const q42_tokenizer *t, const char *text, size_t len, unsigned flags,
			 q42_tokens *out, q42_err *err)
{
	const uint8_t *s = (const uint8_t *)text;
	bool add = (flags & Q42_TOKENIZE_ADD_SPECIAL) != 0;
	work w;
	size_t n0 = out->n;
	int rc = Q42_OK;

	memset(&w, 0, sizeof w);
	if (len > Q42_TOKENIZE_MAX_INPUT)
		return q42_err_set(err, Q42_EARG, "tokenizer: input of %zu bytes exceeds the limit of %zu",
				   len, Q42_TOKENIZE_MAX_INPUT);
	if (len > 0 && text == NULL)
		return q42_err_set(err, Q42_EARG, "tokenizer: NULL text");
	if (!partition(t, s, len, (flags & Q42_TOKENIZE_PARSE_SPECIAL) != 0, &w.frag[0], &w.frag[1])) {
		rc = q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
		goto fail;
	}
	if (add && t->add_bos && (rc = push_special(t->bos, "BOS", out, err)) != Q42_OK)
		goto fail;
	if (t->kind == TK_SPM) {
		/* A space goes before the first text and before text that
		 * follows a special token, and every space becomes U+2581. */
		bool prev_special = true;
		for (size_t i = 0; i < w.frag[0].n; i++) {
			fragment f = w.frag[0].v[i];
			if (f.tok >= 0) {
				if (!q42_tokens_push(out, f.tok)) {
					rc = q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
					goto fail;
				}
				prev_special = true;
				continue;
			}
			w.nbuf = 0;
			if (!grow((void **)&w.buf, &w.capbuf, 3 * (f.len + 1), 1)) {
				rc = q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
				goto fail;
			}
			if (t->add_space_prefix && prev_special) {
				memcpy(w.buf, "\xe2\x96\x81", 3);
				w.nbuf = 3;
			}
			for (size_t k = 0; k < f.len; k++) {
				uint8_t c = s[f.off + k];
				if (c == ' ') {
					memcpy(w.buf + w.nbuf, "\xe2\x96\x81", 3);
					w.nbuf += 3;
				} else {
					w.buf[w.nbuf++] = c;
				}
			}
			if ((rc = spm_encode(t, &w, out, err)) != Q42_OK)
				goto fail;
			prev_special = false;
		}
	} else {
		for (size_t i = 0; i < w.frag[0].n; i++) {
			fragment f = w.frag[0].v[i];
			if (f.tok >= 0) {
				if (!q42_tokens_push(out, f.tok)) {
					rc = q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
					goto fail;
				}
				continue;
			}
			if (t->kind == TK_WPM)
				rc = wpm_encode(t, &w, s + f.off, f.len, out, err);
			else if (t->kind == TK_UGM)
				rc = q42_ugm_encode(t->ugm, &w.ugm, s + f.off, f.len, out, err);
			else
				rc = bpe_encode(t, &w, s + f.off, f.len, out, err);
			if (rc != Q42_OK)
				goto fail;
		}
	}
	if (add && t->add_eos && (rc = push_special(t->eos, "EOS", out, err)) != Q42_OK)
		goto fail;
	if (add && t->kind == TK_WPM && (rc = push_special(t->sep, "SEP", out, err)) != Q42_OK)
		goto fail;
	work_free(&w);
	return Q42_OK;
fail:
	out->n = n0;
	work_free(&w);
	return rc;
}

/* ---- decode ---------------------------------------------------------------- */

static bool piece_hidden(const q42_tokenizer *t, int32_t id, unsigned flags)
{
	return !(flags & Q42_DETOKENIZE_RENDER_SPECIAL) && (t->attr[id] & (A_UNKNOWN | A_CONTROL));
}

int q42_tokenizer_piece(const q42_tokenizer *t, int32_t id, unsigned flags, q42_buf *out,
			q42_err *err)
{
	if (id < 0 || (uint32_t)id >= t->n)
		return q42_err_set(err, Q42_EARG, "tokenizer: token id %d outside 0..%u", id, t->n - 1);
	if (piece_hidden(t, id, flags))
		return Q42_OK;
	if (!q42_buf_append(out, t->piece_data + t->piece_off[id],
			    (size_t)(t->piece_off[id + 1] - t->piece_off[id])))
		return q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
	return Q42_OK;
}

/* llama.cpp's clean_up_tokenization_spaces, three passes in place. */
static size_t clean_spaces(uint8_t *s, size_t n)
{
	size_t m, k;
	if (n == 0)
		return 0;
	m = 1;
	for (size_t i = 1; i < n; i++) {
		uint8_t x = s[i];
		if (s[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ','))
			m--;
		s[m++] = x;
	}
	k = m;
	m = 1;
	for (size_t i = 1; i < k; i++) {
		uint8_t x = s[i];
		if (x == '\'' && i + 1 < k && s[i - 1] == ' ' && s[i + 1] == ' ') {
			m--;
			s[++i] = '\0';
		}
		s[m++] = x;
	}
	k = m;
	m = 1;
	for (size_t i = 1; i < k; i++) {
		uint8_t x = s[i];
		if (s[i - 1] == ' ' && x == '\'' && i + 1 < k) {
			uint8_t x1 = s[i + 1];
			if (x1 == 's' || x1 == 'm')
				m--;
			else if (i + 2 < k && ((x1 == 'r' && s[i + 2] == 'e') || (x1 == 'v' && s[i + 2] == 'e')))
				m--;
		}
		s[m++] = x;
	}
	return m;
}

/* Append s[0..n) to out with every maximal ill-formed UTF-8 subsequence
 * replaced by U+FFFD (the Unicode "maximal subpart" practice). */
static void append_valid_utf8(q42_buf *out, const uint8_t *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		uint8_t c = s[i];
		size_t need, k;
		uint8_t lo = 0x80, hi = 0xBF;
		if (c < 0x80) {
			size_t j = i;
			while (j < n && s[j] < 0x80)
				j++;
			q42_buf_append(out, s + i, j - i);
			i = j;
			continue;
		}
		if (c >= 0xC2 && c <= 0xDF) {
			need = 1;
		} else if (c >= 0xE0 && c <= 0xEF) {
			need = 2;
			if (c == 0xE0)
				lo = 0xA0;
			else if (c == 0xED)
				hi = 0x9F;
		} else if (c >= 0xF0 && c <= 0xF4) {
			need = 3;
			if (c == 0xF0)
				lo = 0x90;
			else if (c == 0xF4)
				hi = 0x8F;
		} else {
			q42_buf_append(out, "\xef\xbf\xbd", 3);
			i++;
			continue;
		}
		for (k = 1; k <= need && i + k < n; k++) {
			uint8_t b = s[i + k];
			if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF))
				break;
		}
		if (k == need + 1)
			q42_buf_append(out, s + i, need + 1);
		else
			q42_buf_append(out, "\xef\xbf\xbd", 3);
		i += k == need + 1 ? need + 1 : k;
	}
}

int q42_tokenizer_decode(const q42_tokenizer *t, const int32_t *ids, size_t n, unsigned flags,
			 q42_buf *out, q42_err *err)
{
	q42_buf raw;
	bool remove_space = t->add_space_prefix;
	size_t len;
	int rc = Q42_OK;

	for (size_t i = 0; i < n; i++)
		if (ids[i] < 0 || (uint32_t)ids[i] >= t->n)
			return q42_err_set(err, Q42_EARG, "tokenizer: token id %d at position %zu outside 0..%u",
					   ids[i], i, t->n - 1);
	if (flags & Q42_DETOKENIZE_REMOVE_SPECIAL) {
		if (t->add_bos && n > 0 && ids[0] == t->bos) {
			remove_space = false;
			ids++;
			n--;
		}
		if (t->add_eos && n > 0 && ids[n - 1] == t->eos)
			n--;
	}
	q42_buf_init(&raw);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *p = t->piece_data + t->piece_off[ids[i]];
		size_t k = (size_t)(t->piece_off[ids[i] + 1] - t->piece_off[ids[i]]);
		if (piece_hidden(t, ids[i], flags))
			k = 0;
		/* The leading space SentencePiece added goes: one space, off
		 * the first piece only. */
		if (remove_space && k > 0 && p[0] == ' ') {
			p++;
			k--;
		}
		remove_space = false;
		q42_buf_append(&raw, p, k);
	}
	if (raw.failed) {
		rc = q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
		goto done;
	}
	len = t->pre.clean_spaces && t->kind == TK_BPE ? clean_spaces(raw.data, raw.len) : raw.len;
	append_valid_utf8(out, raw.data, len);
	if (out->failed)
		rc = q42_err_set(err, Q42_ENOMEM, "tokenizer: out of memory");
done:
	q42_buf_free(&raw);
	return rc;
}

/* ---- queries -------------------------------------------------------------- */

uint32_t q42_tokenizer_n_vocab(const q42_tokenizer *t)
{
	return t->n;
}

bool q42_tokenizer_is_eog(const q42_tokenizer *t, int32_t id)
{
	return id >= 0 && (uint32_t)id < t->n && t->eog[id];
}

int32_t q42_tokenizer_bos(const q42_tokenizer *t)
{
	return t->bos;
}

int32_t q42_tokenizer_eos(const q42_tokenizer *t)
{
	return t->eos;
}

bool q42_tokenizer_adds_bos(const q42_tokenizer *t)
{
	return t->add_bos;
}

q42_str q42_tokenizer_text(const q42_tokenizer *t, int32_t id)
{
	if (id < 0 || (uint32_t)id >= t->n)
		return (q42_str){NULL, 0};
	return t->text[id];
}
