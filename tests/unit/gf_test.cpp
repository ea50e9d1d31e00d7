#include <gtest/gtest.h>
#include <isa-l/erasure_code.h>

#include <random>

#include "engine/gf256.h"

using namespace gpuraid;

TEST(Gf256, KnownProducts) {
  // 0x11d: x^8 = x^4 + x^3 + x^2 + 1, so 2 * 0x80 = 0x1d.
  EXPECT_EQ(gf::mul(2, 0x80), 0x1d);
  EXPECT_EQ(gf::mul(0x53, 0xca), 0x8f);  // checked by hand, bit by bit
  EXPECT_EQ(gf::mul(0, 0x77), 0);
  EXPECT_EQ(gf::mul(1, 0x77), 0x77);
  EXPECT_EQ(gf::pow(2, 8), 0x1d);
  EXPECT_EQ(gf::pow(2, 255), 1);  // {02} generates the multiplicative group
}

TEST(Gf256, GeneratorHasFullOrder) {
  uint8_t x = 1;
  for (int i = 1; i < 255; i++) {
    x = gf::mul(x, 2);
    ASSERT_NE(x, 1) << "order of 2 divides " << i;
  }
}

TEST(Gf256, MatchesIsalForAllPairs) {
  for (int a = 0; a < 256; a++)
    for (int b = 0; b < 256; b++)
      ASSERT_EQ(gf::mul(uint8_t(a), uint8_t(b)), gf_mul(uint8_t(a), uint8_t(b))) << a << "*" << b;
}

TEST(Gf256, InverseOfEveryElement) {
  for (int a = 1; a < 256; a++) {
    EXPECT_EQ(gf::mul(uint8_t(a), gf::inv(uint8_t(a))), 1) << a;
    EXPECT_EQ(gf::inv(uint8_t(a)), gf_inv(uint8_t(a)));
  }
}

TEST(Gf256, MatrixInverseMatchesIsal) {
  std::mt19937 rng(7);
  for (int n = 1; n <= 12; n++) {
    for (int trial = 0; trial < 20; trial++) {
      std::vector<uint8_t> m(n * n), a(n * n), b(n * n), isal(n * n);
      for (auto& x : m) x = uint8_t(rng());
      a = m;
      b = m;
      bool ours = gf::invert_matrix(a.data(), n);
      bool theirs = gf_invert_matrix(b.data(), isal.data(), n) == 0;
      ASSERT_EQ(ours, theirs);
      if (!ours) continue;
      ASSERT_EQ(a, isal);
      // m x inverse = identity
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
          uint8_t s = 0;
          for (int t = 0; t < n; t++) s ^= gf::mul(m[i * n + t], a[t * n + j]);
          ASSERT_EQ(s, i == j ? 1 : 0);
        }
    }
  }
}

TEST(Gf256, SingularMatrixIsRefused) {
  uint8_t m[4] = {1, 2, 1, 2};
  EXPECT_FALSE(gf::invert_matrix(m, 2));
}
