/* q42_pool.h -- the engine's worker threads.
 *
 * One pool per engine, created when the engine opens and joined when it
 * closes. A job is a function called once on every thread with (ith, nth);
 * the caller is thread 0. Jobs split work so that every output element is
 * computed by exactly one thread, in an order that does not depend on
 * which thread it is (fixed shares, or tiles taken from a shared counter),
 * which is why results do not depend on the thread count or on timing.
 * Idle workers sleep on a futex after a short bounded spin; nothing here
 * allocates per job.
 */
#ifndef Q42_POOL_H
#define Q42_POOL_H

#include <stdint.h>
#include "common/q42_err.h"

#define Q42_POOL_MAX_THREADS 256u

typedef struct q42_pool q42_pool;
typedef void (*q42_pool_fn)(void *arg, uint32_t ith, uint32_t nth);

/* n_threads >= 1 (1 = no worker threads, jobs run on the caller). */
Q42_API int q42_pool_open(q42_pool **out, uint32_t n_threads, q42_err *err);
Q42_API void q42_pool_close(q42_pool *p);
Q42_API uint32_t q42_pool_size(const q42_pool *p);

/* Run fn on all threads and return when every call has returned. */
Q42_API void q42_pool_run(q42_pool *p, q42_pool_fn fn, void *arg);

/* Number of online cores (at least 1, at most Q42_POOL_MAX_THREADS). */
Q42_API uint32_t q42_pool_default_threads(void);

#endif
