// Rebuild into the distributed spare room through a drive group (issue 34):
// a failed member of a declustered group is rebuilt onto every survivor's
// spare strips by itself, the group is optimal again and survives P more
// failures; a later failure moves the strips it held; writes during the
// rebuild; the room comes back from the superblocks after a stop and after
// a crash in the middle of a rebuild (which resumes); copy-back of the
// room's last member onto a drive of its own (live, after a crash, its
// drive failing, its drive missing).
#include <gtest/gtest.h>

#include <random>

#include "engine/group/group.h"
#include "engine/group/metadata_io.h"
#include "tests/support/group_rig.h"
#include "tests/support/test_array.h"
#include "tests/support/volume_image.h"

using namespace gpuraid;
using namespace gpuraid::test;

namespace {

// 16 members of 4+2: two stripes a row and 4 spare strips (room for 4 members).
constexpr uint32_t kDrives = 16;

GroupConfig config() {
  GroupConfig c;
  c.level = Level::DR6;
  c.declustered = {4, 2};
  c.strip_bytes = 16384;
  c.name = "dg-room";
  c.assume_zeroed = true;
  c.bitmap_region_bytes = 1u << 20;
  return c;
}

bool copied_back(GroupRig& rig, Group& g, uint32_t member) {
  return rig.wait([&] {
    GroupEvent e;
    for (size_t from = 0; rig.find_event(GroupEvent::RebuildFinished, &e, from); from++)
      if (e.member == int(member) && e.message.find("copied back") != std::string::npos) return g.state() == GroupState::Optimal;
    return false;
  });
}

bool room_rebuilt(GroupRig& rig, Group& g, uint32_t member) {
  return rig.wait([&] {
    GroupEvent e;
    for (size_t from = 0; rig.find_event(GroupEvent::RebuildFinished, &e, from); from++)
      if (e.member == int(member) && e.message.find("spare room") != std::string::npos) return g.state() == GroupState::Optimal;
    return false;
  });
}

// Every byte of the image reads back; a failure names the line.
#define CHECK_IMAGE(vol)                                                \
  do {                                                                  \
    SCOPED_TRACE("image checked at line " + std::to_string(__LINE__)); \
    img->check(rig, vol);                                               \
  } while (0)

std::vector<std::unique_ptr<Drive>> drives_but(GroupRig& rig, uint64_t gone) {
  std::vector<std::unique_ptr<Drive>> d;
  for (uint32_t i = 0; i < kDrives; i++)
    if (!(gone >> i & 1)) d.push_back(rig.open(i));
  return d;
}

// A group of kDrives 4+2 members, every byte written from `img` (the
// reference copy the checks compare with).
class DistributedSpareGroup : public ::testing::Test {
 protected:
  void SetUp() override {
    g = rig.create(config(), 0, kDrives, &err);
    ASSERT_TRUE(g) << err;
    img = std::make_unique<Image>(g->volume().size_bytes());
    img->write_all(rig, g->volume());
    rig.clear_events();
  }
  GroupRig rig{kDrives + 1, 8u << 20};  // drive kDrives: a copy-back's
  std::string err;
  std::unique_ptr<Group> g;
  std::unique_ptr<Image> img;
};

}  // namespace

TEST_F(DistributedSpareGroup, AFailedMemberIsRebuiltIntoTheRoomAndRelied) {
  Volume& v = g->volume();
  ASSERT_TRUE(g->fail_member(3, &err)) << err;
  ASSERT_TRUE(room_rebuilt(rig, *g, 3)) << "member 3 not rebuilt into the room";
  EXPECT_EQ(v.room_mask(), 1ull << 3);
  EXPECT_EQ(g->members()[3].path, kRoomPath);
  EXPECT_EQ(g->members()[3].state, MemberState::Active);
  EXPECT_FALSE(g->fail_member(3, &err));
  EXPECT_NE(err.find("spare room"), std::string::npos) << err;
  CHECK_IMAGE(v);
  // P more failures: every byte still reads (the room's strips included).
  ASSERT_TRUE(g->fail_member(7, &err)) << err;
  ASSERT_TRUE(room_rebuilt(rig, *g, 7)) << "member 7 not rebuilt into the room";
  CHECK_IMAGE(v);
  ASSERT_TRUE(g->fail_member(0, &err)) << err;
  ASSERT_TRUE(g->fail_member(12, &err)) << err;
  CHECK_IMAGE(v);
  ASSERT_TRUE(g->stop(&err)) << err;
}

// Writes while the room's rebuild runs (slowed down), then a stop and an
// assembly without the failed drives: the room comes back, the data too,
// and it still survives P failures.
TEST_F(DistributedSpareGroup, WritesDuringTheRebuildAndTheRoomAfterAStop) {
  g->set_rebuild_rate(4u << 20);
  ASSERT_TRUE(g->fail_member(5, &err)) << err;
  std::mt19937_64 rng(34);
  img->write_random(rig, g->volume(), rng, 200);
  CHECK_IMAGE(g->volume());
  g->set_rebuild_rate(0);
  ASSERT_TRUE(room_rebuilt(rig, *g, 5));
  img->write_random(rig, g->volume(), rng, 100);
  ASSERT_TRUE(g->fail_member(9, &err)) << err;  // moves 5's strips that sat on 9
  ASSERT_TRUE(room_rebuilt(rig, *g, 9));
  CHECK_IMAGE(g->volume());
  ASSERT_TRUE(g->stop(&err)) << err;
  g.reset();
  std::string note;
  g = rig.assemble(drives_but(rig, 1ull << 5 | 1ull << 9), &note, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_EQ(g->state(), GroupState::Optimal) << note;
  EXPECT_EQ(g->volume().room_mask(), 1ull << 5 | 1ull << 9);
  EXPECT_EQ(g->volume().room()->order(), (std::vector<uint32_t>{5, 9}));
  CHECK_IMAGE(g->volume());
  ASSERT_TRUE(g->fail_member(1, &err)) << err;
  ASSERT_TRUE(g->fail_member(14, &err)) << err;
  CHECK_IMAGE(g->volume());
  ASSERT_TRUE(g->stop(&err)) << err;
}

// A crash in the middle of the room's rebuild: the next start resumes it
// from the persisted checkpoint and finishes; nothing written is lost.
TEST_F(DistributedSpareGroup, ACrashDuringTheRebuildResumesIt) {
  g->set_rebuild_rate(2u << 20);
  ASSERT_TRUE(g->fail_member(2, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::RebuildProgress); })) << "no checkpoint persisted";
  std::mt19937_64 rng(7);
  img->write_random(rig, g->volume(), rng, 50);
  ASSERT_TRUE(g->volume().rebuilding_member() == 2);
  g.reset();  // crash: no clean stop
  std::string note;
  g = rig.assemble(drives_but(rig, 1ull << 2), &note, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_NE(note.find("into the distributed spare room resumes"), std::string::npos) << note;
  rig.clear_events();
  ASSERT_TRUE(room_rebuilt(rig, *g, 2));
  CHECK_IMAGE(g->volume());
  ASSERT_TRUE(g->fail_member(4, &err)) << err;
  ASSERT_TRUE(g->fail_member(11, &err)) << err;
  CHECK_IMAGE(g->volume());
  ASSERT_TRUE(g->stop(&err)) << err;
}

// Two failures: the second waits for the first's rebuild into the room. A
// stop in between: the next start resumes the first and then takes the
// room for the second by itself, as the running group would have.
TEST_F(DistributedSpareGroup, ASecondFailureWaitingForTheRoomTakesItAfterAStop) {
  g->set_rebuild_rate(2u << 20);
  ASSERT_TRUE(g->fail_member(6, &err)) << err;
  ASSERT_TRUE(g->fail_member(10, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return g->volume().rebuilding_member() == 6; }));
  EXPECT_EQ(g->volume().room_mask(), 1ull << 6) << "the second failure took the room before the first was rebuilt";
  ASSERT_TRUE(g->stop(&err)) << err;
  g.reset();
  std::string note;
  g = rig.assemble(drives_but(rig, 1ull << 6 | 1ull << 10), &note, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_NE(note.find("will be rebuilt into the distributed spare room"), std::string::npos) << note;
  ASSERT_TRUE(room_rebuilt(rig, *g, 6));
  ASSERT_TRUE(room_rebuilt(rig, *g, 10)) << "the member that failed while the group ran was not taken by the room";
  EXPECT_EQ(g->volume().room()->order(), (std::vector<uint32_t>{6, 10}));
  CHECK_IMAGE(g->volume());
  ASSERT_TRUE(g->fail_member(1, &err)) << err;
  ASSERT_TRUE(g->fail_member(14, &err)) << err;
  CHECK_IMAGE(g->volume());
  ASSERT_TRUE(g->stop(&err)) << err;
}

// Copy-back: 3 then 7 in the room; only 7 (the last) can leave it. Its copy
// onto a new drive runs slowly under writes, and the group keeps all its
// redundancy meanwhile (two more failures during the copy read every
// byte). Then 7 lives on that drive, the room holds 3 alone and takes the
// next failure; a stop and an assembly find it so.
TEST_F(DistributedSpareGroup, CopyBackMovesTheLastMemberOntoADriveKeepingRedundancy) {
  Volume& v = g->volume();
  ASSERT_TRUE(g->fail_member(3, &err)) << err;
  ASSERT_TRUE(room_rebuilt(rig, *g, 3));
  ASSERT_TRUE(g->fail_member(7, &err)) << err;
  ASSERT_TRUE(room_rebuilt(rig, *g, 7));
  EXPECT_FALSE(g->hot_replace(3, rig.open(kDrives), false, &err));
  EXPECT_NE(err.find("only the last member"), std::string::npos) << err;
  g->set_rebuild_rate(2u << 20);
  rig.clear_events();
  ASSERT_TRUE(g->hot_replace(7, rig.open(kDrives), false, &err)) << err;
  EXPECT_TRUE(v.copying_back());
  EXPECT_EQ(g->members()[7].path, rig.path(kDrives));
  EXPECT_EQ(g->members()[7].state, MemberState::Rebuilding);
  std::mt19937_64 rng(35);
  img->write_random(rig, v, rng, 100);
  CHECK_IMAGE(v);
  ASSERT_TRUE(rig.wait([&] { return v.rebuild_checkpoint() > v.geometry().stripes() / 8; }));
  ASSERT_TRUE(g->fail_member(0, &err)) << err;
  ASSERT_TRUE(g->fail_member(12, &err)) << err;
  img->write_random(rig, v, rng, 50);
  CHECK_IMAGE(v);  // below the checkpoint from the new drive, past it from the room
  EXPECT_NE(g->state(), GroupState::Failed);
  EXPECT_FALSE(rig.find_event(GroupEvent::GroupFailed)) << "the copy-back's member is no loss";
  g->set_rebuild_rate(0);
  ASSERT_TRUE(copied_back(rig, *g, 7)) << "the copy-back did not finish";
  EXPECT_EQ(g->members()[7].state, MemberState::Active);
  // The room is free again: the failures that waited take it.
  ASSERT_TRUE(room_rebuilt(rig, *g, 0));
  ASSERT_TRUE(room_rebuilt(rig, *g, 12));
  EXPECT_EQ(v.room()->order(), (std::vector<uint32_t>{3, 0, 12}));
  EXPECT_EQ(v.room_mask(), 1ull << 3 | 1ull << 0 | 1ull << 12);
  CHECK_IMAGE(v);
  ASSERT_TRUE(g->stop(&err)) << err;
  g.reset();
  std::vector<std::unique_ptr<Drive>> d = drives_but(rig, 1ull << 3 | 1ull << 7 | 1ull << 0 | 1ull << 12);
  d.push_back(rig.open(kDrives));
  std::string note;
  g = rig.assemble(std::move(d), &note, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_EQ(g->volume().room()->order(), (std::vector<uint32_t>{3, 0, 12}));
  EXPECT_EQ(g->members()[7].path, rig.path(kDrives));
  EXPECT_EQ(g->state(), GroupState::Optimal) << note;
  CHECK_IMAGE(g->volume());
  ASSERT_TRUE(g->stop(&err)) << err;
}

// A crash during a copy-back, then a start that writes past the checkpoint
// (to parity only: the room's copies there are read around) and stops
// cleanly: the start after that still reads around them (the superblock
// says so, version 6), and once the copy passes them the flag goes. (It
// trusted them after the clean stop: crash_test --copy-back read a block's
// old copy from the room, and the copy-back moved it onto the new drive.)
TEST_F(DistributedSpareGroup, ACleanStopAfterACrashDuringACopyBackStillReadsAroundTheRoom) {
  ASSERT_TRUE(g->fail_member(9, &err)) << err;
  ASSERT_TRUE(room_rebuilt(rig, *g, 9));
  g->set_rebuild_rate(1u << 20);
  rig.clear_events();
  ASSERT_TRUE(g->hot_replace(9, rig.open(kDrives), true, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::RebuildProgress); })) << "no checkpoint persisted";
  g.reset();  // crash: no clean stop
  auto with_new_drive = [&] {
    std::vector<std::unique_ptr<Drive>> d = drives_but(rig, 1ull << 9);
    d.push_back(rig.open(kDrives));
    return d;
  };
  std::string note;
  g = rig.assemble(with_new_drive(), &note, &err);
  ASSERT_TRUE(g) << err;
  g->set_rebuild_rate(1u << 20);
  EXPECT_NE(note.find("after an unclean stop the room's copies past it are read around"), std::string::npos) << note;
  // Past the checkpoint, far from it: every strip of the last 64 stripes.
  Volume& v = g->volume();
  const uint64_t sd = v.geometry().stripe_data_bytes(), stripes = v.geometry().stripes();
  ASSERT_LT(v.rebuild_checkpoint() + 64, stripes - 64);
  img->rewrite(rig, v, (stripes - 64) * sd, 64 * sd, 391);
  CHECK_IMAGE(v);
  ASSERT_TRUE(g->stop(&err)) << err;
  g.reset();
  const SuperblockRead sb = read_superblock(*rig.open(0));
  ASSERT_TRUE(sb.ok) << sb.why();
  EXPECT_TRUE(sb.sb.flags & kFlagRoomStale);
  EXPECT_EQ(sb.sb.format_version(), 6u);
  g = rig.assemble(with_new_drive(), &note, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_NE(note.find("since an earlier unclean stop the room's copies past it are read around"), std::string::npos)
      << note;
  CHECK_IMAGE(g->volume());
  g->set_rebuild_rate(0);
  ASSERT_TRUE(copied_back(rig, *g, 9));
  CHECK_IMAGE(g->volume());
  ASSERT_TRUE(g->stop(&err)) << err;
  g.reset();
  const SuperblockRead after = read_superblock(*rig.open(0));
  ASSERT_TRUE(after.ok) << after.why();
  EXPECT_FALSE(after.sb.flags & kFlagRoomStale) << "the copy-back ended";
  EXPECT_EQ(after.sb.format_version(), 4u);
}

// A crash in the middle of a copy-back: the next start resumes it from the
// persisted checkpoint (the room's copies past it read around meanwhile);
// without its drive, the member goes back into the room in full.
class CopyBackCrash : public DistributedSpareGroup, public ::testing::WithParamInterface<bool> {};

TEST_P(CopyBackCrash, ResumesItOrPutsTheMemberBackInTheRoom) {
  const bool with_drive = GetParam();
  {
    ASSERT_TRUE(g->fail_member(9, &err)) << err;
    ASSERT_TRUE(room_rebuilt(rig, *g, 9));
    g->set_rebuild_rate(2u << 20);
    rig.clear_events();
    ASSERT_TRUE(g->hot_replace(9, rig.open(kDrives), true, &err)) << err;
    ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::RebuildProgress); })) << "no checkpoint persisted";
    std::mt19937_64 rng(36);
    img->write_random(rig, g->volume(), rng, 60);
    // Stripes the copy-back passed since its checkpoint was last persisted
    // (a second apart): written after, onto the new drive only.
    Volume& v = g->volume();
    rig.clear_events();
    ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::RebuildProgress); }));
    const uint64_t from = v.rebuild_checkpoint();
    ASSERT_TRUE(rig.wait([&] { return v.rebuild_checkpoint() >= from + 16; }));
    const uint64_t sd = v.geometry().stripe_data_bytes();
    img->rewrite(rig, v, from * sd, 16 * sd, 360);
    g.reset();  // crash: no clean stop
    std::vector<std::unique_ptr<Drive>> d = drives_but(rig, 1ull << 9);
    if (with_drive) d.push_back(rig.open(kDrives));
    std::string note;
    rig.clear_events();
    g = rig.assemble(std::move(d), &note, &err);
    ASSERT_TRUE(g) << err;
    if (with_drive) {
      EXPECT_LE(g->volume().rebuild_checkpoint(), from) << "the last stripes copied are copied again";
      EXPECT_NE(note.find("copy-back of member 9"), std::string::npos) << note;
      EXPECT_TRUE(g->volume().copying_back());
      CHECK_IMAGE(g->volume());
      ASSERT_TRUE(copied_back(rig, *g, 9));
      EXPECT_EQ(g->volume().room_mask(), 0u);
    } else {
      EXPECT_NE(note.find("rebuilt into the room again"), std::string::npos) << note;
      ASSERT_TRUE(room_rebuilt(rig, *g, 9));
      EXPECT_EQ(g->volume().room_mask(), 1ull << 9);
    }
    CHECK_IMAGE(g->volume());
    ASSERT_TRUE(g->fail_member(1, &err)) << err;
    ASSERT_TRUE(g->fail_member(14, &err)) << err;
    CHECK_IMAGE(g->volume());
    ASSERT_TRUE(g->stop(&err)) << err;
  }
}

INSTANTIATE_TEST_SUITE_P(DistributedSpareGroup, CopyBackCrash, ::testing::Bool(),
                         [](const auto& i) { return i.param ? "WithItsDrive" : "WithoutItsDrive"; });

// The copy-back's drive fails in the middle: what it moved there is lost,
// so the member is rebuilt into the room again, in full, by itself.
TEST_F(DistributedSpareGroup, ACopyBackWhoseDriveFailsPutsTheMemberBackInTheRoom) {
  ASSERT_TRUE(g->fail_member(4, &err)) << err;
  ASSERT_TRUE(room_rebuilt(rig, *g, 4));
  g->set_rebuild_rate(2u << 20);
  ASSERT_TRUE(g->hot_replace(4, rig.open(kDrives), false, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return g->volume().rebuild_checkpoint() > 0; }));
  std::mt19937_64 rng(37);
  img->write_random(rig, g->volume(), rng, 60);
  rig.clear_events();
  g->set_rebuild_rate(0);
  ASSERT_TRUE(g->fail_member(4, &err)) << err;  // its new drive
  ASSERT_TRUE(room_rebuilt(rig, *g, 4)) << "not back in the room";
  EXPECT_EQ(g->volume().room()->order(), (std::vector<uint32_t>{4}));
  EXPECT_FALSE(g->volume().copying_back());
  CHECK_IMAGE(g->volume());
  ASSERT_TRUE(g->fail_member(2, &err)) << err;
  ASSERT_TRUE(g->fail_member(13, &err)) << err;
  CHECK_IMAGE(g->volume());
  ASSERT_TRUE(g->stop(&err)) << err;
}

// A clean stop in the middle of a copy-back: it resumes at the next start
// with the room's copies past the checkpoint trusted (nothing was written
// after it was persisted), so the group still survives P more failures.
TEST_F(DistributedSpareGroup, ACleanStopDuringACopyBackKeepsItsRedundancy) {
  ASSERT_TRUE(g->fail_member(6, &err)) << err;
  ASSERT_TRUE(room_rebuilt(rig, *g, 6));
  g->set_rebuild_rate(2u << 20);
  ASSERT_TRUE(g->replace_member(6, rig.open(kDrives), false, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return g->volume().rebuild_checkpoint() > g->volume().geometry().stripes() / 8; }));
  std::mt19937_64 rng(38);
  img->write_random(rig, g->volume(), rng, 60);
  ASSERT_TRUE(g->stop(&err)) << err;
  g.reset();
  std::vector<std::unique_ptr<Drive>> d = drives_but(rig, 1ull << 6);
  d.push_back(rig.open(kDrives));
  std::string note;
  rig.clear_events();
  g = rig.assemble(std::move(d), &note, &err);
  ASSERT_TRUE(g) << err;
  g->set_rebuild_rate(2u << 20);
  EXPECT_NE(note.find("copy-back of member 6"), std::string::npos) << note;
  EXPECT_EQ(note.find("read around"), std::string::npos) << note;
  ASSERT_TRUE(g->volume().copying_back());
  ASSERT_TRUE(g->fail_member(0, &err)) << err;
  ASSERT_TRUE(g->fail_member(15, &err)) << err;
  CHECK_IMAGE(g->volume());
  g->set_rebuild_rate(0);
  ASSERT_TRUE(copied_back(rig, *g, 6));
  CHECK_IMAGE(g->volume());
  ASSERT_TRUE(g->stop(&err)) << err;
}
