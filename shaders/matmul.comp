#version 450
/* matmul.comp -- the matrix products of every weight type (matmul.glsl). */
#extension GL_GOOGLE_include_directive : require
#include "matmul.glsl"
