/* q42_cli.c -- the programs' shared edge (q42_cli.h): one parser per kind
 * of number and one mapping from result codes to exit statuses, so the
 * five programs accept and refuse arguments alike.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bin/cli/q42_cli.h"
#include "common/q42_err.h"

int q42_cli_status(int rc)
{
	switch (rc) {
	case Q42_OK:
		return Q42_CLI_OK;
	case Q42_EIO:
	case Q42_ENOMEM:
		return Q42_CLI_IO;
	case Q42_EARG:
		return Q42_CLI_USAGE;
	default:
		return Q42_CLI_INVALID;
	}
}

bool q42_cli_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	if (s == NULL || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return false;
	*out = v;
	return true;
}

bool q42_cli_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	uint64_t v;
	if (!q42_cli_u64(s, &v) || v < lo || v > hi)
		return false;
	*out = (uint32_t)v;
	return true;
}

bool q42_cli_f64(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !isfinite(v) || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

bool q42_cli_lora(const char *arg, char **path, float *scale)
{
	const char *colon = strrchr(arg, ':');
	double v = 1.0;
	if (colon != NULL && !q42_cli_f64(colon + 1, -1e6, 1e6, &v))
		return false;
	const size_t n = colon != NULL ? (size_t)(colon - arg) : strlen(arg);
	if (n == 0 || (*path = strndup(arg, n)) == NULL)
		return false;
	*scale = (float)v;
	return true;
}

void q42_cli_version(const char *name)
{
	printf("%s %s\n", name, Q42_VERSION);
}
