/* q42_unicode.h -- codepoint classes and UTF-8 helpers for the tokenizers.
 *
 * Internal to lib/tokenizer. The class table (q42_unicode_data.c) is
 * generated from the Unicode Character Database by
 * tests/tools/gen_unicode_table.py; these inline helpers only read it.
 * UTF-8 decoding here follows llama.cpp's lenient decoder on purpose (it
 * defines which bytes become U+FFFD before BPE), so it must not be
 * "fixed" into a strict one.
 */
#ifndef Q42_UNICODE_H
#define Q42_UNICODE_H

#include <stddef.h>
#include <stdint.h>

enum q42_uc_cat {
	Q42_UC_UNDEF = 0,  /* unassigned (Cn) */
	Q42_UC_NUMBER = 1, /* \p{N} */
	Q42_UC_LETTER = 2, /* \p{L} */
	Q42_UC_SEP = 3,    /* \p{Z} */
	Q42_UC_MARK = 4,   /* \p{M} */
	Q42_UC_PUNCT = 5,  /* \p{P} */
	Q42_UC_SYMBOL = 6, /* \p{S} */
	Q42_UC_CONTROL = 7 /* \p{C} other than Cn */
};

#define Q42_UC_CAT_MASK 7u
#define Q42_UC_WS 8u        /* White_Space (\s) */
#define Q42_UC_BLOCK_LOG2 7
#define Q42_UC_MAX 0x110000u
#define Q42_UC_REPLACEMENT 0xFFFDu

extern const uint8_t q42_uc_stage1[Q42_UC_MAX >> Q42_UC_BLOCK_LOG2];
extern const uint8_t q42_uc_stage2[][1u << Q42_UC_BLOCK_LOG2];
extern const uint32_t q42_uc_lower_ascii[][2];
extern const size_t q42_uc_lower_ascii_n;

/* Class byte of a codepoint; codepoints past U+10FFFF are unassigned. */
static inline uint8_t q42_uc_flags(uint32_t cpt)
{
	if (cpt >= Q42_UC_MAX)
		return Q42_UC_UNDEF;
	return q42_uc_stage2[q42_uc_stage1[cpt >> Q42_UC_BLOCK_LOG2]]
			    [cpt & ((1u << Q42_UC_BLOCK_LOG2) - 1)];
}

/* Simple lowercase mapping, needed only to tell whether a codepoint
 * lowercases to an ASCII letter (case-insensitive contractions). */
static inline uint32_t q42_uc_tolower_ascii(uint32_t cpt)
{
	if (cpt >= 'A' && cpt <= 'Z')
		return cpt + 32;
	for (size_t i = 0; i < q42_uc_lower_ascii_n; i++)
		if (q42_uc_lower_ascii[i][0] == cpt)
			return q42_uc_lower_ascii[i][1];
	return cpt;
}

/* BERT's normaliser (q42_unicode_norm.c, generated): simple lowercase
 * pairs sorted by codepoint, ranges [first, last] whose canonical
 * decomposition starts with one codepoint, and the ranges of nonspacing
 * marks (Mn). */
extern const uint32_t q42_uc_lower[][2];
extern const size_t q42_uc_lower_n;
extern const uint32_t q42_uc_nfd[][3];
extern const size_t q42_uc_nfd_n;
extern const uint32_t q42_uc_mn[][2];
extern const size_t q42_uc_mn_n;

/* Index of the last row of a sorted table (stride words a row) whose first
 * word is <= cpt; n when there is none. */
static inline size_t q42_uc_find(const uint32_t *tab, size_t n, size_t stride, uint32_t cpt)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2;
		if (tab[mid * stride] <= cpt)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 ? n : lo - 1;
}

/* The simple lowercase of cpt (itself when it has none). */
static inline uint32_t q42_uc_tolower(uint32_t cpt)
{
	const size_t i = q42_uc_find(&q42_uc_lower[0][0], q42_uc_lower_n, 2, cpt);
	return i < q42_uc_lower_n && q42_uc_lower[i][0] == cpt ? q42_uc_lower[i][1] : cpt;
}

/* The first codepoint of cpt's canonical decomposition (itself when it
 * has none), as llama.cpp's unicode_cpts_normalize_nfd gives it. */
static inline uint32_t q42_uc_nfd_first(uint32_t cpt)
{
	const size_t i = q42_uc_find(&q42_uc_nfd[0][0], q42_uc_nfd_n, 3, cpt);
	return i < q42_uc_nfd_n && cpt <= q42_uc_nfd[i][1] ? q42_uc_nfd[i][2] : cpt;
}

/* Whether cpt is a nonspacing mark (general category Mn). */
static inline int q42_uc_is_mn(uint32_t cpt)
{
	const size_t i = q42_uc_find(&q42_uc_mn[0][0], q42_uc_mn_n, 2, cpt);
	return i < q42_uc_mn_n && cpt <= q42_uc_mn[i][1];
}

/* Length of the UTF-8 sequence a lead byte announces (1 for continuation
 * bytes), as llama.cpp's unicode_len_utf8. */
static inline size_t q42_utf8_len(uint8_t c)
{
	static const uint8_t len[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
	return len[c >> 4];
}

/* Decode one codepoint at s[*off] (n bytes total) the way llama.cpp does:
 * continuation bytes are checked, overlong forms and surrogates are not;
 * an invalid or truncated sequence yields U+FFFD and consumes one byte. */
static inline uint32_t q42_utf8_decode(const uint8_t *s, size_t n, size_t *off)
{
	size_t i = *off;
	uint8_t c = s[i];
	if (c < 0x80) {
		*off = i + 1;
		return c;
	}
	if ((c & 0xE0) == 0xC0) {
		if (i + 1 < n && (s[i + 1] & 0xC0) == 0x80) {
			*off = i + 2;
			return ((uint32_t)(c & 0x1F) << 6) | (s[i + 1] & 0x3Fu);
		}
	} else if ((c & 0xF0) == 0xE0) {
		if (i + 2 < n && (s[i + 1] & 0xC0) == 0x80 && (s[i + 2] & 0xC0) == 0x80) {
			*off = i + 3;
			return ((uint32_t)(c & 0x0F) << 12) | ((uint32_t)(s[i + 1] & 0x3F) << 6) |
			       (s[i + 2] & 0x3Fu);
		}
	} else if ((c & 0xF8) == 0xF0) {
		if (i + 3 < n && (s[i + 1] & 0xC0) == 0x80 && (s[i + 2] & 0xC0) == 0x80 &&
		    (s[i + 3] & 0xC0) == 0x80) {
			*off = i + 4;
			return ((uint32_t)(c & 0x07) << 18) | ((uint32_t)(s[i + 1] & 0x3F) << 12) |
			       ((uint32_t)(s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3Fu);
		}
	}
	*off = i + 1;
	return Q42_UC_REPLACEMENT;
}

/* Encode cpt (<= 0x1FFFFF) as UTF-8 into out[4]; returns the length. */
static inline size_t q42_utf8_encode(uint32_t cpt, uint8_t *out)
{
	if (cpt < 0x80) {
		out[0] = (uint8_t)cpt;
		return 1;
	}
	if (cpt < 0x800) {
		out[0] = (uint8_t)(0xC0 | (cpt >> 6));
		out[1] = (uint8_t)(0x80 | (cpt & 0x3F));
		return 2;
	}
	if (cpt < 0x10000) {
		out[0] = (uint8_t)(0xE0 | (cpt >> 12));
		out[1] = (uint8_t)(0x80 | ((cpt >> 6) & 0x3F));
		out[2] = (uint8_t)(0x80 | (cpt & 0x3F));
		return 3;
	}
	out[0] = (uint8_t)(0xF0 | ((cpt >> 18) & 0x07));
	out[1] = (uint8_t)(0x80 | ((cpt >> 12) & 0x3F));
	out[2] = (uint8_t)(0x80 | ((cpt >> 6) & 0x3F));
	out[3] = (uint8_t)(0x80 | (cpt & 0x3F));
	return 4;
}

#endif
