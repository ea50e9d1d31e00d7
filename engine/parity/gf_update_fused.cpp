#include "engine/parity/gf_update_fused.h"

#include <immintrin.h>

// GCC 12 warns inside its own _mm512_broadcast_i32x4 (an undefined vector it
// passes on purpose): a false positive of the header, not of this code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace gpuraid {

void gf_update_fused_bytes(uint32_t len, uint32_t m, const uint8_t* tables, uint32_t row_stride,
                           const uint8_t* old_data, const uint8_t* new_data, uint8_t* const* dst) {
  for (uint32_t i = 0; i < len; i++) {
    const uint8_t d = old_data[i] ^ new_data[i];
    for (uint32_t r = 0; r < m; r++) {
      const uint8_t* t = tables + size_t(r) * row_stride;
      dst[r][i] ^= t[d & 15] ^ t[16 + (d >> 4)];
    }
  }
}

namespace {

// M rows fixed at compile time: the tables stay in registers, the rows unroll.
template <uint32_t M>
__attribute__((target("avx512f,avx512bw"), always_inline)) inline void fused_rows(
    uint32_t len, const uint8_t* tables, uint32_t row_stride, const uint8_t* old_data, const uint8_t* new_data,
    uint8_t* const* dst) {
  __m512i lo_t[M], hi_t[M];
  uint8_t* out[M];
#pragma GCC unroll 4
  for (uint32_t r = 0; r < M; r++) {  // each 16-byte table in all four lanes (vpshufb is per lane)
    const uint8_t* t = tables + size_t(r) * row_stride;
    lo_t[r] = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t)));
    hi_t[r] = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t + 16)));
    out[r] = dst[r];
  }
  const __m512i nib = _mm512_set1_epi8(0x0f);
  uint32_t i = 0;
  for (; i + 64 <= len; i += 64) {
    const __m512i d = _mm512_xor_si512(_mm512_loadu_si512(old_data + i), _mm512_loadu_si512(new_data + i));
    const __m512i lo = _mm512_and_si512(d, nib);
    const __m512i hi = _mm512_and_si512(_mm512_srli_epi64(d, 4), nib);
    // Every row loaded before any is stored: the rows lie a multiple of
    // 4 KiB apart, and a load behind a store to the same low 12 address
    // bits waits for it (4K aliasing), as ISA-L's mad loops also avoid.
    __m512i p[M];
#pragma GCC unroll 4
    for (uint32_t r = 0; r < M; r++) p[r] = _mm512_loadu_si512(out[r] + i);
#pragma GCC unroll 4
    for (uint32_t r = 0; r < M; r++) {
      const __m512i prod = _mm512_xor_si512(_mm512_shuffle_epi8(lo_t[r], lo), _mm512_shuffle_epi8(hi_t[r], hi));
      _mm512_storeu_si512(out[r] + i, _mm512_xor_si512(p[r], prod));
    }
  }
  if (i < len) {
    uint8_t* tail[M];
    for (uint32_t r = 0; r < M; r++) tail[r] = out[r] + i;
    gf_update_fused_bytes(len - i, M, tables, row_stride, old_data + i, new_data + i, tail);
  }
}

}  // namespace

__attribute__((target("avx512f,avx512bw"))) void gf_update_fused_avx512(uint32_t len, uint32_t m,
                                                                       const uint8_t* tables, uint32_t row_stride,
                                                                       const uint8_t* old_data,
                                                                       const uint8_t* new_data, uint8_t* const* dst) {
  switch (m) {
    case 1: return fused_rows<1>(len, tables, row_stride, old_data, new_data, dst);
    case 2: return fused_rows<2>(len, tables, row_stride, old_data, new_data, dst);
    case 3: return fused_rows<3>(len, tables, row_stride, old_data, new_data, dst);
    default: return fused_rows<4>(len, tables, row_stride, old_data, new_data, dst);
  }
}

bool gf_update_fused_available() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
}

}  // namespace gpuraid
