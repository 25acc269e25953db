/* fuzz_gguf.c -- libFuzzer harness for the GGUF reader.
 *
 * Runs the whole read path a program takes on an untrusted file: parse,
 * then the hyperparameter and vocabulary extraction, then touches every
 * exposed view so a bound the parser forgot shows up under ASan.
 */
#include <stdint.h>
#include <stddef.h>
#include "formats/q42_gguf.h"
#include "formats/q42_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	q42_gguf g;
	q42_err err;
	q42_hparams hp;
	q42_vocab v;
	volatile uint8_t sink = 0;

	if (q42_gguf_parse(&g, data, size, "fuzz", &err) != Q42_OK)
		return 0;
	for (uint64_t i = 0; i < g.n_kv; i++) {
		const q42_gguf_kv *kv = &g.kv[i];
		q42_str s;
		for (uint64_t j = 0; kv->arr_type == Q42_GGUF_STRING && j < kv->count; j++)
			if (q42_gguf_arr_str(&g, kv, j, &s) && s.len)
				sink ^= (uint8_t)s.p[s.len - 1];
	}
	for (uint64_t i = 0; i < g.n_tensors; i++)
		if (g.tensors[i].nbytes)
			sink ^= g.tensors[i].data[g.tensors[i].nbytes - 1];
	(void)q42_hparams_from_gguf(&hp, &g, &err);
	if (q42_vocab_from_gguf(&v, &g, &err) == Q42_OK)
		q42_vocab_free(&v);
	(void)sink;
	q42_gguf_free(&g);
	return 0;
}
