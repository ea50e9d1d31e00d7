#include "engine/ppl/ppl_sum.h"

#include <immintrin.h>

#include <cstring>

#include "engine/invariant.h"

// GCC 12 warns inside its own _mm512_broadcast_i32x4 (an undefined vector it
// passes on purpose): a false positive of the header, not of this code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace gpuraid {

namespace {

constexpr uint64_t kP = 0x100000001b3ull;
constexpr uint64_t lane_k(uint64_t base, int l) { return (base * uint64_t(2 * l + 1)) | 1; }
constexpr uint64_t kA[8] = {lane_k(0x9e3779b97f4a7c15ull, 0), lane_k(0x9e3779b97f4a7c15ull, 1),
                            lane_k(0x9e3779b97f4a7c15ull, 2), lane_k(0x9e3779b97f4a7c15ull, 3),
                            lane_k(0x9e3779b97f4a7c15ull, 4), lane_k(0x9e3779b97f4a7c15ull, 5),
                            lane_k(0x9e3779b97f4a7c15ull, 6), lane_k(0x9e3779b97f4a7c15ull, 7)};
constexpr uint64_t kB[8] = {lane_k(0xc2b2ae3d27d4eb4full, 0), lane_k(0xc2b2ae3d27d4eb4full, 1),
                            lane_k(0xc2b2ae3d27d4eb4full, 2), lane_k(0xc2b2ae3d27d4eb4full, 3),
                            lane_k(0xc2b2ae3d27d4eb4full, 4), lane_k(0xc2b2ae3d27d4eb4full, 5),
                            lane_k(0xc2b2ae3d27d4eb4full, 6), lane_k(0xc2b2ae3d27d4eb4full, 7)};

uint32_t finish(const uint64_t* a, const uint64_t* b, size_t len) {
  uint64_t h = uint64_t(len) * kP;
  for (int l = 0; l < 8; l++) h += a[l] * kA[l] + b[l] * kB[l];
  return uint32_t(h ^ (h >> 32));
}

// The eight lanes as one vector: GCC splits it into what the target has
// (one zmm, two ymm, four xmm), the arithmetic per lane is the same.
typedef uint64_t Lanes __attribute__((vector_size(64)));

// finish() on the lanes as they are, in registers: the same sum (mod 2^64,
// in another order). Never through a stack array: GCC stores a vector into
// one with an aligned move, and under ASan's detect_stack_use_after_return
// such a local lives in a fake frame without that alignment (a #GP, seen in
// CI on an AVX-512 machine).
[[gnu::always_inline]] inline uint32_t finish_lanes(Lanes a, Lanes b, size_t len) {
  const Lanes ka = {kA[0], kA[1], kA[2], kA[3], kA[4], kA[5], kA[6], kA[7]};
  const Lanes kb = {kB[0], kB[1], kB[2], kB[3], kB[4], kB[5], kB[6], kB[7]};
  const Lanes v = a * ka + b * kb;
  const uint64_t h = uint64_t(len) * kP + v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
  return uint32_t(h ^ (h >> 32));
}

[[gnu::always_inline]] inline uint32_t sum_body(const uint8_t* p, size_t len) {
  Lanes a = {}, b = {};
  for (size_t i = 0; i < len; i += 64) {
    Lanes w;
    memcpy(&w, p + i, 64);
    a += w;
    b += a;
  }
  return finish_lanes(a, b, len);
}

// Four 64-byte blocks a step (four loads in flight per source), summed in
// block order; two sources (the usual partial parity: parity and new data)
// without the loop over sources.
template <int N>
[[gnu::always_inline]] inline void xor_block4(const uint8_t* const* src, int n, size_t i, Lanes (&w)[4]) {
  for (int j = 0; j < 4; j++) memcpy(&w[j], src[0] + i + 64 * j, 64);
  const int count = N > 0 ? N : n;
  for (int s = 1; s < count; s++)
    for (int j = 0; j < 4; j++) {
      Lanes x;
      memcpy(&x, src[s] + i + 64 * j, 64);
      w[j] ^= x;
    }
}

template <int N>
[[gnu::always_inline]] inline uint32_t xor_sum_body(uint8_t* dst, const uint8_t* const* src, int n, size_t len) {
  Lanes a = {}, b = {};
  size_t i = 0;
  for (; i + 256 <= len; i += 256) {
    Lanes w[4];
    xor_block4<N>(src, n, i, w);
    for (int j = 0; j < 4; j++) {
      memcpy(dst + i + 64 * j, &w[j], 64);
      a += w[j];
      b += a;
    }
  }
  for (; i < len; i += 64) {
    Lanes w;
    memcpy(&w, src[0] + i, 64);
    for (int s = 1; s < n; s++) {
      Lanes x;
      memcpy(&x, src[s] + i, 64);
      w ^= x;
    }
    memcpy(dst + i, &w, 64);
    a += w;
    b += a;
  }
  return finish_lanes(a, b, len);
}

[[gnu::always_inline]] inline uint32_t xor_sum_any(uint8_t* dst, const uint8_t* const* src, int n, size_t len) {
  return n == 2 ? xor_sum_body<2>(dst, src, n, len) : xor_sum_body<0>(dst, src, n, len);
}

// One 64-byte block of the fused update: pp and the new parity at i.
[[gnu::always_inline]] inline Lanes update_block(uint8_t* parity, uint8_t* pp, const uint8_t* const* old,
                                                 const uint8_t* const* neu, int n, size_t i) {
  Lanes t;
  memcpy(&t, parity + i, 64);
  for (int s = 0; s < n; s++) {
    Lanes x;
    memcpy(&x, old[s] + i, 64);
    t ^= x;
  }
  memcpy(pp + i, &t, 64);
  Lanes w = t;
  for (int s = 0; s < n; s++) {
    Lanes x;
    memcpy(&x, neu[s] + i, 64);
    w ^= x;
  }
  memcpy(parity + i, &w, 64);
  return t;
}

[[gnu::always_inline]] inline uint32_t update_sum_body(uint8_t* parity, uint8_t* pp, const uint8_t* const* old,
                                                      const uint8_t* const* neu, int n, size_t len) {
  Lanes a = {}, b = {};
  for (size_t i = 0; i < len; i += 64) {
    a += update_block(parity, pp, old, neu, n, i);
    b += a;
  }
  return finish_lanes(a, b, len);
}

}  // namespace

uint32_t ppl_payload_sum_reference(const uint8_t* p, size_t len) {
  GPR_ASSERT(len % 64 == 0, "payload sum of %zu bytes (a multiple of 64 only)", len);
  uint64_t a[8] = {}, b[8] = {};
  for (size_t i = 0; i < len / 8; i++) {
    uint64_t w = 0;
    for (int k = 0; k < 8; k++) w |= uint64_t(p[i * 8 + k]) << (8 * k);
    a[i % 8] += w;
    b[i % 8] += a[i % 8];
  }
  return finish(a, b, len);
}

uint32_t ppl_payload_sum_baseline(const uint8_t* p, size_t len) { return sum_body(p, len); }

__attribute__((target("avx2"))) uint32_t ppl_payload_sum_avx2(const uint8_t* p, size_t len) {
  return sum_body(p, len);
}

// AVX-512 by hand: GCC keeps the four-block arrays of the generic body in
// memory (a store and a reload per block).
__attribute__((target("avx512f"))) static inline void sum4(__m512i w0, __m512i w1, __m512i w2, __m512i w3,
                                                           __m512i& a, __m512i& b) {
  a = _mm512_add_epi64(a, w0);
  b = _mm512_add_epi64(b, a);
  a = _mm512_add_epi64(a, w1);
  b = _mm512_add_epi64(b, a);
  a = _mm512_add_epi64(a, w2);
  b = _mm512_add_epi64(b, a);
  a = _mm512_add_epi64(a, w3);
  b = _mm512_add_epi64(b, a);
}

// Once per sum. (Not finish_lanes: a 512-bit vector argument to a function
// not built for AVX-512 changes its ABI, which clang refuses. Unaligned
// stores: see finish_lanes.)
__attribute__((target("avx512f"))) static inline uint32_t finish512(__m512i a, __m512i b, size_t len) {
  uint64_t la[8], lb[8];
  _mm512_storeu_si512(la, a);
  _mm512_storeu_si512(lb, b);
  return finish(la, lb, len);
}

// Four 64-byte blocks a step, in named registers (GCC keeps __m512i
// arrays on the stack): loaded from p, XORed with the blocks of src[from ..
// count - 1] at i, stored to p.
__attribute__((target("avx512f"), always_inline)) static inline void load4(const uint8_t* p, __m512i& w0, __m512i& w1,
                                                                          __m512i& w2, __m512i& w3) {
  w0 = _mm512_loadu_si512(p);
  w1 = _mm512_loadu_si512(p + 64);
  w2 = _mm512_loadu_si512(p + 128);
  w3 = _mm512_loadu_si512(p + 192);
}
__attribute__((target("avx512f"), always_inline)) static inline void xor4(const uint8_t* const* src, int from, int count,
                                                                         size_t i, __m512i& w0, __m512i& w1,
                                                                         __m512i& w2, __m512i& w3) {
  for (int s = from; s < count; s++) {
    w0 = _mm512_xor_si512(w0, _mm512_loadu_si512(src[s] + i));
    w1 = _mm512_xor_si512(w1, _mm512_loadu_si512(src[s] + i + 64));
    w2 = _mm512_xor_si512(w2, _mm512_loadu_si512(src[s] + i + 128));
    w3 = _mm512_xor_si512(w3, _mm512_loadu_si512(src[s] + i + 192));
  }
}
__attribute__((target("avx512f"), always_inline)) static inline void store4(uint8_t* p, __m512i w0, __m512i w1,
                                                                           __m512i w2, __m512i w3) {
  _mm512_storeu_si512(p, w0);
  _mm512_storeu_si512(p + 64, w1);
  _mm512_storeu_si512(p + 128, w2);
  _mm512_storeu_si512(p + 192, w3);
}

__attribute__((target("avx512f"))) uint32_t ppl_payload_sum_avx512(const uint8_t* p, size_t len) {
  __m512i a = _mm512_setzero_si512(), b = _mm512_setzero_si512();
  size_t i = 0;
  for (; i + 256 <= len; i += 256)
    sum4(_mm512_loadu_si512(p + i), _mm512_loadu_si512(p + i + 64), _mm512_loadu_si512(p + i + 128),
         _mm512_loadu_si512(p + i + 192), a, b);
  for (; i < len; i += 64) {
    a = _mm512_add_epi64(a, _mm512_loadu_si512(p + i));
    b = _mm512_add_epi64(b, a);
  }
  return finish512(a, b, len);
}

uint32_t ppl_xor_sum_baseline(uint8_t* dst, const uint8_t* const* src, int n, size_t len) {
  return xor_sum_any(dst, src, n, len);
}

__attribute__((target("avx2"))) uint32_t ppl_xor_sum_avx2(uint8_t* dst, const uint8_t* const* src, int n, size_t len) {
  return xor_sum_any(dst, src, n, len);
}

// Four blocks a step from src[0] xored with the N - 1 (N = 0: n - 1) others.
template <int N>
__attribute__((target("avx512f"))) static inline uint32_t xor_sum512(uint8_t* dst, const uint8_t* const* src, int n,
                                                                     size_t len) {
  const int count = N > 0 ? N : n;
  __m512i a = _mm512_setzero_si512(), b = _mm512_setzero_si512();
  size_t i = 0;
  for (; i + 256 <= len; i += 256) {
    __m512i w0, w1, w2, w3;
    load4(src[0] + i, w0, w1, w2, w3);
    xor4(src, 1, count, i, w0, w1, w2, w3);
    store4(dst + i, w0, w1, w2, w3);
    sum4(w0, w1, w2, w3, a, b);
  }
  for (; i < len; i += 64) {
    __m512i w = _mm512_loadu_si512(src[0] + i);
    for (int s = 1; s < count; s++) w = _mm512_xor_si512(w, _mm512_loadu_si512(src[s] + i));
    _mm512_storeu_si512(dst + i, w);
    a = _mm512_add_epi64(a, w);
    b = _mm512_add_epi64(b, a);
  }
  return finish512(a, b, len);
}

// Two sources (a one-strip read-modify-write's parity and new data) with
// the loop over sources unrolled away.
__attribute__((target("avx512f"))) uint32_t ppl_xor_sum_avx512(uint8_t* dst, const uint8_t* const* src, int n,
                                                               size_t len) {
  return n == 2 ? xor_sum512<2>(dst, src, n, len) : xor_sum512<0>(dst, src, n, len);
}

uint32_t ppl_update_xor_sum_baseline(uint8_t* parity, uint8_t* pp, const uint8_t* const* old,
                                     const uint8_t* const* neu, int n, size_t len) {
  return update_sum_body(parity, pp, old, neu, n, len);
}

__attribute__((target("avx2"))) uint32_t ppl_update_xor_sum_avx2(uint8_t* parity, uint8_t* pp,
                                                                 const uint8_t* const* old,
                                                                 const uint8_t* const* neu, int n, size_t len) {
  return update_sum_body(parity, pp, old, neu, n, len);
}

// Four blocks a step, as xor_sum512; N > 0: that many strips written (the
// loops over sources unrolled), 0: n.
template <int N>
__attribute__((target("avx512f"))) static inline uint32_t update_sum512(uint8_t* parity, uint8_t* pp,
                                                                        const uint8_t* const* old,
                                                                        const uint8_t* const* neu, int n, size_t len) {
  const int count = N > 0 ? N : n;
  __m512i a = _mm512_setzero_si512(), b = _mm512_setzero_si512();
  size_t i = 0;
  for (; i + 256 <= len; i += 256) {
    // Every load before the first store: the buffers lie multiples of 4 KiB
    // apart, and a load behind a store to the same low 12 address bits
    // waits for it (4K aliasing).
    __m512i t0, t1, t2, t3;
    load4(parity + i, t0, t1, t2, t3);
    xor4(old, 0, count, i, t0, t1, t2, t3);
    __m512i w0 = t0, w1 = t1, w2 = t2, w3 = t3;
    xor4(neu, 0, count, i, w0, w1, w2, w3);
    store4(pp + i, t0, t1, t2, t3);
    store4(parity + i, w0, w1, w2, w3);
    sum4(t0, t1, t2, t3, a, b);
  }
  for (; i < len; i += 64) {
    __m512i t = _mm512_loadu_si512(parity + i);
    for (int s = 0; s < count; s++) t = _mm512_xor_si512(t, _mm512_loadu_si512(old[s] + i));
    __m512i w = t;
    for (int s = 0; s < count; s++) w = _mm512_xor_si512(w, _mm512_loadu_si512(neu[s] + i));
    _mm512_storeu_si512(pp + i, t);
    _mm512_storeu_si512(parity + i, w);
    a = _mm512_add_epi64(a, t);
    b = _mm512_add_epi64(b, a);
  }
  return finish512(a, b, len);
}

__attribute__((target("avx512f"))) uint32_t ppl_update_xor_sum_avx512(uint8_t* parity, uint8_t* pp,
                                                                      const uint8_t* const* old,
                                                                      const uint8_t* const* neu, int n, size_t len) {
  return n == 1 ? update_sum512<1>(parity, pp, old, neu, n, len) : update_sum512<0>(parity, pp, old, neu, n, len);
}

uint32_t ppl_update_xor_sum(uint8_t* parity, uint8_t* pp, const uint8_t* const* old, const uint8_t* const* neu, int n,
                            size_t len) {
  GPR_ASSERT(len % 64 == 0 && n >= 1, "update and partial parity of %d strips of %zu bytes", n, len);
  using Fn = uint32_t (*)(uint8_t*, uint8_t*, const uint8_t* const*, const uint8_t* const*, int, size_t);
  static const Fn fn = __builtin_cpu_supports("avx512f") ? ppl_update_xor_sum_avx512
                       : __builtin_cpu_supports("avx2")  ? ppl_update_xor_sum_avx2
                                                         : ppl_update_xor_sum_baseline;
  return fn(parity, pp, old, neu, n, len);
}

// GF(2^8) multiplies by a constant c through ISA-L's 32-byte table of c (the
// low nibble's 16 products, then the high nibble's), 64 bytes at a time:
// the table in every 128-bit lane (vpshufb looks up within its lane), the
// bytes split into nibbles once for every row that multiplies them.
struct GfTable512 {
  __m512i lo, hi;
};
struct Nibbles512 {
  __m512i lo, hi;
};
__attribute__((target("avx512f,avx512bw"), always_inline)) static inline GfTable512 gf_table512(const uint8_t* t) {
  return {_mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t))),
          _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t + 16)))};
}
__attribute__((target("avx512f,avx512bw"), always_inline)) static inline Nibbles512 nibbles512(__m512i x) {
  const __m512i nib = _mm512_set1_epi8(0x0f);
  return {_mm512_and_si512(x, nib), _mm512_and_si512(_mm512_srli_epi64(x, 4), nib)};
}
__attribute__((target("avx512f,avx512bw"), always_inline)) static inline __m512i gf_mul512(const GfTable512& t,
                                                                                          const Nibbles512& x) {
  return _mm512_xor_si512(_mm512_shuffle_epi8(t.lo, x.lo), _mm512_shuffle_epi8(t.hi, x.hi));
}

// dst = base ^ c * src through ISA-L's 32-byte table of c, summed in the
// same pass.
__attribute__((target("avx512f,avx512bw"))) uint32_t ppl_mad_sum_avx512(uint8_t* dst, const uint8_t* base,
                                                                        const uint8_t* src, const uint8_t* table,
                                                                        size_t len) {
  const GfTable512 t = gf_table512(table);
  __m512i a = _mm512_setzero_si512(), b = _mm512_setzero_si512();
  for (size_t i = 0; i < len; i += 64) {
    const __m512i prod = gf_mul512(t, nibbles512(_mm512_loadu_si512(src + i)));
    const __m512i w = _mm512_xor_si512(_mm512_loadu_si512(base + i), prod);
    _mm512_storeu_si512(dst + i, w);
    a = _mm512_add_epi64(a, w);
    b = _mm512_add_epi64(b, a);
  }
  return finish512(a, b, len);
}

// M rows fixed at compile time: tables and sums stay in registers. X0:
// row 0's coefficients are all 1 (RAID 6's P), XOR without the multiply
// (the multiplies bound this loop: two per GF row, old and new data).
template <uint32_t M, bool X0>
__attribute__((target("avx512f,avx512bw"))) static inline void update_mad_sum512(
    uint32_t len, const uint8_t* tables, uint32_t row_stride, const uint8_t* old, const uint8_t* neu,
    uint8_t* const* dst, uint8_t* const* pp, uint32_t* sums) {
  GfTable512 t[M];
  __m512i a[M], b[M];
  uint8_t* out[M];
  uint8_t* part[M];
#pragma GCC unroll 4
  for (uint32_t r = 0; r < M; r++) {
    t[r] = gf_table512(tables + size_t(r) * row_stride);
    a[r] = b[r] = _mm512_setzero_si512();
    out[r] = dst[r];
    part[r] = pp[r];
  }
  for (uint32_t i = 0; i < len; i += 64) {
    // old before any store: pp[0] may be old.
    const __m512i o = _mm512_loadu_si512(old + i), n = _mm512_loadu_si512(neu + i);
    const Nibbles512 on = nibbles512(o), nn = nibbles512(n);
    // Every row loaded before any store (4K aliasing: the rows and the
    // partial parities lie multiples of 4 KiB apart).
    __m512i p[M];
#pragma GCC unroll 4
    for (uint32_t r = 0; r < M; r++) p[r] = _mm512_loadu_si512(out[r] + i);
#pragma GCC unroll 4
    for (uint32_t r = 0; r < M; r++) {
      const bool x = X0 && r == 0;
      const __m512i q = _mm512_xor_si512(p[r], x ? o : gf_mul512(t[r], on));
      const __m512i w = _mm512_xor_si512(q, x ? n : gf_mul512(t[r], nn));
      _mm512_storeu_si512(part[r] + i, q);
      _mm512_storeu_si512(out[r] + i, w);
      a[r] = _mm512_add_epi64(a[r], q);
      b[r] = _mm512_add_epi64(b[r], a[r]);
    }
  }
#pragma GCC unroll 4
  for (uint32_t r = 0; r < M; r++) sums[r] = finish512(a[r], b[r], len);
}

__attribute__((target("avx512f,avx512bw"))) void ppl_update_mad_sum_avx512(uint32_t len, uint32_t m,
                                                                          const uint8_t* tables, uint32_t row_stride,
                                                                          const uint8_t* old, const uint8_t* neu,
                                                                          uint8_t* const* dst, uint8_t* const* pp,
                                                                          uint32_t* sums) {
  // Row 0 multiplies by 1 where its table is the identity's (low nibble
  // products 0..15, high 0, 16, .., 240).
  static constexpr uint8_t kOne[32] = {0,  1,  2,  3,  4,  5,  6,   7,   8,   9,   10,  11,  12,  13,  14,  15,
                                       0, 16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240};
  const bool x0 = memcmp(tables, kOne, 32) == 0;
  const auto run = [&]<uint32_t M>() {
    if (x0) return update_mad_sum512<M, true>(len, tables, row_stride, old, neu, dst, pp, sums);
    update_mad_sum512<M, false>(len, tables, row_stride, old, neu, dst, pp, sums);
  };
  switch (m) {
    case 1: return run.template operator()<1>();
    case 2: return run.template operator()<2>();
    case 3: return run.template operator()<3>();
    default: return run.template operator()<4>();
  }
}

bool ppl_update_mad_sum(uint32_t len, uint32_t m, const uint8_t* tables, uint32_t row_stride, const uint8_t* old,
                        const uint8_t* neu, uint8_t* const* dst, uint8_t* const* pp, uint32_t* sums) {
  static const bool avx512bw = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
  GPR_ASSERT(m >= 1 && m <= 4, "partial parity of %u rows in one pass (1 to 4)", m);
  if (!avx512bw || len % 64) return false;
  ppl_update_mad_sum_avx512(len, m, tables, row_stride, old, neu, dst, pp, sums);
  return true;
}

bool ppl_mad_sum(uint8_t* dst, const uint8_t* base, const uint8_t* src, const uint8_t* table, size_t len,
                 uint32_t* sum) {
  static const bool avx512bw = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
  if (!avx512bw || len % 64) return false;
  *sum = ppl_mad_sum_avx512(dst, base, src, table, len);
  return true;
}

uint32_t ppl_xor_sum(uint8_t* dst, const uint8_t* const* src, int n, size_t len) {
  GPR_ASSERT(len % 64 == 0 && n >= 1, "xor and sum of %d sources of %zu bytes", n, len);
  using Fn = uint32_t (*)(uint8_t*, const uint8_t* const*, int, size_t);
  static const Fn fn = __builtin_cpu_supports("avx512f") ? ppl_xor_sum_avx512
                       : __builtin_cpu_supports("avx2")  ? ppl_xor_sum_avx2
                                                         : ppl_xor_sum_baseline;
  return fn(dst, src, n, len);
}

uint32_t ppl_payload_sum(const uint8_t* p, size_t len) {
  GPR_ASSERT(len % 64 == 0, "payload sum of %zu bytes (a multiple of 64 only)", len);
  using Fn = uint32_t (*)(const uint8_t*, size_t);
  static const Fn fn = __builtin_cpu_supports("avx512f") ? ppl_payload_sum_avx512
                       : __builtin_cpu_supports("avx2")  ? ppl_payload_sum_avx2
                                                         : ppl_payload_sum_baseline;
  return fn(p, len);
}

}  // namespace gpuraid
