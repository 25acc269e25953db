/* text.c -- --tokenize and --detokenize: the model's vocabulary only, no
 * weights (q42run(1), "TOKENIZE").
 */
#include "bin/q42run/q42run.h"
#include "common/q42_buf.h"

int run_tokenize(const struct opts *o, const q42_tokenizer *tok, struct input *in)
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
		/* as llamapeer tokfile counts: encoding and printing, not the load;
		 * the rate in significant digits, since two decimals print a few
		 * bytes on a slow machine (memcheck) as 0.00 MB/s */
		const double ms = now_ms() - t0;
		fprintf(stderr,
			"q42run: timings: tokenize_ms=%.3f bytes=%llu tokens=%llu tokenize_mb_s=%.4g\n",
			ms, (unsigned long long)n_bytes, (unsigned long long)n_tokens,
			ms > 0 ? (double)n_bytes / 1e6 / (ms / 1e3) : 0.0);
	}
	return ex;
}

int run_detokenize(const struct opts *o, const q42_tokenizer *tok, struct input *in)
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
