/* q42_safetensors.c -- Safetensors headers and Hugging Face model inputs
 * (see q42_safetensors.h; rules in p64c(1), "SAFETENSORS INPUT").
 *
 * Two passes over the input: the first reads only headers and small JSON
 * files, the second streams each tensor through one reusable buffer. Plain
 * files are read with stdio, archives through libarchive, so nothing is
 * unpacked to disk and memory stays at the largest tensor plus a constant.
 * Every length or offset taken from a header is checked with
 * overflow-checked arithmetic before it is used. Never prints.
 */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "common/q42_ckd.h"
#include "common/q42_le.h"
#include "formats/q42_digest.h"
#include "formats/q42_safetensors.h"

static const struct {
	const char *name;
	uint32_t size;
} dtypes[Q42_ST_DTYPE_COUNT_] = {
	[Q42_ST_BOOL] = {"BOOL", 1},       [Q42_ST_U8] = {"U8", 1},
	[Q42_ST_I8] = {"I8", 1},           [Q42_ST_F8_E4M3] = {"F8_E4M3", 1},
	[Q42_ST_F8_E5M2] = {"F8_E5M2", 1}, [Q42_ST_I16] = {"I16", 2},
	[Q42_ST_U16] = {"U16", 2},         [Q42_ST_F16] = {"F16", 2},
	[Q42_ST_BF16] = {"BF16", 2},       [Q42_ST_I32] = {"I32", 4},
	[Q42_ST_U32] = {"U32", 4},         [Q42_ST_F32] = {"F32", 4},
	[Q42_ST_I64] = {"I64", 8},         [Q42_ST_U64] = {"U64", 8},
	[Q42_ST_F64] = {"F64", 8},
};

const char *q42_st_dtype_name(uint32_t dtype)
{
	return dtype < Q42_ST_DTYPE_COUNT_ ? dtypes[dtype].name : "?";
}

uint32_t q42_st_dtype_size(uint32_t dtype)
{
	return dtype < Q42_ST_DTYPE_COUNT_ ? dtypes[dtype].size : 0;
}

int q42_st_header_len(const uint8_t first8[8], uint64_t file_size, const char *name,
		      uint64_t *len, q42_err *err)
{
	uint64_t n = q42_ld64(first8);
	if (file_size < 8)
		return q42_err_set(err, Q42_EFORMAT,
				   "%s: header length at offset 0: file has %llu bytes, need 8",
				   name, (unsigned long long)file_size);
	if (n < 2 || n > Q42_ST_HEADER_MAX || n > file_size - 8)
		return q42_err_set(err, Q42_EFORMAT,
				   "%s: header length at offset 0: expected 2..%llu (the cap is %u, "
				   "the file has %llu bytes after it), found %llu",
				   name,
				   (unsigned long long)(file_size - 8 < Q42_ST_HEADER_MAX
							    ? file_size - 8 : Q42_ST_HEADER_MAX),
				   Q42_ST_HEADER_MAX, (unsigned long long)(file_size - 8),
				   (unsigned long long)n);
	*len = n;
	return Q42_OK;
}

void q42_st_file_free(q42_st_file *f)
{
	if (f == NULL)
		return;
	for (uint64_t i = 0; i < f->n_tensors; i++)
		free(f->tensors[i].name);
	free(f->tensors);
	free(f->name);
	memset(f, 0, sizeof *f);
}

static bool get_u64(const json_t *v, uint64_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

/* One tensor entry: exactly dtype, shape, data_offsets. */
static int parse_entry(q42_st_tensor *t, const char *key, const json_t *v, const char *name,
		       q42_err *err)
{
	const json_t *dt = json_object_get(v, "dtype"), *sh = json_object_get(v, "shape"),
		     *off = json_object_get(v, "data_offsets");
	const char *s;
	if (!json_is_object(v))
		return q42_err_set(err, Q42_EFORMAT, "%s: header: tensor %s: expected an object",
				   name, key);
	if (json_object_size(v) != 3 || dt == NULL || sh == NULL || off == NULL)
		return q42_err_set(err, Q42_EFORMAT,
				   "%s: header: tensor %s: expected exactly the fields dtype, shape, "
				   "data_offsets, found %zu fields", name, key, json_object_size(v));
	s = json_string_value(dt);
	t->dtype = Q42_ST_DTYPE_COUNT_;
	for (uint32_t i = 0; s != NULL && i < Q42_ST_DTYPE_COUNT_; i++)
		if (strcmp(s, dtypes[i].name) == 0)
			t->dtype = i;
	if (t->dtype == Q42_ST_DTYPE_COUNT_)
		return q42_err_set(err, Q42_EFORMAT, "%s: header: tensor %s: dtype: unknown %s%s%s",
				   name, key, s ? "\"" : "", s ? s : "(not a string)", s ? "\"" : "");
	if (!json_is_array(sh) || json_array_size(sh) > Q42_ST_MAX_RANK)
		return q42_err_set(err, Q42_EFORMAT,
				   "%s: header: tensor %s: shape: expected an array of at most %u "
				   "integers", name, key, Q42_ST_MAX_RANK);
	t->rank = (uint32_t)json_array_size(sh);
	t->n_elems = 1;
	for (uint32_t i = 0; i < t->rank; i++)
		if (!get_u64(json_array_get(sh, i), &t->shape[i]) ||
		    q42_mul_overflow(t->n_elems, t->shape[i], &t->n_elems))
			return q42_err_set(err, Q42_EFORMAT,
					   "%s: header: tensor %s: shape[%u]: expected a non-negative "
					   "integer whose product with the others fits 64 bits",
					   name, key, i);
	if (!json_is_array(off) || json_array_size(off) != 2 ||
	    !get_u64(json_array_get(off, 0), &t->begin) ||
	    !get_u64(json_array_get(off, 1), &t->end) || t->end < t->begin)
		return q42_err_set(err, Q42_EFORMAT,
				   "%s: header: tensor %s: data_offsets: expected [begin, end] with "
				   "0 <= begin <= end", name, key);
	uint64_t want;
	if (q42_mul_overflow(t->n_elems, dtypes[t->dtype].size, &want) ||
	    want != t->end - t->begin)
		return q42_err_set(err, Q42_EFORMAT,
				   "%s: header: tensor %s: byte length: %s x %llu elements needs %llu "
				   "bytes, data_offsets [%llu, %llu) hold %llu",
				   name, key, dtypes[t->dtype].name, (unsigned long long)t->n_elems,
				   (unsigned long long)want, (unsigned long long)t->begin,
				   (unsigned long long)t->end, (unsigned long long)(t->end - t->begin));
	t->name = strdup(key);
	if (t->name == NULL)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	return Q42_OK;
}

static int cmp_begin(const void *a, const void *b)
{
	const q42_st_tensor *x = a, *y = b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return strcmp(x->name, y->name);
}

int q42_st_header_parse(q42_st_file *f, const uint8_t *text, uint64_t len, uint64_t file_size,
			const char *name, q42_err *err)
{
	json_error_t je;
	json_t *root = NULL;
	const char *key;
	json_t *v;
	uint64_t data_len, pos = 0;
	int rc;

	memset(f, 0, sizeof *f);
	if (len > Q42_ST_HEADER_MAX || len + 8 > file_size)
		return q42_err_set(err, Q42_EFORMAT, "%s: header length %llu: exceeds the file or cap",
				   name, (unsigned long long)len);
	f->name = strdup(name);
	if (f->name == NULL)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	f->size = file_size;
	f->data_start = 8 + len;
	data_len = file_size - f->data_start;
	if (len == 0 || text[0] != '{') {
		rc = q42_err_set(err, Q42_EFORMAT, "%s: header at offset 8: expected '{', found 0x%02x",
				 name, len ? text[0] : 0);
		goto fail;
	}
	root = json_loadb((const char *)text, (size_t)len, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL) {
		rc = q42_err_set(err, Q42_EFORMAT, "%s: header at offset %llu: %s", name,
				 (unsigned long long)(8 + (uint64_t)(je.position > 0 ? je.position : 0)),
				 je.text);
		goto fail;
	}
	if (!json_is_object(root)) {
		rc = q42_err_set(err, Q42_EFORMAT, "%s: header: expected a JSON object", name);
		goto fail;
	}
	f->tensors = calloc(json_object_size(root) + 1, sizeof *f->tensors);
	if (f->tensors == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
		goto fail;
	}
	json_object_foreach(root, key, v) {
		if (strcmp(key, "__metadata__") == 0) {
			const char *mk;
			json_t *mv;
			if (!json_is_object(v)) {
				rc = q42_err_set(err, Q42_EFORMAT,
						 "%s: header: __metadata__: expected an object", name);
				goto fail;
			}
			json_object_foreach(v, mk, mv) if (!json_is_string(mv)) {
				rc = q42_err_set(err, Q42_EFORMAT,
						 "%s: header: __metadata__.%s: expected a string", name,
						 mk);
				goto fail;
			}
			continue;
		}
		if (key[0] == '\0') {
			rc = q42_err_set(err, Q42_EFORMAT, "%s: header: a tensor has an empty name",
					 name);
			goto fail;
		}
		if ((rc = parse_entry(&f->tensors[f->n_tensors], key, v, name, err)) != Q42_OK)
			goto fail;
		f->n_tensors++;
	}
	qsort(f->tensors, f->n_tensors, sizeof *f->tensors, cmp_begin);
	for (uint64_t i = 0; i < f->n_tensors; i++) {
		const q42_st_tensor *t = &f->tensors[i];
		if (t->begin != pos) {
			rc = q42_err_set(err, Q42_EFORMAT,
					 "%s: tensor %s: data_offsets begin %llu (file offset %llu): "
					 "expected %llu, %s", name, t->name,
					 (unsigned long long)t->begin,
					 (unsigned long long)(f->data_start + t->begin),
					 (unsigned long long)pos,
					 t->begin < pos ? "it overlaps the previous tensor"
							: "tensors must be contiguous");
			goto fail;
		}
		if (t->end > data_len) {
			rc = q42_err_set(err, Q42_EFORMAT,
					 "%s: tensor %s: data_offsets end %llu: beyond the data area "
					 "of %llu bytes", name, t->name, (unsigned long long)t->end,
					 (unsigned long long)data_len);
			goto fail;
		}
		pos = t->end;
	}
	if (pos != data_len) {
		rc = q42_err_set(err, Q42_EFORMAT,
				 "%s: data area: the tensors cover %llu bytes, the file has %llu after "
				 "the header", name, (unsigned long long)pos,
				 (unsigned long long)data_len);
		goto fail;
	}
	json_decref(root);
	return Q42_OK;
fail:
	json_decref(root);
	q42_st_file_free(f);
	return rc;
}

/* ---- inputs ------------------------------------------------------------ */

bool q42_st_is_candidate(const char *path)
{
	struct stat st;
	uint8_t m[4];
	FILE *fp;
	bool cand;

	if (strcmp(path, "-") == 0 || stat(path, &st) != 0)
		return false;
	if (S_ISDIR(st.st_mode))
		return true;
	if (!S_ISREG(st.st_mode) || st.st_size < 4 || (fp = fopen(path, "rb")) == NULL)
		return false;
	cand = fread(m, 1, 4, fp) == 4 && memcmp(m, "GGUF", 4) != 0 && memcmp(m, "p64\0", 4) != 0;
	fclose(fp);
	return cand;
}

void q42_st_model_close(q42_st_model *m)
{
	for (uint32_t i = 0; i < m->n_files; i++)
		q42_st_file_free(&m->files[i]);
	free(m->files);
	free(m->path);
	free(m->root);
	free(m->config.data);
	free(m->tokenizer.data);
	free(m->tokenizer_config.data);
	free(m->index.data);
	free(m->modules_json.data);
	free(m->st_config.data);
	for (uint32_t i = 0; i < m->n_modules; i++) {
		free(m->modules[i].dir);
		free(m->modules[i].config.data);
	}
	memset(m, 0, sizeof *m);
}

#define N_JSON 6
static const char *const json_names[N_JSON] = {
	"config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors.index.json",
	"modules.json", "config_sentence_transformers.json"};

static q42_st_text *json_slot(q42_st_model *m, const char *base)
{
	q42_st_text *slots[N_JSON] = {&m->config, &m->tokenizer, &m->tokenizer_config, &m->index,
				      &m->modules_json, &m->st_config};
	for (int i = 0; i < N_JSON; i++)
		if (strcmp(base, json_names[i]) == 0)
			return slots[i];
	return NULL;
}

/* A module's "path" q42 reads: one folder name of [A-Za-z0-9_.-], not "."
 * or "..", at most 64 bytes ("" is the model's own folder). */
static bool module_dir_ok(const char *d)
{
	size_t n = strlen(d);
	if (n == 0 || n > 64 || strcmp(d, ".") == 0 || strcmp(d, "..") == 0)
		return false;
	return strspn(d, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

/* The module folders modules.json names, into m->modules (dir only). */
static int module_dirs(q42_st_model *m, q42_err *err)
{
	json_error_t je;
	json_t *root;
	int rc = Q42_OK;
	if (m->modules_json.data == NULL)
		return Q42_OK;
	root = json_loadb(m->modules_json.data, m->modules_json.len, 0, &je);
	if (root == NULL)
		return q42_err_set(err, Q42_EFORMAT, "modules.json: offset %d: %s", je.position,
				   je.text);
	if (!json_is_array(root))
		rc = q42_err_set(err, Q42_EFORMAT, "modules.json: expected an array of modules");
	for (size_t i = 0; rc == Q42_OK && i < json_array_size(root); i++) {
		const char *d = json_string_value(json_object_get(json_array_get(root, i), "path"));
		if (d == NULL || !json_is_string(json_object_get(json_array_get(root, i), "type"))) {
			rc = q42_err_set(err, Q42_EFORMAT,
					 "modules.json: module %zu: expected \"path\" and \"type\" strings", i);
		} else if (d[0] != '\0' && !module_dir_ok(d)) {
			rc = q42_err_set(err, Q42_EUNSUPPORTED,
					 "modules.json: module %zu: path \"%s\": expected one folder name "
					 "of letters, digits, '_', '.' and '-'", i, d);
		} else if (d[0] != '\0' && m->n_modules >= Q42_ST_MODULES_MAX) {
			rc = q42_err_set(err, Q42_EUNSUPPORTED, "modules.json: more than %u module folders",
					 Q42_ST_MODULES_MAX);
		} else if (d[0] != '\0') {
			for (uint32_t k = 0; k < m->n_modules; k++)
				if (strcmp(m->modules[k].dir, d) == 0)
					rc = q42_err_set(err, Q42_EFORMAT,
							 "modules.json: path \"%s\" named twice", d);
			if (rc == Q42_OK && (m->modules[m->n_modules].dir = strdup(d)) == NULL)
				rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
			if (rc == Q42_OK)
				m->n_modules++;
		}
	}
	json_decref(root);
	return rc;
}

/* The module whose folder dir is, or NULL. */
static q42_st_module *module_of(q42_st_model *m, const char *dir, size_t len)
{
	for (uint32_t i = 0; i < m->n_modules; i++)
		if (strlen(m->modules[i].dir) == len && memcmp(m->modules[i].dir, dir, len) == 0)
			return &m->modules[i];
	return NULL;
}

/* A module's model.safetensors: named DIR/model.safetensors, its tensors
 * DIR/NAME. */
static int module_names(q42_st_file *f, const char *dir, q42_err *err)
{
	size_t dl = strlen(dir);
	char *n = malloc(dl + sizeof "/model.safetensors");
	if (n == NULL)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	snprintf(n, dl + sizeof "/model.safetensors", "%s/model.safetensors", dir);
	free(f->name);
	f->name = n;
	for (uint64_t t = 0; t < f->n_tensors; t++) {
		size_t tl = strlen(f->tensors[t].name);
		char *x = malloc(dl + tl + 2);
		if (x == NULL)
			return q42_err_set(err, Q42_ENOMEM, "out of memory");
		snprintf(x, dl + tl + 2, "%s/%s", dir, f->tensors[t].name);
		free(f->tensors[t].name);
		f->tensors[t].name = x;
	}
	return Q42_OK;
}

static bool ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);
	return n >= k && strcmp(s + n - k, suf) == 0;
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const q42_st_file *)a)->name, ((const q42_st_file *)b)->name);
}

/* A reader over one file's bytes, from stdio or from libarchive. */
typedef struct src {
	FILE *fp;
	struct archive *ar;
} src;

static int src_read(src *s, void *buf, uint64_t n, const char *name, uint64_t at, q42_err *err)
{
	uint8_t *p = buf;
	while (n > 0) {
		size_t want = n > (1u << 30) ? (1u << 30) : (size_t)n;
		ssize_t got;
		if (s->fp != NULL) {
			got = (ssize_t)fread(p, 1, want, s->fp);
			if (got == 0)
				return q42_err_set(err, ferror(s->fp) ? Q42_EIO : Q42_EFORMAT,
						   "%s: read failed at offset %llu: %s", name,
						   (unsigned long long)at,
						   ferror(s->fp) ? strerror(errno) : "unexpected end of file");
		} else {
			got = archive_read_data(s->ar, p, want);
			if (got <= 0)
				return q42_err_set(err, Q42_EFORMAT, "%s: archive read failed at offset %llu: %s",
						   name, (unsigned long long)at,
						   got == 0 ? "unexpected end of member"
							    : archive_error_string(s->ar));
		}
		p += got;
		n -= (uint64_t)got;
		at += (uint64_t)got;
	}
	return Q42_OK;
}

/* Read a Safetensors header from s (positioned at byte 0) into *f. */
static int read_header(src *s, uint64_t size, const char *name, q42_st_file *f, q42_err *err)
{
	uint8_t first[8];
	uint64_t len;
	uint8_t *text = NULL;
	int rc;
	if (size < 8)
		return q42_err_set(err, Q42_EFORMAT, "%s: %llu bytes, too short for a Safetensors file",
				   name, (unsigned long long)size);
	if ((rc = src_read(s, first, 8, name, 0, err)) != Q42_OK ||
	    (rc = q42_st_header_len(first, size, name, &len, err)) != Q42_OK)
		return rc;
	text = malloc((size_t)len);
	if (text == NULL)
		return q42_err_set(err, Q42_ENOMEM, "%s: out of memory for a %llu-byte header", name,
				   (unsigned long long)len);
	rc = src_read(s, text, len, name, 8, err);
	if (rc == Q42_OK)
		rc = q42_st_header_parse(f, text, len, size, name, err);
	free(text);
	return rc;
}

static int read_text(src *s, uint64_t size, const char *name, q42_st_text *t, q42_err *err)
{
	int rc;
	if (size > Q42_ST_JSON_MAX)
		return q42_err_set(err, Q42_EFORMAT, "%s: %llu bytes, above the %u-byte cap", name,
				   (unsigned long long)size, Q42_ST_JSON_MAX);
	free(t->data);
	t->data = malloc((size_t)size + 1);
	if (t->data == NULL)
		return q42_err_set(err, Q42_ENOMEM, "%s: out of memory", name);
	t->len = (size_t)size;
	rc = src_read(s, t->data, size, name, 0, err);
	t->data[size] = '\0';
	return rc;
}

static int add_file(q42_st_model *m, q42_st_file *f, q42_err *err)
{
	q42_st_file *nf;
	if (m->n_files >= Q42_ST_MAX_FILES) {
		q42_st_file_free(f);
		return q42_err_set(err, Q42_EUNSUPPORTED, "%s: more than %u Safetensors files", m->path,
				   Q42_ST_MAX_FILES);
	}
	nf = realloc(m->files, (m->n_files + 1) * sizeof *nf);
	if (nf == NULL) {
		q42_st_file_free(f);
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	}
	m->files = nf;
	m->files[m->n_files++] = *f;
	return Q42_OK;
}

/* Folder: the JSON files, then the weights named by the index (or
 * model.safetensors). */
static int open_folder(q42_st_model *m, q42_err *err)
{
	char *p = NULL;
	size_t cap = strlen(m->path) + 512;
	struct stat st;
	int rc = Q42_OK;

	p = malloc(cap);
	if (p == NULL)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	for (int i = 0; i < N_JSON && rc == Q42_OK; i++) {
		snprintf(p, cap, "%s/%s", m->path, json_names[i]);
		if (stat(p, &st) != 0)
			continue;
		src s = {.fp = fopen(p, "rb")};
		if (s.fp == NULL) {
			rc = q42_err_set(err, Q42_EIO, "%s: %s", p, strerror(errno));
			break;
		}
		rc = read_text(&s, (uint64_t)st.st_size, p, json_slot(m, json_names[i]), err);
		fclose(s.fp);
	}
	if (rc == Q42_OK)
		rc = module_dirs(m, err);
	/* each module folder's config.json and model.safetensors */
	for (uint32_t i = 0; i < m->n_modules && rc == Q42_OK; i++) {
		for (int w = 0; w < 2 && rc == Q42_OK; w++) {
			snprintf(p, cap, "%s/%s/%s", m->path, m->modules[i].dir,
				 w == 0 ? "config.json" : "model.safetensors");
			if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
				continue;
			src s = {.fp = fopen(p, "rb")};
			q42_st_file f;
			if (s.fp == NULL) {
				rc = q42_err_set(err, Q42_EIO, "%s: %s", p, strerror(errno));
				break;
			}
			if (w == 0) {
				rc = read_text(&s, (uint64_t)st.st_size, p, &m->modules[i].config, err);
			} else if ((rc = read_header(&s, (uint64_t)st.st_size, p, &f, err)) == Q42_OK) {
				if ((rc = module_names(&f, m->modules[i].dir, err)) != Q42_OK)
					q42_st_file_free(&f);
				else
					rc = add_file(m, &f, err);
			}
			fclose(s.fp);
		}
	}
	if (rc != Q42_OK)
		goto done;
	/* The weights: every file the index names, else model.safetensors. */
	DIR *d = opendir(m->path);
	if (d == NULL) {
		rc = q42_err_set(err, Q42_EIO, "%s: %s", m->path, strerror(errno));
		goto done;
	}
	struct dirent *de;
	while (rc == Q42_OK && (de = readdir(d)) != NULL) {
		if (!ends_with(de->d_name, ".safetensors"))
			continue;
		if (m->index.data == NULL && strcmp(de->d_name, "model.safetensors") != 0)
			continue;
		snprintf(p, cap, "%s/%s", m->path, de->d_name);
		if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		src s = {.fp = fopen(p, "rb")};
		q42_st_file f;
		if (s.fp == NULL) {
			rc = q42_err_set(err, Q42_EIO, "%s: %s", p, strerror(errno));
			break;
		}
		rc = read_header(&s, (uint64_t)st.st_size, p, &f, err);
		fclose(s.fp);
		if (rc == Q42_OK) {
			/* name the file by its name inside the folder */
			free(f.name);
			f.name = strdup(de->d_name);
			rc = f.name ? add_file(m, &f, err) : q42_err_set(err, Q42_ENOMEM, "out of memory");
			if (f.name == NULL)
				q42_st_file_free(&f);
		}
	}
	closedir(d);
done:
	free(p);
	return rc;
}

static int archive_begin(struct archive **ar, const char *path, q42_err *err)
{
	*ar = archive_read_new();
	if (*ar == NULL)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	archive_read_support_filter_gzip(*ar);
	archive_read_support_filter_zstd(*ar);
	archive_read_support_format_tar(*ar);
	archive_read_support_format_zip(*ar);
	if (archive_read_open_filename(*ar, path, 1 << 16) != ARCHIVE_OK)
		return q42_err_set(err, Q42_EFORMAT,
				   "%s: not a model: the magic is neither GGUF nor p64, it is not a "
				   "Safetensors file, and not a .tar, .tar.gz, .tar.zst or .zip "
				   "archive (%s)", path, archive_error_string(*ar));
	return Q42_OK;
}

/* The member's name relative to the archive's model folder, or NULL when
 * it is outside it; sub: also one folder further down (DIR/NAME). */
static const char *in_root(const q42_st_model *m, const char *member, bool sub)
{
	size_t r = strlen(m->root);
	const char *slash;
	if (strncmp(member, m->root, r) != 0)
		return NULL;
	slash = strchr(member + r, '/');
	if (slash != NULL && (!sub || strchr(slash + 1, '/') != NULL))
		return NULL;
	return member + r;
}

/* The model folder of an archive: the shallowest folder holding
 * config.json, model.safetensors or model.safetensors.index.json. */
static int archive_root(q42_st_model *m, q42_err *err)
{
	struct archive *ar = NULL;
	struct archive_entry *e;
	char *best = NULL;
	size_t best_depth = SIZE_MAX;
	int rc = archive_begin(&ar, m->path, err), r;

	while (rc == Q42_OK && (r = archive_read_next_header(ar, &e)) == ARCHIVE_OK) {
		const char *n = archive_entry_pathname(e), *slash, *base;
		size_t depth = 0;
		if (n == NULL || archive_entry_filetype(e) != AE_IFREG)
			continue;
		if (strncmp(n, "./", 2) == 0)
			n += 2;
		slash = strrchr(n, '/');
		base = slash ? slash + 1 : n;
		if (strcmp(base, "config.json") != 0 && strcmp(base, "model.safetensors") != 0 &&
		    strcmp(base, "model.safetensors.index.json") != 0)
			continue;
		for (const char *c = n; *c; c++)
			depth += *c == '/';
		if (depth < best_depth) {
			free(best);
			best = strndup(n, (size_t)(base - n));
			best_depth = depth;
			if (best == NULL)
				rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
		}
	}
	if (rc == Q42_OK && r != ARCHIVE_EOF)
		rc = q42_err_set(err, Q42_EFORMAT, "%s: archive: %s", m->path, archive_error_string(ar));
	if (rc == Q42_OK && best == NULL)
		rc = q42_err_set(err, Q42_EFORMAT,
				 "%s: the archive holds no config.json, model.safetensors or "
				 "model.safetensors.index.json", m->path);
	if (rc == Q42_OK) {
		free(m->root);
		m->root = best;
	} else {
		free(best);
	}
	archive_read_free(ar);
	return rc;
}

/* An archive's module folders were gathered before modules.json was
 * known: keep those it names, in its order, and their files. */
static int prune_modules(q42_st_model *m, q42_err *err)
{
	q42_st_model named = {.modules_json = m->modules_json};
	int rc = module_dirs(&named, err);
	for (uint32_t i = 0; rc == Q42_OK && i < named.n_modules; i++) {
		q42_st_module *have = module_of(m, named.modules[i].dir, strlen(named.modules[i].dir));
		if (have != NULL) {
			named.modules[i].config = have->config;
			have->config = (q42_st_text){0};
		}
	}
	for (uint32_t i = 0; i < m->n_modules; i++) {
		free(m->modules[i].dir);
		free(m->modules[i].config.data);
	}
	uint32_t k = 0;
	for (uint32_t i = 0; i < m->n_files; i++) {
		const char *slash = strchr(m->files[i].name, '/');
		if (slash == NULL || (rc == Q42_OK && module_of(&named, m->files[i].name,
							       (size_t)(slash - m->files[i].name))))
			m->files[k++] = m->files[i];
		else
			q42_st_file_free(&m->files[i]);
	}
	m->n_files = k;
	memcpy(m->modules, named.modules, sizeof m->modules);
	m->n_modules = named.n_modules;
	return rc;
}

static int open_archive(q42_st_model *m, q42_err *err)
{
	struct archive *ar = NULL;
	struct archive_entry *e;
	int rc, r;

	if ((rc = archive_root(m, err)) != Q42_OK)
		return rc;
	if ((rc = archive_begin(&ar, m->path, err)) != Q42_OK)
		goto done;
	while (rc == Q42_OK && (r = archive_read_next_header(ar, &e)) == ARCHIVE_OK) {
		const char *n = archive_entry_pathname(e), *base;
		uint64_t size;
		if (n == NULL || archive_entry_filetype(e) != AE_IFREG)
			continue;
		if (strncmp(n, "./", 2) == 0)
			n += 2;
		if ((base = in_root(m, n, true)) == NULL)
			continue;
		/* a module folder's member: kept until modules.json is known */
		const char *slash = strchr(base, '/');
		q42_st_module *mod = NULL;
		if (slash != NULL) {
			if (strcmp(slash + 1, "config.json") != 0 &&
			    strcmp(slash + 1, "model.safetensors") != 0)
				continue;
			mod = module_of(m, base, (size_t)(slash - base));
			if (mod == NULL && m->n_modules < Q42_ST_MODULES_MAX) {
				mod = &m->modules[m->n_modules];
				mod->dir = strndup(base, (size_t)(slash - base));
				if (mod->dir == NULL) {
					rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
					break;
				}
				m->n_modules++;
			}
			if (mod == NULL || !module_dir_ok(mod->dir))
				continue;
		}
		q42_st_text *slot = mod != NULL ? (strcmp(slash + 1, "config.json") == 0 ? &mod->config
										      : NULL)
						: json_slot(m, base);
		if (slot == NULL && !ends_with(base, ".safetensors"))
			continue;
		/* The header check needs the member's size before its bytes. */
		if (!archive_entry_size_is_set(e) || archive_entry_size(e) < 0) {
			rc = q42_err_set(err, Q42_EUNSUPPORTED,
					 "%s: member %s: the archive does not record its size", m->path, n);
			break;
		}
		size = (uint64_t)archive_entry_size(e);
		src s = {.ar = ar};
		if (slot != NULL) {
			rc = read_text(&s, size, n, slot, err);
		} else {
			q42_st_file f;
			rc = read_header(&s, size, base, &f, err);
			if (rc == Q42_OK && mod != NULL && (rc = module_names(&f, mod->dir, err)) != Q42_OK)
				q42_st_file_free(&f);
			else if (rc == Q42_OK)
				rc = add_file(m, &f, err);
		}
	}
	if (rc == Q42_OK)
		rc = prune_modules(m, err);
	if (rc == Q42_OK && r != ARCHIVE_EOF)
		rc = q42_err_set(err, Q42_EFORMAT, "%s: archive: %s", m->path, archive_error_string(ar));
	/* Without an index only model.safetensors is the model. */
	if (rc == Q42_OK && m->index.data == NULL) {
		uint32_t k = 0;
		for (uint32_t i = 0; i < m->n_files; i++) {
			if (strcmp(m->files[i].name, "model.safetensors") == 0 ||
			    strchr(m->files[i].name, '/') != NULL)
				m->files[k++] = m->files[i];
			else
				q42_st_file_free(&m->files[i]);
		}
		m->n_files = k;
	}
done:
	if (ar != NULL)
		archive_read_free(ar);
	return rc;
}

/* The index's weight_map must name exactly the tensors of the files, each
 * in the file that holds it; files it does not name are dropped. */
static int check_index(q42_st_model *m, q42_err *err)
{
	json_error_t je;
	json_t *root = json_loadb(m->index.data, m->index.len, JSON_REJECT_DUPLICATES, &je);
	json_t *wm = root ? json_object_get(root, "weight_map") : NULL;
	const char *key;
	json_t *v;
	int rc = Q42_OK;
	uint32_t k = 0;
	uint64_t listed = 0;

	if (root == NULL)
		return q42_err_set(err, Q42_EFORMAT, "model.safetensors.index.json: offset %d: %s",
				   je.position, je.text);
	if (!json_is_object(wm)) {
		rc = q42_err_set(err, Q42_EFORMAT,
				 "model.safetensors.index.json: weight_map: expected an object");
		goto done;
	}
	for (uint32_t i = 0; i < m->n_files; i++) {
		/* a module's own file is not the index's business */
		bool used = strchr(m->files[i].name, '/') != NULL;
		json_object_foreach(wm, key, v) if (json_is_string(v) &&
						    strcmp(json_string_value(v), m->files[i].name) == 0)
		{
			used = true;
			break;
		}
		if (used)
			m->files[k++] = m->files[i];
		else
			q42_st_file_free(&m->files[i]);
	}
	m->n_files = k;
	json_object_foreach(wm, key, v) {
		const char *fn = json_string_value(v);
		bool found = false;
		listed++;
		for (uint32_t i = 0; fn != NULL && i < m->n_files && !found; i++) {
			if (strcmp(m->files[i].name, fn) != 0)
				continue;
			for (uint64_t t = 0; t < m->files[i].n_tensors && !found; t++)
				found = strcmp(m->files[i].tensors[t].name, key) == 0;
			if (!found) {
				rc = q42_err_set(err, Q42_EFORMAT,
						 "model.safetensors.index.json: weight_map.%s: expected in "
						 "%s, not found there", key, fn);
				goto done;
			}
		}
		if (!found) {
			rc = q42_err_set(err, Q42_EFORMAT,
					 "model.safetensors.index.json: weight_map.%s: file %s%s%s is "
					 "missing", key, fn ? "\"" : "", fn ? fn : "(not a string)",
					 fn ? "\"" : "");
			goto done;
		}
	}
	uint64_t total = 0;
	for (uint32_t i = 0; i < m->n_files; i++)
		if (strchr(m->files[i].name, '/') == NULL)
			total += m->files[i].n_tensors;
	if (total != listed)
		rc = q42_err_set(err, Q42_EFORMAT,
				 "model.safetensors.index.json: weight_map lists %llu tensors, the "
				 "files it names hold %llu", (unsigned long long)listed,
				 (unsigned long long)total);
done:
	json_decref(root);
	return rc;
}

static int finish_open(q42_st_model *m, q42_err *err)
{
	int rc;
	if (m->index.data != NULL && (rc = check_index(m, err)) != Q42_OK)
		return rc;
	if (m->n_files == 0)
		return q42_err_set(err, Q42_EFORMAT,
				   "%s: no weights: expected model.safetensors or the files named by "
				   "model.safetensors.index.json", m->path);
	qsort(m->files, m->n_files, sizeof *m->files, cmp_file);
	/* Names are unique across the whole model. Sorting a copy of every
	 * name would cost memory; shards are few, so compare per pair. */
	for (uint32_t i = 0; i < m->n_files; i++) {
		for (uint64_t t = 0; t < m->files[i].n_tensors; t++) {
			const q42_st_tensor *x = &m->files[i].tensors[t];
			uint64_t bytes = x->end - x->begin;
			if (bytes > m->max_tensor_bytes)
				m->max_tensor_bytes = bytes;
			m->n_tensors++;
		}
		for (uint32_t j = i + 1; j < m->n_files; j++)
			for (uint64_t a = 0; a < m->files[i].n_tensors; a++)
				for (uint64_t b = 0; b < m->files[j].n_tensors; b++)
					if (strcmp(m->files[i].tensors[a].name,
						   m->files[j].tensors[b].name) == 0)
						return q42_err_set(err, Q42_EFORMAT,
								   "tensor %s is in both %s and %s",
								   m->files[i].tensors[a].name,
								   m->files[i].name, m->files[j].name);
	}
	return Q42_OK;
}

int q42_st_model_open(q42_st_model *m, const char *path, q42_err *err)
{
	struct stat st;
	uint8_t first[8];
	int rc;

	memset(m, 0, sizeof *m);
	m->path = strdup(path);
	m->root = strdup("");
	if (m->path == NULL || m->root == NULL)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	if (stat(path, &st) != 0)
		return q42_err_set(err, Q42_EIO, "%s: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		m->kind = Q42_ST_KIND_FOLDER;
		rc = open_folder(m, err);
	} else {
		src s = {.fp = fopen(path, "rb")};
		uint64_t len;
		q42_err sub;
		if (s.fp == NULL)
			return q42_err_set(err, Q42_EIO, "%s: %s", path, strerror(errno));
		/* A Safetensors file starts with a sane length and then '{'. */
		bool st_file = fread(first, 1, 8, s.fp) == 8 &&
			       q42_st_header_len(first, (uint64_t)st.st_size, path, &len, &sub) ==
				       Q42_OK &&
			       fgetc(s.fp) == '{';
		if (st_file) {
			q42_st_file f;
			m->kind = Q42_ST_KIND_FILE;
			rewind(s.fp);
			rc = read_header(&s, (uint64_t)st.st_size, path, &f, err);
			if (rc == Q42_OK)
				rc = add_file(m, &f, err);
		} else {
			m->kind = Q42_ST_KIND_ARCHIVE;
			rc = open_archive(m, err);
		}
		fclose(s.fp);
	}
	if (rc == Q42_OK)
		rc = finish_open(m, err);
	return rc;
}

/* ---- second pass --------------------------------------------------------- */

typedef struct manifest {
	char name[256];
	uint8_t sha[32];
} manifest;

static int cmp_manifest(const void *a, const void *b)
{
	return strcmp(((const manifest *)a)->name, ((const manifest *)b)->name);
}

/* Stream one Safetensors file from s: header, then each tensor to fn. */
static int stream_file(q42_st_model *m, uint32_t fi, src *s, uint8_t *buf, EVP_MD_CTX *md,
		       q42_st_tensor_fn fn, void *ctx, q42_err *err)
{
	const q42_st_file *f = &m->files[fi];
	uint64_t at = 0;
	int rc = Q42_OK;
	/* The header again: hashed, and its length checked unchanged. */
	for (uint64_t left = f->data_start; left > 0 && rc == Q42_OK;) {
		uint8_t chunk[4096];
		uint64_t k = left > sizeof chunk ? sizeof chunk : left;
		rc = src_read(s, chunk, k, f->name, at, err);
		if (rc == Q42_OK && at == 0 && q42_ld64(chunk) + 8 != f->data_start)
			rc = q42_err_set(err, Q42_EFORMAT, "%s: changed between the two passes",
					 f->name);
		if (rc == Q42_OK)
			EVP_DigestUpdate(md, chunk, (size_t)k);
		at += k;
		left -= k;
	}
	for (uint64_t t = 0; t < f->n_tensors && rc == Q42_OK; t++) {
		uint64_t n = f->tensors[t].end - f->tensors[t].begin;
		rc = src_read(s, buf, n, f->name, at, err);
		if (rc == Q42_OK)
			EVP_DigestUpdate(md, buf, (size_t)n);
		if (rc == Q42_OK)
			rc = fn(ctx, fi, t, buf, err);
		at += n;
	}
	return rc;
}

int q42_st_model_stream(q42_st_model *m, q42_st_tensor_fn fn, void *ctx, uint8_t sha256[32],
			uint64_t *source_size, q42_err *err)
{
	uint8_t *buf = malloc(m->max_tensor_bytes > 4096 ? (size_t)m->max_tensor_bytes : 4096);
	manifest *man = calloc(m->n_files + N_JSON + Q42_ST_MODULES_MAX, sizeof *man);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	struct archive *ar = NULL;
	uint32_t n_man = 0;
	uint64_t total = 0;
	int rc = Q42_OK;
	unsigned int mdlen;

	if (buf == NULL || man == NULL || md == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "out of memory for a %llu-byte tensor buffer",
				 (unsigned long long)m->max_tensor_bytes);
		goto done;
	}
	/* JSON files: hashed from the copy read in the first pass. */
	q42_st_text *texts[N_JSON + Q42_ST_MODULES_MAX] = {
		&m->config, &m->tokenizer, &m->tokenizer_config, &m->index, &m->modules_json,
		&m->st_config};
	for (uint32_t i = 0; i < m->n_modules; i++)
		texts[N_JSON + i] = &m->modules[i].config;
	for (uint32_t i = 0; i < N_JSON + m->n_modules && m->kind != Q42_ST_KIND_FILE; i++) {
		if (texts[i]->data == NULL)
			continue;
		if (i < N_JSON)
			snprintf(man[n_man].name, sizeof man[n_man].name, "%s", json_names[i]);
		else
			snprintf(man[n_man].name, sizeof man[n_man].name, "%s/config.json",
				 m->modules[i - N_JSON].dir);
		if ((rc = q42_sha256(texts[i]->data, texts[i]->len, man[n_man].sha, err)) != Q42_OK)
			goto done;
		total += texts[i]->len;
		n_man++;
	}
	if (m->kind != Q42_ST_KIND_ARCHIVE) {
		for (uint32_t fi = 0; fi < m->n_files && rc == Q42_OK; fi++) {
			char *p = NULL;
			src s = {0};
			if (m->kind == Q42_ST_KIND_FOLDER) {
				size_t cap = strlen(m->path) + strlen(m->files[fi].name) + 2;
				p = malloc(cap);
				if (p == NULL) {
					rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
					break;
				}
				snprintf(p, cap, "%s/%s", m->path, m->files[fi].name);
			}
			s.fp = fopen(p ? p : m->path, "rb");
			if (s.fp == NULL) {
				rc = q42_err_set(err, Q42_EIO, "%s: %s", p ? p : m->path, strerror(errno));
				free(p);
				break;
			}
			EVP_DigestInit_ex(md, EVP_sha256(), NULL);
			rc = stream_file(m, fi, &s, buf, md, fn, ctx, err);
			fclose(s.fp);
			free(p);
			EVP_DigestFinal_ex(md, man[n_man].sha, &mdlen);
			snprintf(man[n_man].name, sizeof man[n_man].name, "%s", m->files[fi].name);
			total += m->files[fi].size;
			n_man++;
		}
	} else {
		struct archive_entry *e;
		uint32_t seen = 0;
		int r;
		if ((rc = archive_begin(&ar, m->path, err)) != Q42_OK)
			goto done;
		while (rc == Q42_OK && (r = archive_read_next_header(ar, &e)) == ARCHIVE_OK) {
			const char *n = archive_entry_pathname(e), *base;
			if (n == NULL || archive_entry_filetype(e) != AE_IFREG)
				continue;
			if (strncmp(n, "./", 2) == 0)
				n += 2;
			if ((base = in_root(m, n, true)) == NULL)
				continue;
			for (uint32_t fi = 0; fi < m->n_files; fi++) {
				if (strcmp(m->files[fi].name, base) != 0)
					continue;
				src s = {.ar = ar};
				EVP_DigestInit_ex(md, EVP_sha256(), NULL);
				rc = stream_file(m, fi, &s, buf, md, fn, ctx, err);
				EVP_DigestFinal_ex(md, man[n_man].sha, &mdlen);
				snprintf(man[n_man].name, sizeof man[n_man].name, "%s", base);
				total += m->files[fi].size;
				n_man++;
				seen++;
				break;
			}
		}
		if (rc == Q42_OK && seen != m->n_files)
			rc = q42_err_set(err, Q42_EFORMAT,
					 "%s: %u of %u weight files seen in the second pass", m->path,
					 seen, m->n_files);
	}
	if (rc != Q42_OK)
		goto done;
	if (m->kind == Q42_ST_KIND_FILE) {
		memcpy(sha256, man[0].sha, 32);
	} else {
		qsort(man, n_man, sizeof *man, cmp_manifest);
		EVP_DigestInit_ex(md, EVP_sha256(), NULL);
		for (uint32_t i = 0; i < n_man; i++) {
			char hex[Q42_SHA256_HEX_LEN + 1];
			q42_hex_encode(man[i].sha, 32, hex);
			EVP_DigestUpdate(md, hex, Q42_SHA256_HEX_LEN);
			EVP_DigestUpdate(md, "  ", 2);
			EVP_DigestUpdate(md, man[i].name, strlen(man[i].name));
			EVP_DigestUpdate(md, "\n", 1);
		}
		EVP_DigestFinal_ex(md, sha256, &mdlen);
	}
	*source_size = total;
done:
	if (ar != NULL)
		archive_read_free(ar);
	EVP_MD_CTX_free(md);
	free(man);
	free(buf);
	return rc;
}
