// Planner decisions and their member-I/O counts.
#include <gtest/gtest.h>

#include "engine/planner.h"

using namespace gpuraid;

namespace {
Geometry geo(Level l, uint32_t n, uint32_t m = 0, uint32_t strip = 65536) {
  Geometry g;
  std::string err;
  EXPECT_TRUE(Geometry::make(l, n, m, strip, 1ull << 30, &g, &err)) << err;
  return g;
}
struct Ranges {
  StripRange r[kMaxMembers];
  Ranges& set(uint32_t i, uint32_t a, uint32_t b) {
    r[i] = {a, b};
    return *this;
  }
};
}  // namespace

TEST(Planner, Raid5RandomWriteIsReadModifyWrite) {
  Geometry g = geo(Level::R5, 8);  // 7+1
  Ranges w;
  w.set(3, 8192, 12288);
  WritePlan p = plan_stripe_write(g, 0, w.r, 0, false);
  EXPECT_EQ(p.mode, WriteMode::ReadModifyWrite);
  EXPECT_EQ(p.reads(), 2u);   // old data + old P
  EXPECT_EQ(p.writes(), 2u);  // new data + new P
  EXPECT_EQ(p.c0, 8192u);
  EXPECT_EQ(p.c1, 12288u);
}

TEST(Planner, Raid6RandomWriteReadsDataPQ) {
  Geometry g = geo(Level::R6, 10);  // 8+2
  Ranges w;
  w.set(0, 0, 4096);
  WritePlan p = plan_stripe_write(g, 5, w.r, 0, false);
  EXPECT_EQ(p.mode, WriteMode::ReadModifyWrite);
  EXPECT_EQ(p.reads(), 3u);
  EXPECT_EQ(p.writes(), 3u);
}

TEST(Planner, FullStripeNeedsNoReads) {
  Geometry g = geo(Level::R5, 8);
  Ranges w;
  for (uint32_t i = 0; i < 7; i++) w.set(i, 0, 65536);
  WritePlan p = plan_stripe_write(g, 1, w.r, 0, false);
  EXPECT_EQ(p.mode, WriteMode::FullStripe);
  EXPECT_EQ(p.reads(), 0u);
  EXPECT_EQ(p.writes(), 8u);
}

TEST(Planner, MostOfAStripeIsReconstructWrite) {
  Geometry g = geo(Level::R5, 8);
  Ranges w;
  for (uint32_t i = 0; i < 5; i++) w.set(i, 0, 65536);
  WritePlan p = plan_stripe_write(g, 0, w.r, 0, false);
  EXPECT_EQ(p.mode, WriteMode::ReconstructWrite);  // 2 reads instead of 6
  EXPECT_EQ(p.reads(), 2u);
  EXPECT_EQ(p.writes(), 6u);
}

TEST(Planner, TieGoesToReconstructWrite) {
  Geometry g = geo(Level::R5, 4);  // 3+1: one strip written: RMW 2 reads, RCW 2 reads
  Ranges w;
  w.set(0, 0, 65536);
  WritePlan p = plan_stripe_write(g, 0, w.r, 0, false);
  EXPECT_EQ(p.mode, WriteMode::ReconstructWrite);
  EXPECT_EQ(p.reads(), 2u);
}

TEST(Planner, SuspectParityForbidsReadModifyWrite) {
  Geometry g = geo(Level::R5, 8);
  Ranges w;
  w.set(3, 0, 4096);
  WritePlan p = plan_stripe_write(g, 0, w.r, 0, true);
  EXPECT_EQ(p.mode, WriteMode::ReconstructWrite);
  EXPECT_EQ(p.reads(), 6u);
}

TEST(Planner, WriteToLostStripReconstructs) {
  Geometry g = geo(Level::R5, 8);
  Ranges w;
  w.set(2, 0, 4096);
  const uint64_t failed = 1ull << g.data_member(0, 2);
  WritePlan p = plan_stripe_write(g, 0, w.r, failed, false);
  EXPECT_EQ(p.mode, WriteMode::ReconstructWrite);  // other data + new data -> P; the lost strip is not written
  EXPECT_EQ(p.reads(), 6u);
  EXPECT_EQ(p.writes(), 1u);
}

TEST(Planner, WriteNextToLostStripUsesReadModifyWrite) {
  Geometry g = geo(Level::R5, 8);
  Ranges w;
  w.set(2, 0, 4096);
  const uint64_t failed = 1ull << g.data_member(0, 5);
  WritePlan p = plan_stripe_write(g, 0, w.r, failed, false);
  EXPECT_EQ(p.mode, WriteMode::ReadModifyWrite);
  EXPECT_EQ(p.reads(), 2u);
}

TEST(Planner, PartialWriteOfLostStripIsDegraded) {
  Geometry g = geo(Level::R6, 6);  // 4+2
  Ranges w;
  w.set(1, 0, 4096);
  w.set(2, 0, 8192);  // strip 1 covers half of [0, 8192): its old bytes are needed
  const uint64_t failed = 1ull << g.data_member(7, 1);
  WritePlan p = plan_stripe_write(g, 7, w.r, failed, false);
  EXPECT_EQ(p.mode, WriteMode::DegradedWrite);
  EXPECT_EQ(p.recover_roles, 1ull << 1);
  EXPECT_EQ(p.reads(), 4u);  // k survivors
  EXPECT_FALSE(p.read_roles & (1ull << 1));
}

// Members whose read met a medium error (not failed): never read again, and
// each of their blocks in [c0, c1) written: parity and covered data as ever,
// data whose old bytes are needed rebuilt from k others and written back.
TEST(Planner, UnreadableMembersAreWrittenAroundAndBack) {
  Geometry g = geo(Level::R5, 8);  // 7+1
  Ranges w;
  w.set(3, 8192, 12288);
  const uint64_t p_member = 1ull << g.parity_member(0, 0), d3 = 1ull << g.data_member(0, 3);
  // Old parity unreadable: the read-modify-write becomes a reconstruct-write (P written whole).
  WritePlan p = plan_stripe_write(g, 0, w.r, 0, false, p_member);
  EXPECT_EQ(p.mode, WriteMode::ReconstructWrite);
  EXPECT_EQ(p.reads(), 6u);
  EXPECT_TRUE(p.write_roles >> 7 & 1);
  EXPECT_EQ(p.rewrite_roles, 0u);
  // The written strip's old data: the same (it is written over all of [c0, c1)).
  p = plan_stripe_write(g, 0, w.r, 0, false, d3);
  EXPECT_EQ(p.mode, WriteMode::ReconstructWrite);
  EXPECT_FALSE(p.read_roles >> 3 & 1);
  // An untouched strip a reconstruct-write reads: rebuilt and written back.
  Geometry g4 = geo(Level::R5, 4);  // 3+1: one strip written ties to reconstruct-write
  Ranges w4;
  w4.set(0, 0, 4096);
  const uint64_t d1 = 1ull << g4.data_member(0, 1);
  p = plan_stripe_write(g4, 0, w4.r, 0, false, d1);
  EXPECT_EQ(p.mode, WriteMode::DegradedWrite);
  EXPECT_EQ(p.rewrite_roles, 1ull << 1);
  EXPECT_EQ(p.recover_roles, 1ull << 1);
  EXPECT_EQ(p.read_roles, (1ull << 0) | (1ull << 2) | (1ull << 3));  // k survivors: d0, d2, P
  EXPECT_TRUE(p.write_roles >> 1 & 1);
  EXPECT_EQ(p.writes(), 3u);  // d0, d1 written back, P
  // Stale parity rebuilds nothing: ignored there (the caller reads again).
  p = plan_stripe_write(g4, 0, w4.r, 0, true, d1);
  EXPECT_EQ(p.mode, WriteMode::ReconstructWrite);
  EXPECT_EQ(p.rewrite_roles, 0u);
  EXPECT_TRUE(p.read_roles >> 1 & 1);
}

TEST(Planner, DegradedReadUsesKSurvivors) {
  Geometry g = geo(Level::R5, 8);
  Ranges r;
  r.set(4, 4096, 8192);
  const uint64_t failed = 1ull << g.data_member(3, 4);
  DegradedReadPlan p;
  ASSERT_TRUE(plan_degraded_read(g, 3, r.r, failed, &p));
  EXPECT_EQ(__builtin_popcountll(p.survivors), 7);
  EXPECT_EQ(p.recover_roles, 1ull << 4);
  EXPECT_EQ(p.c0, 4096u);
  EXPECT_EQ(p.c1, 8192u);
  // Reading a healthy strip needs no rebuild.
  Ranges h;
  h.set(1, 0, 4096);
  EXPECT_FALSE(plan_degraded_read(g, 3, h.r, failed, &p));
}

TEST(Planner, StripRangeMergeKeepsOneRange) {
  StripRange r;
  EXPECT_TRUE(r.merge(4096, 8192));
  EXPECT_TRUE(r.merge(8192, 12288));  // adjacent
  EXPECT_TRUE(r.merge(0, 4096));
  EXPECT_EQ(r.a, 0u);
  EXPECT_EQ(r.b, 12288u);
  EXPECT_FALSE(r.merge(16384, 20480));  // a gap
}

// Found by planner_grid_test: with every parity row lost there is nothing
// to update, so nothing old is read.
TEST(Planner, NoParityLeftWritesDataAlone) {
  Geometry g = geo(Level::R5, 4);
  Ranges w;
  w.set(0, 0, 4096);
  const uint64_t failed = 1ull << g.parity_member(2, 0);
  WritePlan p = plan_stripe_write(g, 2, w.r, failed, false);
  EXPECT_EQ(p.reads(), 0u);
  EXPECT_EQ(p.write_roles, 1u);  // the data alone
}

// Found by planner_grid_test: RAID 6 2+2 without d0, writing d1 in part:
// any two survivors rebuild d0 (a degraded write reads 2), where
// read-modify-write read d1, P and Q.
TEST(Planner, DegradedWriteWhenCheaperThanReadModifyWrite) {
  Geometry g = geo(Level::R6, 4);
  Ranges w;
  w.set(1, 0, 4096);
  const uint64_t failed = 1ull << g.data_member(0, 0);
  WritePlan p = plan_stripe_write(g, 0, w.r, failed, false);
  EXPECT_EQ(p.mode, WriteMode::DegradedWrite);
  EXPECT_EQ(p.reads(), 2u);
  EXPECT_EQ(p.recover_roles, 1u);  // d0
  // With parity that may be stale it stays off parity where it can.
  EXPECT_NE(plan_stripe_write(g, 0, w.r, failed, true).mode, WriteMode::ReadModifyWrite);
}
