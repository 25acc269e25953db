/* q42_facts.h -- a read-only set of facts for grounding.
 *
 * Facts are N-Triples, N-Quads or quins (q42_quin.h). The set answers one
 * question: is this statement (subject, predicate, object, and graph when
 * the claim names one) among the facts? Provenance terms of facts are kept
 * out of the match. Loading reads the whole file once; lookups are
 * O(log n) over sorted canonical keys. Nothing here writes or prints.
 */
#ifndef Q42_FACTS_H
#define Q42_FACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/q42_err.h"
#include "formats/q42_quin.h"

#define Q42_FACTS_MAX 50000000u /* statements in one facts file */

typedef struct q42_facts {
	char **keys;   /* sorted canonical keys: "s p o" and "s p o g" */
	size_t n_keys;
	uint64_t n_statements;
} q42_facts;

Q42_API void q42_facts_init(q42_facts *f);
Q42_API void q42_facts_free(q42_facts *f);
/* Add every statement of data[0..n) (name is used in messages: "name:
 * line L, column C: ..."). On error the set keeps what it had before. */
Q42_API int q42_facts_add(q42_facts *f, const void *data, size_t n, const char *name, q42_err *err);
/* Read a facts file ("-" = stdin) and add it. */
Q42_API int q42_facts_load(q42_facts *f, const char *path, q42_err *err);
/* Add the committed quin and binding entries of a Q42 volume (pending
 * entries are not facts). The volume must validate (q42-volume(5)). */
Q42_API int q42_facts_load_volume(q42_facts *f, const char *path, q42_err *err);
/* Does a fact support q? A claim in the default graph is supported by a
 * fact in any graph; a claim naming a graph only by a fact in that graph. */
Q42_API bool q42_facts_supports(const q42_facts *f, const q42_quin *q);

#endif
