/* p64c.c -- compile a GGUF model, a Safetensors file, a Hugging Face folder
 * or an archive of one into a P64 container, or rebuild the GGUF from a
 * byte-preserving P64 (--to-gguf).
 *
 * Option parsing, output naming, the progress bar and the --json summary
 * live here (p64c(1)); compiling, rebuilding, hashing and signing are
 * libq42's. The input format is decided by its magic bytes only. Output
 * (and its .sig) go through q42_outfile, so a failure leaves no file.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "bin/cli/q42_cli.h"
#include "common/q42_file.h"
#include "formats/q42_digest.h"
#include "formats/q42_p64.h"
#include "formats/q42_profile.h"
#include "formats/q42_safetensors.h"
#include "formats/q42_source.h"
#include "common/q42_types.h"

enum exit_status { EXIT_OK = 0, EXIT_INVALID = 1, EXIT_USAGE = 2, EXIT_IO = 3 };

typedef struct opts {
	const char *input;
	const char *output;    /* NULL: derived from input */
	uint32_t page_log2;
	bool to_gguf;
	const char *sign_key;
	int progress;          /* -1 auto (stderr is a terminal), 0 off, 1 on */
	bool json;
	int32_t type;          /* --type: ggml dtype id, -1 keep */
	uint32_t profile;      /* --profile: enum q42_profile_id */
	char *lora_path[Q42_LORA_MAX]; /* --lora FILE[:SCALE], in order */
	float lora_scale[Q42_LORA_MAX];
	uint32_t n_lora;
} opts;

static const char *prog = "p64c";

static void help(void)
{
	printf("Usage: %s [OPTIONS] INPUT [-o OUTPUT]\n"
	       "Compile a GGUF model, a .safetensors file, a Hugging Face model folder or\n"
	       "a .tar/.tar.gz/.tar.zst/.zip of one into a P64 container, or rebuild the\n"
	       "GGUF from a byte-preserving P64 with --to-gguf. The input format is told\n"
	       "by its magic bytes. INPUT '-' reads stdin (GGUF or P64 only).\n"
	       "\n"
	       "  -o, --output FILE     output path ('-' = stdout); default: INPUT with\n"
	       "                        .gguf replaced by .p64 (.p64 by .gguf with --to-gguf)\n"
	       "      --page-log2 N     blob alignment 2^N bytes, N in %u..%u (default %u)\n"
	       "      --to-gguf         rebuild the source GGUF, byte-exact, from a P64\n"
	       "      --type T          output dtype of the weights: f32, f16, bf16, q8_0\n"
	       "                        (default: each tensor keeps its source dtype)\n"
	       "      --profile NAME    quantize by role: ffn-q4_0, ffn-tq, q8_0\n"
	       "      --lora FILE[:SCALE]  merge the LoRA adapter in FILE (llama.cpp's GGUF\n"
	       "                        adapter) with SCALE (default 1) into the weights;\n"
	       "                        repeatable, up to 16\n"
	       "      --sign KEY.pem    write an Ed25519 signature of OUTPUT to OUTPUT.sig\n"
	       "      --progress        show a progress bar on stderr\n"
	       "      --no-progress     never show it (default: shown when stderr is a terminal)\n"
	       "      --json            print a JSON summary on stdout (stderr when OUTPUT is -)\n"
	       "  -h, --help            show this help and exit\n"
	       "  -V, --version         show the version and exit\n"
	       "\n"
	       "Exit status: 0 success, 1 invalid or unsupported input, 2 usage error,\n"
	       "3 I/O error. See p64c(1).\n",
	       prog, Q42_P64_PAGE_LOG2_MIN, Q42_P64_PAGE_LOG2_MAX, Q42_P64_PAGE_LOG2_DEFAULT);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- progress: a counting stream in front of the real output ---------- */

typedef struct progress {
	FILE *under;
	uint64_t written;
	uint64_t expected;
	int shown; /* last permille drawn, -1 none */
} progress;

static void progress_draw(progress *p, bool done)
{
	enum { WIDTH = 40 };
	uint64_t pm = p->expected ? p->written * 1000 / p->expected : 1000;
	char bar[WIDTH + 1];

	if (done)
		pm = 1000;
	else if (pm > 999)
		pm = 999;
	if ((int)pm == p->shown)
		return;
	p->shown = (int)pm;
	for (int i = 0; i < WIDTH; i++)
		bar[i] = (uint64_t)i * 1000 < pm * WIDTH ? '#' : ' ';
	bar[WIDTH] = '\0';
	fprintf(stderr, "\r%s: [%s] %3u.%u%% %8.1f MiB%s", prog, bar, (unsigned)(pm / 10),
		(unsigned)(pm % 10), (double)p->written / 1048576.0, done ? "\n" : "");
	fflush(stderr);
}

static ssize_t progress_write(void *cookie, const char *buf, size_t n)
{
	progress *p = cookie;
	size_t w = fwrite(buf, 1, n, p->under);

	p->written += w;
	progress_draw(p, false);
	return w == n ? (ssize_t)w : -1;
}

static int progress_seek(void *cookie, off64_t *off, int whence)
{
	progress *p = cookie;

	if (fseeko(p->under, (off_t)*off, whence) != 0)
		return -1;
	off_t pos = ftello(p->under);
	if (pos < 0)
		return -1;
	*off = pos;
	return 0;
}

static int progress_close(void *cookie)
{
	progress *p = cookie;
	return fflush(p->under) == 0 ? 0 : -1;
}

/* ---- output naming ---------------------------------------------------- */

/* INPUT with from_ext replaced by to_ext (appended when INPUT lacks it);
 * stdin goes to stdout. */
static char *derive_output(const char *input, const char *from_ext, const char *to_ext)
{
	static const char *const hf_exts[] = {".safetensors", ".tar.gz", ".tgz", ".tar.zst",
					      ".tar", ".zip"};
	size_t n = strlen(input), fe = strlen(from_ext), te = strlen(to_ext);
	char *out;

	if (strcmp(input, "-") == 0)
		return strdup("-");
	while (n > 1 && input[n - 1] == '/') /* a folder given as "dir/" */
		n--;
	if (n > fe && strncmp(input + n - fe, from_ext, fe) == 0) {
		n -= fe;
	} else if (strcmp(to_ext, ".p64") == 0) {
		for (size_t i = 0; i < sizeof hf_exts / sizeof hf_exts[0]; i++) {
			size_t k = strlen(hf_exts[i]);
			if (n > k && strncmp(input + n - k, hf_exts[i], k) == 0) {
				n -= k;
				break;
			}
		}
	}
	out = malloc(n + te + 1);
	if (out == NULL)
		return NULL;
	memcpy(out, input, n);
	memcpy(out + n, to_ext, te + 1);
	return out;
}

/* ---- the summary -------------------------------------------------------- */

typedef struct summary {
	const char *mode;
	const char *in_format, *out_format;
	uint64_t n_tensors, in_bytes, out_bytes;
	uint32_t page_log2;
	uint8_t in_sha[Q42_SHA256_LEN], out_sha[Q42_SHA256_LEN];
	bool has_in_sha, has_out_sha;
	const char *sig_path;
	const char *hparams_note, *vocab_note;
	const char *policy;
	uint64_t n_rewritten, n_merged;
	double t_read, t_write, t_sign, t_total;
} summary;

static json_t *hex_or_null(const uint8_t *p, bool have)
{
	char hex[Q42_SHA256_HEX_LEN + 1];

	if (!have)
		return json_null();
	q42_hex_encode(p, Q42_SHA256_LEN, hex);
	return json_string(hex);
}

static json_t *str_or_null(const char *s)
{
	return s != NULL && *s != '\0' ? json_string(s) : json_null();
}

static void print_summary(FILE *f, const opts *o, const char *output, const summary *s)
{
	json_t *j = json_object(), *sha = json_object(), *t = json_object();

	json_object_set_new(j, "input", json_string(o->input));
	json_object_set_new(j, "output", json_string(output));
	json_object_set_new(j, "mode", json_string(s->mode));
	json_object_set_new(j, "input_format", json_string(s->in_format));
	json_object_set_new(j, "output_format", json_string(s->out_format));
	json_object_set_new(j, "tensors", json_integer((json_int_t)s->n_tensors));
	json_object_set_new(j, "input_bytes", json_integer((json_int_t)s->in_bytes));
	json_object_set_new(j, "output_bytes", json_integer((json_int_t)s->out_bytes));
	json_object_set_new(j, "page_log2",
			    s->page_log2 ? json_integer(s->page_log2) : json_null());
	json_object_set_new(sha, "input", hex_or_null(s->in_sha, s->has_in_sha));
	json_object_set_new(sha, "output", hex_or_null(s->out_sha, s->has_out_sha));
	json_object_set_new(j, "sha256", sha);
	json_object_set_new(j, "signature", str_or_null(s->sig_path));
	json_object_set_new(j, "hparams_note", str_or_null(s->hparams_note));
	json_object_set_new(j, "tokenizer_note", str_or_null(s->vocab_note));
	json_object_set_new(t, "read", json_real(s->t_read));
	json_object_set_new(t, "write", json_real(s->t_write));
	json_object_set_new(t, "sign", json_real(s->t_sign));
	json_object_set_new(t, "total", json_real(s->t_total));
	json_object_set_new(j, "timings_ms", t);
	json_object_set_new(j, "policy", str_or_null(s->policy));
	json_object_set_new(j, "tensors_rewritten", json_integer((json_int_t)s->n_rewritten));
	json_object_set_new(j, "tensors_merged", json_integer((json_int_t)s->n_merged));
	json_dumpf(j, f, JSON_COMPACT | JSON_PRESERVE_ORDER);
	fputc('\n', f);
	fflush(f);
	json_decref(j);
}

/* ---- the run ------------------------------------------------------------ */

/* Digest (for --json) and signature (for --sign) of the finished temporary
 * output. */
static int hash_and_sign(const char *tmp_path, const opts *o, summary *s,
			 uint8_t sig[Q42_ED25519_SIG_LEN], q42_err *err)
{
	q42_map m;
	int rc = q42_map_open(&m, tmp_path, 0, err);

	if (rc != Q42_OK)
		return rc;
	s->out_bytes = m.size;
	/* The output digest is only reported by --json; hashing it otherwise
	 * would cost a second pass over the whole file. */
	if (o->json) {
		rc = q42_sha256(m.data, m.size, s->out_sha, err);
		s->has_out_sha = rc == Q42_OK;
	}
	if (rc == Q42_OK && o->sign_key != NULL) {
		double t0 = now_ms();
		rc = q42_ed25519_sign(o->sign_key, m.data, (size_t)m.size, sig, err);
		s->t_sign = now_ms() - t0;
	}
	q42_map_close(&m);
	return rc;
}

static int run(const opts *o, const char *output, q42_err *err)
{
	q42_source src;
	q42_outfile out, sig_out;
	q42_p64_write_report rep;
	q42_transcode_report trep;
	q42_transcode_opts to = {.type = o->type, .profile = o->profile,
				 .write = {.page_log2 = o->page_log2, .tool = "p64c " Q42_VERSION}};
	bool hf = !o->to_gguf && q42_st_is_candidate(o->input);
	bool transcode = hf || o->type >= 0 || o->profile != Q42_PROFILE_NONE || o->n_lora > 0;
	q42_lora *lora[Q42_LORA_MAX] = {NULL};
	struct stat in_st;
	progress pg = {.shown = -1};
	summary s;
	uint8_t sig[Q42_ED25519_SIG_LEN];
	char *sig_path = NULL;
	FILE *w = NULL;
	double t0 = now_ms(), t1;
	bool to_stdout = strcmp(output, "-") == 0;
	int rc;

	memset(&s, 0, sizeof s);
	memset(&rep, 0, sizeof rep);
	memset(&trep, 0, sizeof trep);
	memset(&src, 0, sizeof src);
	src.map.fd = -1;
	memset(&out, 0, sizeof out);
	memset(&sig_out, 0, sizeof sig_out);
	out.fd = sig_out.fd = -1;

	if (!hf) {
		rc = q42_source_open(&src, o->input, err);
		if (rc != Q42_OK)
			goto done;
	}
	for (uint32_t i = 0; i < o->n_lora; i++) {
		rc = q42_lora_open_model(&lora[i], o->lora_path[i], o->input, err);
		if (rc != Q42_OK)
			goto done;
	}
	to.lora = (const q42_lora *const *)lora;
	to.lora_scale = o->lora_scale;
	to.n_lora = o->n_lora;
	if (src.kind == Q42_SOURCE_P64 && !o->to_gguf) {
		rc = q42_err_set(err, Q42_EFORMAT,
				 "%s: the input is already P64 (use --to-gguf to rebuild its GGUF)",
				 o->input);
		goto done;
	}
	if (src.kind == Q42_SOURCE_GGUF && o->to_gguf) {
		rc = q42_err_set(err, Q42_EFORMAT, "%s: --to-gguf needs a P64 input, this is GGUF",
				 o->input);
		goto done;
	}
	s.in_bytes = hf ? (stat(o->input, &in_st) == 0 ? (uint64_t)in_st.st_size : 0) : src.map.size;
	s.t_read = now_ms() - t0;

	if (o->sign_key != NULL) {
		size_t n = strlen(output) + sizeof ".sig";
		sig_path = malloc(n);
		if (sig_path == NULL) {
			rc = q42_err_set(err, Q42_ENOMEM, "out of memory");
			goto done;
		}
		snprintf(sig_path, n, "%s.sig", output);
	}
	rc = q42_outfile_open(&out, output, err);
	if (rc != Q42_OK)
		goto done;
	w = out.fp;
	if (o->progress == 1 || (o->progress < 0 && isatty(STDERR_FILENO))) {
		cookie_io_functions_t io = {.write = progress_write, .seek = progress_seek,
					    .close = progress_close};
		pg.under = out.fp;
		pg.expected = s.in_bytes;
		w = fopencookie(&pg, "w", io);
		if (w == NULL)
			w = out.fp;
	}

	t1 = now_ms();
	if (o->to_gguf) {
		s.mode = "p64-to-gguf", s.in_format = "p64", s.out_format = "gguf";
		s.n_tensors = src.p64.n_tensors;
		pg.expected = src.p64.prov.source_size;
		rc = q42_sha256(src.map.data, src.map.size, s.in_sha, err);
		s.has_in_sha = rc == Q42_OK;
		if (rc == Q42_OK)
			rc = q42_p64_to_gguf(&src.p64, w, err);
		s.out_bytes = src.p64.prov.source_size;
	} else if (transcode) {
		s.mode = hf ? "safetensors-to-p64" : "gguf-to-p64";
		s.out_format = "p64";
		s.page_log2 = o->page_log2 ? o->page_log2 : Q42_P64_PAGE_LOG2_DEFAULT;
		rc = hf ? q42_transcode_hf(o->input, &to, w, &trep, err)
			: q42_transcode_gguf(&src.gguf, &to, w, &trep, err);
		s.in_format = trep.input_kind ? trep.input_kind : "safetensors";
		rep = trep.w;
		s.n_tensors = rep.n_tensors;
		s.out_bytes = rep.bytes_written;
		memcpy(s.in_sha, rep.source_sha256, Q42_SHA256_LEN);
		s.has_in_sha = rc == Q42_OK;
		s.hparams_note = rep.hparams_note;
		s.vocab_note = rep.vocab_note;
		s.policy = trep.policy;
		s.n_rewritten = trep.n_rewritten;
		s.n_merged = trep.n_merged;
	} else {
		q42_p64_write_opts wo = {.page_log2 = o->page_log2, .tool = "p64c " Q42_VERSION};
		s.mode = "gguf-to-p64", s.in_format = "gguf", s.out_format = "p64";
		s.page_log2 = o->page_log2 ? o->page_log2 : Q42_P64_PAGE_LOG2_DEFAULT;
		rc = q42_p64_write(&src.gguf, &wo, w, &rep, err);
		s.n_tensors = rep.n_tensors;
		s.out_bytes = rep.bytes_written;
		memcpy(s.in_sha, rep.source_sha256, Q42_SHA256_LEN);
		s.has_in_sha = rc == Q42_OK;
		s.hparams_note = rep.hparams_note;
		s.vocab_note = rep.vocab_note;
		s.policy = "byte-preserving";
	}
	if (w != out.fp) {
		if (fclose(w) != 0 && rc == Q42_OK)
			rc = q42_err_set(err, Q42_EIO, "%s: write failed: %s", output, strerror(errno));
		if (rc == Q42_OK)
			progress_draw(&pg, true);
		else if (pg.shown >= 0)
			fputc('\n', stderr);
	}
	if (rc == Q42_OK && fflush(out.fp) != 0)
		rc = q42_err_set(err, Q42_EIO, "%s: write failed: %s", output, strerror(errno));
	if (rc != Q42_OK)
		goto done;
	s.t_write = now_ms() - t1;

	if (!to_stdout && (o->json || o->sign_key != NULL)) {
		rc = hash_and_sign(out.tmp_path, o, &s, sig, err);
		if (rc != Q42_OK)
			goto done;
	}
	if (sig_path != NULL) {
		rc = q42_outfile_open(&sig_out, sig_path, err);
		if (rc != Q42_OK)
			goto done;
		if (fwrite(sig, 1, sizeof sig, sig_out.fp) != sizeof sig) {
			rc = q42_err_set(err, Q42_EIO, "%s: write failed: %s", sig_path,
					 strerror(errno));
			goto done;
		}
	}
	rc = q42_outfile_commit(&out, err);
	if (rc == Q42_OK && sig_path != NULL) {
		rc = q42_outfile_commit(&sig_out, err);
		/* The model without the signature asked for is a failure too. */
		if (rc != Q42_OK)
			unlink(output);
	}
	if (rc != Q42_OK)
		goto done;
	s.sig_path = sig_path;
	s.t_total = now_ms() - t0;
	if (rep.hparams_note[0] != '\0')
		fprintf(stderr, "%s: warning: no hyperparameters: %s\n", prog, rep.hparams_note);
	if (rep.vocab_note[0] != '\0')
		fprintf(stderr, "%s: warning: no tokenizer: %s\n", prog, rep.vocab_note);
	if (o->json)
		print_summary(to_stdout ? stderr : stdout, o, output, &s);
done:
	q42_outfile_abort(&sig_out);
	q42_outfile_abort(&out);
	if (!hf)
		q42_source_close(&src);
	for (uint32_t i = 0; i < o->n_lora; i++)
		q42_lora_close(lora[i]);
	free(sig_path);
	return rc;
}

enum {
	OPT_PAGE_LOG2 = 256, OPT_TO_GGUF, OPT_SIGN, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_JSON,
	OPT_TYPE, OPT_PROFILE, OPT_LORA
};

static const struct option long_opts[] = {
	{"output", required_argument, NULL, 'o'},
	{"page-log2", required_argument, NULL, OPT_PAGE_LOG2},
	{"to-gguf", no_argument, NULL, OPT_TO_GGUF},
	{"sign", required_argument, NULL, OPT_SIGN},
	{"progress", no_argument, NULL, OPT_PROGRESS},
	{"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
	{"json", no_argument, NULL, OPT_JSON},
	{"type", required_argument, NULL, OPT_TYPE},
	{"profile", required_argument, NULL, OPT_PROFILE},
	{"lora", required_argument, NULL, OPT_LORA},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static bool parse_page_log2(const char *arg, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (*arg < '0' || *arg > '9')
		return false;
	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno != 0 || *end != '\0' || v < Q42_P64_PAGE_LOG2_MIN || v > Q42_P64_PAGE_LOG2_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

int main(int argc, char **argv)
{
	opts o = {.progress = -1, .type = -1};
	q42_err err = {0};
	struct stat st;
	char *output = NULL;
	bool ok = true;
	int c, rc = Q42_OK;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:hV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o.output = optarg;
			break;
		case OPT_PAGE_LOG2:
			if (!parse_page_log2(optarg, &o.page_log2)) {
				fprintf(stderr, "%s: --page-log2: expected an integer in %u..%u, found '%s'\n",
					prog, Q42_P64_PAGE_LOG2_MIN, Q42_P64_PAGE_LOG2_MAX, optarg);
				ok = false;
			}
			break;
		case OPT_TO_GGUF:
			o.to_gguf = true;
			break;
		case OPT_SIGN:
			o.sign_key = optarg;
			break;
		case OPT_PROGRESS:
			o.progress = 1;
			break;
		case OPT_NO_PROGRESS:
			o.progress = 0;
			break;
		case OPT_JSON:
			o.json = true;
			break;
		case OPT_TYPE:
			o.type = strcmp(optarg, "f32") == 0    ? Q42_DTYPE_F32
				 : strcmp(optarg, "f16") == 0  ? Q42_DTYPE_F16
				 : strcmp(optarg, "bf16") == 0 ? Q42_DTYPE_BF16
				 : strcmp(optarg, "q8_0") == 0 ? Q42_DTYPE_Q8_0
							       : -2;
			if (o.type == -2) {
				fprintf(stderr, "%s: --type: expected f32, f16, bf16 or q8_0, found '%s'\n",
					prog, optarg);
				ok = false;
			}
			break;
		case OPT_PROFILE: {
			int p = q42_profile_from_name(optarg);
			if (p <= 0) {
				fprintf(stderr,
					"%s: --profile: expected ffn-q4_0, ffn-tq or q8_0, found '%s'\n",
					prog, optarg);
				ok = false;
			} else {
				o.profile = (uint32_t)p;
			}
			break;
		}
		case OPT_LORA:
			if (o.n_lora == Q42_LORA_MAX) {
				fprintf(stderr, "%s: --lora: at most %u adapters\n", prog, Q42_LORA_MAX);
				ok = false;
			} else if (!q42_cli_lora(optarg, &o.lora_path[o.n_lora], &o.lora_scale[o.n_lora])) {
				fprintf(stderr, "%s: --lora '%s': expected FILE or FILE:SCALE, SCALE a number within [-1e6, 1e6]\n",
					prog, optarg);
				ok = false;
			} else {
				o.n_lora++;
			}
			break;
		case 'h':
			help();
			return EXIT_OK;
		case 'V':
			q42_cli_version("p64c (q42)");
			return EXIT_OK;
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
	if (ok && argc - optind != 1) {
		fprintf(stderr, "%s: %s\n", prog,
			argc - optind == 0 ? "no INPUT given" : "exactly one INPUT is allowed");
		ok = false;
	}
	if (ok && o.to_gguf && (o.type >= 0 || o.profile != Q42_PROFILE_NONE || o.n_lora > 0)) {
		fprintf(stderr, "%s: --type, --profile and --lora apply to P64 output, not to --to-gguf\n",
			prog);
		ok = false;
	}
	if (ok && o.to_gguf && o.page_log2 != 0) {
		fprintf(stderr, "%s: --page-log2 applies to P64 output, not to --to-gguf\n", prog);
		ok = false;
	}
	if (ok) {
		o.input = argv[optind];
		output = o.output ? strdup(o.output)
				  : derive_output(o.input, o.to_gguf ? ".p64" : ".gguf",
						  o.to_gguf ? ".gguf" : ".p64");
		if (output == NULL) {
			fprintf(stderr, "%s: out of memory\n", prog);
			return EXIT_IO;
		}
	}
	if (ok && o.sign_key != NULL && strcmp(output, "-") == 0) {
		fprintf(stderr, "%s: --sign needs an output file to sign, not stdout\n", prog);
		ok = false;
	}
	if (ok && strcmp(output, "-") == 0 && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "%s: refusing to write binary output to a terminal (use -o FILE)\n",
			prog);
		ok = false;
	}
	/* The output is renamed into place: never over a device, fifo or folder. */
	if (ok && strcmp(output, "-") != 0 && stat(output, &st) == 0 && !S_ISREG(st.st_mode)) {
		fprintf(stderr, "%s: %s exists and is not a regular file\n", prog, output);
		ok = false;
	}
	if (ok && strcmp(output, "-") != 0 && strcmp(output, o.input) == 0) {
		fprintf(stderr, "%s: the output would overwrite the input %s\n", prog, o.input);
		ok = false;
	}
	if (ok) {
		rc = run(&o, output, &err);
		if (rc != Q42_OK)
			fprintf(stderr, "%s: %s\n", prog, err.msg);
	} else {
		fprintf(stderr, "Try '%s --help' for more information.\n", prog);
	}
	free(output);
	for (uint32_t i = 0; i < o.n_lora; i++)
		free(o.lora_path[i]);
	return ok ? q42_cli_status(rc) : EXIT_USAGE;
}
