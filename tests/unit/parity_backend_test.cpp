// The ISA-L backend against the scalar reference: every operation, every
// code, geometries up to k+m = 64, every erasure pattern for small k.
#include <gtest/gtest.h>

#include <random>

#include "engine/gf256.h"
#include "engine/parity/isal_raid.h"
#include "engine/parity/parity_backend.h"
#include "tests/support/parity_contract.h"
#include "tests/support/test_array.h"

using namespace gpuraid;
using test::AlignedBuf;

namespace {

struct Stripe {
  Stripe(uint32_t k, uint32_t m, uint32_t len, uint64_t seed) : k(k), m(m), len(len), mem((k + m) * size_t(len)) {
    test::fill_random(mem.data(), size_t(k) * len, seed);
  }
  uint8_t* row(uint32_t r) { return mem.data() + size_t(r) * len; }
  uint32_t k, m, len;
  AlignedBuf mem;
};

void run(ParityBackend& b, ParityJob& j) {
  bool done = false;
  j.ctx = &done;
  j.done = [](ParityJob* x) { *static_cast<bool*>(x->ctx) = true; };
  ParityJob* p = &j;
  b.submit(&p, 1);
  while (!done) b.poll();
}

void encode(ParityBackend& b, const Codec& c, Stripe& s) {
  ParityJob j;
  j.op = ParityOp::Encode;
  j.codec = &c;
  j.len = s.len;
  j.nsrc = c.k();
  j.ndst = c.m();
  for (uint32_t i = 0; i < c.k(); i++) j.src[i] = s.row(i);
  for (uint32_t r = 0; r < c.m(); r++) j.dst[r] = s.row(c.k() + r);
  run(b, j);
  ASSERT_EQ(j.status, 0);
}

struct Geo {
  CodeKind kind;
  uint32_t k, m;
};

std::vector<Geo> geometries() {
  std::vector<Geo> g;
  for (uint32_t k : {2u, 3u, 7u, 8u, 16u, 63u}) g.push_back({CodeKind::Xor, k, 1});
  for (uint32_t k : {2u, 3u, 8u, 16u, 62u}) g.push_back({CodeKind::PQ, k, 2});
  for (uint32_t m = 1; m <= 4; m++)
    for (uint32_t k : {1u, 2u, 5u, 8u, 16u, 64u - m}) g.push_back({CodeKind::Cauchy, k, m});
  return g;
}

}  // namespace

TEST(ParityBackend, EncodeMatchesReference) {
  auto cpu = make_cpu_backend();
  auto ref = make_reference_backend();
  for (auto g : geometries())
    for (uint32_t len : {64u, 4096u, 12288u}) {
      Codec c(g.kind, g.k, g.m);
      Stripe a(g.k, g.m, len, g.k * 100 + len), b(g.k, g.m, len, g.k * 100 + len);
      encode(*cpu, c, a);
      encode(*ref, c, b);
      ASSERT_EQ(0, memcmp(a.mem.data(), b.mem.data(), a.mem.size())) << "k=" << g.k << " m=" << g.m << " len=" << len;
    }
}

// Linux md's Q, computed Horner-style from the highest slot down as
// lib/raid6/int.uc does: wq = 2*wq ^ D_i.
TEST(ParityBackend, Raid6QIsMdSyndrome) {
  auto cpu = make_cpu_backend();
  Codec c(CodeKind::PQ, 6, 2);
  Stripe s(6, 2, 4096, 5);
  encode(*cpu, c, s);
  for (uint32_t b = 0; b < 4096; b++) {
    uint8_t wp = s.row(5)[b], wq = s.row(5)[b];
    for (int i = 4; i >= 0; i--) {
      wp ^= s.row(i)[b];
      wq = uint8_t(gf::mul(wq, 2) ^ s.row(i)[b]);
    }
    ASSERT_EQ(s.row(6)[b], wp);
    ASSERT_EQ(s.row(7)[b], wq);
  }
}

TEST(ParityBackend, UpdateEqualsReencode) {
  auto cpu = make_cpu_backend();
  auto ref = make_reference_backend();
  std::mt19937 rng(3);
  for (auto g : geometries()) {
    Codec c(g.kind, g.k, g.m);
    const uint32_t len = 4096;
    for (ParityBackend* be : {cpu.get(), ref.get()}) {
      Stripe s(g.k, g.m, len, g.k);
      encode(*be, c, s);
      // Change up to 3 columns; fold old^new into parity.
      ParityJob j;
      j.op = ParityOp::Update;
      j.codec = &c;
      j.len = len;
      j.ndst = g.m;
      for (uint32_t r = 0; r < g.m; r++) j.dst[r] = s.row(g.k + r);
      std::vector<std::unique_ptr<AlignedBuf>> olds;
      uint32_t n = std::min<uint32_t>(3, g.k);
      for (uint32_t t = 0; t < n; t++) {
        uint32_t col = (t * 5 + 1) % g.k;
        bool dup = false;
        for (uint32_t u = 0; u < j.nsrc; u++) dup |= j.src_idx[u] == col;
        if (dup) continue;
        olds.push_back(std::make_unique<AlignedBuf>(len));
        memcpy(olds.back()->data(), s.row(col), len);
        test::fill_random(s.row(col), len, rng());
        j.src[j.nsrc] = olds.back()->data();
        j.src2[j.nsrc] = s.row(col);
        j.src_idx[j.nsrc++] = uint8_t(col);
      }
      run(*be, j);
      Stripe fresh(g.k, g.m, len, 0);
      memcpy(fresh.mem.data(), s.mem.data(), size_t(g.k) * len);
      encode(*ref, c, fresh);
      ASSERT_EQ(0, memcmp(fresh.row(g.k), s.row(g.k), size_t(g.m) * len))
          << be->name() << " k=" << g.k << " m=" << g.m;
    }
  }
}

// Erase every pattern of up to m rows (small k) or a sample (large k).
TEST(ParityBackend, RecoverEveryErasurePattern) {
  auto cpu = make_cpu_backend();
  auto ref = make_reference_backend();
  std::mt19937 rng(11);
  for (auto g : geometries()) {
    Codec c(g.kind, g.k, g.m);
    const uint32_t n = g.k + g.m, len = 4096;
    Stripe s(g.k, g.m, len, 77);
    encode(*ref, c, s);
    std::vector<uint64_t> patterns;
    if (n <= 12) {
      for (uint64_t mask = 1; mask < (1ull << n); mask++)
        if (uint32_t(__builtin_popcountll(mask)) <= g.m) patterns.push_back(mask);
    } else {
      for (int t = 0; t < 40; t++) {
        uint64_t mask = 0;
        uint32_t e = 1 + rng() % g.m;
        while (uint32_t(__builtin_popcountll(mask)) < e) mask |= 1ull << (rng() % n);
        patterns.push_back(mask);
      }
    }
    for (uint64_t mask : patterns) {
      for (ParityBackend* be : {cpu.get(), ref.get()}) {
        ParityJob j;
        j.op = ParityOp::Recover;
        j.codec = &c;
        j.len = len;
        std::vector<std::unique_ptr<AlignedBuf>> outs;
        for (uint32_t r = 0; r < n && j.nsrc < g.k; r++)
          if (!(mask >> r & 1)) {
            j.src[j.nsrc] = s.row(r);
            j.src_idx[j.nsrc++] = uint8_t(r);
          }
        for (uint32_t r = 0; r < n; r++)
          if (mask >> r & 1) {
            outs.push_back(std::make_unique<AlignedBuf>(len));
            j.dst[j.ndst] = outs.back()->data();
            j.dst_idx[j.ndst++] = uint8_t(r);
          }
        run(*be, j);
        ASSERT_EQ(j.status, 0);
        for (uint32_t e = 0; e < j.ndst; e++)
          ASSERT_EQ(0, memcmp(j.dst[e], s.row(j.dst_idx[e]), len))
              << be->name() << " k=" << g.k << " m=" << g.m << " mask=" << mask;
      }
    }
  }
}

TEST(ParityBackend, RecoverCachesTablesPerPattern) {
  // Same pattern twice, then another: each answer must be right (a stale
  // cached table would decode garbage).
  auto cpu = make_cpu_backend();
  Codec c(CodeKind::Cauchy, 6, 3);
  Stripe s(6, 3, 4096, 9);
  encode(*cpu, c, s);
  for (uint64_t mask : {0b000000011ull, 0b000000011ull, 0b100000010ull, 0b000000011ull}) {
    ParityJob j;
    j.op = ParityOp::Recover;
    j.codec = &c;
    j.len = 4096;
    AlignedBuf o1(4096), o2(4096);
    uint8_t* outs[2] = {o1.data(), o2.data()};
    for (uint32_t r = 0; r < 9 && j.nsrc < 6; r++)
      if (!(mask >> r & 1)) {
        j.src[j.nsrc] = s.row(r);
        j.src_idx[j.nsrc++] = uint8_t(r);
      }
    for (uint32_t r = 0; r < 9; r++)
      if (mask >> r & 1) {
        j.dst[j.ndst] = outs[j.ndst];
        j.dst_idx[j.ndst++] = uint8_t(r);
      }
    run(*cpu, j);
    for (uint32_t e = 0; e < j.ndst; e++) ASSERT_EQ(0, memcmp(j.dst[e], s.row(j.dst_idx[e]), 4096));
  }
}

TEST(ParityBackend, VerifyFlagsMismatchedRows) {
  auto cpu = make_cpu_backend();
  auto ref = make_reference_backend();
  for (auto kind : {CodeKind::Xor, CodeKind::PQ, CodeKind::Cauchy}) {
    uint32_t m = kind == CodeKind::Xor ? 1 : kind == CodeKind::PQ ? 2 : 3;
    Codec c(kind, 5, m);
    Stripe s(5, m, 4096, 1);
    encode(*ref, c, s);
    for (ParityBackend* be : {cpu.get(), ref.get()}) {
      ParityJob j;
      j.op = ParityOp::Verify;
      j.codec = &c;
      j.len = 4096;
      j.nsrc = 5 + m;
      for (uint32_t r = 0; r < 5 + m; r++) j.src[r] = s.row(r);
      run(*be, j);
      EXPECT_EQ(j.mismatch_rows, 0u);
      s.row(5 + m - 1)[100] ^= 1;
      run(*be, j);
      EXPECT_EQ(j.mismatch_rows, 1u << (m - 1)) << be->name();
      s.row(5 + m - 1)[100] ^= 1;
    }
  }
}

// Every op and code on unaligned buffers and odd lengths, byte for byte
// against the code's definition, guards checked (tests/support/parity_contract.h).
// The CPU backend crashed here on CPUs without AVX-512 (ISA-L's AVX2 pq_gen
// and AVX xor_gen use aligned loads and non-temporal stores).
struct GridParam {
  const char* backend;
  ParityOp op;
};
class ParityBackendGrid : public ::testing::TestWithParam<GridParam> {};

TEST_P(ParityBackendGrid, AnyAlignmentAndLength) {
  const bool cpu = std::string(GetParam().backend) == "cpu";
  auto be = cpu ? make_cpu_backend() : make_reference_backend();
  test::GridOptions o = test::grid_options_from_env();
  o.small |= !cpu;  // the reference's byte loops have no path that depends on alignment
  const size_t jobs = test::check_parity_grid(*be, GetParam().op, o);
  EXPECT_GT(jobs, 100u);
}

std::vector<GridParam> grid_params() {
  std::vector<GridParam> v;
  for (const char* b : {"cpu", "reference"})
    for (ParityOp op : {ParityOp::Encode, ParityOp::Update, ParityOp::Recover, ParityOp::Verify}) v.push_back({b, op});
  return v;
}

std::string grid_name(const ::testing::TestParamInfo<GridParam>& p) {
  static const char* ops[] = {"encode", "update", "recover", "verify"};
  return std::string(p.param.backend) + "_" + ops[int(p.param.op)];
}

INSTANTIATE_TEST_SUITE_P(, ParityBackendGrid, ::testing::ValuesIn(grid_params()), grid_name);

TEST(ParityBackend, JobsBreakingTheRulesFailWithEinval) {
  std::unique_ptr<ParityBackend> backends[] = {make_cpu_backend(), make_reference_backend()};
  for (auto& be : backends) EXPECT_GT(test::check_rejects_invalid_jobs(*be), 10u);
}

// IsalRaid: direct ISA-L only where every ISA-L version takes the buffers.
TEST(IsalRaid, CallsIsalDirectlyOnlyOnAlignedBuffers) {
  AlignedBuf a(8192), b(8192), p(8192), q(8192);
  void* v[4] = {a.data(), b.data(), p.data(), q.data()};
  EXPECT_TRUE(IsalRaid::direct(true, 4, 4096, v));
  EXPECT_TRUE(IsalRaid::direct(false, 3, 4095, v));  // xor_gen takes any length
  EXPECT_FALSE(IsalRaid::direct(true, 4, 4096 + 16, v));  // pq_gen_avx2: multiples of 32
  v[1] = b.data() + 16;                                   // SSE would take it, AVX does not
  EXPECT_FALSE(IsalRaid::direct(false, 3, 4096, v));
}

// The output may also be a source (XOR Update passes the parity as both),
// bounced or not, across chunks and with a tail.
TEST(IsalRaid, OutputMayAlsoBeASource) {
  IsalRaid raid;
  const uint32_t len = IsalRaid::kChunk * 2 + 45;
  for (uint32_t off : {0u, 8u, 33u}) {
    AlignedBuf pa(len + 64), pb(len + 64), pp(len + 64);
    uint8_t *a = pa.data() + off, *b = pb.data() + off, *par = pp.data() + off;
    test::fill_random(a, len, 1 + off);
    test::fill_random(b, len, 2 + off);
    test::fill_random(par, len, 3 + off);
    std::vector<uint8_t> want(len);
    for (uint32_t i = 0; i < len; i++) want[i] = par[i] ^ a[i] ^ b[i];
    void* v[4] = {par, a, b, par};
    ASSERT_EQ(raid.xor_gen(4, len, v), 0);
    EXPECT_EQ(0, memcmp(par, want.data(), len)) << "offset " << off;
  }
}

TEST(IsalRaid, RefusesWhatIsalRefuses) {
  IsalRaid raid;
  AlignedBuf a(64), b(64), c(64);
  void* v[3] = {a.data(), b.data(), c.data()};
  EXPECT_EQ(raid.xor_gen(2, 64, v), -EIO);  // one source
  EXPECT_EQ(raid.pq_gen(3, 64, v), -EIO);   // one data row
  EXPECT_EQ(raid.xor_gen(3, 0, v), -EIO);
}

TEST(ParityBackendFactory, ParsesKinds) {
  ParityBackendKind k;
  EXPECT_TRUE(parse_parity_backend("auto", &k));
  EXPECT_TRUE(parse_parity_backend("cpu", &k));
  EXPECT_EQ(k, ParityBackendKind::Cpu);
  EXPECT_FALSE(parse_parity_backend("gpu", &k));
  std::string err;
  auto b = make_parity_backend(ParityBackendKind::Auto, &err);
  ASSERT_TRUE(b);  // auto always yields a backend: CUDA when usable, else ISA-L
}
