// XOR of several buffers with ordinary (cached) stores.
//
// Written by hand because ISA-L has no such call: its xor_gen stores with
// vmovntdq, which evicts the output from the cache. That is right for a
// full-stripe parity that only goes out to a drive, and wrong for a
// read-modify-write: the new parity (and, for RAID 6 and ec, the data
// delta that ec_encode_data_update reads at once) is small and reused, and
// the engine's pooled buffers are refilled soon after, so an evicted line is
// a cache miss twice over. Measured: gpuraid-parity-bench update/* and the
// RAID 5 4K random-write path on null drives (xor_gen_avx was a quarter of
// all samples, stalled on loads of lines its own stores had evicted).
//
// Any pointer alignment, any length. Built for AVX-512 (AVX512F), AVX2 and
// baseline x86-64 (SSE2); xor_cached picks by CPUID once, so the same binary
// runs on every x86-64 CPU. Every version is callable, so a test checks each
// on any machine that can run it. AVX-512 measured 1.5-4 % faster than AVX2
// on an AMD Zen 4 (whose 512-bit units are two 256-bit halves): parity bench
// update/pq8+2 and decode/xor8+1.
#pragma once
#include <cstdint>

namespace gpuraid {

// dst = src[0] ^ src[1] ^ ... ^ src[n-1], len bytes each. dst may be one of
// the sources (each position is read from every source before it is
// written); no other overlap. n >= 1.
void xor_cached(uint8_t* dst, const uint8_t* const* src, int n, uint32_t len);

// The versions xor_cached chooses from. Call the AVX2 one only where
// xor_cached_has_avx2(), the AVX-512 one only where xor_cached_has_avx512().
void xor_cached_baseline(uint8_t* dst, const uint8_t* const* src, int n, uint32_t len);
void xor_cached_avx2(uint8_t* dst, const uint8_t* const* src, int n, uint32_t len);
void xor_cached_avx512(uint8_t* dst, const uint8_t* const* src, int n, uint32_t len);
bool xor_cached_has_avx2();
bool xor_cached_has_avx512();

}  // namespace gpuraid
