/* q42_pool.c -- fixed-size pthread pool: a short spin, then a
 * condition-variable hand-off.
 *
 * A job is published by bumping an atomic generation counter (under the
 * mutex, so sleepers cannot miss it); workers wake, run it, and the last
 * one to finish signals the caller. A decode step runs a few hundred jobs
 * of a few tens of microseconds each, so both sides first spin for about
 * Q42_POOL_SPIN pause instructions before sleeping: waking through the
 * kernel every time would cost more than the jobs. Between requests the
 * spin runs out and every worker sleeps.
 * There is no work stealing and no queue: each job tells every thread which
 * fixed share it owns, so the assignment of work never depends on timing.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>
#include "engine/q42_pool.h"

struct q42_pool {
	uint32_t n;
	pthread_t *th;
	uint32_t n_started;
	pthread_mutex_t mu;
	pthread_cond_t cv_work;
	pthread_cond_t cv_done;
	atomic_uint_fast64_t gen;
	atomic_uint pending;
	atomic_bool quit;
	q42_pool_fn fn;
	void *arg;
};

struct worker_arg {
	q42_pool *p;
	uint32_t ith;
};

/* About 50-100 microseconds of pause instructions. */
#define Q42_POOL_SPIN 4096

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static void *worker_main(void *v)
{
	q42_pool *p = ((struct worker_arg *)v)->p;
	uint32_t ith = ((struct worker_arg *)v)->ith;
	uint64_t seen = 0;
	free(v);
	for (;;) {
		uint64_t g;
		int spins = 0;
		while ((g = atomic_load_explicit(&p->gen, memory_order_acquire)) == seen &&
		       !atomic_load_explicit(&p->quit, memory_order_acquire)) {
			if (++spins < Q42_POOL_SPIN) {
				cpu_relax();
				continue;
			}
			pthread_mutex_lock(&p->mu);
			while (atomic_load(&p->gen) == seen && !atomic_load(&p->quit))
				pthread_cond_wait(&p->cv_work, &p->mu);
			pthread_mutex_unlock(&p->mu);
		}
		if (atomic_load_explicit(&p->quit, memory_order_acquire))
			return NULL;
		seen = g;
		/* fn and arg were written before gen was released */
		p->fn(p->arg, ith, p->n);
		if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) == 1) {
			pthread_mutex_lock(&p->mu);
			pthread_cond_signal(&p->cv_done);
			pthread_mutex_unlock(&p->mu);
		}
	}
}

uint32_t q42_pool_default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		return 1;
	if (n > (long)Q42_POOL_MAX_THREADS)
		return Q42_POOL_MAX_THREADS;
	return (uint32_t)n;
}

int q42_pool_open(q42_pool **out, uint32_t n_threads, q42_err *err)
{
	q42_pool *p = NULL;
	int rc;
	*out = NULL;
	if (n_threads < 1 || n_threads > Q42_POOL_MAX_THREADS)
		return q42_err_set(err, Q42_EARG, "threads: %u is outside 1..%u", n_threads,
				   Q42_POOL_MAX_THREADS);
	p = calloc(1, sizeof *p);
	if (p == NULL)
		return q42_err_set(err, Q42_ENOMEM, "thread pool: out of memory");
	p->n = n_threads;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv_work, NULL);
	pthread_cond_init(&p->cv_done, NULL);
	if (n_threads > 1) {
		p->th = calloc(n_threads - 1, sizeof *p->th);
		if (p->th == NULL) {
			rc = q42_err_set(err, Q42_ENOMEM, "thread pool: out of memory");
			goto fail;
		}
	}
	for (uint32_t i = 1; i < n_threads; i++) {
		struct worker_arg *wa = malloc(sizeof *wa);
		if (wa == NULL) {
			rc = q42_err_set(err, Q42_ENOMEM, "thread pool: out of memory");
			goto fail;
		}
		wa->p = p;
		wa->ith = i;
		if (pthread_create(&p->th[i - 1], NULL, worker_main, wa) != 0) {
			free(wa);
			rc = q42_err_set(err, Q42_EIO, "thread pool: cannot start thread %u of %u", i,
					 n_threads);
			goto fail;
		}
		p->n_started++;
	}
	*out = p;
	return Q42_OK;
fail:
	q42_pool_close(p);
	return rc;
}

void q42_pool_close(q42_pool *p)
{
	if (p == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	atomic_store(&p->quit, true);
	pthread_cond_broadcast(&p->cv_work);
	pthread_mutex_unlock(&p->mu);
	for (uint32_t i = 0; i < p->n_started; i++)
		pthread_join(p->th[i], NULL);
	pthread_cond_destroy(&p->cv_done);
	pthread_cond_destroy(&p->cv_work);
	pthread_mutex_destroy(&p->mu);
	free(p->th);
	free(p);
}

uint32_t q42_pool_size(const q42_pool *p)
{
	return p->n;
}

void q42_pool_run(q42_pool *p, q42_pool_fn fn, void *arg)
{
	if (p->n == 1) {
		fn(arg, 0, 1);
		return;
	}
	p->fn = fn;
	p->arg = arg;
	atomic_store_explicit(&p->pending, p->n - 1, memory_order_relaxed);
	pthread_mutex_lock(&p->mu);
	atomic_fetch_add_explicit(&p->gen, 1, memory_order_release);
	pthread_cond_broadcast(&p->cv_work);
	pthread_mutex_unlock(&p->mu);

	fn(arg, 0, p->n);

	for (int spins = 0; atomic_load_explicit(&p->pending, memory_order_acquire) != 0; spins++) {
		if (spins < Q42_POOL_SPIN) {
			cpu_relax();
			continue;
		}
		pthread_mutex_lock(&p->mu);
		while (atomic_load(&p->pending) != 0)
			pthread_cond_wait(&p->cv_done, &p->mu);
		pthread_mutex_unlock(&p->mu);
	}
}
