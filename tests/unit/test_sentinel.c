/* test_sentinel.c -- the SPSC rings and the Sentinel's rules, driven
 * directly (no engine).
 *
 * Ring expectations follow from the FIFO contract alone (order, capacity,
 * wrap-around, a slow consumer on another thread). Rule expectations follow
 * from q42run(1), --sentinel: the witness bytes are written out by hand,
 * id sequences and strings are chosen so the expected verdict is obvious;
 * token texts come from stories260K's vocabulary ($Q42_TEST_MODELS; skipped
 * when absent, a failure under CI=true), whose " Amy" is the three tokens
 * 410 447 343 (" ", "A", "my") and " Lily" is token 317 (llamapeer tok,
 * see tests/golden/engine/choices.tsv).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/q42_mount.h"
#include "sentinel/q42_ring.h"
#include "sentinel/q42_sentinel.h"

static void test_ring_init_errors(void **state)
{
	q42_ring r;
	q42_err err = {0};
	(void)state;
	assert_int_equal(q42_ring_init(&r, 3, 4, &err), Q42_EARG);
	assert_int_equal(q42_ring_init(&r, 1, 4, &err), Q42_EARG);
	assert_int_equal(q42_ring_init(&r, 8, 0, &err), Q42_EARG);
	assert_int_equal(q42_ring_init(&r, 8, Q42_RING_ELEM_MAX + 1, &err), Q42_EARG);
	assert_int_equal(q42_ring_init(&r, 8, 4, &err), Q42_OK);
	q42_ring_free(&r);
}

static void test_ring_order_wrap_full(void **state)
{
	q42_ring r;
	q42_err err = {0};
	uint32_t v, next_in = 0, next_out = 0;
	(void)state;
	assert_int_equal(q42_ring_init(&r, 4, sizeof v, &err), Q42_OK);
	assert_false(q42_ring_pop(&r, &v));
	/* full: exactly cap elements fit */
	for (v = 0; v < 4; v++)
		assert_true(q42_ring_push(&r, &v));
	v = 99;
	assert_false(q42_ring_push(&r, &v));
	assert_int_equal(q42_ring_count(&r), 4);
	for (uint32_t i = 0; i < 4; i++) {
		assert_true(q42_ring_pop(&r, &v));
		assert_int_equal(v, i);
	}
	assert_false(q42_ring_pop(&r, &v));
	/* wrap-around many times with 1..3 elements in flight */
	next_in = next_out = 100;
	for (int round = 0; round < 1000; round++) {
		uint32_t k = (uint32_t)(round % 3) + 1;
		for (uint32_t i = 0; i < k; i++) {
			v = next_in++;
			assert_true(q42_ring_push(&r, &v));
		}
		for (uint32_t i = 0; i < k; i++) {
			assert_true(q42_ring_pop(&r, &v));
			assert_int_equal(v, next_out++);
		}
	}
	/* a push refused when full does not disturb the contents */
	for (v = 0; v < 4; v++)
		assert_true(q42_ring_push(&r, &v));
	assert_false(q42_ring_push(&r, &v));
	assert_true(q42_ring_pop(&r, &v));
	assert_int_equal(v, 0);
	v = 7;
	assert_true(q42_ring_push(&r, &v));
	for (uint32_t want = 1; want < 4; want++) {
		assert_true(q42_ring_pop(&r, &v));
		assert_int_equal(v, want);
	}
	assert_true(q42_ring_pop(&r, &v));
	assert_int_equal(v, 7);
	q42_ring_free(&r);
}

#define N_ITEMS 200000u

struct slow {
	q42_ring *r;
	uint64_t got, last, bad;
	bool drops_allowed;
};

static void *slow_consumer(void *arg)
{
	struct slow *c = arg;
	uint64_t v;
	struct timespec ts = {0, 20000};
	c->last = UINT64_MAX;
	for (;;) {
		if (!q42_ring_pop(c->r, &v)) {
			sched_yield();
			continue;
		}
		if (v == UINT64_MAX)
			break;
		/* strictly increasing; without drops, consecutive */
		if (c->last != UINT64_MAX && (v <= c->last || (!c->drops_allowed && v != c->last + 1)))
			c->bad++;
		c->last = v;
		c->got++;
		if (c->got % 4096 == 0)
			nanosleep(&ts, NULL); /* slower than the producer */
	}
	return NULL;
}

static void run_slow(bool drop)
{
	q42_ring r;
	q42_err err = {0};
	pthread_t th;
	struct slow c = {&r, 0, 0, 0, drop};
	uint64_t dropped = 0, end = UINT64_MAX;
	assert_int_equal(q42_ring_init(&r, 64, sizeof(uint64_t), &err), Q42_OK);
	assert_int_equal(pthread_create(&th, NULL, slow_consumer, &c), 0);
	for (uint64_t i = 0; i < N_ITEMS; i++) {
		while (!q42_ring_push(&r, &i)) {
			if (drop) {
				dropped++;
				break;
			}
			sched_yield();
		}
	}
	while (!q42_ring_push(&r, &end))
		sched_yield();
	pthread_join(th, NULL);
	assert_int_equal(c.bad, 0);
	assert_int_equal(c.got + dropped, N_ITEMS);
	if (!drop)
		assert_int_equal(c.last, N_ITEMS - 1);
	q42_ring_free(&r);
}

static void test_ring_slow_consumer_lossless(void **state)
{
	(void)state;
	run_slow(false);
}

static void test_ring_slow_consumer_dropping(void **state)
{
	(void)state;
	run_slow(true);
}

static void test_logit_summary(void **state)
{
	const float l[4] = {1.0f, 2.0f, -1.0f, 0.5f};
	const float bad[3] = {NAN, 1.0f, INFINITY};
	q42_logit_event ev = {0};
	(void)state;
	q42_logit_summary(l, 4, &ev);
	assert_float_equal(ev.max, 2.0f, 0.0f);
	assert_float_equal(ev.gap, 1.0f, 0.0f);
	assert_float_equal(ev.lse, (float)log(exp(1.0) + exp(2.0) + exp(-1.0) + exp(0.5)), 1e-6);
	assert_int_equal(ev.n_nonfinite, 0);
	q42_logit_summary(bad, 3, &ev);
	assert_int_equal(ev.n_nonfinite, 2);
	assert_float_equal(ev.max, 1.0f, 0.0f);
}

/* ---- rules, with a real vocabulary ---- */

static q42_mount *vocab;

static int open_vocab(void **state)
{
	char path[4096];
	const char *d = getenv("Q42_TEST_MODELS");
	q42_err err = {0};
	(void)state;
	snprintf(path, sizeof path, "%s/stories260K.gguf", d && *d ? d : "../shared/models");
	if (access(path, R_OK) != 0)
		return 0;
	return q42_mount_open(&vocab, path, Q42_MOUNT_VOCAB_ONLY, &err) == Q42_OK ? 0 : -1;
}

static int close_vocab(void **state)
{
	(void)state;
	if (vocab != NULL)
		q42_mount_close(vocab);
	return 0;
}

static bool need_vocab(void)
{
	const char *ci = getenv("CI");
	if (vocab != NULL)
		return true;
	if (ci != NULL && strcmp(ci, "true") == 0)
		fail_msg("stories260K.gguf missing under CI=true");
	return false;
}

/* Submit (step, token, logit) and return the rule of the verdict. */
static uint32_t verdict(q42_sentinel *s, uint32_t step, int32_t tok, float logit)
{
	q42_logit_event ev = {0};
	q42_deny d;
	uint32_t rule = Q42_RULE_NONE;
	ev.step = step;
	ev.token = tok;
	ev.logit = logit;
	assert_true(q42_sentinel_submit(s, &ev));
	q42_sentinel_wait(s);
	while (q42_sentinel_poll(s, &d)) {
		assert_int_equal(d.seq, ev.seq);
		assert_int_equal(d.step, step);
		assert_int_equal(d.token, tok);
		rule = d.rule;
	}
	return rule;
}

static char *write_file(const char *text)
{
	static char path[] = "/tmp/q42-test-banned-XXXXXX";
	int fd;
	strcpy(path, "/tmp/q42-test-banned-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void test_rules(void **state)
{
	q42_sentinel *s = NULL;
	q42_err err = {0};
	char spec[256];
	float witness, plain = 1.0f;
	const unsigned char wb[4] = {0x00, 0x99, 0x80, 0x3f}; /* little-endian bytes of a float */
	char *path;
	(void)state;
	if (!need_vocab())
		skip();
	memcpy(&witness, wb, sizeof witness);
	const q42_tokenizer *tok = q42_mount_tokenizer(vocab);

	/* spec errors */
	assert_int_equal(q42_sentinel_open(&s, "witness,bogus", tok, &err), Q42_EARG);
	assert_non_null(strstr(err.msg, "bogus"));
	assert_int_equal(q42_sentinel_open(&s, "repeat=0", tok, &err), Q42_EARG);
	assert_int_equal(q42_sentinel_open(&s, "banned=/nonexistent/x", tok, &err), Q42_EIO);
	path = write_file("ids: 5 99999\n");
	snprintf(spec, sizeof spec, "banned=%s", path);
	assert_int_equal(q42_sentinel_open(&s, spec, tok, &err), Q42_EARG);
	assert_non_null(strstr(err.msg, "line 1"));
	unlink(path);

	/* witness and nonfinite */
	assert_int_equal(q42_sentinel_open(&s, "witness", tok, &err), Q42_OK);
	assert_string_equal(q42_sentinel_rules(s), "nonfinite,witness");
	assert_int_equal(q42_sentinel_start(s, &err), Q42_OK);
	assert_int_equal(verdict(s, 0, 5, plain), Q42_RULE_NONE);
	assert_int_equal(verdict(s, 1, 5, witness), Q42_RULE_WITNESS);
	assert_int_equal(verdict(s, 1, 6, plain), Q42_RULE_NONE);
	{
		q42_logit_event ev = {0};
		q42_deny d;
		ev.step = 2;
		ev.token = 7;
		ev.n_nonfinite = 3;
		assert_true(q42_sentinel_submit(s, &ev));
		q42_sentinel_wait(s);
		assert_true(q42_sentinel_poll(s, &d));
		assert_int_equal(d.rule, Q42_RULE_NONFINITE);
	}
	q42_sentinel_stop(s);
	q42_sentinel_close(s);

	/* banned: an id sequence, a string split over three tokens, a string
	 * inside one token; a re-sent step replaces the denied token */
	path = write_file("# comment\n\nids: 5 6\nAmy\nily\n");
	snprintf(spec, sizeof spec, "banned=%s,repeat=2", path);
	assert_int_equal(q42_sentinel_open(&s, spec, tok, &err), Q42_OK);
	unlink(path);
	assert_string_equal(q42_sentinel_rules(s), "nonfinite,banned,repeat=2");
	assert_int_equal(q42_sentinel_start(s, &err), Q42_OK);
	assert_int_equal(verdict(s, 0, 5, plain), Q42_RULE_NONE);
	assert_int_equal(verdict(s, 1, 6, plain), Q42_RULE_BANNED);
	assert_int_equal(verdict(s, 1, 410, plain), Q42_RULE_NONE);  /* " " */
	assert_int_equal(verdict(s, 2, 447, plain), Q42_RULE_NONE);  /* "A" */
	assert_int_equal(verdict(s, 3, 343, plain), Q42_RULE_BANNED); /* "my" completes "Amy" */
	assert_int_equal(verdict(s, 3, 317, plain), Q42_RULE_BANNED); /* " Lily" holds "ily" */
	assert_int_equal(verdict(s, 3, 8, plain), Q42_RULE_NONE);
	/* repeat=2: the bigram (410 447) again */
	assert_int_equal(verdict(s, 4, 410, plain), Q42_RULE_NONE);
	assert_int_equal(verdict(s, 5, 447, plain), Q42_RULE_REPEAT);
	assert_int_equal(verdict(s, 5, 9, plain), Q42_RULE_NONE);
	/* a new request starts from nothing */
	q42_sentinel_stop(s);
	assert_int_equal(q42_sentinel_start(s, &err), Q42_OK);
	assert_int_equal(verdict(s, 0, 410, plain), Q42_RULE_NONE);
	assert_int_equal(verdict(s, 1, 447, plain), Q42_RULE_NONE);
	assert_int_equal(q42_sentinel_dropped(s), 0);
	q42_sentinel_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_init_errors),
		cmocka_unit_test(test_ring_order_wrap_full),
		cmocka_unit_test(test_ring_slow_consumer_lossless),
		cmocka_unit_test(test_ring_slow_consumer_dropping),
		cmocka_unit_test(test_logit_summary),
		cmocka_unit_test(test_rules),
	};
	return cmocka_run_group_tests(tests, open_vocab, close_vocab);
}
