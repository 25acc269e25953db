# shaders/list.mk -- every compute shader embedded in libq42 and the GLSL
# headers they include. A .comp listed here gets a SPIR-V blob in the
# generated table; test_vk fails when a shaders/*.comp is missing from it.
Q42_SHADERS = shaders/fill.comp shaders/matmul.comp shaders/get_rows.comp \
	shaders/rmsnorm.comp shaders/rope.comp shaders/softmax.comp shaders/glu.comp \
	shaders/add.comp shaders/kv_store.comp shaders/attention.comp shaders/argmax.comp \
	shaders/matmul_id.comp shaders/scale.comp shaders/copy.comp shaders/shortconv.comp \
	shaders/route.comp shaders/moe_sum.comp shaders/layernorm.comp shaders/pool_mean.comp
Q42_SHADER_INCLUDES = shaders/dequant.glsl shaders/reduce.glsl shaders/matmul.glsl
