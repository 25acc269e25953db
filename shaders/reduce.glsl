/* reduce.glsl -- workgroup-wide sum and max in a fixed order: a subgroup
 * operation, then the per-subgroup results combined in subgroup order by
 * every thread. The result is the same in every thread and the same bytes
 * on every run of a given device. The including shader declares
 * `shared float red[WG]` and has GL_KHR_shader_subgroup_arithmetic. Every
 * thread of the workgroup must call these (they contain barriers).
 */

float wg_sum(float v)
{
	const float s = subgroupAdd(v);
	if (subgroupElect())
		red[gl_SubgroupID] = s;
	barrier();
	float t = 0.0;
	for (uint g = 0u; g < gl_NumSubgroups; g++)
		t += red[g];
	barrier();
	return t;
}

float wg_max(float v)
{
	const float s = subgroupMax(v);
	if (subgroupElect())
		red[gl_SubgroupID] = s;
	barrier();
	float t = red[0];
	for (uint g = 1u; g < gl_NumSubgroups; g++)
		t = max(t, red[g]);
	barrier();
	return t;
}
