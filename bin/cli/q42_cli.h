/* q42_cli.h -- what every program of q42 does the same way at its edge:
 * numbers from option arguments, --version, and a libq42 result code
 * turned into the documented exit status. Programs only; libq42 never
 * includes it (tests/layers.sh).
 */
#ifndef Q42_CLI_H
#define Q42_CLI_H

#include <stdbool.h>
#include <stdint.h>

/* The exit statuses every program shares (each man page's EXIT STATUS);
 * a program may add its own above these. */
enum q42_cli_exit {
	Q42_CLI_OK = 0,
	Q42_CLI_INVALID = 1, /* invalid or unsupported input */
	Q42_CLI_USAGE = 2,   /* bad options */
	Q42_CLI_IO = 3,      /* a file could not be read or written */
};

/* Q42_OK 0, Q42_EIO and Q42_ENOMEM 3, Q42_EARG 2, any other code 1. */
int q42_cli_status(int rc);

/* A decimal number, digits only (no sign, no space), that fits; false
 * otherwise. */
bool q42_cli_u64(const char *s, uint64_t *out);
/* As q42_cli_u64, within [lo, hi]. */
bool q42_cli_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out);
/* A finite number (strtod's syntax, all of s) within [lo, hi]. */
bool q42_cli_f64(const char *s, double lo, double hi, double *out);

/* A --lora argument, FILE[:SCALE]: *path (malloc'd, the caller frees
 * it) is all before the last ':', *scale the finite number after it
 * (strtod's syntax, |SCALE| <= 1e6); without a ':' the whole argument
 * is the path and the scale 1. False (nothing allocated) when the text
 * after the last ':' is not such a number or the path is empty: a path
 * holding ':' is written with its scale, FILE:1. */
bool q42_cli_lora(const char *arg, char **path, float *scale);

/* Print "NAME VERSION" on stdout (NAME as each man page's --version
 * gives it, e.g. "p64c (q42)" or "q42wal"). */
void q42_cli_version(const char *name);

#endif
