/* fuzz_policy.c -- libFuzzer harness for the q42-policy/1 loader.
 *
 * Any input must either load (and then free cleanly) or fail with a
 * message; never crash, leak or read out of bounds.
 */
#include <stdint.h>
#include <stddef.h>
#include "governance/q42_policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	q42_policy p;
	q42_err err;
	if (q42_policy_parse(&p, data, size, "fuzz", &err) == Q42_OK) {
		(void)q42_policy_intent(&p, p.default_intent);
		q42_policy_free(&p);
	}
	return 0;
}
