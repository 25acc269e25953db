/* q42_err.c -- filling q42_err messages (see q42_err.h).
 *
 * Messages are truncated, never overflowed; a NULL err is allowed so
 * callers that only want the code need not carry a buffer.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "common/q42_err.h"

int q42_err_set(q42_err *err, int rc, const char *fmt, ...)
{
	if (err != NULL) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
		err->rc = rc;
	}
	return rc;
}

void q42_err_prefix(q42_err *err, const char *fmt, ...)
{
	char old[Q42_ERR_MSG_MAX];
	size_t n;
	va_list ap;

	if (err == NULL)
		return;
	memcpy(old, err->msg, sizeof old);
	old[sizeof old - 1] = '\0';
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	/* Truncation is acceptable: the head of a message says the most. */
	n = strlen(err->msg);
	if (n + 2 < sizeof err->msg) {
		memcpy(err->msg + n, ": ", 2);
		n += 2;
		size_t room = sizeof err->msg - n - 1;
		size_t ol = strlen(old);
		if (ol > room)
			ol = room;
		memcpy(err->msg + n, old, ol);
		err->msg[n + ol] = '\0';
	}
}

const char *q42_rc_name(int rc)
{
	switch (rc) {
	case Q42_OK: return "ok";
	case Q42_EFORMAT: return "invalid format";
	case Q42_EIO: return "I/O error";
	case Q42_ENOMEM: return "out of memory";
	case Q42_EUNSUPPORTED: return "unsupported";
	case Q42_EARG: return "bad argument";
	case Q42_ENOTFOUND: return "not found";
	default: return "unknown error";
	}
}
