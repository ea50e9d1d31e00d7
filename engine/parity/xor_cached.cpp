#include "engine/parity/xor_cached.h"

#include <cstring>

namespace gpuraid {
namespace {

// Vectors of 32 (AVX2, or SSE2 pairs) or 64 bytes (AVX-512); loads and
// stores through memcpy so no alignment is assumed. The helpers are internal
// and always inlined, so the ABI note GCC gives for a vector passed by value
// outside AVX code does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"
typedef uint64_t V32 __attribute__((vector_size(32)));
typedef uint64_t V64 __attribute__((vector_size(64)));

template <class V>
[[gnu::always_inline]] inline V load(const uint8_t* p) {
  V v;
  memcpy(&v, p, sizeof v);
  return v;
}
template <class V>
[[gnu::always_inline]] inline void store(uint8_t* p, V v) {
  memcpy(p, &v, sizeof v);
}

// Four vectors a step (four in flight per source), then one, then bytes.
// Compiled once per version below: the instruction set is the caller's target.
template <class V>
[[gnu::always_inline]] inline void xor_body(uint8_t* dst, const uint8_t* const* src, int n, uint32_t len) {
  constexpr uint32_t W = sizeof(V);
  uint32_t i = 0;
  for (; i + 4 * W <= len; i += 4 * W) {
    V a = load<V>(src[0] + i), b = load<V>(src[0] + i + W), c = load<V>(src[0] + i + 2 * W),
      d = load<V>(src[0] + i + 3 * W);
    for (int s = 1; s < n; s++) {
      a ^= load<V>(src[s] + i);
      b ^= load<V>(src[s] + i + W);
      c ^= load<V>(src[s] + i + 2 * W);
      d ^= load<V>(src[s] + i + 3 * W);
    }
    store(dst + i, a);
    store(dst + i + W, b);
    store(dst + i + 2 * W, c);
    store(dst + i + 3 * W, d);
  }
  for (; i + W <= len; i += W) {
    V a = load<V>(src[0] + i);
    for (int s = 1; s < n; s++) a ^= load<V>(src[s] + i);
    store(dst + i, a);
  }
  for (; i < len; i++) {
    uint8_t a = src[0][i];
    for (int s = 1; s < n; s++) a ^= src[s][i];
    dst[i] = a;
  }
}

}  // namespace

void xor_cached_baseline(uint8_t* dst, const uint8_t* const* src, int n, uint32_t len) {
  xor_body<V32>(dst, src, n, len);
}

__attribute__((target("avx2"))) void xor_cached_avx2(uint8_t* dst, const uint8_t* const* src, int n,
                                                     uint32_t len) {
  xor_body<V32>(dst, src, n, len);
}

__attribute__((target("avx512f"))) void xor_cached_avx512(uint8_t* dst, const uint8_t* const* src, int n,
                                                          uint32_t len) {
  xor_body<V64>(dst, src, n, len);
}

bool xor_cached_has_avx2() { return __builtin_cpu_supports("avx2"); }
bool xor_cached_has_avx512() { return __builtin_cpu_supports("avx512f"); }

void xor_cached(uint8_t* dst, const uint8_t* const* src, int n, uint32_t len) {
  using XorFn = void (*)(uint8_t*, const uint8_t* const*, int, uint32_t);
  static const XorFn fn = xor_cached_has_avx512() ? xor_cached_avx512
                          : xor_cached_has_avx2() ? xor_cached_avx2
                                                  : xor_cached_baseline;
  fn(dst, src, n, len);
}

}  // namespace gpuraid
