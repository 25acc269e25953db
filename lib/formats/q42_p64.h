/* q42_p64.h -- the P64 v3 container: writer, validating reader, GGUF rebuild
 * and byte-exact proof against a source GGUF.
 *
 * The byte layout is specified in p64(5); this header only names it. The
 * reader validates every byte of a file (structure, every CRC-32C, zero
 * padding) before it exposes anything, and a failure is terminal: callers
 * must never fall back to reading the bytes some other way. Nothing here
 * prints, and nothing here keeps the whole output in memory.
 */
#ifndef Q42_P64_H
#define Q42_P64_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "common/q42_err.h"
#include "formats/q42_gguf.h"
#include "formats/q42_model.h"

/* ---- Layout constants (see p64(5)) ---------------------------------- */

#define Q42_P64_MAGIC "p64\0"          /* 4 bytes, NUL included */
#define Q42_P64_VERSION 3u
#define Q42_P64_BOM 0x01020304u        /* stored little-endian: 04 03 02 01 */
#define Q42_P64_HEADER_SIZE 64u
#define Q42_P64_SECTION_ENTRY_SIZE 32u
#define Q42_P64_DESC_SIZE 96u
#define Q42_P64_MANIFOLD_SIZE 64u
#define Q42_P64_PROV_SIZE 64u
#define Q42_P64_HPARAMS_FIXED 112u     /* HPAR bytes before the per-layer arrays */
#define Q42_P64_HPARAMS_TAIL 16u       /* the optional HPAR fields after them */
#define Q42_P64_HPARAMS_EMBD 16u       /* the embedding fields after the tail (p64(5)) */
#define Q42_P64_HPARAMS_MOE 16u        /* the mixture-of-experts fields after those */
#define Q42_P64_HPARAMS_COLBERT 40u    /* the ColBERT fields after those */
#define Q42_P64_Q42T_FIXED 64u         /* Q42T bytes before the per-token arrays */
#define Q42_P64_SECTION_ALIGN 8u
#define Q42_P64_PAGE_LOG2_MIN 12u
#define Q42_P64_PAGE_LOG2_MAX 21u
#define Q42_P64_PAGE_LOG2_DEFAULT 12u
#define Q42_P64_MAX_RANK 4u
#define Q42_P64_MANIFOLD_COORDS 10u
#define Q42_P64_MAX_SECTIONS 7u

/* Section tags, in the only order they may appear (each at most once). */
enum q42_p64_section_id {
	Q42_P64_SEC_STRS = 0, /* string table */
	Q42_P64_SEC_HPAR = 1, /* hyperparameters (optional) */
	Q42_P64_SEC_Q42T = 2, /* tokenizer (optional) */
	Q42_P64_SEC_TDSC = 3, /* tensor descriptors */
	Q42_P64_SEC_MANI = 4, /* manifold records */
	Q42_P64_SEC_GGUF = 5, /* source GGUF header bytes (optional) */
	Q42_P64_SEC_PROV = 6, /* provenance */
};

/* Header flags. Every other bit must be zero. */
enum q42_p64_flags {
	Q42_P64_F_BYTE_PRESERVING = 1u << 0, /* the source GGUF can be rebuilt byte-exact */
	Q42_P64_F_HAS_HPARAMS = 1u << 1,     /* HPAR section present */
	Q42_P64_F_HAS_TOKENIZER = 1u << 2,   /* Q42T section present */
	Q42_P64_F_BOOTABLE = 1u << 3,        /* hparams + tokenizer + at least one tensor */
	Q42_P64_F_ALL_ = 0xFu,
};

/* The ten manifold coordinates: RMS of the weights of one role group. */
enum q42_p64_coord {
	Q42_P64_COORD_ATTN_Q = 0,
	Q42_P64_COORD_ATTN_K = 1,
	Q42_P64_COORD_ATTN_V = 2,
	Q42_P64_COORD_ATTN_OUT = 3,
	Q42_P64_COORD_FFN_GATE = 4,
	Q42_P64_COORD_FFN_UP = 5,
	Q42_P64_COORD_FFN_DOWN = 6,
	Q42_P64_COORD_NORM = 7,
	Q42_P64_COORD_OTHER = 8,
	Q42_P64_COORD_ALL = 9,
};

/* ---- What an opened file exposes ------------------------------------- */

typedef struct q42_p64_section {
	uint32_t id;      /* enum q42_p64_section_id */
	char tag[5];      /* "STRS", "HPAR", ... NUL-terminated */
	uint64_t offset;  /* absolute file offset */
	uint64_t length;  /* bytes, padding excluded */
	uint32_t count;   /* items (strings bytes, tensors, records...), see p64(5) */
} q42_p64_section;

typedef struct q42_p64_tensor {
	q42_str name;           /* view into the mapping; name.p[name.len] == '\0' */
	uint64_t name_hash;     /* FNV-1a 64 of the name bytes */
	uint32_t dtype;         /* ggml type id, authoritative; may be unknown to libq42 */
	uint32_t role;          /* enum q42_role (formats/q42_roles.h) */
	int32_t layer;          /* block index, -1 for global tensors */
	uint32_t rank;          /* 1..4 */
	uint64_t dims[Q42_P64_MAX_RANK]; /* dims[0] varies fastest; unused dims are 1 */
	uint64_t n_elems;
	uint64_t offset;        /* absolute, page-aligned blob offset in the P64 */
	uint64_t nbytes;        /* blob length */
	uint64_t source_offset; /* absolute offset of the same bytes in the source GGUF */
	uint32_t crc;           /* CRC-32C of the blob (already verified at open) */
	const uint8_t *data;    /* offset in the mapping */
} q42_p64_tensor;

typedef struct q42_p64_manifold {
	int32_t layer;          /* block index; -1 for the global (last) record */
	uint32_t n_tensors;     /* tensors attributed to this record */
	uint64_t n_elems;       /* their elements (known dtypes only) */
	uint32_t coord_mask;    /* bit i set when coord[i] was computed from data */
	uint32_t n_skipped;     /* tensors whose dtype could not be decoded */
	float coord[Q42_P64_MANIFOLD_COORDS]; /* enum q42_p64_coord; 0 when bit clear */
} q42_p64_manifold;

typedef struct q42_p64_provenance {
	uint8_t source_sha256[32];
	uint64_t source_size;    /* bytes of the source file */
	uint32_t source_format;  /* 1 = GGUF */
	uint32_t source_version; /* GGUF version (2 or 3) */
	q42_str policy;          /* e.g. "byte-preserving" */
	q42_str tool;            /* e.g. "p64c 0.1.0" */
} q42_p64_provenance;

#define Q42_P64_SOURCE_GGUF 1u

typedef struct q42_p64 {
	const uint8_t *data;     /* the whole file; not owned */
	uint64_t size;
	uint32_t version;
	uint32_t page_log2;
	uint32_t flags;          /* enum q42_p64_flags */
	uint64_t meta_end;       /* end of the last metadata section */
	uint32_t header_crc;
	uint32_t meta_crc;
	uint32_t n_sections;
	q42_p64_section sections[Q42_P64_MAX_SECTIONS];

	bool has_hparams;
	q42_hparams hparams;     /* zeroed when !has_hparams */
	bool has_vocab;
	q42_vocab vocab;         /* arrays owned by this struct; strings view the mapping */

	uint64_t n_tensors;
	q42_p64_tensor *tensors; /* in file (blob) order */
	uint32_t n_manifold;     /* layer records then one global record */
	q42_p64_manifold *manifold;
	q42_p64_provenance prov;
	const uint8_t *source_header; /* GGUF bytes [0, data_offset); NULL if absent */
	uint64_t source_header_len;
} q42_p64;

/* ---- Reader ----------------------------------------------------------- */

/* True when data starts with the P64 magic (the only test a program may use
 * to tell P64 from GGUF). Says nothing about validity. */
Q42_API bool q42_p64_is_p64(const uint8_t *data, uint64_t size);

/* Validate the whole file in data[0, size) (normally an mmap that must
 * outlive *p) and fill *p. Everything is checked before anything is exposed:
 * header fields and CRC, section table order and bounds, metadata CRC, every
 * string ref, hparams, tokenizer, descriptor, manifold record, blob alignment
 * and bounds, every tensor CRC, and that every byte outside the CRC-covered
 * regions is zero. name is used in messages only. On failure *p is left
 * empty (safe to close) and the function returns Q42_EFORMAT with a message
 * naming the region ("header", "section Q42T", "descriptor 3
 * (blk.0.attn_q.weight)", "tensor blk.0.attn_q.weight", "padding at offset
 * N"), the offset, and expected vs found; Q42_ENOMEM when allocation failed. */
Q42_API int q42_p64_open(q42_p64 *p, const uint8_t *data, uint64_t size,
			 const char *name, q42_err *err);
/* Release what open allocated; *p becomes empty. Safe on an empty struct. */
Q42_API void q42_p64_close(q42_p64 *p);

/* The tensor called name, or NULL. Linear in the number of tensors. */
Q42_API const q42_p64_tensor *q42_p64_find_tensor(const q42_p64 *p, const char *name);

/* The section with the given id, or NULL when the file has none. */
Q42_API const q42_p64_section *q42_p64_find_section(const q42_p64 *p, uint32_t id);

/* "STRS", "HPAR", ... for a section id; "?" when out of range. */
Q42_API const char *q42_p64_section_tag(uint32_t id);
/* "attn_q", ... for a coordinate index; "?" when out of range. */
Q42_API const char *q42_p64_coord_name(uint32_t coord);

/* FNV-1a 64 of a tensor name (the descriptor's name hash). */
Q42_API uint64_t q42_p64_name_hash(const void *name, uint64_t len);

/* ---- Writer ----------------------------------------------------------- */

typedef struct q42_p64_write_opts {
	uint32_t page_log2; /* 0 = Q42_P64_PAGE_LOG2_DEFAULT; else 12..21 */
	const char *tool;   /* provenance tool string; NULL = "libq42 <version>" */
	/* Skip hashing the source (SHA-256 runs at ~1 GB/s and bounds the
	 * compile time): PROV then holds 32 zero bytes, "not computed". */
	bool no_source_sha256;
} q42_p64_write_opts;

typedef struct q42_p64_write_report {
	uint64_t bytes_written;
	uint64_t n_tensors;
	uint64_t n_unknown_role;   /* tensors carried with role UNKNOWN */
	uint64_t n_unknown_dtype;  /* tensors carried with a dtype libq42 cannot size */
	uint32_t flags;            /* header flags written */
	uint8_t source_sha256[32];
	/* Why a part is absent (empty string when present): for warnings. */
	char hparams_note[Q42_ERR_MSG_MAX];
	char vocab_note[Q42_ERR_MSG_MAX];
} q42_p64_write_report;

/* Compile the parsed GGUF g (whose file/file_size are the whole source
 * mapping) into a P64 written to out, starting at out's current position
 * (normally 0 of a fresh temp file; the caller owns atomic rename via
 * q42_outfile). Deterministic: the same g and opts give the same bytes.
 * Blobs are written straight from the mapping; when out is seekable the
 * tensor CRCs are computed while copying and the header and metadata are
 * written last, otherwise (pipe) the CRCs are computed in a first pass.
 * Missing hparams or tokenizer are recorded (flags, notes), not fatal.
 * Refuses (Q42_EUNSUPPORTED) a GGUF whose inter-tensor padding or trailing
 * bytes are not zero, since such bytes could not be rebuilt. rep may be
 * NULL. Returns Q42_EIO on a write failure, Q42_EARG on bad options. */
Q42_API int q42_p64_write(const q42_gguf *g, const q42_p64_write_opts *opts,
			  FILE *out, q42_p64_write_report *rep, q42_err *err);

/* ---- Streamed writer: transcodes (Safetensors input, --type, profiles) --
 *
 * The caller plans every tensor (name, dtype, shape) up front; the layout is
 * fixed by the plan alone, so blobs may then be delivered in any order, each
 * whole, and only one needs to be in memory at a time. The result has no
 * GGUF section and is not byte-preserving (see p64(5), "PROV"). out must be
 * seekable: the metadata is written first as a placeholder, each blob at
 * its offset, and the metadata again at the end. */

#define Q42_P64_SOURCE_SAFETENSORS 2u

typedef struct q42_p64_plan_tensor {
	const char *name;     /* GGUF-style name; non-empty, unique */
	uint32_t dtype;       /* ggml type id of the blob; must be known to libq42 */
	uint32_t rank;        /* 1..4 */
	uint64_t dims[Q42_P64_MAX_RANK]; /* dims[0] varies fastest; unused dims 1 */
	uint64_t source_offset; /* where the source bytes were (see p64(5), TDSC) */
} q42_p64_plan_tensor;

typedef struct q42_p64_plan {
	uint64_t n_tensors;
	const q42_p64_plan_tensor *tensors; /* descriptor and blob order */
	const q42_hparams *hparams;  /* NULL: no HPAR section */
	const q42_vocab *vocab;      /* NULL: no Q42T section */
	uint32_t source_format;      /* Q42_P64_SOURCE_GGUF or _SAFETENSORS */
	uint32_t source_version;
	uint64_t source_size;
	const char *policy;          /* PROV policy, e.g. "transcode profile=ffn-q4_0" */
} q42_p64_plan;

typedef struct q42_p64_stream q42_p64_stream;

/* Validate the plan, lay the file out and write the placeholder metadata.
 * The plan's strings and structures are copied: they need not outlive the
 * call. Q42_EARG for a bad plan or a non-seekable out (message says which),
 * Q42_EIO on a write failure. *ws is NULL on failure. */
Q42_API int q42_p64_stream_open(q42_p64_stream **ws, const q42_p64_plan *plan,
				const q42_p64_write_opts *opts, FILE *out, q42_err *err);
/* Write blob i (nbytes must equal the planned length) at its offset, with
 * its CRC-32C and manifold sample. Each blob exactly once. */
Q42_API int q42_p64_stream_put(q42_p64_stream *ws, uint64_t i, const void *data,
			       uint64_t nbytes, q42_err *err);
/* Check that every blob was written, fill in the manifold records, the
 * source SHA-256 (NULL: 32 zero bytes, "not computed") and every CRC, and
 * rewrite the metadata. out is left positioned at the end of the file. */
Q42_API int q42_p64_stream_finish(q42_p64_stream *ws, const uint8_t *source_sha256,
				  q42_p64_write_report *rep, q42_err *err);
/* Free; safe on NULL and after any result. Writes nothing. */
Q42_API void q42_p64_stream_close(q42_p64_stream *ws);

/* ---- GGUF rebuild and proof ------------------------------------------ */

/* Write the source GGUF of a byte-preserving P64 to out, byte-exact: its
 * header bytes, each tensor at its source offset, zeros in between and up
 * to the source size. Q42_EUNSUPPORTED when the P64 is not byte-preserving;
 * Q42_EIO on a write failure. */
Q42_API int q42_p64_to_gguf(const q42_p64 *p, FILE *out, q42_err *err);

/* Prove that the opened P64 holds exactly the given source GGUF: same size,
 * header bytes, tensor names, name hashes, dtypes, shapes, source offsets,
 * lengths and bytes, and that every source byte outside the tensors is zero
 * (so q42_p64_to_gguf would reproduce it). Q42_OK when identical; otherwise
 * Q42_EFORMAT with the first difference ("tensor X: dtype: p64 has 1, gguf
 * has 0", "source byte at offset N ..."). */
Q42_API int q42_p64_against(const q42_p64 *p, const q42_gguf *g, q42_err *err);

#endif
