/* q42_pretok.c -- the pre-tokenizer regexes of llama.cpp, written by hand.
 *
 * llama.cpp splits text for byte-level BPE with a list of regexes per
 * tokenizer.ggml.pre value: a few have dedicated matchers (gpt2, llama3,
 * qwen2, qwen35, newlines, afmoe digits), the others run through
 * std::regex on a text where every non-ASCII codepoint is collapsed to its
 * category. We have no regex engine among our dependencies (no PCRE2), and
 * the patterns are few and fixed, so each one is a small hand-written
 * matcher over codepoint classes (q42_unicode.h) with the semantics of the
 * engine llama.cpp uses for it:
 *   - dedicated matchers: cover the whole run, unmatched codepoints become
 *     one-codepoint words;
 *   - std::regex patterns: leftmost match, first alternative that succeeds,
 *     greedy with backtracking; text between matches is one word; \s is
 *     White_Space; literal non-ASCII classes never match non-ASCII
 *     whitespace (llama.cpp replaces it by U+000B before matching).
 * Each regex of a list refines the words the previous one produced.
 * Implemented: default, gpt2 family, llama3 family, qwen2 family (incl.
 * bailingmoe, whose pattern is qwen2's written differently), qwen35,
 * deepseek-llm, deepseek-coder, deepseek-v3 family, falcon, starcoder
 * family, poro/bloom/gpt3-finnish, viking, laguna, afmoe, gemma4 (newline
 * runs only; its whitespace escaping is the tokenizer's). Anything else is
 * refused by q42_pretok_lookup; this file never guesses a split.
 */
#include "tokenizer/q42_pretok.h"

#include <stdlib.h>
#include <string.h>

#include "tokenizer/q42_unicode.h"

enum pk_kind {
	PK_DEFAULT,
	PK_GPT2,
	PK_LLAMA3,
	PK_QWEN2,
	PK_QWEN35,
	PK_DEEPSEEK_LLM,
	PK_DEEPSEEK_CODER,
	PK_DEEPSEEK3,
	PK_FALCON,
	PK_STARCODER,
	PK_PORO,
	PK_VIKING,
	PK_LAGUNA,
	PK_AFMOE,
	PK_GEMMA4,
};

bool q42_u32vec_push(q42_u32vec *a, uint32_t x)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		uint32_t *v = realloc(a->v, cap * sizeof *v);
		if (v == NULL)
			return false;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = x;
	return true;
}

void q42_u32vec_free(q42_u32vec *a)
{
	free(a->v);
	a->v = NULL;
	a->n = a->cap = 0;
}

/* ---- codepoint classes ------------------------------------------------ */

/* Class of the codepoint at pos, or 0 outside [.., e): bit 4 says "inside",
 * so an unassigned codepoint (category 0) still differs from the end. */
#define IN 0x10u

static inline unsigned fl(const uint32_t *cp, size_t pos, size_t e)
{
	return pos < e ? (q42_uc_flags(cp[pos]) | IN) : 0;
}

static inline bool is_cat(unsigned f, unsigned cat)
{
	return (f & IN) && (f & Q42_UC_CAT_MASK) == cat;
}

static inline bool is_l(unsigned f) { return is_cat(f, Q42_UC_LETTER); }
static inline bool is_n(unsigned f) { return is_cat(f, Q42_UC_NUMBER); }
static inline bool is_m(unsigned f) { return is_cat(f, Q42_UC_MARK); }
static inline bool is_p(unsigned f) { return is_cat(f, Q42_UC_PUNCT); }
static inline bool is_s(unsigned f) { return is_cat(f, Q42_UC_SYMBOL); }
static inline bool is_ws(unsigned f) { return (f & Q42_UC_WS) != 0; }

static inline bool is_crlf(uint32_t c) { return c == '\r' || c == '\n'; }

typedef struct range {
	uint32_t lo, hi;
} range;

static bool in_ranges(const range *r, size_t n, uint32_t c)
{
	for (size_t i = 0; i < n; i++)
		if (c >= r[i].lo && c <= r[i].hi)
			return true;
	return false;
}

/* A literal class of a pattern without \p{..}: llama.cpp matches those on
 * codepoints, with non-ASCII whitespace replaced by U+000B first. */
static bool in_literal(const range *r, size_t n, uint32_t c)
{
	if (c >= 0x80 && (q42_uc_flags(c) & Q42_UC_WS))
		c = 0x0B;
	return in_ranges(r, n, c);
}

#define NR(a) (sizeof(a) / sizeof((a)[0]))

/* DeepSeek-LLM's cased-letter class (tokenizer.json of deepseek-llm). */
static const range ds_cased[] = {
	{0x41, 0x5A}, {0x61, 0x7A}, {0xB5, 0xB5}, {0xC0, 0xD6}, {0xD8, 0xF6}, {0xF8, 0x1BA},
	{0x1BC, 0x1BF}, {0x1C4, 0x293}, {0x295, 0x2AF}, {0x370, 0x373}, {0x376, 0x377},
	{0x37B, 0x37D}, {0x37F, 0x37F}, {0x386, 0x386}, {0x388, 0x38A}, {0x38C, 0x38C},
	{0x38E, 0x3A1}, {0x3A3, 0x3F5}, {0x3F7, 0x481}, {0x48A, 0x52F}, {0x531, 0x556},
	{0x10A0, 0x10C5}, {0x13A0, 0x13F5}, {0x13F8, 0x13FD}, {0x1C90, 0x1CBA}, {0x1CBD, 0x1CBF},
	{0x1D00, 0x1D2B}, {0x1D6B, 0x1D77}, {0x1D79, 0x1D9A}, {0x1E00, 0x1F15}, {0x1F18, 0x1F1D},
	{0x1F20, 0x1F45}, {0x1F48, 0x1F4D}, {0x1F50, 0x1F57}, {0x1F59, 0x1F59}, {0x1F5B, 0x1F5B},
	{0x1F5D, 0x1F5D}, {0x1F5F, 0x1F7D}, {0x1F80, 0x1FB4}, {0x1FB6, 0x1FBC}, {0x1FBE, 0x1FBE},
	{0x1FC2, 0x1FC4}, {0x1FC6, 0x1FCC}, {0x1FD0, 0x1FD3}, {0x1FD6, 0x1FDB}, {0x1FE0, 0x1FEC},
	{0x1FF2, 0x1FF4}, {0x1FF6, 0x1FFC}, {0x2102, 0x2102}, {0x2107, 0x2107}, {0x210A, 0x2113},
	{0x2115, 0x2115}, {0x2119, 0x211D}, {0x2124, 0x2124}, {0x2126, 0x2126}, {0x2128, 0x2128},
	{0x212A, 0x212D}, {0x212F, 0x2134}, {0x2139, 0x2139}, {0x213C, 0x213F}, {0x2145, 0x2149},
	{0x214E, 0x214E}, {0x2183, 0x2184}, {0x2C00, 0x2C7B}, {0x2C7E, 0x2CE4}, {0x2CEB, 0x2CEE},
	{0x2CF2, 0x2CF3}, {0xA640, 0xA66D}, {0xA680, 0xA69B}, {0xA722, 0xA76F}, {0xA771, 0xA787},
	{0xA78B, 0xA78E}, {0xAB70, 0xABBF}, {0xFB00, 0xFB06}, {0xFB13, 0xFB17}, {0xFF21, 0xFF3A},
	{0xFF41, 0xFF5A}, {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB},
	{0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
};

/* [!-/:-~！-／：-～‘-‟　-。] */
static const range ds_punct[] = {
	{0x21, 0x2F}, {0x3A, 0x7E}, {0xFF01, 0xFF0F}, {0xFF1A, 0xFF5E}, {0x2018, 0x201F},
	{0x3000, 0x3002},
};

/* [一-龥ࠀ-一가-퟿] */
static const range ds_cjk[] = {{0x4E00, 0x9FA5}, {0x0800, 0x4E00}, {0xAC00, 0xD7FF}};

/* [一-龥぀-ゟ゠-ヿ] */
static const range ds3_cjk[] = {{0x4E00, 0x9FA5}, {0x3040, 0x309F}, {0x30A0, 0x30FF}};

/* AFMoE's CJK and Asian scripts class, as written in llama.cpp's source
 * (its third range starts at U+8C48, not U+F900). */
static const range afmoe_cjk[] = {
	{0x4E00, 0x9FFF}, {0x3400, 0x4DBF}, {0x8C48, 0xFAFF}, {0x3040, 0x309F}, {0x30A0, 0x30FF},
	{0xFF65, 0xFF9F}, {0x2F00, 0x2FDF}, {0x0E40, 0x0E7F}, {0x0E80, 0x0EFF}, {0x1780, 0x17FF},
	{0x1000, 0x109F}, {0xAA60, 0xAA7F}, {0xA9E0, 0xA9FF}, {0xAC00, 0xD7AF}, {0x1100, 0x11FF},
};

/* The excluded set of [^(\s|.,!?…。，、।۔،)] besides \s. */
static const range poro_stop[] = {
	{'(', '('}, {'|', '|'}, {'.', '.'}, {',', ','}, {'!', '!'}, {'?', '?'}, {')', ')'},
	{0x2026, 0x2026}, {0x3002, 0x3002}, {0xFF0C, 0xFF0C}, {0x3001, 0x3001},
	{0x0964, 0x0964}, {0x06D4, 0x06D4}, {0x060C, 0x060C},
};

/* ---- word emission ------------------------------------------------------ */

typedef struct emitter {
	q42_u32vec *out;
	size_t prev;
	bool ok;
} emitter;

/* Close the word [prev, end) if it is not empty. */
static void emit_to(emitter *em, size_t end)
{
	if (end > em->prev && !q42_u32vec_push(em->out, (uint32_t)(end - em->prev)))
		em->ok = false;
	em->prev = end;
}

/* 's 't 're 've 'm 'll 'd at pos; length 0 when none. ci: case-insensitive. */
static size_t contraction(const uint32_t *cp, size_t pos, size_t e, bool ci)
{
	uint32_t a, b;
	if (cp[pos] != '\'' || pos + 1 >= e)
		return 0;
	a = ci ? q42_uc_tolower_ascii(cp[pos + 1]) : cp[pos + 1];
	if (a == 's' || a == 't' || a == 'm' || a == 'd')
		return 2;
	if (pos + 2 >= e)
		return 0;
	b = ci ? q42_uc_tolower_ascii(cp[pos + 2]) : cp[pos + 2];
	if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
		return 3;
	return 0;
}

/* Whitespace at pos: the run length, and the end of its last \r or \n
 * (0 when it has none). */
static size_t ws_run(const uint32_t *cp, size_t pos, size_t e, size_t *last_crlf_end)
{
	size_t k = 0;
	*last_crlf_end = 0;
	while (is_ws(fl(cp, pos + k, e))) {
		if (is_crlf(cp[pos + k]))
			*last_crlf_end = pos + k + 1;
		k++;
	}
	return k;
}

/* \s*[\r\n]+|\s+(?!\S)|\s+ at pos (crlf: whether the first alternative is
 * part of the pattern); 0 when pos is not whitespace. */
static size_t ws_tail(const uint32_t *cp, size_t pos, size_t e, bool crlf)
{
	size_t last, k = ws_run(cp, pos, e, &last);
	if (crlf && last > 0)
		return last - pos;
	if (k > 1 && pos + k < e)
		return k - 1;
	return k;
}

/* ---- dedicated matchers -------------------------------------------------- */

/* 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
static void split_gpt2(const uint32_t *cp, size_t b, size_t e, emitter *em)
{
	size_t pos = b;
	em->prev = b;
	while (pos < e) {
		uint32_t c = cp[pos];
		unsigned f2 = c == ' ' ? fl(cp, pos + 1, e) : fl(cp, pos, e);
		size_t k = contraction(cp, pos, e, false);
		if (k) {
			pos += k;
		} else if (is_l(f2)) {
			pos += c == ' ';
			while (is_l(fl(cp, pos, e)))
				pos++;
		} else if (is_n(f2)) {
			pos += c == ' ';
			while (is_n(fl(cp, pos, e)))
				pos++;
		} else if ((f2 & IN) && !is_ws(f2) && !is_l(f2) && !is_n(f2)) {
			pos += c == ' ';
			for (f2 = fl(cp, pos, e); (f2 & IN) && !is_ws(f2) && !is_l(f2) && !is_n(f2);
			     f2 = fl(cp, pos, e))
				pos++;
		} else {
			k = ws_tail(cp, pos, e, false);
			pos += k ? k : 1;
		}
		emit_to(em, pos);
	}
}

/* The llama3 (nmax 3), qwen2 (nmax 1) and qwen35 (marks) family:
 * (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,nmax}|
 *  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 * with qwen35 reading [\p{L}\p{M}] for \p{L} in the word alternatives. */
static void split_llama3(const uint32_t *cp, size_t b, size_t e, emitter *em, size_t nmax,
			 bool marks)
{
	size_t pos = b;
	em->prev = b;
	while (pos < e) {
		uint32_t c = cp[pos];
		unsigned f = fl(cp, pos, e), f1 = fl(cp, pos + 1, e), f2;
		size_t k = contraction(cp, pos, e, true);
		bool word = marks ? (is_l(f) || is_m(f) || is_l(f1) || is_m(f1)) : (is_l(f) || is_l(f1));
		if (k) {
			pos += k;
			emit_to(em, pos);
			continue;
		}
		if (!is_crlf(c) && !is_n(f) && word) {
			pos++;
			for (f = fl(cp, pos, e); is_l(f) || (marks && is_m(f)); f = fl(cp, pos, e))
				pos++;
			emit_to(em, pos);
			continue;
		}
		if (is_n(f)) {
			size_t ini = pos;
			while (is_n(fl(cp, pos, e))) {
				if (++pos - ini >= nmax) {
					emit_to(em, pos);
					ini = pos;
				}
			}
			emit_to(em, pos);
			continue;
		}
		f2 = c == ' ' ? f1 : f;
		if (!is_ws(f2) && !is_l(f2) && !is_n(f2) && !(marks && is_m(f2))) {
			pos += c == ' ';
			for (f2 = fl(cp, pos, e);
			     (f2 & IN) && !is_ws(f2) && !is_l(f2) && !is_n(f2) && !(marks && is_m(f2));
			     f2 = fl(cp, pos, e))
				pos++;
			while (pos < e && is_crlf(cp[pos]))
				pos++;
			emit_to(em, pos);
			continue;
		}
		k = ws_tail(cp, pos, e, true);
		pos += k ? k : 1;
		emit_to(em, pos);
	}
}

/* [^\n]+|[\n]+ */
static void split_newlines(const uint32_t *cp, size_t b, size_t e, emitter *em)
{
	size_t pos = b;
	em->prev = b;
	while (pos < e) {
		bool nl = cp[pos] == '\n';
		while (pos < e && (cp[pos] == '\n') == nl)
			pos++;
		emit_to(em, pos);
	}
}

/* AFMoE's digit grouping: a run of n digits is cut into n mod 3 leading
 * digits, then groups of three. Like llama.cpp, text before a run is glued
 * to its first group, and text after the last run is one word. */
static void split_afmoe_digits(const uint32_t *cp, size_t b, size_t e, emitter *em)
{
	size_t pos = b;
	em->prev = b;
	while (pos < e) {
		size_t start = pos, cur;
		if (!is_n(fl(cp, pos, e))) {
			pos++;
			continue;
		}
		while (is_n(fl(cp, pos, e)))
			pos++;
		cur = start + (pos - start) % 3;
		if (cur > start)
			emit_to(em, cur);
		for (; cur < pos; cur += 3)
			emit_to(em, cur + 3);
	}
	emit_to(em, e);
}

/* ---- std::regex patterns: one matcher each ------------------------------ */

/* Length of the match at pos, 0 when none; *skip may be raised to the next
 * position worth trying (it starts at pos + 1). */
typedef size_t (*matcher)(const uint32_t *cp, size_t pos, size_t e, size_t *skip);

static bool ascii_ps(uint32_t c)
{
	return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
	       (c >= 0x7B && c <= 0x7E);
}

static bool ascii_alpha(uint32_t c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* [\p{P}\$\+<=>\^~\|]+ */
static bool default_punct(uint32_t c)
{
	return is_p(q42_uc_flags(c) | IN) || c == '$' || c == '+' || c == '<' || c == '=' ||
	       c == '>' || c == '^' || c == '~' || c == '|';
}

static size_t m_default_punct(const uint32_t *cp, size_t pos, size_t e, size_t *skip)
{
	size_t k = pos;
	(void)skip;
	while (k < e && default_punct(cp[k]))
		k++;
	return k - pos;
}

/* [\p{P}\$\+<=>\^~\|`]+ */
static size_t m_falcon_punct(const uint32_t *cp, size_t pos, size_t e, size_t *skip)
{
	size_t k = pos;
	(void)skip;
	while (k < e && (default_punct(cp[k]) || cp[k] == '`'))
		k++;
	return k - pos;
}

/* \p{N}+ */
static size_t m_num_run(const uint32_t *cp, size_t pos, size_t e, size_t *skip)
{
	size_t k = pos;
	(void)skip;
	while (is_n(fl(cp, k, e)))
		k++;
	return k - pos;
}

/* \p{N} */
static size_t m_num_one(const uint32_t *cp, size_t pos, size_t e, size_t *skip)
{
	(void)skip;
	return is_n(fl(cp, pos, e)) ? 1 : 0;
}

/* \p{N}{1,3} */
static size_t m_num_upto3(const uint32_t *cp, size_t pos, size_t e, size_t *skip)
{
	size_t k = pos;
	(void)skip;
	while (k - pos < 3 && is_n(fl(cp, k, e)))
		k++;
	return k - pos;
}

/* [0-9][0-9][0-9] */
static size_t m_digit3(const uint32_t *cp, size_t pos, size_t e, size_t *skip)
{
	(void)skip;
	for (size_t k = 0; k < 3; k++)
		if (pos + k >= e || cp[pos + k] < '0' || cp[pos + k] > '9')
			return 0;
	return 3;
}

/* [\r\n] */
static size_t m_crlf_one(const uint32_t *cp, size_t pos, size_t e, size_t *skip)
{
	(void)skip;
	(void)e;
	return is_crlf(cp[pos]) ? 1 : 0;
}

/* \s?X+ for a class X that never holds whitespace. */
static size_t ws_opt_run(const uint32_t *cp, size_t pos, size_t e,
			 bool (*in)(const uint32_t *cp, size_t k, size_t e))
{
	size_t k = pos + (is_ws(fl(cp, pos, e)) ? 1 : 0);
	size_t s = k;
	while (k < e && in(cp, k, e))
		k++;
	return k > s ? k - pos : 0;
}

static bool in_ds_cased(const uint32_t *cp, size_t k, size_t e)
{
	(void)e;
	return in_literal(ds_cased, NR(ds_cased), cp[k]);
}

static bool in_ds_punct(const uint32_t *cp, size_t k, size_t e)
{
	(void)e;
	return in_literal(ds_punct, NR(ds_punct), cp[k]);
}

static bool in_letter(const uint32_t *cp, size_t k, size_t e)
{
	return is_l(fl(cp, k, e));
}

static bool in_punct(const uint32_t *cp, size_t k, size_t e)
{
	return is_p(fl(cp, k, e));
}

static size_t m_ws_cased(const uint32_t *cp, size_t pos, size_t e, size_t *skip)
{
	(void)skip;
	return ws_opt_run(cp, pos, e, in_ds_cased);
}

static size_t m_ws_dspunct(const uint32_t *cp, size_t pos, size_t e, size_t *skip)
{
	(void)skip;
	return ws_opt_run(cp, pos, e, in_ds_punct);
}

static size_t m_ws_letters(const uint32_t *cp, size_t pos, size_t e, size_t *skip)
{
	(void)skip;
	return ws_opt_run(cp, pos, e, in_letter);
}

static size_t m_ws_punct(const uint32_t *cp, size_t pos, size_t e, size_t *skip)
{
	(void)skip;
	return ws_opt_run(cp, pos, e, in_punct);
}

/* \s+$ -- only a whitespace run that reaches the end of the word. */
static size_t m_ws_end(const uint32_t *cp, size_t pos, size_t e, size_t *skip)
{
	size_t last, k = ws_run(cp, pos, e, &last);
	if (k > 0 && pos + k == e)
		return k;
	*skip = pos + (k ? k : 1);
	return 0;
}

static size_t literal_run(const range *r, size_t nr, const uint32_t *cp, size_t pos, size_t e)
{
	size_t k = pos;
	while (k < e && in_literal(r, nr, cp[k]))
		k++;
	return k - pos;
}

static size_t m_ds_cjk(const uint32_t *cp, size_t pos, size_t e, size_t *skip)
{
	(void)skip;
	return literal_run(ds_cjk, NR(ds_cjk), cp, pos, e);
}

static size_t m_ds3_cjk(const uint32_t *cp, size_t pos, size_t e, size_t *skip)
{
	(void)skip;
	return literal_run(ds3_cjk, NR(ds3_cjk), cp, pos, e);
}

static size_t m_afmoe_cjk(const uint32_t *cp, size_t pos, size_t e, size_t *skip)
{
	(void)skip;
	return literal_run(afmoe_cjk, NR(afmoe_cjk), cp, pos, e);
}

static bool lm(unsigned f) { return is_l(f) || is_m(f); }
static bool ps(unsigned f) { return is_p(f) || is_s(f); }

/* deepseek-v3 and afmoe:
 * [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|
 *  ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ */
static size_t m_ds3_main(const uint32_t *cp, size_t pos, size_t e, size_t *skip)
{
	uint32_t c = cp[pos];
	unsigned f = fl(cp, pos, e), f1 = fl(cp, pos + 1, e);
	size_t k;
	(void)skip;
	if (ascii_ps(c) && pos + 1 < e && ascii_alpha(cp[pos + 1])) {
		for (k = pos + 1; k < e && ascii_alpha(cp[k]); k++)
			;
		return k - pos;
	}
	if (lm(f) || (!is_crlf(c) && !ps(f) && lm(f1))) {
		for (k = pos + 1; lm(fl(cp, k, e)); k++)
			;
		return k - pos;
	}
	if (ps(f) || (c == ' ' && ps(f1))) {
		for (k = pos + 1; ps(fl(cp, k, e)); k++)
			;
		while (k < e && is_crlf(cp[k]))
			k++;
		return k - pos;
	}
	return ws_tail(cp, pos, e, true);
}

static bool poro_word(uint32_t c)
{
	return !(q42_uc_flags(c) & Q42_UC_WS) && !in_ranges(poro_stop, NR(poro_stop), c);
}

/*  ?[^(\s|.,!?…。，、।۔،)]+ */
static size_t m_poro(const uint32_t *cp, size_t pos, size_t e, size_t *skip)
{
	size_t k = pos + (cp[pos] == ' ' ? 1 : 0), s = k;
	(void)skip;
	while (k < e && poro_word(cp[k]))
		k++;
	return k > s ? k - pos : 0;
}

/* Words of [b, e) under one std::regex pattern: matches and the text
 * between them. */
static void split_regex(matcher m, const uint32_t *cp, size_t b, size_t e, emitter *em)
{
	size_t pos = b;
	em->prev = b;
	while (pos < e) {
		size_t skip = pos + 1, k = m(cp, pos, e, &skip);
		if (k == 0) {
			pos = skip;
			continue;
		}
		emit_to(em, pos);
		pos += k;
		emit_to(em, pos);
	}
	emit_to(em, e);
}

/* ---- pass lists ---------------------------------------------------------- */

enum pass_kind { P_GPT2, P_LLAMA3, P_QWEN2, P_QWEN35, P_NEWLINES, P_AFMOE_DIGITS, P_REGEX };

typedef struct pass {
	enum pass_kind kind;
	matcher m;
} pass;

#define MAX_PASSES 6

typedef struct pass_list {
	size_t n;
	pass p[MAX_PASSES];
} pass_list;

static const pass_list lists[] = {
	[PK_DEFAULT] = {4, {{P_REGEX, m_default_punct}, {P_GPT2, NULL}, {P_REGEX, m_num_run},
			    {P_REGEX, m_digit3}}},
	[PK_GPT2] = {1, {{P_GPT2, NULL}}},
	[PK_LLAMA3] = {1, {{P_LLAMA3, NULL}}},
	[PK_QWEN2] = {1, {{P_QWEN2, NULL}}},
	[PK_QWEN35] = {1, {{P_QWEN35, NULL}}},
	[PK_DEEPSEEK_LLM] = {6, {{P_REGEX, m_crlf_one}, {P_REGEX, m_ws_cased},
				 {P_REGEX, m_ws_dspunct}, {P_REGEX, m_ws_end},
				 {P_REGEX, m_ds_cjk}, {P_REGEX, m_num_run}}},
	[PK_DEEPSEEK_CODER] = {5, {{P_REGEX, m_crlf_one}, {P_REGEX, m_ws_letters},
				   {P_REGEX, m_ws_punct}, {P_REGEX, m_ds_cjk},
				   {P_REGEX, m_num_one}}},
	[PK_DEEPSEEK3] = {3, {{P_REGEX, m_num_upto3}, {P_REGEX, m_ds3_cjk},
			      {P_REGEX, m_ds3_main}}},
	[PK_FALCON] = {3, {{P_REGEX, m_falcon_punct}, {P_GPT2, NULL}, {P_REGEX, m_digit3}}},
	[PK_STARCODER] = {2, {{P_REGEX, m_num_one}, {P_GPT2, NULL}}},
	[PK_PORO] = {1, {{P_REGEX, m_poro}}},
	[PK_VIKING] = {2, {{P_REGEX, m_poro}, {P_REGEX, m_num_one}}},
	[PK_LAGUNA] = {2, {{P_NEWLINES, NULL}, {P_QWEN2, NULL}}},
	[PK_AFMOE] = {3, {{P_AFMOE_DIGITS, NULL}, {P_REGEX, m_afmoe_cjk},
			  {P_REGEX, m_ds3_main}}},
	[PK_GEMMA4] = {1, {{P_NEWLINES, NULL}}},
};

static void run_pass(const pass *p, const uint32_t *cp, size_t b, size_t e, emitter *em)
{
	switch (p->kind) {
	case P_GPT2:
		split_gpt2(cp, b, e, em);
		break;
	case P_LLAMA3:
		split_llama3(cp, b, e, em, 3, false);
		break;
	case P_QWEN2:
		split_llama3(cp, b, e, em, 1, false);
		break;
	case P_QWEN35:
		split_llama3(cp, b, e, em, 1, true);
		break;
	case P_NEWLINES:
		split_newlines(cp, b, e, em);
		break;
	case P_AFMOE_DIGITS:
		split_afmoe_digits(cp, b, e, em);
		break;
	case P_REGEX:
		split_regex(p->m, cp, b, e, em);
		break;
	}
}

bool q42_pretok_split(int kind, const uint32_t *cp, size_t n, q42_u32vec *out, q42_u32vec tmp[2])
{
	const pass_list *pl = &lists[kind];
	const q42_u32vec *in = NULL;
	if (n == 0)
		return true;
	/* The first pass sees the whole run; each later pass re-splits the
	 * words of the one before (ping-pong between tmp[0] and tmp[1]). The
	 * last pass appends straight to out. */
	for (size_t i = 0; i < pl->n; i++) {
		q42_u32vec *dst = i + 1 == pl->n ? out : &tmp[i & 1];
		emitter em = {dst, 0, true};
		if (dst != out)
			dst->n = 0;
		if (in == NULL) {
			run_pass(&pl->p[i], cp, 0, n, &em);
		} else {
			size_t start = 0;
			for (size_t w = 0; w < in->n && em.ok; w++) {
				run_pass(&pl->p[i], cp, start, start + in->v[w], &em);
				start += in->v[w];
			}
		}
		if (!em.ok)
			return false;
		in = dst;
	}
	return true;
}

/* ---- names --------------------------------------------------------------- */

typedef struct pre_name {
	const char *name;
	int8_t kind;
	int8_t clean_spaces;
	int8_t ignore_merges;
	int8_t add_bos;
	int8_t no_bos;
} pre_name;

/* Name -> pass list and the flags llama.cpp sets with it (llama-vocab.cpp,
 * llama_vocab::impl::load). */
static const pre_name names[] = {
	{"default", PK_DEFAULT, 1, 0, -1, 0},
	{"llama3", PK_LLAMA3, 1, 1, 1, 0},
	{"llama-v3", PK_LLAMA3, 1, 1, 1, 0},
	{"llama-bpe", PK_LLAMA3, 1, 1, 1, 0},
	{"falcon3", PK_LLAMA3, 1, 1, 1, 0},
	{"falcon-h1", PK_LLAMA3, 1, 1, 1, 0},
	{"pixtral", PK_LLAMA3, 1, 1, 1, 0},
	{"midm-2.0", PK_LLAMA3, 1, 1, 1, 0},
	{"lfm2", PK_LLAMA3, 1, 1, 1, 0},
	{"jina-v5-nano", PK_LLAMA3, 1, 1, 1, 0},
	{"dbrx", PK_LLAMA3, 1, 0, -1, 0},
	{"smaug-bpe", PK_LLAMA3, 1, 0, -1, 0},
	{"glm4", PK_LLAMA3, 1, 0, -1, 1},
	{"chatglm-bpe", PK_LLAMA3, 1, 0, -1, 1},
	{"deepseek-llm", PK_DEEPSEEK_LLM, 0, 0, -1, 0},
	{"deepseek-coder", PK_DEEPSEEK_CODER, 0, 0, -1, 0},
	{"deepseek-v3", PK_DEEPSEEK3, 0, 0, -1, 0},
	{"hunyuan-dense", PK_DEEPSEEK3, 0, 0, -1, 0},
	{"joyai-llm", PK_DEEPSEEK3, 0, 0, -1, 0},
	{"falcon", PK_FALCON, 1, 0, -1, 0},
	{"mpt", PK_GPT2, 1, 0, -1, 0},
	{"gpt-2", PK_GPT2, 1, 0, -1, 0},
	{"phi-2", PK_GPT2, 1, 0, -1, 0},
	{"jina-es", PK_GPT2, 1, 0, -1, 0},
	{"jina-de", PK_GPT2, 1, 0, -1, 0},
	{"gigachat", PK_GPT2, 1, 0, -1, 0},
	{"jina-v2-es", PK_GPT2, 1, 0, -1, 0},
	{"jina-v2-de", PK_GPT2, 1, 0, -1, 0},
	{"a.x-4.0", PK_GPT2, 1, 0, -1, 0},
	{"mellum", PK_GPT2, 1, 0, -1, 0},
	{"modern-bert", PK_GPT2, 1, 0, -1, 0},
	{"jina-v1-en", PK_GPT2, 1, 0, -1, 0},
	{"jina-v2-code", PK_GPT2, 1, 0, -1, 0},
	{"roberta-bpe", PK_GPT2, 1, 0, -1, 0},
	{"olmo", PK_GPT2, 1, 0, -1, 0},
	{"jais", PK_GPT2, 1, 0, -1, 0},
	{"exaone4", PK_GPT2, 1, 0, -1, 0},
	{"trillion", PK_GPT2, 0, 0, -1, 0},
	{"granite-docling", PK_GPT2, 0, 0, -1, 0},
	{"starcoder", PK_STARCODER, 1, 0, -1, 0},
	{"refact", PK_STARCODER, 1, 0, -1, 0},
	{"command-r", PK_STARCODER, 0, 0, -1, 0},
	{"smollm", PK_STARCODER, 0, 0, -1, 0},
	{"codeshell", PK_STARCODER, 1, 0, -1, 0},
	{"exaone", PK_STARCODER, 1, 0, -1, 0},
	{"minerva-7b", PK_STARCODER, 1, 0, -1, 0},
	{"mellum2", PK_STARCODER, 1, 0, -1, 0},
	{"qwen2", PK_QWEN2, 0, 0, -1, 0},
	{"deepseek-r1-qwen", PK_QWEN2, 0, 0, -1, 0},
	{"kormo", PK_QWEN2, 0, 0, -1, 0},
	{"f2llmv2", PK_QWEN2, 0, 0, -1, 0},
	{"stablelm2", PK_QWEN2, 1, 0, -1, 0},
	{"megrez", PK_QWEN2, 1, 0, -1, 0},
	{"hunyuan", PK_QWEN2, 0, 0, -1, 0},
	{"solar-open", PK_QWEN2, 0, 0, -1, 0},
	{"grok-2", PK_QWEN2, 0, 0, -1, 0},
	{"bailingmoe", PK_QWEN2, 0, 0, -1, 0},
	{"bailingmoe2", PK_QWEN2, 0, 0, -1, 0},
	{"llada-moe", PK_QWEN2, 0, 0, -1, 0},
	{"qwen35", PK_QWEN35, 0, 0, -1, 0},
	{"poro-chat", PK_PORO, 0, 0, -1, 0},
	{"bloom", PK_PORO, 1, 0, -1, 0},
	{"gpt3-finnish", PK_PORO, 1, 0, -1, 0},
	{"viking", PK_VIKING, 0, 0, -1, 0},
	{"laguna", PK_LAGUNA, 0, 0, -1, 0},
	{"afmoe", PK_AFMOE, 0, 0, -1, 0},
	{"gemma4", PK_GEMMA4, 1, 0, -1, 0},
	{"granite-embed-multi-311m", PK_GEMMA4, 1, 0, -1, 0},
};

bool q42_pretok_lookup(const char *name, size_t len, q42_pretok_info *info)
{
	if (len == 0) {
		name = "default";
		len = 7;
	}
	for (size_t i = 0; i < NR(names); i++) {
		if (strlen(names[i].name) == len && memcmp(names[i].name, name, len) == 0) {
			info->kind = names[i].kind;
			info->clean_spaces = names[i].clean_spaces != 0;
			info->ignore_merges = names[i].ignore_merges != 0;
			info->add_bos = names[i].add_bos;
			info->no_bos = names[i].no_bos != 0;
			info->escape_ws = names[i].kind == PK_GEMMA4;
			return true;
		}
	}
	return false;
}
