/* bench.c -- --bench: prompt processing and generation speed on synthetic
 * tokens, one key=value line or one JSON object (built with jansson); the
 * measuring is lib/measure's.
 */
#include <string.h>
#include "bin/q42run/q42run.h"
#include "common/q42_types.h"
#include "run/q42_record.h"

/* {"n", "tok_s_median", "tok_s_min", "tok_s_max"} of one phase */
static json_t *rates(uint32_t n, const q42_bench_stat *st)
{
	return json_pack("{s:I, s:o, s:o, s:o}", "n", (json_int_t)n,
			 "tok_s_median", json_fixed(st->median, 3), "tok_s_min", json_fixed(st->min, 3),
			 "tok_s_max", json_fixed(st->max, 3));
}

/* --bench --json: one object, field names and figures as q42run(1)
 * gives them (three decimals, shares four); a figure that was not
 * measured is null. */
static int print_bench_json(const struct opts *o, const q42_engine *e, const char *dname,
			    double load_ms, const q42_bench_result *r, const q42_bench_ttft *tt,
			    const q42_bench_mem *mem)
{
	const q42_bench_opts *b = &o->bench;
	const bool stream = r->tg_stream_gbps > 0.0, read = r->tg_read_gbps > 0.0;
	uint64_t huge;
	json_t *ttft = json_null();

	if (b->n_pp > 0)
		ttft = json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:I}",
				 "n", (json_int_t)b->n_pp,
				 "ms_median", json_fixed(tt->ttft_ms.median, 3),
				 "ms_min", json_fixed(tt->ttft_ms.min, 3),
				 "ms_max", json_fixed(tt->ttft_ms.max, 3),
				 "ms_first", json_fixed(tt->first_ttft_ms, 3),
				 "load_ms_median", json_fixed(tt->load_ms.median, 3),
				 "prefill_ms_median", json_fixed(tt->prefill_ms.median, 3),
				 "first_token", (json_int_t)tt->first_token);
	json_t *pp = rates(b->n_pp, &r->pp), *tg = rates(b->n_tg, &r->tg);
	json_object_set_new(pp, "device_ms", json_fixed(r->pp_device_ms, 3));
	json_object_set_new(tg, "weight_gb_s", json_fixed(r->tg_gbps, 3));
	json_object_set_new(tg, "device_ms", json_fixed(r->tg_device_ms, 3));
	json_object_set_new(tg, "stream_gb_s", stream ? json_fixed(r->tg_stream_gbps, 3) : json_null());
	json_object_set_new(tg, "products_share",
			    stream ? json_fixed(r->tg_products_share, 4) : json_null());
	json_object_set_new(tg, "attention_share",
			    stream ? json_fixed(r->tg_attention_share, 4) : json_null());
	json_object_set_new(tg, "read_gb_s", read ? json_fixed(r->tg_read_gbps, 3) : json_null());
	json_object_set_new(tg, "vs_read", read ? json_fixed(r->tg_vs_read, 4) : json_null());
	json_object_set_new(tg, "products_vs_read",
			    read ? json_fixed(r->tg_products_vs_read, 4) : json_null());
	json_object_set_new(tg, "read_ops_gb_s", r->tg_read_ops_gbps > 0.0
					 ? json_fixed(r->tg_read_ops_gbps, 3) : json_null());
	json_t *j = json_pack(
		"{s:I, s:s, s:s, s:s, s:o, s:I, s:I, s:s, s:b, s:I, s:o, s:I, s:I, s:o, s:o,"
		" s:o?, s:{s:I, s:o, s:I, s:I, s:I}}",
		"threads", (json_int_t)q42_engine_n_threads(e),
		"isa", q42_isa_name(q42_engine_isa(e)),
		"arith", q42_arith_name(q42_engine_arith(e)),
		"backend", q42_backend_name(q42_engine_backend(e)),
		"device", json_lossy(dname),
		"ctx", (json_int_t)q42_engine_n_ctx(e),
		"batch", (json_int_t)q42_engine_n_batch(e),
		"kv_type", q42_dtype_get(q42_engine_kv_type(e))->name,
		"flash_attn", q42_engine_flash_attn(e),
		"depth", (json_int_t)b->depth,
		"load_ms", json_fixed(load_ms, 3),
		"reps", (json_int_t)b->reps,
		"weight_bytes", (json_int_t)r->weight_bytes,
		"pp", pp,
		"tg", tg,
		"ttft", ttft,
		"memory",
		"peak_rss_bytes", (json_int_t)q42_peak_rss_bytes(),
		"anon_huge_bytes", q42_anon_huge_bytes(&huge) ? json_integer((json_int_t)huge) : json_null(),
		"kv_bytes", (json_int_t)mem->kv_bytes,
		"act_bytes", (json_int_t)mem->act_bytes,
		"scratch_bytes", (json_int_t)mem->scratch_bytes);
	return print_json_line(j, JSON_REAL_PRECISION(15));
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
	if (o->json) {
		ex = print_bench_json(o, e, dname, load_ms, &r, &tt, &mem);
		if (ex != EXIT_OK)
			goto done;
	} else {
		printf("pp_tok_s=%.2f pp_min=%.2f pp_max=%.2f tg_tok_s=%.2f tg_min=%.2f tg_max=%.2f "
		       "tg_weight_gb_s=%.2f %s %s ttft_ms=%.2f ttft_min=%.2f ttft_max=%.2f ttft_first_ms=%.2f "
		       "ttft_load_ms=%.2f ttft_prefill_ms=%.2f peak_rss_mib=%.1f huge_mib=%s kv_mib=%.1f "
		       "act_mib=%.1f scratch_mib=%.2f pp=%u tg=%u depth=%u reps=%u threads=%u ctx=%u "
		       "kv_type=%s fa=%s isa=%s backend=%s",
		       r.pp.median, r.pp.min, r.pp.max, r.tg.median, r.tg.min, r.tg.max, r.tg_gbps,
		       stream, read, tt.ttft_ms.median, tt.ttft_ms.min, tt.ttft_ms.max, tt.first_ttft_ms,
		       tt.load_ms.median, tt.prefill_ms.median, mib(q42_peak_rss_bytes()), huge_mib,
		       mib(mem.kv_bytes), mib(mem.act_bytes), mib(mem.scratch_bytes), o->bench.n_pp,
		       o->bench.n_tg, o->bench.depth, o->bench.reps, q42_engine_n_threads(e),
		       q42_engine_n_ctx(e), q42_dtype_get(q42_engine_kv_type(e))->name,
		       q42_engine_flash_attn(e) ? "on" : "off", q42_isa_name(q42_engine_isa(e)),
		       q42_backend_name(q42_engine_backend(e)));
	}
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
