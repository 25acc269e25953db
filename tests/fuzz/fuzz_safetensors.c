/* fuzz_safetensors.c -- libFuzzer harness for the Safetensors header reader.
 *
 * The input is a whole Safetensors file held in memory: the 8-byte header
 * length, the JSON header, the data. Every tensor range the parser accepts
 * is then read at both ends, so a range it let past the file shows up
 * under ASan.
 */
#include <stdint.h>
#include <stddef.h>
#include "formats/q42_safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	q42_st_file f;
	q42_err err;
	uint64_t len;
	volatile uint8_t sink = 0;

	if (size < 8 || q42_st_header_len(data, size, "fuzz", &len, &err) != Q42_OK)
		return 0;
	if (q42_st_header_parse(&f, data + 8, len, size, "fuzz", &err) != Q42_OK)
		return 0;
	for (uint64_t i = 0; i < f.n_tensors; i++) {
		const q42_st_tensor *t = &f.tensors[i];
		sink ^= (uint8_t)t->name[0];
		sink ^= (uint8_t)q42_st_dtype_name(t->dtype)[0];
		if (t->end > t->begin) {
			sink ^= data[f.data_start + t->begin];
			sink ^= data[f.data_start + t->end - 1];
		}
	}
	(void)sink;
	q42_st_file_free(&f);
	return 0;
}
