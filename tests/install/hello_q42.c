/* hello_q42.c -- the tiny program `make installcheck` compiles against an
 * installed libq42 with `pkg-config --cflags --libs q42` alone: headers
 * under include/q42/, the shared library, its dependencies. It calls one
 * function from three folders (common, formats, wal) and checks each
 * result against a value fixed outside q42 (RFC 3720's CRC-32C check
 * value, SHA-256 of nothing, the canonical N-Quads of a statement).
 */
#include <stdio.h>
#include <string.h>
#include "common/q42_buf.h"
#include "common/q42_crc32c.h"
#include "formats/q42_quin.h"
#include "wal/q42_merkle.h"

int main(void)
{
	static const char empty_root[] =
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
	static const char in[] = "<http://ex.org/a>\t<http://ex.org/b>  \"c\"^^<http://www.w3.org/2001/XMLSchema#string>.";
	static const char canon[] = "<http://ex.org/a> <http://ex.org/b> \"c\" .\n";
	q42_err err = {0};
	q42_hash root;
	q42_quin q;
	q42_buf out;
	char hex[2 * Q42_MERKLE_HASH_LEN + 1];
	int bad = 0;

	if (q42_crc32c(0, "123456789", 9) != 0xE3069283u) {
		fputs("hello_q42: q42_crc32c gives the wrong check value\n", stderr);
		bad = 1;
	}
	if (q42_merkle_root(NULL, 0, root, &err) != Q42_OK) {
		fprintf(stderr, "hello_q42: q42_merkle_root: %s\n", err.msg);
		return 1;
	}
	for (int i = 0; i < Q42_MERKLE_HASH_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", root[i]);
	if (strcmp(hex, empty_root) != 0) {
		fprintf(stderr, "hello_q42: empty tree root %s\n", hex);
		bad = 1;
	}
	q42_quin_init(&q);
	q42_buf_init(&out);
	if (q42_quin_parse(&q, in, strlen(in), Q42_SYNTAX_QUINS, &err) != Q42_OK) {
		fprintf(stderr, "hello_q42: q42_quin_parse: %s\n", err.msg);
		bad = 1;
	} else if (!q42_quin_write(&out, &q) || out.len != strlen(canon) ||
		   memcmp(out.data, canon, out.len) != 0) {
		fputs("hello_q42: q42_quin_write is not canonical\n", stderr);
		bad = 1;
	}
	q42_buf_free(&out);
	q42_quin_free(&q);
	if (!bad)
		puts("hello_q42: libq42 ok");
	return bad;
}
