/* q42_statefile.c -- reading and writing q42-state(5) files (see the page
 * for every byte). The parser trusts nothing in the file: each size goes
 * through checked arithmetic against the bytes actually present before
 * anything past the header is read; it is fuzzed (tests/fuzz/fuzz_state.c,
 * built with the CRC comparisons off so mutations reach the checks
 * behind them).
 */
#include <inttypes.h>
#include <string.h>
#include "run/q42_statefile.h"
#include "run/q42_prefix.h"
#include "common/q42_ckd.h"
#include "common/q42_crc32c.h"
#include "common/q42_file.h"
#include "common/q42_le.h"

/* Header offsets (q42-state(5), HEADER). */
enum {
	OFF_MAGIC = 0, OFF_VERSION = 8, OFF_HEADER_BYTES = 12, OFF_MODEL = 16, OFF_CTX = 48,
	OFF_BATCH = 52, OFF_KV = 56, OFF_ARITH = 60, OFF_LAYER = 64, OFF_EMBD = 68,
	OFF_VOCAB = 72, OFF_NPOS = 76, OFF_POS_BYTES = 80, OFF_FILE_BYTES = 88,
	OFF_FLASH = 96, OFF_RESERVED = 100, OFF_HEADER_CRC = 124,
};

/* Total file bytes for n_pos positions of pos_bytes; false on overflow. */
static bool file_bytes(uint32_t n_pos, uint64_t pos_bytes, uint64_t *out)
{
	uint64_t s, t;
	return !(q42_mul_overflow(n_pos, pos_bytes, &s) || q42_add_overflow(s, 4ull * n_pos, &t) ||
		 q42_add_overflow(t, Q42_STATE_HEADER_BYTES + 4ull, out));
}

int q42_state_parse(const uint8_t *p, uint64_t n, q42_state_view *v, q42_err *err)
{
	uint64_t want;
	uint32_t u;

	memset(v, 0, sizeof *v);
	if (n < 8 || memcmp(p + OFF_MAGIC, Q42_STATE_MAGIC, 8) != 0)
		return q42_err_set(err, Q42_EFORMAT, "state: not a q42 state file (offset 0: magic '%s' expected)",
				   Q42_STATE_MAGIC);
	if (n < Q42_STATE_HEADER_BYTES)
		return q42_err_set(err, Q42_EFORMAT,
				   "state: truncated: %" PRIu64 " bytes, the header alone is %u", n,
				   Q42_STATE_HEADER_BYTES);
	u = q42_ld32(p + OFF_VERSION);
	if (u != Q42_STATE_VERSION)
		return q42_err_set(err, Q42_EFORMAT, "state: offset %d: version %u, expected %u",
				   OFF_VERSION, u, Q42_STATE_VERSION);
	u = q42_ld32(p + OFF_HEADER_BYTES);
	if (u != Q42_STATE_HEADER_BYTES)
		return q42_err_set(err, Q42_EFORMAT, "state: offset %d: header size %u, expected %u",
				   OFF_HEADER_BYTES, u, Q42_STATE_HEADER_BYTES);
	u = q42_crc32c(0, p, OFF_HEADER_CRC);
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	if (u != q42_ld32(p + OFF_HEADER_CRC))
		return q42_err_set(err, Q42_EFORMAT,
				   "state: header CRC-32C mismatch (offset %d: stored %08x, computed %08x)",
				   OFF_HEADER_CRC, q42_ld32(p + OFF_HEADER_CRC), u);
#endif
	for (uint32_t i = OFF_RESERVED; i < OFF_HEADER_CRC; i++)
		if (p[i] != 0)
			return q42_err_set(err, Q42_EFORMAT, "state: offset %u: reserved byte is %u, expected 0",
					   i, p[i]);
	memcpy(v->id.model_sha256, p + OFF_MODEL, Q42_SHA256_LEN);
	v->id.n_ctx = q42_ld32(p + OFF_CTX);
	v->id.n_batch = q42_ld32(p + OFF_BATCH);
	v->id.kv_type = q42_ld32(p + OFF_KV);
	v->id.arith = q42_ld32(p + OFF_ARITH);
	v->id.flash_attn = q42_ld32(p + OFF_FLASH);
	v->id.n_layer = q42_ld32(p + OFF_LAYER);
	v->id.n_embd = q42_ld32(p + OFF_EMBD);
	v->id.n_vocab = q42_ld32(p + OFF_VOCAB);
	v->n_pos = q42_ld32(p + OFF_NPOS);
	v->id.pos_bytes = q42_ld64(p + OFF_POS_BYTES);
	if (!file_bytes(v->n_pos, v->id.pos_bytes, &want))
		return q42_err_set(err, Q42_EFORMAT,
				   "state: offsets %d/%d: %u positions of %" PRIu64 " bytes overflow",
				   OFF_NPOS, OFF_POS_BYTES, v->n_pos, v->id.pos_bytes);
	if (q42_ld64(p + OFF_FILE_BYTES) != want)
		return q42_err_set(err, Q42_EFORMAT,
				   "state: offset %d: file size %" PRIu64 ", expected %" PRIu64
				   " for %u positions", OFF_FILE_BYTES, q42_ld64(p + OFF_FILE_BYTES), want,
				   v->n_pos);
	if (n != want)
		return q42_err_set(err, Q42_EFORMAT, "state: %s: %" PRIu64 " bytes, the header says %" PRIu64,
				   n < want ? "truncated" : "trailing bytes", n, want);
	u = q42_crc32c(0, p + Q42_STATE_HEADER_BYTES, (size_t)(n - 4 - Q42_STATE_HEADER_BYTES));
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	if (u != q42_ld32(p + n - 4))
		return q42_err_set(err, Q42_EFORMAT,
				   "state: body CRC-32C mismatch (offset %" PRIu64 ": stored %08x, computed %08x)",
				   n - 4, q42_ld32(p + n - 4), u);
#endif
	v->ids = p + Q42_STATE_HEADER_BYTES;
	v->state = v->ids + 4ull * v->n_pos;
	return Q42_OK;
}

int q42_state_match(const q42_state_view *v, const q42_state_ident *w, q42_err *err)
{
	const q42_state_ident *h = &v->id;
	static const char *const names[] = {"context size (--ctx)", "batch (--batch)",
		"KV cache type (--kv-type)", "arithmetic (--arith)", "flash attention (--flash-attn)",
		"layer count", "embedding width", "vocabulary size", "bytes per position"};
	const uint64_t have[] = {h->n_ctx, h->n_batch, h->kv_type, h->arith, h->flash_attn, h->n_layer,
				 h->n_embd, h->n_vocab, h->pos_bytes};
	const uint64_t want[] = {w->n_ctx, w->n_batch, w->kv_type, w->arith, w->flash_attn, w->n_layer,
				 w->n_embd, w->n_vocab, w->pos_bytes};

	if (memcmp(h->model_sha256, w->model_sha256, Q42_SHA256_LEN) != 0) {
		char a[Q42_SHA256_HEX_LEN + 1], b[Q42_SHA256_HEX_LEN + 1];
		q42_hex_encode(h->model_sha256, Q42_SHA256_LEN, a);
		q42_hex_encode(w->model_sha256, Q42_SHA256_LEN, b);
		return q42_err_set(err, Q42_EARG, "state: made for another model (sha256 %s, this model %s)",
				   a, b);
	}
	for (size_t i = 0; i < sizeof have / sizeof have[0]; i++)
		if (have[i] != want[i])
			return q42_err_set(err, Q42_EARG, "state: made with %s %" PRIu64 ", this run has %" PRIu64,
					   names[i], have[i], want[i]);
	if (v->n_pos > h->n_ctx)
		return q42_err_set(err, Q42_EFORMAT, "state: %u positions exceed its context of %u",
				   v->n_pos, h->n_ctx);
	if (h->n_batch == 0 || q42_prefix_settled(h->n_batch, v->n_pos) != v->n_pos)
		return q42_err_set(err, Q42_EFORMAT,
				   "state: %u positions are not whole passes of its batch %u and then whole groups of 4",
				   v->n_pos, h->n_batch);
	for (uint32_t i = 0; i < v->n_pos; i++) {
		const uint32_t id = q42_ld32(v->ids + 4ull * i);
		if (id >= h->n_vocab)
			return q42_err_set(err, Q42_EFORMAT,
					   "state: offset %u: token id %u outside the vocabulary (0..%u)",
					   Q42_STATE_HEADER_BYTES + 4 * i, id, h->n_vocab - 1);
	}
	return Q42_OK;
}

int q42_state_write(const char *path, const q42_state_ident *id, const int32_t *ids,
		    uint32_t n_pos, const uint8_t *state, q42_err *err)
{
	uint8_t h[Q42_STATE_HEADER_BYTES] = {0}, b[4];
	uint64_t total;
	q42_outfile o;
	uint32_t crc = 0;
	bool ok = true;
	int rc;

	if (!file_bytes(n_pos, id->pos_bytes, &total))
		return q42_err_set(err, Q42_EARG, "state: %u positions overflow the file size", n_pos);
	memcpy(h + OFF_MAGIC, Q42_STATE_MAGIC, 8);
	q42_st32(h + OFF_VERSION, Q42_STATE_VERSION);
	q42_st32(h + OFF_HEADER_BYTES, Q42_STATE_HEADER_BYTES);
	memcpy(h + OFF_MODEL, id->model_sha256, Q42_SHA256_LEN);
	q42_st32(h + OFF_CTX, id->n_ctx);
	q42_st32(h + OFF_BATCH, id->n_batch);
	q42_st32(h + OFF_KV, id->kv_type);
	q42_st32(h + OFF_ARITH, id->arith);
	q42_st32(h + OFF_FLASH, id->flash_attn);
	q42_st32(h + OFF_LAYER, id->n_layer);
	q42_st32(h + OFF_EMBD, id->n_embd);
	q42_st32(h + OFF_VOCAB, id->n_vocab);
	q42_st32(h + OFF_NPOS, n_pos);
	q42_st64(h + OFF_POS_BYTES, id->pos_bytes);
	q42_st64(h + OFF_FILE_BYTES, total);
	q42_st32(h + OFF_HEADER_CRC, q42_crc32c(0, h, OFF_HEADER_CRC));
	rc = q42_outfile_open(&o, path, err);
	if (rc != Q42_OK)
		return rc;
	ok = fwrite(h, 1, sizeof h, o.fp) == sizeof h;
	for (uint32_t i = 0; ok && i < n_pos; i++) {
		q42_st32(b, (uint32_t)ids[i]);
		crc = q42_crc32c(crc, b, 4);
		ok = fwrite(b, 1, 4, o.fp) == 4;
	}
	if (ok && n_pos > 0) {
		const size_t sb = (size_t)(n_pos * id->pos_bytes);
		crc = q42_crc32c(crc, state, sb);
		ok = fwrite(state, 1, sb, o.fp) == sb;
	}
	q42_st32(b, crc);
	if (ok)
		ok = fwrite(b, 1, 4, o.fp) == 4;
	if (!ok) {
		q42_outfile_abort(&o);
		return q42_err_set(err, Q42_EIO, "state: %s: write failed", path);
	}
	return q42_outfile_commit(&o, err);
}
