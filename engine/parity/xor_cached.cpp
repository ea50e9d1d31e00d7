#include "engine/parity/xor_cached.h"

#include <cstring>

namespace gpuraid {
namespace {

// 32 bytes; loads and stores through memcpy so no alignment is assumed.
// The helpers are internal and always inlined, so the ABI note GCC gives for
// a 32-byte vector passed by value outside AVX code does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"
typedef uint64_t V32 __attribute__((vector_size(32)));

[[gnu::always_inline]] inline V32 load(const uint8_t* p) {
  V32 v;
  memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store(uint8_t* p, V32 v) { memcpy(p, &v, sizeof v); }

// 128 bytes a step (four vectors in flight per source), then 32, then bytes.
// Compiled twice below: the instruction set is the caller's target.
[[gnu::always_inline]] inline void xor_body(uint8_t* dst, const uint8_t* const* src, int n, uint32_t len) {
  uint32_t i = 0;
  for (; i + 128 <= len; i += 128) {
    V32 a = load(src[0] + i), b = load(src[0] + i + 32), c = load(src[0] + i + 64), d = load(src[0] + i + 96);
    for (int s = 1; s < n; s++) {
      a ^= load(src[s] + i);
      b ^= load(src[s] + i + 32);
      c ^= load(src[s] + i + 64);
      d ^= load(src[s] + i + 96);
    }
    store(dst + i, a);
    store(dst + i + 32, b);
    store(dst + i + 64, c);
    store(dst + i + 96, d);
  }
  for (; i + 32 <= len; i += 32) {
    V32 a = load(src[0] + i);
    for (int s = 1; s < n; s++) a ^= load(src[s] + i);
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
  xor_body(dst, src, n, len);
}

__attribute__((target("avx2"))) void xor_cached_avx2(uint8_t* dst, const uint8_t* const* src, int n,
                                                     uint32_t len) {
  xor_body(dst, src, n, len);
}

bool xor_cached_has_avx2() { return __builtin_cpu_supports("avx2"); }

void xor_cached(uint8_t* dst, const uint8_t* const* src, int n, uint32_t len) {
  using XorFn = void (*)(uint8_t*, const uint8_t* const*, int, uint32_t);
  static const XorFn fn = xor_cached_has_avx2() ? xor_cached_avx2 : xor_cached_baseline;
  fn(dst, src, n, len);
}

}  // namespace gpuraid
