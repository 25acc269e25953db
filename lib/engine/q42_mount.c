/* q42_mount.c -- open a model file as P64 or GGUF and expose it uniformly.
 *
 * The container is chosen by magic bytes only ("p64\0" or "GGUF"); its own
 * reader validates the whole file before the mount hands out a single
 * pointer. Relies on q42_p64_open / q42_gguf_parse for every bound check;
 * must never read tensor bytes itself or fall back from one container to
 * the other.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "common/q42_file.h"
#include "engine/q42_mount.h"
#include "formats/q42_gguf.h"
#include "formats/q42_p64.h"

struct q42_mount {
	q42_map map;
	enum q42_container container;
	q42_gguf gguf;      /* GGUF mounts */
	q42_p64 p64;        /* P64 mounts */
	bool has_hparams;
	q42_hparams hp;
	q42_vocab gguf_vocab; /* owned copy for GGUF mounts */
	const q42_vocab *vocab;
	q42_tokenizer *tok;
	bool have_ident;
	q42_model_ident ident;
};

const char *q42_container_name(enum q42_container c)
{
	switch (c) {
	case Q42_CONTAINER_GGUF:
		return "gguf";
	case Q42_CONTAINER_P64:
		return "p64";
	}
	return "?";
}

static int mount_gguf(q42_mount *m, unsigned flags, q42_err *err)
{
	int rc = q42_gguf_parse(&m->gguf, m->map.data, m->map.size, m->map.path, err);
	if (rc != Q42_OK)
		return rc;
	rc = q42_hparams_from_gguf(&m->hp, &m->gguf, err);
	if (rc == Q42_OK) {
		m->has_hparams = true;
	} else if (!(flags & Q42_MOUNT_VOCAB_ONLY)) {
		q42_err_prefix(err, "%s", m->map.path);
		return rc;
	}
	rc = q42_vocab_from_gguf(&m->gguf_vocab, &m->gguf, err);
	if (rc != Q42_OK) {
		q42_err_prefix(err, "%s", m->map.path);
		return rc;
	}
	m->vocab = &m->gguf_vocab;
	return Q42_OK;
}

static int mount_p64(q42_mount *m, unsigned flags, q42_err *err)
{
	int rc = q42_p64_open(&m->p64, m->map.data, m->map.size, m->map.path, err);
	if (rc != Q42_OK)
		return rc;
	if (m->p64.has_hparams) {
		m->hp = m->p64.hparams;
		m->has_hparams = true;
	} else if (!(flags & Q42_MOUNT_VOCAB_ONLY)) {
		return q42_err_set(err, Q42_ENOTFOUND,
				   "%s: P64 has no hyperparameter section (HPAR): not a runnable model",
				   m->map.path);
	}
	if (!m->p64.has_vocab)
		return q42_err_set(err, Q42_ENOTFOUND,
				   "%s: tokenizer: P64 has no tokenizer section (Q42T)", m->map.path);
	m->vocab = &m->p64.vocab;
	return Q42_OK;
}

/* How the mapping is read: the metadata once at mount, then (unless only
 * the tokenizer is wanted from a GGUF) every weight on the first forward
 * pass, roughly in file order; a P64 mount reads every blob for its CRC.
 * MADV_RANDOM would turn readahead off and cost one major fault per 4 KiB
 * page, ten times slower on a file whose pages were evicted
 * (docs/perf/loading.md), so the default readahead stays. MADV_WILLNEED starts reading the whole file
 * in the background at mount, so the I/O overlaps tokenizer and engine
 * set-up; it is skipped for files larger than half of physical memory,
 * where it would only evict what it read before. MADV_HUGEPAGE lets the
 * page cache read the file into 2 MiB folios, which then map with PMD
 * entries (FilePmdMapped in smaps) and cut faults; where the kernel or
 * file system cannot do that it refuses the advice and nothing changes.
 * None of this copies a byte: the weights stay in the read-only mapping. */
static void advise_map(const q42_mount *m, unsigned flags)
{
	const long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	const uint64_t ram = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;

#ifdef MADV_HUGEPAGE
	(void)q42_map_advise(&m->map, 0, m->map.size, MADV_HUGEPAGE);
#endif
	if ((flags & Q42_MOUNT_VOCAB_ONLY) && m->container == Q42_CONTAINER_GGUF)
		return;
	if (ram == 0 || m->map.size <= ram / 2)
		(void)q42_map_advise(&m->map, 0, m->map.size, MADV_WILLNEED);
}

/* llama.cpp adjusts a few special-token attributes by model name and
 * architecture (phi-3), so the tokenizer gets them: from the GGUF, or for a
 * P64 from its hyperparameters and its copy of the source GGUF header. */
static int open_tokenizer(q42_mount *m, q42_err *err)
{
	q42_tokenizer_opts to;
	q42_gguf meta;
	bool have_meta = false;
	int rc;

	memset(&to, 0, sizeof to);
	if (m->container == Q42_CONTAINER_GGUF) {
		q42_gguf_get_str(&m->gguf, "general.name", &to.general_name);
		q42_gguf_get_str(&m->gguf, "general.architecture", &to.general_arch);
	} else {
		if (m->has_hparams) {
			to.general_arch.p = m->hp.arch;
			to.general_arch.len = strlen(m->hp.arch);
		}
		if (m->p64.source_header != NULL &&
		    q42_gguf_parse_meta(&meta, m->p64.source_header, m->p64.source_header_len,
					m->map.path, NULL) == Q42_OK) {
			have_meta = true;
			q42_gguf_get_str(&meta, "general.name", &to.general_name);
		}
	}
	rc = q42_tokenizer_open_ex(&m->tok, m->vocab, &to, err);
	if (have_meta)
		q42_gguf_free(&meta);
	return rc;
}

int q42_mount_open(q42_mount **out, const char *path, unsigned flags, q42_err *err)
{
	q42_mount *m;
	int rc;

	*out = NULL;
	m = calloc(1, sizeof *m);
	if (m == NULL)
		return q42_err_set(err, Q42_ENOMEM, "%s: out of memory", path);
	m->map.fd = -1;
	rc = q42_map_open(&m->map, path, 0, err);
	if (rc != Q42_OK)
		goto fail;
	if (m->map.size < 4) {
		rc = q42_err_set(err, Q42_EFORMAT,
				 "%s: truncated: %llu bytes, too short for a model file (need the 4-byte magic)",
				 path, (unsigned long long)m->map.size);
		goto fail;
	}
	if (memcmp(m->map.data, Q42_P64_MAGIC, 4) == 0) {
		m->container = Q42_CONTAINER_P64;
		advise_map(m, flags);
		rc = mount_p64(m, flags, err);
	} else if (memcmp(m->map.data, Q42_GGUF_MAGIC, 4) == 0) {
		m->container = Q42_CONTAINER_GGUF;
		advise_map(m, flags);
		rc = mount_gguf(m, flags, err);
	} else {
		const uint8_t *d = m->map.data;
		rc = q42_err_set(err, Q42_EFORMAT,
				 "%s: not a model file: magic %02x %02x %02x %02x at offset 0, expected \"GGUF\" or \"p64\\0\"",
				 path, d[0], d[1], d[2], d[3]);
	}
	if (rc != Q42_OK)
		goto fail;
	rc = open_tokenizer(m, err);
	if (rc != Q42_OK) {
		q42_err_prefix(err, "%s: tokenizer", path);
		goto fail;
	}
	*out = m;
	return Q42_OK;
fail:
	q42_mount_close(m);
	return rc;
}

void q42_mount_close(q42_mount *m)
{
	if (m == NULL)
		return;
	q42_tokenizer_close(m->tok);
	if (m->container == Q42_CONTAINER_GGUF) {
		q42_vocab_free(&m->gguf_vocab);
		q42_gguf_free(&m->gguf);
	} else if (m->container == Q42_CONTAINER_P64) {
		q42_p64_close(&m->p64);
	}
	q42_map_close(&m->map);
	free(m);
}

enum q42_container q42_mount_container(const q42_mount *m)
{
	return m->container;
}

const char *q42_mount_path(const q42_mount *m)
{
	return m->map.path;
}

const q42_hparams *q42_mount_hparams(const q42_mount *m)
{
	return m->has_hparams ? &m->hp : NULL;
}

const q42_vocab *q42_mount_vocab(const q42_mount *m)
{
	return m->vocab;
}

const q42_tokenizer *q42_mount_tokenizer(const q42_mount *m)
{
	return m->tok;
}

uint64_t q42_mount_n_tensors(const q42_mount *m)
{
	return m->container == Q42_CONTAINER_P64 ? m->p64.n_tensors : m->gguf.n_tensors;
}

static void view_p64(const q42_p64_tensor *t, q42_tensor_view *tv)
{
	tv->name = t->name;
	tv->dtype = t->dtype;
	tv->n_dims = t->rank;
	for (uint32_t i = 0; i < 4; i++)
		tv->ne[i] = i < Q42_P64_MAX_RANK ? t->dims[i] : 1;
	tv->nbytes = t->nbytes;
	tv->data = t->data;
}

static void view_gguf(const q42_gguf_tensor *t, q42_tensor_view *tv)
{
	tv->name = t->name;
	tv->dtype = t->type;
	tv->n_dims = t->n_dims;
	for (uint32_t i = 0; i < 4; i++)
		tv->ne[i] = i < Q42_GGUF_MAX_DIMS ? t->ne[i] : 1;
	tv->nbytes = t->nbytes;
	tv->data = t->data;
}

bool q42_mount_tensor_at(const q42_mount *m, uint64_t i, q42_tensor_view *tv)
{
	if (i >= q42_mount_n_tensors(m))
		return false;
	if (m->container == Q42_CONTAINER_P64)
		view_p64(&m->p64.tensors[i], tv);
	else
		view_gguf(&m->gguf.tensors[i], tv);
	return true;
}

bool q42_mount_tensor(const q42_mount *m, const char *name, q42_tensor_view *tv)
{
	if (m->container == Q42_CONTAINER_P64) {
		const q42_p64_tensor *t = q42_p64_find_tensor(&m->p64, name);
		if (t == NULL)
			return false;
		view_p64(t, tv);
	} else {
		const q42_gguf_tensor *t = q42_gguf_find_tensor(&m->gguf, name);
		if (t == NULL)
			return false;
		view_gguf(t, tv);
	}
	return true;
}

int q42_mount_ident(q42_mount *m, const q42_model_ident **out, q42_err *err)
{
	uint8_t d[Q42_SHA256_LEN];
	int rc;

	if (!m->have_ident) {
		q42_model_ident *id = &m->ident;
		memset(id, 0, sizeof *id);
		id->container = m->container;
		id->size = m->map.size;
		rc = q42_sha256(m->map.data, m->map.size, d, err);
		if (rc != Q42_OK)
			return rc;
		q42_hex_encode(d, sizeof d, id->sha256);
		if (m->container == Q42_CONTAINER_P64) {
			if (m->p64.prov.source_format != 0)
				q42_hex_encode(m->p64.prov.source_sha256, Q42_SHA256_LEN,
					       id->source_sha256);
		} else {
			memcpy(id->source_sha256, id->sha256, sizeof id->sha256);
		}
		m->have_ident = true;
	}
	*out = &m->ident;
	return Q42_OK;
}

void q42_mount_release(const q42_mount *m, const uint8_t *p, uint64_t len)
{
	const uintptr_t base = (uintptr_t)m->map.data, at = (uintptr_t)p;
	if (m->map.data == NULL || at < base || at - base >= m->map.size)
		return;
	(void)q42_map_advise(&m->map, (uint64_t)(at - base), len, MADV_DONTNEED);
}
