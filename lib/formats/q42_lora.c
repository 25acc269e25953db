/* q42_lora.c -- open a LoRA adapter file and pair its tensors.
 *
 * Owns the adapter's validation as a file: the GGUF reader (through
 * q42_source) has checked every offset and size before this sees a
 * tensor; here the keys llama.cpp requires and the lora_a/lora_b pairing
 * are checked, as llama_adapter_lora_init checks them. Shapes against a
 * model are checked by q42_lora_pair_check, called by whoever knows the
 * model. Never prints.
 */
#include <stdlib.h>
#include <string.h>
#include "formats/q42_lora.h"

/* Longest tensor name an adapter may use (ggml's own limit is 64). */
#define LORA_NAME_MAX 255u

struct q42_lora {
	q42_source src;
	char *path;
	char arch[64];
	float alpha;
	char sha256[Q42_SHA256_HEX_LEN + 1];
	q42_lora_pair *pairs;
	uint64_t n_pairs;
};

static bool str_ends(q42_str s, const char *suffix, uint64_t *stem)
{
	const uint64_t n = strlen(suffix);
	if (s.len < n || memcmp(s.p + s.len - n, suffix, n) != 0)
		return false;
	*stem = s.len - n;
	return true;
}

/* A key that must be a string with the value want. */
static int want_str(const q42_gguf *g, const char *path, const char *key, const char *want,
		    q42_err *err)
{
	q42_str v = {"", 0};
	if (q42_gguf_get_str(g, key, &v) && q42_str_eq(v, want))
		return Q42_OK;
	return q42_err_set(err, Q42_EFORMAT, "%s: not a LoRA adapter: %s: expected \"%s\", found %s%.*s%s",
			   path, key, want, v.len ? "\"" : "", (int)(v.len > 40 ? 40 : v.len), v.p,
			   v.len ? "\"" : "nothing");
}

static int read_keys(q42_lora *l, q42_err *err)
{
	const q42_gguf *g = &l->src.gguf;
	q42_str arch = {"", 0};
	double alpha = 0.0;
	const q42_gguf_kv *kv = q42_gguf_find(g, "adapter.lora.alpha");
	int rc = want_str(g, l->path, "general.type", "adapter", err);
	if (rc == Q42_OK)
		rc = want_str(g, l->path, "adapter.type", "lora", err);
	if (rc != Q42_OK)
		return rc;
	if (q42_gguf_get_str(g, "general.architecture", &arch) && arch.len >= sizeof l->arch)
		return q42_err_set(err, Q42_EFORMAT, "%s: general.architecture: %llu bytes, at most %zu",
				   l->path, (unsigned long long)arch.len, sizeof l->arch - 1);
	memcpy(l->arch, arch.p, arch.len);
	l->arch[arch.len] = '\0';
	if (kv != NULL && (kv->type != Q42_GGUF_F32 || !q42_gguf_kv_f64(kv, &alpha)))
		return q42_err_set(err, Q42_EFORMAT, "%s: adapter.lora.alpha: expected a float32, found %s",
				   l->path, q42_gguf_vtype_name(kv->type));
	l->alpha = (float)alpha;
	return Q42_OK;
}

/* The tensor stem + suffix, which must be 2-D. */
static int find_part(const q42_lora *l, q42_str stem, const char *suffix, q42_source_tensor *t,
		     q42_err *err)
{
	char name[LORA_NAME_MAX + 16];
	q42_err e2 = {0};
	snprintf(name, sizeof name, "%.*s%s", (int)stem.len, stem.p, suffix);
	if (q42_source_find_tensor(&l->src, name, t, &e2) != Q42_OK)
		return q42_err_set(err, Q42_EFORMAT,
				   "%s: tensor %.*s: LoRA pair is missing its %s tensor", l->path,
				   (int)stem.len, stem.p, suffix + 1);
	if (t->rank != 2 && !(t->rank == 1 && t->dims[1] == 1))
		return q42_err_set(err, Q42_EFORMAT, "%s: tensor %s: %u dimensions, expected 2",
				   l->path, name, t->rank);
	return Q42_OK;
}

static int pair_tensors(q42_lora *l, q42_err *err)
{
	const uint64_t n = q42_source_tensor_count(&l->src);
	l->pairs = calloc(n ? n : 1, sizeof *l->pairs);
	if (l->pairs == NULL)
		return q42_err_set(err, Q42_ENOMEM, "%s: out of memory", l->path);
	for (uint64_t i = 0; i < n; i++) {
		q42_source_tensor t;
		uint64_t stem;
		q42_source_tensor_get(&l->src, i, &t);
		if (t.name.len > LORA_NAME_MAX)
			return q42_err_set(err, Q42_EFORMAT, "%s: tensor %llu: name of %llu bytes, at most %u",
					   l->path, (unsigned long long)i, (unsigned long long)t.name.len,
					   LORA_NAME_MAX);
		if (str_ends(t.name, ".lora_a", &stem)) {
			q42_lora_pair *p = &l->pairs[l->n_pairs++];
			p->base = (q42_str){t.name.p, stem};
			int rc = find_part(l, p->base, ".lora_a", &p->a, err);
			if (rc == Q42_OK)
				rc = find_part(l, p->base, ".lora_b", &p->b, err);
			if (rc != Q42_OK)
				return rc;
		} else if (str_ends(t.name, ".lora_b", &stem)) {
			q42_source_tensor a;
			int rc = find_part(l, (q42_str){t.name.p, stem}, ".lora_a", &a, err);
			if (rc != Q42_OK)
				return rc;
		} else if (!str_ends(t.name, "_norm.weight", &stem)) {
			return q42_err_set(err, Q42_EFORMAT,
					   "%s: tensor %.*s: not a LoRA tensor (expected a name ending in .lora_a or .lora_b)",
					   l->path, (int)t.name.len, t.name.p);
		}
	}
	return Q42_OK;
}

int q42_lora_open(q42_lora **out, const char *path, q42_err *err)
{
	uint8_t d[Q42_SHA256_LEN];
	q42_lora *l = calloc(1, sizeof *l);
	int rc;

	*out = NULL;
	if (l == NULL || (l->path = strdup(path)) == NULL) {
		free(l);
		return q42_err_set(err, Q42_ENOMEM, "%s: out of memory", path);
	}
	l->src.map.fd = -1;
	rc = q42_source_open(&l->src, path, err);
	if (rc == Q42_OK && l->src.kind != Q42_SOURCE_GGUF)
		rc = q42_err_set(err, Q42_EFORMAT, "%s: not a LoRA adapter: a %s file, expected GGUF",
				 path, q42_source_kind_name(l->src.kind));
	if (rc == Q42_OK)
		rc = read_keys(l, err);
	if (rc == Q42_OK)
		rc = pair_tensors(l, err);
	if (rc == Q42_OK)
		rc = q42_sha256(l->src.map.data, l->src.map.size, d, err);
	if (rc != Q42_OK) {
		q42_lora_close(l);
		return rc;
	}
	q42_hex_encode(d, sizeof d, l->sha256);
	*out = l;
	return Q42_OK;
}

void q42_lora_close(q42_lora *l)
{
	if (l == NULL)
		return;
	q42_source_close(&l->src);
	free(l->pairs);
	free(l->path);
	free(l);
}

const char *q42_lora_path(const q42_lora *l) { return l->path; }
const char *q42_lora_arch(const q42_lora *l) { return l->arch; }
float q42_lora_alpha(const q42_lora *l) { return l->alpha; }
const char *q42_lora_sha256(const q42_lora *l) { return l->sha256; }
uint64_t q42_lora_n_pairs(const q42_lora *l) { return l->n_pairs; }

const q42_lora_pair *q42_lora_pair_at(const q42_lora *l, uint64_t i)
{
	return i < l->n_pairs ? &l->pairs[i] : NULL;
}

const q42_lora_pair *q42_lora_find(const q42_lora *l, const char *name)
{
	for (uint64_t i = 0; i < l->n_pairs; i++)
		if (q42_str_eq(l->pairs[i].base, name))
			return &l->pairs[i];
	return NULL;
}

float q42_lora_pair_scale(const q42_lora *l, const q42_lora_pair *p, float scale)
{
	const float rank = (float)p->b.dims[0];
	return l->alpha != 0.0f ? scale * l->alpha / rank : scale;
}

bool q42_lora_pair_is_embd(const q42_lora_pair *p)
{
	uint64_t stem;
	return str_ends(p->base, "token_embd.weight", &stem);
}

int q42_lora_pair_check(const q42_lora *l, const q42_lora_pair *p, uint64_t n0, uint64_t n1,
			q42_err *err)
{
	const uint64_t *a = p->a.dims, *b = p->b.dims;
	const bool embd = q42_lora_pair_is_embd(p);
	/* the embedding's pair is flipped: A [rank, n_vocab], B [rank, n_embd] */
	const bool fit = embd ? n0 == b[1] && n1 == a[1] && a[0] == b[0]
			      : n0 == a[0] && n1 == b[1] && a[1] == b[0];
	if (fit && b[0] > 0)
		return Q42_OK;
	return q42_err_set(err, Q42_EFORMAT,
			   "%s: tensor %.*s: lora_a [%llu, %llu] and lora_b [%llu, %llu] do not fit the model's [%llu, %llu]%s",
			   l->path, (int)p->base.len, p->base.p, (unsigned long long)a[0],
			   (unsigned long long)a[1], (unsigned long long)b[0], (unsigned long long)b[1],
			   (unsigned long long)n0, (unsigned long long)n1,
			   embd ? " (token_embd: expected lora_a [rank, n_vocab], lora_b [rank, n_embd])"
				: " (expected lora_a [n_in, rank], lora_b [rank, n_out])");
}

/* A factor as f32 values, into *out (malloc'd). */
static int factor_f32(const q42_lora *l, const q42_source_tensor *t, float **out, q42_err *err)
{
	*out = malloc((size_t)(t->n_elems ? t->n_elems : 1) * sizeof(float));
	if (*out == NULL)
		return q42_err_set(err, Q42_ENOMEM, "%s: out of memory for tensor %.*s", l->path,
				   (int)t->name.len, t->name.p);
	return q42_source_tensor_values(t, 0, t->n_elems, *out, err);
}

int q42_lora_merge(const q42_lora *l, const q42_lora_pair *p, float scale, float *w,
		   uint64_t n_in, uint64_t n_out, q42_err *err)
{
	const uint64_t r = p->b.dims[0];
	const bool embd = q42_lora_pair_is_embd(p);
	const float f = q42_lora_pair_scale(l, p, scale);
	float *a = NULL, *b = NULL, *acc = NULL;
	int rc = factor_f32(l, &p->a, &a, err);
	if (rc == Q42_OK)
		rc = factor_f32(l, &p->b, &b, err);
	if (rc == Q42_OK && (acc = malloc((size_t)(n_in ? n_in : 1) * sizeof(float))) == NULL)
		rc = q42_err_set(err, Q42_ENOMEM, "%s: out of memory", l->path);
	if (rc != Q42_OK)
		goto done;
	for (uint64_t o = 0; o < n_out; o++) {
		float *row = w + o * n_in;
		/* row o: acc[i] = sum over k of the two factors' elements;
		 * the embedding's pair is [rank, n_embd] x [rank, n_vocab] */
		for (uint64_t i = 0; i < n_in; i++)
			acc[i] = 0.0f;
		for (uint64_t k = 0; k < r; k++) {
			if (embd) {
				const float av = a[o * r + k];
				for (uint64_t i = 0; i < n_in; i++)
					acc[i] += b[i * r + k] * av;
			} else {
				const float bv = b[o * r + k];
				const float *ak = a + k * n_in;
				for (uint64_t i = 0; i < n_in; i++)
					acc[i] += ak[i] * bv;
			}
		}
		for (uint64_t i = 0; i < n_in; i++) {
			const float d = acc[i] * f;
			row[i] = d + row[i];
		}
	}
done:
	free(a);
	free(b);
	free(acc);
	return rc;
}
