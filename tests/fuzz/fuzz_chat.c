/* fuzz_chat.c -- libFuzzer harness for chat templates.
 *
 * The input is NUL-separated fields: a template text (as a model's
 * tokenizer.chat_template would carry it; detected by llama.cpp's rules),
 * then message contents whose roles cycle system, user, assistant, with
 * hostile contents (markers of the templates themselves, invalid UTF-8).
 * Templates the text does not name are rendered too, picked by the last
 * byte, so every built-in template renders every content.
 */
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <stdlib.h>
#include "run/q42_chat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_MSGS 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const roles[] = {"system", "user", "assistant", "user"};
	q42_chat_msg msgs[MAX_MSGS];
	char *copy, *p, *end;
	size_t n = 0;
	q42_buf out;
	q42_err err;
	enum q42_chat_tmpl t;

	if (size == 0)
		return 0;
	copy = malloc(size + 1);
	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	end = copy + size;
	/* the template text: up to the first NUL */
	t = q42_chat_detect(copy, strlen(copy));
	(void)q42_chat_name(t);
	p = copy + strlen(copy) + 1;
	while (p < end && n < MAX_MSGS) {
		msgs[n].role = roles[n % 4];
		msgs[n].content = p;
		n++;
		p += strlen(p) + 1;
	}
	q42_buf_init(&out);
	if (t != Q42_CHAT_UNKNOWN)
		(void)q42_chat_render(t, msgs, n, true, &out, &err);
	q42_buf_reset(&out);
	t = (enum q42_chat_tmpl)(1 + data[size - 1] % (Q42_CHAT_N_ - 1));
	(void)q42_chat_render(t, msgs, n, (data[size - 1] & 0x80) != 0, &out, &err);
	q42_buf_free(&out);
	free(copy);
	return 0;
}
