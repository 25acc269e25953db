/* bench.c -- --bench: prompt processing and generation speed on synthetic
 * tokens, one key=value line or JSON; the measuring is lib/measure's.
 */
#include <string.h>
#include "bin/q42run/q42run.h"
#include "common/q42_types.h"
#include "run/q42_record.h"

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
int run_bench(const struct opts *o)
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
