// xor_cached (engine/parity/xor_cached.h): both versions, every remainder
// path, any alignment, the output aliasing a source, against a byte loop.
#include "engine/parity/xor_cached.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace gpuraid {
namespace {

using XorFn = void (*)(uint8_t*, const uint8_t* const*, int, uint32_t);

void check(XorFn fn, int n, uint32_t len, uint32_t misalign, bool in_place, std::mt19937& rng) {
  std::vector<std::vector<uint8_t>> bufs(n, std::vector<uint8_t>(len + 64));
  for (auto& b : bufs)
    for (auto& x : b) x = uint8_t(rng());
  std::vector<const uint8_t*> src(n);
  for (int s = 0; s < n; s++) src[s] = bufs[s].data() + (misalign + uint32_t(s) * 3) % 64;
  std::vector<uint8_t> want(len);
  for (uint32_t i = 0; i < len; i++) {
    uint8_t a = 0;
    for (int s = 0; s < n; s++) a ^= src[s][i];
    want[i] = a;
  }
  std::vector<uint8_t> out_buf(len + 64 + 2, 0xa5);
  uint8_t* dst = in_place ? const_cast<uint8_t*>(src[0]) : out_buf.data() + 1 + misalign % 64;
  fn(dst, src.data(), n, len);
  ASSERT_EQ(0, memcmp(dst, want.data(), len)) << "n " << n << " len " << len << " misalign " << misalign
                                              << (in_place ? " in place" : "");
  if (!in_place) {  // nothing written outside [dst, dst + len)
    EXPECT_EQ(0xa5, dst[-1]);
    EXPECT_EQ(0xa5, dst[len]);
  }
}

void check_all(XorFn fn) {
  std::mt19937 rng(7);
  for (int n : {1, 2, 3, 5, 17, 129})
    for (uint32_t len : {1u, 31u, 32u, 33u, 63u, 64u, 65u, 127u, 128u, 129u, 255u, 256u, 257u, 320u, 4096u,
                          4096u + 77u, 65536u})
      for (uint32_t misalign : {0u, 1u, 7u, 32u})
        for (bool in_place : {false, true}) check(fn, n, len, misalign, in_place, rng);
}

TEST(XorCached, BaselineMatchesByteLoop) { check_all(xor_cached_baseline); }

TEST(XorCached, Avx2MatchesByteLoop) {
  if (!xor_cached_has_avx2()) GTEST_SKIP() << "this CPU has no AVX2: the AVX2 version cannot run here";
  check_all(xor_cached_avx2);
}

TEST(XorCached, Avx512MatchesByteLoop) {
  if (!xor_cached_has_avx512()) GTEST_SKIP() << "this CPU has no AVX-512: the AVX-512 version cannot run here";
  check_all(xor_cached_avx512);
}

TEST(XorCached, DispatchedMatchesByteLoop) { check_all(xor_cached); }

}  // namespace
}  // namespace gpuraid
