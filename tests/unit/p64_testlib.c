/* p64_testlib.c -- helpers shared by the P64 unit tests (see p64_testlib.h).
 *
 * The GGUF builder follows the GGUF v3 layout as documented in ggml's
 * docs/gguf.md (header, key/values, tensor infos, 32-byte aligned data);
 * it is written here from that description, not from q42's reader, so a
 * reader bug cannot hide behind a matching builder bug. t_reseal follows
 * p64(5), "CRC coverage".
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "p64_testlib.h"
#include "common/q42_crc32c.h"
#include "common/q42_le.h"

static void put_gstr(q42_buf *b, const char *s, size_t n)
{
	q42_buf_u64le(b, n);
	q42_buf_append(b, s, n);
}

void tg_init(tgguf *t)
{
	memset(t, 0, sizeof *t);
	q42_buf_init(&t->kv);
	q42_buf_init(&t->info);
	q42_buf_init(&t->data);
}

static void key(tgguf *t, const char *k, uint32_t type)
{
	put_gstr(&t->kv, k, strlen(k));
	q42_buf_u32le(&t->kv, type);
	t->n_kv++;
}

void tg_str(tgguf *t, const char *k, const char *v)
{
	key(t, k, 8);
	put_gstr(&t->kv, v, strlen(v));
}

void tg_u32(tgguf *t, const char *k, uint32_t v)
{
	key(t, k, 4);
	q42_buf_u32le(&t->kv, v);
}

void tg_f32(tgguf *t, const char *k, float v)
{
	key(t, k, 6);
	q42_buf_f32le(&t->kv, v);
}

void tg_bool(tgguf *t, const char *k, bool v)
{
	key(t, k, 7);
	q42_buf_u8(&t->kv, v ? 1 : 0);
}

void tg_arr_str(tgguf *t, const char *k, const char *const *v, uint64_t n)
{
	key(t, k, 9);
	q42_buf_u32le(&t->kv, 8);
	q42_buf_u64le(&t->kv, n);
	for (uint64_t i = 0; i < n; i++)
		put_gstr(&t->kv, v[i], strlen(v[i]));
}

void tg_arr_f32(tgguf *t, const char *k, const float *v, uint64_t n)
{
	key(t, k, 9);
	q42_buf_u32le(&t->kv, 6);
	q42_buf_u64le(&t->kv, n);
	for (uint64_t i = 0; i < n; i++)
		q42_buf_f32le(&t->kv, v[i]);
}

void tg_arr_i32(tgguf *t, const char *k, const int32_t *v, uint64_t n)
{
	key(t, k, 9);
	q42_buf_u32le(&t->kv, 5);
	q42_buf_u64le(&t->kv, n);
	for (uint64_t i = 0; i < n; i++)
		q42_buf_u32le(&t->kv, (uint32_t)v[i]);
}

void tg_tensor(tgguf *t, const char *name, uint32_t n_dims, const uint64_t *ne, uint32_t type,
	       const void *data, uint64_t nbytes)
{
	while (t->data.len % 32 != 0)
		q42_buf_u8(&t->data, t->pad_byte);
	put_gstr(&t->info, name, strlen(name));
	q42_buf_u32le(&t->info, n_dims);
	for (uint32_t i = 0; i < n_dims; i++)
		q42_buf_u64le(&t->info, ne[i]);
	q42_buf_u32le(&t->info, type);
	q42_buf_u64le(&t->info, t->data.len);
	q42_buf_append(&t->data, data, nbytes);
	t->n_tensors++;
}

uint8_t *tg_finish(tgguf *t, size_t *n, const uint8_t *trailing, size_t n_trailing)
{
	q42_buf f;
	q42_buf_init(&f);
	q42_buf_append(&f, "GGUF", 4);
	q42_buf_u32le(&f, 3);
	q42_buf_u64le(&f, t->n_tensors);
	q42_buf_u64le(&f, t->n_kv);
	q42_buf_append(&f, t->kv.data, t->kv.len);
	q42_buf_append(&f, t->info.data, t->info.len);
	while (f.len % 32 != 0)
		q42_buf_u8(&f, t->pad_byte);
	q42_buf_append(&f, t->data.data, t->data.len);
	q42_buf_append(&f, trailing, n_trailing);
	q42_buf_free(&t->kv);
	q42_buf_free(&t->info);
	q42_buf_free(&t->data);
	*n = f.len;
	return f.data;
}

uint8_t *tg_synthetic(size_t *n)
{
	static const char *const toks[] = {"<unk>", "<s>", "</s>", "\342\226\201a", "b", "c", "d", "e"};
	const float scores[8] = {0, 0, 0, -1, -2, -3, -4, -5};
	const int32_t types[8] = {2, 3, 3, 1, 1, 1, 1, 1};
	tgguf t;
	tg_init(&t);
	tg_str(&t, "general.architecture", "llama");
	tg_u32(&t, "llama.block_count", 1);
	tg_u32(&t, "llama.embedding_length", 8);
	tg_u32(&t, "llama.attention.head_count", 2);
	tg_u32(&t, "llama.context_length", 16);
	tg_u32(&t, "llama.feed_forward_length", 16);
	tg_f32(&t, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
	tg_str(&t, "tokenizer.ggml.model", "llama");
	tg_arr_str(&t, "tokenizer.ggml.tokens", toks, 8);
	tg_arr_f32(&t, "tokenizer.ggml.scores", scores, 8);
	tg_arr_i32(&t, "tokenizer.ggml.token_type", types, 8);
	tg_u32(&t, "tokenizer.ggml.bos_token_id", 1);
	tg_u32(&t, "tokenizer.ggml.eos_token_id", 2);
	tg_bool(&t, "tokenizer.ggml.add_bos_token", true);

	float emb[64], norm[8], myst[4];
	uint16_t q[64];
	uint8_t odd[100];
	for (int i = 0; i < 64; i++)
		emb[i] = (float)(i - 32) / 16.0f;
	for (int i = 0; i < 8; i++)
		norm[i] = 1.0f + (float)i / 8.0f;
	for (int i = 0; i < 64; i++)
		q[i] = (uint16_t)(0x3C00 + i); /* f16 values just above 1.0 */
	for (int i = 0; i < 4; i++)
		myst[i] = (float)i;
	for (int i = 0; i < 100; i++)
		odd[i] = (uint8_t)(i * 7 + 1);
	const uint64_t ne88[2] = {8, 8}, ne8[1] = {8}, ne4[1] = {4}, ne100[1] = {100};
	tg_tensor(&t, "token_embd.weight", 2, ne88, 0, emb, sizeof emb);
	tg_tensor(&t, "blk.0.attn_norm.weight", 1, ne8, 0, norm, sizeof norm);
	tg_tensor(&t, "blk.0.attn_q.weight", 2, ne88, 1, q, sizeof q);
	tg_tensor(&t, "blk.0.mystery.weight", 1, ne4, 0, myst, sizeof myst);
	tg_tensor(&t, "vendor_blob", 1, ne100, 31, odd, sizeof odd); /* 31: no ggml type */
	return tg_finish(&t, n, NULL, 0);
}

int t_compile(const uint8_t *gguf, size_t n, uint32_t page_log2, bool seekable, uint8_t **out,
	      size_t *outn, q42_err *err)
{
	q42_gguf g;
	q42_p64_write_opts o = {.page_log2 = page_log2, .tool = "test 1"};
	int rc = q42_gguf_parse(&g, gguf, n, "test.gguf", err);
	*out = NULL;
	*outn = 0;
	if (rc != Q42_OK)
		return rc;
	if (seekable) {
		FILE *f = tmpfile();
		rc = q42_p64_write(&g, &o, f, NULL, err);
		if (rc == Q42_OK) {
			long len = ftell(f);
			*out = malloc(len > 0 ? (size_t)len : 1);
			*outn = (size_t)len;
			rewind(f);
			if (fread(*out, 1, *outn, f) != *outn)
				rc = Q42_EIO;
		}
		fclose(f);
	} else {
		/* A pipe: a child reads it into a temp file while we write. */
		int fds[2];
		FILE *sink = tmpfile();
		if (pipe(fds) != 0 || sink == NULL)
			return Q42_EIO;
		pid_t pid = fork();
		if (pid == 0) {
			char buf[65536];
			ssize_t k;
			close(fds[1]);
			while ((k = read(fds[0], buf, sizeof buf)) > 0)
				if (fwrite(buf, 1, (size_t)k, sink) != (size_t)k)
					_exit(1);
			fflush(sink);
			_exit(0);
		}
		close(fds[0]);
		FILE *w = fdopen(fds[1], "wb");
		rc = q42_p64_write(&g, &o, w, NULL, err);
		fclose(w);
		int st;
		waitpid(pid, &st, 0);
		long len = (fseek(sink, 0, SEEK_END), ftell(sink));
		rewind(sink);
		if (rc == Q42_OK) {
			*out = malloc(len > 0 ? (size_t)len : 1);
			*outn = (size_t)len;
			if (fread(*out, 1, *outn, sink) != *outn)
				rc = Q42_EIO;
		}
		fclose(sink);
	}
	q42_gguf_free(&g);
	return rc;
}

int t_rebuild(const q42_p64 *p, uint8_t **out, size_t *outn, q42_err *err)
{
	FILE *f = tmpfile();
	int rc = q42_p64_to_gguf(p, f, err);
	*out = NULL;
	*outn = 0;
	if (rc == Q42_OK) {
		long len = ftell(f);
		*out = malloc(len > 0 ? (size_t)len : 1);
		*outn = (size_t)len;
		rewind(f);
		if (fread(*out, 1, *outn, f) != *outn)
			rc = Q42_EIO;
	}
	fclose(f);
	return rc;
}

static bool in(uint64_t off, uint64_t len, size_t n)
{
	return off <= n && len <= n - off;
}

void t_reseal(uint8_t *d, size_t n)
{
	if (n < 64)
		return;
	uint64_t toff = q42_ld64(d + 24), meta_end = q42_ld64(d + 40);
	uint32_t nsec = q42_ld32(d + 32);
	if (nsec <= 16 && in(toff, 32ull * nsec, n)) {
		for (uint32_t i = 0; i < nsec; i++) {
			uint8_t *e = d + toff + 32ull * i;
			uint64_t off = q42_ld64(e + 8), len = q42_ld64(e + 16);
			if (memcmp(e, "TDSC", 4) != 0 || !in(off, len, n))
				continue;
			for (uint64_t k = 0; k + 96 <= len; k += 96) {
				uint8_t *t = d + off + k;
				uint64_t bo = q42_ld64(t + 64), bl = q42_ld64(t + 72);
				if (in(bo, bl, n))
					q42_st32(t + 88, q42_crc32c(0, d + bo, (size_t)bl));
			}
		}
		for (uint32_t i = 0; i < nsec; i++) {
			uint8_t *e = d + toff + 32ull * i;
			uint64_t off = q42_ld64(e + 8), len = q42_ld64(e + 16);
			if (in(off, len, n))
				q42_st32(e + 24, q42_crc32c(0, d + off, (size_t)len));
		}
		q42_st32(d + 52, q42_crc32c(0, d + toff, 32u * nsec));
	}
	if (meta_end >= 64 && meta_end <= n)
		q42_st32(d + 48, q42_crc32c(0, d + 64, (size_t)(meta_end - 64)));
	q42_st32(d + 60, q42_crc32c(0, d, 60));
}

bool t_read_file(const char *path, uint8_t **data, size_t *n)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	if (f == NULL)
		return false;
	if (fstat(fileno(f), &st) != 0) {
		fclose(f);
		return false;
	}
	*n = (size_t)st.st_size;
	*data = malloc(*n ? *n : 1);
	bool ok = *data != NULL && fread(*data, 1, *n, f) == *n;
	fclose(f);
	return ok;
}

const char *t_shared_dir(const char *env)
{
	const char *d = getenv(env);
	struct stat st;
	if (d == NULL || stat(d, &st) != 0 || !S_ISDIR(st.st_mode))
		return NULL;
	return d;
}

bool t_ci(void)
{
	const char *ci = getenv("CI");
	return ci != NULL && strcmp(ci, "true") == 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **t_list_gguf(const char *dir)
{
	DIR *dh = opendir(dir);
	char **l = calloc(1, sizeof *l);
	size_t n = 0;
	struct dirent *e;
	if (dh == NULL)
		return l;
	while ((e = readdir(dh)) != NULL) {
		size_t len = strlen(e->d_name);
		if (len < 5 || strcmp(e->d_name + len - 5, ".gguf") != 0)
			continue;
		l = realloc(l, (n + 2) * sizeof *l);
		size_t pl = strlen(dir) + len + 2;
		l[n] = malloc(pl);
		snprintf(l[n], pl, "%s/%s", dir, e->d_name);
		l[++n] = NULL;
	}
	closedir(dh);
	qsort(l, n, sizeof *l, cmp_str);
	return l;
}

void t_free_list(char **l)
{
	for (size_t i = 0; l[i] != NULL; i++)
		free(l[i]);
	free(l);
}
