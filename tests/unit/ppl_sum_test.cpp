// The write-hole log's payload checksum (engine/ppl/ppl_sum.h): every
// version gives the definition's bits, and a payload with any sector stale
// (older bytes where a crash tore the write) sums otherwise.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include <isa-l/erasure_code.h>

#include "engine/ppl/ppl_sum.h"

using namespace gpuraid;

namespace {

std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 r(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = uint8_t(r());
  return v;
}

}  // namespace

TEST(PplSum, EveryVersionGivesTheDefinitionsBits) {
  for (size_t len : {size_t(64), size_t(128), size_t(4096), size_t(65536), size_t(1 << 20)}) {
    for (uint64_t seed : {1ull, 2ull, 3ull}) {
      std::vector<uint8_t> p = random_bytes(len + 8, seed);
      for (size_t shift : {size_t(0), size_t(8)}) {  // any alignment
        const uint8_t* d = p.data() + shift;
        const uint32_t want = ppl_payload_sum_reference(d, len);
        EXPECT_EQ(ppl_payload_sum(d, len), want) << len;
        EXPECT_EQ(ppl_payload_sum_baseline(d, len), want) << len;
        if (__builtin_cpu_supports("avx2")) {
          EXPECT_EQ(ppl_payload_sum_avx2(d, len), want) << len;
        }
        if (__builtin_cpu_supports("avx512f")) {
          EXPECT_EQ(ppl_payload_sum_avx512(d, len), want) << len;
        }
      }
    }
  }
  // Known values, so that a change of definition cannot pass unnoticed.
  std::vector<uint8_t> zeros(4096, 0), ones(4096, 0xff);
  EXPECT_EQ(ppl_payload_sum(zeros.data(), zeros.size()), ppl_payload_sum_reference(zeros.data(), zeros.size()));
  EXPECT_NE(ppl_payload_sum(zeros.data(), 4096), ppl_payload_sum(zeros.data(), 2048)) << "the length is summed";
  EXPECT_NE(ppl_payload_sum(zeros.data(), 4096), ppl_payload_sum(ones.data(), 4096));
}

// A torn payload: one 512-byte sector (or 4 KiB block) from an older write.
TEST(PplSum, AStaleSectorIsSeen) {
  for (uint64_t seed = 0; seed < 20; seed++) {
    std::vector<uint8_t> now = random_bytes(65536, seed), old = random_bytes(65536, seed + 1000);
    const uint32_t whole = ppl_payload_sum(now.data(), now.size());
    for (size_t sector : {size_t(512), size_t(4096)})
      for (size_t at = 0; at < now.size(); at += sector * 7) {
        std::vector<uint8_t> torn = now;
        memcpy(torn.data() + at, old.data() + at, sector);
        ASSERT_NE(ppl_payload_sum(torn.data(), torn.size()), whole) << "stale " << sector << " at " << at;
      }
    // Two sectors swapped (a misplaced write) and an all-zero sector.
    std::vector<uint8_t> swapped = now;
    std::swap_ranges(swapped.begin(), swapped.begin() + 512, swapped.begin() + 4096);
    EXPECT_NE(ppl_payload_sum(swapped.data(), swapped.size()), whole);
    std::vector<uint8_t> zeroed = now;
    memset(zeroed.data() + 8192, 0, 512);
    EXPECT_NE(ppl_payload_sum(zeroed.data(), zeroed.size()), whole);
  }
}

// The fused XOR-and-sum a RAID 5 / RAID 6 P partial parity takes: the same
// bytes as XOR, the same sum as summing them after.
TEST(PplSum, XorAndSumInOnePass) {
  for (int n : {1, 2, 3, 9}) {
    for (size_t len : {size_t(64), size_t(4096), size_t(65536 + 192)}) {
      std::vector<std::vector<uint8_t>> src;
      std::vector<const uint8_t*> ptr;
      for (int s = 0; s < n; s++) {
        src.push_back(random_bytes(len, 50 + s + len));
        ptr.push_back(src.back().data());
      }
      std::vector<uint8_t> want(len, 0);
      for (auto& v : src)
        for (size_t i = 0; i < len; i++) want[i] ^= v[i];
      const uint32_t sum = ppl_payload_sum_reference(want.data(), len);
      using Fn = uint32_t (*)(uint8_t*, const uint8_t* const*, int, size_t);
      std::vector<Fn> fns = {ppl_xor_sum, ppl_xor_sum_baseline};
      if (__builtin_cpu_supports("avx2")) fns.push_back(ppl_xor_sum_avx2);
      if (__builtin_cpu_supports("avx512f")) fns.push_back(ppl_xor_sum_avx512);
      for (Fn f : fns) {
        std::vector<uint8_t> got(len, 0xee);
        EXPECT_EQ(f(got.data(), ptr.data(), n, len), sum) << n << " sources, " << len;
        EXPECT_EQ(got, want) << n << " sources, " << len;
      }
      // In place: the destination is the first source.
      std::vector<uint8_t> first = src[0];
      ptr[0] = first.data();
      EXPECT_EQ(ppl_xor_sum(first.data(), ptr.data(), n, len), sum);
      EXPECT_EQ(first, want);
    }
  }
}

// A RAID 5 read-modify-write with its partial parity in the same pass:
// the new parity as the update makes it (parity ^ old ^ new), the partial
// parity as old parity ^ old data, and that one's sum; the partial parity
// in a buffer of its own and over the first strip's old data (the engine's
// place for it: ParityJob::pp).
TEST(PplSum, UpdateAndPartialParityInOnePass) {
  for (int n : {1, 2, 5}) {
    for (size_t len : {size_t(64), size_t(4096), size_t(65536 + 192)}) {
      const std::vector<uint8_t> parity = random_bytes(len, 7 + len);
      std::vector<std::vector<uint8_t>> old, neu;
      std::vector<const uint8_t*> po, pn;
      for (int s = 0; s < n; s++) {
        old.push_back(random_bytes(len, 100 + s + len));
        neu.push_back(random_bytes(len, 200 + s + len));
      }
      for (int s = 0; s < n; s++) {
        po.push_back(old[s].data());
        pn.push_back(neu[s].data());
      }
      std::vector<uint8_t> want_pp = parity, want_parity;
      for (auto& v : old)
        for (size_t i = 0; i < len; i++) want_pp[i] ^= v[i];
      want_parity = want_pp;
      for (auto& v : neu)
        for (size_t i = 0; i < len; i++) want_parity[i] ^= v[i];
      const uint32_t sum = ppl_payload_sum_reference(want_pp.data(), len);
      using Fn = uint32_t (*)(uint8_t*, uint8_t*, const uint8_t* const*, const uint8_t* const*, int, size_t);
      std::vector<Fn> fns = {ppl_update_xor_sum, ppl_update_xor_sum_baseline};
      if (__builtin_cpu_supports("avx2")) fns.push_back(ppl_update_xor_sum_avx2);
      if (__builtin_cpu_supports("avx512f")) fns.push_back(ppl_update_xor_sum_avx512);
      for (Fn f : fns) {
        std::vector<uint8_t> p = parity, pp(len, 0xee);
        EXPECT_EQ(f(p.data(), pp.data(), po.data(), pn.data(), n, len), sum) << n << " strips, " << len;
        EXPECT_EQ(pp, want_pp) << n << " strips, " << len;
        EXPECT_EQ(p, want_parity) << n << " strips, " << len;
        std::vector<uint8_t> in_place = old[0];
        std::vector<const uint8_t*> po2 = po;
        po2[0] = in_place.data();
        p = parity;
        EXPECT_EQ(f(p.data(), in_place.data(), po2.data(), pn.data(), n, len), sum) << "in place, " << n << " strips";
        EXPECT_EQ(in_place, want_pp) << "in place, " << n << " strips, " << len;
        EXPECT_EQ(p, want_parity) << "in place, " << n << " strips, " << len;
      }
    }
  }
}

// A RAID 6 Q / ec row's partial parity where one strip was written: the
// base plus c times the strip, as ISA-L's multiply-add makes it, and its sum.
TEST(PplSum, MultiplyAddAndSumInOnePass) {
  if (!__builtin_cpu_supports("avx512bw")) GTEST_SKIP() << "no AVX-512BW here: the three-pass path is taken";
  for (unsigned c : {1u, 2u, 0x1du, 0x8eu, 0xffu}) {
    unsigned char coef = uint8_t(c), table[32];
    ec_init_tables(1, 1, &coef, table);
    for (size_t len : {size_t(64), size_t(4096), size_t(65536)}) {
      const std::vector<uint8_t> base = random_bytes(len, c * 7 + len), src = random_bytes(len, c * 11 + len);
      std::vector<uint8_t> want = base, got(len, 0);
      gf_vect_mad(int(len), 1, 0, table, const_cast<uint8_t*>(src.data()), want.data());
      uint32_t sum = 0;
      ASSERT_TRUE(ppl_mad_sum(got.data(), base.data(), src.data(), table, len, &sum));
      EXPECT_EQ(got, want) << "c=" << c << " len=" << len;
      EXPECT_EQ(sum, ppl_payload_sum_reference(want.data(), len));
    }
  }
}

// A RAID 6 / ec read-modify-write of one strip with every row's partial
// parity in the same pass: each row as ISA-L's multiply-add makes the new
// parity (row += c_r * (old ^ new)), each partial parity as row + c_r * old,
// and their sums; for 1 to 4 rows of a real code's tables, row 0's partial
// parity apart and over the old data (the engine's place for it).
TEST(PplSum, GfUpdateAndPartialParitiesInOnePass) {
  if (!__builtin_cpu_supports("avx512bw")) GTEST_SKIP() << "no AVX-512BW here: the update and the partial parities are made apart";
  // Vandermonde: row 0 all ones (RAID 6's P, XORed without multiplies);
  // Cauchy: every row multiplied.
  for (bool vandermonde : {true, false})
  for (int m = 1; m <= 4; m++) {
    const int k = 6;
    std::vector<uint8_t> matrix(size_t(k + m) * k), tables(size_t(32) * k * m);
    if (vandermonde) gf_gen_rs_matrix(matrix.data(), k + m, k);
    else gf_gen_cauchy1_matrix(matrix.data(), k + m, k);
    ec_init_tables(k, m, matrix.data() + size_t(k) * k, tables.data());
    for (int col : {0, 3, k - 1})
      for (size_t len : {size_t(64), size_t(4096), size_t(65536)}) {
        const std::vector<uint8_t> old = random_bytes(len, 300 + col + len), neu = random_bytes(len, 400 + col + len);
        std::vector<std::vector<uint8_t>> rows, want_rows, want_pp;
        for (int r = 0; r < m; r++) rows.push_back(random_bytes(len, 500 + r + len));
        std::vector<uint8_t> delta(len);
        for (size_t i = 0; i < len; i++) delta[i] = old[i] ^ neu[i];
        for (int r = 0; r < m; r++) {
          const uint8_t* t = tables.data() + size_t(32) * (size_t(r) * k + col);
          want_rows.push_back(rows[r]);
          gf_vect_mad(int(len), 1, 0, const_cast<uint8_t*>(t), delta.data(), want_rows.back().data());
          want_pp.push_back(rows[r]);
          gf_vect_mad(int(len), 1, 0, const_cast<uint8_t*>(t), const_cast<uint8_t*>(old.data()), want_pp.back().data());
        }
        for (bool in_place : {false, true}) {
          std::vector<std::vector<uint8_t>> out_rows = rows;
          std::vector<uint8_t*> dst;
          for (auto& r : out_rows) dst.push_back(r.data());
          std::vector<uint8_t> pp(len * m, 0xee), old_copy = old;
          std::vector<uint8_t*> pps;
          for (int r = 0; r < m; r++) pps.push_back(pp.data() + len * r);
          if (in_place) pps[0] = old_copy.data();
          uint32_t sums[4] = {};
          ASSERT_TRUE(ppl_update_mad_sum(uint32_t(len), uint32_t(m), tables.data() + size_t(32) * col,
                                         uint32_t(32 * k), old_copy.data(), neu.data(), dst.data(), pps.data(), sums));
          for (int r = 0; r < m; r++) {
            EXPECT_EQ(out_rows[r], want_rows[r]) << "vandermonde=" << vandermonde << " m=" << m << " col=" << col
                                                 << " row " << r << " len=" << len << " in place " << in_place;
            EXPECT_TRUE(std::equal(want_pp[r].begin(), want_pp[r].end(), pps[r]))
                << "partial parity, vandermonde=" << vandermonde << " m=" << m << " col=" << col << " row " << r
                << " in place " << in_place;
            EXPECT_EQ(sums[r], ppl_payload_sum_reference(want_pp[r].data(), len)) << "m=" << m << " row " << r;
          }
        }
      }
  }
}
