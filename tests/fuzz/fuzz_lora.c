/* fuzz_lora.c -- libFuzzer harness for the LoRA adapter reader.
 *
 * The input is an adapter file (GGUF, or a P64 the reader's source layer
 * also maps); it is written to a private temporary file (the reader takes
 * a path) and opened. Every pair is then checked against the base shape
 * its own tensors imply and, when that fits and is small, merged into a
 * zeroed base, so hostile shapes, types and alphas reach the arithmetic.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/q42_lora.h"
#include "fuzz_file.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* elements of a base merged into: a merge's checks and arithmetic are
 * the same for any size, and at 2^16 merging took two thirds of each
 * run's time */
#define MERGE_MAX (1u << 12)

static char path[4200];
static float w[MERGE_MAX];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_file_init("fuzz_lora", "adapter.gguf", path, sizeof path);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	q42_lora *l;
	q42_err err;

	if (!fuzz_file_write(data, size))
		return 0;
	if (q42_lora_open(&l, path, &err) != Q42_OK)
		return 0;
	(void)q42_lora_arch(l);
	(void)q42_lora_sha256(l);
	for (uint64_t i = 0; i < q42_lora_n_pairs(l); i++) {
		const q42_lora_pair *p = q42_lora_pair_at(l, i);
		bool embd = q42_lora_pair_is_embd(p);
		uint64_t n_in = embd ? p->b.dims[1] : p->a.dims[0];
		uint64_t n_out = embd ? p->a.dims[1] : p->b.dims[1];
		(void)q42_lora_pair_scale(l, p, 1.0f);
		if (q42_lora_find(l, "blk.0.attn_q.weight") == p)
			(void)q42_lora_pair_check(l, p, 7, 3, &err);
		if (q42_lora_pair_check(l, p, n_in, n_out, &err) != Q42_OK || n_in == 0 ||
		    n_out > MERGE_MAX / n_in)
			continue;
		memset(w, 0, n_in * n_out * sizeof w[0]);
		(void)q42_lora_merge(l, p, 0.5f, w, n_in, n_out, &err);
	}
	q42_lora_close(l);
	return 0;
}
