/* embed.c -- --embed and --rank: embedding vectors of each input (pooled,
 * Matryoshka-truncated, normalised; q42run(1), "EMBEDDINGS") printed as
 * q42-record(5) lines, TSV or raw float32, and documents ranked against a
 * query by cosine (pooled models) or ColBERT MaxSim (per-token models).
 * The vectors come from the engine (q42_engine_embed), the arithmetic on
 * them from run/q42_embed.h.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "bin/q42run/q42run.h"
#include "common/q42_buf.h"
#include "run/q42_embed.h"
#include "run/q42_record.h"

/* ColBERT's settings when the model states none (PyLate's defaults for
 * LFM2-ColBERT): the markers, the lengths; the skiplist is then every
 * single ASCII punctuation character. */
#define COLBERT_QUERY_PREFIX "[Q] "
#define COLBERT_DOC_PREFIX "[D] "
#define COLBERT_QUERY_LEN 32u
#define COLBERT_DOC_LEN 512u

static const char *const pooling_names[] = {"none", "mean", "cls", "last", "rank"};

/* One input's vectors: rows of dim floats, and the token id of each row
 * (pooling none) or -1. */
struct vecs {
	float *v;
	int32_t *id;
	uint32_t rows, dim, n_tokens;
};

static void vecs_free(struct vecs *s)
{
	free(s->v);
	free(s->id);
	memset(s, 0, sizeof *s);
}

/* A document token ColBERT drops after encoding: one whose text is a word
 * of the model's skiplist, else a single ASCII punctuation character. */
static bool is_skipped(const q42_hparams *hp, const q42_tokenizer *tok, int32_t id)
{
	q42_str s = q42_tokenizer_text(tok, id);
	if (hp == NULL || (hp->cb_flags & Q42_COLBERT_SKIPLIST) == 0)
		return s.len == 1 && ispunct((unsigned char)s.p[0]);
	for (uint32_t i = 0; i < hp->cb_skip_len;) {
		const size_t n = strlen(hp->cb_skip + i);
		if (n == s.len && memcmp(hp->cb_skip + i, s.p, n) == 0)
			return true;
		i += (uint32_t)n + 1;
	}
	return false;
}

/* Tokenize prefix + text the way the mode asks. */
static int encode(const struct opts *o, const q42_tokenizer *tok, const char *prefix,
		  const char *p, size_t n, q42_tokens *t, q42_err *err)
{
	unsigned flags = (o->no_bos ? 0 : Q42_TOKENIZE_ADD_SPECIAL) |
			 (o->no_special ? 0 : Q42_TOKENIZE_PARSE_SPECIAL);
	q42_buf b;
	int rc;
	if (prefix == NULL || prefix[0] == '\0')
		return q42_tokenizer_encode(tok, p, n, flags, t, err);
	q42_buf_init(&b);
	q42_buf_append(&b, prefix, strlen(prefix));
	q42_buf_append(&b, p, n);
	rc = b.failed ? q42_err_set(err, Q42_ENOMEM, "out of memory")
		      : q42_tokenizer_encode(tok, (const char *)b.data, b.len, flags, t, err);
	q42_buf_free(&b);
	return rc;
}

/* The vectors of one text: tokenized with prefix, ColBERT's length rules
 * when colbert (1 query, 2 document), embedded, truncated to --dims and
 * normalised. Prints what went wrong; returns the exit status. */
static int embed_one(const struct opts *o, q42_engine *e, q42_mount *m, const char *prefix,
		     int colbert, const char *p, size_t n, struct vecs *out)
{
	const q42_tokenizer *tok = q42_mount_tokenizer(m);
	const q42_vocab *voc = q42_mount_vocab(m);
	const q42_hparams *hp = q42_mount_hparams(m);
	const uint32_t cb_flags = hp != NULL ? hp->cb_flags : 0;
	const uint32_t qlen = hp != NULL && hp->cb_query_len ? hp->cb_query_len : COLBERT_QUERY_LEN;
	const uint32_t dlen = hp != NULL && hp->cb_doc_len ? hp->cb_doc_len : COLBERT_DOC_LEN;
	q42_err err = {0};
	q42_tokens t = {0};
	const float *v;
	uint32_t rows, full = q42_engine_embd_dim(e), dim;
	int rc;

	memset(out, 0, sizeof *out);
	/* pylate hides the expansion tokens from attention unless told not
	 * to; q42 computes only the form that attends to them */
	if (colbert == 1 && (cb_flags & Q42_COLBERT_ATTEND_SET) != 0 &&
	    (cb_flags & Q42_COLBERT_ATTEND) == 0) {
		fprintf(stderr, "q42run: --colbert query: the model says attend_to_expansion_tokens "
				"false (the padding hidden from attention), which q42 does not compute\n");
		return EXIT_MODEL;
	}
	/* ColBERT's marker comes first, after the BOS the vocabulary adds */
	char marked[Q42_COLBERT_PREFIX_MAX + 128];
	if (colbert != 0) {
		const char *mark =
			colbert == 1 ? ((cb_flags & Q42_COLBERT_QUERY_PREFIX) ? hp->cb_query_prefix
									  : COLBERT_QUERY_PREFIX)
				     : ((cb_flags & Q42_COLBERT_DOC_PREFIX) ? hp->cb_doc_prefix
									    : COLBERT_DOC_PREFIX);
		snprintf(marked, sizeof marked, "%s%s", mark, prefix);
		prefix = marked;
	}
	rc = encode(o, tok, prefix, p, n, &t, &err);
	if (rc == Q42_OK && colbert == 1) {
		const int32_t pad = voc->mask != Q42_TOK_NONE ? voc->mask : voc->pad;
		if (t.n > qlen)
			t.n = qlen;
		while (pad >= 0 && t.n < qlen)
			if (!q42_tokens_push(&t, pad))
				rc = q42_err_set(&err, Q42_ENOMEM, "out of memory");
	} else if (rc == Q42_OK && colbert == 2 && t.n > dlen) {
		t.n = dlen;
	}
	if (rc == Q42_OK && t.n == 0)
		rc = q42_err_set(&err, Q42_EARG, "the input has no tokens");
	if (rc == Q42_OK)
		rc = q42_engine_embed(e, t.ids, (uint32_t)t.n, o->pooling, &v, &rows, &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: embed: %s\n", err.msg);
		q42_tokens_free(&t);
		return rc == Q42_ENOMEM ? EXIT_NOMEM : rc == Q42_EUNSUPPORTED ? EXIT_MODEL : EXIT_REQUEST;
	}
	if (o->dims > full) {
		fprintf(stderr, "q42run: --dims %u: the model's vectors have %u values\n", o->dims, full);
		q42_tokens_free(&t);
		return EXIT_USAGE;
	}
	dim = o->dims ? o->dims : full;
	out->v = malloc((uint64_t)rows * dim * sizeof(float));
	out->id = malloc((uint64_t)rows * sizeof(int32_t));
	if (out->v == NULL || out->id == NULL) {
		q42_tokens_free(&t);
		vecs_free(out);
		return EXIT_NOMEM;
	}
	out->dim = dim;
	out->n_tokens = (uint32_t)t.n;
	for (uint32_t r = 0; r < rows; r++) {
		const int32_t id = rows == t.n ? t.ids[r] : -1;
		if (colbert == 2 && id >= 0 && is_skipped(hp, tok, id))
			continue;
		q42_embed_normalize(v + (uint64_t)r * full, out->v + (uint64_t)out->rows * dim, dim,
				    o->normalize);
		out->id[out->rows++] = id;
	}
	q42_tokens_free(&t);
	return EXIT_OK;
}

static const char *norm_name(int32_t n, char *buf, size_t cap)
{
	switch (n) {
	case Q42_EMBD_NORM_NONE: return "none";
	case Q42_EMBD_NORM_MAXABS: return "max-abs";
	case Q42_EMBD_NORM_TAXICAB: return "taxicab";
	case Q42_EMBD_NORM_L2: return "l2";
	default: snprintf(buf, cap, "p%d", (int)n); return buf;
	}
}

static uint32_t pooling_of(const struct opts *o, const q42_engine *e)
{
	return o->pooling >= 0 ? (uint32_t)o->pooling : q42_engine_pooling(e);
}

static int print_vecs(const struct opts *o, const q42_engine *e, const q42_model_ident *ident,
		      uint64_t idx, const struct vecs *s, q42_buf *b)
{
	char nb[16];
	q42_buf_reset(b);
	if (o->embed_format == EMBED_F32) {
		for (uint64_t i = 0; i < (uint64_t)s->rows * s->dim; i++)
			q42_buf_f32le(b, s->v[i]);
	} else if (o->embed_format == EMBED_TSV) {
		for (uint32_t r = 0; r < s->rows; r++) {
			q42_buf_printf(b, "%llu\t%u\t%d", (unsigned long long)idx, r, s->id[r]);
			for (uint32_t d = 0; d < s->dim; d++)
				q42_buf_printf(b, "\t%.9g", (double)s->v[(uint64_t)r * s->dim + d]);
			q42_buf_u8(b, '\n');
		}
	} else {
		json_t *vs = json_array(), *ids = json_array();
		for (uint32_t r = 0; r < s->rows && vs != NULL; r++) {
			json_t *row = json_array();
			for (uint32_t d = 0; d < s->dim && row != NULL; d++)
				json_array_append_new(row, json_real((double)s->v[(uint64_t)r * s->dim + d]));
			json_array_append_new(vs, row);
			if (s->id[r] >= 0)
				json_array_append_new(ids, json_integer(s->id[r]));
		}
		json_t *rec = json_pack(
			"{s:s, s:I, s:s, s:{s:s, s:s, s:s, s:s?}, s:{s:I, s:s, s:s, s:I, s:s?, s:s?, s:I, s:o, s:o}}",
			"schema", Q42_RECORD_SCHEMA, "request", (json_int_t)idx, "kind", "embedding",
			"model", "path", o->model, "arch", q42_engine_arch(e)->name, "sha256",
			ident->sha256, "source_sha256",
			ident->source_sha256[0] ? ident->source_sha256 : NULL,
			"embedding", "dims", (json_int_t)s->dim, "pooling",
			pooling_names[pooling_of(o, e)], "normalize", norm_name(o->normalize, nb, sizeof nb),
			"n_tokens", (json_int_t)s->n_tokens, "task", o->task,
			"colbert", o->colbert == 1 ? "query" : o->colbert == 2 ? "document" : NULL,
			"n_vectors", (json_int_t)s->rows, "token_ids", ids, "vectors", vs);
		char *line = rec != NULL ? json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER |
							  JSON_REAL_PRECISION(9))
					 : NULL;
		json_decref(rec);
		if (line == NULL)
			return EXIT_NOMEM;
		q42_buf_append(b, line, strlen(line));
		q42_buf_u8(b, '\n');
		free(line);
	}
	return b->failed ? EXIT_NOMEM : write_out(b->data, b->len);
}

/* The engine, the model's identity, the tokenizer and the task prefix. */
static int embed_setup(const struct opts *o, q42_mount *m, q42_engine **e,
		       const q42_model_ident **ident, const char **prefix)
{
	q42_err err = {0};
	int ex = engine_open(o, m, e);
	if (ex != EXIT_OK)
		return ex;
	*prefix = o->task != NULL ? q42_embed_task_prefix(o->task) : "";
	if (q42_mount_ident(m, ident, &err) != Q42_OK) {
		fprintf(stderr, "q42run: %s\n", err.msg);
		return EXIT_MODEL;
	}
	return EXIT_OK;
}

int run_embed(const struct opts *o, q42_mount *m, struct input *in)
{
	q42_engine *e = NULL;
	const q42_model_ident *ident = NULL;
	const char *prefix, *p;
	size_t n;
	uint64_t idx = 0;
	q42_buf b;
	int ex = embed_setup(o, m, &e, &ident, &prefix);

	q42_buf_init(&b);
	while (ex == EXIT_OK && input_next(in, o->lines, &p, &n)) {
		struct vecs s;
		ex = embed_one(o, e, m, prefix, o->colbert, p, n, &s);
		if (ex == EXIT_OK)
			ex = print_vecs(o, e, ident, idx++, &s, &b);
		vecs_free(&s);
	}
	q42_buf_free(&b);
	q42_engine_close(e);
	return ex;
}

int run_rank(const struct opts *o, q42_mount *m)
{
	q42_engine *e = NULL;
	const q42_model_ident *ident = NULL;
	const char *prefix, *p;
	q42_map docs = {0};
	q42_err err = {0};
	struct input din;
	struct vecs q = {0}, *d = NULL;
	float *score = NULL;
	uint32_t *order = NULL, nd = 0, cap = 0;
	size_t n;
	bool colbert;
	int ex;

	docs.fd = -1;
	ex = embed_setup(o, m, &e, &ident, &prefix);
	if (ex != EXIT_OK)
		goto done;
	colbert = pooling_of(o, e) == Q42_POOLING_NONE;
	if (q42_map_open(&docs, o->docs, 0, &err) != Q42_OK) {
		fprintf(stderr, "q42run: --docs: %s\n", err.msg);
		ex = EXIT_IO;
		goto done;
	}
	ex = embed_one(o, e, m, prefix, colbert ? 1 : 0, o->rank,
		       strlen(o->rank), &q);
	memset(&din, 0, sizeof din);
	din.data = docs.data ? (const char *)docs.data : "";
	din.len = (size_t)docs.size;
	/* documents get the document prefix of a retrieval query's task */
	if (o->task != NULL && strcmp(o->task, "retrieval_query") == 0)
		prefix = q42_embed_task_prefix("retrieval_document");
	while (ex == EXIT_OK && input_next(&din, true, &p, &n)) {
		if (nd == cap) {
			struct vecs *g = realloc(d, (cap = cap ? 2 * cap : 16) * sizeof *d);
			if (g == NULL) {
				ex = EXIT_NOMEM;
				break;
			}
			d = g;
		}
		if (n == 0) {
			fprintf(stderr, "q42run: --docs %s: line %u is empty\n", o->docs, nd + 1);
			ex = EXIT_REQUEST;
			break;
		}
		ex = embed_one(o, e, m, prefix, colbert ? 2 : 0, p, n, &d[nd]);
		if (ex == EXIT_OK)
			nd++;
	}
	if (ex == EXIT_OK && nd == 0) {
		fprintf(stderr, "q42run: --docs %s: no documents\n", o->docs);
		ex = EXIT_REQUEST;
	}
	if (ex == EXIT_OK) {
		score = malloc(nd * sizeof *score);
		order = malloc(nd * sizeof *order);
		if (score == NULL || order == NULL)
			ex = EXIT_NOMEM;
	}
	for (uint32_t i = 0; ex == EXIT_OK && i < nd; i++)
		score[i] = colbert ? q42_embed_maxsim(q.v, q.rows, d[i].v, d[i].rows, q.dim)
				   : q42_embed_cosine(q.v, d[i].v, q.dim);
	if (ex == EXIT_OK) {
		q42_buf b;
		q42_buf_init(&b);
		q42_embed_rank(score, nd, order);
		for (uint32_t i = 0; i < nd; i++)
			q42_buf_printf(&b, "%u\t%u\t%.9g\n", i + 1, order[i] + 1, (double)score[order[i]]);
		ex = b.failed ? EXIT_NOMEM : write_out(b.data, b.len);
		q42_buf_free(&b);
	}
done:
	for (uint32_t i = 0; i < nd; i++)
		vecs_free(&d[i]);
	free(d);
	free(score);
	free(order);
	vecs_free(&q);
	if (docs.path != NULL)
		q42_map_close(&docs);
	q42_engine_close(e);
	return ex;
}

static int cmp_double(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* --bench --embed: the lines of -f FILE tokenized once (not timed), then
 * embedded and normalised --reps times, each repetition timed whole. */
int run_bench_embed(const struct opts *o, q42_mount *m, struct input *in)
{
	q42_engine *e = NULL;
	q42_err err = {0};
	q42_tokens *t = NULL;
	double ms[Q42_BENCH_REPS_MAX];
	float *scratch = NULL;
	const char *prefix = o->task != NULL ? q42_embed_task_prefix(o->task) : "", *p;
	uint32_t nt = 0, cap = 0, reps = o->bench.reps;
	uint64_t n_tok = 0;
	size_t n;
	int ex = engine_open(o, m, &e);

	while (ex == EXIT_OK && input_next(in, true, &p, &n)) {
		if (nt == cap) {
			q42_tokens *g = realloc(t, (cap = cap ? 2 * cap : 64) * sizeof *t);
			if (g == NULL) {
				ex = EXIT_NOMEM;
				break;
			}
			t = g;
		}
		memset(&t[nt], 0, sizeof t[nt]);
		if (encode(o, q42_mount_tokenizer(m), prefix, p, n, &t[nt], &err) != Q42_OK) {
			fprintf(stderr, "q42run: --bench --embed: line %u: %s\n", nt + 1, err.msg);
			ex = EXIT_REQUEST;
			break;
		}
		n_tok += t[nt++].n;
	}
	if (ex == EXIT_OK && nt == 0) {
		fprintf(stderr, "q42run: --bench --embed: %s has no lines\n", o->file);
		ex = EXIT_REQUEST;
	}
	if (ex == EXIT_OK && (scratch = malloc((uint64_t)q42_engine_embd_dim(e) * sizeof(float))) == NULL)
		ex = EXIT_NOMEM;
	/* one untimed repetition first: page faults and caches */
	for (uint32_t r = 0; ex == EXIT_OK && r <= reps; r++) {
		const double t0 = now_ms();
		for (uint32_t i = 0; ex == EXIT_OK && i < nt; i++) {
			const float *v;
			uint32_t rows;
			if (q42_engine_embed(e, t[i].ids, (uint32_t)t[i].n, o->pooling, &v, &rows, &err) != Q42_OK) {
				fprintf(stderr, "q42run: --bench --embed: line %u: %s\n", i + 1, err.msg);
				ex = EXIT_REQUEST;
				break;
			}
			for (uint32_t k = 0; k < rows; k++)
				q42_embed_normalize(v + (uint64_t)k * q42_engine_embd_dim(e), scratch,
						    q42_engine_embd_dim(e), o->normalize);
		}
		if (r > 0)
			ms[r - 1] = now_ms() - t0;
	}
	if (ex == EXIT_OK) {
		q42_buf b;
		qsort(ms, reps, sizeof ms[0], cmp_double);
		const double med = reps % 2 ? ms[reps / 2] : (ms[reps / 2 - 1] + ms[reps / 2]) / 2;
		q42_buf_init(&b);
		q42_buf_printf(&b,
			       "embed texts=%u tokens=%llu reps=%u ms_median=%.3f texts_s_median=%.3f"
			       " texts_s_min=%.3f texts_s_max=%.3f tok_s_median=%.3f threads=%u isa=%s"
			       " arith=%s backend=%s arch=%s\n",
			       nt, (unsigned long long)n_tok, reps, med, nt / (med / 1e3),
			       nt / (ms[reps - 1] / 1e3), nt / (ms[0] / 1e3), (double)n_tok / (med / 1e3),
			       q42_engine_n_threads(e), q42_isa_name(q42_engine_isa(e)),
			       q42_arith_name(q42_engine_arith(e)),
			       q42_backend_name(q42_engine_backend(e)), q42_engine_arch(e)->name);
		ex = b.failed ? EXIT_NOMEM : write_out(b.data, b.len);
		q42_buf_free(&b);
	}
	for (uint32_t i = 0; i < nt; i++)
		q42_tokens_free(&t[i]);
	free(t);
	free(scratch);
	q42_engine_close(e);
	return ex;
}
