/* q42_pool.c -- fixed-size pthread pool: a short bounded spin, then a
 * futex.
 *
 * A job is published by bumping a 32-bit generation word; workers run it
 * and count a pending word down. Both sides spin for at most
 * Q42_POOL_SPIN_NS before sleeping on the word they wait for (futex), so
 * the jobs of one forward pass, a few microseconds apart, never go through
 * the kernel, while an engine idle between requests has every worker
 * asleep after a fraction of a millisecond (no CPU burnt). A sleeper is
 * announced in a counter before it sleeps and the other side reads that
 * counter after its own store (both sequentially consistent), so a wake-up
 * cannot be missed and a sleeper-free job costs no system call.
 * There is no queue: each job divides its work itself (fixed shares, or
 * tiles claimed from a counter where every tile is computed the same way
 * by whichever thread takes it), so results never depend on timing.
 */
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "engine/q42_pool.h"

struct q42_pool {
	uint32_t n;
	pthread_t *th;
	uint32_t n_started;
	_Atomic uint32_t gen;      /* futex word of the workers: one bump per job */
	_Atomic uint32_t pending;  /* futex word of the caller: workers still busy */
	_Atomic uint32_t sleepers; /* workers asleep (or about to be) on gen */
	_Atomic uint32_t waiting;  /* 1 while the caller sleeps (or is about to) on pending */
	atomic_bool quit;
	q42_pool_fn fn;
	void *arg;
};

struct worker_arg {
	q42_pool *p;
	uint32_t ith;
};

/* Longer than the serial gaps between the jobs of one pass, far shorter
 * than a human-scale pause between requests. */
#define Q42_POOL_SPIN_NS 60000

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sleep while *w == seen (returns at once when it already differs). */
static void futex_wait(_Atomic uint32_t *w, uint32_t seen)
{
	syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *w, int n)
{
	syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* Spin until *w != v or the spin budget is spent; true when it changed.
 * The clock is read once every 64 pauses. */
static bool spin_while(_Atomic uint32_t *w, uint32_t v)
{
	uint64_t t0 = 0;
	for (uint32_t i = 1;; i++) {
		if (atomic_load_explicit(w, memory_order_acquire) != v)
			return true;
		cpu_relax();
		if (i % 64 == 0) {
			uint64_t t = now_ns();
			if (t0 == 0)
				t0 = t;
			else if (t - t0 > Q42_POOL_SPIN_NS)
				return false;
		}
	}
}

static void *worker_main(void *v)
{
	q42_pool *p = ((struct worker_arg *)v)->p;
	uint32_t ith = ((struct worker_arg *)v)->ith;
	uint32_t seen = 0;
	free(v);
	for (;;) {
		while (atomic_load(&p->gen) == seen) {
			if (spin_while(&p->gen, seen))
				break;
			atomic_fetch_add(&p->sleepers, 1);
			futex_wait(&p->gen, seen);
			atomic_fetch_sub(&p->sleepers, 1);
		}
		seen = atomic_load(&p->gen);
		if (atomic_load(&p->quit))
			return NULL;
		/* fn and arg were written before gen was bumped */
		p->fn(p->arg, ith, p->n);
		if (atomic_fetch_sub(&p->pending, 1) == 1 && atomic_load(&p->waiting) != 0)
			futex_wake(&p->pending, 1);
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
	atomic_store(&p->quit, true);
	atomic_fetch_add(&p->gen, 1);
	futex_wake(&p->gen, (int)Q42_POOL_MAX_THREADS);
	for (uint32_t i = 0; i < p->n_started; i++)
		pthread_join(p->th[i], NULL);
	free(p->th);
	free(p);
}

uint32_t q42_pool_size(const q42_pool *p)
{
	return p->n;
}

void q42_pool_run(q42_pool *p, q42_pool_fn fn, void *arg)
{
	uint32_t left;
	if (p->n == 1) {
		fn(arg, 0, 1);
		return;
	}
	p->fn = fn;
	p->arg = arg;
	atomic_store(&p->pending, p->n - 1);
	atomic_fetch_add(&p->gen, 1);
	if (atomic_load(&p->sleepers) != 0)
		futex_wake(&p->gen, (int)Q42_POOL_MAX_THREADS);

	fn(arg, 0, p->n);

	while ((left = atomic_load(&p->pending)) != 0) {
		if (spin_while(&p->pending, left))
			continue;
		atomic_store(&p->waiting, 1);
		left = atomic_load(&p->pending);
		if (left != 0)
			futex_wait(&p->pending, left);
		atomic_store(&p->waiting, 0);
	}
}
