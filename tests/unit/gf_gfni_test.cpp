// The GFNI dot product (engine/parity/gf_gfni.h) against ISA-L's
// ec_encode_data with the same tables, bit for bit: Reed-Solomon (RAID 6
// style) and Cauchy rows, k from 1 to 64, 1 to 6 output rows (more than one
// pass of four), lengths around the 64- and 128-byte steps, misaligned
// buffers. The matrices themselves are checked on every CPU.
#include "engine/parity/gf_gfni.h"

#include <gtest/gtest.h>
#include <isa-l/erasure_code.h>

#include <cstring>
#include <random>
#include <vector>

namespace gpuraid {
namespace {

// vgf2p8affineqb with a zero constant, one byte at a time: output bit i is
// the parity of (byte 7 - i of the matrix) & x.
uint8_t affine_bytewise(uint64_t matrix, uint8_t x) {
  uint8_t out = 0;
  for (int i = 0; i < 8; i++) out |= uint8_t(__builtin_parity(uint8_t(matrix >> (8 * (7 - i))) & x) << i);
  return out;
}

TEST(GfGfni, MatrixOfEveryConstantMultipliesLikeIsalsTable) {
  uint8_t table[32];
  for (int c = 0; c < 256; c++) {
    gf_vect_mul_init(uint8_t(c), table);
    const uint64_t m = gfni_matrix(table);
    for (int x = 0; x < 256; x++)
      ASSERT_EQ(gf_mul(uint8_t(c), uint8_t(x)), affine_bytewise(m, uint8_t(x))) << "c " << c << " x " << x;
  }
}

TEST(GfGfni, DotProductMatchesEcEncodeData) {
  if (!gf_gfni_available())
    GTEST_SKIP() << "this CPU has no GFNI with AVX-512BW: the engine uses "
                    "ISA-L's ec_encode_data here";
  std::mt19937 rng(7);
  for (bool cauchy : {false, true})
    for (uint32_t k : {1u, 2u, 3u, 8u, 17u, 64u})
      for (uint32_t rows = 1; rows <= 6; rows++) {
        if (!cauchy && k + rows > 255) continue;
        std::vector<uint8_t> a(size_t(k + rows) * k), tables(size_t(32) * k * rows);
        if (cauchy)
          gf_gen_cauchy1_matrix(a.data(), int(k + rows), int(k));
        else
          gf_gen_rs_matrix(a.data(), int(k + rows), int(k));
        ec_init_tables(int(k), int(rows), a.data() + size_t(k) * k, tables.data());
        std::vector<uint64_t> mat(size_t(k) * rows);
        gfni_matrices(k * rows, tables.data(), mat.data());
        for (uint32_t len : {1u, 63u, 64u, 65u, 127u, 128u, 129u, 200u, 4096u, 4096u + 17u})
          for (uint32_t mis : {0u, 5u}) {
            const size_t stride = 8192 + 64;
            std::vector<uint8_t> in(stride * k), out(stride * rows * 2, 0xA5);
            for (auto& x : in) x = uint8_t(rng());
            std::vector<uint8_t*> src(k), want(rows), got(rows);
            for (uint32_t j = 0; j < k; j++) src[j] = in.data() + stride * j + (mis * (j + 1)) % 64;
            for (uint32_t r = 0; r < rows; r++) {
              want[r] = out.data() + stride * r;
              got[r] = out.data() + stride * (rows + r) + mis;
            }
            ec_encode_data(int(len), int(k), int(rows), tables.data(), src.data(), want.data());
            gf_dot_prod_gfni(len, k, rows, mat.data(), src.data(), got.data());
            for (uint32_t r = 0; r < rows; r++) {
              ASSERT_EQ(0, memcmp(want[r], got[r], len)) << (cauchy ? "cauchy" : "rs") << " k " << k << " rows " << rows
                                                         << " row " << r << " len " << len << " mis " << mis;
              EXPECT_EQ(0xA5, got[r][len]) << "written past the row";
            }
          }
      }
}

}  // namespace
}  // namespace gpuraid
