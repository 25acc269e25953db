/* chat_oracle.c -- renders chats with llama.cpp's own
 * llama_chat_apply_template (libllama of node-llama-cpp, llama.cpp
 * v0.4.0) for tests/tools/gen_chat_golden.py: one JSON object a line in,
 * {"template": T, "messages": [{"role": R, "content": C}...], "add_ass": B},
 * the same object with "out" (the rendering, or null where llama.cpp
 * refuses the template) out.
 *
 * A golden-data generator only: never built by the project's build, never
 * run by `make check`, never linked into libq42. Build command:
 * tests/golden/chat/README.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "llama.h"

int main(void)
{
	char line[1 << 16];
	while (fgets(line, sizeof line, stdin) != NULL) {
		json_error_t je;
		json_t *o = json_loads(line, 0, &je), *msgs;
		llama_chat_message m[16];
		size_t n;
		int32_t r;
		char *buf;
		if (o == NULL) {
			fprintf(stderr, "chat_oracle: %s\n", je.text);
			return 1;
		}
		msgs = json_object_get(o, "messages");
		n = json_array_size(msgs);
		if (n > 16)
			return 1;
		for (size_t i = 0; i < n; i++) {
			m[i].role = json_string_value(json_object_get(json_array_get(msgs, i), "role"));
			m[i].content = json_string_value(json_object_get(json_array_get(msgs, i), "content"));
		}
		r = llama_chat_apply_template(json_string_value(json_object_get(o, "template")), m, n,
					      json_is_true(json_object_get(o, "add_ass")), NULL, 0);
		if (r < 0) {
			json_object_set_new(o, "out", json_null());
		} else {
			buf = malloc((size_t)r + 1);
			llama_chat_apply_template(json_string_value(json_object_get(o, "template")), m, n,
						  json_is_true(json_object_get(o, "add_ass")), buf, r + 1);
			json_object_set_new(o, "out", json_stringn(buf, (size_t)r));
			free(buf);
		}
		char *s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
		puts(s);
		free(s);
		json_decref(o);
	}
	return 0;
}
