/* fuzz_p64.c -- libFuzzer harness for the P64 reader.
 *
 * Feeds arbitrary bytes to q42_p64_open (built with CRC comparisons off, see
 * q42_p64_read.c) and, when a file is accepted, touches everything it
 * exposes, so ASan/UBSan see any read the validation failed to bound.
 * Build and run: make fuzz && fuzz-build/fuzz_p64 -max_total_time=60 CORPUS/
 */
#include <stdlib.h>
#include <string.h>
#include "formats/q42_p64.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	q42_p64 p;
	q42_err err;
	/* A private copy so the reader cannot rely on anything past size. */
	uint8_t *copy = malloc(size ? size : 1);
	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	if (q42_p64_open(&p, copy, size, "fuzz", &err) == Q42_OK) {
		volatile uint64_t sink = 0;
		for (uint64_t i = 0; i < p.n_tensors; i++) {
			const q42_p64_tensor *t = &p.tensors[i];
			sink += t->name.len + (uint8_t)t->name.p[t->name.len];
			if (t->nbytes)
				sink += t->data[0] + t->data[t->nbytes - 1];
		}
		for (uint32_t i = 0; p.has_vocab && i < p.vocab.n_tokens; i++)
			sink += p.vocab.tokens[i].len;
		for (uint32_t i = 0; p.has_vocab && i < p.vocab.n_merges; i++)
			sink += p.vocab.merges[i].len;
		if (p.source_header_len)
			sink += p.source_header[p.source_header_len - 1];
		(void)sink;
		q42_p64_close(&p);
	}
	free(copy);
	return 0;
}
