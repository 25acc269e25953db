/* q42_p64_gguf.c -- from a validated P64 back to its source GGUF: the
 * byte-exact rebuild and the proof that a P64 holds a given GGUF.
 *
 * Both work only on a q42_p64 that q42_p64_open accepted and a q42_gguf
 * that q42_gguf_parse accepted, so every offset used here was bounded
 * there. The rebuild writes the carried header bytes, then each blob at its
 * source offset with zeros in between (p64(5), "Source GGUF"); it streams,
 * never assembling the GGUF in memory.
 */
#include <stdlib.h>
#include <string.h>
#include "formats/q42_p64.h"
#include "common/q42_types.h"

static int put(FILE *out, const void *p, uint64_t n, uint64_t *pos, q42_err *err)
{
	const uint8_t *b = p;
	while (n > 0) {
		size_t k = n > (1u << 24) ? (1u << 24) : (size_t)n;
		if (fwrite(b, 1, k, out) != k)
			return q42_err_set(err, Q42_EIO, "write failed at GGUF offset %llu",
					   (unsigned long long)*pos);
		b += k;
		n -= k;
		*pos += k;
	}
	return Q42_OK;
}

static int put_zeros(FILE *out, uint64_t n, uint64_t *pos, q42_err *err)
{
	static const uint8_t zeros[1u << 16];
	int rc = Q42_OK;
	while (n > 0 && rc == Q42_OK) {
		size_t k = n > sizeof zeros ? sizeof zeros : (size_t)n;
		rc = put(out, zeros, k, pos, err);
		n -= k;
	}
	return rc;
}

static int cmp_source(const void *a, const void *b)
{
	const q42_p64_tensor *x = *(const q42_p64_tensor *const *)a;
	const q42_p64_tensor *y = *(const q42_p64_tensor *const *)b;
	if (x->source_offset != y->source_offset)
		return x->source_offset < y->source_offset ? -1 : 1;
	return (x > y) - (x < y); /* stable: keep file order for equal offsets */
}

int q42_p64_to_gguf(const q42_p64 *p, FILE *out, q42_err *err)
{
	const q42_p64_tensor **idx = NULL;
	uint64_t pos = 0;
	int rc;
	if (!(p->flags & Q42_P64_F_BYTE_PRESERVING) || p->source_header == NULL)
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "P64 is not byte-preserving (no GGUF header section): the source "
				   "GGUF cannot be rebuilt");
	if (p->n_tensors > 0) {
		idx = malloc(p->n_tensors * sizeof *idx);
		if (idx == NULL)
			return q42_err_set(err, Q42_ENOMEM, "out of memory");
		for (uint64_t i = 0; i < p->n_tensors; i++)
			idx[i] = &p->tensors[i];
		qsort(idx, p->n_tensors, sizeof *idx, cmp_source);
	}
	if ((rc = put(out, p->source_header, p->source_header_len, &pos, err)) != Q42_OK)
		goto done;
	for (uint64_t i = 0; i < p->n_tensors; i++) {
		const q42_p64_tensor *t = idx[i];
		if (t->source_offset < pos) {
			rc = q42_err_set(err, Q42_EFORMAT,
					 "tensor %s: source offset %llu overlaps bytes already "
					 "rebuilt (up to %llu)",
					 t->name.p, (unsigned long long)t->source_offset,
					 (unsigned long long)pos);
			goto done;
		}
		if ((rc = put_zeros(out, t->source_offset - pos, &pos, err)) != Q42_OK ||
		    (rc = put(out, t->data, t->nbytes, &pos, err)) != Q42_OK)
			goto done;
	}
	if ((rc = put_zeros(out, p->prov.source_size - pos, &pos, err)) != Q42_OK)
		goto done;
	if (fflush(out) != 0)
		rc = q42_err_set(err, Q42_EIO, "flushing the GGUF output failed");
done:
	free(idx);
	return rc;
}

/* First differing byte of a[0, n) and b[0, n), or n. */
static uint64_t first_diff(const uint8_t *a, const uint8_t *b, uint64_t n)
{
	const uint64_t step = 1u << 20;
	for (uint64_t at = 0; at < n; at += step) {
		uint64_t k = n - at < step ? n - at : step;
		if (memcmp(a + at, b + at, k) != 0)
			for (uint64_t i = at; i < at + k; i++)
				if (a[i] != b[i])
					return i;
	}
	return n;
}

int q42_p64_against(const q42_p64 *p, const q42_gguf *g, q42_err *err)
{
	if (p->n_tensors != g->n_tensors)
		return q42_err_set(err, Q42_EFORMAT,
				   "against: tensor count: p64 has %llu, gguf has %llu",
				   (unsigned long long)p->n_tensors, (unsigned long long)g->n_tensors);
	for (uint64_t i = 0; i < p->n_tensors; i++) {
		const q42_p64_tensor *t = &p->tensors[i];
		const q42_gguf_tensor *s = &g->tensors[i];
		const char *n = t->name.p;
		uint64_t len = s->nbytes;
		if (t->name.len != s->name.len || memcmp(t->name.p, s->name.p, s->name.len) != 0)
			return q42_err_set(err, Q42_EFORMAT,
					   "against: tensor %llu: name: p64 has '%s', gguf has '%.*s'",
					   (unsigned long long)i, n, (int)s->name.len, s->name.p);
		if (t->name_hash != q42_p64_name_hash(s->name.p, s->name.len))
			return q42_err_set(err, Q42_EFORMAT, "against: tensor %s: name hash differs",
					   n);
		if (t->dtype != s->type)
			return q42_err_set(err, Q42_EFORMAT,
					   "against: tensor %s: dtype: p64 has %u, gguf has %u", n,
					   t->dtype, s->type);
		if (t->rank != s->n_dims)
			return q42_err_set(err, Q42_EFORMAT,
					   "against: tensor %s: rank: p64 has %u, gguf has %u", n,
					   t->rank, s->n_dims);
		for (uint32_t k = 0; k < t->rank; k++)
			if (t->dims[k] != s->ne[k])
				return q42_err_set(err, Q42_EFORMAT,
						   "against: tensor %s: dim %u: p64 has %llu, gguf has "
						   "%llu",
						   n, k, (unsigned long long)t->dims[k],
						   (unsigned long long)s->ne[k]);
		if (t->source_offset != s->abs_offset)
			return q42_err_set(err, Q42_EFORMAT,
					   "against: tensor %s: source offset: p64 has %llu, gguf has "
					   "%llu",
					   n, (unsigned long long)t->source_offset,
					   (unsigned long long)s->abs_offset);
		if (!s->type_known)
			len = (i + 1 < g->n_tensors ? g->tensors[i + 1].abs_offset : g->file_size) -
			      s->abs_offset;
		if (t->nbytes != len)
			return q42_err_set(err, Q42_EFORMAT,
					   "against: tensor %s: length: p64 has %llu, gguf has %llu", n,
					   (unsigned long long)t->nbytes, (unsigned long long)len);
		uint64_t d = first_diff(t->data, g->file + s->abs_offset, len);
		if (d < len)
			return q42_err_set(err, Q42_EFORMAT,
					   "against: tensor %s: byte %llu (gguf offset %llu): p64 has "
					   "0x%02x, gguf has 0x%02x",
					   n, (unsigned long long)d,
					   (unsigned long long)(s->abs_offset + d), t->data[d],
					   g->file[s->abs_offset + d]);
	}
	if (p->source_header == NULL)
		return Q42_OK;
	if (p->prov.source_size != g->file_size)
		return q42_err_set(err, Q42_EFORMAT, "against: source size: p64 has %llu, gguf has %llu",
				   (unsigned long long)p->prov.source_size,
				   (unsigned long long)g->file_size);
	if (p->source_header_len != g->data_offset)
		return q42_err_set(err, Q42_EFORMAT,
				   "against: header bytes: p64 has %llu, gguf has %llu (data offset)",
				   (unsigned long long)p->source_header_len,
				   (unsigned long long)g->data_offset);
	uint64_t d = first_diff(p->source_header, g->file, g->data_offset);
	if (d < g->data_offset)
		return q42_err_set(err, Q42_EFORMAT,
				   "against: header byte at offset %llu: p64 has 0x%02x, gguf has 0x%02x",
				   (unsigned long long)d, p->source_header[d], g->file[d]);
	/* Bytes no tensor covers are rebuilt as zeros; prove they are. */
	uint64_t pos = g->data_offset;
	for (uint64_t i = 0; i <= g->n_tensors; i++) {
		uint64_t next = i < g->n_tensors ? g->tensors[i].abs_offset : g->file_size;
		for (uint64_t k = pos; k < next; k++)
			if (g->file[k] != 0)
				return q42_err_set(err, Q42_EFORMAT,
						   "against: gguf byte at offset %llu (outside every "
						   "tensor) is 0x%02x, the rebuild has 0x00",
						   (unsigned long long)k, g->file[k]);
		if (i < g->n_tensors)
			pos = next + p->tensors[i].nbytes;
	}
	return Q42_OK;
}
