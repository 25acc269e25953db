/* q42_prefix.h -- prefix reuse: the cache state of prompt prefixes kept
 * across the requests of one process, so that a request whose prompt
 * starts as an earlier one did evaluates only the rest.
 *
 * The rule that keeps a warm request's bits those of a cold one: a
 * prompt is evaluated in passes of n_batch tokens from position 0, and a
 * token's rounding depends on its pass in two ways only (q42_llamacpp.h):
 * whether the pass has one token (vec_dot or tinyBLAS, attention's
 * products likewise), and whether the token lies in a whole group of four
 * counted from the pass's start (the gemm order of the repacked Q4_K and
 * Q2_K products; the rest of a pass takes the gemv order). Everything
 * else a token computes is its own row. So a state is reused up to a
 * start both prompts' cold runs compute alike: a pass boundary, or whole
 * groups of four past one, within their common tokens and below the new
 * prompt's last token; and never where the pass evaluated from there up
 * to the next boundary would have one token when the cold run's has
 * more. That pass and the following ones then give every token the
 * class (one token; in a group of four) it has in the cold run, over the
 * same cache bytes, so every later bit is the cold run's. A state keeps
 * only a prompt's settled positions: its whole passes and the whole
 * groups of four of its last pass (the rest of that pass would be in a
 * group, or in a pass of several, in a longer prompt). Positions past a
 * prompt (generated tokens, scored options) are never reused.
 * tests/tools/pass_split.c shows the rule on the models. Under flash
 * attention the pass length also picks the attention's form (tiled from
 * q42_engine_flash_tile tokens on): positions past a boundary are reused
 * only where the new prompt's cold pass takes the form the stored one
 * took, and the first warm pass keeps the cold pass's side of the tile.
 *
 * Two places hold states: the engine's own cache (the live state, the
 * last prompt; reusing it costs nothing), and a cache of copies
 * (q42_engine_state_get) bounded in bytes, least recently used first out,
 * into which the live state is copied before a request overwrites a part
 * of it that no copy holds. Nothing here prints.
 */
#ifndef Q42_PREFIX_H
#define Q42_PREFIX_H

#include <stdint.h>
#include "common/q42_err.h"
#include "engine/q42_engine.h"

#define Q42_PREFIX_CACHE_BYTES_DEFAULT (256ull << 20) /* q42run --cache-bytes */

typedef struct q42_prefix q42_prefix;

/* Counts since open, for records and benchmarks. */
typedef struct q42_prefix_stats {
	uint64_t prompts;        /* prompts begun */
	uint64_t tokens;         /* their tokens */
	uint64_t reused;         /* of which taken from a state */
	uint64_t copies_out;     /* states copied into the cache */
	uint64_t copies_in;      /* states copied back into the engine */
	uint64_t evictions;
	uint64_t bytes;          /* bytes the cache holds now */
} q42_prefix_stats;

/* Reuse for engine e, keeping at most cache_bytes of copies (0: the live
 * state only). Q42_EUNSUPPORTED when e's backend is not the CPU. */
Q42_API int q42_prefix_open(q42_prefix **out, q42_engine *e, uint64_t cache_bytes, q42_err *err);
Q42_API void q42_prefix_close(q42_prefix *p);

/* Before a prompt of n tokens (n >= 1) is evaluated from position 0:
 * leave the engine with positions 0..*from-1 holding ids[0..*from-1] as a
 * cold evaluation of ids left them (*from < n; 0 when nothing is reused,
 * the cache then reset). The caller evaluates ids[*from..] in the cold
 * run's passes: first up to the next multiple of n_batch (or n), then
 * passes of n_batch; then it calls q42_prefix_end. A
 * copy that cannot be made (memory) is simply not kept. Errors: those of
 * q42_engine_state_put and q42_engine_truncate, which a state made by this
 * engine never gives (the engine is then reset, nothing reused). */
Q42_API int q42_prefix_begin(q42_prefix *p, const int32_t *ids, uint32_t n, uint32_t *from,
			     q42_err *err);
/* The prompt ids[0..n_done-1] is now in the engine as a cold evaluation
 * leaves it (n_done short of the prompt when a deadline cut the prefill):
 * its settled positions become the live state. Always Q42_OK. */
Q42_API int q42_prefix_end(q42_prefix *p, const int32_t *ids, uint32_t n_done, q42_err *err);

/* Add a copy of n positions holding ids (state: q42_engine_state_bytes(n)
 * bytes; ids and state malloc()ed and taken over, even on error) as if it
 * had been made here, e.g. read from a q42-state(5) file: used by the
 * next begin whatever the cache's bound, kept afterwards only within it.
 * Q42_ENOMEM. */
Q42_API int q42_prefix_add(q42_prefix *p, int32_t *ids, uint32_t n, uint8_t *state, q42_err *err);

/* The positions of a prompt of n tokens, evaluated cold in passes of
 * n_batch (>= 1), that every longer prompt sharing them evaluates to the
 * same bits: its whole passes, then the whole groups of four of its last
 * pass. A state holds only these (q42-state(5)). */
Q42_API uint32_t q42_prefix_settled(uint32_t n_batch, uint32_t n);

/* The live state's reusable positions and their ids (valid until the next
 * begin or end). */
Q42_API uint32_t q42_prefix_live(const q42_prefix *p, const int32_t **ids);

Q42_API void q42_prefix_get_stats(const q42_prefix *p, q42_prefix_stats *s);

#endif
