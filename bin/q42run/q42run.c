/* q42run.c -- run a model on the CPU or a Vulkan device: generate text
 * (optionally under the Sentinel's rules and a grammar sieve), score fixed
 * options, print chosen logits, tokenize and detokenize, benchmark, measure
 * perplexity, list devices, certify kernels.
 *
 * This file parses the options and dispatches to the mode's file (see
 * q42run.h); the mount, engine, request loop and records are libq42. Exit
 * statuses and output formats are specified in q42run(1) and
 * q42-record(5); keep them in step.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bin/q42run/q42run.h"
#include "bin/cli/q42_cli.h"
#include "common/q42_types.h"
#include "common/q42_utf8.h"
#include "run/q42_embed.h"
#include "vulkan/q42_vk.h"

enum {
	OPT_BENCH = 200, OPT_PP, OPT_TG, OPT_DEPTH, OPT_REPS, OPT_JSON,
	OPT_DEADLINE = 256, OPT_STOP, OPT_IGNORE_EOS, OPT_KV_TYPE, OPT_FLASH_ATTN, OPT_ISA, OPT_ARITH, OPT_TEMP, OPT_TOP_K, OPT_TOP_P,
	OPT_MIN_P, OPT_REPEAT_PENALTY, OPT_REPEAT_LAST_N, OPT_SEED, OPT_NO_BOS, OPT_NO_SPECIAL,
	OPT_TOKENIZE, OPT_DETOKENIZE, OPT_LINES, OPT_RECORD, OPT_STRICT, OPT_TIMINGS,
	OPT_SENTINEL, OPT_CHOICES, OPT_CHOICES_FILE, OPT_LOGITS_FOR, OPT_SIEVE, OPT_GRAMMAR,
	OPT_INTENT, OPT_SCOPE, OPT_RECORD_PROMPT, OPT_PERPLEXITY, OPT_KL_BASE, OPT_KL_DIVERGENCE,
	OPT_BACKEND, OPT_DEVICE, OPT_NO_HUGE_PAGES,
	OPT_LIST_DEVICES,
	OPT_CERTIFY, OPT_LORA,
	OPT_NO_REUSE, OPT_JSONL, OPT_DECISIONS, OPT_CHAT, OPT_SYSTEM, OPT_CHAT_TEMPLATE, OPT_CACHE_BYTES, OPT_STATE_SAVE, OPT_STATE_LOAD,
	OPT_EMBED, OPT_POOLING, OPT_EMBD_NORMALIZE, OPT_DIMS, OPT_TASK, OPT_EMBED_FORMAT, OPT_COLBERT,
	OPT_RANK, OPT_DOCS, OPT_MAX_MEMORY,
};

static const struct option long_opts[] = {
	{"model", required_argument, NULL, 'm'},
	{"prompt", required_argument, NULL, 'p'},
	{"file", required_argument, NULL, 'f'},
	{"max-tokens", required_argument, NULL, 'n'},
	{"deadline", required_argument, NULL, OPT_DEADLINE},
	{"stop", required_argument, NULL, OPT_STOP},
	{"ignore-eos", no_argument, NULL, OPT_IGNORE_EOS},
	{"threads", required_argument, NULL, 't'},
	{"batch", required_argument, NULL, 'b'},
	{"ctx", required_argument, NULL, 'c'},
	{"kv-type", required_argument, NULL, OPT_KV_TYPE},
	{"flash-attn", required_argument, NULL, OPT_FLASH_ATTN},
	{"isa", required_argument, NULL, OPT_ISA},
	{"arith", required_argument, NULL, OPT_ARITH},
	{"backend", required_argument, NULL, OPT_BACKEND},
	{"device", required_argument, NULL, OPT_DEVICE},
	{"no-huge-pages", no_argument, NULL, OPT_NO_HUGE_PAGES},
	{"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
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
	{"depth", required_argument, NULL, OPT_DEPTH},
	{"reps", required_argument, NULL, OPT_REPS},
	{"json", no_argument, NULL, OPT_JSON},
	{"perplexity", required_argument, NULL, OPT_PERPLEXITY},
	{"kl-base", required_argument, NULL, OPT_KL_BASE},
	{"kl-divergence", required_argument, NULL, OPT_KL_DIVERGENCE},
	{"lora", required_argument, NULL, OPT_LORA},
	{"no-reuse", no_argument, NULL, OPT_NO_REUSE},
	{"jsonl", no_argument, NULL, OPT_JSONL},
	{"decisions", no_argument, NULL, OPT_DECISIONS},
	{"chat", no_argument, NULL, OPT_CHAT},
	{"system", required_argument, NULL, OPT_SYSTEM},
	{"chat-template", required_argument, NULL, OPT_CHAT_TEMPLATE},
	{"cache-bytes", required_argument, NULL, OPT_CACHE_BYTES},
	{"state-save", required_argument, NULL, OPT_STATE_SAVE},
	{"state-load", required_argument, NULL, OPT_STATE_LOAD},
	{"embed", no_argument, NULL, OPT_EMBED},
	{"pooling", required_argument, NULL, OPT_POOLING},
	{"embd-normalize", required_argument, NULL, OPT_EMBD_NORMALIZE},
	{"dims", required_argument, NULL, OPT_DIMS},
	{"task", required_argument, NULL, OPT_TASK},
	{"embed-format", required_argument, NULL, OPT_EMBED_FORMAT},
	{"colbert", required_argument, NULL, OPT_COLBERT},
	{"rank", required_argument, NULL, OPT_RANK},
	{"docs", required_argument, NULL, OPT_DOCS},
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
	      "      --ignore-eos        never choose an end-of-generation token: generate\n"
	      "                          until -n, --deadline, --stop or the context ends it\n"
	      "  -t, --threads N         worker threads (default: online cores)\n"
	      "  -b, --batch N           prompt tokens per prefill pass (default 512)\n"
	      "  -c, --ctx N             context size (default: model's, at most 4096)\n"
	      "      --kv-type TYPE      KV cache type: f32 (default), f16, or q8_0 (with --flash-attn)\n"
	      "      --flash-attn MODE   attention as llama.cpp's flash attention computes it:\n"
	      "                          off (default), on, or auto (on where q42 has it)\n"
	      "      --max-memory BYTES  refuse (exit 5) a model whose weights, KV cache and\n"
	      "                          buffers would need more (default: physical memory;\n"
	      "                          0 = no limit)\n"
	      "      --isa ISA           kernels: best (default), scalar, avx2, avx512\n"
	      "      --arith MODE        rounding of matrix products: auto (default: llama.cpp's\n"
	      "                          on this CPU), portable (the same bits on every CPU),\n"
	      "                          llamacpp (also sapphirerapids), zen4 (AVX-512 with\n"
	      "                          BF16, no AMX; also cooperlake), icelake (AVX-512\n"
	      "                          without BF16; also skylakex, cascadelake,\n"
	      "                          cannonlake), haswell (AVX2 alone; also\n"
	      "                          alderlake) or ggml\n"
	      "      --lora FILE[:SCALE] apply the LoRA adapter in FILE (llama.cpp's GGUF\n"
	      "                          adapter) with SCALE (default 1; 0 leaves it out);\n"
	      "                          repeatable, up to 16\n"
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
	      "      --chat              render each prompt as the user's turn with the model's\n"
	      "                          chat template, as llama.cpp does (see q42run(1))\n"
	      "      --system TEXT       with --chat: the system message before it\n"
	      "      --chat-template NAME  with --chat: this template (a llama.cpp name such\n"
	      "                          as chatml, llama3, gemma, phi3, or a template text)\n"
	      "      --no-special        treat special-token text as plain text\n"
	      "      --tokenize          print the token ids of the input\n"
	      "      --detokenize        print the text of the token ids in the input\n"
	      "      --lines             one request per input line\n"
	      "      --jsonl             one JSON object per input line: {\"prompt\": TEXT}, or\n"
	      "                          {\"prefix\": TEXT, \"questions\": [TEXT, ...]}, a request\n"
	      "                          per question (prefix then question; the prefix's\n"
	      "                          state is computed once)\n"
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
	      "      --decisions         with --jsonl: score each request as the decision its\n"
	      "                          \"kind\" says: yesno, choice (\"options\": [...]) or\n"
	      "                          score (\"min\", \"max\"); with --choices, requests\n"
	      "                          without a kind score LIST\n"
	      "      --logits-for IDS    print the next-token logits of the comma-separated ids\n"
	      "      --no-reuse          evaluate every prompt from an empty cache (default: reuse\n"
	      "                          the state of a prefix shared with an earlier prompt\n"
	      "                          where a cold run computes it alike; the same bits)\n"
	      "      --cache-bytes N     keep at most N bytes of saved prefix states besides\n"
	      "                          the live cache (default 268435456; 0 = live cache only)\n"
	      "      --state-save FILE   after the last request, write its prompt's state (its\n"
	      "                          settled positions) to FILE, a q42-state(5) file\n"
	      "      --state-load FILE   start from the state in FILE; refused (exit 1) when made\n"
	      "                          for another model, --ctx, --batch, --kv-type, --arith\n"
	      "                          or --flash-attn\n"
	      "      --bench             measure prompt processing and generation tokens/s\n"
	      "                          (--pp N, default 128; --tg N, default 64; --reps R,\n"
	      "                          default 5; --depth D: with D tokens in the cache\n"
	      "                          first, default 0; --json for one JSON object)\n"
	      "      --perplexity FILE   perplexity of the model over FILE in windows of --ctx\n"
	      "                          tokens, as llama-perplexity computes it\n"
	      "      --kl-base OUT       with --perplexity: store the log-probs in OUT\n"
	      "      --kl-divergence BASE  KL divergence, delta-p and same-top rate against\n"
	      "                          the log-probs stored in BASE\n"
	      "      --embed             print the embedding vector(s) of each input (--lines:\n"
	      "                          of each line) instead of generating; with --bench:\n"
	      "                          texts/s embedding the lines of -f FILE (--reps R)\n"
	      "      --pooling P         none (one vector per token), mean, cls or last\n"
	      "                          (default: the model's)\n"
	      "      --embd-normalize N  none (-1), max-abs (0), taxicab (1), l2 (2, default)\n"
	      "                          or a p-norm (an integer p > 2)\n"
	      "      --dims N            keep the leading N values (Matryoshka), then normalise\n"
	      "      --task NAME         prefix the input with an EmbeddingGemma task prompt:\n"
	      "                          retrieval_query, retrieval_document,\n"
	      "                          question_answering, fact_verification,\n"
	      "                          classification, clustering, semantic_similarity,\n"
	      "                          code_retrieval, summarization or raw (none)\n"
	      "      --embed-format F    record (q42-record lines, default), tsv or f32 (raw\n"
	      "                          little-endian float32)\n"
	      "      --colbert KIND      ColBERT input: query (padded to 32 tokens) or\n"
	      "                          document (at most 512 tokens, punctuation dropped)\n"
	      "      --rank QUERY        rank the lines of --docs FILE against QUERY: cosine,\n"
	      "                          or MaxSim for a per-token (ColBERT) model\n"
	      "      --docs FILE         the documents of --rank, one per line\n"
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

/* The default --max-memory: the machine's physical memory (0, no limit,
 * when the system does not say). */
static uint64_t physical_memory(void)
{
	const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	int c;
	double d;
	uint32_t u;

	memset(o, 0, sizeof *o);
	o->max_tokens = Q42_GEN_MAX_TOKENS_DEFAULT;
	o->bench = (q42_bench_opts){.n_pp = 128, .n_tg = 64, .reps = 5};
	o->cache_bytes = Q42_PREFIX_CACHE_BYTES_DEFAULT;
	o->deadline = Q42_GEN_DEADLINE_DEFAULT;
	o->eo.isa = Q42_ISA_BEST;
	o->eo.arith = Q42_ARITH_AUTO;
	o->eo.device = -1;
	o->eo.backend_ops = q42_vk_backend();
	o->eo.max_memory = physical_memory();
	o->pooling = -1;
	o->normalize = 2;
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
			else if (strcmp(optarg, "q8_0") == 0)
				o->eo.kv_type = Q42_DTYPE_Q8_0;
			else
				return bad_usage("--kv-type '%s': expected f32, f16 or q8_0", optarg);
			break;
		case OPT_FLASH_ATTN:
			if (strcmp(optarg, "off") == 0)
				o->eo.flash_attn = Q42_FLASH_ATTN_OFF;
			else if (strcmp(optarg, "on") == 0)
				o->eo.flash_attn = Q42_FLASH_ATTN_ON;
			else if (strcmp(optarg, "auto") == 0)
				o->eo.flash_attn = Q42_FLASH_ATTN_AUTO;
			else
				return bad_usage("--flash-attn '%s': expected on, off or auto", optarg);
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
			if (!q42_arith_from_name(optarg, &o->eo.arith))
				return bad_usage("--arith '%s': expected " Q42_ARITH_NAMES, optarg);
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
		case OPT_IGNORE_EOS: o->ignore_eos = true; break;
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
		case OPT_EMBED: o->embed = true; break;
		case OPT_RANK: o->rank = optarg; o->mode = MODE_RANK; break;
		case OPT_DOCS: o->docs = optarg; break;
		case OPT_POOLING: {
			static const char *const names[] = {"none", "mean", "cls", "last"};
			o->pooling = -2;
			for (int32_t i = 0; i < 4; i++)
				if (strcmp(optarg, names[i]) == 0)
					o->pooling = i;
			if (o->pooling == -2)
				return bad_usage("--pooling '%s': expected none, mean, cls or last", optarg);
			break;
		}
		case OPT_EMBD_NORMALIZE:
			if (strcmp(optarg, "none") == 0 || strcmp(optarg, "-1") == 0)
				o->normalize = -1;
			else if (strcmp(optarg, "max-abs") == 0)
				o->normalize = 0;
			else if (strcmp(optarg, "taxicab") == 0)
				o->normalize = 1;
			else if (strcmp(optarg, "l2") == 0)
				o->normalize = 2;
			else if (q42_cli_u32(optarg, 0, 64, &u))
				o->normalize = (int32_t)u;
			else
				return bad_usage("--embd-normalize '%s': expected none, max-abs, taxicab, l2"
						 " or an integer in -1..64", optarg);
			break;
		case OPT_DIMS:
			if (!q42_cli_u32(optarg, 1, 1u << 20, &o->dims))
				return bad_usage("--dims '%s': expected an integer >= 1", optarg);
			break;
		case OPT_TASK:
			if (q42_embed_task_prefix(optarg) == NULL)
				return bad_usage("--task '%s': expected one of " Q42_EMBED_TASKS, optarg);
			o->task = optarg;
			break;
		case OPT_EMBED_FORMAT:
			if (strcmp(optarg, "record") == 0)
				o->embed_format = EMBED_RECORD;
			else if (strcmp(optarg, "tsv") == 0)
				o->embed_format = EMBED_TSV;
			else if (strcmp(optarg, "f32") == 0)
				o->embed_format = EMBED_F32;
			else
				return bad_usage("--embed-format '%s': expected record, tsv or f32", optarg);
			break;
		case OPT_COLBERT:
			if (strcmp(optarg, "query") == 0)
				o->colbert = 1;
			else if (strcmp(optarg, "document") == 0)
				o->colbert = 2;
			else
				return bad_usage("--colbert '%s': expected query or document", optarg);
			break;
		case OPT_LIST_DEVICES: o->mode = MODE_DEVICES; break;
		case OPT_CERTIFY: o->mode = MODE_CERTIFY; break;
		case OPT_PP:
		case OPT_TG:
		case OPT_DEPTH:
		case OPT_REPS: {
			char *end;
			unsigned long v;
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' || optarg[0] == '-' ||
			    v > (c == OPT_REPS ? Q42_BENCH_REPS_MAX : 1000000u) || (c == OPT_REPS && v == 0))
				return bad_usage("--%s '%s': expected an integer in %u..%u",
						 c == OPT_PP ? "pp" : c == OPT_TG ? "tg" : c == OPT_DEPTH ? "depth" : "reps", optarg,
						 c == OPT_REPS ? 1u : 0u,
						 c == OPT_REPS ? Q42_BENCH_REPS_MAX : 1000000u);
			*(c == OPT_PP ? &o->bench.n_pp : c == OPT_TG ? &o->bench.n_tg
			  : c == OPT_DEPTH ? &o->bench.depth : &o->bench.reps) = (uint32_t)v;
			break;
		}
		case OPT_JSON: o->json = true; break;
		case OPT_NO_REUSE: o->no_reuse = true; break;
		case OPT_JSONL: o->jsonl = true; break;
		case OPT_DECISIONS: o->decisions = true; o->mode = MODE_CHOICES; break;
		case OPT_CHAT: o->chat = true; break;
		case OPT_SYSTEM: o->system = optarg; break;
		case OPT_CHAT_TEMPLATE: o->chat_template = optarg; break;
		case OPT_MAX_MEMORY:
			if (!q42_cli_u64(optarg, &o->eo.max_memory))
				return bad_usage("--max-memory '%s': expected a number of bytes >= 0", optarg);
			break;
		case OPT_CACHE_BYTES:
			if (!q42_cli_u64(optarg, &o->cache_bytes))
				return bad_usage("--cache-bytes '%s': expected a number of bytes >= 0", optarg);
			break;
		case OPT_STATE_SAVE: o->state_save = optarg; break;
		case OPT_STATE_LOAD: o->state_load = optarg; break;
		case OPT_PERPLEXITY: o->perplexity = optarg; o->mode = MODE_QUALITY; break;
		case OPT_KL_BASE: o->kl_base = optarg; break;
		case OPT_KL_DIVERGENCE: o->kl_div = optarg; o->mode = MODE_QUALITY; break;
		case OPT_LORA:
			if (o->n_lora == Q42_LORA_MAX)
				return bad_usage("--lora: at most %u adapters", Q42_LORA_MAX);
			if (!q42_cli_lora(optarg, &o->lora_path[o->n_lora], &o->lora[o->n_lora].scale))
				return bad_usage("--lora '%s': expected FILE or FILE:SCALE, SCALE a number"
						 " within [-1e6, 1e6]", optarg);
			o->n_lora++;
			break;
		case 'h': usage(stdout); exit(EXIT_OK);
		case 'V': q42_cli_version("q42run (q42)"); exit(EXIT_OK);
		default:
			fputs("Try 'q42run --help'.\n", stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc)
		return bad_usage("unexpected argument '%s'", argv[optind]);
	if (o->embed && o->mode == MODE_GENERATE)
		o->mode = MODE_EMBED;
	else if (o->embed && o->mode != MODE_BENCH)
		return bad_usage("--embed combines with --bench only, not with another mode");
	if (o->embed && o->mode == MODE_BENCH && (o->file == NULL || o->prompt != NULL))
		return bad_usage("--bench --embed measures the texts of -f FILE, one per line");
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
	if (o->mode == MODE_BENCH && !o->embed && strcmp(o->model, "-") == 0)
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
	if ((o->system || o->chat_template) && !o->chat)
		return bad_usage("--system and --chat-template need --chat");
	if (o->chat && o->mode != MODE_GENERATE && o->mode != MODE_CHOICES && o->mode != MODE_LOGITS)
		return bad_usage("--chat applies to generation, --choices and --logits-for");
	if (o->decisions && !o->jsonl)
		return bad_usage("--decisions takes its kinds from --jsonl requests");
	if (o->decisions && o->logits_for)
		return bad_usage("--decisions and --logits-for are mutually exclusive");
	if (o->jsonl && o->lines)
		return bad_usage("--jsonl and --lines are mutually exclusive");
	if (o->jsonl && o->mode != MODE_GENERATE && o->mode != MODE_CHOICES && o->mode != MODE_LOGITS)
		return bad_usage("--jsonl applies to generation, --choices and --logits-for");
	if (o->no_reuse && (o->state_save || o->state_load))
		return bad_usage("--state-save and --state-load need prefix reuse: drop --no-reuse");
	if ((o->state_save || o->state_load) && o->mode != MODE_GENERATE && o->mode != MODE_CHOICES &&
	    o->mode != MODE_LOGITS)
		return bad_usage("--state-save and --state-load apply to generation, --choices and"
				 " --logits-for");
	{
		const bool emb = o->mode == MODE_EMBED || o->mode == MODE_RANK || o->embed;
		if (!emb && (o->pooling != -1 || o->normalize != 2 || o->dims || o->task ||
			     o->embed_format != EMBED_RECORD || o->colbert || o->docs))
			return bad_usage("--pooling, --embd-normalize, --dims, --task, --embed-format,"
					 " --colbert and --docs apply to --embed and --rank only");
		if (o->mode == MODE_RANK && o->docs == NULL)
			return bad_usage("--rank needs --docs FILE");
		if (o->mode == MODE_RANK && (o->prompt || o->file || o->lines || o->record ||
					     o->colbert || o->embed_format != EMBED_RECORD))
			return bad_usage("--rank takes its query and --docs only: no -p, -f, --lines,"
					 " --record, --colbert or --embed-format");
		if (o->mode == MODE_RANK && o->rank[0] == '\0')
			return bad_usage("--rank: the query is empty");
		if (o->mode == MODE_EMBED && o->record)
			return bad_usage("--embed prints records by default (--embed-format record):"
					 " --record is for generation");
	}
	if (o->ignore_eos && o->mode != MODE_GENERATE)
		return bad_usage("--ignore-eos applies to generation only (--bench never stops at EOS)");
	if (o->n_lora > 0 && (o->mode == MODE_TOKENIZE || o->mode == MODE_DETOKENIZE))
		return bad_usage("--lora applies to running the model, not to --tokenize or --detokenize");
	return EXIT_OK;
}

/* Open the --lora adapters into o->eo (the engine checks them against the
 * model); printed on failure. */
static int lora_open(struct opts *o)
{
	q42_err err = {0};
	for (uint32_t i = 0; i < o->n_lora; i++) {
		q42_lora *l = NULL;
		int rc = q42_lora_open_model(&l, o->lora_path[i], o->model, &err);
		if (rc != Q42_OK) {
			fprintf(stderr, "q42run: --lora: %s\n", err.msg);
			return exit_for_load(rc);
		}
		o->lora[i].adapter = l;
	}
	o->eo.lora = o->lora;
	o->eo.n_lora = o->n_lora;
	return EXIT_OK;
}

static void lora_close(struct opts *o)
{
	for (uint32_t i = 0; i < o->n_lora; i++) {
		q42_lora_close((q42_lora *)o->lora[i].adapter);
		free(o->lora_path[i]);
	}
}


/* Every mode that mounts the model. */
static int run_model(struct opts *o)
{
	struct input in;
	q42_mount *m = NULL;
	q42_err err = {0};
	double t_start;
	int rc, ex;

	if (o->mode == MODE_BENCH && !o->embed)
		return run_bench(o);
	t_start = now_ms();
	rc = q42_mount_open(&m, o->model,
			    o->mode == MODE_TOKENIZE || o->mode == MODE_DETOKENIZE ? Q42_MOUNT_VOCAB_ONLY : 0,
			    &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: %s\n", err.msg);
		return exit_for_load(rc);
	}
	if (o->mode == MODE_RANK) {
		ex = run_rank(o, m);
		if (ex == EXIT_OK || ex == EXIT_REQUEST)
			ex = finish_stdout() != EXIT_OK ? EXIT_IO : ex;
		q42_mount_close(m);
		return ex;
	}
	if (o->mode == MODE_QUALITY) {
		ex = run_quality(o, m);
		q42_mount_close(m);
		return ex;
	}
	rc = input_open(&in, o, &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: %s\n", err.msg);
		q42_mount_close(m);
		return rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_IO;
	}
	if (o->mode == MODE_TOKENIZE)
		ex = run_tokenize(o, q42_mount_tokenizer(m), &in);
	else if (o->mode == MODE_DETOKENIZE)
		ex = run_detokenize(o, q42_mount_tokenizer(m), &in);
	else if (o->mode == MODE_CHOICES || o->mode == MODE_LOGITS)
		ex = run_score(o, m, &in, t_start);
	else if (o->mode == MODE_EMBED)
		ex = run_embed(o, m, &in);
	else if (o->mode == MODE_BENCH)
		ex = run_bench_embed(o, m, &in);
	else
		ex = run_generate(o, m, &in, t_start);
	if (ex == EXIT_OK || ex == EXIT_REQUEST)
		ex = finish_stdout() != EXIT_OK ? EXIT_IO : ex;
	input_close(&in);
	q42_mount_close(m);
	return ex;
}

int main(int argc, char **argv)
{
	struct opts o;
	q42_err err = {0};
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
	ex = lora_open(&o);
	if (ex == EXIT_OK)
		ex = run_model(&o);
	lora_close(&o);
	return ex;
}

