#version 450
/* matmul_id.comp -- the routed experts' products (matmul.glsl with
 * MATMUL_ID): each (token, expert) pair through its expert's matrix. */
#extension GL_GOOGLE_include_directive : require
#define MATMUL_ID 1
#include "matmul.glsl"
