// The host side of the kernels: which jobs go to the CPU, descriptor
// layout, the staging plan and the Update commit batch.
#include "kernels/batch_builder.h"

#include <gtest/gtest.h>

#include <new>
#include <set>

namespace gpuraid::kern {
namespace {

alignas(64) uint8_t pool[16][8192];

ParityJob encode_job(const Codec* c, uint32_t len) {
  ParityJob j;
  j.codec = c;
  j.len = len;
  for (uint32_t i = 0; i < c->k(); i++) j.src[i] = pool[i];
  for (uint32_t r = 0; r < c->m(); r++) j.dst[r] = pool[c->k() + r];
  return j;
}

TEST(BatchBuilder, RoutesOddJobsToTheCpu) {
  const Codec c(CodeKind::Cauchy, 4, 2), wide(CodeKind::Cauchy, 8, 5);
  ParityJob j = encode_job(&c, 4096);
  EXPECT_EQ(BatchBuilder::unsupported(j), nullptr);
  j.len = 96;
  EXPECT_NE(BatchBuilder::unsupported(j), nullptr);
  j.len = 0;
  EXPECT_NE(BatchBuilder::unsupported(j), nullptr);
  j = encode_job(&c, 4096);
  j.src[2] += 8;
  EXPECT_NE(BatchBuilder::unsupported(j), nullptr);
  j = encode_job(&wide, 4096);  // m = 5 > kMaxRows
  EXPECT_NE(BatchBuilder::unsupported(j), nullptr);
  ParityJob u = encode_job(&c, 4096);
  u.op = ParityOp::Update;
  u.nsrc = 1;
  u.src2[0] = pool[10];
  u.src_idx[0] = 4;  // column out of range
  EXPECT_NE(BatchBuilder::unsupported(u), nullptr);
  u.src_idx[0] = 3;
  EXPECT_EQ(BatchBuilder::unsupported(u), nullptr);
}

TEST(BatchBuilder, Raid6UsesHornerWithColumnsHighestFirst) {
  const Codec c(CodeKind::PQ, 5, 2);
  ParityJob j = encode_job(&c, 4096 * 2 + 64);
  BatchBuilder bb;
  HostBatch b;
  ASSERT_TRUE(bb.add(&j, &b));
  ASSERT_EQ(b.jobs.size(), 1u);
  EXPECT_EQ(b.jobs[0].horner, 1);
  EXPECT_EQ(b.jobs[0].ndst, 2);
  EXPECT_TRUE(b.coefs.empty());
  for (uint32_t i = 0; i < 5; i++) EXPECT_EQ(b.ptrs[i], reinterpret_cast<uintptr_t>(pool[4 - i]));
  EXPECT_EQ(b.ntiles, 3u);
}

TEST(BatchBuilder, CauchyCoefficientsPackRowsIntoBytes) {
  const Codec c(CodeKind::Cauchy, 3, 4);
  ParityJob j = encode_job(&c, 4096);
  BatchBuilder bb;
  HostBatch b;
  ASSERT_TRUE(bb.add(&j, &b));
  ASSERT_EQ(b.coefs.size(), 3u);
  for (uint32_t col = 0; col < 3; col++)
    for (uint32_t r = 0; r < 4; r++) EXPECT_EQ((b.coefs[col] >> (8 * r)) & 0xff, c.coeff(r, col));
}

TEST(BatchBuilder, StagingCopiesSharedInputsOnce) {
  const Codec pq(CodeKind::PQ, 4, 2), ec(CodeKind::Cauchy, 4, 3);
  ParityJob a = encode_job(&pq, 4096), e = encode_job(&ec, 4096);
  for (uint32_t r = 0; r < 3; r++) e.dst[r] = pool[8 + r];
  BatchBuilder bb;
  HostBatch b;
  ASSERT_TRUE(bb.add(&a, &b));
  ASSERT_TRUE(bb.add(&e, &b));
  StagingPlan p;
  plan_staging(b, &p);
  EXPECT_EQ(p.copy_in.size(), 4u);   // the shared data strips
  EXPECT_EQ(p.copy_out.size(), 5u);  // P, Q and three ec rows
  EXPECT_EQ(p.bytes, 9u * 4096);
  std::set<uint64_t> places;
  for (size_t i = 0; i < b.ptrs.size(); i++) {
    for (size_t k = 0; k < i; k++)
      if (b.ptrs[k] == b.ptrs[i]) {
        EXPECT_EQ(p.offset[k], p.offset[i]);
      }
    places.insert(p.offset[i]);
    EXPECT_EQ(p.offset[i] % 64, 0u);
  }
  EXPECT_EQ(places.size(), 9u);
}

TEST(BatchBuilder, UpdateOutputsCommitThroughCopyJobs) {
  const Codec c(CodeKind::Cauchy, 6, 3);
  ParityJob u = encode_job(&c, 8192);
  u.op = ParityOp::Update;
  u.nsrc = 2;
  u.src_idx[0] = 1;
  u.src_idx[1] = 5;
  u.src2[0] = pool[12];
  u.src2[1] = pool[13];
  BatchBuilder bb;
  HostBatch b;
  ASSERT_TRUE(bb.add(&u, &b));
  EXPECT_EQ(update_scratch_bytes(b), 3u * 8192);
  std::vector<uint64_t> placed = b.ptrs;
  place_update_outputs(b, 0x100000, placed.data());
  HostBatch commit;
  build_commit(b, placed.data(), &commit);
  ASSERT_EQ(commit.jobs.size(), 3u);
  for (uint32_t r = 0; r < 3; r++) {
    EXPECT_EQ(commit.ptrs[2 * r], 0x100000u + r * 8192);
    EXPECT_EQ(commit.roles[2 * r], Role::Device);
    EXPECT_EQ(commit.ptrs[2 * r + 1], reinterpret_cast<uintptr_t>(pool[6 + r]));
    EXPECT_EQ(commit.coefs[r], 1u);
  }
}

// Recovering rows 0 and 1 of a 2+2 code from rows 2 and 3, the codec made
// in `at` (and destroyed after): the coefficient words the builder packs.
std::vector<uint32_t> recover_coefs(BatchBuilder& bb, void* at, CodeKind kind) {
  const Codec* c = new (at) Codec(kind, 2, 2);
  ParityJob j;
  j.op = ParityOp::Recover;
  j.codec = c;
  j.len = 4096;
  j.nsrc = 2;
  j.ndst = 2;
  for (uint32_t i = 0; i < 2; i++) {
    j.src[i] = pool[i];
    j.src_idx[i] = uint8_t(2 + i);
    j.dst[i] = pool[2 + i];
    j.dst_idx[i] = uint8_t(i);
  }
  HostBatch b;
  EXPECT_TRUE(bb.add(&j, &b));
  c->~Codec();
  return b.coefs;
}

// A volume deleted and another made can put a new codec where the old one
// was: the decode cache must not hand it the old code's coefficients.
TEST(BatchBuilder, DecodeCacheIsPerCodeNotPerAddress) {
  alignas(Codec) unsigned char storage[sizeof(Codec)];
  BatchBuilder shared, fresh;
  const std::vector<uint32_t> pq = recover_coefs(shared, storage, CodeKind::PQ);
  const std::vector<uint32_t> ec = recover_coefs(shared, storage, CodeKind::Cauchy);
  EXPECT_NE(pq, ec);
  EXPECT_EQ(ec, recover_coefs(fresh, storage, CodeKind::Cauchy));
}

TEST(BatchBuilder, GridNeverExceedsTilesOrDevice) {
  EXPECT_EQ(grid_blocks(1, 1000), 1u);
  EXPECT_EQ(grid_blocks(5000, 1000), 1000u);
  EXPECT_EQ(grid_blocks(5000, 0), 1u);
}

}  // namespace
}  // namespace gpuraid::kern
