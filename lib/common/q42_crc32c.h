/* q42_crc32c.h -- CRC-32C (Castagnoli, reflected polynomial 0x82F63B78).
 *
 * Used for every checksum in the P64 and Q42 volume formats. On x86-64 with
 * SSE4.2 the crc32 instruction runs on three interleaved streams; elsewhere
 * a table-driven (slicing-by-8) fallback gives the same values. The choice
 * is made once at run time; both paths are always built so tests can compare.
 */
#ifndef Q42_CRC32C_H
#define Q42_CRC32C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/q42_err.h"

/* Streaming CRC-32C: pass 0 to start, then the previous result to continue.
 * q42_crc32c(0, "123456789", 9) == 0xE3069283. */
Q42_API uint32_t q42_crc32c(uint32_t crc, const void *p, size_t n);

/* The portable path, whatever the CPU supports (for tests and comparison). */
Q42_API uint32_t q42_crc32c_portable(uint32_t crc, const void *p, size_t n);

/* True when q42_crc32c uses the SSE4.2 instruction on this CPU. */
Q42_API bool q42_crc32c_hw_available(void);

/* The hardware path; only call it when q42_crc32c_hw_available() is true. */
Q42_API uint32_t q42_crc32c_hw(uint32_t crc, const void *p, size_t n);

#endif
