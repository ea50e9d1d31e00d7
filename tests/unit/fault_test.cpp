// Member faults through the fault injector: EIO on read or write, short
// transfers, vanishing drives, faults that strike in the middle of a
// request, and failures past what the level survives.
#include <gtest/gtest.h>

#include "engine/ops/op.h"
#include "engine/planner.h"
#include "tests/support/test_array.h"

using namespace gpuraid;
using namespace gpuraid::test;

namespace {

struct LevelCase {
  Level level;
  uint32_t members, parity;
  uint32_t subgroups = 0;        // raid50/60
  DeclusteredShape declustered;  // draid5/6
};

std::string level_case_name(const ::testing::TestParamInfo<LevelCase>& info) {
  return std::string(level_name(info.param.level)) + "_" + std::to_string(info.param.members);
}

class Faults : public ::testing::TestWithParam<LevelCase> {
 protected:
  void SetUp() override {
    ArrayOptions o;
    o.level = GetParam().level;
    o.members = GetParam().members;
    o.parity = GetParam().parity;
    o.subgroups = GetParam().subgroups;
    o.declustered = GetParam().declustered;
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
  void expect_range(uint64_t off, uint64_t len) {
    AlignedBuf got(len);
    ASSERT_EQ(0, a->read(off, len, got.data())) << "offset " << off;
    ASSERT_EQ(0, memcmp(got.data(), image->data() + off, len)) << "offset " << off;
  }
  void rewrite(uint64_t off, uint64_t len, uint64_t seed) {
    fill_random(image->data() + off, len, seed);
    ASSERT_EQ(0, a->write(off, len, image->data() + off));
  }
  uint32_t tolerated() const { return a->vol().geometry().guaranteed_redundancy(); }
  // A scrub (check only) of every stripe: the parity rows that differ.
  uint32_t mismatched_rows() {
    uint32_t n = 0;
    for (uint64_t s = 0; s < a->vol().geometry().stripes(); s++) {
      IoRequest q;
      bool done = false;
      q.ctx = &done;
      q.done = [](IoRequest* x) { *static_cast<bool*>(x->ctx) = true; };
      Volume::MaintenanceResult r;
      EXPECT_EQ(0, a->vol().submit_maintenance(a->reactor(0), &q, Volume::Maintenance::Scrub, s, &r));
      while (!done) a->reactor(0).poll(true, 5);
      EXPECT_EQ(0, q.result) << "stripe " << s;
      n += r.mismatch_rows;
    }
    return n;
  }
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

// Where logical byte `off` lies: the member a read of it goes to (mirrors:
// the copy the test array's one reactor picks, with no member failed) and
// that member's byte.
static std::pair<uint32_t, uint64_t> place_of(Volume& v, uint64_t off) {
  const Geometry& g = v.geometry();
  const uint64_t s = off / g.stripe_data_bytes(), in = off % g.stripe_data_bytes();
  const uint32_t i = uint32_t(in / g.strip_bytes);
  const uint32_t m = g.is_mirror() ? uint32_t(pick_copy(g, s, i, 0, 0)) : g.data_member(s, i);
  return {m, v.data_offset() + g.member_offset(s) + in % g.strip_bytes};
}

// A block a member cannot read (a medium error, -ENODATA) is read around
// from the redundancy (mirrors: another copy) and written back: the read is
// served, the member stays, the block reads again from it (as md corrects
// read errors).
TEST_P(Faults, AnUnreadableBlockIsReadAroundAndRewritten) {
  const uint64_t off = 3 * a->vol().geometry().stripe_data_bytes() + a->vol().geometry().strip_bytes + 8192;
  const auto [m, moff] = place_of(a->vol(), off);
  a->drive(m).faults().set_unreadable(moff, 4096);
  AlignedBuf got(16384);
  ASSERT_EQ(0, a->read(off - 4096, 16384, got.data()));
  EXPECT_EQ(0, memcmp(got.data(), image->data() + off - 4096, 16384));
  EXPECT_TRUE(a->failed_events.empty());
  EXPECT_EQ(a->vol().failed_mask(), 0u);
  EXPECT_EQ(a->vol().corrected_reads(m), 1u);
  EXPECT_FALSE(a->drive(m).faults().unreadable()) << "the block was not written back";
  const std::vector<uint8_t> on_member = a->member_bytes(m, moff, 4096);
  EXPECT_EQ(0, memcmp(on_member.data(), image->data() + off, 4096));
  expect_image();
}

// A drive that keeps losing blocks is failed at the kMaxCorrectedReads-th.
TEST_P(Faults, ADriveThatKeepsLosingBlocksIsFailed) {
  const Geometry& g = a->vol().geometry();
  const uint32_t m = place_of(a->vol(), 0).first;
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
// the level still survives both (RAID 6, ec, RAID 1 x3). RAID 5 and a
// mirror's last copy cannot: the read fails
// and the member stays (failing it would fail the group over one block);
// the rest reads, and a write over the block makes it readable.
TEST_P(Faults, AnUnreadableBlockBesideAFailedMember) {
  const Geometry& g = a->vol().geometry();
  const uint64_t off = 5 * g.stripe_data_bytes();
  const auto [m, moff] = place_of(a->vol(), off);
  // The stripe's (first) parity; mirrors: another copy of the strip (RAID 10's last one).
  uint32_t gone = g.is_mirror() ? g.data_member(5, 0, 0) : role_member(g, 5, g.data_strips());
  if (gone == m) gone = g.data_member(5, 0, 1);
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
    EXPECT_FALSE(a->vol().failed());
    EXPECT_EQ(a->vol().failed_mask(), 1ull << gone);
    EXPECT_EQ(a->failed_events, std::vector<uint32_t>{gone});
    EXPECT_TRUE(a->drive(m).faults().unreadable());
    expect_range(0, off);
    expect_range(off + 4096, size - off - 4096);
    rewrite(off, 4096, 9);
    EXPECT_FALSE(a->drive(m).faults().unreadable());
    expect_image();
    EXPECT_EQ(a->vol().failed_mask(), 1ull << gone);
  }
}

// A write whose read of old data meets a block that cannot be read, with
// another member failed: where the group survives without both (RAID 6, ec)
// the write is planned again around it and writes it, the member kept;
// where the group needs it (RAID 5: the old data is nowhere else) the
// write fails before it wrote anything, and the member and group stay.
TEST_P(Faults, AWriteThatReadsAnUnreadableBlockBesideAFailedMember) {
  if (a->vol().geometry().is_mirror()) GTEST_SKIP() << "mirror writes read nothing";
  const Geometry& g = a->vol().geometry();
  const uint64_t s = 7, off = s * g.stripe_data_bytes();
  const auto [m, moff] = place_of(a->vol(), off);
  const uint32_t gone = g.data_member(s, 1);  // a strip the write leaves alone: read-modify-write reads m's
  ASSERT_TRUE(a->vol().fail_member(gone, -EIO));
  a->drive(m).faults().set_unreadable(moff, 4096);
  std::vector<uint8_t> before(image->data() + off, image->data() + off + 4096);
  fill_random(image->data() + off, 4096, 77);
  const int rc = a->write(off, 4096, image->data() + off);
  if (tolerated() >= 2) {
    ASSERT_EQ(0, rc);
    EXPECT_EQ(a->vol().failed_mask(), 1ull << gone);
    EXPECT_FALSE(a->drive(m).faults().unreadable()) << "the write covers the block";
    EXPECT_LE(a->vol().corrected_reads(m), 1u);  // 1 where the plan read its old data
    expect_image();
  } else {
    EXPECT_EQ(-EIO, rc);
    std::copy(before.begin(), before.end(), image->data() + off);  // not written
    EXPECT_FALSE(a->vol().failed());
    EXPECT_EQ(a->vol().failed_mask(), 1ull << gone);
    // The failed member's strip there is lost with it: rebuilt from the unreadable block.
    const uint64_t lost = off + g.strip_bytes;
    expect_range(0, off);
    expect_range(off + 4096, lost - off - 4096);
    expect_range(lost + 4096, size - lost - 4096);
    AlignedBuf got(4096);
    EXPECT_EQ(-EIO, a->read(off, 4096, got.data()));
    EXPECT_EQ(-EIO, a->read(lost, 4096, got.data()));
  }
}

// A write whose plan reads a block that cannot be read (a medium error),
// every member present: the write is planned again around it and writes
// the block back (rebuilt from the others where the write needs its old
// content), as md corrects a read error met by a write; the member stays
// and the correction is counted (before, the member failed). Each block
// the plan reads, in turn, for a write within one strip and one across two
// (whose first strip's old bytes outside the write are rebuilt).
// The parity levels, also those whose stripes map members another way
// (RAID 60's sub-groups, draid5's declustered rows).
class ParityFaults : public Faults {};

TEST_P(ParityFaults, AWriteThatReadsAnUnreadableBlockWritesItBack) {
  const Geometry& g = a->vol().geometry();
  const uint32_t k = g.data_strips();
  struct Shape {
    uint64_t in_stripe, len;
  };
  uint64_t s = 4;
  for (const Shape w : {Shape{4096, 4096}, Shape{g.strip_bytes - 4096, 8192}}) {
    std::vector<StripRange> ranges(k);
    strip_ranges(g, 0, w.in_stripe, w.len, ranges.data());
    const WritePlan p = plan_stripe_write(g, 0, ranges.data(), 0, false);
    ASSERT_TRUE(p.read_roles) << write_mode_name(p.mode);
    for (uint64_t rs = p.read_roles; rs; rs &= rs - 1, s++) {
      const uint32_t role = uint32_t(__builtin_ctzll(rs));
      SCOPED_TRACE("role " + std::to_string(role) + " of a " + write_mode_name(p.mode) + " at " +
                   std::to_string(w.in_stripe));
      ASSERT_LT(s, g.stripes());
      const uint32_t m = role_member(g, s, role);
      // A column the read covers and, on a data strip, the write does not where it can.
      uint32_t col = p.c0;
      if (role < k && ranges[role].covers(col, col + 4096)) col = ranges[role].b < p.c1 ? ranges[role].b : p.c0;
      const uint64_t moff = a->vol().data_offset() + g.member_offset(s) + col;
      a->drive(m).faults().set_unreadable(moff, 4096);
      const uint32_t corrected = a->vol().corrected_reads(m);
      const uint64_t off = s * g.stripe_data_bytes() + w.in_stripe;
      rewrite(off, w.len, 100 + s);
      EXPECT_EQ(a->vol().failed_mask(), 0u);
      EXPECT_TRUE(a->failed_events.empty());
      EXPECT_FALSE(a->drive(m).faults().unreadable()) << "the block was not written back";
      EXPECT_EQ(a->vol().corrected_reads(m), corrected + 1);
      if (role < k) {
        const uint64_t at = s * g.stripe_data_bytes() + uint64_t(role) * g.strip_bytes + col;
        EXPECT_EQ(0, memcmp(a->member_bytes(m, moff, 4096).data(), image->data() + at, 4096));
      }
    }
  }
  expect_image();
  EXPECT_EQ(mismatched_rows(), 0u);
}

// A degraded read whose survivor read meets an unreadable parity block
// (the first parity row, which the plan reads): where the group survives
// without both (RAID 6, ec, RAID 60) the read takes another parity row, and
// the parity block is rebuilt and written back, the member kept (before,
// it failed: a singly degraded RAID 6 became doubly degraded over one
// sector); where the group needs it (RAID 5, draid5) the read fails and
// the member stays, as for a data block.
TEST_P(ParityFaults, ADegradedReadThatMeetsAnUnreadableParityBlockWritesItBack) {
  const Geometry& g = a->vol().geometry();
  const uint64_t s = 6, col = 4096, off = s * g.stripe_data_bytes() + col;  // data strip 0
  const uint32_t gone = g.data_member(s, 0), pm = role_member(g, s, g.data_strips());
  ASSERT_TRUE(a->vol().fail_member(gone, -EIO));
  const uint64_t pmoff = a->vol().data_offset() + g.member_offset(s) + col;
  const std::vector<uint8_t> parity = a->member_bytes(pm, pmoff, 4096);
  a->drive(pm).faults().set_unreadable(pmoff, 4096);
  AlignedBuf got(4096);
  const int rc = a->read(off, 4096, got.data());
  EXPECT_EQ(a->vol().failed_mask(), 1ull << gone);
  EXPECT_EQ(a->failed_events, std::vector<uint32_t>{gone});
  if (tolerated() >= 2) {
    ASSERT_EQ(0, rc);
    EXPECT_EQ(0, memcmp(got.data(), image->data() + off, 4096));
    EXPECT_EQ(a->vol().corrected_reads(pm), 1u);
    EXPECT_FALSE(a->drive(pm).faults().unreadable()) << "the parity block was not written back";
    EXPECT_EQ(a->member_bytes(pm, pmoff, 4096), parity);
    expect_image();
  } else {
    EXPECT_EQ(-EIO, rc);
    EXPECT_FALSE(a->vol().failed());
    EXPECT_TRUE(a->drive(pm).faults().unreadable());
    expect_range(0, off);
    expect_range(off + 4096, size - off - 4096);
  }
}

// Every member present, a data block and the parity block that its read
// around would use both unreadable: where the group survives two (RAID 6,
// ec, RAID 60) both are rebuilt and written back; on RAID 5 the block is
// lost: its read fails and both members stay (failing the parity's, which
// the group would survive alone, would serve nothing).
TEST_P(ParityFaults, ADataBlockAndItsParityBothUnreadable) {
  const Geometry& g = a->vol().geometry();
  const uint64_t s = 6, col = 8192, off = s * g.stripe_data_bytes() + col;  // data strip 0
  const uint32_t dm = g.data_member(s, 0), pm = role_member(g, s, g.data_strips());
  const uint64_t moff = a->vol().data_offset() + g.member_offset(s) + col;
  a->drive(dm).faults().set_unreadable(moff, 4096);
  a->drive(pm).faults().set_unreadable(moff, 4096);
  AlignedBuf got(4096);
  const int rc = a->read(off, 4096, got.data());
  if (tolerated() >= 2) {
    ASSERT_EQ(0, rc);
    EXPECT_EQ(0, memcmp(got.data(), image->data() + off, 4096));
    EXPECT_EQ(a->vol().failed_mask(), 0u);
    EXPECT_EQ(a->vol().corrected_reads(dm), 1u);
    EXPECT_EQ(a->vol().corrected_reads(pm), 1u);
    EXPECT_FALSE(a->drive(dm).faults().unreadable());
    EXPECT_FALSE(a->drive(pm).faults().unreadable());
    expect_image();
    EXPECT_EQ(mismatched_rows(), 0u);
  } else {
    EXPECT_EQ(-EIO, rc);
    EXPECT_EQ(a->vol().failed_mask(), 0u);
    EXPECT_TRUE(a->failed_events.empty());
    EXPECT_TRUE(a->drive(dm).faults().unreadable());
    EXPECT_TRUE(a->drive(pm).faults().unreadable());
    expect_range(0, off);
    expect_range(off + 4096, size - off - 4096);
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
                         level_case_name);

INSTANTIATE_TEST_SUITE_P(Levels, ParityFaults,
                         ::testing::Values(LevelCase{Level::R5, 4, 0}, LevelCase{Level::R6, 6, 0},
                                           LevelCase{Level::EC, 7, 3}, LevelCase{Level::EC, 9, 4},
                                           LevelCase{Level::R60, 8, 0, 2}, LevelCase{Level::DR5, 7, 0, 0, {4, 1}}),
                         level_case_name);

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

// One unreadable block on RAID 0: the read fails, the group does not.
TEST(FaultsRaid0, AnUnreadableBlockFailsTheReadNotTheGroup) {
  ArrayOptions o;
  o.level = Level::R0;
  o.members = 3;
  TestArray a(o);
  AlignedBuf b(3 * 65536);
  fill_random(b.data(), b.size(), 3);
  ASSERT_EQ(0, a.write(0, b.size(), b.data()));
  const auto [m, moff] = place_of(a.vol(), 65536 + 8192);
  a.drive(m).faults().set_unreadable(moff, 4096);
  AlignedBuf got(3 * 65536);
  EXPECT_EQ(-EIO, a.read(0, got.size(), got.data()));
  EXPECT_FALSE(a.vol().failed());
  EXPECT_FALSE(a.group_failed_event);
  ASSERT_EQ(0, a.read(0, 65536, got.data()));
  EXPECT_EQ(0, memcmp(got.data(), b.data(), 65536));
  ASSERT_EQ(0, a.write(65536 + 8192, 4096, b.data() + 65536 + 8192));
  ASSERT_EQ(0, a.read(0, got.size(), got.data()));
  EXPECT_EQ(0, memcmp(got.data(), b.data(), b.size()));
}

}  // namespace
