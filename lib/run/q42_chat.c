/* q42_chat.c -- chat templates as llama.cpp's llama_chat_apply_template
 * renders its built-in ones (see q42_chat.h). Each rendering below states
 * llama.cpp's output for that template as facts read from its
 * src/llama-chat.cpp (v0.4.0): the text around each message, where
 * contents are trimmed of ASCII white space, where a system text goes
 * when the template has no system turn. The detection keeps llama.cpp's
 * order of checks exactly, including those that lead to templates q42
 * does not render (they give Q42_CHAT_UNKNOWN), so that a template text
 * is never taken for another one than llama.cpp takes it for.
 */
#include <ctype.h>
#include <string.h>
#include "run/q42_chat.h"

static const char *const names[Q42_CHAT_N_] = {
	[Q42_CHAT_UNKNOWN] = "unknown", [Q42_CHAT_CHATML] = "chatml", [Q42_CHAT_LLAMA2] = "llama2",
	[Q42_CHAT_LLAMA2_SYS] = "llama2-sys", [Q42_CHAT_LLAMA2_SYS_BOS] = "llama2-sys-bos",
	[Q42_CHAT_LLAMA2_SYS_STRIP] = "llama2-sys-strip", [Q42_CHAT_MISTRAL_V1] = "mistral-v1",
	[Q42_CHAT_MISTRAL_V3] = "mistral-v3", [Q42_CHAT_MISTRAL_V3_TEKKEN] = "mistral-v3-tekken",
	[Q42_CHAT_MISTRAL_V7] = "mistral-v7", [Q42_CHAT_MISTRAL_V7_TEKKEN] = "mistral-v7-tekken",
	[Q42_CHAT_PHI3] = "phi3", [Q42_CHAT_PHI4] = "phi4", [Q42_CHAT_FALCON3] = "falcon3",
	[Q42_CHAT_ZEPHYR] = "zephyr", [Q42_CHAT_MONARCH] = "monarch", [Q42_CHAT_GEMMA] = "gemma",
	[Q42_CHAT_ORION] = "orion", [Q42_CHAT_OPENCHAT] = "openchat", [Q42_CHAT_VICUNA] = "vicuna",
	[Q42_CHAT_VICUNA_ORCA] = "vicuna-orca", [Q42_CHAT_DEEPSEEK] = "deepseek",
	[Q42_CHAT_COMMAND_R] = "command-r", [Q42_CHAT_LLAMA3] = "llama3", [Q42_CHAT_CHATGLM3] = "chatglm3",
	[Q42_CHAT_CHATGLM4] = "chatglm4", [Q42_CHAT_GLMEDGE] = "glmedge",
};

const char *q42_chat_name(enum q42_chat_tmpl t)
{
	return (unsigned)t < Q42_CHAT_N_ ? names[t] : names[0];
}

/* Whether the n bytes at s hold the string k. */
static bool has(const char *s, size_t n, const char *k)
{
	return memmem(s, n, k, strlen(k)) != NULL;
}

enum q42_chat_tmpl q42_chat_detect(const char *s, size_t n)
{
	for (int t = 1; t < Q42_CHAT_N_; t++)
		if (strlen(names[t]) == n && memcmp(names[t], s, n) == 0)
			return (enum q42_chat_tmpl)t;
	if (has(s, n, "<|im_start|>")) {
		if (has(s, n, "<|im_sep|>"))
			return Q42_CHAT_PHI4;
		return has(s, n, "<end_of_utterance>") ? Q42_CHAT_UNKNOWN : Q42_CHAT_CHATML;
	}
	if ((n >= 7 && memcmp(s, "mistral", 7) == 0) || has(s, n, "[INST]")) {
		if (has(s, n, "[SYSTEM_PROMPT]"))
			return Q42_CHAT_MISTRAL_V7;
		if (has(s, n, "' [INST] ' + system_message") || has(s, n, "[AVAILABLE_TOOLS]")) {
			if (has(s, n, " [INST]"))
				return Q42_CHAT_MISTRAL_V1;
			return has(s, n, "\"[INST]\"") ? Q42_CHAT_MISTRAL_V3_TEKKEN : Q42_CHAT_MISTRAL_V3;
		}
		if (has(s, n, "content.strip()"))
			return Q42_CHAT_LLAMA2_SYS_STRIP;
		if (has(s, n, "bos_token + '[INST]"))
			return Q42_CHAT_LLAMA2_SYS_BOS;
		return has(s, n, "<<SYS>>") ? Q42_CHAT_LLAMA2_SYS : Q42_CHAT_LLAMA2;
	}
	if (has(s, n, "<|assistant|>") && has(s, n, "<|end|>"))
		return Q42_CHAT_PHI3;
	if (has(s, n, "[gMASK]<sop>"))
		return Q42_CHAT_CHATGLM4;
	if (has(s, n, "<|assistant|>") && has(s, n, "<|user|>")) {
		if (has(s, n, "<|tool_declare|>"))
			return Q42_CHAT_UNKNOWN; /* exaone-moe */
		return has(s, n, "</s>") ? Q42_CHAT_FALCON3 : Q42_CHAT_GLMEDGE;
	}
	if (has(s, n, "<|{{ item['role'] }}|>") && has(s, n, "<|begin_of_image|>"))
		return Q42_CHAT_GLMEDGE;
	if (has(s, n, "<|user|>") && has(s, n, "<|endoftext|>"))
		return Q42_CHAT_ZEPHYR;
	if (has(s, n, "bos_token + message['role']"))
		return Q42_CHAT_MONARCH;
	if (has(s, n, "<start_of_turn>"))
		return Q42_CHAT_GEMMA;
	if (has(s, n, "'\\n\\nAssistant: ' + eos_token"))
		return Q42_CHAT_ORION;
	if (has(s, n, "GPT4 Correct "))
		return Q42_CHAT_OPENCHAT;
	if (has(s, n, "USER: ") && has(s, n, "ASSISTANT: "))
		return has(s, n, "SYSTEM: ") ? Q42_CHAT_VICUNA_ORCA : Q42_CHAT_VICUNA;
	if (has(s, n, "### Instruction:") && has(s, n, "<|EOT|>"))
		return Q42_CHAT_DEEPSEEK;
	if (has(s, n, "<|START_OF_TURN_TOKEN|>") && has(s, n, "<|USER_TOKEN|>"))
		return Q42_CHAT_COMMAND_R;
	if (has(s, n, "<|start_header_id|>") && has(s, n, "<|end_header_id|>"))
		return Q42_CHAT_LLAMA3;
	if (has(s, n, "[gMASK]sop"))
		return Q42_CHAT_CHATGLM3;
	/* llama.cpp's later checks lead only to templates q42 does not render */
	return Q42_CHAT_UNKNOWN;
}

static void put(q42_buf *b, const char *s)
{
	q42_buf_append(b, s, strlen(s));
}

/* s without leading and trailing white space (isspace, as llama.cpp's
 * trim), appended. */
static void put_trim(q42_buf *b, const char *s)
{
	size_t i = 0, j = strlen(s);
	while (i < j && isspace((unsigned char)s[i]))
		i++;
	while (j > i && isspace((unsigned char)s[j - 1]))
		j--;
	q42_buf_append(b, s + i, j - i);
}

static bool is(const q42_chat_msg *m, const char *role)
{
	return strcmp(m->role, role) == 0;
}

/* The llama2 family and the mistral v1/v3 ones: turns opened by [INST]. */
static void render_inst(enum q42_chat_tmpl t, const q42_chat_msg *m, size_t n, q42_buf *b)
{
	const bool mistral = t == Q42_CHAT_MISTRAL_V1 || t == Q42_CHAT_MISTRAL_V3 ||
			     t == Q42_CHAT_MISTRAL_V3_TEKKEN;
	if (mistral) {
		const char *lead = t == Q42_CHAT_MISTRAL_V1 ? " " : "";
		const char *trail = t == Q42_CHAT_MISTRAL_V3_TEKKEN ? "" : " ";
		bool open = false;
		for (size_t i = 0; i < n; i++) {
			if (!open) {
				put(b, lead);
				put(b, "[INST]");
				put(b, trail);
				open = true;
			}
			if (is(&m[i], "system")) {
				put(b, m[i].content);
				put(b, "\n\n");
			} else if (is(&m[i], "user")) {
				put(b, m[i].content);
				put(b, lead);
				put(b, "[/INST]");
			} else {
				put(b, trail);
				if (t == Q42_CHAT_MISTRAL_V3)
					put_trim(b, m[i].content);
				else
					put(b, m[i].content);
				put(b, "</s>");
				open = false;
			}
		}
		return;
	}
	bool open = true; /* the first [INST] is written before any message */
	put(b, "[INST] ");
	for (size_t i = 0; i < n; i++) {
		if (!open) {
			put(b, t == Q42_CHAT_LLAMA2_SYS_BOS ? "<s>[INST] " : "[INST] ");
			open = true;
		}
		if (is(&m[i], "system") && t != Q42_CHAT_LLAMA2)
			put(b, "<<SYS>>\n");
		if (t == Q42_CHAT_LLAMA2_SYS_STRIP)
			put_trim(b, m[i].content);
		else
			put(b, m[i].content);
		if (is(&m[i], "system")) {
			/* plain llama2 has no system turn: the text goes first, on a line */
			put(b, t == Q42_CHAT_LLAMA2 ? "\n" : "\n<</SYS>>\n\n");
		} else if (is(&m[i], "user")) {
			put(b, " [/INST]");
		} else {
			put(b, "</s>");
			open = false;
		}
	}
}

/* Templates of one shape: each message as before + role + mid +
 * content + after, then the assistant's opening. */
static void render_simple(const q42_chat_msg *m, size_t n, bool add_ass, const char *before,
			  const char *mid, const char *after, const char *ass, q42_buf *b)
{
	for (size_t i = 0; i < n; i++) {
		put(b, before);
		put(b, m[i].role);
		put(b, mid);
		put(b, m[i].content);
		put(b, after);
	}
	if (add_ass)
		put(b, ass);
}

int q42_chat_render(enum q42_chat_tmpl t, const q42_chat_msg *m, size_t n, bool add_ass,
		    q42_buf *b, q42_err *err)
{
	switch (t) {
	case Q42_CHAT_CHATML:
		render_simple(m, n, add_ass, "<|im_start|>", "\n", "<|im_end|>\n", "<|im_start|>assistant\n", b);
		break;
	case Q42_CHAT_PHI3:
		render_simple(m, n, add_ass, "<|", "|>\n", "<|end|>\n", "<|assistant|>\n", b);
		break;
	case Q42_CHAT_PHI4:
		render_simple(m, n, add_ass, "<|im_start|>", "<|im_sep|>", "<|im_end|>",
			      "<|im_start|>assistant<|im_sep|>", b);
		break;
	case Q42_CHAT_FALCON3:
		render_simple(m, n, add_ass, "<|", "|>\n", "\n", "<|assistant|>\n", b);
		break;
	case Q42_CHAT_ZEPHYR:
		render_simple(m, n, add_ass, "<|", "|>\n", "<|endoftext|>\n", "<|assistant|>\n", b);
		break;
	case Q42_CHAT_CHATGLM4:
		put(b, "[gMASK]<sop>");
		render_simple(m, n, add_ass, "<|", "|>\n", "", "<|assistant|>\n", b);
		break;
	case Q42_CHAT_CHATGLM3:
		put(b, "[gMASK]sop");
		render_simple(m, n, add_ass, "<|", "|>\n ", "", "<|assistant|>", b);
		break;
	case Q42_CHAT_GLMEDGE:
		render_simple(m, n, add_ass, "<|", "|>\n", "", "<|assistant|>", b);
		break;
	case Q42_CHAT_MONARCH:
		/* every message but the first opens with <s> */
		for (size_t i = 0; i < n; i++) {
			put(b, i == 0 ? "" : "<s>");
			put(b, m[i].role);
			put(b, "\n");
			put(b, m[i].content);
			put(b, "</s>\n");
		}
		if (add_ass)
			put(b, "<s>assistant\n");
		break;
	case Q42_CHAT_LLAMA3:
		for (size_t i = 0; i < n; i++) {
			put(b, "<|start_header_id|>");
			put(b, m[i].role);
			put(b, "<|end_header_id|>\n\n");
			put_trim(b, m[i].content);
			put(b, "<|eot_id|>");
		}
		if (add_ass)
			put(b, "<|start_header_id|>assistant<|end_header_id|>\n\n");
		break;
	case Q42_CHAT_MISTRAL_V7:
	case Q42_CHAT_MISTRAL_V7_TEKKEN: {
		const char *sp = t == Q42_CHAT_MISTRAL_V7 ? " " : "";
		for (size_t i = 0; i < n; i++) {
			const bool sys = is(&m[i], "system"), usr = is(&m[i], "user");
			put(b, sys ? "[SYSTEM_PROMPT]" : usr ? "[INST]" : "");
			put(b, sp);
			put(b, m[i].content);
			put(b, sys ? "[/SYSTEM_PROMPT]" : usr ? "[/INST]" : "</s>");
		}
		break;
	}
	case Q42_CHAT_LLAMA2:
	case Q42_CHAT_LLAMA2_SYS:
	case Q42_CHAT_LLAMA2_SYS_BOS:
	case Q42_CHAT_LLAMA2_SYS_STRIP:
	case Q42_CHAT_MISTRAL_V1:
	case Q42_CHAT_MISTRAL_V3:
	case Q42_CHAT_MISTRAL_V3_TEKKEN:
		render_inst(t, m, n, b);
		break;
	case Q42_CHAT_GEMMA:
	case Q42_CHAT_ORION: {
		/* no system turn: system texts are held and put before the
		 * next user text (gemma: trimmed, and before any non-model turn) */
		q42_buf sys;
		q42_buf_init(&sys);
		for (size_t i = 0; i < n; i++) {
			if (is(&m[i], "system")) {
				if (t == Q42_CHAT_GEMMA)
					put_trim(&sys, m[i].content);
				else
					put(&sys, m[i].content);
				continue;
			}
			if (t == Q42_CHAT_GEMMA) {
				const bool model = is(&m[i], "assistant");
				put(b, "<start_of_turn>");
				put(b, model ? "model" : m[i].role);
				put(b, "\n");
				if (sys.len > 0 && !model) {
					q42_buf_append(b, sys.data, sys.len);
					put(b, "\n\n");
					q42_buf_reset(&sys);
				}
				put_trim(b, m[i].content);
				put(b, "<end_of_turn>\n");
			} else if (is(&m[i], "user")) {
				put(b, "Human: ");
				if (sys.len > 0) {
					q42_buf_append(b, sys.data, sys.len);
					put(b, "\n\n");
					q42_buf_reset(&sys);
				}
				put(b, m[i].content);
				put(b, "\n\nAssistant: </s>");
			} else {
				put(b, m[i].content);
				put(b, "</s>");
			}
		}
		if (t == Q42_CHAT_GEMMA && add_ass)
			put(b, "<start_of_turn>model\n");
		if (sys.failed)
			b->failed = true;
		q42_buf_free(&sys);
		break;
	}
	case Q42_CHAT_OPENCHAT:
		for (size_t i = 0; i < n; i++) {
			if (!is(&m[i], "system")) {
				char c = (char)toupper((unsigned char)m[i].role[0]);
				put(b, "GPT4 Correct ");
				q42_buf_append(b, &c, m[i].role[0] ? 1 : 0);
				put(b, m[i].role[0] ? m[i].role + 1 : "");
				put(b, ": ");
			}
			put(b, m[i].content);
			put(b, "<|end_of_turn|>");
		}
		if (add_ass)
			put(b, "GPT4 Correct Assistant:");
		break;
	case Q42_CHAT_VICUNA:
	case Q42_CHAT_VICUNA_ORCA:
		for (size_t i = 0; i < n; i++) {
			if (is(&m[i], "system")) {
				put(b, t == Q42_CHAT_VICUNA_ORCA ? "SYSTEM: " : "");
				put(b, m[i].content);
				put(b, t == Q42_CHAT_VICUNA_ORCA ? "\n" : "\n\n");
			} else if (is(&m[i], "user")) {
				put(b, "USER: ");
				put(b, m[i].content);
				put(b, "\n");
			} else if (is(&m[i], "assistant")) {
				put(b, "ASSISTANT: ");
				put(b, m[i].content);
				put(b, "</s>\n");
			}
		}
		if (add_ass)
			put(b, "ASSISTANT:");
		break;
	case Q42_CHAT_DEEPSEEK:
		for (size_t i = 0; i < n; i++) {
			if (is(&m[i], "system")) {
				put(b, m[i].content);
			} else if (is(&m[i], "user")) {
				put(b, "### Instruction:\n");
				put(b, m[i].content);
				put(b, "\n");
			} else if (is(&m[i], "assistant")) {
				put(b, "### Response:\n");
				put(b, m[i].content);
				put(b, "\n<|EOT|>\n");
			}
		}
		if (add_ass)
			put(b, "### Response:\n");
		break;
	case Q42_CHAT_COMMAND_R:
		for (size_t i = 0; i < n; i++) {
			const char *tok = is(&m[i], "system") ? "<|SYSTEM_TOKEN|>" : is(&m[i], "user") ? "<|USER_TOKEN|>"
					: is(&m[i], "assistant") ? "<|CHATBOT_TOKEN|>" : NULL;
			if (tok == NULL)
				continue;
			put(b, "<|START_OF_TURN_TOKEN|>");
			put(b, tok);
			put_trim(b, m[i].content);
			put(b, "<|END_OF_TURN_TOKEN|>");
		}
		if (add_ass)
			put(b, "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>");
		break;
	case Q42_CHAT_UNKNOWN:
	case Q42_CHAT_N_:
	default:
		return q42_err_set(err, Q42_EARG, "chat: no template to render with");
	}
	if (b->failed)
		return q42_err_set(err, Q42_ENOMEM, "chat: out of memory");
	return Q42_OK;
}
