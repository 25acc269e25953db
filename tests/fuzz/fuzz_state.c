/* fuzz_state.c -- libFuzzer harness for the q42-state(5) reader.
 *
 * Parses the input as a state file and, when its structure holds, matches
 * it against a fixed identity (the seeds' own, so mutations of the ids
 * and counts reach the per-id checks) and reads every id and state byte
 * the view points at, so a view past the input shows up under ASan.
 */
#include <stdint.h>
#include <string.h>
#include "common/q42_le.h"
#include "run/q42_statefile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	q42_state_view v;
	q42_state_ident want;
	q42_err err;
	volatile uint8_t sink = 0;

	if (q42_state_parse(data, size, &v, &err) != Q42_OK)
		return 0;
	want = v.id;
	want.n_vocab = 512; /* stories260K, the seeds' model */
	(void)q42_state_match(&v, &want, &err);
	for (uint64_t i = 0; i < 4ull * v.n_pos; i++)
		sink ^= v.ids[i];
	for (uint64_t i = 0; i < v.n_pos * v.id.pos_bytes; i++)
		sink ^= v.state[i];
	(void)sink;
	return 0;
}
