/* q42_mount.c -- a model file opened for running: the validated source
 * (formats/q42_source.h: magic sniff, reader, tensor index -- the same
 * path p64c and p64check open files by) plus what running needs on top:
 * hyperparameters, vocabulary, tokenizer, tensor views for the engine and
 * the mapping's read-ahead advice. Must never read tensor bytes itself or
 * fall back from one container to the other.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "common/q42_file.h"
#include "engine/q42_mount.h"
#include "formats/q42_source.h"

struct q42_mount {
	q42_source src;     /* the map, its kind, and the GGUF or P64 reader */
	unsigned flags;
	bool has_hparams;
	q42_hparams hp;
	q42_vocab gguf_vocab; /* owned copy for GGUF mounts */
	const q42_vocab *vocab;
	q42_tokenizer *tok;
	bool have_ident;
	q42_model_ident ident;
};

static int mount_gguf(q42_mount *m, unsigned flags, q42_err *err)
{
	int rc = q42_hparams_from_gguf(&m->hp, &m->src.gguf, err);
	if (rc == Q42_OK) {
		m->has_hparams = true;
	} else if (!(flags & Q42_MOUNT_VOCAB_ONLY)) {
		q42_err_prefix(err, "%s", m->src.map.path);
		return rc;
	}
	rc = q42_vocab_from_gguf(&m->gguf_vocab, &m->src.gguf, err);
	if (rc != Q42_OK) {
		q42_err_prefix(err, "%s", m->src.map.path);
		return rc;
	}
	m->vocab = &m->gguf_vocab;
	return Q42_OK;
}

static int mount_p64(q42_mount *m, unsigned flags, q42_err *err)
{
	if (m->src.p64.has_hparams) {
		m->hp = m->src.p64.hparams;
		m->has_hparams = true;
	} else if (!(flags & Q42_MOUNT_VOCAB_ONLY)) {
		return q42_err_set(err, Q42_ENOTFOUND,
				   "%s: P64 has no hyperparameter section (HPAR): not a runnable model",
				   m->src.map.path);
	}
	if (!m->src.p64.has_vocab)
		return q42_err_set(err, Q42_ENOTFOUND,
				   "%s: tokenizer: P64 has no tokenizer section (Q42T)", m->src.map.path);
	m->vocab = &m->src.p64.vocab;
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
static void advise_map(const q42_map *map, uint32_t kind, void *arg)
{
	const unsigned flags = *(const unsigned *)arg;
	const long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	const uint64_t ram = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;

#ifdef MADV_HUGEPAGE
	(void)q42_map_advise(map, 0, map->size, MADV_HUGEPAGE);
#endif
	if ((flags & Q42_MOUNT_VOCAB_ONLY) && kind == Q42_SOURCE_GGUF)
		return;
	if (ram == 0 || map->size <= ram / 2)
		(void)q42_map_advise(map, 0, map->size, MADV_WILLNEED);
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
	if (m->src.kind == Q42_SOURCE_GGUF) {
		q42_gguf_get_str(&m->src.gguf, "general.name", &to.general_name);
		q42_gguf_get_str(&m->src.gguf, "general.architecture", &to.general_arch);
	} else {
		if (m->has_hparams) {
			to.general_arch.p = m->hp.arch;
			to.general_arch.len = strlen(m->hp.arch);
		}
		if (m->src.p64.source_header != NULL &&
		    q42_gguf_parse_meta(&meta, m->src.p64.source_header, m->src.p64.source_header_len,
					m->src.map.path, NULL) == Q42_OK) {
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
	m->flags = flags;
	rc = q42_source_open_ex(&m->src, path, advise_map, &m->flags, err);
	if (rc != Q42_OK)
		goto fail;
	rc = m->src.kind == Q42_SOURCE_P64 ? mount_p64(m, flags, err) : mount_gguf(m, flags, err);
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
	if (m->src.kind == Q42_SOURCE_GGUF)
		q42_vocab_free(&m->gguf_vocab);
	q42_source_close(&m->src);
	free(m);
}

uint32_t q42_mount_container(const q42_mount *m)
{
	return m->src.kind;
}

const char *q42_mount_path(const q42_mount *m)
{
	return m->src.map.path;
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
	return q42_source_tensor_count(&m->src);
}

bool q42_mount_tensor_at(const q42_mount *m, uint64_t i, q42_source_tensor *t)
{
	if (i >= q42_mount_n_tensors(m))
		return false;
	q42_source_tensor_get(&m->src, i, t);
	return true;
}

bool q42_mount_tensor(const q42_mount *m, const char *name, q42_source_tensor *t)
{
	return q42_source_find_tensor(&m->src, name, t, NULL) == Q42_OK;
}

int q42_mount_ident(q42_mount *m, const q42_model_ident **out, q42_err *err)
{
	uint8_t d[Q42_SHA256_LEN];
	int rc;

	if (!m->have_ident) {
		q42_model_ident *id = &m->ident;
		memset(id, 0, sizeof *id);
		id->container = m->src.kind;
		id->size = m->src.map.size;
		rc = q42_sha256(m->src.map.data, m->src.map.size, d, err);
		if (rc != Q42_OK)
			return rc;
		q42_hex_encode(d, sizeof d, id->sha256);
		if (m->src.kind == Q42_SOURCE_P64) {
			if (m->src.p64.prov.source_format != 0)
				q42_hex_encode(m->src.p64.prov.source_sha256, Q42_SHA256_LEN,
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
	const uintptr_t base = (uintptr_t)m->src.map.data, at = (uintptr_t)p;
	if (m->src.map.data == NULL || at < base || at - base >= m->src.map.size)
		return;
	(void)q42_map_advise(&m->src.map, (uint64_t)(at - base), len, MADV_DONTNEED);
}
