/* quality.c -- p64check --quality: the quality gate in one step.
 *
 * Mounts the reference and the candidate model, runs both over the text's
 * windows in lock step (libq42's q42_quality_run with a base engine, so no
 * log-probs are stored) and prints the report lines of q42run(1), QUALITY,
 * then one verdict line. Thresholds are compared here; every figure comes
 * from libq42. Never writes a file.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "p64check.h"
#include "common/q42_buf.h"
#include "common/q42_file.h"
#include "engine/q42_engine.h"
#include "engine/q42_mount.h"
#include "measure/q42_quality.h"

/* 0 passed, 1 a threshold missed or a model invalid, 2 usage, 3 I/O */
static int status_of_rc(int rc)
{
	switch (rc) {
	case Q42_OK: return 0;
	case Q42_EIO: return 3;
	case Q42_EARG: return 2;
	default: return 1;
	}
}

int quality_gate(const char *base_path, const char *text_path, const char *model_path,
		 const quality_opts *qo)
{
	q42_mount *mb = NULL, *mm = NULL;
	q42_engine *eb = NULL, *em = NULL;
	q42_map text = {0};
	q42_tokens ids = {0};
	q42_engine_opts eo = {0};
	q42_quality_report r;
	q42_buf out;
	q42_err err = {0};
	const char *what = base_path;
	int rc, st = 0;

	text.fd = -1;
	q42_buf_init(&out);
	eo.n_ctx = qo->n_ctx;
	eo.n_threads = qo->n_threads;
	eo.isa = Q42_ISA_BEST;
	rc = q42_mount_open(&mb, base_path, 0, &err);
	if (rc == Q42_OK) {
		what = model_path;
		rc = q42_mount_open(&mm, model_path, 0, &err);
	}
	if (rc == Q42_OK) {
		what = "models";
		rc = q42_quality_same_vocab(q42_mount_tokenizer(mb), q42_mount_tokenizer(mm), &err);
	}
	if (rc == Q42_OK) {
		what = text_path;
		rc = q42_map_open(&text, text_path, 0, &err);
	}
	if (rc == Q42_OK)
		rc = q42_quality_tokenize(q42_mount_tokenizer(mb),
					  text.data ? (const char *)text.data : "", (size_t)text.size,
					  &ids, &err);
	if (rc == Q42_OK) {
		what = base_path;
		rc = q42_engine_open(&eb, mb, &eo, &err);
	}
	if (rc == Q42_OK) {
		what = model_path;
		rc = q42_engine_open(&em, mm, &eo, &err);
	}
	if (rc == Q42_OK) {
		q42_quality_job job = {
			.ids = ids.ids, .n_ids = ids.n, .n_ctx = q42_engine_n_ctx(em),
			.base_engine = eb,
		};
		what = "quality";
		rc = q42_quality_run(em, q42_mount_tokenizer(mm), &job, &r, &err);
	}
	if (rc != Q42_OK) {
		fprintf(stderr, "p64check: --quality: %s: %s\n", what, err.msg);
		st = status_of_rc(rc);
		goto done;
	}
	if (!q42_quality_report_format(&r, &out)) {
		fprintf(stderr, "p64check: --quality: out of memory\n");
		st = 3;
		goto done;
	}
	fwrite(out.data, 1, out.len, stdout);
	if (qo->has_max_kl && !(r.kld_mean <= qo->max_kl)) {
		printf("quality\tFAIL\tkld_mean %.6g > --max-kl %.6g\n", r.kld_mean, qo->max_kl);
		st = 1;
	} else if (qo->has_min_same_top && !(r.same_top >= qo->min_same_top)) {
		printf("quality\tFAIL\tsame_top %.6f < --min-same-top %.6f\n", r.same_top,
		       qo->min_same_top);
		st = 1;
	} else {
		printf("quality\tPASS\n");
	}
done:
	q42_buf_free(&out);
	q42_tokens_free(&ids);
	if (text.path != NULL)
		q42_map_close(&text);
	q42_engine_close(em);
	q42_engine_close(eb);
	q42_mount_close(mm);
	q42_mount_close(mb);
	return st;
}
