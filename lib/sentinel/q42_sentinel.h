/* q42_sentinel.h -- the Sentinel: rules checked on every generated token,
 * on a thread of its own, before the token is committed.
 *
 * The decode loop (q42_generate) sends one event per step on the
 * LogitStream ring (step, selected token, its logit, a summary of the
 * distribution) and reads DenyRollback messages from the ControlStream
 * ring. The Sentinel thread never touches the engine; the engine never
 * waits on the Sentinel except in q42_sentinel_wait, which the loop calls
 * for step s only after the forward pass of step s, so the check overlaps
 * the forward pass and the verdicts do not depend on timing. Rules and
 * their semantics are specified in q42run(1), option --sentinel.
 */
#ifndef Q42_SENTINEL_H
#define Q42_SENTINEL_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_err.h"
#include "tokenizer/q42_tokenizer.h"

#define Q42_SENTINEL_RING_CAP 64u        /* events (and denials) in flight */
#define Q42_SENTINEL_WINDOW 4096u        /* generated tokens the rules look back over */
#define Q42_SENTINEL_BANNED_MAX 4096u    /* entries in a banned file */
#define Q42_SENTINEL_BANNED_BYTES 256u   /* longest banned string */
#define Q42_SENTINEL_BANNED_IDS 64u      /* longest banned id sequence */
#define Q42_SENTINEL_REPEAT_MAX 256u     /* largest N of repeat=N */
#define Q42_SENTINEL_FILE_MAX (1u << 20) /* bytes of a banned file */

enum q42_rule {
	Q42_RULE_NONE = 0,
	Q42_RULE_NONFINITE = 1, /* NaN or Inf in the logits: always on */
	Q42_RULE_WITNESS = 2,   /* the selected logit's float bytes contain 0x99 */
	Q42_RULE_BANNED = 3,    /* a banned string or id sequence would be emitted */
	Q42_RULE_REPEAT = 4,    /* an n-gram of the output would occur a second time */
};

/* "nonfinite", "witness", "banned", "repeat" ("none"). */
Q42_API const char *q42_rule_name(enum q42_rule r);

/* LogitStream element: the engine's view of one step. */
typedef struct q42_logit_event {
	uint64_t seq;          /* 0, 1, 2 ... per request, in push order */
	uint32_t step;         /* index of the generated token */
	int32_t token;         /* selected token */
	float logit;           /* its logit (after the sieve's mask, if any) */
	float max;             /* largest finite logit */
	float gap;             /* largest minus second largest finite logit */
	float lse;             /* log-sum-exp of the finite logits */
	uint32_t n_nonfinite;  /* NaN or Inf logits */
} q42_logit_event;

/* ControlStream element. */
typedef struct q42_deny {
	uint64_t seq;   /* of the event denied */
	uint32_t step;
	int32_t token;
	uint32_t rule;  /* enum q42_rule */
} q42_deny;

typedef struct q42_sentinel q42_sentinel;

/* Parse the rule list of --sentinel ("witness,banned=FILE,repeat=3";
 * an empty spec leaves only nonfinite), read a banned file, take every
 * token's text from tok, allocate rings and windows. Nothing is allocated
 * after this. Q42_EARG (bad spec or banned file, named with line), Q42_EIO,
 * Q42_ENOMEM. */
Q42_API int q42_sentinel_open(q42_sentinel **out, const char *spec, const q42_tokenizer *tok,
			      q42_err *err);
Q42_API void q42_sentinel_close(q42_sentinel *s);
/* The enabled rules as written in the record ("nonfinite,witness,..."). */
Q42_API const char *q42_sentinel_rules(const q42_sentinel *s);

/* Start the thread for a request (state and rings emptied); Q42_ENOMEM
 * when it cannot start. q42_sentinel_stop joins it; safe to call twice. */
Q42_API int q42_sentinel_start(q42_sentinel *s, q42_err *err);
Q42_API void q42_sentinel_stop(q42_sentinel *s);

/* Engine side. submit fills ev->seq and returns false (and counts a drop)
 * when the LogitStream is full; it never waits. wait returns once every
 * submitted event has a verdict. poll takes the next DenyRollback. */
Q42_API bool q42_sentinel_submit(q42_sentinel *s, q42_logit_event *ev);
Q42_API void q42_sentinel_wait(q42_sentinel *s);
Q42_API bool q42_sentinel_poll(q42_sentinel *s, q42_deny *d);
Q42_API uint64_t q42_sentinel_dropped(const q42_sentinel *s);

/* The summary fields of an event (max, gap, lse, n_nonfinite). */
Q42_API void q42_logit_summary(const float *logits, uint32_t n, q42_logit_event *ev);

#endif
