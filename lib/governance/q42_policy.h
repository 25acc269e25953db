/* q42_policy.h -- the q42grd policy: intents, egress patterns, shapes,
 * grounding thresholds and the thermal limit.
 *
 * The file format (JSON, schema "q42-policy/1") is specified field by
 * field in q42-policy(5). Loading validates everything up front (unknown
 * keys, types, ranges, every regular expression compiles, every shape an
 * intent names exists) so the gates never meet a half-valid policy.
 * Nothing here reads records or prints.
 */
#ifndef Q42_POLICY_H
#define Q42_POLICY_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/q42_err.h"
#include "formats/q42_quin.h"

#define Q42_POLICY_SCHEMA "q42-policy/1"
#define Q42_POLICY_MAX_BYTES (16u << 20) /* policy file size */
#define Q42_POLICY_MAX_ITEMS 4096u       /* entries of any one list or object */
#define Q42_POLICY_MAX_PATTERN 4096u     /* bytes of one regular expression */
#define Q42_POLICY_MAX_RE_COST 20000.0   /* estimated regcomp tree size, see q42_policy.c */
#define Q42_POLICY_MAX_RE_DEPTH 32       /* nested groups in one regular expression */

/* Term kinds as a bit set: (1u << Q42_TERM_IRI) etc. */
#define Q42_KINDS_IRI (1u << Q42_TERM_IRI)
#define Q42_KINDS_BLANK (1u << Q42_TERM_BLANK)
#define Q42_KINDS_LITERAL (1u << Q42_TERM_LITERAL)
#define Q42_KINDS_ANY (Q42_KINDS_IRI | Q42_KINDS_BLANK | Q42_KINDS_LITERAL)

/* One property constraint of a shape, keyed by predicate IRI. */
typedef struct q42_shape_prop {
	char *predicate;
	unsigned subject_kinds;
	unsigned object_kinds;
	char *datatype;         /* literal objects must have it (NULL: any) */
	char **languages;       /* literal objects must carry one of these (n 0: any) */
	size_t n_languages;
	char *object_namespace; /* IRI objects must start with it (NULL: any) */
	char *pattern_src;      /* literal lexical forms must match (NULL: none) */
	regex_t pattern;
	uint64_t min_count;     /* values per subject that uses the shape */
	uint64_t max_count;     /* UINT64_MAX: no limit */
	uint64_t max_length;    /* bytes of a literal; UINT64_MAX: no limit */
} q42_shape_prop;

typedef struct q42_shape {
	char *name;
	bool closed; /* predicates without a property constraint are refused */
	q42_shape_prop *props;
	size_t n_props;
} q42_shape;

typedef struct q42_intent {
	char *name;
	char **scopes;      /* a declared scope must match one (n 0: scope unchecked) */
	size_t n_scopes;
	char **namespaces;  /* IRI prefixes claimed subjects and graphs must use */
	size_t n_namespaces;
	uint64_t max_prompt_tokens;    /* UINT64_MAX: no ceiling */
	uint64_t max_generated_tokens; /* UINT64_MAX: no ceiling */
	bool grounding;          /* every claimed quin must be supported by facts */
	bool structured;         /* the output must be quins */
	bool critical;           /* may run while the machine is thermally critical */
	bool allow_replacement;  /* text with U+FFFD repairs may pass */
	const q42_shape *shape;  /* NULL: no shape check */
	bool decision;           /* the record must be a typed decision with its receipt */
	char **decision_models;  /* its model must be one of these SHA-256 (n 0: any) */
	size_t n_decision_models;
} q42_intent;

enum q42_egress_target {
	Q42_EGRESS_PROMPT = 1u << 0,
	Q42_EGRESS_TEXT = 1u << 1,
};

typedef struct q42_egress {
	char *name;
	char *pattern_src;
	regex_t re;
	unsigned targets; /* enum q42_egress_target bits */
} q42_egress;

typedef struct q42_policy {
	char *default_intent; /* NULL: an intent must be declared */
	q42_intent *intents;
	size_t n_intents;
	q42_shape *shapes;
	size_t n_shapes;
	q42_egress *egress;
	size_t n_egress;
	bool egress_require_prompt;
	double grounding_threshold; /* share of claimed quins that must be supported */
	double review_threshold;    /* at or above it (and below the threshold): review */
	bool thermal;               /* the thermal gate is configured */
	double thermal_limit_c;     /* 0: no fixed limit */
	bool thermal_trip_points;   /* a zone at its "critical" trip point is critical */
	char sha256[65];            /* of the policy file's bytes */
} q42_policy;

/* Parse a policy from memory; name is used in messages. On error p is
 * left empty (nothing to free). */
Q42_API int q42_policy_parse(q42_policy *p, const void *data, size_t n, const char *name,
			     q42_err *err);
/* Read and parse a policy file. */
Q42_API int q42_policy_load(q42_policy *p, const char *path, q42_err *err);
Q42_API void q42_policy_free(q42_policy *p);
Q42_API const q42_intent *q42_policy_intent(const q42_policy *p, const char *name);

#endif
