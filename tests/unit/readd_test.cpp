// Ways back in the engine: a failed member's own drive put back
// (readd_member: only the regions written while it was out are rebuilt,
// else in full and saying why), a dedicated spare taken back
// (remove_spare), spares refused for raid0.
#include <gtest/gtest.h>

#include <random>

#include "engine/group/metadata_io.h"
#include "engine/group/superblock.h"
#include "tests/support/group_rig.h"
#include "tests/support/volume_image.h"

using namespace gpuraid;
using namespace gpuraid::test;

namespace {

constexpr uint64_t kRegion = 1u << 20;

GroupConfig config(Level level) {
  GroupConfig c = test_group_config(level, 0, 65536, "dg-readd");
  c.bitmap_idle_ms = 100;
  return c;
}

// 20 random 16 KiB writes into each of the given bitmap regions.
void write_regions(GroupRig& rig, Volume& v, Image& img, std::initializer_list<uint64_t> regions, uint64_t seed) {
  const Geometry& geo = v.geometry();
  const uint64_t region_stripes = kRegion / geo.strip_bytes;
  std::mt19937_64 rng(seed);
  for (uint64_t region : regions)
    for (int i = 0; i < 20; i++) {
      const uint64_t base = region * region_stripes * geo.stripe_data_bytes();
      const uint64_t off = base + rng() % (region_stripes * geo.stripe_data_bytes() / 4096 - 4) * 4096;
      fill_random(img.buf.data() + off, 16384, rng());
      ASSERT_EQ(0, rig.io(v, IoRequest::Write, off, 16384, img.buf.data() + off));
    }
}

}  // namespace

TEST(Readd, AFailedMembersDriveBackRebuildsOnlyTheRegionsWrittenMeanwhile) {
  GroupRig rig(6);
  std::string err;
  auto g = rig.create(config(Level::R6), 0, 6, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  const Geometry& geo = v.geometry();
  const uint64_t region_stripes = kRegion / geo.strip_bytes;
  Image img(v.size_bytes());
  img.write_all(rig, v);
  ASSERT_TRUE(g->fail_member(2, &err)) << err;
  write_regions(rig, v, img, {3, 7}, 5);
  // What a failed member missed is known in memory: the bits on disk clear
  // once idle (a crash then is no unclean degraded stop).
  EXPECT_TRUE(rig.wait([&] { return rig.raw_read(0, kBitmapOffset, 4096)[0] == 0; }, 10))
      << "regions missed by a failed member are kept dirty on disk";
  ReaddResult rr;
  EXPECT_FALSE(g->readd_member(1, nullptr, false, &rr, &err));
  EXPECT_NE(err.find("not failed"), std::string::npos) << err;
  const uint64_t written0 = v.stats().rebuild_stripes_written;
  ASSERT_TRUE(g->readd_member(2, nullptr, false, &rr, &err)) << err;
  EXPECT_TRUE(rr.partial) << rr.how;
  EXPECT_EQ(rr.regions, 2u);
  EXPECT_EQ(rr.bytes, 2 * region_stripes * geo.strip_bytes);
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::MemberResynced); }));
  ASSERT_TRUE(rig.wait([&] { return g->state() == GroupState::Optimal; }));
  EXPECT_EQ(v.stats().rebuild_stripes_written - written0, 2 * region_stripes)
      << "only the two regions written while it was failed, of " << geo.stripes();
  img.check(rig, v);
  // Member 2's own strips are right: with two other members failed, every read needs them.
  ASSERT_TRUE(g->fail_member(0, &err)) << err;
  ASSERT_TRUE(g->fail_member(4, &err)) << err;
  img.check(rig, v);
  ASSERT_TRUE(g->stop(&err)) << err;
}

// Two re-adds in a row (issue 33, item 7): the second came while the
// first's rebuild had finished in the volume but its member was not yet
// active on disk, and started a rebuild of its own; the first member then
// stayed "rebuilding" for good in a group that said optimal. Now the second
// waits for the first to be made active; both end active, on disk too.
TEST(Readd, TwoReaddsInARowBothEndActive) {
  for (int round = 0; round < 5; round++) {
    GroupRig rig(6);
    std::string err;
    auto g = rig.create(config(Level::R6), 0, 6, &err);
    ASSERT_TRUE(g) << err;
    Volume& v = g->volume();
    Image img(v.size_bytes());
    img.write_all(rig, v);
    ASSERT_TRUE(g->fail_member(4, &err)) << err;
    ASSERT_TRUE(g->fail_member(5, &err)) << err;
    write_regions(rig, v, img, {1}, 7 + round);
    ReaddResult rr;
    ASSERT_TRUE(g->readd_member(4, nullptr, false, &rr, &err)) << err;
    // Until the volume's rebuild of member 4 is done (one region: quick),
    // then at once, well inside the housekeeper's tick.
    ASSERT_TRUE(rig.wait([&] { return v.rebuilding_member() < 0; }));
    ASSERT_TRUE(g->readd_member(5, nullptr, false, &rr, &err)) << err;
    auto all_active = [&] {
      for (const MemberInfo& m : g->members())
        if (m.state != MemberState::Active) return false;
      return true;
    };
    ASSERT_TRUE(rig.wait([&] { return g->state() == GroupState::Optimal && all_active(); })) << "round " << round;
    img.check(rig, v);
    uint32_t tolerated = 0;
    EXPECT_EQ(g->redundancy(&tolerated), Redundancy::Full);
    EXPECT_EQ(tolerated, 2u);
    ASSERT_TRUE(g->stop(&err)) << err;
    g.reset();
    for (uint32_t m = 0; m < 6; m++) {
      Superblock sb;
      ASSERT_EQ(decode_superblock(rig.raw_read(m, 0, 4096).data(), &sb), DecodeResult::Ok);
      for (uint32_t s = 0; s < 6; s++)
        EXPECT_EQ(sb.slots[s].state, SlotState::Active) << "round " << round << ": member " << m << " says slot " << s;
    }
  }
}

TEST(Readd, AWipedMemberIsRebuiltInFullAndSaysWhy) {
  GroupRig rig(4);
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  Image img(v.size_bytes());
  img.write_all(rig, v);
  ASSERT_TRUE(g->fail_member(1, &err)) << err;
  write_regions(rig, v, img, {2}, 7);
  ASSERT_TRUE(g->wipe_failed_member(1, &err)) << err;
  ReaddResult rr;
  const uint64_t written0 = v.stats().rebuild_stripes_written;
  ASSERT_TRUE(g->readd_member(1, nullptr, false, &rr, &err)) << err;
  EXPECT_FALSE(rr.partial);
  EXPECT_EQ(rr.bytes, v.geometry().member_data_bytes);
  EXPECT_NE(rr.how.find("no valid superblock"), std::string::npos) << rr.how;
  ASSERT_TRUE(rig.wait([&] { return g->state() == GroupState::Optimal; }));
  EXPECT_EQ(v.stats().rebuild_stripes_written - written0, v.geometry().stripes());
  img.check(rig, v);
  ASSERT_TRUE(g->fail_member(0, &err)) << err;  // member 1's strips now serve every read
  img.check(rig, v);
  ASSERT_TRUE(g->stop(&err)) << err;
}

TEST(Readd, ASpareTakenBackNoLongerTakesOver) {
  GroupRig rig(5);
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  auto spare = rig.open(4);
  const std::string path = spare->path();
  ASSERT_TRUE(g->add_spare(std::move(spare), false, &err)) << err;
  EXPECT_FALSE(g->remove_spare("/nonexistent", &err));
  EXPECT_NE(err.find("not a spare"), std::string::npos) << err;
  err.clear();
  auto back = g->remove_spare(path, &err);
  ASSERT_TRUE(back) << err;
  EXPECT_TRUE(err.empty()) << err;
  EXPECT_EQ(g->spare_count(), 0u);
  EXPECT_FALSE(read_superblock(*back).any_magic) << "the spare's superblock was not wiped";
  ASSERT_TRUE(g->fail_member(2, &err)) << err;
  rig.wait([] { return false; }, 0.5);
  EXPECT_FALSE(rig.find_event(GroupEvent::SpareTaken));
  EXPECT_EQ(g->state(), GroupState::Degraded);
  ASSERT_TRUE(g->stop(&err)) << err;
}

TEST(Readd, Raid0RefusesSpares) {
  GroupRig rig(3);
  std::string err;
  auto g = rig.create(config(Level::R0), 0, 2, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_FALSE(g->add_spare(rig.open(2), false, &err));
  EXPECT_NE(err.find("no redundancy"), std::string::npos) << err;
  ASSERT_TRUE(g->stop(&err)) << err;
}
