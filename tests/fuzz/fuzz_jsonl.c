/* fuzz_jsonl.c -- libFuzzer harness for q42run's --jsonl requests
 * (run/q42_jsonl.h): the input split into lines as q42run splits it, each
 * line parsed, every prompt it holds built, and each decision's options
 * made (kinds, options, score ranges; q42_decision_options' checks).
 */
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include "run/q42_jsonl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *end = s + size;
	q42_buf text, store;
	q42_err err;

	q42_buf_init(&text);
	q42_buf_init(&store);
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
		q42_jsonl_req *r;
		if (q42_jsonl_parse(&r, s, len, &err) == Q42_OK) {
			for (size_t i = 0; i < q42_jsonl_count(r); i++) {
				q42_choice *ch = NULL;
				uint32_t n = 0;
				enum q42_decision_kind k;
				(void)q42_jsonl_prompt(r, i, &text, &err);
				if (q42_jsonl_has_decision(r, i) &&
				    q42_jsonl_decision(r, i, &store, &ch, &n, &k, &err) == Q42_OK)
					q42_choices_free(ch, n);
			}
			q42_jsonl_free(r);
		}
		s += len + (nl != NULL);
	}
	q42_buf_free(&text);
	q42_buf_free(&store);
	return 0;
}
