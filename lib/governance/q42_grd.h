/* q42_grd.h -- the q42grd gates: one q42-record in, one decision out.
 *
 * A record passes through the gates thermal, intent, egress, output, shape
 * and grounding, always all of them, so a blocked record carries every
 * reason, not just the first. The caller gets the decision and the line to
 * write: the record annotated with its verdict (and, unless blocked, an
 * agent identity quin in its provenance). What each gate checks and the
 * verdict's fields are specified in q42grd(1) and q42-policy(5). Nothing
 * here reads streams or prints; the program decides where lines go.
 */
#ifndef Q42_GRD_H
#define Q42_GRD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/q42_buf.h"
#include "common/q42_err.h"
#include "governance/q42_facts.h"
#include "governance/q42_policy.h"

#define Q42_GRD_MAX_LINE (16u << 20) /* bytes of one record line */
#define Q42_GRD_MAX_REASONS 64u      /* reasons kept per record; more are counted */
#define Q42_GRD_MAX_QUINS 4096u      /* claimed quins per record (shape counts are quadratic) */

/* Vocabulary of the agent identity quin (see q42grd(1), PROVENANCE). */
#define Q42_GRD_AGENT_PREFIX "urn:q42:model:sha256:"
#define Q42_GRD_AGENT_PREDICATE "urn:q42:vocab:servesIntent"
#define Q42_GRD_AGENT_GRAPH "urn:q42:graph:agents"
#define Q42_GRD_POLICY_PREFIX "urn:q42:policy:sha256:"

enum q42_gate {
	Q42_GATE_RECORD = 0, /* the line is a q42-record/1 object */
	Q42_GATE_THERMAL,
	Q42_GATE_INTENT,
	Q42_GATE_EGRESS,
	Q42_GATE_OUTPUT,
	Q42_GATE_SHAPE,
	Q42_GATE_GROUNDING,
	Q42_GATE_COUNT
};

enum q42_gate_result {
	Q42_GATE_SKIP = 0, /* not applicable under this policy and intent */
	Q42_GATE_PASS,
	Q42_GATE_REVIEW,   /* weak grounding, sent to review */
	Q42_GATE_FAIL,
};

enum q42_decision {
	Q42_DECISION_PASS = 0,
	Q42_DECISION_REVIEW,
	Q42_DECISION_BLOCK,
};

typedef struct q42_grd_config {
	const q42_policy *policy;
	const q42_facts *facts;   /* NULL: no facts given */
	const char *intent;       /* declared by the caller (NULL: none) */
	const char *scope;        /* declared by the caller (NULL: none) */
	const char *prompt;       /* prompt text the caller holds (NULL: none) */
	size_t prompt_len;
	const char *sysfs_root;   /* NULL: /sys */
	bool review;              /* weak support may go to review */
	const char *program;      /* written into the verdict */
	const char *version;
} q42_grd_config;

typedef struct q42_grd_reason {
	enum q42_gate gate;
	char *text;
} q42_grd_reason;

typedef struct q42_verdict {
	enum q42_decision decision;
	enum q42_gate_result result[Q42_GATE_COUNT];
	char detail[Q42_GATE_COUNT][192];
	q42_grd_reason *reasons;
	size_t n_reasons;
	uint64_t reasons_dropped;
	char *intent; /* the intent in force (NULL: none) */
	char *scope;
	uint64_t claimed, supported;
} q42_verdict;

Q42_API void q42_verdict_init(q42_verdict *v);
Q42_API void q42_verdict_free(q42_verdict *v);
Q42_API const char *q42_gate_name(enum q42_gate g);
Q42_API const char *q42_gate_result_name(enum q42_gate_result r);
Q42_API const char *q42_decision_name(enum q42_decision d);

/* Decide one record line (without its newline; line_no is 1-based, used
 * in messages). v is reset and filled; out gets one JSON line ending in
 * '\n': the annotated record, or for a line that is no record, an object
 * with the line number and the verdict. Returns Q42_OK whenever a decision
 * was made, blocked or not; Q42_ENOMEM otherwise. */
Q42_API int q42_grd_check(const q42_grd_config *cfg, const void *line, size_t len, uint64_t line_no,
			  q42_verdict *v, q42_buf *out, q42_err *err);

/* Decide a prompt before it is run (cfg->prompt required): the thermal,
 * intent and egress gates. out gets one JSON line with the prompt's digest
 * and the verdict. */
Q42_API int q42_grd_preflight(const q42_grd_config *cfg, q42_verdict *v, q42_buf *out, q42_err *err);

#endif
