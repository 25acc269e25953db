/* fuzz_hfvocab.c -- libFuzzer harness for the Hugging Face tokenizer.json
 * (and tokenizer_config.json) reader.
 *
 * The input is tokenizer.json, then optionally a NUL byte and
 * tokenizer_config.json, then one byte that picks a fixed config of a
 * family the reader distinguishes. The JSON is read for it, and a vocabulary it
 * accepts is opened as a tokenizer and made to encode and decode a short
 * text, as p64c's checks and q42run would use it.
 */
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include "formats/q42_hf.h"
#include "tokenizer/q42_tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const configs[] = {
	"{\"model_type\":\"llama\",\"hidden_size\":8,\"num_hidden_layers\":1,"
	"\"num_attention_heads\":2,\"intermediate_size\":16,\"vocab_size\":512}",
	"{\"model_type\":\"qwen2\",\"hidden_size\":8,\"num_hidden_layers\":1,"
	"\"num_attention_heads\":2,\"intermediate_size\":16,\"vocab_size\":512}",
	"{\"model_type\":\"lfm2\",\"hidden_size\":8,\"num_hidden_layers\":1,"
	"\"num_attention_heads\":2,\"intermediate_size\":16,\"vocab_size\":512}",
	"{\"model_type\":\"gemma3_text\",\"hidden_size\":8,\"num_hidden_layers\":1,"
	"\"num_attention_heads\":2,\"intermediate_size\":16,\"vocab_size\":512}",
};

static void exercise(const q42_vocab *v)
{
	static const char text[] = "Hello  world\n\t<s>\xe2\x96\x81x \xff\xfe 123 caf\xc3\xa9";
	q42_tokenizer *t;
	q42_tokens tk = {0};
	q42_buf out;
	q42_err err;

	if (q42_tokenizer_open(&t, v, &err) != Q42_OK)
		return;
	q42_buf_init(&out);
	if (q42_tokenizer_encode(t, text, sizeof text - 1,
				 Q42_TOKENIZE_ADD_SPECIAL | Q42_TOKENIZE_PARSE_SPECIAL, &tk, &err) == Q42_OK)
		(void)q42_tokenizer_decode(t, tk.ids, tk.n, Q42_DETOKENIZE_RENDER_SPECIAL, &out, &err);
	q42_buf_free(&out);
	q42_tokens_free(&tk);
	q42_tokenizer_close(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	q42_hf_config c;
	q42_hf_vocab v;
	q42_err err;
	const char *tok = (const char *)data, *cfg = NULL, *conf;
	size_t tok_len, cfg_len = 0;
	const uint8_t *nul;

	if (size < 1)
		return 0;
	/* the last byte picks the config; the JSON is what precedes it */
	conf = configs[data[--size] % (sizeof configs / sizeof configs[0])];
	tok_len = size;
	nul = memchr(data, 0, size);
	if (q42_hf_config_parse(&c, conf, strlen(conf), &err) != Q42_OK)
		return 0;
	if (nul != NULL) {
		tok_len = (size_t)(nul - data);
		cfg = (const char *)nul + 1;
		cfg_len = size - tok_len - 1;
	}
	if (q42_hf_vocab_parse(&v, tok, tok_len, cfg, cfg_len, &c, &err) != Q42_OK)
		return 0;
	exercise(&v.v);
	q42_hf_vocab_free(&v);
	return 0;
}
