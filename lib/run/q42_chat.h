/* q42_chat.h -- chat templates: a system text and a user prompt (or any
 * list of messages) rendered as llama.cpp's llama_chat_apply_template
 * renders them for its built-in templates, and the template a model's
 * tokenizer.chat_template names, found by the same rules llama.cpp
 * applies (a template's name, else marker strings in its text).
 *
 * Only the built-in templates listed in q42run(1), CHAT TEMPLATES, are
 * rendered; a template llama.cpp would take for one of its others, or
 * not at all, is Q42_CHAT_UNKNOWN. Tested against llama.cpp's own
 * renderings (tests/golden/chat). Nothing here prints.
 */
#ifndef Q42_CHAT_H
#define Q42_CHAT_H

#include <stdbool.h>
#include <stddef.h>
#include "common/q42_buf.h"
#include "common/q42_err.h"

enum q42_chat_tmpl {
	Q42_CHAT_UNKNOWN = 0,
	Q42_CHAT_CHATML, Q42_CHAT_LLAMA2, Q42_CHAT_LLAMA2_SYS, Q42_CHAT_LLAMA2_SYS_BOS,
	Q42_CHAT_LLAMA2_SYS_STRIP, Q42_CHAT_MISTRAL_V1, Q42_CHAT_MISTRAL_V3,
	Q42_CHAT_MISTRAL_V3_TEKKEN, Q42_CHAT_MISTRAL_V7, Q42_CHAT_MISTRAL_V7_TEKKEN,
	Q42_CHAT_PHI3, Q42_CHAT_PHI4, Q42_CHAT_FALCON3, Q42_CHAT_ZEPHYR, Q42_CHAT_MONARCH,
	Q42_CHAT_GEMMA, Q42_CHAT_ORION, Q42_CHAT_OPENCHAT, Q42_CHAT_VICUNA, Q42_CHAT_VICUNA_ORCA,
	Q42_CHAT_DEEPSEEK, Q42_CHAT_COMMAND_R, Q42_CHAT_LLAMA3, Q42_CHAT_CHATGLM3,
	Q42_CHAT_CHATGLM4, Q42_CHAT_GLMEDGE,
	Q42_CHAT_N_
};

typedef struct q42_chat_msg {
	const char *role;     /* "system", "user", "assistant" */
	const char *content;
} q42_chat_msg;

/* llama.cpp's name of t ("chatml", "llama3", ...; "unknown"). */
Q42_API const char *q42_chat_name(enum q42_chat_tmpl t);
/* The template of a name or of a template text (tokenizer.chat_template),
 * n bytes at s, by llama.cpp's rules. */
Q42_API enum q42_chat_tmpl q42_chat_detect(const char *s, size_t n);

/* Render msgs with t into out (appended), then the opening of the
 * assistant's turn when add_assistant. Q42_EARG for Q42_CHAT_UNKNOWN,
 * Q42_ENOMEM. */
Q42_API int q42_chat_render(enum q42_chat_tmpl t, const q42_chat_msg *msgs, size_t n, bool add_assistant,
		    q42_buf *out, q42_err *err);

#endif
