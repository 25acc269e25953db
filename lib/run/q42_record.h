/* q42_record.h -- one q42-record/1 JSON line per request.
 *
 * The record is the contract between q42run and the later stages (q42grd,
 * q42wal); every field is specified in q42-record(5). This module only
 * assembles the object (jansson) from what a request produced; it does not
 * write it anywhere.
 */
#ifndef Q42_RECORD_H
#define Q42_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include "common/q42_buf.h"
#include "common/q42_err.h"
#include "run/q42_choices.h"
#include "engine/q42_engine.h"
#include "run/q42_generate.h"
#include "engine/q42_mount.h"
#include "engine/q42_sample.h"

#define Q42_RECORD_SCHEMA "q42-record/1"

typedef struct q42_record_info {
	const char *program;          /* e.g. "q42run" */
	const char *version;          /* package version */
	uint64_t request_index;       /* 0-based, within one run */
	double load_ms;               /* mount + engine open */
	const char *model_path;
	const q42_model_ident *ident;
	const q42_engine *engine;
	const q42_sampling *sampling;
	const q42_request *request;
	const q42_result *result;
	/* optional: the sieve (name "quin" or the grammar path, digest of the
	 * grammar text in hex) and scored options (--choices) */
	const char *sieve_name;
	const char *sieve_sha256;
	uint32_t sieve_states;
	const q42_choice *choices;
	uint32_t n_choices;
	uint32_t decision_kind;   /* enum q42_decision_kind of the choices */
	/* optional: declared intent and scope (NULL = absent), and whether the
	 * prompt text itself goes into the record (prompt.text) */
	const char *intent;
	const char *scope;
	bool record_prompt;
} q42_record_info;

/* Append the record as one line of compact JSON plus '\n' to out. */
Q42_API int q42_record_append(q42_buf *out, const q42_record_info *ri, q42_err *err);

/* Peak resident set size of this process so far, in bytes. */
Q42_API uint64_t q42_peak_rss_bytes(void);

/* Bytes of this process's anonymous memory now on transparent huge pages
 * (*out); false when the kernel does not say (not Linux, or older than
 * 4.14). */
Q42_API bool q42_anon_huge_bytes(uint64_t *out);

#endif
