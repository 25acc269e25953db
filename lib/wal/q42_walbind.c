/* q42_walbind.c -- model provenance binding: the quins that tie a P64 to
 * the exact source bytes it was compiled from.
 *
 * The body names the container by its SHA-256 and states, as canonical
 * N-Quads in one graph, its source digest, container version, transcode
 * policy, tool, each tensor's placement and CRC, and any licence metadata.
 * Outputs committed later refer to this entry, so a reader can walk from
 * an output to the source digest. The P64 is validated in full first.
 * Nothing here prints. Vocabulary: q42-volume(5), "Binding entries".
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "formats/q42_digest.h"
#include "formats/q42_lora.h"
#include "formats/q42_source.h"
#include "formats/q42_quin.h"
#include "wal/q42_wal.h"

#define NS "https://q42.dev/ns/p64#"
#define XSD_INTEGER "http://www.w3.org/2001/XMLSchema#integer"

typedef struct emitter {
	q42_buf *out;
	char graph[96];
	q42_err *err;
	int rc;
} emitter;

/* Percent-encode bytes outside RFC 3986's unreserved set, for IRIs built
 * from tensor names. */
static void iri_escape(const char *s, size_t n, char *out, size_t cap)
{
	size_t j = 0;
	for (size_t i = 0; i < n && j + 4 < cap; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~')
			out[j++] = (char)c;
		else
			j += (size_t)snprintf(out + j, cap - j, "%%%02X", c);
	}
	out[j] = 0;
}

/* Write one statement: subject IRI, predicate NS+pred, object literal or
 * IRI (datatype optional), in the binding graph. */
static void emit(emitter *em, const char *subj, const char *pred, enum q42_term_kind okind,
		 const char *obj, size_t olen, const char *datatype)
{
	q42_quin q;
	char piri[128];
	if (em->rc != Q42_OK)
		return;
	q42_quin_init(&q);
	snprintf(piri, sizeof piri, NS "%s", pred);
	if ((em->rc = q42_term_set(&q.s, Q42_TERM_IRI, subj, strlen(subj), NULL, NULL, em->err)) ||
	    (em->rc = q42_term_set(&q.p, Q42_TERM_IRI, piri, strlen(piri), NULL, NULL, em->err)) ||
	    (em->rc = q42_term_set(&q.o, okind, obj, olen, datatype, NULL, em->err)) ||
	    (em->rc = q42_term_set(&q.g, Q42_TERM_IRI, em->graph, strlen(em->graph), NULL, NULL,
				   em->err)))
		goto done;
	if (!q42_quin_write(em->out, &q))
		em->rc = q42_err_set(em->err, Q42_ENOMEM, "out of memory");
done:
	q42_quin_free(&q);
}

static void emit_int(emitter *em, const char *subj, const char *pred, uint64_t v)
{
	char s[24];
	snprintf(s, sizeof s, "%" PRIu64, v);
	emit(em, subj, pred, Q42_TERM_LITERAL, s, strlen(s), XSD_INTEGER);
}

static void emit_str(emitter *em, const char *subj, const char *pred, const char *s, size_t n)
{
	emit(em, subj, pred, Q42_TERM_LITERAL, s, n, NULL);
}

int q42_wal_lora_set(const char *const *sha256_hex, const float *scale, uint32_t n, char out[65],
		     q42_err *err)
{
	q42_buf t;
	uint8_t d[32];
	char line[96];
	q42_buf_init(&t);
	for (uint32_t i = 0; i < n; i++) {
		int k = snprintf(line, sizeof line, "%.64s %.9g\n", sha256_hex[i], (double)scale[i]);
		q42_buf_append(&t, line, (size_t)k);
	}
	int rc = t.failed ? q42_err_set(err, Q42_ENOMEM, "out of memory")
			  : q42_sha256(t.data, t.len, d, err);
	q42_buf_free(&t);
	if (rc == Q42_OK)
		q42_hex_encode(d, 32, out);
	return rc;
}

/* Adapter i of the binding: opened, checked against the P64 as the
 * engine checks it (architecture, tensors, shapes), and stated. */
static int emit_lora(emitter *em, const q42_p64 *p, const char *p64_path, const char *subj,
		     const char *p64hex, const q42_wal_lora *lw, uint32_t i, char sha_out[65],
		     q42_err *err)
{
	q42_lora *l = NULL;
	char node[128], obj[96], num[32];
	int rc = q42_lora_open_model(&l, lw->path, p64_path, err);
	if (rc != Q42_OK)
		return rc;
	if (!p->has_hparams || strcmp(q42_lora_arch(l), p->hparams.arch) != 0)
		rc = q42_err_set(err, Q42_EFORMAT, "%s: adapter for architecture '%s', the model is '%s'",
				 lw->path, q42_lora_arch(l), p->has_hparams ? p->hparams.arch : "unknown");
	for (uint64_t k = 0; rc == Q42_OK && k < q42_lora_n_pairs(l); k++) {
		const q42_lora_pair *pr = q42_lora_pair_at(l, k);
		char name[300];
		snprintf(name, sizeof name, "%.*s", (int)pr->base.len, pr->base.p);
		const q42_p64_tensor *t = q42_p64_find_tensor(p, name);
		rc = t == NULL || t->rank != 2
			     ? q42_err_set(err, Q42_EFORMAT, "%s: tensor %s: not a matrix of the model",
					   lw->path, name)
			     : q42_lora_pair_check(l, pr, t->dims[0], t->dims[1], err);
	}
	if (rc == Q42_OK) {
		snprintf(sha_out, 65, "%.64s", q42_lora_sha256(l));
		snprintf(node, sizeof node, "urn:sha256:%.64s#lora/%u", p64hex, i);
		snprintf(obj, sizeof obj, "urn:sha256:%.64s", sha_out);
		emit(em, subj, "lora", Q42_TERM_IRI, node, strlen(node), NULL);
		emit(em, node, "adapter", Q42_TERM_IRI, obj, strlen(obj), NULL);
		emit_str(em, node, "scale", num, (size_t)snprintf(num, sizeof num, "%.9g", (double)lw->scale));
		emit_str(em, node, "alpha", num,
			 (size_t)snprintf(num, sizeof num, "%.9g", (double)q42_lora_alpha(l)));
		emit_int(em, node, "order", i);
	}
	q42_lora_close(l);
	return rc;
}

int q42_wal_binding_body(const char *p64_path, q42_buf *body, q42_err *err)
{
	return q42_wal_binding_body_lora(p64_path, NULL, 0, body, err);
}

int q42_wal_binding_body_lora(const char *p64_path, const q42_wal_lora *lora, uint32_t n_lora,
			      q42_buf *body, q42_err *err)
{
	q42_source src;
	uint8_t sha[32];
	char hex[65], srchex[65], subj[96], obj[96];
	int rc;
	memset(&src, 0, sizeof src);
	if ((rc = q42_source_open(&src, p64_path, err)) != Q42_OK)
		goto fail;
	if (src.kind != Q42_SOURCE_P64) {
		rc = q42_err_set(err, Q42_EFORMAT, "%s: not a P64 container (bind takes a .p64)",
				 p64_path);
		goto fail;
	}
	const q42_p64 *p = &src.p64;
	if ((rc = q42_sha256(p->data, p->size, sha, err)) != Q42_OK)
		goto fail;
	q42_hex_encode(sha, 32, hex);
	q42_hex_encode(p->prov.source_sha256, 32, srchex);
	q42_buf_append(body, sha, 32);
	q42_buf_append(body, p->prov.source_sha256, 32);

	emitter em = {.out = body, .err = err, .rc = Q42_OK};
	snprintf(em.graph, sizeof em.graph, "urn:q42:binding:%s", hex);
	snprintf(subj, sizeof subj, "urn:sha256:%s", hex);
	snprintf(obj, sizeof obj, "urn:sha256:%s", srchex);
	emit(&em, subj, "source", Q42_TERM_IRI, obj, strlen(obj), NULL);
	emit_int(&em, subj, "sourceSize", p->prov.source_size);
	emit_int(&em, subj, "size", p->size);
	emit_int(&em, subj, "containerVersion", p->version);
	emit_str(&em, subj, "transcodePolicy", p->prov.policy.p, (size_t)p->prov.policy.len);
	emit_str(&em, subj, "tool", p->prov.tool.p, (size_t)p->prov.tool.len);
	for (uint64_t i = 0; i < p->n_tensors; i++) {
		const q42_p64_tensor *t = &p->tensors[i];
		char esc[512], tsubj[700], crc[16];
		iri_escape(t->name.p, (size_t)t->name.len, esc, sizeof esc);
		snprintf(tsubj, sizeof tsubj, "urn:sha256:%s#tensor/%s", hex, esc);
		snprintf(crc, sizeof crc, "%08x", t->crc);
		emit(&em, subj, "tensor", Q42_TERM_IRI, tsubj, strlen(tsubj), NULL);
		emit_str(&em, tsubj, "name", t->name.p, (size_t)t->name.len);
		emit_int(&em, tsubj, "dtype", t->dtype);
		emit_int(&em, tsubj, "offset", t->offset);
		emit_int(&em, tsubj, "length", t->nbytes);
		emit_int(&em, tsubj, "sourceOffset", t->source_offset);
		emit_str(&em, tsubj, "crc32c", crc, 8);
	}
	/* Licence keys of the general.* namespace, as GGUF's conventions name them. */
	const q42_gguf *meta = NULL;
	q42_err merr;
	if (q42_source_meta(&src, &meta, &merr) == Q42_OK && meta) {
		static const char *const keys[] = {"general.license", "general.license.name",
						   "general.license.link"};
		for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
			q42_str s;
			if (q42_gguf_get_str(meta, keys[k], &s))
				emit_str(&em, subj, keys[k] + 8, s.p, (size_t)s.len);
		}
	}
	if (n_lora > Q42_LORA_MAX) {
		rc = q42_err_set(err, Q42_EARG, "%u adapters, at most %u", n_lora, Q42_LORA_MAX);
		goto fail;
	}
	char shas[Q42_LORA_MAX][65], set[65];
	const char *sp[Q42_LORA_MAX];
	float sc[Q42_LORA_MAX];
	for (uint32_t i = 0; i < n_lora; i++) {
		if ((rc = emit_lora(&em, p, p64_path, subj, hex, &lora[i], i, shas[i], err)) != Q42_OK)
			goto fail;
		sp[i] = shas[i];
		sc[i] = lora[i].scale;
	}
	if (n_lora > 0) {
		if ((rc = q42_wal_lora_set(sp, sc, n_lora, set, err)) != Q42_OK)
			goto fail;
		emit_str(&em, subj, "loraSet", set, 64);
	}
	rc = em.rc;
	if (rc == Q42_OK && body->failed)
		rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
fail:
	q42_source_close(&src);
	return rc;
}
