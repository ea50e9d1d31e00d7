// Hot replace (Group::hot_replace, issue 33 item 15: mdadm --replace): a
// working member is copied onto a new drive while it serves, the group
// keeping its redundancy all along, then moves there; only the regions
// written during the copy are rebuilt. A member that fails during the copy
// is rebuilt onto the new drive in full; a stop drops the copy.
#include <gtest/gtest.h>

#include <random>

#include "engine/group/metadata_io.h"
#include "engine/group/superblock.h"
#include "tests/support/group_rig.h"
#include "tests/support/volume_image.h"

using namespace gpuraid;
using namespace gpuraid::test;

namespace {

GroupConfig config(Level level) {
  GroupConfig c = test_group_config(level, 0, 65536, "dg-replace");
  c.bitmap_idle_ms = 100;
  return c;
}

bool all_active(const Group& g) {
  for (const MemberInfo& m : g.members())
    if (m.state != MemberState::Active) return false;
  return true;
}

// A group of `n` members written in full whose member `m` is being copied
// onto drive n at `rate` bytes/s: the copy is under way on return.
struct Copying {
  std::unique_ptr<Group> g;
  std::unique_ptr<Image> img;
};
void start_copy(GroupRig& rig, Level level, uint32_t n, uint32_t m, uint64_t rate, Copying* c) {
  std::string err;
  c->g = rig.create(config(level), 0, n, &err);
  ASSERT_TRUE(c->g) << err;
  c->img = std::make_unique<Image>(c->g->volume().size_bytes());
  c->img->write_all(rig, c->g->volume());
  c->g->set_rebuild_rate(rate);
  ASSERT_TRUE(c->g->hot_replace(m, rig.open(n), false, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return c->g->replace_progress().done_bytes > 0; }));
}

}  // namespace

TEST(HotReplace, AWorkingMemberMovesWhileItServesKeepingRedundancy) {
  GroupRig rig(7);
  Copying c;
  ASSERT_NO_FATAL_FAILURE(start_copy(rig, Level::R6, 6, 3, 4u << 20, &c));  // a copy of a few seconds, written to meanwhile
  auto& g = c.g;
  Image& img = *c.img;
  Volume& v = g->volume();
  const Geometry& geo = v.geometry();
  std::string err;
  EXPECT_EQ(g->replacing_member(), 3);
  ASSERT_TRUE(rig.find_event(GroupEvent::ReplaceStarted));
  std::string e2;
  EXPECT_FALSE(g->hot_replace(2, rig.open(6), false, &e2)) << "a second replace at once";
  std::mt19937_64 rng(11);
  img.write_random(rig, v, rng, 40);
  // Throughout the copy: every member in sync, two failures survived.
  uint32_t tolerated = 0;
  EXPECT_EQ(g->redundancy(&tolerated), Redundancy::Full);
  EXPECT_EQ(tolerated, 2u);
  EXPECT_TRUE(g->replace_progress().running);
  EXPECT_LT(g->replace_progress().done_bytes, geo.member_data_bytes) << "the copy was to be slower than the writes";
  const uint64_t written0 = v.stats().rebuild_stripes_written;
  g->set_rebuild_rate(0);
  GroupEvent done;
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::ReplaceFinished, &done); }));
  EXPECT_NE(done.message.find("moved from"), std::string::npos) << done.message;
  ASSERT_TRUE(rig.wait([&] { return g->state() == GroupState::Optimal && all_active(*g); }));
  EXPECT_EQ(g->replacing_member(), -1);
  EXPECT_EQ(g->members()[3].path, rig.path(6));
  EXPECT_EQ(g->hot_replace_left(), rig.path(3));
  EXPECT_LT(v.stats().rebuild_stripes_written - written0, geo.stripes())
      << "only the regions written during the copy are rebuilt, not the whole member";
  img.check(rig, v);
  // The new drive holds member 3's strips: with two others failed, every read needs them.
  ASSERT_TRUE(g->fail_member(0, &err)) << err;
  ASSERT_TRUE(g->fail_member(5, &err)) << err;
  img.check(rig, v);
  // The old drive left with its metadata wiped.
  Superblock sb;
  EXPECT_NE(decode_superblock(rig.raw_read(3, 0, 4096).data(), &sb), DecodeResult::Ok);
  ASSERT_TRUE(g->stop(&err)) << err;
}

TEST(HotReplace, AMemberThatFailsDuringTheCopyIsRebuiltOntoTheNewDriveInFull) {
  GroupRig rig(5);
  Copying c;
  ASSERT_NO_FATAL_FAILURE(start_copy(rig, Level::R5, 4, 1, 2u << 20, &c));
  auto& g = c.g;
  Image& img = *c.img;
  Volume& v = g->volume();
  std::string err;
  ASSERT_TRUE(g->fail_member(1, &err)) << err;
  g->set_rebuild_rate(0);
  GroupEvent done;
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::ReplaceFinished, &done); }));
  EXPECT_NE(done.message.find("rebuilt in full"), std::string::npos) << done.message;
  ASSERT_TRUE(rig.wait([&] { return g->state() == GroupState::Optimal && all_active(*g); }));
  EXPECT_EQ(g->members()[1].path, rig.path(4));
  EXPECT_EQ(g->hot_replace_left(), "") << "the old drive failed: it did not leave healthy";
  img.check(rig, v);
  ASSERT_TRUE(g->fail_member(0, &err)) << err;
  img.check(rig, v);
  ASSERT_TRUE(g->stop(&err)) << err;
}

TEST(HotReplace, AStopDropsTheCopyAndTheMemberStays) {
  GroupRig rig(5);
  Copying c;
  ASSERT_NO_FATAL_FAILURE(start_copy(rig, Level::R5, 4, 2, 1u << 20, &c));
  auto& g = c.g;
  Image& img = *c.img;
  Volume& v = g->volume();
  std::string err;
  std::mt19937_64 rng(3);
  img.write_random(rig, v, rng, 10);
  ASSERT_TRUE(g->stop(&err)) << err;
  GroupEvent done;
  ASSERT_TRUE(rig.find_event(GroupEvent::ReplaceFinished, &done));
  EXPECT_NE(done.message.find("stays on its drive"), std::string::npos) << done.message;
  g.reset();
  auto back = rig.assemble(rig.open_range(0, 4), nullptr, &err);
  ASSERT_TRUE(back) << err;
  EXPECT_EQ(back->state(), GroupState::Optimal);
  EXPECT_EQ(back->members()[2].path, rig.path(2));
  img.check(rig, back->volume());
  ASSERT_TRUE(back->stop(&err)) << err;
}

TEST(HotReplace, Refusals) {
  GroupRig rig(6);
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  ASSERT_TRUE(g->fail_member(0, &err)) << err;
  EXPECT_FALSE(g->hot_replace(0, rig.open(4), false, &err));
  EXPECT_NE(err.find("not working"), std::string::npos) << err;
  EXPECT_FALSE(g->hot_replace(9, rig.open(4), false, &err));
  EXPECT_FALSE(g->hot_replace(1, rig.open(2), false, &err)) << "a drive of the group itself";
  auto r0 = rig.create(test_group_config(Level::R0, 0, 65536, "dg-r0"), 4, 1, &err);
  ASSERT_TRUE(r0) << err;
  EXPECT_FALSE(r0->hot_replace(0, rig.open(5), false, &err));
  EXPECT_NE(err.find("raid0"), std::string::npos) << err;
  ASSERT_TRUE(r0->stop(&err)) << err;
  ASSERT_TRUE(g->stop(&err)) << err;
}
