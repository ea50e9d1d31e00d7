#include <gtest/gtest.h>

#include "engine/codec.h"
#include "engine/gf256.h"

using namespace gpuraid;

TEST(Codec, Raid6RowsAreMdConvention) {
  Codec c(CodeKind::PQ, 8, 2);
  for (uint32_t j = 0; j < 8; j++) {
    EXPECT_EQ(c.coeff(0, j), 1);
    EXPECT_EQ(c.coeff(1, j), gf::pow(2, j));
  }
}

TEST(Codec, CauchyRowsAreInverseXor) {
  Codec c(CodeKind::Cauchy, 5, 3);
  for (uint32_t r = 0; r < 3; r++)
    for (uint32_t j = 0; j < 5; j++) EXPECT_EQ(gf::mul(c.coeff(r, j), uint8_t((5 + r) ^ j)), 1);
}

// Every choice of k surviving rows decodes (MDS), and the coefficients
// really invert the code: re-encoding the survivors gives the erased rows.
static void check_all_patterns(CodeKind kind, uint32_t k, uint32_t m) {
  Codec c(kind, k, m);
  const uint32_t n = k + m;
  std::vector<uint8_t> data(k), word(n);
  for (uint32_t i = 0; i < k; i++) data[i] = uint8_t(i * 37 + 11);
  for (uint32_t r = 0; r < n; r++) {
    uint8_t s = 0;
    for (uint32_t j = 0; j < k; j++) s ^= gf::mul(c.matrix()[r * k + j], data[j]);
    word[r] = s;
  }
  for (uint32_t mask = 0; mask < (1u << n); mask++) {
    if (uint32_t(__builtin_popcount(mask)) != m) continue;  // erase exactly m rows
    std::vector<uint8_t> surv, erased;
    for (uint32_t r = 0; r < n; r++) (mask >> r & 1 ? erased : surv).push_back(uint8_t(r));
    std::vector<uint8_t> coef(erased.size() * k);
    ASSERT_TRUE(c.decode_coeffs(surv.data(), erased.data(), uint32_t(erased.size()), coef.data()))
        << "k=" << k << " m=" << m << " mask=" << mask;
    for (size_t e = 0; e < erased.size(); e++) {
      uint8_t s = 0;
      for (uint32_t j = 0; j < k; j++) s ^= gf::mul(coef[e * k + j], word[surv[j]]);
      ASSERT_EQ(s, word[erased[e]]);
    }
  }
}

TEST(Codec, AllErasurePatternsDecode) {
  for (uint32_t k = 1; k <= 8; k++) check_all_patterns(CodeKind::Xor, k, 1);
  for (uint32_t k = 2; k <= 10; k++) check_all_patterns(CodeKind::PQ, k, 2);
  for (uint32_t m = 1; m <= 4; m++)
    for (uint32_t k = 1; k <= 10; k++) check_all_patterns(CodeKind::Cauchy, k, m);
}

TEST(Codec, DuplicateSurvivorsAreRefused) {
  Codec c(CodeKind::PQ, 3, 2);
  uint8_t surv[3] = {0, 0, 3}, erased[1] = {1}, out[3];
  EXPECT_FALSE(c.decode_coeffs(surv, erased, 1, out));
}
