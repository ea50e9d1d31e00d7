// gf_update_fused (engine/parity/gf_update_fused.h) against ISA-L's own
// two-pass update (the delta old ^ new, then ec_encode_data_update), for
// Reed-Solomon (RAID 6 style) and Cauchy rows, every data column, m = 1..4,
// lengths around the 64-byte step, misaligned buffers, and rows 4 KiB
// apart as the engine's strips are.
#include "engine/parity/gf_update_fused.h"

#include <gtest/gtest.h>
#include <isa-l/erasure_code.h>

#include <cstring>
#include <random>
#include <vector>

namespace gpuraid {
namespace {

using Fn = void (*)(uint32_t, uint32_t, const uint8_t*, uint32_t, const uint8_t*, const uint8_t*, uint8_t* const*);

void check_all(Fn fn) {
  std::mt19937 rng(11);
  const uint32_t k = 6;
  for (bool cauchy : {false, true})
    for (uint32_t m = 1; m <= 4; m++) {
      std::vector<uint8_t> a(size_t(k + m) * k), tables(size_t(32) * k * m);
      if (cauchy) gf_gen_cauchy1_matrix(a.data(), int(k + m), int(k));
      else gf_gen_rs_matrix(a.data(), int(k + m), int(k));
      ec_init_tables(int(k), int(m), a.data() + size_t(k) * k, tables.data());
      for (uint32_t len : {1u, 63u, 64u, 65u, 127u, 128u, 200u, 4096u, 4096u + 17u})
        for (uint32_t mis : {0u, 1u, 13u})
          for (uint32_t col = 0; col < k; col++) {
            // One arena, strips 8 KiB apart (4 KiB multiples, as the engine's buffers).
            const size_t strip = 8192;
            std::vector<uint8_t> arena(strip * (2 + m) + 128);
            for (auto& x : arena) x = uint8_t(rng());
            const uint8_t* o = arena.data() + mis;
            const uint8_t* n = arena.data() + strip + (mis * 3) % 64;
            std::vector<uint8_t*> gp(m), wp(m);
            std::vector<std::vector<uint8_t>> want(m);
            for (uint32_t r = 0; r < m; r++) {
              gp[r] = arena.data() + strip * (2 + r) + mis;
              want[r].assign(gp[r], gp[r] + len);
              wp[r] = want[r].data();
            }
            std::vector<uint8_t> delta(len);
            for (uint32_t i = 0; i < len; i++) delta[i] = o[i] ^ n[i];
            ec_encode_data_update(int(len), int(k), int(m), int(col), tables.data(), delta.data(), wp.data());
            const uint8_t after = gp[m - 1][len];
            fn(len, m, tables.data() + 32 * col, 32 * k, o, n, gp.data());
            for (uint32_t r = 0; r < m; r++)
              ASSERT_EQ(0, memcmp(gp[r], wp[r], len)) << (cauchy ? "cauchy" : "rs") << " m " << m << " row " << r
                                                      << " col " << col << " len " << len << " misalign " << mis;
            EXPECT_EQ(after, gp[m - 1][len]);  // nothing written past the row
          }
    }
}

TEST(GfUpdateFused, BytesMatchIsal) { check_all(gf_update_fused_bytes); }

TEST(GfUpdateFused, Avx512MatchesIsal) {
  if (!gf_update_fused_available())
    GTEST_SKIP() << "this CPU has no AVX-512BW: the fused update cannot run here (the engine keeps ISA-L's two passes)";
  check_all(gf_update_fused_avx512);
}

}  // namespace
}  // namespace gpuraid
