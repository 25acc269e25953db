/* reuse.c -- prefix reuse across q42run's requests (--no-reuse,
 * --cache-bytes) and q42-state(5) files (--state-load before the first
 * request, --state-save after the last). The rule that keeps the bits a
 * cold run's is libq42's (run/q42_prefix.h); this file only opens, seeds
 * and saves, and says what went wrong.
 */
#include <stdlib.h>
#include <string.h>
#include "bin/q42run/q42run.h"
#include "common/q42_le.h"
#include "run/q42_statefile.h"

/* What this run's states are made under (q42_state_ident). */
static int state_ident(const struct opts *o, q42_mount *m, q42_engine *e, q42_state_ident *id)
{
	const q42_model_ident *mi;
	q42_err err = {0};
	int rc;

	memset(id, 0, sizeof *id);
	rc = q42_mount_ident(m, &mi, &err);
	if (rc == Q42_OK)
		rc = q42_hex_decode(mi->sha256, id->model_sha256, Q42_SHA256_LEN, &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: %s: %s\n", o->model, err.msg);
		return EXIT_MODEL;
	}
	id->n_ctx = q42_engine_n_ctx(e);
	id->n_batch = q42_engine_n_batch(e);
	id->kv_type = q42_engine_kv_type(e);
	id->arith = (uint32_t)q42_engine_arith(e);
	id->flash_attn = q42_engine_flash_attn(e) ? 1u : 0u;
	id->n_layer = q42_mount_hparams(m)->n_layer;
	id->n_embd = q42_mount_hparams(m)->n_embd;
	id->n_vocab = q42_engine_n_vocab(e);
	id->pos_bytes = q42_engine_state_pos_bytes(e);
	return EXIT_OK;
}

/* --state-load: the file's state into the cache of p. */
static int state_load(const struct opts *o, q42_mount *m, q42_engine *e, q42_prefix *p)
{
	q42_map map = {0};
	q42_state_ident want;
	q42_state_view v;
	q42_err err = {0};
	int32_t *ids = NULL;
	uint8_t *st = NULL;
	int rc, ex;

	ex = state_ident(o, m, e, &want);
	if (ex != EXIT_OK)
		return ex;
	map.fd = -1;
	rc = q42_map_open(&map, o->state_load, 0, &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: --state-load: %s\n", err.msg);
		return rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_IO;
	}
	rc = q42_state_parse(map.data ? map.data : (const uint8_t *)"", map.size, &v, &err);
	if (rc == Q42_OK)
		rc = q42_state_match(&v, &want, &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: --state-load: %s: %s\n", o->state_load, err.msg);
		ex = EXIT_MODEL;
		goto done;
	}
	ids = malloc((v.n_pos ? v.n_pos : 1) * sizeof *ids);
	st = malloc(v.n_pos ? (size_t)(v.n_pos * v.id.pos_bytes) : 1);
	if (ids == NULL || st == NULL) {
		free(ids);
		free(st);
		ex = EXIT_NOMEM;
		goto done;
	}
	for (uint32_t i = 0; i < v.n_pos; i++)
		ids[i] = (int32_t)q42_ld32(v.ids + 4ull * i);
	memcpy(st, v.state, (size_t)(v.n_pos * v.id.pos_bytes));
	rc = q42_prefix_add(p, ids, v.n_pos, st, &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: --state-load: %s\n", err.msg);
		ex = EXIT_NOMEM;
	}
done:
	q42_map_close(&map);
	return ex;
}

int reuse_open(const struct opts *o, q42_mount *m, q42_engine *e, q42_prefix **out)
{
	q42_err err = {0};
	int rc;

	*out = NULL;
	if (o->no_reuse)
		return EXIT_OK;
	rc = q42_prefix_open(out, e, o->cache_bytes, &err);
	if (rc == Q42_EUNSUPPORTED && o->state_load == NULL && o->state_save == NULL)
		return EXIT_OK; /* a device backend: every request runs cold */
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: %s\n", err.msg);
		return rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_USAGE;
	}
	if (o->state_load != NULL) {
		int ex = state_load(o, m, e, *out);
		if (ex != EXIT_OK) {
			q42_prefix_close(*out);
			*out = NULL;
			return ex;
		}
	}
	return EXIT_OK;
}

int reuse_close(const struct opts *o, q42_mount *m, q42_engine *e, q42_prefix *p, int ex)
{
	q42_state_ident id;
	q42_err err = {0};
	const int32_t *ids;
	uint8_t *st = NULL;
	uint32_t n;
	int rc;

	if (p == NULL || o->state_save == NULL || ex != EXIT_OK) {
		q42_prefix_close(p);
		return ex;
	}
	n = q42_prefix_live(p, &ids);
	ex = state_ident(o, m, e, &id);
	if (ex != EXIT_OK)
		goto done;
	if (n == 0)
		fprintf(stderr,
			"q42run: warning: --state-save: the prompt settles no positions at --batch %u"
			" (fewer than 4 tokens past its last whole pass): the state holds none\n", id.n_batch);
	st = malloc(n ? (size_t)(n * id.pos_bytes) : 1);
	if (st == NULL) {
		ex = EXIT_NOMEM;
		goto done;
	}
	rc = q42_engine_state_get(e, n, st, &err);
	if (rc == Q42_OK)
		rc = q42_state_write(o->state_save, &id, ids, n, st, &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: --state-save: %s\n", err.msg);
		ex = rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_IO;
	}
done:
	free(st);
	q42_prefix_close(p);
	return ex;
}

int requests_open(const struct opts *o, q42_mount *m, q42_engine *e,
		  const q42_model_ident **ident, q42_prefix **pre, struct chat *chat)
{
	int ex = record_ident(o, m, ident);
	if (ex == EXIT_OK)
		ex = reuse_open(o, m, e, pre);
	if (ex == EXIT_OK)
		ex = chat_open(o, chat);
	return ex;
}
