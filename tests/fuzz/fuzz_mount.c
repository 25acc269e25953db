/* fuzz_mount.c -- libFuzzer harness for the model mount: a model's
 * metadata and tensor descriptors mutated, then q42run's whole open path
 * (mount: container, hyperparameters, tokenizer; engine: architecture
 * binding, shape checks, the memory plan, allocation) and one evaluated
 * token.
 *
 * The input is a GGUF's bytes up to its tensor data (header, metadata,
 * descriptors, padding) and one byte more that picks a base model; the
 * harness appends that model's tensor data, so the descriptors point into
 * real weights and a small input still is a whole model. The bases are
 * the small test models tests/tools/hostile_models.py mutates (the seeds
 * are their own headers, written by its --dump-headers). Each model is
 * written to a private temporary file, since a mount takes a path; the
 * base's data only when its place in the file moves (fuzz_file.h).
 * Engines are opened on one thread with a 32-position context and at most
 * 256 MiB, so a valid but huge model is refused, not allocated. The bases
 * are read from $Q42_SRCDIR/tests/models (what `make check` exports), else
 * from the source tree the harness was built from.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/q42_engine.h"
#include "engine/q42_mount.h"
#include "formats/q42_gguf.h"
#include "fuzz_file.h"

#ifndef Q42_FUZZ_SRCDIR
#define Q42_FUZZ_SRCDIR "."
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the order of hostile_models.py's BASES, which --dump-headers numbers */
static const char *const bases[] = {
	"e256-llama-q8_0.gguf", "e256-qwen2-q8_0.gguf", "a64-qwen3-hd24-q8_0.gguf",
	"a64-gemma3-swa-q8_0.gguf", "a64-phi3-short-f32.gguf", "a64-lfm2-q8_0.gguf",
	"a64-lfm2moe-e8k2-q4_0.gguf",
};
#define N_BASES (sizeof bases / sizeof bases[0])

static struct {
	uint8_t *data; /* the tensor data area */
	size_t len;
} blobs[N_BASES];
static char path[4200];

static void load(size_t i)
{
	char p[4096];
	const char *src = getenv("Q42_SRCDIR");
	snprintf(p, sizeof p, "%s/tests/models/%s", src != NULL && *src ? src : Q42_FUZZ_SRCDIR,
		 bases[i]);
	FILE *f = fopen(p, "rb");
	uint8_t *buf = NULL;
	long n = f && fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
	q42_gguf g;
	q42_err err;

	if (n <= 0 || fseek(f, 0, SEEK_SET) != 0 || (buf = malloc((size_t)n)) == NULL ||
	    fread(buf, 1, (size_t)n, f) != (size_t)n ||
	    q42_gguf_parse(&g, buf, (uint64_t)n, p, &err) != Q42_OK) {
		fprintf(stderr, "fuzz_mount: cannot read %s\n", p);
		exit(1);
	}
	fclose(f);
	blobs[i].len = (size_t)((uint64_t)n - g.data_offset);
	blobs[i].data = malloc(blobs[i].len);
	if (blobs[i].data == NULL)
		exit(1);
	memcpy(blobs[i].data, buf + g.data_offset, blobs[i].len);
	q42_gguf_free(&g);
	free(buf);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	for (size_t i = 0; i < N_BASES; i++)
		load(i);
	fuzz_file_init("fuzz_mount", "model.gguf", path, sizeof path);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char prompt[] = "Once upon";
	q42_mount *m = NULL;
	q42_engine *e = NULL;
	q42_err err;
	q42_tokens tk = {0};
	q42_engine_opts o = {.n_threads = 1, .n_ctx = 32, .n_batch = 8,
			     .arith = Q42_ARITH_AUTO, .max_memory = 256u << 20};
	q42_engine_mem mem;
	const q42_tokenizer *t;

	if (size < 2)
		return 0;
	const size_t hdr = size - 1, b = data[size - 1] % N_BASES;
	if (!fuzz_file_write2(data, hdr, blobs[b].data, blobs[b].len) ||
	    q42_mount_open(&m, path, 0, &err) != Q42_OK)
		return 0;
	t = q42_mount_tokenizer(m);
	if (q42_engine_memory(m, &o, &mem, &err) == Q42_OK &&
	    q42_engine_open(&e, m, &o, &err) == Q42_OK && t != NULL &&
	    q42_tokenizer_encode(t, prompt, sizeof prompt - 1, Q42_TOKENIZE_ADD_SPECIAL, &tk, &err) ==
		    Q42_OK &&
	    tk.n > 0) {
		const uint32_t n = tk.n > 8 ? 8 : (uint32_t)tk.n;
		if (q42_engine_eval(e, tk.ids, n, &err) == Q42_OK) {
			/* the logits are read, as sampling would */
			const float *l = q42_engine_logits(e);
			volatile float sink = l[q42_engine_n_vocab(e) - 1];
			(void)sink;
		}
	}
	q42_tokens_free(&tk);
	q42_engine_close(e);
	q42_mount_close(m);
	return 0;
}
