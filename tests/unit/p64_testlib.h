/* p64_testlib.h -- helpers shared by the P64 unit tests.
 *
 * A tiny GGUF builder (so tests can make inputs the shared models do not
 * cover), compile/open wrappers, a CRC fixer that re-seals a P64 after a
 * test edited a field (so the check behind the CRC is what fails), and the
 * shared-model lookup that skips locally and fails under CI=true.
 */
#ifndef P64_TESTLIB_H
#define P64_TESTLIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/q42_buf.h"
#include "formats/q42_gguf.h"
#include "formats/q42_p64.h"

/* ---- GGUF builder: call kv_* then tensor_*, then gguf_finish. */
typedef struct tgguf {
	q42_buf kv;
	q42_buf info;
	q42_buf data;
	uint64_t n_kv, n_tensors;
	uint8_t pad_byte; /* what fills alignment padding (0 for a normal file) */
} tgguf;

void tg_init(tgguf *t);
void tg_str(tgguf *t, const char *key, const char *v);
void tg_u32(tgguf *t, const char *key, uint32_t v);
void tg_f32(tgguf *t, const char *key, float v);
void tg_bool(tgguf *t, const char *key, bool v);
void tg_arr_str(tgguf *t, const char *key, const char *const *v, uint64_t n);
void tg_arr_f32(tgguf *t, const char *key, const float *v, uint64_t n);
void tg_arr_i32(tgguf *t, const char *key, const int32_t *v, uint64_t n);
/* Append a tensor; data is nbytes long (for an unknown type, whatever the
 * test wants as its bytes). */
void tg_tensor(tgguf *t, const char *name, uint32_t n_dims, const uint64_t *ne, uint32_t type,
	       const void *data, uint64_t nbytes);
/* The finished file (malloc'ed, *n bytes); trailing adds bytes after data. */
uint8_t *tg_finish(tgguf *t, size_t *n, const uint8_t *trailing, size_t n_trailing);

/* The small synthetic model used by hostile and flip tests: llama, one
 * layer, a tokenizer, f32/f16 tensors, an unknown-role tensor and a
 * trailing tensor of unknown dtype. */
uint8_t *tg_synthetic(size_t *n);

/* ---- Compile and read */
/* GGUF bytes -> P64 bytes (malloc'ed). seekable selects a temp file or a
 * pipe as output. Returns the rc of q42_p64_write. */
int t_compile(const uint8_t *gguf, size_t n, uint32_t page_log2, bool seekable, uint8_t **out,
	      size_t *outn, q42_err *err);
/* P64 -> GGUF bytes via q42_p64_to_gguf. */
int t_rebuild(const q42_p64 *p, uint8_t **out, size_t *outn, q42_err *err);

/* Recompute every CRC of a P64 image in place, in dependency order (blobs,
 * sections, table, metadata, header), tolerating out-of-range fields. */
void t_reseal(uint8_t *d, size_t n);

/* Whole file into memory (malloc'ed); false when it cannot be read. */
bool t_read_file(const char *path, uint8_t **data, size_t *n);

/* Directory named by env var, or NULL when unset or missing. */
const char *t_shared_dir(const char *env);
bool t_ci(void);
/* In a cmocka test: set var to the directory, or skip (fail when CI=true). */
#define T_NEED_DIR(var, env)                                                          \
	do {                                                                          \
		(var) = t_shared_dir(env);                                            \
		if ((var) == NULL) {                                                  \
			if (t_ci())                                                   \
				fail_msg("%s is missing and CI=true", env);           \
			skip();                                                       \
		}                                                                     \
	} while (0)
/* Sorted list of *.gguf paths in dir (malloc'ed, NULL-terminated). */
char **t_list_gguf(const char *dir);
void t_free_list(char **l);

#endif
