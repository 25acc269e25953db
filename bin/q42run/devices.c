/* devices.c -- --list-devices and --certify: the Vulkan devices the loader
 * sees, and every kernel checked on a backend against the scalar ones;
 * their JSON lines are built with jansson.
 */
#include <math.h>
#include <stdlib.h>
#include "bin/q42run/q42run.h"
#include "measure/q42_certify.h"
#include "vulkan/q42_vk.h"

/* --list-devices: the Vulkan devices in the loader's order. Without a
 * Vulkan build or a device: the reason on stderr, exit 3 (the backend is
 * unavailable, as for --backend vulkan). */
int run_list_devices(bool json)
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
	int ex = EXIT_OK;
	for (uint32_t i = 0; i < n; i++) {
		const q42_vk_device_info *d = &info[i];
		unsigned maj = d->api_version >> 22 & 0x7f, min = d->api_version >> 12 & 0x3ff,
			 pat = d->api_version & 0xfff;
		if (json) {
			char ver[48];
			snprintf(ver, sizeof ver, "%u.%u.%u", maj, min, pat);
			ex = print_json_line(
				json_pack("{s:I, s:s, s:o, s:o, s:s, s:I, s:I, s:b, s:b, s:b, s:b}",
					  "index", (json_int_t)d->index,
					  "type", q42_vk_devtype_name(d->type),
					  "name", json_lossy(d->name), "driver", json_lossy(d->driver),
					  "vulkan", ver,
					  "device_local_bytes", (json_int_t)d->device_local_bytes,
					  "subgroup_size", (json_int_t)d->subgroup_size,
					  "fp16", d->fp16, "int8", d->int8, "storage16", d->storage16,
					  "storage8", d->storage8),
				0);
			if (ex != EXIT_OK)
				break;
		} else {
			printf("%u\t%s\t%s\tdriver=%s\tvulkan=%u.%u.%u\tlocal=%.1fGiB\tsubgroup=%u"
			       "\tfp16=%s\tint8=%s\n",
			       d->index, q42_vk_devtype_name(d->type), d->name, d->driver, maj, min, pat,
			       (double)d->device_local_bytes / (1024.0 * 1024.0 * 1024.0),
			       d->subgroup_size, d->fp16 ? "yes" : "no", d->int8 ? "yes" : "no");
		}
	}
	free(info);
	return ex != EXIT_OK ? ex : finish_stdout();
}

struct certify_out {
	bool json;
	uint32_t n;
	int ex; /* the first failure to print JSON */
};

static void certify_line(const q42_certify_result *r, void *arg)
{
	struct certify_out *c = arg;
	c->n++;
	if (c->json) {
		/* an infinite error (a NaN seen) has no JSON number: null */
		const bool fin = isfinite(r->max_abs) && isfinite(r->max_rel);
		if (c->ex == EXIT_OK)
			c->ex = print_json_line(
				json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:b}",
					  "kernel", json_lossy(r->kernel), "shape", json_lossy(r->shape),
					  "max_abs", fin ? json_real(r->max_abs) : json_null(),
					  "max_rel", fin ? json_real(r->max_rel) : json_null(),
					  "tol_abs", json_real(r->tol_abs), "tol_rel", json_real(r->tol_rel),
					  "pass", r->pass),
				JSON_REAL_PRECISION(6));
	} else {
		printf("%-22s %-50s max_abs=%-10.3g max_rel=%-10.3g tol_abs=%-9.3g tol_rel=%-9.3g %s\n",
		       r->kernel, r->shape, r->max_abs, r->max_rel, r->tol_abs, r->tol_rel,
		       r->pass ? "PASS" : "FAIL");
	}
}

/* --certify: every case on stdout, a summary; exit 1 when a case failed,
 * 3 when the backend is unavailable (as for --backend vulkan). */
int run_certify(const struct opts *o)
{
	struct certify_out c = {o->json, 0, EXIT_OK};
	q42_err err = {0};
	uint32_t n_fail = 0;
	int rc = q42_certify_run(o->eo.backend_ops, o->eo.backend, o->eo.device, o->sp.seed, certify_line, &c, &n_fail,
				 &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "q42run: --certify --backend %s: %s\n", q42_backend_name(o->eo.backend),
			err.msg);
		return rc == Q42_EARG ? EXIT_USAGE : rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_IO;
	}
	if (o->json && c.ex == EXIT_OK)
		c.ex = print_json_line(json_pack("{s:b, s:s, s:I, s:I, s:I}", "summary", 1,
						 "backend", q42_backend_name(o->eo.backend),
						 "seed", (json_int_t)o->sp.seed, "cases", (json_int_t)c.n,
						 "failed", (json_int_t)n_fail),
				       0);
	else if (!o->json)
		printf("certify: backend=%s seed=%llu cases=%u failed=%u: %s\n",
		       q42_backend_name(o->eo.backend), (unsigned long long)o->sp.seed, c.n, n_fail,
		       n_fail == 0 ? "PASS" : "FAIL");
	const int ex = c.ex != EXIT_OK ? c.ex : finish_stdout();
	return ex != EXIT_OK ? ex : n_fail == 0 ? EXIT_OK : EXIT_MODEL;
}
