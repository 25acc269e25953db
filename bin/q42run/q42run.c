/* q42run.c -- run a model on the CPU: generate text, or tokenize and
 * detokenize with the model's vocabulary.
 *
 * Option parsing, reading the input, printing and exit statuses only; the
 * mount, engine, request loop and records are libq42 (lib/engine). Exit
 * statuses and output formats are specified in q42run(1) and
 * q42-record(5); keep them in step.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/q42_buf.h"
#include "common/q42_file.h"
#include "engine/q42_engine.h"
#include "engine/q42_generate.h"
#include "engine/q42_mount.h"
#include "engine/q42_record.h"
#include "engine/q42_sample.h"
#include "engine/q42_utf8.h"
#include "formats/q42_types.h"

enum exit_status {
	EXIT_OK = 0,
	EXIT_MODEL = 1,   /* the model file is invalid or unsupported */
	EXIT_USAGE = 2,   /* bad options */
	EXIT_IO = 3,      /* a file could not be read, or output could not be written */
	EXIT_REQUEST = 4, /* a request could not be served (prompt, ids) */
	EXIT_NOMEM = 5,   /* out of memory, or threads could not start */
};

#define MAX_TOKENS_LIMIT (1u << 24)

enum mode { MODE_GENERATE, MODE_TOKENIZE, MODE_DETOKENIZE };

struct opts {
	const char *model;
	const char *prompt;
	const char *file;
	enum mode mode;
	bool lines, record, strict, timings, no_bos, no_special;
	uint32_t max_tokens;
	double deadline;
	const char *stops[Q42_GEN_MAX_STOPS];
	uint32_t n_stops;
	q42_engine_opts eo;
	q42_sampling sp;
};

enum {
	OPT_DEADLINE = 256, OPT_STOP, OPT_KV_TYPE, OPT_ISA, OPT_ARITH, OPT_TEMP, OPT_TOP_K, OPT_TOP_P,
	OPT_MIN_P, OPT_REPEAT_PENALTY, OPT_REPEAT_LAST_N, OPT_SEED, OPT_NO_BOS, OPT_NO_SPECIAL,
	OPT_TOKENIZE, OPT_DETOKENIZE, OPT_LINES, OPT_RECORD, OPT_STRICT, OPT_TIMINGS,
};

static const struct option long_opts[] = {
	{"model", required_argument, NULL, 'm'},
	{"prompt", required_argument, NULL, 'p'},
	{"file", required_argument, NULL, 'f'},
	{"max-tokens", required_argument, NULL, 'n'},
	{"deadline", required_argument, NULL, OPT_DEADLINE},
	{"stop", required_argument, NULL, OPT_STOP},
	{"threads", required_argument, NULL, 't'},
	{"batch", required_argument, NULL, 'b'},
	{"ctx", required_argument, NULL, 'c'},
	{"kv-type", required_argument, NULL, OPT_KV_TYPE},
	{"isa", required_argument, NULL, OPT_ISA},
	{"arith", required_argument, NULL, OPT_ARITH},
	{"temp", required_argument, NULL, OPT_TEMP},
	{"top-k", required_argument, NULL, OPT_TOP_K},
	{"top-p", required_argument, NULL, OPT_TOP_P},
	{"min-p", required_argument, NULL, OPT_MIN_P},
	{"repeat-penalty", required_argument, NULL, OPT_REPEAT_PENALTY},
	{"repeat-last-n", required_argument, NULL, OPT_REPEAT_LAST_N},
	{"seed", required_argument, NULL, OPT_SEED},
	{"no-bos", no_argument, NULL, OPT_NO_BOS},
	{"no-special", no_argument, NULL, OPT_NO_SPECIAL},
	{"tokenize", no_argument, NULL, OPT_TOKENIZE},
	{"detokenize", no_argument, NULL, OPT_DETOKENIZE},
	{"lines", no_argument, NULL, OPT_LINES},
	{"record", no_argument, NULL, OPT_RECORD},
	{"strict", no_argument, NULL, OPT_STRICT},
	{"timings", no_argument, NULL, OPT_TIMINGS},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
	fputs("Usage: q42run -m MODEL [-p PROMPT | -f FILE] [OPTION]...\n"
	      "Run a P64 or GGUF model on the CPU; the prompt is read from -p, -f FILE\n"
	      "or standard input.\n"
	      "\n"
	      "  -m, --model FILE        model file (.p64 or .gguf, told apart by magic)\n"
	      "  -p, --prompt TEXT       prompt text\n"
	      "  -f, --file FILE         read the prompt from FILE ('-' = stdin)\n"
	      "  -n, --max-tokens N      generate at most N tokens (default 256; 0 = prefill only)\n"
	      "      --deadline SECONDS  stop after SECONDS (default 30; 0 = none)\n"
	      "      --stop STRING       stop when STRING appears (repeatable, up to 16)\n"
	      "  -t, --threads N         worker threads (default: online cores)\n"
	      "  -b, --batch N           prompt tokens per prefill pass (default 512)\n"
	      "  -c, --ctx N             context size (default: model's, at most 4096)\n"
	      "      --kv-type TYPE      KV cache type: f32 (default) or f16\n"
	      "      --isa ISA           kernels: best (default), scalar, avx2, avx512\n"
	      "      --arith MODE        rounding of matrix products: llamacpp (default) or ggml\n"
	      "      --temp F            sample with temperature F (default 0 = greedy)\n"
	      "      --top-k N           keep the N best candidates (default 40)\n"
	      "      --top-p F           nucleus cut (default 0.95)\n"
	      "      --min-p F           drop candidates below F x best probability (default 0.05)\n"
	      "      --repeat-penalty F  penalize recent tokens (default 1 = off)\n"
	      "      --repeat-last-n N   tokens the penalty looks back (default 64)\n"
	      "      --seed N            sampling seed (default 0)\n"
	      "      --no-bos            do not add BOS/EOS (the vocabulary's policy otherwise)\n"
	      "      --no-special        treat special-token text as plain text\n"
	      "      --tokenize          print the token ids of the input\n"
	      "      --detokenize        print the text of the token ids in the input\n"
	      "      --lines             one request per input line\n"
	      "      --record            print one q42-record JSON line per request\n"
	      "      --strict            make every fallback an error\n"
	      "      --timings           print load, prefill and decode times to stderr\n"
	      "  -h, --help              show this help\n"
	      "  -V, --version           show the version\n"
	      "\n"
	      "Exit status: 0 ok, 1 invalid model, 2 usage, 3 I/O error, 4 request failed,\n"
	      "5 out of memory. See q42run(1).\n",
	      f);
}

static int bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int bad_usage(const char *fmt, ...)
{
	va_list ap;
	fputs("q42run: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'q42run --help'.\n", stderr);
	return EXIT_USAGE;
}

static bool parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	char *end;
	unsigned long long v;
	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		return false;
	*out = (uint32_t)v;
	return true;
}

static bool parse_f64(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !isfinite(v) || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	int c;
	double d;
	uint32_t u;

	memset(o, 0, sizeof *o);
	o->max_tokens = Q42_GEN_MAX_TOKENS_DEFAULT;
	o->deadline = Q42_GEN_DEADLINE_DEFAULT;
	o->eo.isa = Q42_ISA_BEST;
	q42_sampling_default(&o->sp);
	while ((c = getopt_long(argc, argv, "m:p:f:n:t:b:c:hV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'm': o->model = optarg; break;
		case 'p': o->prompt = optarg; break;
		case 'f': o->file = optarg; break;
		case 'n':
			if (!parse_u32(optarg, 0, MAX_TOKENS_LIMIT, &o->max_tokens))
				return bad_usage("--max-tokens '%s': expected an integer in 0..%u", optarg,
						 MAX_TOKENS_LIMIT);
			break;
		case OPT_DEADLINE:
			if (!parse_f64(optarg, 0, 1e9, &o->deadline))
				return bad_usage("--deadline '%s': expected seconds >= 0", optarg);
			break;
		case OPT_STOP:
			if (o->n_stops == Q42_GEN_MAX_STOPS)
				return bad_usage("--stop '%s': at most %u stop strings", optarg, Q42_GEN_MAX_STOPS);
			if (*optarg == '\0' || strlen(optarg) > Q42_GEN_STOP_MAX_BYTES ||
			    q42_utf8_check((const uint8_t *)optarg, strlen(optarg)) != strlen(optarg))
				return bad_usage("--stop '%s': expected 1..%u bytes of valid UTF-8",
						 optarg, Q42_GEN_STOP_MAX_BYTES);
			o->stops[o->n_stops++] = optarg;
			break;
		case 't':
			if (!parse_u32(optarg, 1, 256, &o->eo.n_threads))
				return bad_usage("--threads '%s': expected an integer in 1..%s", optarg,
						 "256");
			break;
		case 'b':
			if (!parse_u32(optarg, 1, Q42_ENGINE_BATCH_MAX, &o->eo.n_batch))
				return bad_usage("--batch '%s': expected an integer in 1..%u", optarg,
						 Q42_ENGINE_BATCH_MAX);
			break;
		case 'c':
			if (!parse_u32(optarg, 1, Q42_ENGINE_CTX_MAX, &o->eo.n_ctx))
				return bad_usage("--ctx '%s': expected an integer in 1..%u", optarg,
						 Q42_ENGINE_CTX_MAX);
			break;
		case OPT_KV_TYPE:
			if (strcmp(optarg, "f32") == 0)
				o->eo.kv_type = Q42_DTYPE_F32;
			else if (strcmp(optarg, "f16") == 0)
				o->eo.kv_type = Q42_DTYPE_F16;
			else
				return bad_usage("--kv-type '%s': expected f32 or f16", optarg);
			break;
		case OPT_ISA:
			if (strcmp(optarg, "best") == 0)
				o->eo.isa = Q42_ISA_BEST;
			else if (strcmp(optarg, "scalar") == 0)
				o->eo.isa = Q42_ISA_SCALAR;
			else if (strcmp(optarg, "avx2") == 0)
				o->eo.isa = Q42_ISA_AVX2;
			else if (strcmp(optarg, "avx512") == 0)
				o->eo.isa = Q42_ISA_AVX512;
			else
				return bad_usage("--isa '%s': expected best, scalar, avx2 or avx512",
						 optarg);
			break;
		case OPT_ARITH:
			if (strcmp(optarg, "llamacpp") == 0)
				o->eo.arith = Q42_ARITH_LLAMACPP;
			else if (strcmp(optarg, "ggml") == 0)
				o->eo.arith = Q42_ARITH_GGML;
			else
				return bad_usage("--arith '%s': expected llamacpp or ggml", optarg);
			break;
		case OPT_TEMP:
			if (!parse_f64(optarg, 0, 100, &d))
				return bad_usage("--temp '%s': expected a number in 0..%s", optarg, "100");
			o->sp.temp = (float)d;
			break;
		case OPT_TOP_K:
			if (!parse_u32(optarg, 0, INT32_MAX, &u))
				return bad_usage("--top-k '%s': expected an integer >= 0", optarg);
			o->sp.top_k = (int32_t)u;
			break;
		case OPT_TOP_P:
			if (!parse_f64(optarg, 0, 1, &d) || d == 0)
				return bad_usage("--top-p '%s': expected a number in (0, 1]", optarg);
			o->sp.top_p = (float)d;
			break;
		case OPT_MIN_P:
			if (!parse_f64(optarg, 0, 1, &d))
				return bad_usage("--min-p '%s': expected a number in [0, 1]", optarg);
			o->sp.min_p = (float)d;
			break;
		case OPT_REPEAT_PENALTY:
			if (!parse_f64(optarg, 0, 100, &d) || d == 0)
				return bad_usage("--repeat-penalty '%s': expected a number in (0, %s]",
						 optarg, "100");
			o->sp.repeat_penalty = (float)d;
			break;
		case OPT_REPEAT_LAST_N:
			if (!parse_u32(optarg, 0, Q42_SAMPLE_LAST_N_MAX, &o->sp.repeat_last_n))
				return bad_usage("--repeat-last-n '%s': expected an integer in 0..%u",
						 optarg, Q42_SAMPLE_LAST_N_MAX);
			break;
		case OPT_SEED: {
			char *end;
			unsigned long long v;
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || errno != 0 || *end != '\0' ||
			    v > (1ull << 53) - 1)
				return bad_usage("--seed '%s': expected an integer in 0..%s", optarg,
						 "9007199254740991");
			o->sp.seed = v;
			break;
		}
		case OPT_NO_BOS: o->no_bos = true; break;
		case OPT_NO_SPECIAL: o->no_special = true; break;
		case OPT_TOKENIZE: o->mode = MODE_TOKENIZE; break;
		case OPT_DETOKENIZE: o->mode = MODE_DETOKENIZE; break;
		case OPT_LINES: o->lines = true; break;
		case OPT_RECORD: o->record = true; break;
		case OPT_STRICT: o->strict = true; break;
		case OPT_TIMINGS: o->timings = true; break;
		case 'h': usage(stdout); exit(EXIT_OK);
		case 'V': printf("q42run (q42) %s\n", Q42_VERSION); exit(EXIT_OK);
		default:
			fputs("Try 'q42run --help'.\n", stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc)
		return bad_usage("unexpected argument '%s'", argv[optind]);
	if (o->model == NULL)
		return bad_usage("no model: use -m MODEL");
	if (o->prompt != NULL && o->file != NULL)
		return bad_usage("-p and -f are mutually exclusive");
	if (o->record && o->mode != MODE_GENERATE)
		return bad_usage("--record applies to generation, not to --tokenize or --detokenize");
	return EXIT_OK;
}

static int exit_for_load(int rc)
{
	switch (rc) {
	case Q42_EIO: return EXIT_IO;
	case Q42_ENOMEM: return EXIT_NOMEM;
	case Q42_EARG: return EXIT_USAGE;
	default: return EXIT_MODEL;
	}
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The requests of the input: the whole input, or each of its lines. */
struct input {
	q42_map map;
	const char *data;
	size_t len;
	size_t pos;
	bool done;
};

static int input_open(struct input *in, const struct opts *o, q42_err *err)
{
	memset(in, 0, sizeof *in);
	in->map.fd = -1;
	if (o->prompt != NULL) {
		in->data = o->prompt;
		in->len = strlen(o->prompt);
		return Q42_OK;
	}
	int rc = q42_map_open(&in->map, o->file ? o->file : "-", 0, err);
	if (rc != Q42_OK)
		return rc;
	in->data = (const char *)in->map.data;
	in->len = (size_t)in->map.size;
	return Q42_OK;
}

static void input_close(struct input *in)
{
	if (in->map.path != NULL)
		q42_map_close(&in->map);
}

/* Next request; false at the end. Lines split on '\n' only; a final
 * newline does not start an empty request. */
static bool input_next(struct input *in, bool lines, const char **p, size_t *n)
{
	if (in->done)
		return false;
	if (!lines) {
		in->done = true;
		*p = in->data ? in->data : "";
		*n = in->len;
		return true;
	}
	if (in->pos >= in->len) {
		in->done = true;
		return false;
	}
	const char *s = in->data + in->pos;
	const char *nl = memchr(s, '\n', in->len - in->pos);
	*p = s;
	*n = nl ? (size_t)(nl - s) : in->len - in->pos;
	in->pos += *n + (nl ? 1 : 0);
	return true;
}

static int write_out(const void *p, size_t n)
{
	if (n > 0 && fwrite(p, 1, n, stdout) != n)
		return EXIT_IO;
	return EXIT_OK;
}

static int finish_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "q42run: standard output: write failed: %s\n", strerror(errno));
		return EXIT_IO;
	}
	return EXIT_OK;
}

static int run_tokenize(const struct opts *o, const q42_tokenizer *tok, struct input *in)
{
	unsigned flags = (o->no_bos ? 0 : Q42_TOKENIZE_ADD_SPECIAL) |
			 (o->no_special ? 0 : Q42_TOKENIZE_PARSE_SPECIAL);
	const char *p;
	size_t n;
	q42_err err = {0};
	q42_buf line;
	int ex = EXIT_OK;

	q42_buf_init(&line);
	while (ex == EXIT_OK && input_next(in, o->lines, &p, &n)) {
		q42_tokens t = {0};
		int rc = q42_tokenizer_encode(tok, p, n, flags, &t, &err);
		if (rc != Q42_OK) {
			fprintf(stderr, "q42run: tokenize: %s\n", err.msg);
			ex = rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_REQUEST;
		} else {
			q42_buf_reset(&line);
			for (size_t i = 0; i < t.n; i++)
				q42_buf_printf(&line, i ? " %d" : "%d", t.ids[i]);
			q42_buf_u8(&line, '\n');
			ex = line.failed ? EXIT_NOMEM : write_out(line.data, line.len);
		}
		q42_tokens_free(&t);
	}
	q42_buf_free(&line);
	return ex;
}

static int run_detokenize(const struct opts *o, const q42_tokenizer *tok, struct input *in)
{
	const uint32_t nv = q42_tokenizer_n_vocab(tok);
	const char *p;
	size_t n;
	q42_err err = {0};
	q42_buf text;
	int ex = EXIT_OK;

	q42_buf_init(&text);
	while (ex == EXIT_OK && input_next(in, o->lines, &p, &n)) {
		q42_tokens t = {0};
		size_t i = 0;
		while (ex == EXIT_OK && i < n) {
			unsigned long long v = 0;
			size_t s;
			if (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r') {
				i++;
				continue;
			}
			for (s = i; i < n && p[i] >= '0' && p[i] <= '9' && v <= UINT32_MAX; i++)
				v = v * 10 + (unsigned long long)(p[i] - '0');
			if (i == s || (i < n && p[i] != ' ' && p[i] != '\t' && p[i] != '\n' &&
				       p[i] != '\r')) {
				fprintf(stderr, "q42run: detokenize: byte %zu of the input: expected a token id\n",
					(size_t)(p + i - in->data));
				ex = EXIT_REQUEST;
			} else if (v >= nv) {
				fprintf(stderr, "q42run: detokenize: token id %llu is outside the vocabulary (0..%u)\n",
					v, nv - 1);
				ex = EXIT_REQUEST;
			} else if (!q42_tokens_push(&t, (int32_t)v)) {
				ex = EXIT_NOMEM;
			}
		}
		if (ex == EXIT_OK) {
			q42_buf_reset(&text);
			if (q42_tokenizer_decode(tok, t.ids, t.n, 0, &text, &err) != Q42_OK) {
				fprintf(stderr, "q42run: detokenize: %s\n", err.msg);
				ex = EXIT_REQUEST;
			} else {
				if (o->lines)
					q42_buf_u8(&text, '\n');
				ex = text.failed ? EXIT_NOMEM : write_out(text.data, text.len);
			}
		}
		q42_tokens_free(&t);
	}
	q42_buf_free(&text);
	return ex;
}

struct sink {
	bool failed;
};

static void on_text(void *ud, const char *p, size_t n)
{
	struct sink *s = ud;
	if (fwrite(p, 1, n, stdout) != n || fflush(stdout) != 0)
		s->failed = true;
}

static void print_timings(double load_ms, const q42_result *r)
{
	fprintf(stderr,
		"q42run: timings: load_ms=%.3f tokenize_ms=%.3f prefill_ms=%.3f prompt_tokens=%zu"
		" prefill_tok_s=%.2f decode_ms=%.3f decode_steps=%u decode_tok_s=%.2f"
		" generated=%zu stop=%s\n",
		load_ms, r->tokenize_ms, r->prefill_ms, r->prompt.n,
		r->prefill_ms > 0 ? (double)r->prompt.n / (r->prefill_ms / 1e3) : 0.0, r->decode_ms,
		r->n_decode, r->decode_ms > 0 ? (double)r->n_decode / (r->decode_ms / 1e3) : 0.0,
		r->out.n, q42_stop_name(r->stop));
}

static int run_generate(const struct opts *o, q42_mount *m, struct input *in, double t_start)
{
	q42_engine *e = NULL;
	q42_sampler *s = NULL;
	const q42_model_ident *ident = NULL;
	q42_err err = {0};
	q42_buf rec;
	struct sink sink = {false};
	const char *p;
	size_t n;
	uint64_t idx = 0;
	double load_ms;
	int rc, ex = EXIT_OK;

	q42_buf_init(&rec);
	rc = q42_engine_open(&e, m, &o->eo, &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: %s\n", err.msg);
		ex = exit_for_load(rc);
		goto done;
	}
	rc = q42_sampler_open(&s, &o->sp, q42_engine_n_vocab(e), &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: %s\n", err.msg);
		ex = rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_USAGE;
		goto done;
	}
	if (o->record) {
		rc = q42_mount_ident(m, &ident, &err);
		if (rc != Q42_OK) {
			fprintf(stderr, "q42run: %s\n", err.msg);
			ex = EXIT_MODEL;
			goto done;
		}
	}
	load_ms = now_ms() - t_start;

	while (ex == EXIT_OK && input_next(in, o->lines, &p, &n)) {
		q42_request rq = {
			.prompt = p, .prompt_len = n,
			.add_special = !o->no_bos, .parse_special = !o->no_special,
			.strict = o->strict, .max_tokens = o->max_tokens, .deadline_s = o->deadline,
			.stops = o->stops, .n_stops = o->n_stops,
			.on_text = o->record ? NULL : on_text, .ud = &sink,
		};
		q42_result r;
		q42_result_init(&r);
		rc = q42_generate(e, s, q42_mount_tokenizer(m), &rq, &r, &err);
		if (rc != Q42_OK) {
			fprintf(stderr, "q42run: request %llu: %s\n", (unsigned long long)idx, err.msg);
			ex = rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_REQUEST;
		} else if (o->record) {
			q42_record_info ri = {
				.program = "q42run", .version = Q42_VERSION, .request_index = idx,
				.load_ms = load_ms, .model_path = o->model, .ident = ident,
				.engine = e, .sampling = &o->sp, .request = &rq, .result = &r,
			};
			q42_buf_reset(&rec);
			rc = q42_record_append(&rec, &ri, &err);
			if (rc != Q42_OK) {
				fprintf(stderr, "q42run: %s\n", err.msg);
				ex = EXIT_NOMEM;
			} else {
				ex = write_out(rec.data, rec.len);
			}
		} else if (o->lines) {
			on_text(&sink, "\n", 1);
		}
		if (rc == Q42_OK && o->timings)
			print_timings(load_ms, &r);
		if (sink.failed)
			ex = EXIT_IO;
		q42_result_free(&r);
		idx++;
	}
done:
	q42_buf_free(&rec);
	q42_sampler_close(s);
	q42_engine_close(e);
	return ex;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct input in;
	q42_mount *m = NULL;
	q42_err err = {0};
	double t_start;
	int rc, ex;

	ex = parse_opts(argc, argv, &o);
	if (ex != EXIT_OK)
		return ex;
	t_start = now_ms();
	rc = q42_mount_open(&m, o.model, o.mode == MODE_GENERATE ? 0 : Q42_MOUNT_VOCAB_ONLY, &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: %s\n", err.msg);
		return exit_for_load(rc);
	}
	rc = input_open(&in, &o, &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: %s\n", err.msg);
		q42_mount_close(m);
		return rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_IO;
	}
	if (o.mode == MODE_TOKENIZE)
		ex = run_tokenize(&o, q42_mount_tokenizer(m), &in);
	else if (o.mode == MODE_DETOKENIZE)
		ex = run_detokenize(&o, q42_mount_tokenizer(m), &in);
	else
		ex = run_generate(&o, m, &in, t_start);
	if (ex == EXIT_OK || ex == EXIT_REQUEST)
		ex = finish_stdout() != EXIT_OK ? EXIT_IO : ex;
	input_close(&in);
	q42_mount_close(m);
	return ex;
}
