/* q42_thermal.c -- thermal state from the Linux thermal sysfs class.
 *
 * Zones that cannot be read (ENODATA from a sleeping sensor, a zone that
 * disappears while we list) are skipped rather than treated as critical:
 * the gate reports what it could measure, and says how many zones that
 * was. Every value read is parsed with strtoll and range-checked.
 */
#include "governance/q42_thermal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read a small sysfs file into buf, trailing newline removed. */
static bool read_small(const char *path, char *buf, size_t sz)
{
	FILE *f = fopen(path, "re");
	size_t n;
	if (!f)
		return false;
	n = fread(buf, 1, sz - 1, f);
	fclose(f);
	if (n == 0)
		return false;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return true;
}

static bool read_mc(const char *path, int64_t *out)
{
	char buf[64], *end;
	long long v;
	if (!read_small(path, buf, sizeof(buf)))
		return false;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || end == buf || *end != '\0' || v < -1000000 || v > 1000000)
		return false;
	*out = v;
	return true;
}

int q42_thermal_read(q42_thermal_state *st, const char *sysfs_root, int64_t limit_mc,
		     bool trip_points, q42_err *err)
{
	char dir[4096], path[4352];
	DIR *d;
	struct dirent *de;
	memset(st, 0, sizeof(*st));
	if (!sysfs_root)
		sysfs_root = "/sys";
	if (strlen(sysfs_root) > 3800)
		return q42_err_set(err, Q42_EARG, "sysfs root path longer than 3800 bytes");
	snprintf(dir, sizeof(dir), "%.3800s/class/thermal", sysfs_root);
	snprintf(st->detail, sizeof(st->detail), "no thermal zones under %.200s", dir);
	d = opendir(dir);
	if (!d) {
		if (errno == ENOENT || errno == ENOTDIR)
			return Q42_OK;
		return q42_err_set(err, Q42_EIO, "%s: %s", dir, strerror(errno));
	}
	bool first = true;
	while ((de = readdir(d)) != NULL && st->n_zones < Q42_THERMAL_MAX_ZONES) {
		int64_t t, trip;
		if (strncmp(de->d_name, "thermal_zone", 12) != 0)
			continue;
		snprintf(path, sizeof(path), "%.3900s/%.255s/temp", dir, de->d_name);
		if (!read_mc(path, &t))
			continue;
		st->n_zones++;
		if (first || t > st->hottest_mc) {
			st->hottest_mc = t;
			first = false;
		}
		if (st->critical)
			continue;
		if (limit_mc > 0 && t >= limit_mc) {
			st->critical = true;
			snprintf(st->detail, sizeof(st->detail), "%.64s at %.1f C, limit %.1f C", de->d_name,
				 (double)t / 1000.0, (double)limit_mc / 1000.0);
			continue;
		}
		for (int i = 0; trip_points && i < 64; i++) {
			char type[64];
			snprintf(path, sizeof(path), "%.3900s/%.255s/trip_point_%d_type", dir, de->d_name, i);
			if (!read_small(path, type, sizeof(type)))
				break;
			if (strcmp(type, "critical") != 0)
				continue;
			snprintf(path, sizeof(path), "%.3900s/%.255s/trip_point_%d_temp", dir, de->d_name, i);
			if (read_mc(path, &trip) && trip > 0 && t >= trip) {
				st->critical = true;
				snprintf(st->detail, sizeof(st->detail),
					 "%.64s at %.1f C, at or above its critical trip point %.1f C", de->d_name,
					 (double)t / 1000.0, (double)trip / 1000.0);
				break;
			}
		}
	}
	closedir(d);
	if (!st->critical && st->n_zones > 0)
		snprintf(st->detail, sizeof(st->detail), "%u zone(s), hottest %.1f C", st->n_zones,
			 (double)st->hottest_mc / 1000.0);
	return Q42_OK;
}
