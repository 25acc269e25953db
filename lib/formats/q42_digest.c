/* q42_digest.c -- SHA-256 and Ed25519 through OpenSSL libcrypto
 * (see q42_digest.h).
 *
 * All cryptography is libcrypto's; this file only adapts it to q42's error
 * convention and reads keys from PEM files. It never prints, never logs key
 * material, and clears nothing it did not allocate.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include "formats/q42_digest.h"

/* libcrypto's own reason for the last failure, for messages. */
static const char *ossl_reason(void)
{
	unsigned long e = ERR_get_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;
	ERR_clear_error();
	return r ? r : "unknown libcrypto error";
}

/* SHA-256 fetched once: OpenSSL 3 looks EVP_sha256() up in its provider
 * tables (under a lock) at every init, which cost verify a third of its
 * time on 1 KiB frames. Never freed: one object per process. */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void sha256_fetch(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA2-256", NULL);
}

static const EVP_MD *sha256(void)
{
	pthread_once(&sha256_once, sha256_fetch);
	return sha256_md ? sha256_md : EVP_sha256();
}

int q42_sha256_parts(const void *a, uint64_t an, const void *b, uint64_t bn, const void *c,
		     uint64_t cn, uint8_t out[Q42_SHA256_LEN], q42_err *err)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	const void *part[3] = {a, b, c};
	uint64_t len[3] = {an, bn, cn};
	int rc = Q42_OK;
	if (ctx == NULL)
		return q42_err_set(err, Q42_ENOMEM, "sha256: out of memory");
	if (EVP_DigestInit_ex(ctx, sha256(), NULL) != 1) {
		rc = q42_err_set(err, Q42_EUNSUPPORTED, "sha256: %s", ossl_reason());
		goto done;
	}
	for (int i = 0; i < 3; i++) {
		const uint8_t *p = part[i];
		uint64_t n = len[i];
		/* Feed in bounded pieces: size_t may be narrower than the mapping. */
		while (n > 0) {
			size_t k = n > (1u << 30) ? (1u << 30) : (size_t)n;
			if (EVP_DigestUpdate(ctx, p, k) != 1) {
				rc = q42_err_set(err, Q42_EUNSUPPORTED, "sha256: %s", ossl_reason());
				goto done;
			}
			p += k;
			n -= k;
		}
	}
	if (EVP_DigestFinal_ex(ctx, out, NULL) != 1)
		rc = q42_err_set(err, Q42_EUNSUPPORTED, "sha256: %s", ossl_reason());
done:
	EVP_MD_CTX_free(ctx);
	return rc;
}

int q42_sha256(const void *p, uint64_t n, uint8_t out[Q42_SHA256_LEN], q42_err *err)
{
	return q42_sha256_parts(p, n, NULL, 0, NULL, 0, out, err);
}

int q42_sha256_file(const char *path, uint8_t out[Q42_SHA256_LEN], q42_err *err)
{
	bool is_stdin = strcmp(path, "-") == 0;
	FILE *f = is_stdin ? stdin : fopen(path, "rb");
	EVP_MD_CTX *ctx = NULL;
	uint8_t buf[1u << 16];
	int rc = Q42_OK;
	if (f == NULL)
		return q42_err_set(err, Q42_EIO, "%s: %s", path, strerror(errno));
	ctx = EVP_MD_CTX_new();
	if (ctx == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "sha256: out of memory");
		goto done;
	}
	if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		rc = q42_err_set(err, Q42_EUNSUPPORTED, "sha256: %s", ossl_reason());
		goto done;
	}
	for (;;) {
		size_t k = fread(buf, 1, sizeof buf, f);
		if (k > 0 && EVP_DigestUpdate(ctx, buf, k) != 1) {
			rc = q42_err_set(err, Q42_EUNSUPPORTED, "sha256: %s", ossl_reason());
			goto done;
		}
		if (k < sizeof buf)
			break;
	}
	if (ferror(f)) {
		rc = q42_err_set(err, Q42_EIO, "%s: read error", path);
		goto done;
	}
	if (EVP_DigestFinal_ex(ctx, out, NULL) != 1)
		rc = q42_err_set(err, Q42_EUNSUPPORTED, "sha256: %s", ossl_reason());
done:
	EVP_MD_CTX_free(ctx);
	if (!is_stdin)
		fclose(f);
	return rc;
}

void q42_hex_encode(const uint8_t *p, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15u];
	}
	out[2 * n] = '\0';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int q42_hex_decode(const char *hex, uint8_t *out, size_t n, q42_err *err)
{
	size_t len = strnlen(hex, 2 * n + 1);
	if (len != 2 * n)
		return q42_err_set(err, Q42_EFORMAT, "hex: expected %zu digits, found %s%zu", 2 * n,
				   len > 2 * n ? "more than " : "", len > 2 * n ? 2 * n : len);
	for (size_t i = 0; i < n; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return q42_err_set(err, Q42_EFORMAT, "hex: invalid digit at position %zu",
					   hi < 0 ? 2 * i : 2 * i + 1);
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return Q42_OK;
}

/* Read a PEM key; Q42_EIO when the file cannot be opened, Q42_EFORMAT when
 * it holds no Ed25519 key of the wanted kind. */
static int load_key(const char *path, bool private_key, EVP_PKEY **out, q42_err *err)
{
	FILE *f = fopen(path, "rb");
	EVP_PKEY *k;
	if (f == NULL)
		return q42_err_set(err, Q42_EIO, "%s: %s", path, strerror(errno));
	k = private_key ? PEM_read_PrivateKey(f, NULL, NULL, NULL)
			: PEM_read_PUBKEY(f, NULL, NULL, NULL);
	fclose(f);
	if (k == NULL)
		return q42_err_set(err, Q42_EFORMAT, "%s: not a PEM %s key (%s)", path,
				   private_key ? "private" : "public", ossl_reason());
	if (EVP_PKEY_id(k) != EVP_PKEY_ED25519) {
		EVP_PKEY_free(k);
		return q42_err_set(err, Q42_EFORMAT, "%s: not an Ed25519 key", path);
	}
	*out = k;
	return Q42_OK;
}

int q42_ed25519_sign(const char *key_pem_path, const void *msg, size_t n,
		     uint8_t sig[Q42_ED25519_SIG_LEN], q42_err *err)
{
	EVP_PKEY *k = NULL;
	EVP_MD_CTX *ctx = NULL;
	size_t siglen = Q42_ED25519_SIG_LEN;
	int rc = load_key(key_pem_path, true, &k, err);
	if (rc != Q42_OK)
		return rc;
	ctx = EVP_MD_CTX_new();
	if (ctx == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "ed25519: out of memory");
		goto done;
	}
	if (EVP_DigestSignInit(ctx, NULL, NULL, NULL, k) != 1 ||
	    EVP_DigestSign(ctx, sig, &siglen, msg, n) != 1 || siglen != Q42_ED25519_SIG_LEN)
		rc = q42_err_set(err, Q42_EUNSUPPORTED, "ed25519: signing failed (%s)",
				 ossl_reason());
done:
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(k);
	return rc;
}

int q42_ed25519_verify(const char *pub_pem_path, const void *msg, size_t n,
		       const uint8_t sig[Q42_ED25519_SIG_LEN], q42_err *err)
{
	EVP_PKEY *k = NULL;
	EVP_MD_CTX *ctx = NULL;
	int rc = load_key(pub_pem_path, false, &k, err);
	if (rc != Q42_OK)
		return rc;
	ctx = EVP_MD_CTX_new();
	if (ctx == NULL) {
		rc = q42_err_set(err, Q42_ENOMEM, "ed25519: out of memory");
		goto done;
	}
	if (EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, k) != 1) {
		rc = q42_err_set(err, Q42_EUNSUPPORTED, "ed25519: %s", ossl_reason());
		goto done;
	}
	if (EVP_DigestVerify(ctx, sig, Q42_ED25519_SIG_LEN, msg, n) != 1) {
		ERR_clear_error();
		rc = q42_err_set(err, Q42_EFORMAT, "ed25519: signature does not verify with %s",
				 pub_pem_path);
	}
done:
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(k);
	return rc;
}
