/* q42grd.c -- governance filter over q42-record lines.
 *
 * Option parsing, line reading, and where each decision goes (stdout,
 * --reject, --review, stderr); the gates are libq42 (lib/governance).
 * Reads one line, decides it, writes and flushes its line before reading
 * the next, so it works as a pipeline stage and never holds more than one
 * record. Options, output and exit statuses are specified in q42grd(1).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bin/cli/q42_cli.h"
#include "common/q42_buf.h"
#include "common/q42_file.h"
#include "governance/q42_facts.h"
#include "governance/q42_grd.h"
#include "governance/q42_policy.h"

enum exit_status {
	EXIT_OK = 0,
	EXIT_BLOCKED = 1, /* --fail-on-block (or --preflight) and something was blocked */
	EXIT_USAGE = 2,
	EXIT_POLICY = 3,  /* the policy or a facts file could not be read or is invalid */
	EXIT_IO = 4,      /* input unreadable, or an output could not be written */
	EXIT_NOMEM = 5,
};

#define MAX_FACTS_FILES 64
#define MAX_PROMPT_BYTES (64u << 20)

static const char *prog = "q42grd";

enum {
	OPT_PROMPT = 256, OPT_PROMPT_FILE, OPT_PREFLIGHT, OPT_REVIEW, OPT_FAIL_ON_BLOCK, OPT_SYSFS_ROOT,
	OPT_CHECK, OPT_FACTS_VOLUME,
};

static const struct option long_opts[] = {
	{"policy", required_argument, NULL, 'P'},
	{"facts", required_argument, NULL, 'F'},
	{"facts-volume", required_argument, NULL, OPT_FACTS_VOLUME},
	{"intent", required_argument, NULL, 'i'},
	{"scope", required_argument, NULL, 's'},
	{"reject", required_argument, NULL, 'r'},
	{"review", required_argument, NULL, OPT_REVIEW},
	{"prompt", required_argument, NULL, OPT_PROMPT},
	{"prompt-file", required_argument, NULL, OPT_PROMPT_FILE},
	{"preflight", no_argument, NULL, OPT_PREFLIGHT},
	{"fail-on-block", no_argument, NULL, OPT_FAIL_ON_BLOCK},
	{"sysfs-root", required_argument, NULL, OPT_SYSFS_ROOT},
	{"check", no_argument, NULL, OPT_CHECK},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s --policy FILE [OPTION]... [RECORDS]\n"
		"       %s --policy FILE --preflight (--prompt TEXT | --prompt-file FILE) [OPTION]...\n"
		"Decide each q42-record line of RECORDS (default: standard input): records\n"
		"that pass go to standard output with their verdict, blocked ones to --reject.\n"
		"\n"
		"  -P, --policy FILE       q42-policy(5) file (required)\n"
		"  -F, --facts FILE        facts for grounding: N-Triples, N-Quads or quins\n"
		"      --facts-volume VOL  facts: the committed quins of a Q42 volume\n"
		"                          (facts options may be given up to %d times)\n"
		"  -i, --intent NAME       declared intent for records that declare none\n"
		"  -s, --scope SCOPE       declared scope for records that declare none\n"
		"  -r, --reject FILE       append blocked records, with every reason\n"
		"      --review FILE       append weakly grounded records for review\n"
		"      --prompt TEXT       the prompt (egress gate; must match prompt.sha256)\n"
		"      --prompt-file FILE  the prompt, read from FILE\n"
		"      --preflight         check the prompt and intent before a run\n"
		"      --fail-on-block     exit 1 when any record was blocked\n"
		"      --sysfs-root DIR    read thermal zones under DIR (default /sys,\n"
		"                          or $Q42_SYSFS_ROOT)\n"
		"      --check             validate the policy and facts, then exit\n"
		"  -h, --help              show this help\n"
		"  -V, --version           show the version\n"
		"\n"
		"Exit status: 0 processed, 1 blocked (--fail-on-block, --preflight),\n"
		"2 usage, 3 bad policy or facts, 4 I/O error, 5 out of memory.\n",
		prog, prog, MAX_FACTS_FILES);
}

static int die_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "%s: %s%s%s\n", prog, msg, arg ? ": " : "", arg ? arg : "");
	fprintf(stderr, "Try '%s --help'.\n", prog);
	return EXIT_USAGE;
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n > 0) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

struct sink {
	const char *path;
	int fd; /* -1: not open */
};

static int sink_open(struct sink *s)
{
	if (!s->path)
		return 0;
	s->fd = open(s->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (s->fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, s->path, strerror(errno));
		return -1;
	}
	return 0;
}

/* One decision line to a sink, in a single write(2) where the kernel
 * allows it, so concurrent writers appending to one file do not interleave. */
static int sink_put(struct sink *s, const q42_buf *line)
{
	if (write_all(s->fd, line->data, line->len) != 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, s->path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Without --reject, a blocked record is at least named on stderr. */
static void report_block(uint64_t line_no, const q42_verdict *v)
{
	fprintf(stderr, "%s: line %llu blocked:", prog, (unsigned long long)line_no);
	for (size_t i = 0; i < v->n_reasons; i++)
		fprintf(stderr, "%s %s: %s", i ? ";" : "", q42_gate_name(v->reasons[i].gate), v->reasons[i].text);
	fputc('\n', stderr);
}

/* Buffered line reader: read(2) into a fixed chunk (never fread, which
 * would wait for a full chunk and stall a pipeline), split at '\n' with
 * memchr, so NUL bytes inside a line are kept (and then rejected by the
 * JSON parser) instead of ending it early. */
struct reader {
	int fd;
	char chunk[65536];
	size_t pos, len;
	bool eof;
};

/* Read one line (without '\n', and without a '\r' before it) into b. A
 * line longer than cap is consumed but only its first cap + 1 bytes are
 * kept, so the caller sees it is too long without holding all of it.
 * Returns 1 for a line, 0 at end of input, -1 on a read error. */
static int read_line(struct reader *r, q42_buf *b, size_t cap)
{
	bool any = false;
	q42_buf_reset(b);
	for (;;) {
		if (r->pos == r->len) {
			if (r->eof)
				break;
			ssize_t got = read(r->fd, r->chunk, sizeof(r->chunk));
			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0)
				return -1;
			r->len = (size_t)got;
			r->pos = 0;
			if (got == 0) {
				r->eof = true;
				break;
			}
		}
		char *nl = memchr(r->chunk + r->pos, '\n', r->len - r->pos);
		size_t n = nl ? (size_t)(nl - (r->chunk + r->pos)) : r->len - r->pos;
		any = true;
		if (b->len <= cap) {
			size_t room = cap + 1 - b->len;
			if (!q42_buf_append(b, r->chunk + r->pos, n < room ? n : room))
				return -1;
		}
		r->pos += n;
		if (nl) {
			r->pos++;
			break;
		}
	}
	if (!any)
		return 0;
	if (b->len > 0 && b->len <= cap && b->data[b->len - 1] == '\r')
		b->len--;
	return 1;
}

int main(int argc, char **argv)
{
	const char *policy_path = NULL, *facts_paths[MAX_FACTS_FILES], *prompt_file = NULL, *input = NULL;
	bool facts_vol[MAX_FACTS_FILES];
	size_t n_facts = 0;
	bool preflight = false, fail_on_block = false, check_only = false;
	struct sink reject = {NULL, -1}, review = {NULL, -1};
	q42_grd_config cfg = {0};
	q42_policy policy;
	q42_facts facts;
	q42_map pmap = {0};
	bool pmap_open = false;
	q42_verdict v;
	q42_buf line, out;
	q42_err err = {0};
	FILE *in = stdin;
	static struct reader rd;
	int c, status = EXIT_OK;
	uint64_t n_block = 0, line_no = 0;

	memset(&policy, 0, sizeof(policy));
	q42_facts_init(&facts);
	q42_verdict_init(&v);
	q42_buf_init(&line);
	q42_buf_init(&out);
	cfg.program = prog;
	cfg.version = Q42_VERSION;
	cfg.sysfs_root = getenv("Q42_SYSFS_ROOT");
	if (cfg.sysfs_root && !cfg.sysfs_root[0])
		cfg.sysfs_root = NULL;

	while ((c = getopt_long(argc, argv, "P:F:i:s:r:hV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'P': policy_path = optarg; break;
		case 'F':
			if (n_facts == MAX_FACTS_FILES)
				return die_usage("too many --facts files", optarg);
			facts_vol[n_facts] = false;
			facts_paths[n_facts++] = optarg;
			break;
		case OPT_FACTS_VOLUME:
			if (n_facts == MAX_FACTS_FILES)
				return die_usage("too many --facts files", optarg);
			facts_vol[n_facts] = true;
			facts_paths[n_facts++] = optarg;
			break;
		case 'i':
			if (!optarg[0])
				return die_usage("empty --intent", NULL);
			cfg.intent = optarg;
			break;
		case 's':
			if (!optarg[0])
				return die_usage("empty --scope", NULL);
			cfg.scope = optarg;
			break;
		case 'r': reject.path = optarg; break;
		case OPT_REVIEW: review.path = optarg; break;
		case OPT_PROMPT:
			if (cfg.prompt || prompt_file)
				return die_usage("give one of --prompt and --prompt-file, once", NULL);
			cfg.prompt = optarg;
			cfg.prompt_len = strlen(optarg);
			break;
		case OPT_PROMPT_FILE:
			if (cfg.prompt || prompt_file)
				return die_usage("give one of --prompt and --prompt-file, once", NULL);
			prompt_file = optarg;
			break;
		case OPT_PREFLIGHT: preflight = true; break;
		case OPT_FAIL_ON_BLOCK: fail_on_block = true; break;
		case OPT_SYSFS_ROOT: cfg.sysfs_root = optarg; break;
		case OPT_CHECK: check_only = true; break;
		case 'h': usage(stdout); return EXIT_OK;
		case 'V': q42_cli_version(prog); return EXIT_OK;
		default: fprintf(stderr, "Try '%s --help'.\n", prog); return EXIT_USAGE;
		}
	}
	if (!policy_path)
		return die_usage("--policy is required", NULL);
	if (optind + 1 < argc)
		return die_usage("at most one RECORDS file", argv[optind + 1]);
	if (optind < argc)
		input = argv[optind];
	if (preflight && !cfg.prompt && !prompt_file)
		return die_usage("--preflight needs --prompt or --prompt-file", NULL);
	if (preflight && input)
		return die_usage("--preflight reads no records", input);
	bool stdin_records = !preflight && !check_only && (!input || strcmp(input, "-") == 0);
	for (size_t i = 0; i < n_facts; i++)
		if (!facts_vol[i] && strcmp(facts_paths[i], "-") == 0 && stdin_records)
			return die_usage("--facts - needs the records in a file", NULL);
	if (prompt_file && strcmp(prompt_file, "-") == 0 && stdin_records)
		return die_usage("--prompt-file - needs the records in a file", NULL);
	if (reject.path && review.path && strcmp(reject.path, review.path) == 0)
		return die_usage("--reject and --review name the same file", reject.path);

	if (q42_policy_load(&policy, policy_path, &err) != Q42_OK) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		status = err.rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_POLICY;
		goto done;
	}
	for (size_t i = 0; i < n_facts; i++) {
		int frc = facts_vol[i] ? q42_facts_load_volume(&facts, facts_paths[i], &err)
				       : q42_facts_load(&facts, facts_paths[i], &err);
		if (frc != Q42_OK) {
			fprintf(stderr, "%s: %s\n", prog, err.msg);
			status = err.rc == Q42_ENOMEM ? EXIT_NOMEM : EXIT_POLICY;
			goto done;
		}
	}
	if (check_only) {
		printf("policy\t%s\t%zu intents\t%zu egress patterns\t%zu shapes\tsha256 %s\n", policy_path,
		       policy.n_intents, policy.n_egress, policy.n_shapes, policy.sha256);
		if (n_facts)
			printf("facts\t%zu file(s)\t%llu statements\n", n_facts,
			       (unsigned long long)facts.n_statements);
		goto done;
	}
	if (prompt_file) {
		if (q42_map_open(&pmap, prompt_file, 0, &err) != Q42_OK) {
			fprintf(stderr, "%s: %s\n", prog, err.msg);
			status = EXIT_IO;
			goto done;
		}
		pmap_open = true;
		if (pmap.size > MAX_PROMPT_BYTES) {
			fprintf(stderr, "%s: %s: prompt larger than %u bytes\n", prog, prompt_file, MAX_PROMPT_BYTES);
			status = EXIT_USAGE;
			goto done;
		}
		cfg.prompt = pmap.data ? (const char *)pmap.data : "";
		cfg.prompt_len = (size_t)pmap.size;
	}
	cfg.policy = &policy;
	cfg.facts = n_facts ? &facts : NULL;
	cfg.review = review.path != NULL;
	if (sink_open(&reject) != 0 || sink_open(&review) != 0) {
		status = EXIT_IO;
		goto done;
	}

	if (preflight) {
		if (q42_grd_preflight(&cfg, &v, &out, &err) != Q42_OK) {
			fprintf(stderr, "%s: %s\n", prog, err.msg);
			status = EXIT_NOMEM;
			goto done;
		}
		if (fwrite(out.data, 1, out.len, stdout) != out.len || fflush(stdout) != 0) {
			fprintf(stderr, "%s: standard output: %s\n", prog, strerror(errno));
			status = EXIT_IO;
			goto done;
		}
		if (v.decision != Q42_DECISION_PASS) {
			if (reject.fd >= 0 && sink_put(&reject, &out) != 0)
				status = EXIT_IO;
			else
				status = EXIT_BLOCKED;
		}
		goto done;
	}

	if (input && strcmp(input, "-") != 0) {
		in = fopen(input, "re");
		if (!in) {
			fprintf(stderr, "%s: %s: %s\n", prog, input, strerror(errno));
			status = EXIT_IO;
			goto done;
		}
	}
	rd.fd = fileno(in);
	for (;;) {
		int r = read_line(&rd, &line, Q42_GRD_MAX_LINE);
		if (r < 0) {
			fprintf(stderr, "%s: %s: read error\n", prog, input ? input : "standard input");
			status = EXIT_IO;
			break;
		}
		if (r == 0)
			break;
		line_no++;
		if (line.len == 0)
			continue;
		q42_buf_reset(&out);
		if (q42_grd_check(&cfg, line.data, line.len, line_no, &v, &out, &err) != Q42_OK) {
			fprintf(stderr, "%s: %s\n", prog, err.msg);
			status = EXIT_NOMEM;
			break;
		}
		if (v.decision == Q42_DECISION_PASS) {
			if (fwrite(out.data, 1, out.len, stdout) != out.len || fflush(stdout) != 0) {
				fprintf(stderr, "%s: standard output: %s\n", prog, strerror(errno));
				status = EXIT_IO;
				break;
			}
		} else if (v.decision == Q42_DECISION_REVIEW) {
			if (sink_put(&review, &out) != 0) {
				status = EXIT_IO;
				break;
			}
		} else {
			n_block++;
			if (reject.fd >= 0) {
				if (sink_put(&reject, &out) != 0) {
					status = EXIT_IO;
					break;
				}
			} else {
				report_block(line_no, &v);
			}
		}
	}
	if (status == EXIT_OK && fail_on_block && n_block > 0)
		status = EXIT_BLOCKED;
done:
	if (in && in != stdin)
		fclose(in);
	if (reject.fd >= 0 && close(reject.fd) != 0 && status == EXIT_OK)
		status = EXIT_IO;
	if (review.fd >= 0 && close(review.fd) != 0 && status == EXIT_OK)
		status = EXIT_IO;
	if (pmap_open)
		q42_map_close(&pmap);
	q42_verdict_free(&v);
	q42_buf_free(&line);
	q42_buf_free(&out);
	q42_facts_free(&facts);
	q42_policy_free(&policy);
	return status;
}
