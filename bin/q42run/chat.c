/* chat.c -- --chat, --system and --chat-template: each request's prompt
 * rendered as the user's turn (after the system text) with the model's
 * chat template, as llama.cpp renders its built-in templates
 * (run/q42_chat.h). The template is --chat-template's, else the one the
 * model's tokenizer.chat_template names; one q42 does not render is a
 * warning (the prompt goes as it is), an error under --strict.
 */
#include <stdlib.h>
#include <string.h>
#include "bin/q42run/q42run.h"
#include "formats/q42_source.h"

int chat_open(const struct opts *o, struct chat *c)
{
	q42_source src = {0};
	const q42_gguf *meta;
	q42_str s = {0};
	q42_err err = {0};
	const char *from = "--chat-template";

	memset(c, 0, sizeof *c);
	q42_buf_init(&c->text);
	q42_buf_init(&c->user);
	if (!o->chat)
		return EXIT_OK;
	c->on = true;
	if (o->chat_template != NULL) {
		c->t = q42_chat_detect(o->chat_template, strlen(o->chat_template));
	} else if (strcmp(o->model, "-") == 0) {
		from = "a model read from standard input (name its template with --chat-template)";
	} else {
		from = "the model's tokenizer.chat_template";
		if (q42_source_open(&src, o->model, &err) == Q42_OK && q42_source_meta(&src, &meta, &err) == Q42_OK &&
		    q42_gguf_get_str(meta, "tokenizer.chat_template", &s))
			c->t = q42_chat_detect(s.p, (size_t)s.len);
		else if (s.p == NULL)
			from = "the model (it names no tokenizer.chat_template)";
		q42_source_close(&src);
	}
	if (c->t == Q42_CHAT_UNKNOWN) {
		fprintf(stderr, "q42run: %s%s: no chat template q42 renders (q42run(1), CHAT TEMPLATES)%s\n",
			o->strict ? "--strict: " : "warning: ", from, o->strict ? "" : "; the prompt goes as it is");
		if (o->strict)
			return EXIT_USAGE;
		c->on = false;
	}
	return EXIT_OK;
}

void chat_close(struct chat *c)
{
	q42_buf_free(&c->text);
	q42_buf_free(&c->user);
}

int chat_prompt(const struct opts *o, struct chat *c, const char **p, size_t *n)
{
	q42_chat_msg m[2];
	size_t k = 0;
	q42_err err = {0};

	if (!c->on)
		return EXIT_OK;
	q42_buf_reset(&c->user);
	q42_buf_reset(&c->text);
	q42_buf_append(&c->user, *p, *n);
	q42_buf_append(&c->user, "", 1);
	if (memchr(*p, '\0', *n) != NULL) {
		fputs("q42run: --chat: the prompt holds a NUL byte\n", stderr);
		return EXIT_REQUEST;
	}
	if (o->system != NULL)
		m[k++] = (q42_chat_msg){"system", o->system};
	m[k++] = (q42_chat_msg){"user", c->user.failed ? "" : (const char *)c->user.data};
	if (c->user.failed || q42_chat_render(c->t, m, k, true, &c->text, &err) != Q42_OK) {
		fprintf(stderr, "q42run: --chat: %s\n", c->user.failed ? "out of memory" : err.msg);
		return EXIT_NOMEM;
	}
	*p = c->text.data ? (const char *)c->text.data : "";
	*n = c->text.len;
	return EXIT_OK;
}
