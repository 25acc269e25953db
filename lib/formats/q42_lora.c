/* q42_lora.c -- open a LoRA adapter (a GGUF file or a PEFT folder), pair
 * its tensors, and merge a pair into a weight.
 *
 * Owns the adapter's validation as a file: the GGUF reader (through
 * q42_source) or the Safetensors reader has checked every offset and size
 * before this sees a tensor; here the keys llama.cpp requires, PEFT's
 * options, the lora_a/lora_b pairing and the Hugging Face names are
 * checked, as llama_adapter_lora_init and convert_lora_to_gguf.py check
 * them. Shapes against a model are checked by q42_lora_pair_check, called
 * by whoever knows the model. Never prints.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "common/q42_types.h"
#include "formats/q42_hf.h"
#include "formats/q42_lora.h"
#include "formats/q42_safetensors.h"

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
	/* a PEFT folder: its safetensors file, the model's names of the
	 * pairs, and lora_B copies with their rows permuted */
	q42_map st_map;
	q42_st_file st;
	char *names;
	uint8_t **owned;
	uint64_t n_owned;
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

static int peft_open(q42_lora *l, const char *model_path, q42_err *err);

int q42_lora_open(q42_lora **out, const char *path, q42_err *err)
{
	return q42_lora_open_model(out, path, NULL, err);
}

int q42_lora_open_model(q42_lora **out, const char *path, const char *model_path, q42_err *err)
{
	uint8_t d[Q42_SHA256_LEN];
	q42_lora *l = calloc(1, sizeof *l);
	struct stat st;
	int rc;

	*out = NULL;
	if (l == NULL || (l->path = strdup(path)) == NULL) {
		free(l);
		return q42_err_set(err, Q42_ENOMEM, "%s: out of memory", path);
	}
	l->src.map.fd = -1;
	l->st_map.fd = -1;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		rc = peft_open(l, model_path, err);
		if (rc != Q42_OK) {
			q42_lora_close(l);
			return rc;
		}
		*out = l;
		return Q42_OK;
	}
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
	q42_st_file_free(&l->st);
	if (l->st_map.path != NULL)
		q42_map_close(&l->st_map);
	for (uint64_t i = 0; i < l->n_owned; i++)
		free(l->owned[i]);
	free(l->owned);
	free(l->names);
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

/* ---- Hugging Face PEFT folders ---------------------------------------- */

/* The Hugging Face family of a GGUF architecture (formats/q42_hf.h). */
static uint32_t hf_family(const char *arch)
{
	static const struct {
		const char *arch;
		uint32_t family;
	} map[] = {{"llama", Q42_HF_LLAMA}, {"qwen2", Q42_HF_QWEN2}, {"qwen3", Q42_HF_QWEN3},
		   {"gemma", Q42_HF_GEMMA}, {"gemma2", Q42_HF_GEMMA}, {"gemma3", Q42_HF_GEMMA},
		   {"lfm2", Q42_HF_LFM2}};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strcmp(arch, map[i].arch) == 0)
			return map[i].family;
	return 0;
}

/* The model's hyperparameters into c->hp (and its family, heads). */
/* A Hugging Face model (folder, Safetensors file or archive, as p64c
 * reads one): its config.json, whose heads and family are all the
 * mapping needs. */
static int hf_model_config(const char *model_path, q42_hf_config *c, q42_err *err)
{
	q42_st_model m;
	int rc = q42_st_model_open(&m, model_path, err);
	if (rc == Q42_OK && m.config.data == NULL)
		rc = q42_err_set(err, Q42_EFORMAT, "%s: no config.json", model_path);
	if (rc == Q42_OK && (rc = q42_hf_config_parse(c, m.config.data, m.config.len, err)) != Q42_OK)
		q42_err_prefix(err, "%s", model_path);
	q42_st_model_close(&m);
	return rc;
}

static int model_config(const char *model_path, q42_hf_config *c, q42_err *err)
{
	q42_source ms;
	int rc;
	if (q42_st_is_candidate(model_path)) {
		rc = hf_model_config(model_path, c, err);
	} else {
		rc = q42_source_open(&ms, model_path, err);
		if (rc == Q42_OK && ms.kind == Q42_SOURCE_GGUF)
			rc = q42_hparams_from_gguf(&c->hp, &ms.gguf, err);
		else if (rc == Q42_OK && ms.p64.has_hparams)
			c->hp = ms.p64.hparams;
		else if (rc == Q42_OK)
			rc = q42_err_set(err, Q42_EFORMAT, "%s: no hyperparameters", model_path);
		q42_source_close(&ms);
	}
	if (rc != Q42_OK)
		return rc;
	c->family = hf_family(c->hp.arch);
	c->n_head_kv = c->hp.n_head_kv[0];
	if (c->family == 0)
		return q42_err_set(err, Q42_EUNSUPPORTED,
				   "%s: a PEFT adapter for architecture '%s': q42 maps Hugging Face names for llama, qwen2, qwen3, gemma and lfm2 only",
				   model_path, c->hp.arch);
	return Q42_OK;
}

/* adapter_config.json: alpha, and the options llama.cpp does not apply. */
static int peft_config(q42_lora *l, q42_err *err)
{
	char p[4096];
	json_error_t je;
	snprintf(p, sizeof p, "%s/adapter_config.json", l->path);
	json_t *j = json_load_file(p, JSON_REJECT_DUPLICATES, &je);
	int rc = Q42_OK;
	if (j == NULL)
		return q42_err_set(err, je.line < 0 ? Q42_EIO : Q42_EFORMAT, "%s: line %d: %s", p,
				   je.line, je.text);
	json_t *type = json_object_get(j, "peft_type"), *alpha = json_object_get(j, "lora_alpha");
	if (!json_is_object(j) || (type != NULL && !(json_is_string(type) &&
						     strcmp(json_string_value(type), "LORA") == 0)))
		rc = q42_err_set(err, Q42_EFORMAT, "%s: not a LoRA adapter (peft_type)", p);
	else if (json_is_true(json_object_get(j, "use_rslora")) ||
		 json_is_true(json_object_get(j, "fan_in_fan_out")))
		rc = q42_err_set(err, Q42_EUNSUPPORTED,
				 "%s: use_rslora or fan_in_fan_out: llama.cpp's adapters apply neither", p);
	else if (!json_is_number(alpha))
		rc = q42_err_set(err, Q42_EFORMAT, "%s: lora_alpha: expected a number", p);
	else
		l->alpha = (float)json_number_value(alpha);
	json_decref(j);
	return rc;
}

/* The ggml type of a Safetensors dtype the adapter may use. */
static uint32_t peft_dtype(uint32_t st)
{
	return st == Q42_ST_F32 ? Q42_DTYPE_F32 : st == Q42_ST_F16 ? Q42_DTYPE_F16
			       : st == Q42_ST_BF16 ? Q42_DTYPE_BF16 : UINT32_MAX;
}

/* One tensor of the file as the pair's a or b (ggml order: its
 * Safetensors shape reversed), b's rows permuted where the base's are. */
static int peft_tensor(q42_lora *l, const q42_st_tensor *t, q42_source_tensor *v, uint32_t xform,
		       bool is_b, const q42_hf_config *c, q42_err *err)
{
	const uint32_t dt = peft_dtype(t->dtype);
	if (dt == UINT32_MAX || t->rank != 2)
		return q42_err_set(err, Q42_EUNSUPPORTED, "%s: tensor %s: %s of rank %u, expected a 2-D F32, F16 or BF16",
				   l->path, t->name, q42_st_dtype_name(t->dtype), t->rank);
	*v = (q42_source_tensor){.name = {t->name, strlen(t->name)}, .dtype = dt, .rank = 2,
				 .dims = {t->shape[1], t->shape[0], 1, 1}, .n_elems = t->n_elems,
				 .offset = l->st.data_start + t->begin, .nbytes = t->end - t->begin,
				 .data = l->st_map.data + l->st.data_start + t->begin};
	if (!is_b || (xform != Q42_HF_X_PERMUTE_Q && xform != Q42_HF_X_PERMUTE_K))
		return Q42_OK;
	uint8_t *copy = malloc((size_t)v->nbytes), *scratch = malloc((size_t)v->nbytes);
	int rc = copy != NULL && scratch != NULL ? Q42_OK : q42_err_set(err, Q42_ENOMEM, "out of memory");
	if (rc == Q42_OK) {
		memcpy(copy, v->data, (size_t)v->nbytes);
		rc = q42_hf_permute_rows(copy, scratch, t->shape[0], v->nbytes / t->shape[0],
					 xform == Q42_HF_X_PERMUTE_Q ? c->hp.n_head : c->n_head_kv, err);
	}
	free(scratch);
	if (rc != Q42_OK) {
		free(copy);
		return rc;
	}
	l->owned[l->n_owned++] = copy;
	v->data = copy;
	return Q42_OK;
}

/* Pair the file's tensors "<prefix>.lora_A.weight" / ".lora_B.weight"
 * under the model's name of "<prefix>.weight" (a "base_model.model."
 * prefix dropped). */
static int peft_pairs(q42_lora *l, const q42_hf_config *c, q42_err *err)
{
	const uint64_t n = l->st.n_tensors;
	l->pairs = calloc(n ? n : 1, sizeof *l->pairs);
	l->names = calloc(n ? n : 1, 256);
	l->owned = calloc(n ? n : 1, sizeof *l->owned);
	if (l->pairs == NULL || l->names == NULL || l->owned == NULL)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	for (uint64_t i = 0; i < n; i++) {
		const q42_st_tensor *t = &l->st.tensors[i];
		q42_str nm = {t->name, strlen(t->name)};
		uint64_t stem;
		char hf[300];
		uint32_t xform;
		if (!str_ends(nm, ".lora_A.weight", &stem))
			continue;
		const char *p = t->name;
		if (strncmp(p, "base_model.model.", 17) == 0)
			p += 17, stem -= 17;
		snprintf(hf, sizeof hf, "%.*s.weight", (int)stem, p);
		char *gg = l->names + l->n_pairs * 256;
		if (stem > 250 || !q42_hf_tensor_name(c, hf, gg, 256, &xform))
			return q42_err_set(err, Q42_EFORMAT, "%s: tensor %s: %s names no tensor of a %s model",
					   l->path, t->name, hf, c->hp.arch);
		q42_lora_pair *pr = &l->pairs[l->n_pairs++];
		pr->base = (q42_str){gg, strlen(gg)};
		char bname[320];
		snprintf(bname, sizeof bname, "%.*s.lora_B.weight", (int)(t->name + strlen(t->name) - 14 - t->name),
			 t->name);
		const q42_st_tensor *b = NULL;
		for (uint64_t k = 0; k < n && b == NULL; k++)
			if (strcmp(l->st.tensors[k].name, bname) == 0)
				b = &l->st.tensors[k];
		if (b == NULL)
			return q42_err_set(err, Q42_EFORMAT, "%s: tensor %s: LoRA pair is missing %s", l->path,
					   t->name, bname);
		int rc = peft_tensor(l, t, &pr->a, xform, false, c, err);
		if (rc == Q42_OK)
			rc = peft_tensor(l, b, &pr->b, xform, true, c, err);
		if (rc != Q42_OK)
			return rc;
	}
	for (uint64_t i = 0; i < n; i++) {
		q42_str nm = {l->st.tensors[i].name, strlen(l->st.tensors[i].name)};
		uint64_t stem;
		if (!str_ends(nm, ".lora_A.weight", &stem) && !str_ends(nm, ".lora_B.weight", &stem))
			return q42_err_set(err, Q42_EFORMAT,
					   "%s: tensor %s: not a LoRA tensor (expected a name ending in .lora_A.weight or .lora_B.weight)",
					   l->path, nm.p);
	}
	return Q42_OK;
}

/* The folder's digest: SHA-256 of "HEX  NAME\n" per file, by name. */
static int peft_digest(q42_lora *l, const char *cfg, q42_err *err)
{
	uint8_t d[Q42_SHA256_LEN];
	char text[2 * (Q42_SHA256_HEX_LEN + 32)], hc[Q42_SHA256_HEX_LEN + 1];
	int rc = q42_sha256_file(cfg, d, err);
	if (rc != Q42_OK)
		return rc;
	q42_hex_encode(d, sizeof d, hc);
	if ((rc = q42_sha256(l->st_map.data, l->st_map.size, d, err)) != Q42_OK)
		return rc;
	q42_hex_encode(d, sizeof d, l->sha256);
	int n = snprintf(text, sizeof text, "%s  adapter_config.json\n%s  adapter_model.safetensors\n",
			 hc, l->sha256);
	if ((rc = q42_sha256(text, (uint64_t)n, d, err)) == Q42_OK)
		q42_hex_encode(d, sizeof d, l->sha256);
	return rc;
}

static int peft_open(q42_lora *l, const char *model_path, q42_err *err)
{
	char p[4096];
	uint64_t hlen;
	q42_hf_config *c = calloc(1, sizeof *c);
	int rc;
	if (c == NULL)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	if (model_path == NULL)
		rc = q42_err_set(err, Q42_EARG, "%s: a PEFT folder is read for a model, none given", l->path);
	else
		rc = model_config(model_path, c, err);
	if (rc == Q42_OK)
		rc = peft_config(l, err);
	snprintf(p, sizeof p, "%s/adapter_model.safetensors", l->path);
	if (rc == Q42_OK)
		rc = q42_map_open(&l->st_map, p, 0, err);
	if (rc == Q42_OK && l->st_map.size < 8)
		rc = q42_err_set(err, Q42_EFORMAT, "%s: %llu bytes, not a Safetensors file", p,
				 (unsigned long long)l->st_map.size);
	if (rc == Q42_OK)
		rc = q42_st_header_len(l->st_map.data, l->st_map.size, p, &hlen, err);
	if (rc == Q42_OK)
		rc = q42_st_header_parse(&l->st, l->st_map.data + 8, hlen, l->st_map.size, p, err);
	if (rc == Q42_OK)
		rc = peft_pairs(l, c, err);
	snprintf(p, sizeof p, "%s/adapter_config.json", l->path);
	if (rc == Q42_OK)
		rc = peft_digest(l, p, err);
	if (rc == Q42_OK)
		snprintf(l->arch, sizeof l->arch, "%s", c->hp.arch);
	free(c);
	return rc;
}
