/* fuzz_stmodel.c -- libFuzzer harness for a Safetensors model given as one
 * file: a .safetensors file, or an archive (tar, zip, ... through
 * libarchive) holding the weights, config.json, tokenizer.json and the
 * shard index, as p64c reads one.
 *
 * Both passes run: the open (headers, index, members) and the stream of
 * every tensor with the source digest; the JSON members found are parsed
 * as p64c parses them. Each input is written to a file in a private
 * temporary folder under $TMPDIR, since the reader takes a path.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "formats/q42_hf.h"
#include "formats/q42_safetensors.h"
#include "fuzz_file.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[4200];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_file_init("fuzz_stmodel", "model", path, sizeof path);
	return 0;
}

static int touch(void *ctx, uint32_t file, uint64_t tensor, const uint8_t *data, q42_err *err)
{
	const q42_st_model *m = ctx;
	const q42_st_tensor *t = &m->files[file].tensors[tensor];
	volatile uint8_t sink;

	(void)err;
	if (t->end > t->begin)
		sink = data[t->end - t->begin - 1];
	(void)sink;
	return Q42_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	q42_st_model m;
	q42_err err;
	uint8_t sha[32];
	uint64_t n;

	if (!fuzz_file_write(data, size))
		return 0;
	if (q42_st_model_open(&m, path, &err) == Q42_OK) {
		q42_hf_config c;
		if (m.config.data &&
		    q42_hf_config_parse(&c, m.config.data, m.config.len, &err) == Q42_OK &&
		    m.tokenizer.data) {
			q42_hf_vocab v;
			if (q42_hf_vocab_parse(&v, m.tokenizer.data, m.tokenizer.len,
					       m.tokenizer_config.data, m.tokenizer_config.len, &c,
					       &err) == Q42_OK)
				q42_hf_vocab_free(&v);
		}
		(void)q42_st_model_stream(&m, touch, &m, sha, &n, &err);
	}
	q42_st_model_close(&m);
	return 0;
}
