/* q42_ring.h -- a fixed-capacity, wait-free single-producer/single-consumer
 * ring of fixed-size elements.
 *
 * The Sentinel's two streams (engine -> Sentinel, Sentinel -> engine) are
 * such rings. Storage is allocated once by q42_ring_init; push and pop
 * never allocate, never lock and never wait: a full ring refuses a push, an
 * empty ring refuses a pop. Exactly one thread may push and exactly one
 * (other) thread may pop; anything else is a data race. The head and tail
 * counters use C11 acquire/release ordering so that an element's bytes are
 * visible to the consumer before the counter that publishes them.
 */
#ifndef Q42_RING_H
#define Q42_RING_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/q42_err.h"

#define Q42_RING_CAP_MAX (1u << 20) /* elements */
#define Q42_RING_ELEM_MAX 256u      /* bytes per element */

typedef struct q42_ring {
	/* producer and consumer counters on separate cache lines */
	alignas(64) _Atomic uint64_t head; /* next slot to write; owned by the producer */
	alignas(64) _Atomic uint64_t tail; /* next slot to read; owned by the consumer */
	alignas(64) unsigned char *slots;
	uint32_t cap;       /* power of two */
	uint32_t elem_size;
} q42_ring;

/* cap: a power of two in 2..Q42_RING_CAP_MAX; elem_size 1..Q42_RING_ELEM_MAX.
 * Q42_EARG otherwise, Q42_ENOMEM. */
Q42_API int q42_ring_init(q42_ring *r, uint32_t cap, uint32_t elem_size, q42_err *err);
Q42_API void q42_ring_free(q42_ring *r);
/* Empty the ring. Only while neither side is using it. */
Q42_API void q42_ring_clear(q42_ring *r);
/* Producer: copy elem_size bytes in; false when the ring is full. */
Q42_API bool q42_ring_push(q42_ring *r, const void *elem);
/* Consumer: copy the oldest element out; false when the ring is empty. */
Q42_API bool q42_ring_pop(q42_ring *r, void *elem);
/* Elements waiting (exact for either side's own view, a snapshot otherwise). */
Q42_API uint32_t q42_ring_count(q42_ring *r);

#endif
