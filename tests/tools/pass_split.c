/* pass_split.c -- which positions of the cache change when one prompt is
 * evaluated in different passes (issue 36: the rule prefix reuse keeps).
 *
 * usage: [ARITH=NAME] pass_split MODEL N THREADS SPLIT...
 * Evaluates N pseudo-random token ids from an empty cache once per SPLIT
 * (pass lengths, e.g. 8,8,4, or b7: passes of 7), each pass one
 * q42_engine_eval, and prints for each SPLIT after the first, per layer,
 * the positions whose K, V (or convolution history) bytes differ from
 * the first SPLIT's, and whether the last token's logits differ. Each
 * position is also labelled with its class in each split: 1 (its pass
 * has one token), g (in a whole group of four from its pass's start),
 * t (the rest); a differing position is marked x (its class differs), p
 * (same class, but a position it reads differs: the previous layer at
 * or before it) or ! (same class and inputs: the rule "a position's bits
 * follow from its class and what it reads" is broken). An experiment,
 * not a test; exits 0 either way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/q42_engine_impl.h"
#include "engine/q42_mount.h"

#define MAXN 4096

static uint32_t parse_split(const char *s, uint32_t n, uint32_t *len)
{
	uint32_t k = 0, done = 0;
	if (s[0] == 'b') {
		const uint32_t b = (uint32_t)atoi(s + 1);
		for (; done < n; done += len[k - 1])
			len[k++] = n - done < b ? n - done : b;
		return k;
	}
	for (const char *p = s; *p != '\0'; p = strchr(p, ',') ? strchr(p, ',') + 1 : p + strlen(p))
		len[k++] = (uint32_t)atoi(p), done += len[k - 1];
	if (done != n) {
		fprintf(stderr, "pass_split: %s covers %u positions, not %u\n", s, done, n);
		exit(2);
	}
	return k;
}

static void classes(const uint32_t *len, uint32_t k, char *cls)
{
	uint32_t s = 0;
	for (uint32_t i = 0; i < k; s += len[i++])
		for (uint32_t t = 0; t < len[i]; t++)
			cls[s + t] = len[i] == 1 ? '1' : t < len[i] / 4 * 4 ? 'g' : 't';
}

int main(int argc, char **argv)
{
	q42_mount *m = NULL;
	q42_engine *e = NULL;
	q42_engine_opts eo = {0};
	q42_err err = {0};
	static int32_t ids[MAXN];
	static uint32_t len[MAXN];
	static char cls0[MAXN + 1], cls[MAXN + 1];
	uint8_t *st0, *st;
	float *lg0;
	uint64_t pb;
	uint32_t total_bad = 0;

	if (argc < 5) {
		fprintf(stderr, "usage: pass_split MODEL N THREADS SPLIT...\n");
		return 2;
	}
	const uint32_t n = (uint32_t)atoi(argv[2]);
	if (n == 0 || n > MAXN)
		return 2;
	eo.n_threads = (uint32_t)atoi(argv[3]);
	eo.n_batch = n;
	eo.n_ctx = n;
	/* $ARITH as q42run --arith takes it, else q42run's default (auto) */
	eo.arith = Q42_ARITH_AUTO;
	if (getenv("ARITH") != NULL && !q42_arith_from_name(getenv("ARITH"), &eo.arith)) {
		fprintf(stderr, "pass_split: ARITH=%s: not an arithmetic\n", getenv("ARITH"));
		return 2;
	}
	eo.arith = q42_arith_resolve(eo.arith);
	if (q42_mount_open(&m, argv[1], 0, &err) != Q42_OK || q42_engine_open(&e, m, &eo, &err) != Q42_OK) {
		fprintf(stderr, "pass_split: %s\n", err.msg);
		return 1;
	}
	srand(42);
	for (uint32_t i = 0; i < n; i++)
		ids[i] = (int32_t)((uint32_t)rand() % e->n_vocab);
	pb = q42_engine_state_pos_bytes(e);
	st0 = malloc(n * pb);
	st = malloc(n * pb);
	lg0 = malloc(e->n_vocab * sizeof *lg0);
	for (int a = 4; a < argc; a++) {
		const uint32_t k = parse_split(argv[a], n, len);
		q42_engine_reset(e);
		for (uint32_t i = 0, s = 0; i < k; s += len[i++])
			if (q42_engine_eval(e, ids + s, len[i], &err) != Q42_OK) {
				fprintf(stderr, "pass_split: %s\n", err.msg);
				return 1;
			}
		q42_engine_state_get(e, n, a == 4 ? st0 : st, &err);
		classes(len, k, a == 4 ? cls0 : cls);
		if (a == 4) {
			memcpy(lg0, q42_engine_logits(e), e->n_vocab * sizeof *lg0);
			printf("%s: %u positions, reference split %s\n", argv[1], n, argv[4]);
			continue;
		}
		printf("split %s: logits %s\n", argv[a],
		       memcmp(lg0, q42_engine_logits(e), e->n_vocab * sizeof *lg0) ? "DIFFER" : "same");
		uint64_t off = 0;
		uint32_t first_prev = n, bad = 0;
		for (uint32_t l = 0; l < e->n_layer; l++) {
			const q42_layer *L = &e->layers[l];
			/* per position: its bytes in each of the layer's runs */
			const uint32_t runs = L->conv ? 1 : L->n_head_kv + L->n_head_kv * e->hd_v;
			char diff[MAXN + 1];
			uint32_t nd = 0, first = n;
			for (uint32_t p = 0; p < n; p++) {
				bool d = false;
				for (uint32_t r = 0; r < runs && !d; r++) {
					uint64_t eb, base;
					if (L->conv) {
						eb = e->n_embd * sizeof(float);
						base = off;
					} else if (r < L->n_head_kv) {
						eb = e->k_row_bytes;
						base = off + r * n * eb;
					} else {
						eb = e->v_elem_bytes;
						base = off + L->n_head_kv * n * e->k_row_bytes + (r - L->n_head_kv) * n * eb;
					}
					d = memcmp(st0 + base + p * eb, st + base + p * eb, eb) != 0;
				}
				/* same class, and nothing it reads differs: the rule is broken */
				diff[p] = !d ? '.' : cls0[p] != cls[p] ? 'x' : p < first_prev ? '!' : 'p';
				bad += d && cls0[p] == cls[p] && p < first_prev;
				if (d && nd++ == 0)
					first = p;
			}
			diff[n] = '\0';
			off += n * (L->conv ? e->n_embd * sizeof(float)
					    : L->n_head_kv * (e->k_row_bytes + e->hd_v * e->v_elem_bytes));
			if (nd > 0)
				printf("  layer %2u (%s): %u positions differ\n    %s\n", l, L->conv ? "conv" : "attn", nd, diff);
			if (first < first_prev)
				first_prev = first;
		}
		cls0[n] = cls[n] = '\0';
		printf("  classes ref %s\n  classes     %s\n  %s\n", cls0, cls,
		       bad ? "RULE BROKEN: a position differs with its class and its inputs the same"
			   : "rule holds: every difference is a class change or follows one");
		total_bad += bad;
	}
	free(st0);
	free(st);
	if (total_bad)
		printf("RULE BROKEN in %u positions\n", total_bad);
	free(lg0);
	q42_engine_close(e);
	q42_mount_close(m);
	return 0;
}
