// Member faults through the fault injector: EIO on read or write, short
// transfers, vanishing drives, faults that strike in the middle of a
// request, and failures past what the level survives.
#include <gtest/gtest.h>

#include "tests/support/test_array.h"

using namespace gpuraid;
using namespace gpuraid::test;

namespace {

struct LevelCase {
  Level level;
  uint32_t members, parity;
};

class Faults : public ::testing::TestWithParam<LevelCase> {
 protected:
  void SetUp() override {
    ArrayOptions o;
    o.level = GetParam().level;
    o.members = GetParam().members;
    o.parity = GetParam().parity;
    o.strip = 16384;
    o.member_bytes = 2u << 20;
    a = std::make_unique<TestArray>(o);
    size = a->vol().size_bytes();
    image = std::make_unique<AlignedBuf>(size);
    fill_random(image->data(), size, 1234);
    ASSERT_EQ(0, a->write(0, size, image->data()));
  }
  void expect_image() {
    AlignedBuf got(size);
    ASSERT_EQ(0, a->read(0, size, got.data()));
    ASSERT_EQ(0, memcmp(got.data(), image->data(), size));
    // And in small pieces (degraded single-strip reads).
    for (uint64_t off = 0; off < size; off += 12288) {
      uint64_t len = std::min<uint64_t>(8192, size - off);
      ASSERT_EQ(0, a->read(off, len, got.data()));
      ASSERT_EQ(0, memcmp(got.data(), image->data() + off, len)) << "offset " << off;
    }
  }
  void rewrite(uint64_t off, uint64_t len, uint64_t seed) {
    fill_random(image->data() + off, len, seed);
    ASSERT_EQ(0, a->write(off, len, image->data() + off));
  }
  uint32_t tolerated() const { return a->vol().geometry().guaranteed_redundancy(); }
  std::unique_ptr<TestArray> a;
  std::unique_ptr<AlignedBuf> image;
  uint64_t size = 0;
};

TEST_P(Faults, ReadErrorFailsMemberAndReadsStayCorrect) {
  a->drive(1).faults().arm(FaultInjector::kFailReads);
  expect_image();
  EXPECT_EQ(a->failed_events, std::vector<uint32_t>{1});
  EXPECT_EQ(a->vol().failed_mask(), 2u);
  rewrite(4096, 40960, 5);  // degraded writes
  rewrite(size - 65536, 65536, 6);
  expect_image();
}

TEST_P(Faults, WriteErrorFailsMemberAndWriteSucceeds) {
  a->drive(0).faults().arm(FaultInjector::kFailWrites);
  rewrite(0, 131072, 7);
  EXPECT_EQ(a->failed_events, std::vector<uint32_t>{0});
  expect_image();
}

TEST_P(Faults, ShortTransferFailsMember) {
  a->drive(2).faults().arm(FaultInjector::kShortTransfer);
  rewrite(0, size, 8);
  EXPECT_EQ(a->failed_events, std::vector<uint32_t>{2});
  expect_image();
}

TEST_P(Faults, VanishedMembersUpToRedundancy) {
  for (uint32_t f = 0; f < tolerated(); f++) {
    a->drive(f * 2 % a->vol().geometry().members).faults().arm(FaultInjector::kVanished);
    rewrite(f * 8192, 90112, 10 + f);
    expect_image();
  }
  EXPECT_EQ(a->failed_events.size(), tolerated());
  EXPECT_FALSE(a->vol().failed());
  EXPECT_FALSE(a->group_failed_event);
}

TEST_P(Faults, FaultInTheMiddleOfARequest) {
  // The member fails after two more of its I/Os: the read phase of a
  // write may succeed and its write phase fail, or the other way round.
  a->drive(1).faults().arm_after(2, FaultInjector::kFailReads | FaultInjector::kFailWrites);
  rewrite(0, size / 2, 21);
  rewrite(4096, 4096, 22);
  expect_image();
  EXPECT_EQ(a->failed_events, std::vector<uint32_t>{1});
}

TEST_P(Faults, LatencyKeepsDataCorrect) {
  a->drive(0).faults().set_latency_us(300);
  rewrite(8192, 65536, 30);
  expect_image();
  EXPECT_TRUE(a->failed_events.empty());
}

// Where logical byte `off` lies: its member and that member's byte.
static std::pair<uint32_t, uint64_t> place_of(Volume& v, uint64_t off) {
  const Geometry& g = v.geometry();
  const uint64_t s = off / g.stripe_data_bytes(), in = off % g.stripe_data_bytes();
  const uint32_t i = uint32_t(in / g.strip_bytes);
  return {g.data_member(s, i), v.data_offset() + g.member_offset(s) + in % g.strip_bytes};
}

// A block a member cannot read (a medium error, -ENODATA) is read around
// from the redundancy and written back: the read is served, the member
// stays, the block reads again from it (as md corrects read errors).
// Mirrors fail the member as before (their reads take no stripe lock to
// write back under).
TEST_P(Faults, AnUnreadableBlockIsReadAroundAndRewritten) {
  const uint64_t off = 3 * a->vol().geometry().stripe_data_bytes() + a->vol().geometry().strip_bytes + 8192;
  const auto [m, moff] = place_of(a->vol(), off);
  a->drive(m).faults().set_unreadable(moff, 4096);
  AlignedBuf got(16384);
  ASSERT_EQ(0, a->read(off - 4096, 16384, got.data()));
  EXPECT_EQ(0, memcmp(got.data(), image->data() + off - 4096, 16384));
  if (a->vol().geometry().is_mirror()) {
    // (The read may take another copy and meet nothing.)
    EXPECT_TRUE(a->failed_events.empty() || a->failed_events == std::vector<uint32_t>{m});
  } else {
    EXPECT_TRUE(a->failed_events.empty());
    EXPECT_EQ(a->vol().failed_mask(), 0u);
    EXPECT_EQ(a->vol().corrected_reads(m), 1u);
    EXPECT_FALSE(a->drive(m).faults().unreadable()) << "the block was not written back";
    const std::vector<uint8_t> on_member = a->member_bytes(m, moff, 4096);
    EXPECT_EQ(0, memcmp(on_member.data(), image->data() + off, 4096));
  }
  expect_image();
}

// A drive that keeps losing blocks is failed at the kMaxCorrectedReads-th.
TEST_P(Faults, ADriveThatKeepsLosingBlocksIsFailed) {
  if (a->vol().geometry().is_mirror()) GTEST_SKIP() << "mirrors fail the member at the first";
  const Geometry& g = a->vol().geometry();
  const uint32_t m = g.data_member(0, 0);
  uint32_t corrected = 0;
  for (uint64_t off = 0; corrected < Volume::kMaxCorrectedReads; off += g.strip_bytes) {
    ASSERT_LT(off, size);
    const auto [dm, moff] = place_of(a->vol(), off);
    if (dm != m) continue;
    a->drive(m).faults().set_unreadable(moff, 4096);
    AlignedBuf got(4096);
    ASSERT_EQ(0, a->read(off, 4096, got.data()));
    ASSERT_EQ(0, memcmp(got.data(), image->data() + off, 4096));
    corrected++;
    EXPECT_EQ(a->vol().failed_mask() != 0, corrected == Volume::kMaxCorrectedReads) << corrected;
  }
  EXPECT_EQ(a->failed_events, std::vector<uint32_t>{m});
  expect_image();
}

// With a member failed, a block another cannot read is read around where
// the level still survives both (RAID 6, ec); RAID 5 cannot and fails.
TEST_P(Faults, AnUnreadableBlockBesideAFailedMember) {
  if (a->vol().geometry().is_mirror()) GTEST_SKIP() << "mirrors fail the member at the first";
  const Geometry& g = a->vol().geometry();
  const uint64_t off = 5 * g.stripe_data_bytes();
  const auto [m, moff] = place_of(a->vol(), off);
  const uint32_t gone = (m + 1) % g.members;
  ASSERT_TRUE(a->vol().fail_member(gone, -EIO));
  a->drive(m).faults().set_unreadable(moff, 4096);
  AlignedBuf got(4096);
  const int rc = a->read(off, 4096, got.data());
  if (tolerated() >= 2) {
    ASSERT_EQ(0, rc);
    EXPECT_EQ(0, memcmp(got.data(), image->data() + off, 4096));
    EXPECT_EQ(a->vol().corrected_reads(m), 1u);
    EXPECT_EQ(a->vol().failed_mask(), 1ull << gone);
    expect_image();
  } else {
    EXPECT_EQ(-EIO, rc);
    EXPECT_TRUE(a->vol().failed());
  }
}

TEST_P(Faults, PastRedundancyTheGroupFails) {
  const uint32_t n = a->vol().geometry().members;
  // Fail members in order until the group cannot serve: for RAID 10 the
  // second copy of pair 0 is member 1.
  uint32_t failed = 0;
  for (uint32_t m = 0; m < n && !a->vol().failed(); m++) {
    a->drive(m).faults().arm(FaultInjector::kVanished);
    AlignedBuf got(size);
    int rc = a->read(0, size, got.data());
    failed++;
    if (!a->vol().failed()) {
      ASSERT_EQ(rc, 0);
      ASSERT_EQ(0, memcmp(got.data(), image->data(), size));
    } else {
      EXPECT_EQ(rc, -EIO);
    }
  }
  EXPECT_TRUE(a->vol().failed());
  EXPECT_TRUE(a->group_failed_event);
  EXPECT_GT(failed, tolerated());
  AlignedBuf b(4096);
  EXPECT_EQ(-EIO, a->write(0, 4096, b.data()));
  EXPECT_EQ(-EIO, a->read(0, 4096, b.data()));
}

INSTANTIATE_TEST_SUITE_P(Levels, Faults,
                         ::testing::Values(LevelCase{Level::R5, 4, 0}, LevelCase{Level::R6, 6, 0},
                                           LevelCase{Level::EC, 7, 3}, LevelCase{Level::EC, 9, 4},
                                           LevelCase{Level::R1, 3, 0}, LevelCase{Level::R10, 4, 0}),
                         [](const auto& info) {
                           return std::string(level_name(info.param.level)) + "_" +
                                  std::to_string(info.param.members);
                         });

TEST(FaultsRaid0, AnyFailureFailsTheGroup) {
  ArrayOptions o;
  o.level = Level::R0;
  o.members = 3;
  TestArray a(o);
  AlignedBuf b(3 * 65536);
  a.drive(1).faults().arm(FaultInjector::kFailReads);
  EXPECT_EQ(-EIO, a.read(0, 3 * 65536, b.data()));
  EXPECT_TRUE(a.vol().failed());
  EXPECT_TRUE(a.group_failed_event);
}

}  // namespace
