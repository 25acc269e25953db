/* q42_digest.h -- authenticity for model files: SHA-256 digests and
 * Ed25519 detached signatures, both through OpenSSL libcrypto.
 *
 * CRC-32C only detects accidents; these functions are what a caller uses to
 * prove a file is the one it expects. Keys are PEM files; nothing here
 * generates keys or prints.
 */
#ifndef Q42_DIGEST_H
#define Q42_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/q42_err.h"

#define Q42_SHA256_LEN 32
#define Q42_SHA256_HEX_LEN 64
#define Q42_ED25519_SIG_LEN 64

/* SHA-256 of n bytes at p (a mapping or a buffer). Q42_ENOMEM/Q42_EIO-free
 * except when libcrypto fails (reported as Q42_EUNSUPPORTED). */
Q42_API int q42_sha256(const void *p, uint64_t n, uint8_t out[Q42_SHA256_LEN], q42_err *err);
/* SHA-256 of the concatenation a || b || c (a piece of length 0 may be NULL). */
Q42_API int q42_sha256_parts(const void *a, uint64_t an, const void *b, uint64_t bn, const void *c,
			     uint64_t cn, uint8_t out[Q42_SHA256_LEN], q42_err *err);

/* SHA-256 of a file read sequentially ("-" = stdin). Q42_EIO on read failure. */
Q42_API int q42_sha256_file(const char *path, uint8_t out[Q42_SHA256_LEN], q42_err *err);

/* Lower-case hex of n bytes into out (2n + 1 bytes, NUL-terminated). */
Q42_API void q42_hex_encode(const uint8_t *p, size_t n, char *out);

/* Decode exactly 2n hex digits (either case) from hex into out[n].
 * Leading/trailing whitespace is not accepted. Q42_EFORMAT on anything else. */
Q42_API int q42_hex_decode(const char *hex, uint8_t *out, size_t n, q42_err *err);

/* Ed25519 signature of msg with the private key in a PEM file (PKCS#8, as
 * `openssl genpkey -algorithm ed25519` writes). Q42_EIO when the key file
 * cannot be read, Q42_EFORMAT when it is not an Ed25519 private key. */
Q42_API int q42_ed25519_sign(const char *key_pem_path, const void *msg, size_t n,
			     uint8_t sig[Q42_ED25519_SIG_LEN], q42_err *err);

/* Verify a detached Ed25519 signature with the public key in a PEM file
 * (SubjectPublicKeyInfo, as `openssl pkey -pubout` writes). Q42_OK when it
 * verifies, Q42_EFORMAT when it does not (or the key is not Ed25519),
 * Q42_EIO when the key file cannot be read. */
Q42_API int q42_ed25519_verify(const char *pub_pem_path, const void *msg, size_t n,
			       const uint8_t sig[Q42_ED25519_SIG_LEN], q42_err *err);

#endif
