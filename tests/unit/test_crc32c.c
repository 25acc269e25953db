/* test_crc32c.c -- CRC-32C against published vectors, and the hardware
 * path against the portable one.
 *
 * The 32-byte vectors are from RFC 3720 (iSCSI), appendix B.4; the
 * "123456789" check value 0xE3069283 is the standard CRC-32C check value
 * (RFC 3720 polynomial, also listed in the CRC RevEng catalogue as
 * CRC-32/ISCSI). The random comparison uses a fixed-seed generator.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "common/q42_crc32c.h"

typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);

/* The iSCSI SCSI Read (10) command PDU of RFC 3720 B.4. */
static const uint8_t read_pdu[48] = {
	0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
	0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

static void check_vectors(crc_fn f)
{
	uint8_t b[32];
	memset(b, 0, sizeof b);
	assert_int_equal(f(0, b, 32), 0x8A9136AAu);
	memset(b, 0xFF, sizeof b);
	assert_int_equal(f(0, b, 32), 0x62A8AB43u);
	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)i;
	assert_int_equal(f(0, b, 32), 0x46DD794Eu);
	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)(31 - i);
	assert_int_equal(f(0, b, 32), 0x113FDB5Cu);
	assert_int_equal(f(0, read_pdu, sizeof read_pdu), 0xD9963A56u);
	assert_int_equal(f(0, "123456789", 9), 0xE3069283u);
	assert_int_equal(f(0, "", 0), 0u);
	/* Streaming: any split gives the same value. */
	for (size_t k = 0; k <= sizeof read_pdu; k++)
		assert_int_equal(f(f(0, read_pdu, k), read_pdu + k, sizeof read_pdu - k),
				 0xD9963A56u);
}

static void test_vectors_portable(void **state)
{
	(void)state;
	check_vectors(q42_crc32c_portable);
}

static void test_vectors_dispatch(void **state)
{
	(void)state;
	check_vectors(q42_crc32c);
}

static void test_vectors_hw(void **state)
{
	(void)state;
	if (!q42_crc32c_hw_available())
		skip();
	check_vectors(q42_crc32c_hw);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Lengths cover every branch of the hardware path: unaligned heads, the
 * three-stream short and long runs, their remainders, and several MiB. */
static void test_hw_vs_portable(void **state)
{
	(void)state;
	if (!q42_crc32c_hw_available())
		skip();
	size_t cap = (5u << 20) + 64;
	uint8_t *buf = malloc(cap);
	assert_non_null(buf);
	for (size_t i = 0; i < cap; i++)
		buf[i] = (uint8_t)rng();
	static const size_t fixed[] = {0, 1, 7, 8, 9, 767, 768, 769, 24575, 24576, 24577,
				       49152 + 768 + 13, 5u << 20};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		for (size_t a = 0; a < 8; a++) {
			uint32_t seed = (uint32_t)rng();
			assert_int_equal(q42_crc32c_hw(seed, buf + a, fixed[i]),
					 q42_crc32c_portable(seed, buf + a, fixed[i]));
		}
	for (int it = 0; it < 2000; it++) {
		size_t a = rng() % 64;
		size_t n = it < 1500 ? rng() % 100000 : rng() % (cap - 64);
		uint32_t seed = it % 2 ? (uint32_t)rng() : 0;
		assert_int_equal(q42_crc32c_hw(seed, buf + a, n),
				 q42_crc32c_portable(seed, buf + a, n));
	}
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors_portable),
		cmocka_unit_test(test_vectors_dispatch),
		cmocka_unit_test(test_vectors_hw),
		cmocka_unit_test(test_hw_vs_portable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
