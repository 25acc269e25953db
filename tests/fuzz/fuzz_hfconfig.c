/* fuzz_hfconfig.c -- libFuzzer harness for the Hugging Face config.json
 * reader.
 *
 * Parses the input as config.json and, when it yields a family, maps a
 * fixed set of tensor names of every family through it (the names whose
 * mapping depends on the hyperparameters: layer indices, experts, the
 * q/k permutation, done on a small block of rows) so the mapping sees hostile hyperparameters too.
 */
#include <stdint.h>
#include <stddef.h>
#include "formats/q42_hf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = {
	"model.embed_tokens.weight",
	"model.layers.0.self_attn.q_proj.weight",
	"model.layers.0.self_attn.k_proj.weight",
	"model.layers.4294967295.self_attn.v_proj.weight",
	"model.layers.99999999999999999999.mlp.down_proj.weight",
	"model.layers.1.feed_forward.experts.7.w1.weight",
	"model.layers.1.feed_forward.experts.4294967296.w2.weight",
	"model.layers.0.conv.conv.weight",
	"model.layers.0.input_layernorm.weight",
	"lm_head.weight",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	q42_hf_config c;
	q42_err err;
	char out[256];
	uint32_t x;
	uint8_t rows[64 * 4], scratch[64 * 4];

	if (q42_hf_config_parse(&c, (const char *)data, size, &err) != Q42_OK)
		return 0;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		(void)q42_hf_tensor_name(&c, names[i], out, sizeof out, &x);
		(void)q42_hf_expert_piece(&c, names[i], out, sizeof out, &x);
	}
	/* p64c permutes q and k rows by the config's head counts */
	(void)q42_hf_permute_rows(rows, scratch, 64, 4, c.hp.n_head, &err);
	(void)q42_hf_permute_rows(rows, scratch, 64, 4, c.n_head_kv, &err);
	return 0;
}
