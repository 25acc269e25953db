/* devices.c -- --list-devices and --certify: the Vulkan devices the loader
 * sees, and every kernel checked on a backend against the scalar ones.
 */
#include <math.h>
#include <stdlib.h>
#include "bin/q42run/q42run.h"
#include "measure/q42_certify.h"
#include "vulkan/q42_vk.h"

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
int run_certify(const struct opts *o)
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
