/* p64check.c -- validate P64 (and GGUF) files, or inspect one of them.
 *
 * Option parsing, the per-file verdict lines and the exit status live here
 * (p64check(1)); validation, digests, signatures and the proof against a
 * source GGUF are libq42's (q42_source, q42_p64, q42_digest), and the
 * listings are in list.c. Nothing here reads a file format by hand.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bin/cli/q42_cli.h"
#include "p64check.h"
#include "rows.h"
#include "common/q42_buf.h"
#include "common/q42_file.h"
#include "formats/q42_digest.h"
#include "formats/q42_p64.h"
#include "formats/q42_source.h"
#include "engine/q42_engine.h"

enum exit_status { EXIT_OK = 0, EXIT_INVALID = 1, EXIT_USAGE = 2, EXIT_IO = 3 };

enum list_mode {
	LIST_NONE, LIST_HEADER, LIST_METADATA, LIST_ARRAY, LIST_TENSORS,
	LIST_TOKENIZER, LIST_TOKENS, LIST_MANIFOLD, LIST_VALUES, LIST_MATVEC,
};

typedef struct opts {
	const char *against;
	const char *sha256_hex;
	uint8_t sha256[Q42_SHA256_LEN];
	const char *sums_path;
	const char *verify_key;
	enum list_mode list;
	const char *list_arg;
	const char *matvec_x; /* --matvec's X */
	enum q42_arith arith; /* --arith, for --matvec */
	bool has_arith;
	bool json;
	const char *quality; /* --quality BASE */
	quality_opts qo;
} opts;

/* One parsed line of a sha256sum file. */
typedef struct sum_entry {
	uint8_t digest[Q42_SHA256_LEN];
	char *name;
} sum_entry;

typedef struct sums {
	sum_entry *v;
	size_t n;
} sums;

static const char *prog = "p64check";

static void usage_short(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", prog);
}

static void help(void)
{
	printf("Usage: %s [OPTIONS] FILE...\n"
	       "Validate P64 containers (and GGUF files), or inspect one file.\n"
	       "The format is told by the magic bytes, never by the file name.\n"
	       "\n"
	       "Validation (default): one verdict line per FILE\n"
	       "  FILE<TAB>OK<TAB>FORMAT vN<TAB>N tensors<TAB>N bytes<TAB>CHECKS\n"
	       "  FILE<TAB>INVALID<TAB>MESSAGE     FILE<TAB>ERROR<TAB>MESSAGE\n"
	       "      --against SOURCE.gguf  prove each P64 holds exactly this GGUF\n"
	       "      --sha256 HEX           the file's SHA-256 must be HEX (one FILE)\n"
	       "      --sha256-file SUMS     look each FILE up in SUMS (sha256sum format)\n"
	       "      --verify PUBKEY.pem    check the Ed25519 signature FILE.sig\n"
	       "\n"
	       "Inspection (one FILE, one of these; TSV with a header line):\n"
	       "      --header               container header fields\n"
	       "      --metadata             key/value metadata (key, type, value)\n"
	       "      --array KEY            the elements of one array key\n"
	       "      --tensors              tensor table (P64 adds role, layer, crc32c...)\n"
	       "      --tokenizer            tokenizer summary\n"
	       "      --tokens               one row per token (id, token, score, type)\n"
	       "      --manifold             P64 manifold records\n"
	       "      --values NAME[:FIRST[:COUNT]]  dequantized f32 values of a tensor\n"
	       "      --matvec NAME X        tensor NAME times the float32 vector in X ('-':\n"
	       "                             stdin), one row per output (row, value)\n"
	       "      --arith MODE           --matvec's rounding, as q42run's --arith (auto)\n"
	       "\n"
	       "      --json                 JSON Lines instead of TSV\n"
	       "\n"
	       "Quality gate: %s --quality BASE TEXT MODEL (p64check(1), QUALITY GATE)\n"
	       "      --quality BASE         KL divergence of MODEL from BASE over TEXT\n"
	       "      --max-kl X             fail (exit 1) when the mean KL exceeds X\n"
	       "      --min-same-top Y       fail when the same-top rate is below Y (0..1)\n"
	       "      --ctx N                window of N tokens (default: the model's context)\n"
	       "      --threads N            worker threads (default: online cores)\n"
	       "  -h, --help                 show this help and exit\n"
	       "  -V, --version              show the version and exit\n"
	       "\n"
	       "Exit status: 0 valid, 1 invalid (or the item asked for is absent),\n"
	       "2 usage error, 3 I/O error; --quality: 1 also when a threshold is missed.\n"
	       "See p64check(1).\n",
	       prog, prog);
}

/* As every program (q42_cli_status), except that a bad argument found in a
 * file's contents is the file's fault: 1, not 2. */
static int status_of(int rc)
{
	return rc == Q42_EARG ? EXIT_INVALID : q42_cli_status(rc);
}

/* ---- sha256sum files -------------------------------------------------- */

static void sums_free(sums *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].name);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

/* Undo sha256sum's escaping of names holding '\\' or a newline (such lines
 * start with '\\'). */
static char *unescape_name(const char *p, size_t n, bool escaped)
{
	char *out = malloc(n + 1), *o = out;

	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (escaped && p[i] == '\\' && i + 1 < n) {
			i++;
			*o++ = p[i] == 'n' ? '\n' : p[i];
		} else {
			*o++ = p[i];
		}
	}
	*o = '\0';
	return out;
}

/* Read "HEX  NAME" / "HEX *NAME" lines as sha256sum writes them. */
static int sums_load(sums *s, const char *path, q42_err *err)
{
	q42_map m;
	uint64_t pos = 0;
	size_t line_no = 0, cap = 0;
	int rc = q42_map_open(&m, path, 0, err);

	memset(s, 0, sizeof *s);
	if (rc != Q42_OK)
		return rc;
	while (pos < m.size) {
		const char *line = (const char *)m.data + pos;
		const char *nl = memchr(line, '\n', m.size - pos);
		size_t len = nl ? (size_t)(nl - line) : (size_t)(m.size - pos);
		bool escaped = false;
		char hex[Q42_SHA256_HEX_LEN + 1];

		pos += len + (nl ? 1 : 0);
		line_no++;
		if (len > 0 && line[len - 1] == '\r')
			len--;
		if (len == 0 || line[0] == '#')
			continue;
		if (line[0] == '\\') {
			escaped = true;
			line++;
			len--;
		}
		if (len < Q42_SHA256_HEX_LEN + 2 || line[Q42_SHA256_HEX_LEN] != ' ' ||
		    (line[Q42_SHA256_HEX_LEN + 1] != ' ' && line[Q42_SHA256_HEX_LEN + 1] != '*')) {
			rc = q42_err_set(err, Q42_EFORMAT, "%s:%zu: not a sha256sum line", path, line_no);
			goto fail;
		}
		if (s->n == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			sum_entry *v = realloc(s->v, ncap * sizeof *v);
			if (v == NULL) {
				rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
				goto fail;
			}
			s->v = v;
			cap = ncap;
		}
		memcpy(hex, line, Q42_SHA256_HEX_LEN);
		hex[Q42_SHA256_HEX_LEN] = '\0';
		rc = q42_hex_decode(hex, s->v[s->n].digest, Q42_SHA256_LEN, err);
		if (rc != Q42_OK) {
			q42_err_prefix(err, "%s:%zu", path, line_no);
			goto fail;
		}
		s->v[s->n].name = unescape_name(line + Q42_SHA256_HEX_LEN + 2,
						len - Q42_SHA256_HEX_LEN - 2, escaped);
		if (s->v[s->n].name == NULL) {
			rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
			goto fail;
		}
		s->n++;
	}
	q42_map_close(&m);
	return Q42_OK;
fail:
	q42_map_close(&m);
	sums_free(s);
	return rc;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* The entry for file: the same name, else the only entry with the same
 * base name. */
static const sum_entry *sums_find(const sums *s, const char *file)
{
	const sum_entry *hit = NULL;
	size_t hits = 0;

	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i].name, file) == 0)
			return &s->v[i];
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(base_name(s->v[i].name), base_name(file)) == 0)
			hit = &s->v[i], hits++;
	return hits == 1 ? hit : NULL;
}

/* ---- validation of one file ------------------------------------------- */

static int check_digest(const q42_source *s, const uint8_t want[Q42_SHA256_LEN],
			const char *what, q42_err *err)
{
	uint8_t got[Q42_SHA256_LEN];
	char got_hex[Q42_SHA256_HEX_LEN + 1], want_hex[Q42_SHA256_HEX_LEN + 1];
	int rc = q42_sha256(s->map.data, s->map.size, got, err);

	if (rc != Q42_OK)
		return rc;
	if (memcmp(got, want, Q42_SHA256_LEN) == 0)
		return Q42_OK;
	q42_hex_encode(got, Q42_SHA256_LEN, got_hex);
	q42_hex_encode(want, Q42_SHA256_LEN, want_hex);
	return q42_err_set(err, Q42_EFORMAT, "sha256: expected %s (%s), found %s", want_hex, what,
			   got_hex);
}

static int check_signature(const q42_source *s, const char *file, const char *key, q42_err *err)
{
	q42_map sig;
	char *sig_path;
	size_t n = strlen(file) + sizeof ".sig";
	int rc;

	sig_path = malloc(n);
	if (sig_path == NULL)
		return q42_err_set(err, Q42_ENOMEM, "out of memory");
	snprintf(sig_path, n, "%s.sig", file);
	rc = q42_map_open(&sig, sig_path, 0, err);
	if (rc == Q42_OK) {
		if (sig.size != Q42_ED25519_SIG_LEN)
			rc = q42_err_set(err, Q42_EFORMAT,
					 "%s: expected a %d-byte Ed25519 signature, found %" PRIu64
					 " bytes", sig_path, Q42_ED25519_SIG_LEN, sig.size);
		else
			rc = q42_ed25519_verify(key, s->map.data, (size_t)s->map.size, sig.data, err);
		if (rc == Q42_EFORMAT && sig.size == Q42_ED25519_SIG_LEN)
			q42_err_prefix(err, "signature %s", sig_path);
		q42_map_close(&sig);
	}
	free(sig_path);
	return rc;
}

static int check_against(const q42_source *s, const char *source_path, q42_err *err)
{
	q42_source src;
	int rc;

	if (s->kind != Q42_SOURCE_P64)
		return q42_err_set(err, Q42_EFORMAT, "--against: the file is %s, not P64",
				   q42_source_kind_name(s->kind));
	rc = q42_source_open(&src, source_path, err);
	if (rc == Q42_OK && src.kind != Q42_SOURCE_GGUF)
		rc = q42_err_set(err, Q42_EFORMAT, "--against %s: the source is %s, not GGUF",
				 source_path, q42_source_kind_name(src.kind));
	if (rc == Q42_OK) {
		rc = q42_p64_against(&s->p64, &src.gguf, err);
		if (rc != Q42_OK)
			q42_err_prefix(err, "source %s", source_path);
	}
	q42_source_close(&src);
	return rc;
}

/* The checks a file passed, in the order they ran. */
typedef struct checks {
	const char *name[8];
	size_t n;
} checks;

static void checks_add(checks *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->name[i], name) == 0)
			return;
	if (c->n < sizeof c->name / sizeof *c->name)
		c->name[c->n++] = name;
}

static void verdict_ok(const char *file, const q42_source *s, const checks *ck, bool json)
{
	uint32_t version = s->kind == Q42_SOURCE_P64 ? s->p64.version : s->gguf.version;
	uint64_t n_tensors = q42_source_tensor_count(s);

	if (json) {
		json_t *j = json_object(), *c = json_array();
		for (size_t i = 0; i < ck->n; i++)
			json_array_append_new(c, json_string(ck->name[i]));
		json_object_set_new(j, "file", json_text(file, strlen(file)));
		json_object_set_new(j, "verdict", json_string("OK"));
		json_object_set_new(j, "format", json_string(q42_source_kind_name(s->kind)));
		json_object_set_new(j, "version", json_integer(version));
		json_object_set_new(j, "tensors", json_integer((json_int_t)n_tensors));
		json_object_set_new(j, "bytes", json_integer((json_int_t)s->map.size));
		json_object_set_new(j, "checks", c);
		json_dumpf(j, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(j);
		return;
	}
	q42_buf b;
	q42_buf_init(&b);
	tsv_escape(&b, file, strlen(file), false);
	q42_buf_printf(&b, "\tOK\t%s v%" PRIu32 "\t%" PRIu64 " tensors\t%" PRIu64 " bytes\t",
		       q42_source_kind_name(s->kind), version, n_tensors, s->map.size);
	for (size_t i = 0; i < ck->n; i++)
		q42_buf_printf(&b, "%s%s", i ? "," : "", ck->name[i]);
	fwrite(b.data, 1, b.len, stdout);
	fputc('\n', stdout);
	q42_buf_free(&b);
}

static void verdict_bad(const char *file, int status, const char *msg, bool json)
{
	const char *word = status == EXIT_IO ? "ERROR" : "INVALID";

	if (json) {
		json_t *j = json_object();
		json_object_set_new(j, "file", json_text(file, strlen(file)));
		json_object_set_new(j, "verdict", json_string(word));
		json_object_set_new(j, "message", json_text(msg, strlen(msg)));
		json_dumpf(j, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(j);
		return;
	}
	q42_buf b;
	q42_buf_init(&b);
	tsv_escape(&b, file, strlen(file), false);
	q42_buf_printf(&b, "\t%s\t", word);
	tsv_escape(&b, msg, strlen(msg), false);
	fwrite(b.data, 1, b.len, stdout);
	fputc('\n', stdout);
	q42_buf_free(&b);
}

/* Validate one file with every check asked for; prints its verdict line and
 * returns its exit status. */
static int validate(const char *file, const opts *o, const sums *sm)
{
	q42_source s;
	q42_err err = {0};
	checks ck = {0};
	int rc = q42_source_open(&s, file, &err);

	if (rc == Q42_OK) {
		checks_add(&ck, "structure");
		if (s.kind == Q42_SOURCE_P64)
			checks_add(&ck, "crc32c");
	}
	if (rc == Q42_OK && o->sha256_hex != NULL) {
		rc = check_digest(&s, o->sha256, "--sha256", &err);
		if (rc == Q42_OK)
			checks_add(&ck, "sha256");
	}
	if (rc == Q42_OK && sm != NULL) {
		const sum_entry *e = sums_find(sm, file);
		if (e == NULL)
			rc = q42_err_set(&err, Q42_EFORMAT, "sha256: not listed in %s", o->sums_path);
		else
			rc = check_digest(&s, e->digest, o->sums_path, &err);
		if (rc == Q42_OK)
			checks_add(&ck, "sha256");
	}
	if (rc == Q42_OK && o->verify_key != NULL) {
		rc = check_signature(&s, file, o->verify_key, &err);
		if (rc == Q42_OK)
			checks_add(&ck, "ed25519");
	}
	if (rc == Q42_OK && o->against != NULL) {
		rc = check_against(&s, o->against, &err);
		if (rc == Q42_OK)
			checks_add(&ck, "against");
	}
	if (rc == Q42_OK)
		verdict_ok(file, &s, &ck, o->json);
	else
		verdict_bad(file, status_of(rc), err.msg, o->json);
	q42_source_close(&s);
	return status_of(rc);
}

static int inspect(const char *file, const opts *o)
{
	q42_source s;
	q42_err err = {0};
	int rc = q42_source_open(&s, file, &err);

	if (rc == Q42_OK) {
		switch (o->list) {
		case LIST_HEADER:
			rc = list_header(&s, stdout, o->json, &err);
			break;
		case LIST_METADATA:
			rc = list_metadata(&s, stdout, o->json, &err);
			break;
		case LIST_ARRAY:
			rc = list_array(&s, o->list_arg, stdout, o->json, &err);
			break;
		case LIST_TENSORS:
			rc = list_tensors(&s, stdout, o->json, &err);
			break;
		case LIST_TOKENIZER:
			rc = list_tokenizer(&s, stdout, o->json, &err);
			break;
		case LIST_TOKENS:
			rc = list_tokens(&s, stdout, o->json, &err);
			break;
		case LIST_MANIFOLD:
			rc = list_manifold(&s, stdout, o->json, &err);
			break;
		case LIST_VALUES:
			rc = list_values(&s, o->list_arg, stdout, o->json, &err);
			break;
		case LIST_MATVEC:
			rc = list_matvec(&s, o->list_arg, o->matvec_x, o->arith, stdout, o->json, &err);
			break;
		case LIST_NONE:
			break;
		}
	}
	if (rc != Q42_OK)
		fprintf(stderr, "%s: %s\n", prog, err.msg);
	q42_source_close(&s);
	return status_of(rc);
}

enum { OPT_AGAINST = 256, OPT_SHA256, OPT_SHA256_FILE, OPT_VERIFY, OPT_HEADER, OPT_METADATA,
       OPT_ARRAY, OPT_TENSORS, OPT_TOKENIZER, OPT_TOKENS, OPT_MANIFOLD, OPT_VALUES, OPT_JSON,
       OPT_QUALITY, OPT_MAX_KL, OPT_MIN_SAME_TOP, OPT_CTX, OPT_THREADS, OPT_MATVEC, OPT_ARITH };

static const struct option long_opts[] = {
	{"against", required_argument, NULL, OPT_AGAINST},
	{"sha256", required_argument, NULL, OPT_SHA256},
	{"sha256-file", required_argument, NULL, OPT_SHA256_FILE},
	{"verify", required_argument, NULL, OPT_VERIFY},
	{"header", no_argument, NULL, OPT_HEADER},
	{"metadata", no_argument, NULL, OPT_METADATA},
	{"array", required_argument, NULL, OPT_ARRAY},
	{"tensors", no_argument, NULL, OPT_TENSORS},
	{"tokenizer", no_argument, NULL, OPT_TOKENIZER},
	{"tokens", no_argument, NULL, OPT_TOKENS},
	{"manifold", no_argument, NULL, OPT_MANIFOLD},
	{"values", required_argument, NULL, OPT_VALUES},
	{"matvec", required_argument, NULL, OPT_MATVEC},
	{"arith", required_argument, NULL, OPT_ARITH},
	{"json", no_argument, NULL, OPT_JSON},
	{"quality", required_argument, NULL, OPT_QUALITY},
	{"max-kl", required_argument, NULL, OPT_MAX_KL},
	{"min-same-top", required_argument, NULL, OPT_MIN_SAME_TOP},
	{"ctx", required_argument, NULL, OPT_CTX},
	{"threads", required_argument, NULL, OPT_THREADS},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static bool set_list(opts *o, enum list_mode m, const char *arg)
{
	if (o->list != LIST_NONE) {
		fprintf(stderr, "%s: only one inspection option may be given\n", prog);
		return false;
	}
	o->list = m;
	o->list_arg = arg;
	return true;
}

int main(int argc, char **argv)
{
	opts o;
	sums sm = {0};
	q42_err err = {0};
	int c, status = EXIT_OK;
	bool ok = true;

	memset(&o, 0, sizeof o);
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hV", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_AGAINST:
			o.against = optarg;
			break;
		case OPT_SHA256:
			o.sha256_hex = optarg;
			if (q42_hex_decode(optarg, o.sha256, Q42_SHA256_LEN, &err) != Q42_OK) {
				fprintf(stderr, "%s: --sha256: expected 64 hex digits, found '%s'\n",
					prog, optarg);
				ok = false;
			}
			break;
		case OPT_SHA256_FILE:
			o.sums_path = optarg;
			break;
		case OPT_VERIFY:
			o.verify_key = optarg;
			break;
		case OPT_HEADER:
		case OPT_METADATA:
		case OPT_ARRAY:
		case OPT_TENSORS:
		case OPT_TOKENIZER:
		case OPT_TOKENS:
		case OPT_MANIFOLD:
		case OPT_VALUES:
			/* these options and their listings are declared in the same
			 * order; --array and --values take an argument */
			ok = ok && set_list(&o, (enum list_mode)(LIST_HEADER + (c - OPT_HEADER)),
					    c == OPT_ARRAY || c == OPT_VALUES ? optarg : NULL);
			break;
		case OPT_MATVEC:
			/* the option's second argument, X, is the next word */
			if (optind >= argc) {
				fprintf(stderr, "%s: --matvec NAME X: X (a float32 file or '-') is missing\n", prog);
				ok = false;
				break;
			}
			o.matvec_x = argv[optind++];
			ok = ok && set_list(&o, LIST_MATVEC, optarg);
			break;
		case OPT_ARITH:
			o.has_arith = true;
			if (!q42_arith_from_name(optarg, &o.arith)) {
				fprintf(stderr, "%s: --arith '%s': expected " Q42_ARITH_NAMES "\n", prog, optarg);
				ok = false;
			}
			break;
		case OPT_JSON:
			o.json = true;
			break;
		case OPT_QUALITY:
			o.quality = optarg;
			break;
		case OPT_MAX_KL:
		case OPT_MIN_SAME_TOP: {
			char *end;
			double v;
			errno = 0;
			v = strtod(optarg, &end);
			if (errno != 0 || end == optarg || *end != '\0' || !(v >= 0) ||
			    (c == OPT_MIN_SAME_TOP && v > 1) || !isfinite(v)) {
				fprintf(stderr, "%s: --%s: expected a number %s, found '%s'\n", prog,
					c == OPT_MAX_KL ? "max-kl" : "min-same-top",
					c == OPT_MAX_KL ? ">= 0" : "in 0..1", optarg);
				ok = false;
			} else if (c == OPT_MAX_KL) {
				o.qo.has_max_kl = true;
				o.qo.max_kl = v;
			} else {
				o.qo.has_min_same_top = true;
				o.qo.min_same_top = v;
			}
			break;
		}
		case OPT_CTX:
		case OPT_THREADS: {
			char *end;
			unsigned long v;
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' || optarg[0] < '0' ||
			    optarg[0] > '9' || v == 0 || v > (c == OPT_CTX ? Q42_ENGINE_CTX_MAX : 256u)) {
				fprintf(stderr, "%s: --%s: expected an integer in 1..%u, found '%s'\n",
					prog, c == OPT_CTX ? "ctx" : "threads",
					c == OPT_CTX ? Q42_ENGINE_CTX_MAX : 256u, optarg);
				ok = false;
			} else {
				*(c == OPT_CTX ? &o.qo.n_ctx : &o.qo.n_threads) = (uint32_t)v;
			}
			break;
		}
		case 'h':
			help();
			return EXIT_OK;
		case 'V':
			q42_cli_version("p64check (q42)");
			return EXIT_OK;
		case '?':
		default:
			if (optopt != 0 && optopt < 256)
				fprintf(stderr, "%s: invalid option or missing argument: -%c\n", prog,
					optopt);
			else
				fprintf(stderr, "%s: invalid option or missing argument: %s\n", prog,
					argv[optind - 1]);
			ok = false;
			break;
		}
	}
	if (ok && o.has_arith && o.list != LIST_MATVEC) {
		fprintf(stderr, "%s: --arith goes with --matvec\n", prog);
		ok = false;
	}
	if (ok && o.quality == NULL &&
	    (o.qo.has_max_kl || o.qo.has_min_same_top || o.qo.n_ctx || o.qo.n_threads)) {
		fprintf(stderr, "%s: --max-kl, --min-same-top, --ctx and --threads need --quality\n",
			prog);
		ok = false;
	}
	if (ok && o.quality != NULL &&
	    (o.list != LIST_NONE || o.against || o.sha256_hex || o.sums_path || o.verify_key ||
	     argc - optind != 2)) {
		fprintf(stderr, "%s: --quality BASE takes exactly TEXT and MODEL and no other "
			"validation or inspection option\n", prog);
		ok = false;
	}
	if (ok && optind >= argc) {
		fprintf(stderr, "%s: no FILE given\n", prog);
		ok = false;
	}
	if (ok && o.list != LIST_NONE &&
	    (o.against || o.sha256_hex || o.sums_path || o.verify_key)) {
		fprintf(stderr, "%s: inspection options cannot be combined with validation options\n",
			prog);
		ok = false;
	}
	if (ok && o.list != LIST_NONE && argc - optind != 1) {
		fprintf(stderr, "%s: inspection takes exactly one FILE\n", prog);
		ok = false;
	}
	if (ok && o.sha256_hex != NULL && argc - optind != 1) {
		fprintf(stderr, "%s: --sha256 takes exactly one FILE (use --sha256-file)\n", prog);
		ok = false;
	}
	for (int i = optind; ok && i < argc; i++) {
		if (strcmp(argv[i], "-") == 0 && o.verify_key != NULL) {
			fprintf(stderr, "%s: --verify needs a file name to find FILE.sig, not '-'\n",
				prog);
			ok = false;
		}
	}
	if (!ok) {
		usage_short();
		return EXIT_USAGE;
	}
	if (o.quality != NULL) {
		status = quality_gate(o.quality, argv[optind], argv[optind + 1], &o.qo);
		if (fflush(stdout) != 0 || ferror(stdout)) {
			fprintf(stderr, "%s: stdout: write failed: %s\n", prog, strerror(errno));
			return EXIT_IO;
		}
		return status;
	}
	if (o.list != LIST_NONE)
		return inspect(argv[optind], &o);
	if (o.sums_path != NULL) {
		int rc = sums_load(&sm, o.sums_path, &err);
		if (rc != Q42_OK) {
			fprintf(stderr, "%s: %s\n", prog, err.msg);
			return status_of(rc) == EXIT_IO ? EXIT_IO : EXIT_USAGE;
		}
	}
	for (int i = optind; i < argc; i++) {
		int st = validate(argv[i], &o, o.sums_path ? &sm : NULL);
		if (st > status)
			status = st;
	}
	sums_free(&sm);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "%s: stdout: write failed: %s\n", prog, strerror(errno));
		return EXIT_IO;
	}
	return status;
}
