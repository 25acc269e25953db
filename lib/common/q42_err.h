/* q42_err.h -- the error convention shared by every part of libq42.
 *
 * Functions that can fail return an int status (Q42_OK or one of the
 * Q42_E* codes) and fill a caller-owned q42_err with one line of text
 * saying what was wrong and where (file, field, offset, expected vs found).
 * libq42 never prints; the programs decide what to show and how to exit.
 */
#ifndef Q42_ERR_H
#define Q42_ERR_H

#include <stddef.h>
#include <stdint.h>

#define Q42_API __attribute__((visibility("default")))

enum q42_rc {
	Q42_OK = 0,
	Q42_EFORMAT = 1,      /* input is malformed or fails validation */
	Q42_EIO = 2,          /* open, read, write, mmap, fsync or rename failed */
	Q42_ENOMEM = 3,       /* allocation failed */
	Q42_EUNSUPPORTED = 4, /* well-formed but outside what libq42 handles */
	Q42_EARG = 5,         /* the caller passed a bad argument */
	Q42_ENOTFOUND = 6,    /* a named key, tensor or section is absent */
};

#define Q42_ERR_MSG_MAX 512

typedef struct q42_err {
	int rc;
	char msg[Q42_ERR_MSG_MAX];
} q42_err;

/* Record rc and a printf-style message in *err (err may be NULL); returns rc
 * so call sites can write `return q42_err_set(err, Q42_EFORMAT, ...)`. */
Q42_API int q42_err_set(q42_err *err, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prepend "prefix: " to the message already in *err. */
Q42_API void q42_err_prefix(q42_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

Q42_API const char *q42_rc_name(int rc);

#endif
