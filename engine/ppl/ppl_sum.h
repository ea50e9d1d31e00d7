// The checksum of a write-hole log entry's partial parity (format 3,
// docs/ON-DISK.md): what tells a payload written whole from one a crash
// tore (some of its 512-byte sectors or 4 KiB blocks still hold older
// bytes). Written here because it must cost next to nothing: crc32c of
// every 4 KiB partial parity was an eighth of a guarded random write's CPU
// (ISA-L's crc32_iscsi is bound by the crc32 instruction's throughput).
//
// Definition (len a multiple of 64): the payload as 64-bit little-endian
// words w_0 .. w_(n-1) in eight lanes (lane = i mod 8); per lane, in word
// order, a += w; b += a (Fletcher, modulo 2^64). Then, modulo 2^64,
// h = len * P + sum over lanes l of (a_l * A_l + b_l * B_l), with the odd
// constants P = 0x100000001b3, A_l = (0x9e3779b97f4a7c15 * (2l + 1)) | 1,
// B_l = (0xc2b2ae3d27d4eb4f * (2l + 1)) | 1; the sum is the low 32 bits of
// h ^ (h >> 32). A stale sector changes a and b by amounts that cancel only
// by chance. (The lanes' products are independent: no chain of multiplies.)
//
// Built for AVX-512, AVX2 and baseline x86-64 (picked by CPUID once); every
// version gives the same bits (tests/unit/ppl_sum_test.cpp).
#pragma once
#include <cstddef>
#include <cstdint>

namespace gpuraid {

uint32_t ppl_payload_sum(const uint8_t* p, size_t len);
// dst = src[0] ^ ... ^ src[n-1] (len bytes each, with cached stores, as
// xor_cached), and returns ppl_payload_sum(dst, len), in one pass: a RAID 5
// or RAID 6 P partial parity and its sum. n >= 1; dst may be a source.
uint32_t ppl_xor_sum(uint8_t* dst, const uint8_t* const* src, int n, size_t len);
// A RAID 5 read-modify-write and its partial parity in one pass: per
// position, t = parity ^ old[0] ^ ... ^ old[n-1] goes to pp (the partial
// parity: the row over the strips the write leaves alone), then parity =
// t ^ neu[0] ^ ... ^ neu[n-1] (the new parity, in place, cached stores);
// returns ppl_payload_sum(pp, len). n >= 1, len a multiple of 64; pp is
// old[0] or overlaps nothing (each block is read before pp's is written).
// Two passes (the update, then the partial parity from
// the new parity and data) read the parity and the new data twice: a fifth
// of their time, measured on AMD EPYC (Zen 4).
uint32_t ppl_update_xor_sum(uint8_t* parity, uint8_t* pp, const uint8_t* const* old, const uint8_t* const* neu, int n,
                            size_t len);
// The same for a read-modify-write of one data strip of a GF code (RAID 6,
// ec), every parity row r < m (m <= 4) in one pass: pp[r] gets
// dst[r] ^ c_r * old (that row's partial parity), dst[r] becomes that ^
// c_r * neu (the new parity, in place), sums[r] its ppl_payload_sum.
// tables: ISA-L's 32-byte multiply table of the strip's column for row 0,
// row r's at tables + r * row_stride. len a multiple of 64; pp[0] is old
// or overlaps nothing, the other pp[r] overlap nothing. false, doing
// nothing, on CPUs without AVX-512BW.
bool ppl_update_mad_sum(uint32_t len, uint32_t m, const uint8_t* tables, uint32_t row_stride, const uint8_t* old,
                        const uint8_t* neu, uint8_t* const* dst, uint8_t* const* pp, uint32_t* sums);
// dst = base ^ c * src (GF(2^8); table: ISA-L's 32-byte multiply table of
// c) and *sum its ppl_payload_sum, in one pass: a RAID 6 Q or ec row's
// partial parity where one data strip was written. false, doing nothing,
// on CPUs without AVX-512BW (the caller takes three passes).
bool ppl_mad_sum(uint8_t* dst, const uint8_t* base, const uint8_t* src, const uint8_t* table, size_t len,
                 uint32_t* sum);

// The versions ppl_payload_sum chooses from (the AVX2 and AVX-512 ones only
// where the CPU has them), and the definition word by word.
uint32_t ppl_payload_sum_baseline(const uint8_t* p, size_t len);
uint32_t ppl_payload_sum_avx2(const uint8_t* p, size_t len);
uint32_t ppl_payload_sum_avx512(const uint8_t* p, size_t len);
uint32_t ppl_payload_sum_reference(const uint8_t* p, size_t len);
uint32_t ppl_xor_sum_baseline(uint8_t* dst, const uint8_t* const* src, int n, size_t len);
uint32_t ppl_xor_sum_avx2(uint8_t* dst, const uint8_t* const* src, int n, size_t len);
uint32_t ppl_xor_sum_avx512(uint8_t* dst, const uint8_t* const* src, int n, size_t len);
uint32_t ppl_update_xor_sum_baseline(uint8_t* parity, uint8_t* pp, const uint8_t* const* old,
                                     const uint8_t* const* neu, int n, size_t len);
uint32_t ppl_update_xor_sum_avx2(uint8_t* parity, uint8_t* pp, const uint8_t* const* old, const uint8_t* const* neu,
                                 int n, size_t len);
uint32_t ppl_update_xor_sum_avx512(uint8_t* parity, uint8_t* pp, const uint8_t* const* old,
                                   const uint8_t* const* neu, int n, size_t len);
void ppl_update_mad_sum_avx512(uint32_t len, uint32_t m, const uint8_t* tables, uint32_t row_stride,
                               const uint8_t* old, const uint8_t* neu, uint8_t* const* dst, uint8_t* const* pp,
                               uint32_t* sums);
uint32_t ppl_mad_sum_avx512(uint8_t* dst, const uint8_t* base, const uint8_t* src, const uint8_t* table, size_t len);

}  // namespace gpuraid
