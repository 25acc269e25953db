/* quality.c -- --perplexity, --kl-base and --kl-divergence: llama-perplexity's
 * windows, the KL base file and its comparison (lib/measure).
 */
#include "bin/q42run/q42run.h"
#include "common/q42_buf.h"
#include "measure/q42_quality.h"

static void on_chunk(void *ud, uint32_t chunk, uint32_t n_chunks, double ppl)
{
	(void)ud;
	printf("[%u]%.4f,%s", chunk, ppl, chunk == n_chunks ? "\n" : "");
	fflush(stdout);
}

/* --perplexity [--kl-base] and --kl-divergence: windows as llama-perplexity
 * (q42run(1), QUALITY); the KL-base file is only renamed into place once
 * the whole run succeeded. */
int run_quality(struct opts *o, q42_mount *m)
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
