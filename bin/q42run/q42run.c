/* q42run.c -- run a model on the CPU: generate text (optionally under the
 * Sentinel's rules and a grammar sieve), score fixed options, print chosen
 * logits, or tokenize and detokenize with the model's vocabulary.
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
#include "bin/cli/q42_cli.h"
#include "common/q42_buf.h"
#include "common/q42_file.h"
#include "measure/q42_bench.h"
#include "run/q42_choices.h"
#include "measure/q42_certify.h"
#include "engine/q42_engine.h"
#include "run/q42_generate.h"
#include "constrain/q42_grammar.h"
#include "engine/q42_mount.h"
#include "measure/q42_quality.h"
#include "run/q42_record.h"
#include "engine/q42_sample.h"
#include "sentinel/q42_sentinel.h"
#include "constrain/q42_sieve.h"
#include "common/q42_utf8.h"
#include "formats/q42_digest.h"
#include "common/q42_types.h"
#include "vulkan/q42_vk.h"

enum exit_status {
	EXIT_OK = 0,
	EXIT_MODEL = 1,   /* the model file is invalid or unsupported */
	EXIT_USAGE = 2,   /* bad options */
	EXIT_IO = 3,      /* a file could not be read, or output could not be written */
	EXIT_REQUEST = 4, /* a request could not be served (prompt, ids, sentinel, sieve) */
	EXIT_NOMEM = 5,   /* out of memory, or threads could not start */
};

#define MAX_TOKENS_LIMIT (1u << 24)

enum mode { MODE_GENERATE, MODE_TOKENIZE, MODE_DETOKENIZE, MODE_CHOICES, MODE_LOGITS, MODE_BENCH,
	MODE_QUALITY, MODE_DEVICES, MODE_CERTIFY };

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
	const char *sentinel;     /* --sentinel rules */
	const char *choices;      /* --choices list */
	const char *choices_file; /* --choices-file */
	const char *logits_for;   /* --logits-for ids */
	const char *sieve;        /* --sieve quin */
	const char *grammar;      /* --grammar FILE */
	q42_bench_opts bench;     /* --bench: --pp, --tg, --reps */
	bool json;                /* --bench --json */
	const char *intent;       /* --intent, recorded for q42grd */
	const char *scope;        /* --scope */
	bool record_prompt;       /* --record-prompt */
	const char *perplexity;   /* --perplexity TEXT */
	const char *kl_base;      /* --kl-base OUT */
	const char *kl_div;       /* --kl-divergence BASE */
};

enum {
	OPT_BENCH = 200, OPT_PP, OPT_TG, OPT_REPS, OPT_JSON,
	OPT_DEADLINE = 256, OPT_STOP, OPT_KV_TYPE, OPT_ISA, OPT_ARITH, OPT_TEMP, OPT_TOP_K, OPT_TOP_P,
	OPT_MIN_P, OPT_REPEAT_PENALTY, OPT_REPEAT_LAST_N, OPT_SEED, OPT_NO_BOS, OPT_NO_SPECIAL,
	OPT_TOKENIZE, OPT_DETOKENIZE, OPT_LINES, OPT_RECORD, OPT_STRICT, OPT_TIMINGS,
	OPT_SENTINEL, OPT_CHOICES, OPT_CHOICES_FILE, OPT_LOGITS_FOR, OPT_SIEVE, OPT_GRAMMAR,
	OPT_INTENT, OPT_SCOPE, OPT_RECORD_PROMPT, OPT_PERPLEXITY, OPT_KL_BASE, OPT_KL_DIVERGENCE,
	OPT_BACKEND, OPT_DEVICE, OPT_NO_HUGE_PAGES,
	OPT_LIST_DEVICES,
	OPT_CERTIFY,
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
	{"backend", required_argument, NULL, OPT_BACKEND},
	{"device", required_argument, NULL, OPT_DEVICE},
	{"no-huge-pages", no_argument, NULL, OPT_NO_HUGE_PAGES},
	{"list-devices", no_argument, NULL, OPT_LIST_DEVICES},
	{"certify", no_argument, NULL, OPT_CERTIFY},
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
	{"intent", required_argument, NULL, OPT_INTENT},
	{"scope", required_argument, NULL, OPT_SCOPE},
	{"record-prompt", no_argument, NULL, OPT_RECORD_PROMPT},
	{"strict", no_argument, NULL, OPT_STRICT},
	{"timings", no_argument, NULL, OPT_TIMINGS},
	{"sentinel", required_argument, NULL, OPT_SENTINEL},
	{"choices", required_argument, NULL, OPT_CHOICES},
	{"choices-file", required_argument, NULL, OPT_CHOICES_FILE},
	{"logits-for", required_argument, NULL, OPT_LOGITS_FOR},
	{"sieve", required_argument, NULL, OPT_SIEVE},
	{"grammar", required_argument, NULL, OPT_GRAMMAR},
	{"bench", no_argument, NULL, OPT_BENCH},
	{"pp", required_argument, NULL, OPT_PP},
	{"tg", required_argument, NULL, OPT_TG},
	{"reps", required_argument, NULL, OPT_REPS},
	{"json", no_argument, NULL, OPT_JSON},
	{"perplexity", required_argument, NULL, OPT_PERPLEXITY},
	{"kl-base", required_argument, NULL, OPT_KL_BASE},
	{"kl-divergence", required_argument, NULL, OPT_KL_DIVERGENCE},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
	fputs("Usage: q42run -m MODEL [-p PROMPT | -f FILE] [OPTION]...\n"
	      "Run a P64 or GGUF model on the CPU (or a Vulkan device: --backend); the\n"
	      "prompt is read from -p, -f FILE or standard input.\n"
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
	      "      --backend B         run the model on: cpu (default), vulkan, or auto (a\n"
	      "                          Vulkan GPU when there is one, the CPU otherwise)\n"
	      "      --device N          Vulkan device index (see --list-devices)\n"
	      "      --no-huge-pages     keep the repacked weights and the KV cache on 4 KiB\n"
	      "                          pages (default: transparent huge pages)\n"
	      "      --list-devices      list the Vulkan devices, one per line (--json: one\n"
	      "                          JSON object per line), and exit\n"
	      "      --certify           run every kernel of --backend (cpu or vulkan) on\n"
	      "                          random inputs (--seed) against the scalar reference,\n"
	      "                          one line per case (--json: JSON), and exit\n"
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
	      "      --intent NAME       declared intent, written to the record (for q42grd)\n"
	      "      --scope SCOPE       declared scope, written to the record\n"
	      "      --record-prompt     also write the prompt text to the record\n"
	      "      --strict            make every fallback (and every Sentinel intervention) an error\n"
	      "      --timings           print load, prefill and decode times to stderr\n"
	      "      --sentinel RULES    check each token before it is committed; RULES is a\n"
	      "                          comma list of witness, nonfinite (always on),\n"
	      "                          banned=FILE, repeat=N; a denied token is replaced by\n"
	      "                          the best-ranked token not denied\n"
	      "      --sieve quin        allow only tokens that keep the output a valid quin\n"
	      "      --grammar FILE      allow only tokens that keep the output a valid prefix\n"
	      "                          of the grammar in FILE (see q42run(1), GRAMMARS)\n"
	      "      --choices LIST      print the probability of each comma-separated option\n"
	      "                          after the prompt instead of generating\n"
	      "      --choices-file FILE the same, one option per line of FILE\n"
	      "      --logits-for IDS    print the next-token logits of the comma-separated ids\n"
	      "      --bench             measure prompt processing and generation tokens/s\n"
	      "                          (--pp N, default 128; --tg N, default 64; --reps R,\n"
	      "                          default 5; --json for one JSON object)\n"
	      "      --perplexity FILE   perplexity of the model over FILE in windows of --ctx\n"
	      "                          tokens, as llama-perplexity computes it\n"
	      "      --kl-base OUT       with --perplexity: store the log-probs in OUT\n"
	      "      --kl-divergence BASE  KL divergence, delta-p and same-top rate against\n"
	      "                          the log-probs stored in BASE\n"
	      "  -h, --help              show this help\n"
	      "  -V, --version           show the version\n"
	      "\n"
	      "Exit status: 0 ok, 1 invalid model, 2 usage, 3 I/O error, 4 request failed\n"
	      "(also: an intervention under --strict, [sieve-misaligned]),\n"
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

static int parse_opts(int argc, char **argv, struct opts *o)
{
	int c;
	double d;
	uint32_t u;

	memset(o, 0, sizeof *o);
	o->max_tokens = Q42_GEN_MAX_TOKENS_DEFAULT;
	o->bench = (q42_bench_opts){128, 64, 5, 0, false};
	o->deadline = Q42_GEN_DEADLINE_DEFAULT;
	o->eo.isa = Q42_ISA_BEST;
	o->eo.device = -1;
	o->eo.backend_ops = q42_vk_backend();
	q42_sampling_default(&o->sp);
	while ((c = getopt_long(argc, argv, "m:p:f:n:t:b:c:hV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'm': o->model = optarg; break;
		case 'p': o->prompt = optarg; break;
		case 'f': o->file = optarg; break;
		case 'n':
			if (!q42_cli_u32(optarg, 0, MAX_TOKENS_LIMIT, &o->max_tokens))
				return bad_usage("--max-tokens '%s': expected an integer in 0..%u", optarg,
						 MAX_TOKENS_LIMIT);
			break;
		case OPT_DEADLINE:
			if (!q42_cli_f64(optarg, 0, 1e9, &o->deadline))
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
			if (!q42_cli_u32(optarg, 1, 256, &o->eo.n_threads))
				return bad_usage("--threads '%s': expected an integer in 1..%s", optarg,
						 "256");
			break;
		case 'b':
			if (!q42_cli_u32(optarg, 1, Q42_ENGINE_BATCH_MAX, &o->eo.n_batch))
				return bad_usage("--batch '%s': expected an integer in 1..%u", optarg,
						 Q42_ENGINE_BATCH_MAX);
			break;
		case 'c':
			if (!q42_cli_u32(optarg, 1, Q42_ENGINE_CTX_MAX, &o->eo.n_ctx))
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
		case OPT_BACKEND:
			if (strcmp(optarg, "cpu") == 0)
				o->eo.backend = Q42_BACKEND_CPU;
			else if (strcmp(optarg, "vulkan") == 0)
				o->eo.backend = Q42_BACKEND_VULKAN;
			else if (strcmp(optarg, "auto") == 0)
				o->eo.backend = Q42_BACKEND_AUTO;
			else
				return bad_usage("--backend '%s': expected cpu, vulkan or auto", optarg);
			break;
		case OPT_DEVICE:
			if (!q42_cli_u32(optarg, 0, INT32_MAX, &u))
				return bad_usage("--device '%s': expected a device index >= 0", optarg);
			o->eo.device = (int32_t)u;
			break;
		case OPT_TEMP:
			if (!q42_cli_f64(optarg, 0, 100, &d))
				return bad_usage("--temp '%s': expected a number in 0..%s", optarg, "100");
			o->sp.temp = (float)d;
			break;
		case OPT_TOP_K:
			if (!q42_cli_u32(optarg, 0, INT32_MAX, &u))
				return bad_usage("--top-k '%s': expected an integer >= 0", optarg);
			o->sp.top_k = (int32_t)u;
			break;
		case OPT_TOP_P:
			if (!q42_cli_f64(optarg, 0, 1, &d) || d == 0)
				return bad_usage("--top-p '%s': expected a number in (0, 1]", optarg);
			o->sp.top_p = (float)d;
			break;
		case OPT_MIN_P:
			if (!q42_cli_f64(optarg, 0, 1, &d))
				return bad_usage("--min-p '%s': expected a number in [0, 1]", optarg);
			o->sp.min_p = (float)d;
			break;
		case OPT_REPEAT_PENALTY:
			if (!q42_cli_f64(optarg, 0, 100, &d) || d == 0)
				return bad_usage("--repeat-penalty '%s': expected a number in (0, %s]",
						 optarg, "100");
			o->sp.repeat_penalty = (float)d;
			break;
		case OPT_REPEAT_LAST_N:
			if (!q42_cli_u32(optarg, 0, Q42_SAMPLE_LAST_N_MAX, &o->sp.repeat_last_n))
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
		case OPT_NO_HUGE_PAGES: o->eo.small_pages = true; break;
		case OPT_NO_SPECIAL: o->no_special = true; break;
		case OPT_TOKENIZE: o->mode = MODE_TOKENIZE; break;
		case OPT_DETOKENIZE: o->mode = MODE_DETOKENIZE; break;
		case OPT_LINES: o->lines = true; break;
		case OPT_RECORD: o->record = true; break;
		case OPT_INTENT: o->intent = optarg; break;
		case OPT_SCOPE: o->scope = optarg; break;
		case OPT_RECORD_PROMPT: o->record_prompt = true; break;
		case OPT_STRICT: o->strict = true; break;
		case OPT_TIMINGS: o->timings = true; break;
		case OPT_SENTINEL: o->sentinel = optarg; break;
		case OPT_CHOICES: o->choices = optarg; o->mode = MODE_CHOICES; break;
		case OPT_CHOICES_FILE: o->choices_file = optarg; o->mode = MODE_CHOICES; break;
		case OPT_LOGITS_FOR: o->logits_for = optarg; o->mode = MODE_LOGITS; break;
		case OPT_SIEVE:
			if (strcmp(optarg, "quin") != 0)
				return bad_usage("--sieve '%s': expected quin", optarg);
			o->sieve = optarg;
			break;
		case OPT_GRAMMAR: o->grammar = optarg; break;
		case OPT_BENCH: o->mode = MODE_BENCH; break;
		case OPT_LIST_DEVICES: o->mode = MODE_DEVICES; break;
		case OPT_CERTIFY: o->mode = MODE_CERTIFY; break;
		case OPT_PP:
		case OPT_TG:
		case OPT_REPS: {
			char *end;
			unsigned long v;
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' || optarg[0] == '-' ||
			    v > (c == OPT_REPS ? Q42_BENCH_REPS_MAX : 1000000u) || (c == OPT_REPS && v == 0))
				return bad_usage("--%s '%s': expected an integer in %u..%u",
						 c == OPT_PP ? "pp" : c == OPT_TG ? "tg" : "reps", optarg,
						 c == OPT_REPS ? 1u : 0u,
						 c == OPT_REPS ? Q42_BENCH_REPS_MAX : 1000000u);
			*(c == OPT_PP ? &o->bench.n_pp : c == OPT_TG ? &o->bench.n_tg : &o->bench.reps) =
				(uint32_t)v;
			break;
		}
		case OPT_JSON: o->json = true; break;
		case OPT_PERPLEXITY: o->perplexity = optarg; o->mode = MODE_QUALITY; break;
		case OPT_KL_BASE: o->kl_base = optarg; break;
		case OPT_KL_DIVERGENCE: o->kl_div = optarg; o->mode = MODE_QUALITY; break;
		case 'h': usage(stdout); exit(EXIT_OK);
		case 'V': q42_cli_version("q42run (q42)"); exit(EXIT_OK);
		default:
			fputs("Try 'q42run --help'.\n", stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc)
		return bad_usage("unexpected argument '%s'", argv[optind]);
	if (o->mode == MODE_DEVICES)
		return EXIT_OK;
	if (o->mode == MODE_CERTIFY) {
		if (o->eo.backend == Q42_BACKEND_AUTO)
			return bad_usage("--certify: name the backend, --backend cpu or vulkan");
		if (o->eo.device >= 0 && o->eo.backend != Q42_BACKEND_VULKAN)
			return bad_usage("--device needs --backend vulkan");
		return EXIT_OK;
	}
	if (o->model == NULL)
		return bad_usage("no model: use -m MODEL");
	if (o->prompt != NULL && o->file != NULL)
		return bad_usage("-p and -f are mutually exclusive");
	if (o->record && o->mode != MODE_GENERATE && o->mode != MODE_CHOICES)
		return bad_usage("--record applies to generation and --choices, not to --tokenize,"
				 " --detokenize or --logits-for");
	if (o->choices != NULL && o->choices_file != NULL)
		return bad_usage("--choices and --choices-file are mutually exclusive");
	if ((o->choices || o->choices_file) && o->logits_for)
		return bad_usage("--choices and --logits-for are mutually exclusive");
	if (o->kl_base != NULL && o->perplexity == NULL)
		return bad_usage("--kl-base needs --perplexity FILE");
	if (o->kl_base != NULL && o->kl_div != NULL)
		return bad_usage("--kl-base and --kl-divergence are mutually exclusive");
	if (o->mode == MODE_QUALITY && (o->prompt || o->file || o->record || o->lines ||
					o->choices || o->choices_file || o->logits_for))
		return bad_usage("--perplexity and --kl-divergence take no prompt and do not combine"
				 " with --record, --lines, --choices or --logits-for");
	if (o->mode == MODE_BENCH && strcmp(o->model, "-") == 0)
		return bad_usage("--bench mounts the model once per repetition: give a file, not"
				 " standard input");
	if (o->eo.device >= 0 && o->eo.backend == Q42_BACKEND_CPU)
		return bad_usage("--device needs --backend vulkan or auto");
	if (o->sieve != NULL && o->grammar != NULL)
		return bad_usage("--sieve and --grammar are mutually exclusive");
	if ((o->sieve || o->grammar) && o->n_stops > 0)
		return bad_usage("--stop cannot be combined with --sieve or --grammar");
	if ((o->sieve || o->grammar || o->sentinel) && o->mode != MODE_GENERATE)
		return bad_usage("--sentinel, --sieve and --grammar apply to generation only");
	return EXIT_OK;
}

/* As every program (q42_cli_status), with q42run's own status for memory. */
static int exit_for_load(int rc)
{
	return rc == Q42_ENOMEM ? EXIT_NOMEM : q42_cli_status(rc);
}

/* Open the engine of o on m, printing what went wrong: an error, or a
 * weight the backend had to convert -- a warning, an error under
 * --strict. */
static int engine_open(const struct opts *o, q42_mount *m, q42_engine **e)
{
	q42_err err = {0};
	int rc = q42_engine_open(e, m, &o->eo, &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: %s\n", err.msg);
		return exit_for_load(rc);
	}
	if (q42_engine_n_fallbacks(*e) > 0) {
		fprintf(stderr, "q42run: %s%s\n", o->strict ? "--strict: " : "warning: ",
			q42_engine_fallback_note(*e));
		if (o->strict) {
			q42_engine_close(*e);
			*e = NULL;
			return EXIT_REQUEST;
		}
	}
	return EXIT_OK;
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
	uint64_t n_bytes = 0, n_tokens = 0;
	const double t0 = now_ms();
	int ex = EXIT_OK;

	q42_buf_init(&line);
	while (ex == EXIT_OK && input_next(in, o->lines, &p, &n)) {
		q42_tokens t = {0};
		int rc = q42_tokenizer_encode(tok, p, n, flags, &t, &err);
		n_bytes += n;
		n_tokens += t.n;
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
	if (o->timings && ex == EXIT_OK) {
		/* as llamapeer tokfile counts: encoding and printing, not the load */
		const double ms = now_ms() - t0;
		fprintf(stderr,
			"q42run: timings: tokenize_ms=%.3f bytes=%llu tokens=%llu tokenize_mb_s=%.2f\n",
			ms, (unsigned long long)n_bytes, (unsigned long long)n_tokens,
			ms > 0 ? (double)n_bytes / 1e6 / (ms / 1e3) : 0.0);
	}
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

static void print_timings(double load_ms, bool first, const q42_result *r,
			  const q42_request *rq, const q42_engine *e)
{
	fprintf(stderr,
		"q42run: timings: load_ms=%.3f tokenize_ms=%.3f prefill_ms=%.3f ttft_ms=%.3f"
		" prompt_tokens=%zu prefill_tok_s=%.2f decode_ms=%.3f decode_steps=%u"
		" decode_tok_s=%.2f generated=%zu stop=%s",
		load_ms, r->tokenize_ms, r->prefill_ms,
		(first ? load_ms : 0.0) + r->tokenize_ms + r->prefill_ms, r->prompt.n,
		r->prefill_ms > 0 ? (double)r->prompt.n / (r->prefill_ms / 1e3) : 0.0, r->decode_ms,
		r->n_decode, r->decode_ms > 0 ? (double)r->n_decode / (r->decode_ms / 1e3) : 0.0,
		r->out.n, q42_stop_name(r->stop));
	if (rq->sieve != NULL)
		fprintf(stderr, " sieve_ms=%.3f", r->sieve_ms);
	if (rq->sentinel != NULL)
		fprintf(stderr, " interventions=%zu", r->n_iv);
	fprintf(stderr, " backend=%s", q42_backend_name(q42_engine_backend(e)));
	if (q42_engine_backend(e) != Q42_BACKEND_CPU)
		fprintf(stderr, " device_ms=%.3f device=\"%s\"", q42_engine_device_ms(e),
			q42_engine_device_name(e));
	fputc('\n', stderr);
}

/* The sieve of --sieve or --grammar: its grammar, its name and digest. */
struct sieve_setup {
	q42_grammar *g;
	q42_sieve *sv;
	const char *name;
	char sha[Q42_SHA256_HEX_LEN + 1];
};

static int sieve_open(const struct opts *o, const q42_tokenizer *tok, struct sieve_setup *ss)
{
	q42_map m = {0};
	q42_err err = {0};
	const char *src;
	size_t n;
	uint8_t d[Q42_SHA256_LEN];
	int rc, ex = EXIT_OK;

	m.fd = -1;
	if (o->grammar != NULL) {
		rc = q42_map_open(&m, o->grammar, 0, &err);
		if (rc != Q42_OK) {
			fprintf(stderr, "q42run: --grammar: %s\n", err.msg);
			return rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_IO;
		}
		if (m.size > Q42_GRAMMAR_MAX_BYTES) {
			fprintf(stderr, "q42run: --grammar: %s: %llu bytes, the limit is %u\n", o->grammar,
				(unsigned long long)m.size, Q42_GRAMMAR_MAX_BYTES);
			ex = EXIT_USAGE;
			goto done;
		}
		src = m.data ? (const char *)m.data : "";
		n = (size_t)m.size;
		ss->name = o->grammar;
	} else {
		src = q42_grammar_quin_source();
		n = strlen(src);
		ss->name = "quin";
	}
	rc = q42_sha256(src, n, d, &err);
	if (rc == Q42_OK)
		rc = q42_grammar_compile(&ss->g, src, n, ss->name, &err);
	if (rc == Q42_OK)
		rc = q42_sieve_open(&ss->sv, ss->g, tok, &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: --grammar: %s\n", err.msg);
		ex = rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_USAGE;
		goto done;
	}
	q42_hex_encode(d, sizeof d, ss->sha);
done:
	if (m.path != NULL)
		q42_map_close(&m);
	return ex;
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
	q42_sentinel *sen = NULL;
	struct sieve_setup ss = {0};
	int rc, ex = EXIT_OK;

	q42_buf_init(&rec);
	if (o->sentinel != NULL) {
		rc = q42_sentinel_open(&sen, o->sentinel, q42_mount_tokenizer(m), &err);
		if (rc != Q42_OK) {
			fprintf(stderr, "q42run: --sentinel: %s\n", err.msg);
			ex = rc == Q42_EIO ? EXIT_IO : rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_USAGE;
			goto done;
		}
	}
	if (o->sieve != NULL || o->grammar != NULL) {
		ex = sieve_open(o, q42_mount_tokenizer(m), &ss);
		if (ex != EXIT_OK)
			goto done;
	}
	ex = engine_open(o, m, &e);
	if (ex != EXIT_OK)
		goto done;
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
			.sentinel = sen, .sieve = ss.sv, .parse_quin = o->sieve != NULL,
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
				.sieve_name = ss.sv ? ss.name : NULL, .sieve_sha256 = ss.sha,
				.sieve_states = ss.g ? q42_grammar_n_states(ss.g) : 0,
				.intent = o->intent, .scope = o->scope, .record_prompt = o->record_prompt,
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
		/* a misaligned sieve still reports what it cost */
		if (o->timings && (rc == Q42_OK || (ss.sv != NULL && r.decode_ms > 0)))
			print_timings(load_ms, idx == 0, &r, &rq, e);
		if (sink.failed)
			ex = EXIT_IO;
		q42_result_free(&r);
		idx++;
	}
done:
	q42_buf_free(&rec);
	q42_sampler_close(s);
	q42_engine_close(e);
	q42_sentinel_close(sen);
	q42_sieve_close(ss.sv);
	q42_grammar_free(ss.g);
	return ex;
}

/* --logits-for: "ID,ID,..." against the vocabulary size. */
static int parse_ids(const char *s, uint32_t nv, int32_t **out, uint32_t *n_out)
{
	uint32_t n = 1, k = 0;
	int32_t *ids;
	for (const char *p = s; *p; p++)
		n += *p == ',';
	if (n > Q42_LOGITS_FOR_MAX) {
		fprintf(stderr, "q42run: --logits-for: more than %u ids\n", Q42_LOGITS_FOR_MAX);
		return EXIT_USAGE;
	}
	ids = malloc(n * sizeof *ids);
	if (ids == NULL)
		return EXIT_NOMEM;
	for (const char *p = s;; p++) {
		char *end;
		unsigned long v;
		errno = 0;
		v = strtoul(p, &end, 10);
		if (*p < '0' || *p > '9' || errno != 0 || (*end != ',' && *end != '\0') || v >= nv) {
			fprintf(stderr, "q42run: --logits-for '%s': expected comma-separated token ids in 0..%u\n",
				s, nv - 1);
			free(ids);
			return EXIT_USAGE;
		}
		ids[k++] = (int32_t)v;
		p = end;
		if (*end == '\0')
			break;
	}
	*out = ids;
	*n_out = k;
	return EXIT_OK;
}

/* --choices / --choices-file and --logits-for: score the prompt, print. */
static int run_score(const struct opts *o, q42_mount *m, struct input *in, double t_start)
{
	q42_engine *e = NULL;
	const q42_model_ident *ident = NULL;
	q42_err err = {0};
	q42_buf out;
	q42_map cf = {0};
	q42_choice *ch = NULL;
	uint32_t n_ch = 0, n_ids = 0;
	int32_t *ids = NULL;
	const char *p;
	size_t n;
	uint64_t idx = 0;
	double load_ms;
	int rc, ex = EXIT_OK;

	cf.fd = -1;
	q42_buf_init(&out);
	if (o->choices_file != NULL) {
		rc = q42_map_open(&cf, o->choices_file, 0, &err);
		if (rc != Q42_OK) {
			fprintf(stderr, "q42run: --choices-file: %s\n", err.msg);
			ex = rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_IO;
			goto done;
		}
		rc = q42_choices_split(cf.data ? (const char *)cf.data : "", (size_t)cf.size, '\n', &ch,
				       &n_ch, &err);
	} else if (o->choices != NULL) {
		rc = q42_choices_split(o->choices, strlen(o->choices), ',', &ch, &n_ch, &err);
	} else {
		rc = parse_ids(o->logits_for, q42_tokenizer_n_vocab(q42_mount_tokenizer(m)), &ids, &n_ids);
		if (rc != EXIT_OK) {
			ex = rc;
			goto done;
		}
	}
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: %s\n", err.msg);
		ex = rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_USAGE;
		goto done;
	}
	ex = engine_open(o, m, &e);
	if (ex != EXIT_OK)
		goto done;
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
			.prompt = p, .prompt_len = n, .add_special = !o->no_bos,
			.parse_special = !o->no_special, .strict = o->strict,
		};
		q42_result r;
		q42_result_init(&r);
		q42_buf_reset(&out);
		if (ch != NULL)
			rc = q42_choices_score(e, q42_mount_tokenizer(m), &rq, ch, n_ch, &r, &err);
		else
			rc = q42_prompt_eval(e, q42_mount_tokenizer(m), &rq, &r, &err);
		if (rc != Q42_OK) {
			fprintf(stderr, "q42run: request %llu: %s\n", (unsigned long long)idx, err.msg);
			ex = rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_REQUEST;
		} else if (o->record) {
			q42_sampling sp;
			q42_record_info ri = {
				.program = "q42run", .version = Q42_VERSION, .request_index = idx,
				.load_ms = load_ms, .model_path = o->model, .ident = ident,
				.engine = e, .sampling = &sp, .request = &rq, .result = &r,
				.choices = ch, .n_choices = n_ch,
				.intent = o->intent, .scope = o->scope, .record_prompt = o->record_prompt,
			};
			q42_sampling_default(&sp);
			rc = q42_record_append(&out, &ri, &err);
			if (rc != Q42_OK) {
				fprintf(stderr, "q42run: %s\n", err.msg);
				ex = EXIT_NOMEM;
			}
		} else if (ch != NULL) {
			for (uint32_t i = 0; i < n_ch; i++) {
				q42_buf_append(&out, ch[i].text, ch[i].len);
				q42_buf_printf(&out, "\t%.9g\t%.9g\n", ch[i].prob, ch[i].loglik);
			}
		} else {
			const float *l = q42_engine_logits(e);
			for (uint32_t i = 0; i < n_ids; i++)
				q42_buf_printf(&out, "%d\t%.9g\n", ids[i], (double)l[ids[i]]);
		}
		if (ex == EXIT_OK)
			ex = out.failed ? EXIT_NOMEM : write_out(out.data, out.len);
		q42_result_free(&r);
		idx++;
	}
done:
	q42_buf_free(&out);
	q42_choices_free(ch, n_ch);
	free(ids);
	if (cf.path != NULL)
		q42_map_close(&cf);
	q42_engine_close(e);
	return ex;
}

static void print_bench_json(const struct opts *o, const q42_engine *e, const char *dname,
			     double load_ms, const q42_bench_result *r, const q42_bench_ttft *tt,
			     const q42_bench_mem *mem)
{
	const q42_bench_opts *b = &o->bench;
	printf("{\"threads\":%u,\"isa\":\"%s\",\"arith\":\"%s\",\"backend\":\"%s\","
	       "\"device\":\"%s\",\"ctx\":%u,\"batch\":%u,"
	       "\"kv_type\":\"%s\",\"load_ms\":%.3f,\"reps\":%u,\"weight_bytes\":%llu,"
	       "\"pp\":{\"n\":%u,\"tok_s_median\":%.3f,\"tok_s_min\":%.3f,\"tok_s_max\":%.3f,"
	       "\"device_ms\":%.3f},"
	       "\"tg\":{\"n\":%u,\"tok_s_median\":%.3f,\"tok_s_min\":%.3f,\"tok_s_max\":%.3f,"
	       "\"weight_gb_s\":%.3f,\"device_ms\":%.3f,",
	       q42_engine_n_threads(e), q42_isa_name(q42_engine_isa(e)),
	       q42_arith_name(q42_engine_arith(e)), q42_backend_name(q42_engine_backend(e)), dname,
	       q42_engine_n_ctx(e), q42_engine_n_batch(e),
	       q42_dtype_get(q42_engine_kv_type(e))->name, load_ms, b->reps,
	       (unsigned long long)r->weight_bytes, b->n_pp, r->pp.median, r->pp.min, r->pp.max,
	       r->pp_device_ms, b->n_tg, r->tg.median, r->tg.min, r->tg.max, r->tg_gbps,
	       r->tg_device_ms);
	if (r->tg_stream_gbps > 0.0)
		printf("\"stream_gb_s\":%.3f,\"products_share\":%.4f,\"attention_share\":%.4f,",
		       r->tg_stream_gbps, r->tg_products_share, r->tg_attention_share);
	else
		printf("\"stream_gb_s\":null,\"products_share\":null,\"attention_share\":null,");
	if (r->tg_read_gbps > 0.0)
		printf("\"read_gb_s\":%.3f,\"vs_read\":%.4f,\"products_vs_read\":%.4f,", r->tg_read_gbps,
		       r->tg_vs_read, r->tg_products_vs_read);
	else
		printf("\"read_gb_s\":null,\"vs_read\":null,\"products_vs_read\":null,");
	if (r->tg_read_ops_gbps > 0.0)
		printf("\"read_ops_gb_s\":%.3f},", r->tg_read_ops_gbps);
	else
		printf("\"read_ops_gb_s\":null},");
	if (b->n_pp > 0)
		printf("\"ttft\":{\"n\":%u,\"ms_median\":%.3f,\"ms_min\":%.3f,\"ms_max\":%.3f,"
		       "\"ms_first\":%.3f,\"load_ms_median\":%.3f,\"prefill_ms_median\":%.3f,"
		       "\"first_token\":%d},",
		       b->n_pp, tt->ttft_ms.median, tt->ttft_ms.min, tt->ttft_ms.max,
		       tt->first_ttft_ms, tt->load_ms.median, tt->prefill_ms.median,
		       (int)tt->first_token);
	else
		printf("\"ttft\":null,");
	uint64_t huge;
	printf("\"memory\":{\"peak_rss_bytes\":%llu,", (unsigned long long)q42_peak_rss_bytes());
	if (q42_anon_huge_bytes(&huge))
		printf("\"anon_huge_bytes\":%llu,", (unsigned long long)huge);
	else
		printf("\"anon_huge_bytes\":null,");
	printf("\"kv_bytes\":%llu,\"act_bytes\":%llu,\"scratch_bytes\":%llu}}\n",
	       (unsigned long long)mem->kv_bytes, (unsigned long long)mem->act_bytes,
	       (unsigned long long)mem->scratch_bytes);
}

static double mib(uint64_t n)
{
	return (double)n / 1048576.0;
}

/* --bench: no prompt is read; one line of key=value pairs, or JSON. Time
 * to first token goes first, so its first repetition is this process's
 * first mount; the throughput runs then share one mount. */
static int run_bench(const struct opts *o)
{
	q42_mount *m = NULL;
	q42_engine *e = NULL;
	q42_err err = {0};
	q42_bench_result r;
	q42_bench_ttft tt;
	q42_bench_mem mem;
	double t_start, load_ms;
	int rc, ex = EXIT_OK;

	memset(&tt, 0, sizeof tt);
	if (o->bench.n_pp > 0) {
		const q42_bench_ttft_opts to = {o->model, &o->eo, o->bench.n_pp, o->bench.reps,
						o->bench.seed};
		rc = q42_bench_ttft_run(&to, &tt, &err);
		if (rc != Q42_OK) {
			fprintf(stderr, "q42run: %s\n", err.msg);
			return rc == Q42_EARG ? EXIT_USAGE : exit_for_load(rc);
		}
	}
	t_start = now_ms();
	rc = q42_mount_open(&m, o->model, 0, &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: %s\n", err.msg);
		return exit_for_load(rc);
	}
	ex = engine_open(o, m, &e);
	if (ex != EXIT_OK)
		goto done;
	load_ms = now_ms() - t_start;
	/* the weights a device pass reads are in device memory */
	q42_bench_opts bo = o->bench;
	bo.read_pass = q42_engine_backend(e) == Q42_BACKEND_CPU;
	rc = q42_bench_run(e, &bo, &r, &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: %s\n", err.msg);
		ex = rc == Q42_ENOMEM ? EXIT_NOMEM : rc == Q42_EARG ? EXIT_USAGE : EXIT_REQUEST;
		goto done;
	}
	q42_bench_mem_measure(e, &mem);
	const bool dev = q42_engine_backend(e) != Q42_BACKEND_CPU;
	char dname[256];
	/* the device name goes into JSON and a quoted field: keep it plain */
	snprintf(dname, sizeof dname, "%s", q42_engine_device_name(e));
	for (char *c = dname; *c; c++)
		if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20)
			*c = '?';
	uint64_t huge;
	char huge_mib[32] = "-";
	if (q42_anon_huge_bytes(&huge))
		snprintf(huge_mib, sizeof huge_mib, "%.1f", mib(huge));
	char stream[96] = "tg_stream_gb_s=- tg_mm_pct=- tg_att_pct=-";
	if (r.tg_stream_gbps > 0.0)
		snprintf(stream, sizeof stream, "tg_stream_gb_s=%.2f tg_mm_pct=%.1f tg_att_pct=%.1f",
			 r.tg_stream_gbps, 100.0 * r.tg_products_share, 100.0 * r.tg_attention_share);
	char read[128] = "tg_read_gb_s=- tg_vs_read=- tg_mm_vs_read=- tg_read_ops_gb_s=-", ops[32] = "-";
	if (r.tg_read_ops_gbps > 0.0)
		snprintf(ops, sizeof ops, "%.2f", r.tg_read_ops_gbps);
	if (r.tg_read_gbps > 0.0)
		snprintf(read, sizeof read,
			 "tg_read_gb_s=%.2f tg_vs_read=%.3f tg_mm_vs_read=%.3f tg_read_ops_gb_s=%s",
			 r.tg_read_gbps, r.tg_vs_read, r.tg_products_vs_read, ops);
	if (o->json)
		print_bench_json(o, e, dname, load_ms, &r, &tt, &mem);
	else
		printf("pp_tok_s=%.2f pp_min=%.2f pp_max=%.2f tg_tok_s=%.2f tg_min=%.2f tg_max=%.2f "
		       "tg_weight_gb_s=%.2f %s %s ttft_ms=%.2f ttft_min=%.2f ttft_max=%.2f ttft_first_ms=%.2f "
		       "ttft_load_ms=%.2f ttft_prefill_ms=%.2f peak_rss_mib=%.1f huge_mib=%s kv_mib=%.1f "
		       "act_mib=%.1f scratch_mib=%.2f pp=%u tg=%u reps=%u threads=%u ctx=%u isa=%s "
		       "backend=%s",
		       r.pp.median, r.pp.min, r.pp.max, r.tg.median, r.tg.min, r.tg.max, r.tg_gbps,
		       stream, read, tt.ttft_ms.median, tt.ttft_ms.min, tt.ttft_ms.max, tt.first_ttft_ms,
		       tt.load_ms.median, tt.prefill_ms.median, mib(q42_peak_rss_bytes()), huge_mib,
		       mib(mem.kv_bytes), mib(mem.act_bytes), mib(mem.scratch_bytes), o->bench.n_pp,
		       o->bench.n_tg, o->bench.reps, q42_engine_n_threads(e), q42_engine_n_ctx(e),
		       q42_isa_name(q42_engine_isa(e)), q42_backend_name(q42_engine_backend(e)));
	if (!o->json && dev)
		printf(" pp_device_ms=%.3f tg_device_ms=%.3f device=\"%s\"", r.pp_device_ms,
		       r.tg_device_ms, dname);
	if (!o->json)
		putchar('\n');
	ex = finish_stdout() != EXIT_OK ? EXIT_IO : EXIT_OK;
done:
	q42_engine_close(e);
	q42_mount_close(m);
	return ex;
}

static void on_chunk(void *ud, uint32_t chunk, uint32_t n_chunks, double ppl)
{
	(void)ud;
	printf("[%u]%.4f,%s", chunk, ppl, chunk == n_chunks ? "\n" : "");
	fflush(stdout);
}

/* --perplexity [--kl-base] and --kl-divergence: windows as llama-perplexity
 * (q42run(1), QUALITY); the KL-base file is only renamed into place once
 * the whole run succeeded. */
static int run_quality(struct opts *o, q42_mount *m)
{
	const q42_tokenizer *tok = q42_mount_tokenizer(m);
	q42_engine *e = NULL;
	q42_klbase *base = NULL;
	q42_map text = {0};
	q42_tokens ids = {0};
	q42_outfile out = {0};
	bool out_open = false;
	q42_quality_report r;
	q42_buf rep;
	q42_err err = {0};
	int rc, ex = EXIT_OK;

	text.fd = -1;
	q42_buf_init(&rep);
	if (o->kl_div != NULL) {
		rc = q42_klbase_open(&base, o->kl_div, &err);
		if (rc != Q42_OK) {
			fprintf(stderr, "q42run: --kl-divergence: %s\n", err.msg);
			ex = rc == Q42_EIO ? EXIT_IO : rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_USAGE;
			goto done;
		}
		if (o->eo.n_ctx == 0)
			o->eo.n_ctx = q42_klbase_n_ctx(base);
	}
	if (o->perplexity != NULL) {
		rc = q42_map_open(&text, o->perplexity, 0, &err);
		if (rc == Q42_OK)
			rc = q42_quality_tokenize(tok, text.data ? (const char *)text.data : "",
						  (size_t)text.size, &ids, &err);
		if (rc != Q42_OK) {
			fprintf(stderr, "q42run: --perplexity: %s\n", err.msg);
			ex = rc == Q42_EIO ? EXIT_IO : rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_REQUEST;
			goto done;
		}
	}
	ex = engine_open(o, m, &e);
	if (ex != EXIT_OK)
		goto done;
	if (o->kl_base != NULL) {
		rc = q42_outfile_open(&out, o->kl_base, &err);
		if (rc != Q42_OK) {
			fprintf(stderr, "q42run: --kl-base: %s\n", err.msg);
			ex = rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_IO;
			goto done;
		}
		out_open = true;
	}
	q42_quality_job job = {
		.ids = o->perplexity ? ids.ids : NULL, .n_ids = ids.n,
		.n_ctx = q42_engine_n_ctx(e),
		.base_out = out_open ? out.fp : NULL, .base = base, .on_chunk = on_chunk,
	};
	rc = q42_quality_run(e, tok, &job, &r, &err);
	if (rc == Q42_OK && out_open) {
		rc = q42_outfile_commit(&out, &err);
		out_open = false;
	}
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: %s\n", err.msg);
		ex = rc == Q42_EIO ? EXIT_IO : rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_REQUEST;
		goto done;
	}
	if (!r.has_kl)
		printf("Final estimate: PPL = %.4f +/- %.5f\n", r.ppl, r.ppl_err);
	else if (!q42_quality_report_format(&r, &rep))
		ex = EXIT_NOMEM;
	else
		ex = write_out(rep.data, rep.len);
	if (ex == EXIT_OK)
		ex = finish_stdout();
done:
	if (out_open)
		q42_outfile_abort(&out);
	q42_buf_free(&rep);
	q42_tokens_free(&ids);
	if (text.path != NULL)
		q42_map_close(&text);
	q42_klbase_close(base);
	q42_engine_close(e);
	return ex;
}

/* s as a JSON string: quotes, backslashes and control bytes escaped. */
static void put_json_str(const char *s)
{
	putchar('"');
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* --list-devices: the Vulkan devices in the loader's order. Without a
 * Vulkan build or a device: the reason on stderr, exit 3 (the backend is
 * unavailable, as for --backend vulkan). */
static int run_list_devices(bool json)
{
	q42_err err = {0};
	q42_vk_device_info *info = NULL;
	uint32_t n = 0;
	int rc = q42_vk_devices(NULL, 0, &n, &err);
	if (rc == Q42_OK) {
		info = calloc(n, sizeof *info);
		rc = info == NULL ? q42_err_set(&err, Q42_ENOMEM, "out of memory")
				  : q42_vk_devices(info, n, &n, &err);
	}
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: --list-devices: %s\n", err.msg);
		free(info);
		return rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_IO;
	}
	for (uint32_t i = 0; i < n; i++) {
		const q42_vk_device_info *d = &info[i];
		unsigned maj = d->api_version >> 22 & 0x7f, min = d->api_version >> 12 & 0x3ff,
			 pat = d->api_version & 0xfff;
		if (json) {
			printf("{\"index\":%u,\"type\":\"%s\",\"name\":", d->index,
			       q42_vk_devtype_name(d->type));
			put_json_str(d->name);
			printf(",\"driver\":");
			put_json_str(d->driver);
			printf(",\"vulkan\":\"%u.%u.%u\",\"device_local_bytes\":%llu,"
			       "\"subgroup_size\":%u,\"fp16\":%s,\"int8\":%s,\"storage16\":%s,"
			       "\"storage8\":%s}\n",
			       maj, min, pat, (unsigned long long)d->device_local_bytes, d->subgroup_size,
			       d->fp16 ? "true" : "false", d->int8 ? "true" : "false",
			       d->storage16 ? "true" : "false", d->storage8 ? "true" : "false");
		} else {
			printf("%u\t%s\t%s\tdriver=%s\tvulkan=%u.%u.%u\tlocal=%.1fGiB\tsubgroup=%u"
			       "\tfp16=%s\tint8=%s\n",
			       d->index, q42_vk_devtype_name(d->type), d->name, d->driver, maj, min, pat,
			       (double)d->device_local_bytes / (1024.0 * 1024.0 * 1024.0),
			       d->subgroup_size, d->fp16 ? "yes" : "no", d->int8 ? "yes" : "no");
		}
	}
	free(info);
	return finish_stdout();
}

struct certify_out {
	bool json;
	uint32_t n;
};

static void certify_line(const q42_certify_result *r, void *arg)
{
	struct certify_out *c = arg;
	c->n++;
	if (c->json) {
		printf("{\"kernel\":");
		put_json_str(r->kernel);
		printf(",\"shape\":");
		put_json_str(r->shape);
		/* an infinite error (a NaN seen) has no JSON number: null */
		if (isfinite(r->max_abs) && isfinite(r->max_rel))
			printf(",\"max_abs\":%.6g,\"max_rel\":%.6g", r->max_abs, r->max_rel);
		else
			printf(",\"max_abs\":null,\"max_rel\":null");
		printf(",\"tol_abs\":%.6g,\"tol_rel\":%.6g,\"pass\":%s}\n", r->tol_abs, r->tol_rel,
		       r->pass ? "true" : "false");
	} else {
		printf("%-22s %-50s max_abs=%-10.3g max_rel=%-10.3g tol_abs=%-9.3g tol_rel=%-9.3g %s\n",
		       r->kernel, r->shape, r->max_abs, r->max_rel, r->tol_abs, r->tol_rel,
		       r->pass ? "PASS" : "FAIL");
	}
}

/* --certify: every case on stdout, a summary; exit 1 when a case failed,
 * 3 when the backend is unavailable (as for --backend vulkan). */
static int run_certify(const struct opts *o)
{
	struct certify_out c = {o->json, 0};
	q42_err err = {0};
	uint32_t n_fail = 0;
	int rc = q42_certify_run(o->eo.backend_ops, o->eo.backend, o->eo.device, o->sp.seed, certify_line, &c, &n_fail,
				 &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: --certify --backend %s: %s\n", q42_backend_name(o->eo.backend),
			err.msg);
		return rc == Q42_EARG ? EXIT_USAGE : rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_IO;
	}
	if (o->json)
		printf("{\"summary\":true,\"backend\":\"%s\",\"seed\":%llu,\"cases\":%u,\"failed\":%u}\n",
		       q42_backend_name(o->eo.backend), (unsigned long long)o->sp.seed, c.n, n_fail);
	else
		printf("certify: backend=%s seed=%llu cases=%u failed=%u: %s\n",
		       q42_backend_name(o->eo.backend), (unsigned long long)o->sp.seed, c.n, n_fail,
		       n_fail == 0 ? "PASS" : "FAIL");
	const int ex = finish_stdout();
	return ex != EXIT_OK ? ex : n_fail == 0 ? EXIT_OK : EXIT_MODEL;
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
	if (o.mode == MODE_DEVICES)
		return run_list_devices(o.json);
	if (o.mode == MODE_CERTIFY)
		return run_certify(&o);
	/* a backend that cannot exist here is said before the model loads */
	if (o.mode != MODE_TOKENIZE && o.mode != MODE_DETOKENIZE) {
		rc = q42_backend_check(o.eo.backend_ops, o.eo.backend, o.eo.device, &err);
		if (rc != Q42_OK) {
			fprintf(stderr, "q42run: --backend %s: %s\n", q42_backend_name(o.eo.backend),
				err.msg);
			return rc == Q42_EARG ? EXIT_USAGE : rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_IO;
		}
	}
	if (o.mode == MODE_BENCH)
		return run_bench(&o);
	t_start = now_ms();
	rc = q42_mount_open(&m, o.model,
			    o.mode == MODE_TOKENIZE || o.mode == MODE_DETOKENIZE ? Q42_MOUNT_VOCAB_ONLY : 0,
			    &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: %s\n", err.msg);
		return exit_for_load(rc);
	}
	if (o.mode == MODE_QUALITY) {
		ex = run_quality(&o, m);
		q42_mount_close(m);
		return ex;
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
	else if (o.mode == MODE_CHOICES || o.mode == MODE_LOGITS)
		ex = run_score(&o, m, &in, t_start);
	else
		ex = run_generate(&o, m, &in, t_start);
	if (ex == EXIT_OK || ex == EXIT_REQUEST)
		ex = finish_stdout() != EXIT_OK ? EXIT_IO : ex;
	input_close(&in);
	q42_mount_close(m);
	return ex;
}
