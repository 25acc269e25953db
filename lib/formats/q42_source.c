/* q42_source.c -- open a model file as GGUF or P64 by its magic bytes.
 *
 * Owns the choice of reader and a format-neutral view of tensors for the
 * inspection programs. It relies on q42_gguf_parse and q42_p64_open to
 * validate everything; it must never look at a file name, and never hand
 * out a tensor of a file its reader has not accepted.
 */
#include <stdlib.h>
#include <string.h>
#include "formats/q42_source.h"
#include "common/q42_types.h"
#include "kernels/q42_kernels.h"
#include "common/q42_ckd.h"

/* Elements dequantized per step of q42_source_tensor_values (a multiple of
 * every block size), so a large range never needs a tensor-sized buffer. */
#define VALUES_CHUNK_ELEMS 65536u

int q42_source_open(q42_source *s, const char *path, q42_err *err)
{
	return q42_source_open_ex(s, path, NULL, NULL, err);
}

int q42_source_open_ex(q42_source *s, const char *path, q42_source_advise_fn advise, void *arg,
		       q42_err *err)
{
	int rc;
	uint32_t kind = Q42_SOURCE_NONE;

	memset(s, 0, sizeof *s);
	rc = q42_map_open(&s->map, path, 0, err);
	if (rc != Q42_OK)
		return rc;
	if (q42_p64_is_p64(s->map.data, s->map.size))
		kind = Q42_SOURCE_P64;
	else if (s->map.size >= 4 && memcmp(s->map.data, Q42_GGUF_MAGIC, 4) == 0)
		kind = Q42_SOURCE_GGUF;
	if (kind != Q42_SOURCE_NONE && advise != NULL)
		advise(&s->map, kind, arg);
	if (kind == Q42_SOURCE_P64) {
		rc = q42_p64_open(&s->p64, s->map.data, s->map.size, path, err);
		if (rc == Q42_OK)
			s->kind = Q42_SOURCE_P64;
	} else if (kind == Q42_SOURCE_GGUF) {
		rc = q42_gguf_parse(&s->gguf, s->map.data, s->map.size, path, err);
		if (rc == Q42_OK)
			s->kind = Q42_SOURCE_GGUF;
	} else {
		char found[20] = "";
		for (uint64_t i = 0; i < 4 && i < s->map.size; i++)
			snprintf(found + 4 * i, sizeof found - 4 * i, "\\x%02x", s->map.data[i]);
		rc = q42_err_set(err, Q42_EFORMAT,
				 "%s: not a model file: header: magic at offset 0: expected \"GGUF\" or \"p64\\0\", found %s",
				 path, s->map.size ? found : "an empty file");
	}
	if (rc != Q42_OK)
		q42_source_close(s);
	return rc;
}

void q42_source_close(q42_source *s)
{
	if (s->kind == Q42_SOURCE_GGUF)
		q42_gguf_free(&s->gguf);
	if (s->kind == Q42_SOURCE_P64)
		q42_p64_close(&s->p64);
	if (s->meta_ready)
		q42_gguf_free(&s->meta);
	q42_map_close(&s->map);
	memset(s, 0, sizeof *s);
	s->map.fd = -1;
}

const char *q42_source_kind_name(uint32_t kind)
{
	switch (kind) {
	case Q42_SOURCE_GGUF:
		return "gguf";
	case Q42_SOURCE_P64:
		return "p64";
	default:
		return "none";
	}
}

/* A P64 carries the source GGUF's bytes up to its data section, but not the
 * tensor data; the metadata-only parse reads its key/value part in place. */
int q42_source_meta(q42_source *s, const q42_gguf **out, q42_err *err)
{
	const q42_p64 *p = &s->p64;
	int rc;

	*out = NULL;
	if (s->kind == Q42_SOURCE_GGUF) {
		*out = &s->gguf;
		return Q42_OK;
	}
	if (s->kind != Q42_SOURCE_P64)
		return q42_err_set(err, Q42_EARG, "no file is open");
	if (s->meta_ready) {
		*out = &s->meta;
		return Q42_OK;
	}
	if (p->source_header == NULL || p->source_header_len < 24)
		return q42_err_set(err, Q42_ENOTFOUND,
				   "%s: section GGUF: absent, the file carries no source metadata",
				   s->map.path);
	rc = q42_gguf_parse_meta(&s->meta, p->source_header, p->source_header_len, s->map.path,
				 err);
	if (rc != Q42_OK) {
		q42_err_prefix(err, "section GGUF");
		return rc;
	}
	s->meta_ready = true;
	*out = &s->meta;
	return Q42_OK;
}

uint64_t q42_source_tensor_count(const q42_source *s)
{
	if (s->kind == Q42_SOURCE_GGUF)
		return s->gguf.n_tensors;
	if (s->kind == Q42_SOURCE_P64)
		return s->p64.n_tensors;
	return 0;
}

void q42_source_tensor_get(const q42_source *s, uint64_t i, q42_source_tensor *out)
{
	memset(out, 0, sizeof *out);
	if (s->kind == Q42_SOURCE_GGUF && i < s->gguf.n_tensors) {
		const q42_gguf_tensor *t = &s->gguf.tensors[i];
		out->name = t->name;
		out->dtype = t->type;
		out->rank = t->n_dims;
		memcpy(out->dims, t->ne, sizeof out->dims);
		out->n_elems = t->n_elems;
		out->offset = t->abs_offset;
		out->nbytes = t->nbytes;
		out->data = t->data;
	} else if (s->kind == Q42_SOURCE_P64 && i < s->p64.n_tensors) {
		const q42_p64_tensor *t = &s->p64.tensors[i];
		out->name = t->name;
		out->dtype = t->dtype;
		out->rank = t->rank;
		memcpy(out->dims, t->dims, sizeof out->dims);
		out->n_elems = t->n_elems;
		out->offset = t->offset;
		out->nbytes = t->nbytes;
		out->data = t->data;
	}
}

int q42_source_find_tensor(const q42_source *s, const char *name, q42_source_tensor *out,
			   q42_err *err)
{
	/* the readers' own lookups (P64: by name hash) */
	if (s->kind == Q42_SOURCE_GGUF) {
		const q42_gguf_tensor *t = q42_gguf_find_tensor(&s->gguf, name);
		if (t != NULL) {
			q42_source_tensor_get(s, (uint64_t)(t - s->gguf.tensors), out);
			return Q42_OK;
		}
	} else if (s->kind == Q42_SOURCE_P64) {
		const q42_p64_tensor *t = q42_p64_find_tensor(&s->p64, name);
		if (t != NULL) {
			q42_source_tensor_get(s, (uint64_t)(t - s->p64.tensors), out);
			return Q42_OK;
		}
	}
	memset(out, 0, sizeof *out);
	return q42_err_set(err, Q42_ENOTFOUND, "%s: no tensor named \"%s\"", s->map.path, name);
}

int q42_source_tensor_values(const q42_source_tensor *t, uint64_t first, uint64_t count,
			     float *dst, q42_err *err)
{
	const q42_dtype_info *info = q42_dtype_get(t->dtype);
	uint64_t end, block, pos, nbytes;
	float *tmp = NULL;
	int rc = Q42_OK;

	if (q42_add_overflow(first, count, &end) || end > t->n_elems)
		return q42_err_set(err, Q42_EARG,
				   "tensor %.*s: elements %llu..+%llu outside its %llu elements",
				   (int)t->name.len, t->name.p, (unsigned long long)first,
				   (unsigned long long)count, (unsigned long long)t->n_elems);
	if (info == NULL || q42_kernels_get(t->dtype, Q42_ISA_SCALAR) == NULL)
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "tensor %.*s: dtype %s (%u) cannot be dequantized by libq42",
				   (int)t->name.len, t->name.p, info ? info->name : "unknown",
				   t->dtype);
	if (!q42_dtype_nbytes(t->dtype, t->n_elems, info->block_elems, &nbytes) ||
	    nbytes > t->nbytes)
		return q42_err_set(err, Q42_EFORMAT,
				   "tensor %.*s: %llu bytes hold fewer than %llu elements of %s",
				   (int)t->name.len, t->name.p, (unsigned long long)t->nbytes,
				   (unsigned long long)t->n_elems, info->name);
	if (count == 0)
		return Q42_OK;
	tmp = malloc(VALUES_CHUNK_ELEMS * sizeof *tmp);
	if (tmp == NULL)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	block = info->block_elems;
	/* Whole blocks from the one holding `first`; copy out the wanted part. */
	for (pos = first - first % block; pos < end;) {
		uint64_t n = end - pos;
		uint64_t skip = pos < first ? first - pos : 0;
		if (n > VALUES_CHUNK_ELEMS)
			n = VALUES_CHUNK_ELEMS;
		n = (n + block - 1) / block * block;
		if (!q42_dequant(t->dtype, t->data + pos / block * info->block_bytes, tmp,
				 (int64_t)n)) {
			rc = q42_err_set(err, Q42_EUNSUPPORTED,
					 "tensor %.*s: dtype %s cannot be dequantized by libq42",
					 (int)t->name.len, t->name.p, info->name);
			goto done;
		}
		uint64_t take = n - skip;
		if (take > end - pos - skip)
			take = end - pos - skip;
		memcpy(dst + (pos + skip - first), tmp + skip, take * sizeof *dst);
		pos += n;
	}
done:
	free(tmp);
	return rc;
}
