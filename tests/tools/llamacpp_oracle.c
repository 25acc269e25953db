/* llamacpp_oracle.c -- runs llama.cpp's own compiled ggml (the prebuilt
 * libggml-cpu-<variant>.so of node-llama-cpp it is linked with) on inputs
 * from stdin and writes its f32/byte results to stdout, for
 * tests/tools/gen_llamacpp_golden.py and gen_zen4_golden.py.
 *
 * A golden-data generator only: never built by the project's build, never
 * run by `make check`, never linked into libq42. Matrix products go through
 * a real ggml graph so that llama.cpp picks its kernels itself (the AMX
 * buffer for "amx", the repacking CPU_REPACK buffer for "repack", the plain
 * CPU buffer with llamafile/vec_dot for "cpu").
 * Build command: tests/golden/llamacpp/README.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

/* C++ symbols of the CPU variant (not in the public headers); the AMX
 * buffer exists only in libggml-cpu-sapphirerapids.so, so it is weak and
 * "amx" is refused with any other variant */
extern ggml_backend_buffer_type_t _Z28ggml_backend_amx_buffer_typev(void) __attribute__((weak));
extern ggml_backend_buffer_type_t _Z35ggml_backend_cpu_repack_buffer_typev(void);
extern void quantize_row_q8_0(const float *x, void *y, int64_t k);
extern void quantize_row_q8_1(const float *x, void *y, int64_t k);
extern void ggml_vec_dot_f16(int n, float *s, size_t bs, ggml_fp16_t *x, size_t bx,
			     ggml_fp16_t *y, size_t by, int nrc);
extern void ggml_vec_dot_f32(int n, float *s, size_t bs, const float *x, size_t bx,
			     const float *y, size_t by, int nrc);

static void die(const char *m)
{
	fprintf(stderr, "llamacpp_oracle: %s\n", m);
	exit(1);
}

static void *read_all(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p || fread(p, 1, n, stdin) != n)
		die("short input");
	return p;
}

static void write_all(const void *p, size_t n)
{
	if (fwrite(p, 1, n, stdout) != n)
		die("write failed");
}

static struct ggml_context *new_ctx(void)
{
	struct ggml_init_params ip = { 64 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
	struct ggml_context *c = ggml_init(ip);
	if (!c)
		die("ggml_init");
	return c;
}

/* Builds out = op(inputs) in a CPU-buffer context, computes it on the CPU
 * backend with one thread, copies out to stdout. */
static void run_graph(ggml_backend_t be, struct ggml_context *ctx, struct ggml_tensor *out,
		      struct ggml_tensor **in, void **data, int n_in)
{
	struct ggml_cgraph *g = ggml_new_graph(ctx);
	ggml_build_forward_expand(g, out);
	ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cpu_buffer_type());
	if (!buf)
		die("alloc cpu buffer");
	for (int i = 0; i < n_in; i++)
		ggml_backend_tensor_set(in[i], data[i], 0, ggml_nbytes(in[i]));
	if (ggml_backend_graph_compute(be, g) != GGML_STATUS_SUCCESS)
		die("compute");
	size_t n = ggml_nbytes(out);
	void *res = malloc(n);
	ggml_backend_tensor_get(out, res, 0, n);
	write_all(res, n);
	free(res);
	ggml_backend_buffer_free(buf);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		die("usage: llamacpp_oracle mul_mat amx|repack|cpu TYPE K N M | q8_0 N | q8_1 N | dot_f16 N | dot_f32 N |"
		    " soft_max N ROWS | swiglu N ROWS | rope HEAD_DIM HEADS TOKENS MODE   (inputs on stdin, results on stdout)");
	const char *op = argv[1];
	ggml_backend_t be = ggml_backend_cpu_init();
	if (!be)
		die("cpu backend");
	ggml_backend_cpu_set_n_threads(be, 1);

	if (strcmp(op, "mul_mat") == 0 && argc == 7) {
		const char *place = argv[2];
		int type = -1;
		for (int t = 0; t < GGML_TYPE_COUNT; t++)
			if (ggml_get_type_traits((enum ggml_type)t)->type_name &&
			    strcmp(ggml_type_name((enum ggml_type)t), argv[3]) == 0)
				type = t;
		if (type < 0)
			die("unknown type");
		const int64_t K = atoll(argv[4]), N = atoll(argv[5]), M = atoll(argv[6]);
		ggml_backend_buffer_type_t wbuft = ggml_backend_cpu_buffer_type();
		if (strcmp(place, "amx") == 0) {
			wbuft = _Z28ggml_backend_amx_buffer_typev ? _Z28ggml_backend_amx_buffer_typev() : NULL;
			if (!wbuft)
				die("no AMX on this CPU");
		} else if (strcmp(place, "repack") == 0) {
			wbuft = _Z35ggml_backend_cpu_repack_buffer_typev();
		}
		struct ggml_context *wctx = new_ctx(), *ctx = new_ctx();
		struct ggml_tensor *w = ggml_new_tensor_2d(wctx, (enum ggml_type)type, K, N);
		struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, M);
		ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors_from_buft(wctx, wbuft);
		if (!wbuf)
			die("alloc weight buffer");
		ggml_backend_buffer_set_usage(wbuf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
		void *wd = read_all(ggml_nbytes(w));
		ggml_backend_tensor_set(w, wd, 0, ggml_nbytes(w));
		void *xd = read_all(ggml_nbytes(x));
		struct ggml_tensor *out = ggml_mul_mat(ctx, w, x);
		struct ggml_tensor *in[1] = { x };
		void *d[1] = { xd };
		run_graph(be, ctx, out, in, d, 1);
	} else if ((strcmp(op, "q8_0") == 0 || strcmp(op, "q8_1") == 0) && argc == 3) {
		const int64_t n = atoll(argv[2]);
		const bool q81 = op[3] == '1';
		float *x = read_all((size_t)n * 4);
		size_t nb = (size_t)(n / 32) * (q81 ? 36 : 34);
		void *y = malloc(nb);
		(q81 ? quantize_row_q8_1 : quantize_row_q8_0)(x, y, n);
		write_all(y, nb);
	} else if ((strcmp(op, "dot_f16") == 0 || strcmp(op, "dot_f32") == 0) && argc == 3) {
		const int n = atoi(argv[2]);
		const size_t es = op[5] == '1' ? 2 : 4;
		void *a = read_all((size_t)n * es), *b = read_all((size_t)n * es);
		float s = 0.0f;
		if (es == 2)
			ggml_vec_dot_f16(n, &s, 0, a, 0, b, 0, 1);
		else
			ggml_vec_dot_f32(n, &s, 0, a, 0, b, 0, 1);
		write_all(&s, 4);
	} else if ((strcmp(op, "soft_max") == 0 || strcmp(op, "swiglu") == 0) && argc == 4) {
		const int64_t n = atoll(argv[2]), rows = atoll(argv[3]);
		struct ggml_context *ctx = new_ctx();
		struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n, rows);
		void *ad = read_all(ggml_nbytes(a));
		if (op[1] == 'o') {
			struct ggml_tensor *in[1] = { a };
			void *d[1] = { ad };
			run_graph(be, ctx, ggml_soft_max(ctx, a), in, d, 1);
		} else {
			struct ggml_tensor *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n, rows);
			void *bd = read_all(ggml_nbytes(b));
			struct ggml_tensor *in[2] = { a, b };
			void *d[2] = { ad, bd };
			run_graph(be, ctx, ggml_swiglu_split(ctx, a, b), in, d, 2);
		}
	} else if (strcmp(op, "rope") == 0 && argc == 6) {
		/* x[tok][head][dim] at positions 0..tok-1, ggml_rope_ext as
		 * llama.cpp calls it without YaRN: base 10000, scale 1 */
		const int64_t hd = atoll(argv[2]), nh = atoll(argv[3]), nt = atoll(argv[4]);
		const int mode = atoi(argv[5]);
		struct ggml_context *ctx = new_ctx();
		struct ggml_tensor *a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, hd, nh, nt);
		struct ggml_tensor *pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, nt);
		void *ad = read_all(ggml_nbytes(a));
		int32_t *pd = malloc((size_t)nt * 4);
		for (int64_t i = 0; i < nt; i++)
			pd[i] = (int32_t)i;
		struct ggml_tensor *in[2] = { a, pos };
		void *d[2] = { ad, pd };
		run_graph(be, ctx, ggml_rope_ext(ctx, a, pos, NULL, (int)hd, mode, 4096, 10000.0f, 1.0f,
						 0.0f, 1.0f, 32.0f, 1.0f), in, d, 2);
	} else {
		die("bad arguments");
	}
	fflush(stdout);
	return 0;
}
