/* q42_facts.c -- fact set: parse with q42_quin, keep sorted canonical keys.
 *
 * A fact in graph G adds two keys ("s p o" and "s p o G"), so a claim
 * without a graph finds it by the first and a claim in G by the second; a
 * fact in the default graph adds "s p o" and "s p o " (empty graph). Keys
 * are canonical N-Triples text with lower-cased language tags, so equal
 * terms written differently (escapes, xsd:string) meet.
 */
#include "governance/q42_facts.h"

#include <stdlib.h>
#include <string.h>
#include "common/q42_buf.h"
#include "common/q42_file.h"

void q42_facts_init(q42_facts *f)
{
	memset(f, 0, sizeof(*f));
}

void q42_facts_free(q42_facts *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n_keys; i++)
		free(f->keys[i]);
	free(f->keys);
	q42_facts_init(f);
}

static int cmp_keys(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *key_of(const q42_quin *q, bool with_graph)
{
	q42_buf b;
	q42_buf_init(&b);
	if (!q42_quin_key(&b, q, with_graph) || !q42_buf_u8(&b, 0)) {
		q42_buf_free(&b);
		return NULL;
	}
	return (char *)b.data;
}

int q42_facts_add(q42_facts *f, const void *data, size_t n, const char *name, q42_err *err)
{
	q42_quin_reader r;
	q42_quin q;
	bool eof = false;
	size_t old = f->n_keys, cap = f->n_keys;
	uint64_t added = 0;
	int rc = Q42_OK;
	q42_quin_reader_init(&r, data, n, Q42_SYNTAX_QUINS);
	while (rc == Q42_OK) {
		if ((rc = q42_quin_reader_next(&r, &q, &eof, err)) != Q42_OK) {
			q42_err_prefix(err, "%s", name);
			break;
		}
		if (eof)
			break;
		if (f->n_statements + added >= Q42_FACTS_MAX) {
			rc = q42_err_set(err, Q42_EFORMAT, "%s: more than %u statements", name, Q42_FACTS_MAX);
		} else if (f->n_keys + 2 > cap) {
			size_t nc = cap < 64 ? 64 : cap * 2;
			char **nk = realloc(f->keys, nc * sizeof(*nk));
			if (!nk)
				rc = q42_err_set(err, Q42_ENOMEM, "%s: out of memory", name);
			else {
				f->keys = nk;
				cap = nc;
			}
		}
		if (rc == Q42_OK) {
			char *k1 = key_of(&q, false), *k2 = key_of(&q, true);
			if (!k1 || !k2) {
				free(k1);
				free(k2);
				rc = q42_err_set(err, Q42_ENOMEM, "%s: out of memory", name);
			} else {
				f->keys[f->n_keys++] = k1;
				f->keys[f->n_keys++] = k2;
				added++;
			}
		}
		q42_quin_free(&q);
	}
	if (rc != Q42_OK) {
		for (size_t i = old; i < f->n_keys; i++)
			free(f->keys[i]);
		f->n_keys = old;
		return rc;
	}
	f->n_statements += added;
	if (f->n_keys > 1)
		qsort(f->keys, f->n_keys, sizeof(*f->keys), cmp_keys);
	return Q42_OK;
}

int q42_facts_load(q42_facts *f, const char *path, q42_err *err)
{
	q42_map m;
	int rc;
	if ((rc = q42_map_open(&m, path, 0, err)) != Q42_OK)
		return rc;
	if (m.size > SIZE_MAX / 2)
		rc = q42_err_set(err, Q42_EFORMAT, "%s: too large", path);
	else
		rc = q42_facts_add(f, m.data, (size_t)m.size, path, err);
	q42_map_close(&m);
	return rc;
}

bool q42_facts_supports(const q42_facts *f, const q42_quin *q)
{
	char *k = key_of(q, q->g.kind != Q42_TERM_NONE);
	bool found;
	if (!k || f->n_keys == 0) {
		free(k);
		return false;
	}
	found = bsearch(&k, f->keys, f->n_keys, sizeof(*f->keys), cmp_keys) != NULL;
	free(k);
	return found;
}
