/* p64check.h -- what p64check's files share: the inspection listings.
 *
 * Each listing prints one table (p64check(1), "LISTINGS") of an already
 * validated file to out and returns a q42_rc; an unreadable or invalid file
 * never reaches them. They only print: every fact comes from libq42.
 */
#ifndef P64CHECK_H
#define P64CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "common/q42_err.h"
#include "formats/q42_source.h"
#include "engine/q42_engine.h"

int list_header(q42_source *s, FILE *out, bool json, q42_err *err);
int list_metadata(q42_source *s, FILE *out, bool json, q42_err *err);
int list_array(q42_source *s, const char *key, FILE *out, bool json, q42_err *err);
int list_tensors(q42_source *s, FILE *out, bool json, q42_err *err);
int list_tokenizer(q42_source *s, FILE *out, bool json, q42_err *err);
int list_tokens(q42_source *s, FILE *out, bool json, q42_err *err);
int list_manifold(q42_source *s, FILE *out, bool json, q42_err *err);
/* spec is NAME[:FIRST[:COUNT]]. */
int list_values(q42_source *s, const char *spec, FILE *out, bool json, q42_err *err);
/* --matvec NAME X (matvec.c): tensor NAME times the float32 vector in file
 * X ("-": stdin) under arith. */
int list_matvec(q42_source *s, const char *name, const char *x_path, enum q42_arith arith, FILE *out,
		bool json, q42_err *err);

/* --quality (quality.c): the KL gate of MODEL against BASE over TEXT;
 * returns the exit status (p64check(1), "QUALITY GATE"). */
typedef struct quality_opts {
	uint32_t n_ctx;     /* --ctx; 0: the engine's default */
	uint32_t n_threads; /* --threads; 0: online cores */
	bool has_max_kl, has_min_same_top;
	double max_kl, min_same_top;
} quality_opts;

int quality_gate(const char *base_path, const char *text_path, const char *model_path,
		 const quality_opts *qo);

#endif
