/* q42run.h -- what q42run's files share: the parsed options, the exit
 * statuses of q42run(1), the input as requests, and one entry point per
 * mode. q42run.c parses and dispatches; each mode lives in its own file
 * (text.c, generate.c, score.c, bench.c, quality.c, devices.c), common.c
 * holds what several modes use. Nothing here computes: libq42 does.
 */
#ifndef Q42RUN_H
#define Q42RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "common/q42_buf.h"
#include "common/q42_err.h"
#include "common/q42_file.h"
#include "engine/q42_engine.h"
#include "engine/q42_mount.h"
#include "engine/q42_sample.h"
#include "measure/q42_bench.h"
#include "run/q42_generate.h"
#include "run/q42_jsonl.h"
#include "run/q42_prefix.h"
#include "run/q42_chat.h"

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
	MODE_QUALITY, MODE_DEVICES, MODE_CERTIFY, MODE_EMBED, MODE_RANK };

/* --embed-format */
enum embed_format { EMBED_RECORD, EMBED_TSV, EMBED_F32 };

struct opts {
	const char *model;
	const char *prompt;
	const char *file;
	enum mode mode;
	bool lines, record, strict, timings, no_bos, no_special, ignore_eos;
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
	/* --lora FILE[:SCALE], in order: the paths, and the adapters opened
	 * (eo.lora points here) */
	char *lora_path[Q42_LORA_MAX];
	q42_engine_lora lora[Q42_LORA_MAX];
	uint32_t n_lora;
	bool no_reuse;            /* --no-reuse */
	bool jsonl;               /* --jsonl: JSON-lines requests */
	bool decisions;           /* --decisions: typed decisions, kinds from --jsonl */
	bool chat;                /* --chat */
	const char *system;       /* --system TEXT */
	const char *chat_template; /* --chat-template NAME */
	uint64_t cache_bytes;     /* --cache-bytes */
	const char *state_save;   /* --state-save FILE */
	const char *state_load;   /* --state-load FILE */
	/* --embed and --rank */
	bool embed;               /* --embed (alone, or with --bench) */
	int32_t pooling;          /* --pooling: enum q42_pooling, -1 the model's */
	int32_t normalize;        /* --embd-normalize (run/q42_embed.h), default L2 */
	uint32_t dims;            /* --dims: leading values kept, 0 all */
	const char *task;         /* --task NAME */
	enum embed_format embed_format;
	int colbert;              /* --colbert: 0 off, 1 query, 2 document */
	const char *rank;         /* --rank QUERY */
	const char *docs;         /* --docs FILE */
};


/* The requests of the input: the whole input, each of its lines, or
 * (--jsonl) each prompt and each prefixed question of its JSON lines. */
struct input {
	q42_map map;
	const char *data;
	size_t len;
	size_t pos;
	bool done;
	bool jsonl;
	bool failed;      /* --jsonl: a line was not a request (said on stderr) */
	uint64_t line;    /* lines read */
	q42_jsonl_req *req; /* --jsonl: the current line */
	size_t q;           /* its next prompt (the current one is q - 1) */
	q42_buf text;     /* the current request's prompt */
};

/* common.c */
int exit_for_load(int rc);
int engine_open(const struct opts *o, q42_mount *m, q42_engine **e);
int record_ident(const struct opts *o, q42_mount *m, const q42_model_ident **ident);
double now_ms(void);
int input_open(struct input *in, const struct opts *o, q42_err *err);
void input_close(struct input *in);
bool input_next(struct input *in, bool lines, const char **p, size_t *n);
int write_out(const void *p, size_t n);
int finish_stdout(void);
/* v rounded to that many decimals (what printf's %.Nf shows), null when
 * not finite; dump it with JSON_REAL_PRECISION(15) to print it so. */
json_t *json_fixed(double v, int decimals);
/* s as a JSON string; bytes of invalid UTF-8 become '?'. */
json_t *json_lossy(const char *s);
/* Dump o (compact, in insertion order, plus flags) as one line on
 * stdout and release it; o NULL (a failed build) is out of memory. */
int print_json_line(json_t *o, size_t flags);

/* chat.c: --chat's template (c->on false without --chat, or, after a
 * warning, when q42 renders none for the model), and a request's prompt
 * rendered as the user's turn (*p, *n replaced; valid until the next). */
struct chat {
	bool on;
	enum q42_chat_tmpl t;
	q42_buf user, text;
};
int chat_open(const struct opts *o, struct chat *c);
void chat_close(struct chat *c);
int chat_prompt(const struct opts *o, struct chat *c, const char **p, size_t *n);

/* reuse.c: prefix reuse for e (*p NULL under --no-reuse or on a device
 * backend), seeded by --state-load; then --state-save when the requests
 * went well (ex, returned unless saving fails) and p closed. */
int reuse_open(const struct opts *o, q42_mount *m, q42_engine *e, q42_prefix **p);
int reuse_close(const struct opts *o, q42_mount *m, q42_engine *e, q42_prefix *p, int ex);

/* reuse.c: what a request loop (generation, scoring) opens beside its
 * engine: the record's model identity, prefix reuse and the chat template,
 * in that order, stopping at the first that fails. */
int requests_open(const struct opts *o, q42_mount *m, q42_engine *e,
		  const q42_model_ident **ident, q42_prefix **pre, struct chat *chat);

/* One per mode; each returns the exit status. */
int run_tokenize(const struct opts *o, const q42_tokenizer *tok, struct input *in);
int run_detokenize(const struct opts *o, const q42_tokenizer *tok, struct input *in);
int run_generate(const struct opts *o, q42_mount *m, struct input *in, double t_start);
int run_score(const struct opts *o, q42_mount *m, struct input *in, double t_start);
int run_bench(const struct opts *o);
int run_quality(struct opts *o, q42_mount *m);
int run_list_devices(bool json);
int run_certify(const struct opts *o);
int run_embed(const struct opts *o, q42_mount *m, struct input *in);
int run_rank(const struct opts *o, q42_mount *m);
int run_bench_embed(const struct opts *o, q42_mount *m, struct input *in);

#endif
