/* q42_vk_spirv.h -- the SPIR-V of every shaders/NAME.comp, embedded in libq42
 * at build time by shaders/gen-spirv-table.sh (lib/vulkan/
 * q42_vk_spirv_table.c in the build directory).
 *
 * The SHA-256 of each .comp source rides along so test_vk can prove that no
 * blob is stale and no shader is missing; the layer only needs the words.
 */
#ifndef Q42_VK_SPIRV_H
#define Q42_VK_SPIRV_H

#include <stdint.h>

typedef struct q42_vk_spirv {
	const char *name;     /* file name without .comp */
	const uint32_t *words;
	uint32_t n_words;
	const char *sha256;   /* lower-case hex of the .comp source text */
} q42_vk_spirv;

extern const q42_vk_spirv q42_vk_spirv_table[];
extern const uint32_t q42_vk_spirv_count;

#endif
