#include "engine/parity/gf_gfni.h"

#include <immintrin.h>

namespace gpuraid {

uint64_t gfni_matrix(const uint8_t* t) {
  // Column j is c * 2^j, read from the nibble tables (t[0..15] = c * x for
  // x < 16, t[16..31] = c * (x << 4)). vgf2p8affineqb computes output bit i
  // as the parity of (byte 7 - i of the matrix) & input: row i goes there.
  uint64_t a = 0;
  for (int j = 0; j < 8; j++) {
    const uint8_t col = j < 4 ? t[1 << j] : t[16 + (1 << (j - 4))];
    for (int i = 0; i < 8; i++)
      if (col >> i & 1) a |= uint64_t(1) << (8 * (7 - i) + j);
  }
  return a;
}

void gfni_matrices(uint32_t n, const uint8_t* isal_tables, uint64_t* out) {
  for (uint32_t i = 0; i < n; i++) out[i] = gfni_matrix(isal_tables + size_t(32) * i);
}

namespace {

#define GPURAID_GFNI_TARGET __attribute__((target("avx512f,avx512bw,gfni")))

// R output rows at once (accumulators in registers, each source loaded once
// per step); B vectors of 64 bytes a step for independent chains. mask
// limits the last, partial vector.
template <uint32_t R, uint32_t B>
GPURAID_GFNI_TARGET __attribute__((always_inline)) inline void dot_step(uint32_t i, uint32_t k, const uint64_t* mat,
                                                                const uint8_t* const* src, uint8_t* const* dst,
                                                                __mmask64 mask) {
  __m512i acc[R][B];
#pragma GCC unroll 4
  for (uint32_t r = 0; r < R; r++)
#pragma GCC unroll 2
    for (uint32_t b = 0; b < B; b++) acc[r][b] = _mm512_setzero_si512();
  for (uint32_t s = 0; s < k; s++) {
    __m512i x[B];
#pragma GCC unroll 2
    for (uint32_t b = 0; b < B; b++) x[b] = _mm512_maskz_loadu_epi8(mask, src[s] + i + 64 * b);
#pragma GCC unroll 4
    for (uint32_t r = 0; r < R; r++) {
      const __m512i m = _mm512_set1_epi64(int64_t(mat[size_t(r) * k + s]));
#pragma GCC unroll 2
      for (uint32_t b = 0; b < B; b++)
        acc[r][b] = _mm512_xor_si512(acc[r][b], _mm512_gf2p8affine_epi64_epi8(x[b], m, 0));
    }
  }
#pragma GCC unroll 4
  for (uint32_t r = 0; r < R; r++)
#pragma GCC unroll 2
    for (uint32_t b = 0; b < B; b++) _mm512_mask_storeu_epi8(dst[r] + i + 64 * b, mask, acc[r][b]);
}

template <uint32_t R>
GPURAID_GFNI_TARGET void dot_rows(uint32_t len, uint32_t k, const uint64_t* mat, const uint8_t* const* src,
                                  uint8_t* const* dst) {
  const __mmask64 all = ~__mmask64(0);
  uint32_t i = 0;
  for (; i + 128 <= len; i += 128) dot_step<R, 2>(i, k, mat, src, dst, all);
  for (; i + 64 <= len; i += 64) dot_step<R, 1>(i, k, mat, src, dst, all);
  if (i < len) dot_step<R, 1>(i, k, mat, src, dst, (__mmask64(1) << (len - i)) - 1);
}

}  // namespace

GPURAID_GFNI_TARGET void gf_dot_prod_gfni(uint32_t len, uint32_t k, uint32_t rows, const uint64_t* matrices,
                                          const uint8_t* const* src, uint8_t* const* dst) {
  // Four rows a pass: more would spill the accumulators of two-vector steps.
  for (uint32_t r = 0; r < rows; r += 4) {
    const uint64_t* mat = matrices + size_t(r) * k;
    switch (rows - r) {
      case 1: dot_rows<1>(len, k, mat, src, dst + r); break;
      case 2: dot_rows<2>(len, k, mat, src, dst + r); break;
      case 3: dot_rows<3>(len, k, mat, src, dst + r); break;
      default: dot_rows<4>(len, k, mat, src, dst + r); break;
    }
  }
}

bool gf_gfni_available() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("gfni");
}

}  // namespace gpuraid
