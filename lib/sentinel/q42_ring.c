/* q42_ring.c -- the SPSC ring: two monotonically increasing 64-bit
 * counters, slot index = counter & (cap - 1).
 *
 * Each side reads the other's counter with acquire and publishes its own
 * with release; its own counter it may read relaxed. 64-bit counters do
 * not wrap in any realistic run, so full is head - tail == cap. Never
 * allocates after q42_ring_init, never blocks.
 */
#include <stdlib.h>
#include <string.h>
#include "sentinel/q42_ring.h"

int q42_ring_init(q42_ring *r, uint32_t cap, uint32_t elem_size, q42_err *err)
{
	memset(r, 0, sizeof *r);
	if (cap < 2 || cap > Q42_RING_CAP_MAX || (cap & (cap - 1)) != 0)
		return q42_err_set(err, Q42_EARG, "ring: capacity %u is not a power of two in 2..%u",
				   cap, Q42_RING_CAP_MAX);
	if (elem_size == 0 || elem_size > Q42_RING_ELEM_MAX)
		return q42_err_set(err, Q42_EARG, "ring: element size %u not in 1..%u", elem_size,
				   Q42_RING_ELEM_MAX);
	r->slots = calloc(cap, elem_size);
	if (r->slots == NULL)
		return q42_err_set(err, Q42_ENOMEM, "ring: out of memory");
	r->cap = cap;
	r->elem_size = elem_size;
	atomic_init(&r->head, 0);
	atomic_init(&r->tail, 0);
	return Q42_OK;
}

void q42_ring_free(q42_ring *r)
{
	free(r->slots);
	r->slots = NULL;
	r->cap = 0;
}

void q42_ring_clear(q42_ring *r)
{
	atomic_store_explicit(&r->head, 0, memory_order_relaxed);
	atomic_store_explicit(&r->tail, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
}

bool q42_ring_push(q42_ring *r, const void *elem)
{
	uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint64_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
	if (h - t >= r->cap)
		return false;
	memcpy(r->slots + (size_t)(h & (r->cap - 1)) * r->elem_size, elem, r->elem_size);
	atomic_store_explicit(&r->head, h + 1, memory_order_release);
	return true;
}

bool q42_ring_pop(q42_ring *r, void *elem)
{
	uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
	if (h == t)
		return false;
	memcpy(elem, r->slots + (size_t)(t & (r->cap - 1)) * r->elem_size, r->elem_size);
	atomic_store_explicit(&r->tail, t + 1, memory_order_release);
	return true;
}

uint32_t q42_ring_count(q42_ring *r)
{
	uint64_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
	return (uint32_t)(h - t);
}
