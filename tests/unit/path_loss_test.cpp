// Path loss: a member whose path is lost goes missing (not failed); writes
// meanwhile are tracked by the write-intent bitmap; when it returns only
// the regions it missed are rebuilt onto it; past the timeout it fails and
// a spare takes over. Faults come from the drives' injector (vanish).
#include <gtest/gtest.h>

#include <random>

#include "engine/group/superblock.h"
#include "tests/support/group_rig.h"
#include "tests/support/volume_image.h"

using namespace gpuraid;
using namespace gpuraid::test;

namespace {

constexpr uint64_t kRegion = 1u << 20;

GroupConfig raid6() {
  GroupConfig c;
  c.level = Level::R6;
  c.strip_bytes = 65536;
  c.name = "dg-path";
  c.assume_zeroed = true;
  c.bitmap_region_bytes = kRegion;
  c.bitmap_idle_ms = 100;
  return c;
}

bool bit_set(const std::vector<uint8_t>& bm, uint64_t r) { return bm[r / 8] >> (r % 8) & 1; }

void expect_scrub_clean(GroupRig& rig, Group& g) {
  std::string err;
  rig.clear_events();
  ASSERT_TRUE(g.start_scrub(false, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::ScrubFinished); }));
  EXPECT_EQ(g.last_scrub().mismatched_stripes, 0u);
  EXPECT_EQ(g.last_scrub().stripes_checked, g.geometry().stripes());
}

}  // namespace

TEST(PathLoss, ReturnRebuildsOnlyTheMissedRegions) {
  GroupRig rig(6);
  std::string err;
  auto g = rig.create(raid6(), 0, 6, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  const Geometry& geo = v.geometry();
  const uint64_t region_stripes = kRegion / geo.strip_bytes;
  Image img(v.size_bytes());
  img.write_all(rig, v);
  // Only member 2's errors are a lost path.
  g->set_path_policy([](uint32_t m, int) { return m == 2; });
  v.member(2)->faults().arm(FaultInjector::kVanished);
  img.check(rig, v);  // the reads that hit member 2 make it missing; reads are reconstructed
  ASSERT_TRUE(rig.find_event(GroupEvent::MemberMissing));
  EXPECT_EQ(g->missing_mask(), 1ull << 2);
  EXPECT_EQ(g->state(), GroupState::Degraded);
  EXPECT_EQ(g->members()[2].state, MemberState::Missing);
  EXPECT_FALSE(rig.find_event(GroupEvent::MemberFailed));
  // Writes into regions 3 and 7 only, while it is missing.
  std::mt19937_64 rng(5);
  for (uint64_t region : {3, 7})
    for (int i = 0; i < 20; i++) {
      const uint64_t base = region * region_stripes * geo.stripe_data_bytes();
      const uint64_t off = base + rng() % (region_stripes * geo.stripe_data_bytes() / 4096 - 4) * 4096;
      fill_random(img.buf.data() + off, 16384, rng());
      ASSERT_EQ(0, rig.io(v, IoRequest::Write, off, 16384, img.buf.data() + off));
    }
  img.check(rig, v);
  // Idle far past bitmap_idle_ms: the missed regions stay dirty on disk.
  rig.wait([] { return false; }, 1.5);
  auto bm = rig.raw_read(0, kBitmapOffset, 4096);
  EXPECT_TRUE(bit_set(bm, 3) && bit_set(bm, 7)) << "missed regions cleared by the idle flush";
  // Reinstating refuses what is not missing.
  EXPECT_FALSE(g->reinstate_member(1, &err));
  EXPECT_NE(err.find("not missing"), std::string::npos) << err;
  // The path returns.
  v.member(2)->faults().clear();
  const uint64_t written0 = v.stats().rebuild_stripes_written;
  ASSERT_TRUE(g->reinstate_member(2, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::MemberResynced); }));
  ASSERT_TRUE(rig.wait([&] { return g->state() == GroupState::Optimal; }));
  const uint64_t rebuilt = v.stats().rebuild_stripes_written - written0;
  EXPECT_EQ(rebuilt, 2 * region_stripes) << "only the two missed regions are rebuilt, of " << geo.stripes();
  GroupEvent ev;
  ASSERT_TRUE(rig.find_event(GroupEvent::MemberResynced, &ev));
  EXPECT_NE(ev.message.find(std::to_string(2 * region_stripes * geo.strip_bytes) + " of " +
                            std::to_string(geo.member_data_bytes) + " bytes"), std::string::npos) << ev.message;
  EXPECT_EQ(g->members()[2].state, MemberState::Active);
  img.check(rig, v);
  expect_scrub_clean(rig, *g);
  // Back to normal: regions are cleared once idle again.
  ASSERT_TRUE(rig.wait([&] { return !bit_set(rig.raw_read(0, kBitmapOffset, 4096), 3); }, 10));
  // Member 2's own strips are right: with two other members failed, every read needs them.
  ASSERT_TRUE(g->fail_member(0, &err)) << err;
  ASSERT_TRUE(g->fail_member(4, &err)) << err;
  img.check(rig, v);
  ASSERT_TRUE(g->stop(&err)) << err;
}

TEST(PathLoss, MissingPastTheTimeoutFailsAndASpareRebuilds) {
  GroupRig rig(7);
  std::string err;
  auto g = rig.create(raid6(), 0, 6, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  Image img(v.size_bytes());
  img.write_all(rig, v);
  ASSERT_TRUE(g->add_spare(rig.open(6), false, &err)) << err;
  g->set_missing_timeout_ms(1500);
  ASSERT_TRUE(g->mark_member_missing(1, &err)) << err;
  EXPECT_FALSE(g->mark_member_missing(1, &err));
  std::mt19937_64 rng(9);
  img.write_random(rig, v, rng, 50);
  img.check(rig, v);
  // Missing is not failed: the spare waits.
  EXPECT_EQ(g->spare_count(), 1u);
  EXPECT_FALSE(rig.find_event(GroupEvent::MemberFailed));
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::MemberFailed); }, 20));
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::RebuildFinished); }));
  EXPECT_TRUE(rig.find_event(GroupEvent::SpareTaken));
  EXPECT_FALSE(rig.find_event(GroupEvent::MemberResynced));
  EXPECT_EQ(g->spare_count(), 0u);
  EXPECT_EQ(g->missing_mask(), 0u);
  EXPECT_EQ(g->state(), GroupState::Optimal);
  EXPECT_FALSE(g->reinstate_member(1, &err));
  img.check(rig, v);
  expect_scrub_clean(rig, *g);
  ASSERT_TRUE(g->stop(&err)) << err;
}

TEST(PathLoss, AMemberMissingAtStopIsRebuiltInFullAfterARestart) {
  GroupRig rig(6);
  std::string err;
  auto g = rig.create(raid6(), 0, 6, &err);
  ASSERT_TRUE(g) << err;
  Image img(g->volume().size_bytes());
  img.write_all(rig, g->volume());
  ASSERT_TRUE(g->mark_member_missing(3, &err)) << err;
  std::mt19937_64 rng(2);
  img.write_random(rig, g->volume(), rng, 30);
  ASSERT_TRUE(g->stop(&err)) << err;
  g.reset();
  std::string note;
  g = rig.assemble(rig.open_range(0, 6), &note, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_NE(note.find("member 3 was missing"), std::string::npos) << note;
  // Its stale strips are never served: it is rebuilt from the others.
  g->replace_member(3, rig.open(3), true, &err);
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::RebuildFinished); })) << err;
  img.check(rig, g->volume());
  expect_scrub_clean(rig, *g);
  ASSERT_TRUE(g->stop(&err)) << err;
}
