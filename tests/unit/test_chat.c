/* test_chat.c -- chat templates against llama.cpp's own renderings.
 *
 * tests/golden/chat/render.jsonl holds, per case, a template (a name or a
 * template text), a chat and llama.cpp's llama_chat_apply_template output
 * (null where llama.cpp knows no template); tests/golden/chat/README says
 * how it was made. q42_chat_detect and q42_chat_render must give the same
 * bytes for every case, and Q42_CHAT_UNKNOWN where llama.cpp has none or
 * takes the text for a template q42 does not render (SmolVLM's).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "run/q42_chat.h"

static void test_golden(void **state)
{
	char path[4096];
	char line[1 << 16];
	json_error_t je;
	json_t *c;
	size_t rendered = 0, refused = 0;
	FILE *f;
	(void)state;
	snprintf(path, sizeof path, "%s/tests/golden/chat/render.jsonl",
		 getenv("Q42_SRCDIR") ? getenv("Q42_SRCDIR") : ".");
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof line, f) != NULL) {
		q42_chat_msg m[8];
		q42_buf out;
		q42_err err = {0};
		const char *tmpl, *want;
		enum q42_chat_tmpl t;
		json_t *msgs;
		c = json_loads(line, 0, &je);
		assert_non_null(c);
		tmpl = json_string_value(json_object_get(c, "template"));
		want = json_string_value(json_object_get(c, "out"));
		msgs = json_object_get(c, "messages");
		assert_true(json_array_size(msgs) <= 8);
		for (size_t i = 0; i < json_array_size(msgs); i++) {
			m[i].role = json_string_value(json_object_get(json_array_get(msgs, i), "role"));
			m[i].content = json_string_value(json_object_get(json_array_get(msgs, i), "content"));
		}
		t = q42_chat_detect(tmpl, strlen(tmpl));
		if (want == NULL || strstr(tmpl, "<end_of_utterance>") != NULL) {
			if (t != Q42_CHAT_UNKNOWN)
				fail_msg("template %.60s: q42 renders it as %s, llama.cpp %s", tmpl,
					 q42_chat_name(t), want ? "as a template q42 lacks" : "not at all");
			refused++;
			json_decref(c);
			continue;
		}
		if (t == Q42_CHAT_UNKNOWN)
			fail_msg("template %.60s: unknown to q42", tmpl);
		q42_buf_init(&out);
		assert_int_equal(q42_chat_render(t, m, json_array_size(msgs),
						 json_is_true(json_object_get(c, "add_ass")), &out, &err),
				 Q42_OK);
		if (out.len != strlen(want) || memcmp(out.data, want, out.len) != 0)
			fail_msg("template %.60s (%s):\n q42:   %.*s\n llama: %s", tmpl, q42_chat_name(t),
				 (int)out.len, (const char *)out.data, want);
		q42_buf_free(&out);
		rendered++;
		json_decref(c);
	}
	fclose(f);
	assert_true(rendered >= 180);
	assert_true(refused >= 8);
}

static void test_names(void **state)
{
	(void)state;
	for (int t = 1; t < Q42_CHAT_N_; t++) {
		const char *n = q42_chat_name((enum q42_chat_tmpl)t);
		assert_int_equal(q42_chat_detect(n, strlen(n)), t);
	}
	assert_int_equal(q42_chat_detect("lfm2", 4), Q42_CHAT_UNKNOWN);
	assert_string_equal(q42_chat_name(Q42_CHAT_UNKNOWN), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
