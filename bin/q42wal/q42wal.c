/* q42wal.c -- commit q42-record lines to a Q42 volume; verify it, prove
 * inclusion and consistency, review, recover, export and import.
 *
 * Option parsing, stdin line splitting (for group commit: a batch is what
 * is already readable without waiting) and printing live here (q42wal(1));
 * the volume, its tree, locking and durability are libq42's (lib/wal).
 * An entry's index and hash are printed only after the flush that made it
 * durable (under --sync full) returned.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bin/cli/q42_cli.h"
#include "formats/q42_digest.h"
#include "formats/q42_lora.h"
#include "wal/q42_wal.h"

enum exit_status { EXIT_OK = 0, EXIT_INVALID = 1, EXIT_USAGE = 2, EXIT_IO = 3 };

static const char *prog = "q42wal";

static void help(void)
{
	printf("Usage: %s COMMAND [OPTIONS] ARGS\n"
	       "Commit q42-record lines to a Q42 volume (q42-volume(5)) and check it.\n"
	       "\n"
	       "Commands:\n"
	       "  init VOL [--review-key PUB.pem]... [--quorum K]   create a volume\n"
	       "  commit VOL [--sync full|normal|off] [--batch N] [--review] [--no-wait]\n"
	       "                            records on stdin -> entries; prints INDEX HASH KIND\n"
	       "  log VOL [--json] [--from N] [--count N]   list entries\n"
	       "  show VOL ENTRY            print an entry's body\n"
	       "  verify VOL [--outputs] [--head HEAD.json [--pub PUB.pem]]\n"
	       "                            check every CRC, link, rule and the root\n"
	       "  head VOL [--size N] [--sign KEY.pem]   print the tree head (JSON)\n"
	       "  prove VOL ENTRY [--size N]             inclusion proof (JSON)\n"
	       "  consistency VOL OLD NEW                consistency proof (JSON)\n"
	       "  recover VOL [--dry-run] [--force]      cut a torn tail\n"
	       "  index VOL [--rebuild]     bring VOL.idx up to date (or rebuild it)\n"
	       "  export VOL ARCHIVE        write VOL to ARCHIVE (.tar, .tar.zst)\n"
	       "  import ARCHIVE VOL        verify ARCHIVE's volume, then create VOL\n"
	       "  pending VOL [--all]       records waiting for review\n"
	       "  approve VOL SEQ --key KEY.pem [--no-wait]   approve a pending record\n"
	       "  reject VOL SEQ --key KEY.pem [--no-wait]    reject a pending record\n"
	       "  bind VOL MODEL.p64 [--lora FILE[:SCALE]]... [--sync full|normal|off] [--no-wait]\n"
	       "                            commit the model's provenance binding\n"
	       "\n"
	       "  -h, --help     show this help and exit\n"
	       "  -V, --version  show the version and exit\n"
	       "\n"
	       "Exit status: 0 success, 1 verification failed or invalid input, 2 usage\n"
	       "error, 3 I/O error. See q42wal(1).\n",
	       prog);
}

static int fail(int rc, const q42_err *err)
{
	fprintf(stderr, "%s: %s\n", prog, err->msg);
	return q42_cli_status(rc);
}

static int usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", prog);
	return EXIT_USAGE;
}

static void hex32(const uint8_t *h, char out[65])
{
	q42_hex_encode(h, 32, out);
}

typedef struct opts {
	const char *cmd;
	uint32_t sync;
	uint64_t batch;
	bool review, nowait, json, outputs, dry_run, force, all;
	bool have_size, have_count, rebuild;
	q42_wal_lora lora[Q42_LORA_MAX]; /* bind --lora, in order (paths malloc'd) */
	uint32_t n_lora;
	uint64_t size, from, count;
	const char *sign, *key, *head, *pub;
	q42_vol_config cfg;
	const char *keys[Q42_VOL_MAX_KEYS];
	uint32_t n_keys;
	int64_t quorum;
} opts;

/* ---- commit ------------------------------------------------------------- */

typedef struct line_reader {
	char *buf;
	size_t len, cap, start;
	bool eof;
} line_reader;

#define MAX_LINE ((size_t)Q42_VOL_MAX_PAYLOAD - Q42_VOL_ENTRY_HEAD)

/* Next complete line from stdin, without its newline. When wait is false,
 * return NULL instead of blocking if no complete line is buffered or
 * readable now. *too_long is set for a line over the cap (then skipped). */
static char *next_line(line_reader *r, bool wait, size_t *n, bool *too_long, int *io)
{
	*too_long = false;
	for (;;) {
		char *nl = r->len > r->start ? memchr(r->buf + r->start, '\n', r->len - r->start) : NULL;
		if (nl || (r->eof && r->len > r->start)) {
			char *line = r->buf + r->start;
			size_t l = nl ? (size_t)(nl - line) : r->len - r->start;
			r->start += l + (nl ? 1 : 0);
			line[l] = 0;
			*n = l;
			if (l > MAX_LINE)
				*too_long = true;
			return line;
		}
		if (r->eof)
			return NULL;
		if (!wait) {
			struct pollfd p = {.fd = 0, .events = POLLIN};
			if (poll(&p, 1, 0) <= 0)
				return NULL;
		}
		if (r->start > 0) {
			memmove(r->buf, r->buf + r->start, r->len - r->start);
			r->len -= r->start;
			r->start = 0;
		}
		if (r->cap - r->len < 65536) {
			size_t cap = r->cap ? r->cap * 2 : 1 << 20;
			char *b = realloc(r->buf, cap + 1);
			if (!b) {
				*io = ENOMEM;
				return NULL;
			}
			r->buf = b;
			r->cap = cap;
		}
		ssize_t k = read(0, r->buf + r->len, r->cap - r->len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			*io = errno;
			return NULL;
		}
		if (k == 0)
			r->eof = true;
		r->len += (size_t)k;
	}
}

static void print_acks(const q42_wal_ack *acks, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		char h[65];
		hex32(acks[i].hash, h);
		printf("%" PRIu64 "\t%s\t%s\n", acks[i].index, h,
		       acks[i].pending ? "pending" : q42_vol_kind_name(acks[i].kind));
	}
}

static int cmd_commit(const opts *o, const char *vol)
{
	q42_wal w;
	q42_err err;
	line_reader lr = {0};
	q42_wal_ack *acks = NULL, *staged = NULL;
	uint64_t n_staged = 0, cap_staged = 0, lineno = 0, in_batch = 0;
	int rc, status = EXIT_OK, io = 0;
	if ((rc = q42_wal_open(&w, vol, o->sync, o->nowait, &err)) != Q42_OK)
		return fail(rc, &err);
	acks = malloc((1 + Q42_WAL_MAX_QUINS) * sizeof *acks);
	if (!acks) {
		err.rc = Q42_ENOMEM;
		snprintf(err.msg, sizeof err.msg, "out of memory");
		status = EXIT_IO;
		goto out;
	}
	for (;;) {
		size_t n;
		bool too_long;
		char *line = next_line(&lr, in_batch == 0, &n, &too_long, &io);
		if (!line && io) {
			fprintf(stderr, "%s: commit: reading stdin: %s\n", prog, strerror(io));
			status = EXIT_IO;
			break;
		}
		if (!line || in_batch >= o->batch) {
			if (in_batch > 0) {
				if ((rc = q42_wal_flush(&w, &err)) != Q42_OK) {
					fprintf(stderr, "%s: commit: %s\n", prog, err.msg);
					status = q42_cli_status(rc);
					break;
				}
				print_acks(staged, (uint32_t)n_staged);
				fflush(stdout);
				n_staged = 0;
				in_batch = 0;
			}
			if (!line) {
				if (lr.eof && lr.start >= lr.len)
					break;
				continue;
			}
		}
		lineno++;
		if (n == 0)
			continue;
		if (too_long) {
			fprintf(stderr, "%s: commit: stdin line %" PRIu64 ": longer than %zu bytes\n",
				prog, lineno, MAX_LINE);
			status = EXIT_INVALID;
			continue;
		}
		uint32_t na = 0;
		rc = q42_wal_stage_record(&w, line, n, o->review, acks, &na, &err);
		if (rc == Q42_EFORMAT) {
			fprintf(stderr, "%s: commit: stdin line %" PRIu64 ": %s\n", prog, lineno, err.msg);
			status = EXIT_INVALID;
			continue;
		}
		if (rc != Q42_OK) {
			fprintf(stderr, "%s: commit: stdin line %" PRIu64 ": %s\n", prog, lineno, err.msg);
			status = q42_cli_status(rc);
			q42_wal_discard(&w);
			break;
		}
		if (n_staged + na > cap_staged) {
			uint64_t cap = (cap_staged ? cap_staged * 2 : 64) + na;
			q42_wal_ack *s = realloc(staged, (size_t)cap * sizeof *s);
			if (!s) {
				fprintf(stderr, "%s: commit: out of memory\n", prog);
				status = EXIT_IO;
				q42_wal_discard(&w);
				break;
			}
			staged = s;
			cap_staged = cap;
		}
		memcpy(staged + n_staged, acks, na * sizeof *acks);
		n_staged += na;
		in_batch++;
	}
out:
	rc = q42_wal_close(&w, &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "%s: commit: %s\n", prog, err.msg);
		if (status == EXIT_OK)
			status = q42_cli_status(rc);
	}
	free(acks);
	free(staged);
	free(lr.buf);
	return status;
}

/* ---- readers -------------------------------------------------------------- */

static void note_in_progress(const char *vol, bool in_progress, uint64_t ignored)
{
	if (in_progress)
		fprintf(stderr, "%s: %s: a writer is active; %" PRIu64 " bytes in progress ignored\n",
			prog, vol, ignored);
}

static json_t *hex_json(const uint8_t *h)
{
	char s[65];
	hex32(h, s);
	return json_string(s);
}

static void print_json(json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT);
	if (s)
		puts(s);
	free(s);
	json_decref(o);
}

static int open_reader(q42_wal_reader *r, const char *vol)
{
	q42_err err;
	int rc = q42_wal_reader_open(r, vol, &err);
	if (rc != Q42_OK)
		return fail(rc, &err);
	note_in_progress(vol, r->in_progress, r->ignored);
	return EXIT_OK;
}

/* Said once, when a reader had to read the frames instead of the index. */
static void note_fallback(const q42_wal_reader *r, const char *vol)
{
	if (r->fell_back)
		fprintf(stderr, "%s: %s.idx failed a check and was not used; `q42wal index %s "
			"--rebuild` rebuilds it\n", prog, vol, vol);
}

static int cmd_log(const opts *o, const char *vol)
{
	q42_wal_reader r;
	q42_err err;
	int st = open_reader(&r, vol), rc;
	if (st)
		return st;
	uint64_t end = r.n_leaves;
	if (o->have_count && o->from < end && o->count < end - o->from)
		end = o->from + o->count;
	for (uint64_t i = o->from; i < end; i++) {
		q42_vol_entry e;
		uint64_t seq;
		q42_hash leaf;
		char h[65], ref[24] = "-", rev[24] = "-";
		if ((rc = q42_wal_reader_entry(&r, i, &e, &seq, leaf, &err)) != Q42_OK) {
			note_fallback(&r, vol);
			q42_wal_reader_close(&r);
			return fail(rc, &err);
		}
		hex32(leaf, h);
		if (e.ref != Q42_VOL_NONE)
			snprintf(ref, sizeof ref, "%" PRIu64, e.ref);
		if (e.review != Q42_VOL_NONE)
			snprintf(rev, sizeof rev, "%" PRIu64, e.review);
		if (o->json) {
			json_t *j = json_pack("{s:I,s:s,s:I,s:o,s:I}", "index", (json_int_t)i, "kind",
					      q42_vol_kind_name(e.kind), "frame", (json_int_t)seq,
					      "hash", hex_json(leaf), "bytes", (json_int_t)e.body_len);
			if (j) {
				json_object_set_new(j, "ref", e.ref == Q42_VOL_NONE ? json_null()
							: json_integer((json_int_t)e.ref));
				json_object_set_new(j, "review", e.review == Q42_VOL_NONE ? json_null()
							: json_integer((json_int_t)e.review));
				print_json(j);
			}
		} else {
			printf("%" PRIu64 "\t%s\t%" PRIu64 "\t%s\t%s\t%s\t%" PRIu64 "\n", i,
			       q42_vol_kind_name(e.kind), seq, h, ref, rev, e.body_len);
		}
	}
	note_fallback(&r, vol);
	q42_wal_reader_close(&r);
	return EXIT_OK;
}

static int cmd_show(const char *vol, const char *arg)
{
	q42_wal_reader r;
	q42_err err;
	uint64_t i, seq;
	q42_hash leaf;
	if (!q42_cli_u64(arg, &i))
		return usage("show: ENTRY must be a non-negative integer, got '%s'", arg);
	int st = open_reader(&r, vol), rc;
	if (st)
		return st;
	if (i >= r.n_leaves) {
		fprintf(stderr, "%s: show: entry %" PRIu64 " does not exist (the volume has %" PRIu64
			" entries)\n", prog, i, r.n_leaves);
		q42_wal_reader_close(&r);
		return EXIT_INVALID;
	}
	q42_vol_entry e;
	if ((rc = q42_wal_reader_entry(&r, i, &e, &seq, leaf, &err)) != Q42_OK) {
		note_fallback(&r, vol);
		q42_wal_reader_close(&r);
		return fail(rc, &err);
	}
	const uint8_t *b = e.body;
	uint64_t n = e.body_len;
	if (e.kind == Q42_VOL_K_BINDING) {
		b += Q42_VOL_BINDING_HEAD;
		n -= Q42_VOL_BINDING_HEAD;
	}
	fwrite(b, 1, (size_t)n, stdout);
	if (n == 0 || b[n - 1] != '\n')
		putchar('\n');
	note_fallback(&r, vol);
	q42_wal_reader_close(&r);
	return EXIT_OK;
}

static int cmd_head(const opts *o, const char *vol)
{
	q42_wal_reader r;
	q42_err err;
	q42_hash root;
	int st = open_reader(&r, vol), rc;
	if (st)
		return st;
	uint64_t size = o->have_size ? o->size : r.n_leaves;
	if ((rc = q42_wal_reader_root(&r, size, root, &err)) != Q42_OK) {
		note_fallback(&r, vol);
		q42_wal_reader_close(&r);
		return fail(rc == Q42_EARG ? Q42_EFORMAT : rc, &err);
	}
	char id[33];
	q42_hex_encode(q42_wal_reader_id(&r), Q42_VOL_ID_LEN, id);
	if (o->sign) {
		/* A signature attests the volume: the root it signs is computed
		 * from every frame, never from the index alone. */
		q42_wal_verify_report rep;
		if ((rc = q42_wal_verify(vol, size, NULL, NULL, &rep, &err)) != Q42_OK) {
			q42_wal_reader_close(&r);
			return fail(rc, &err);
		}
		if (!rep.have_at || memcmp(rep.root_at, root, 32) != 0) {
			fprintf(stderr, "%s: head: the index gives another root for size %" PRIu64
				" than the frames; not signing (`q42wal index %s --rebuild`)\n", prog,
				size, vol);
			q42_wal_reader_close(&r);
			return EXIT_INVALID;
		}
	}
	json_t *j = json_pack("{s:s,s:I,s:o}", "volume", id, "size", (json_int_t)size, "root",
			      hex_json(root));
	if (o->sign && j) {
		uint8_t msg[Q42_VOL_HEAD_MSG_LEN], sig[64], key[32];
		char sh[129], kh[65];
		q42_vol_head_message(q42_wal_reader_id(&r), size, root, msg);
		if ((rc = q42_vol_ed25519_pubkey(o->sign, key, &err)) != Q42_OK ||
		    (rc = q42_ed25519_sign(o->sign, msg, sizeof msg, sig, &err)) != Q42_OK) {
			json_decref(j);
			q42_wal_reader_close(&r);
			return fail(rc, &err);
		}
		q42_hex_encode(key, 32, kh);
		q42_hex_encode(sig, 64, sh);
		json_object_set_new(j, "key", json_string(kh));
		json_object_set_new(j, "signature", json_string(sh));
	}
	print_json(j);
	note_fallback(&r, vol);
	q42_wal_reader_close(&r);
	return EXIT_OK;
}

static void json_path(json_t *arr, const q42_hash *h, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		json_array_append_new(arr, hex_json(h[i]));
}

static int cmd_prove(const opts *o, const char *vol, const char *arg)
{
	q42_wal_reader r;
	q42_err err;
	q42_hash root, leaf, path[Q42_MERKLE_MAX_PATH];
	uint32_t len;
	uint64_t i, seq;
	q42_vol_entry e;
	if (!q42_cli_u64(arg, &i))
		return usage("prove: ENTRY must be a non-negative integer, got '%s'", arg);
	int st = open_reader(&r, vol), rc;
	if (st)
		return st;
	uint64_t size = o->have_size ? o->size : r.n_leaves;
	if (size > r.n_leaves || i >= size) {
		fprintf(stderr, "%s: prove: entry %" PRIu64 " is not in a tree of %" PRIu64
			" entries (the volume has %" PRIu64 ")\n", prog, i, size, r.n_leaves);
		q42_wal_reader_close(&r);
		return EXIT_INVALID;
	}
	if ((rc = q42_wal_reader_entry(&r, i, &e, &seq, leaf, &err)) != Q42_OK ||
	    (rc = q42_wal_reader_root(&r, size, root, &err)) != Q42_OK ||
	    (rc = q42_wal_reader_path(&r, size, i, path, &len, &err)) != Q42_OK) {
		note_fallback(&r, vol);
		q42_wal_reader_close(&r);
		return fail(rc, &err);
	}
	json_t *arr = json_array();
	json_path(arr, path, len);
	print_json(json_pack("{s:I,s:I,s:o,s:o,s:o}", "index", (json_int_t)i, "size",
			     (json_int_t)size, "leaf", hex_json(leaf), "root",
			     hex_json(root), "path", arr));
	note_fallback(&r, vol);
	q42_wal_reader_close(&r);
	return EXIT_OK;
}

static int cmd_consistency(const char *vol, const char *a, const char *b)
{
	q42_wal_reader r;
	q42_err err;
	q42_hash r1, r2, proof[Q42_MERKLE_MAX_CONSISTENCY];
	uint32_t len;
	uint64_t m, n;
	if (!q42_cli_u64(a, &m) || !q42_cli_u64(b, &n))
		return usage("consistency: OLD and NEW must be non-negative integers, got '%s' '%s'", a, b);
	int st = open_reader(&r, vol), rc;
	if (st)
		return st;
	if (m == 0 || m > n || n > r.n_leaves) {
		fprintf(stderr, "%s: consistency: need 0 < OLD <= NEW <= %" PRIu64 " (got %" PRIu64
			" and %" PRIu64 ")\n", prog, r.n_leaves, m, n);
		q42_wal_reader_close(&r);
		return EXIT_INVALID;
	}
	if ((rc = q42_wal_reader_root(&r, m, r1, &err)) != Q42_OK ||
	    (rc = q42_wal_reader_root(&r, n, r2, &err)) != Q42_OK ||
	    (rc = q42_wal_reader_consistency(&r, n, m, proof, &len, &err)) != Q42_OK) {
		note_fallback(&r, vol);
		q42_wal_reader_close(&r);
		return fail(rc, &err);
	}
	json_t *arr = json_array();
	json_path(arr, proof, len);
	print_json(json_pack("{s:I,s:I,s:o,s:o,s:o}", "old", (json_int_t)m, "new", (json_int_t)n,
			     "old_root", hex_json(r1), "new_root", hex_json(r2), "proof", arr));
	note_fallback(&r, vol);
	q42_wal_reader_close(&r);
	return EXIT_OK;
}

static void print_binding(void *arg, uint64_t entry, enum q42_wal_bound state, uint64_t binding,
			  const char *src)
{
	(void)arg;
	if (state == Q42_WAL_UNBOUND)
		printf("%" PRIu64 "\tunbound\t-\t-\n", entry);
	else
		printf("%" PRIu64 "\t%s\t%" PRIu64 "\t%s\n", entry,
		       state == Q42_WAL_BOUND ? "bound" : "mismatch", binding, src);
}

/* A progress line on a terminal only: stderr is rewritten in place. */
static void progress(void *arg, uint64_t done, uint64_t total)
{
	(void)arg;
	fprintf(stderr, "\r%s: verify: %" PRIu64 " of %" PRIu64 " MiB (%3u%%)", prog, done >> 20,
		total >> 20, total ? (unsigned)(done * 100 / total) : 100u);
	if (done >= total)
		fputc('\n', stderr);
}

static int cmd_verify(const opts *o, const char *vol)
{
	q42_wal_verify_report rep;
	q42_err err;
	int status = EXIT_OK;
	int rc = q42_wal_verify(vol, Q42_VOL_NONE, isatty(2) ? progress : NULL, NULL, &rep, &err);
	if (rc != Q42_OK) {
		fprintf(stderr, "%s: verify: %s\n", prog, err.msg);
		return q42_cli_status(rc);
	}
	note_in_progress(vol, rep.in_progress, rep.ignored);
	if (rep.idx_msg[0])
		fprintf(stderr, "%s: verify: index: %s%s\n", prog, rep.idx_msg,
			rep.idx_bad ? " (the volume is intact; `q42wal index --rebuild` rebuilds it)" : "");
	if (rep.rev_msg[0])
		fprintf(stderr, "%s: verify: review state: %s%s\n", prog, rep.rev_msg,
			rep.rev_bad ? " (the volume is intact; `q42wal index --rebuild` rewrites it)" : "");
	if (rep.idx_bad || rep.rev_bad)
		status = EXIT_INVALID;
	char h[65];
	hex32(rep.root, h);
	if (status == EXIT_OK && o->head) {
		q42_wal_reader r;
		if ((rc = q42_wal_reader_open(&r, vol, &err)) == Q42_OK) {
			rc = q42_wal_check_head(&r, o->head, o->pub, &err);
			q42_wal_reader_close(&r);
		}
		if (rc != Q42_OK) {
			fprintf(stderr, "%s: verify: %s\n", prog, err.msg);
			status = q42_cli_status(rc);
		}
	}
	if (status == EXIT_OK && o->outputs) {
		/* Every record against its binding, one entry at a time. */
		q42_wal_reader r;
		uint64_t bad = 0;
		if ((rc = q42_wal_reader_open(&r, vol, &err)) == Q42_OK) {
			rc = q42_wal_check_bindings(&r, print_binding, NULL, &bad, &err);
			q42_wal_reader_close(&r);
		}
		if (rc != Q42_OK) {
			fprintf(stderr, "%s: verify: %s\n", prog, err.msg);
			q42_wal_verify_free(&rep);
			return q42_cli_status(rc);
		}
		if (bad)
			status = EXIT_INVALID;
	}
	if (status == EXIT_OK)
		printf("ok\t%" PRIu64 " frames\t%" PRIu64 " entries\t%s\n", rep.n_frames,
		       rep.n_leaves, h);
	q42_wal_verify_free(&rep);
	return status;
}

static int cmd_pending(const opts *o, const char *vol)
{
	q42_wal_review rv;
	q42_err err;
	int rc = q42_wal_review_read(vol, &rv, &err);
	if (rc != Q42_OK)
		return fail(rc, &err);
	note_in_progress(vol, rv.in_progress, rv.ignored);
	static const char *const names[] = {"open", "committed", "rejected"};
	for (uint64_t i = 0; i < rv.n_pending; i++) {
		const q42_vol_pending *p = &rv.pending[i];
		if (!o->all && p->state != Q42_VOL_P_OPEN)
			continue;
		char leaf[24] = "-";
		if (p->leaf != Q42_VOL_NONE)
			snprintf(leaf, sizeof leaf, "%" PRIu64, p->leaf);
		printf("%" PRIu64 "\t%s\t%u/%u\t%u\t%s\t%u\n", p->seq, names[p->state], p->approvals,
		       rv.quorum, p->rejections, leaf, p->length - Q42_VOL_ENTRY_HEAD);
	}
	q42_wal_review_free(&rv);
	return EXIT_OK;
}

static int cmd_vote(const opts *o, const char *vol, const char *arg, uint32_t decision)
{
	q42_wal w;
	q42_err err;
	uint64_t seq;
	uint32_t state = 0, na = 0;
	int rc;
	if (!q42_cli_u64(arg, &seq))
		return usage("SEQ must be a non-negative integer, got '%s'", arg);
	if (!o->key)
		return usage("%s needs --key KEY.pem", o->cmd);
	q42_wal_ack *acks = malloc((1 + Q42_WAL_MAX_QUINS) * sizeof *acks);
	if (!acks) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return EXIT_IO;
	}
	if ((rc = q42_wal_open(&w, vol, Q42_WAL_SYNC_FULL, o->nowait, &err)) != Q42_OK) {
		free(acks);
		return fail(rc, &err);
	}
	rc = q42_wal_vote(&w, seq, decision, o->key, &state, acks, &na, &err);
	if (rc != Q42_OK) {
		q42_wal_close(&w, NULL);
		free(acks);
		return fail(rc == Q42_ENOTFOUND ? Q42_EFORMAT : rc, &err);
	}
	rc = q42_wal_close(&w, &err);
	if (rc != Q42_OK) {
		free(acks);
		return fail(rc, &err);
	}
	static const char *const names[] = {"open", "committed", "rejected"};
	printf("%" PRIu64 "\t%s\n", seq, names[state]);
	print_acks(acks, na);
	free(acks);
	return EXIT_OK;
}

static int cmd_bind(const opts *o, const char *vol, const char *model)
{
	q42_wal w;
	q42_err err;
	q42_buf body;
	q42_hash h;
	uint64_t idx;
	int rc;
	q42_buf_init(&body);
	rc = q42_wal_binding_body_lora(model, o->lora, o->n_lora, &body, &err);
	for (uint32_t i = 0; i < o->n_lora; i++)
		free((char *)(uintptr_t)o->lora[i].path);
	if (rc != Q42_OK) {
		q42_buf_free(&body);
		return fail(rc, &err);
	}
	if ((rc = q42_wal_open(&w, vol, o->sync, o->nowait, &err)) != Q42_OK) {
		q42_buf_free(&body);
		return fail(rc, &err);
	}
	rc = q42_wal_stage(&w, Q42_VOL_F_ENTRY, Q42_VOL_K_BINDING, Q42_VOL_NONE, Q42_VOL_NONE,
			   body.data, body.len, &idx, h, &err);
	if (rc == Q42_OK)
		rc = q42_wal_flush(&w, &err);
	int rc2 = q42_wal_close(&w, rc == Q42_OK ? &err : NULL);
	q42_buf_free(&body);
	if (rc == Q42_OK)
		rc = rc2;
	if (rc != Q42_OK)
		return fail(rc, &err);
	char hx[65];
	hex32(h, hx);
	printf("%" PRIu64 "\t%s\tbinding\n", idx, hx);
	return EXIT_OK;
}

/* ---- main ------------------------------------------------------------------- */

enum {
	OPT_SYNC = 256, OPT_BATCH, OPT_REVIEW, OPT_NOWAIT, OPT_JSON, OPT_OUTPUTS, OPT_HEAD,
	OPT_PUB, OPT_SIZE, OPT_SIGN, OPT_DRY, OPT_FORCE, OPT_KEY, OPT_RKEY, OPT_QUORUM, OPT_ALL,
	OPT_FROM, OPT_COUNT, OPT_REBUILD, OPT_LORA,
};

/* Which commands take which option (checked after parsing). */
static const struct {
	int opt;
	const char *name;
	const char *cmds;
} option_cmds[] = {
	{OPT_SYNC, "--sync", " commit bind "},
	{OPT_BATCH, "--batch", " commit "},
	{OPT_REVIEW, "--review", " commit "},
	{OPT_NOWAIT, "--no-wait", " commit bind approve reject "},
	{OPT_JSON, "--json", " log "},
	{OPT_OUTPUTS, "--outputs", " verify "},
	{OPT_HEAD, "--head", " verify "},
	{OPT_PUB, "--pub", " verify "},
	{OPT_SIZE, "--size", " head prove "},
	{OPT_SIGN, "--sign", " head "},
	{OPT_DRY, "--dry-run", " recover "},
	{OPT_FORCE, "--force", " recover "},
	{OPT_KEY, "--key", " approve reject "},
	{OPT_RKEY, "--review-key", " init "},
	{OPT_QUORUM, "--quorum", " init "},
	{OPT_ALL, "--all", " pending "},
	{OPT_FROM, "--from", " log "},
	{OPT_COUNT, "--count", " log "},
	{OPT_REBUILD, "--rebuild", " index "},
	{OPT_LORA, "--lora", " bind "},
};

static const struct {
	const char *name;
	int nargs;
} commands[] = {
	{"init", 1}, {"commit", 1}, {"log", 1}, {"show", 2}, {"verify", 1}, {"head", 1},
	{"prove", 2}, {"consistency", 3}, {"recover", 1}, {"export", 2}, {"import", 2},
	{"pending", 1}, {"approve", 2}, {"reject", 2}, {"bind", 2}, {"index", 1},
};

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"sync", required_argument, NULL, OPT_SYNC},
		{"batch", required_argument, NULL, OPT_BATCH},
		{"review", no_argument, NULL, OPT_REVIEW},
		{"no-wait", no_argument, NULL, OPT_NOWAIT},
		{"json", no_argument, NULL, OPT_JSON},
		{"outputs", no_argument, NULL, OPT_OUTPUTS},
		{"head", required_argument, NULL, OPT_HEAD},
		{"pub", required_argument, NULL, OPT_PUB},
		{"size", required_argument, NULL, OPT_SIZE},
		{"sign", required_argument, NULL, OPT_SIGN},
		{"dry-run", no_argument, NULL, OPT_DRY},
		{"force", no_argument, NULL, OPT_FORCE},
		{"key", required_argument, NULL, OPT_KEY},
		{"review-key", required_argument, NULL, OPT_RKEY},
		{"quorum", required_argument, NULL, OPT_QUORUM},
		{"all", no_argument, NULL, OPT_ALL},
		{"from", required_argument, NULL, OPT_FROM},
		{"count", required_argument, NULL, OPT_COUNT},
		{"rebuild", no_argument, NULL, OPT_REBUILD},
		{"lora", required_argument, NULL, OPT_LORA},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	opts o = {.sync = Q42_WAL_SYNC_FULL, .batch = 256, .quorum = -1};
	int c, used[64] = {0}, n_used = 0;
	q42_err err;
	int rc;

	if (argc >= 2 && argv[1][0] != '-') {
		o.cmd = argv[1];
		argv++;
		argc--;
	}
	while ((c = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
		if (c >= OPT_SYNC && n_used < 64)
			used[n_used++] = c;
		switch (c) {
		case 'h':
			help();
			return EXIT_OK;
		case 'V':
			q42_cli_version(prog);
			return EXIT_OK;
		case OPT_SYNC:
			if (!strcmp(optarg, "full"))
				o.sync = Q42_WAL_SYNC_FULL;
			else if (!strcmp(optarg, "normal"))
				o.sync = Q42_WAL_SYNC_NORMAL;
			else if (!strcmp(optarg, "off"))
				o.sync = Q42_WAL_SYNC_OFF;
			else
				return usage("--sync takes full, normal or off, not '%s'", optarg);
			break;
		case OPT_BATCH:
			if (!q42_cli_u64(optarg, &o.batch) || o.batch == 0 || o.batch > 1000000)
				return usage("--batch takes 1..1000000, not '%s'", optarg);
			break;
		case OPT_REVIEW: o.review = true; break;
		case OPT_NOWAIT: o.nowait = true; break;
		case OPT_JSON: o.json = true; break;
		case OPT_OUTPUTS: o.outputs = true; break;
		case OPT_HEAD: o.head = optarg; break;
		case OPT_PUB: o.pub = optarg; break;
		case OPT_SIZE:
			if (!q42_cli_u64(optarg, &o.size))
				return usage("--size takes a non-negative integer, not '%s'", optarg);
			o.have_size = true;
			break;
		case OPT_SIGN: o.sign = optarg; break;
		case OPT_DRY: o.dry_run = true; break;
		case OPT_FORCE: o.force = true; break;
		case OPT_ALL: o.all = true; break;
		case OPT_FROM:
			if (!q42_cli_u64(optarg, &o.from))
				return usage("--from takes a non-negative integer, not '%s'", optarg);
			break;
		case OPT_COUNT:
			if (!q42_cli_u64(optarg, &o.count))
				return usage("--count takes a non-negative integer, not '%s'", optarg);
			o.have_count = true;
			break;
		case OPT_REBUILD: o.rebuild = true; break;
		case OPT_LORA: {
			char *path;
			if (o.n_lora >= Q42_LORA_MAX)
				return usage("at most 16 --lora options, '%s' is one too many", optarg);
			if (!q42_cli_lora(optarg, &path, &o.lora[o.n_lora].scale))
				return usage("--lora takes FILE or FILE:SCALE (SCALE a number within [-1e6, 1e6]), not '%s'",
					     optarg);
			o.lora[o.n_lora++].path = path;
			break;
		}
		case OPT_KEY: o.key = optarg; break;
		case OPT_RKEY:
			if (o.n_keys >= Q42_VOL_MAX_KEYS)
				return usage("at most 16 --review-key options, '%s' is one too many", optarg);
			o.keys[o.n_keys++] = optarg;
			break;
		case OPT_QUORUM: {
			uint64_t q;
			if (!q42_cli_u64(optarg, &q) || q > Q42_VOL_MAX_KEYS)
				return usage("--quorum takes 1..16, not '%s'", optarg);
			o.quorum = (int64_t)q;
			break;
		}
		default:
			fprintf(stderr, "Try '%s --help'.\n", prog);
			return EXIT_USAGE;
		}
	}
	if (!o.cmd)
		return usage("%s", "missing COMMAND");
	size_t ci;
	for (ci = 0; ci < sizeof commands / sizeof commands[0]; ci++)
		if (!strcmp(commands[ci].name, o.cmd))
			break;
	if (ci == sizeof commands / sizeof commands[0])
		return usage("unknown command '%s'", o.cmd);
	char padded[32];
	snprintf(padded, sizeof padded, " %s ", o.cmd);
	for (int i = 0; i < n_used; i++)
		for (size_t k = 0; k < sizeof option_cmds / sizeof option_cmds[0]; k++)
			if (option_cmds[k].opt == used[i] && !strstr(option_cmds[k].cmds, padded)) {
				fprintf(stderr, "%s: %s does not apply to %s\n", prog, option_cmds[k].name,
					o.cmd);
				return EXIT_USAGE;
			}
	int nargs = argc - optind;
	if (nargs != commands[ci].nargs) {
		fprintf(stderr, "%s: %s takes %d argument%s, got %d\nTry '%s --help'.\n", prog, o.cmd,
			commands[ci].nargs, commands[ci].nargs == 1 ? "" : "s", nargs, prog);
		return EXIT_USAGE;
	}
	char **a = argv + optind;
	if (o.pub && !o.head)
		return usage("%s", "--pub needs --head");

	if (!strcmp(o.cmd, "init")) {
		if (o.quorum >= 0 && o.n_keys == 0)
			return usage("%s", "--quorum needs --review-key");
		o.cfg.n_keys = o.n_keys;
		o.cfg.quorum = o.n_keys ? (o.quorum >= 0 ? (uint32_t)o.quorum : o.n_keys) : 0;
		for (uint32_t i = 0; i < o.n_keys; i++)
			if ((rc = q42_vol_ed25519_pubkey(o.keys[i], o.cfg.keys[i], &err)) != Q42_OK)
				return fail(rc, &err);
		if ((rc = q42_wal_create(a[0], &o.cfg, &err)) != Q42_OK)
			return fail(rc, &err);
		return EXIT_OK;
	}
	if (!strcmp(o.cmd, "commit"))
		return cmd_commit(&o, a[0]);
	if (!strcmp(o.cmd, "log"))
		return cmd_log(&o, a[0]);
	if (!strcmp(o.cmd, "show"))
		return cmd_show(a[0], a[1]);
	if (!strcmp(o.cmd, "verify"))
		return cmd_verify(&o, a[0]);
	if (!strcmp(o.cmd, "head"))
		return cmd_head(&o, a[0]);
	if (!strcmp(o.cmd, "prove"))
		return cmd_prove(&o, a[0], a[1]);
	if (!strcmp(o.cmd, "consistency"))
		return cmd_consistency(a[0], a[1], a[2]);
	if (!strcmp(o.cmd, "recover")) {
		q42_wal_recovery rep;
		if ((rc = q42_wal_recover(a[0], o.dry_run, o.force, &rep, &err)) != Q42_OK)
			return fail(rc, &err);
		if (rep.cut)
			printf("%s\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%s\n",
			       o.dry_run ? "would-cut" : "cut", rep.offset, rep.bytes, rep.frame,
			       rep.reason);
		else
			printf("clean\t%" PRIu64 " frames\t%" PRIu64 " entries\n", rep.frames_kept,
			       rep.entries_kept);
		return EXIT_OK;
	}
	if (!strcmp(o.cmd, "export")) {
		if ((rc = q42_wal_export(a[0], a[1], &err)) != Q42_OK)
			return fail(rc, &err);
		return EXIT_OK;
	}
	if (!strcmp(o.cmd, "import")) {
		uint64_t size;
		q42_hash root;
		char h[65];
		if ((rc = q42_wal_import(a[0], a[1], &size, root, &err)) != Q42_OK)
			return fail(rc, &err);
		hex32(root, h);
		printf("imported\t%" PRIu64 " entries\t%s\n", size, h);
		return EXIT_OK;
	}
	if (!strcmp(o.cmd, "pending"))
		return cmd_pending(&o, a[0]);
	if (!strcmp(o.cmd, "index")) {
		uint64_t before, after;
		if ((rc = q42_wal_reindex(a[0], o.rebuild, &before, &after, &err)) != Q42_OK)
			return fail(rc, &err);
		printf("index\t%" PRIu64 " entries matched\t%" PRIu64 " entries now\n", before, after);
		return EXIT_OK;
	}
	if (!strcmp(o.cmd, "approve"))
		return cmd_vote(&o, a[0], a[1], Q42_VOL_APPROVE);
	if (!strcmp(o.cmd, "reject"))
		return cmd_vote(&o, a[0], a[1], Q42_VOL_REJECT);
	return cmd_bind(&o, a[0], a[1]);
}
