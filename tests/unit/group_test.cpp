// Drive groups: metadata and reassembly, refusals, rebuild (with I/O, after
// a crash, with a second failure), spares, scrub, write-intent resync, init.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <thread>

#include "engine/group/group_impl.h"
#include "engine/group/metadata_io.h"
#include "engine/group/superblock.h"
#include "engine/planner.h"
#include "tests/support/group_rig.h"
#include "tests/support/volume_image.h"

using namespace gpuraid;
using namespace gpuraid::test;

namespace {

GroupConfig config(Level l, uint32_t parity = 0, uint32_t strip = 65536) { return test_group_config(l, parity, strip); }

bool has_event(GroupRig& rig, GroupEvent::Kind k) { return rig.find_event(k); }

}  // namespace

TEST(GroupMetadata, ReassemblesShuffledAndRenamedMembers) {
  GroupRig rig(5);
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 5, &err);
  ASSERT_TRUE(g) << err;
  Image img(g->volume().size_bytes());
  img.write_all(rig, g->volume());
  const std::string uuid = g->uuid();
  const uint64_t gen = g->generation();
  ASSERT_TRUE(g->stop(&err)) << err;
  g.reset();
  // New names, new order.
  std::vector<int> perm = {3, 0, 4, 1, 2};
  for (int i = 0; i < 5; i++) ASSERT_EQ(0, rename(rig.path(i).c_str(), (rig.dir() + "/moved" + std::to_string(perm[i])).c_str()));
  std::vector<std::unique_ptr<Drive>> d;
  for (int i = 4; i >= 0; i--) d.push_back(rig.open_path(rig.dir() + "/moved" + std::to_string(i)));
  std::string note;
  g = rig.assemble(std::move(d), &note, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_EQ(g->uuid(), uuid);
  EXPECT_EQ(g->name(), "dg-test");
  EXPECT_GT(g->generation(), gen);
  EXPECT_EQ(note, "");
  EXPECT_EQ(g->state(), GroupState::Optimal);
  img.check(rig, g->volume());
  for (auto& m : g->members()) EXPECT_NE(m.path.find("moved"), std::string::npos);
  ASSERT_TRUE(g->stop(&err));
}

TEST(GroupMetadata, RefusalsChangeNothingOnDisk) {
  GroupRig rig(8);
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  ASSERT_TRUE(g->stop(&err));
  g.reset();
  auto snapshot = [&] {
    std::vector<std::vector<uint8_t>> s;
    for (uint32_t i = 0; i < 4; i++) s.push_back(rig.raw_read(i, 0, 8192));
    return s;
  };
  // Both superblock copies of member 1 corrupt.
  auto saved = rig.raw_read(1, 0, 8192);
  std::vector<uint8_t> junk(8192, 0x5a);
  memcpy(junk.data(), saved.data(), 8);  // keep the magic: a damaged superblock, not an empty drive
  memcpy(junk.data() + 4096, saved.data(), 8);
  rig.raw_write(1, 0, junk.data(), junk.size());
  auto before = snapshot();
  EXPECT_FALSE(rig.assemble(rig.open_range(0, 4), nullptr, &err));
  EXPECT_NE(err.find("both superblock copies are bad"), std::string::npos) << err;
  EXPECT_EQ(snapshot(), before);
  rig.raw_write(1, 0, saved.data(), saved.size());
  // One copy bad is fine: the other one serves.
  rig.raw_write(1, 0, junk.data(), 4096);
  g = rig.assemble(rig.open_range(0, 4), nullptr, &err);
  ASSERT_TRUE(g) << err;
  ASSERT_TRUE(g->stop(&err));
  g.reset();
  // A newer format version.
  SuperblockRead sr = read_superblock(*rig.open(2));
  ASSERT_TRUE(sr.ok);
  sr.sb.version = kSuperblockVersion + 1;
  std::vector<uint8_t> blk(4096);
  encode_superblock(sr.sb, blk.data());
  auto saved2 = rig.raw_read(2, 0, 8192);
  rig.raw_write(2, 0, blk.data(), 4096);
  rig.raw_write(2, 4096, blk.data(), 4096);
  before = snapshot();
  EXPECT_FALSE(rig.assemble(rig.open_range(0, 4), nullptr, &err));
  EXPECT_NE(err.find("newer"), std::string::npos) << err;
  EXPECT_EQ(snapshot(), before);
  rig.raw_write(2, 0, saved2.data(), saved2.size());
  // Members of two groups.
  auto other = rig.create(config(Level::R5), 4, 3, &err);
  ASSERT_TRUE(other) << err;
  ASSERT_TRUE(other->stop(&err));
  other.reset();
  std::vector<std::unique_ptr<Drive>> mixed;
  for (uint32_t i : {0u, 1u, 2u, 4u}) mixed.push_back(rig.open(i));
  before = snapshot();
  EXPECT_FALSE(rig.assemble(std::move(mixed), nullptr, &err));
  EXPECT_NE(err.find("two different groups"), std::string::npos) << err;
  // Too few members.
  EXPECT_FALSE(rig.assemble(rig.open_range(0, 2), nullptr, &err));
  EXPECT_NE(err.find("too few members"), std::string::npos) << err;
  EXPECT_EQ(snapshot(), before);
  // A drive that is already a member is not overwritten unless forced.
  EXPECT_FALSE(rig.create(config(Level::R5), 0, 4, &err));
  EXPECT_NE(err.find("gpuraid superblock"), std::string::npos) << err;
  EXPECT_EQ(snapshot(), before);
  // Degraded start within redundancy is allowed and says so.
  std::string note;
  g = rig.assemble(rig.open_range(0, 3), &note, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_NE(note.find("degraded"), std::string::npos) << note;
  EXPECT_EQ(g->state(), GroupState::Degraded);
  ASSERT_TRUE(g->stop(&err));
  g.reset();
  GroupConfig forced = config(Level::R5);
  forced.force = true;
  EXPECT_TRUE(rig.create(forced, 0, 4, &err)) << err;
}

namespace {
// Other names of one file: a symlink, a hard link, `dir//name`, `dir/./name`
// and a relative `./name` (the test runs in the rig's directory for it).
std::vector<std::string> other_names(GroupRig& rig, uint32_t i) {
  const std::string d = rig.dir(), n = "d" + std::to_string(i);
  EXPECT_EQ(0, symlink(rig.path(i).c_str(), (d + "/sym-" + n).c_str()));
  EXPECT_EQ(0, link(rig.path(i).c_str(), (d + "/hard-" + n).c_str()));
  return {d + "/sym-" + n, d + "/hard-" + n, d + "//" + n, d + "/./" + n, "./" + n};
}

struct InDir {
  explicit InDir(const std::string& d) : old(get_current_dir_name()) { EXPECT_EQ(0, chdir(d.c_str())); }
  ~InDir() {
    EXPECT_EQ(0, chdir(old));
    free(old);
  }
  char* old;
};
}  // namespace

// A member replaced after the caller's list of drives was saved (the
// daemon's registry, a crash between the two): its old drive is refused by
// default; given `unlisted`, it is handed back untouched and the group
// starts with the drive that replaced it.
TEST(GroupMetadata, AReplacedMembersDriveIsHandedBackWhenAsked) {
  GroupRig rig(5);
  std::string err, note;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  Image img(g->volume().size_bytes());
  img.write_all(rig, g->volume());
  ASSERT_TRUE(g->fail_member(1, &err)) << err;
  ASSERT_TRUE(g->replace_member(1, rig.open(4), false, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return g->state() == GroupState::Optimal; }));
  ASSERT_TRUE(g->stop(&err)) << err;
  g.reset();
  const std::vector<uint8_t> before = rig.raw_read(1, 0, 8192);
  EXPECT_FALSE(rig.assemble(rig.open_range(0, 5), nullptr, &err));
  EXPECT_NE(err.find("no longer listed"), std::string::npos) << err;
  std::vector<std::unique_ptr<Drive>> unlisted;
  g = rig.assemble(rig.open_range(0, 5), &note, &err, false, &unlisted);
  ASSERT_TRUE(g) << err;
  ASSERT_EQ(unlisted.size(), 1u);
  EXPECT_EQ(unlisted[0]->path(), rig.path(1));
  EXPECT_NE(note.find("was replaced"), std::string::npos) << note;
  EXPECT_EQ(g->state(), GroupState::Optimal);
  EXPECT_EQ(g->volume().member(1)->path(), rig.path(4));
  img.check(rig, g->volume());
  ASSERT_TRUE(g->stop(&err)) << err;
  EXPECT_EQ(rig.raw_read(1, 0, 8192), before) << "the replaced drive was written";
}

TEST(GroupMetadata, OneDriveUnderTwoNamesIsRefused) {
  GroupRig rig(5);
  InDir here(rig.dir());
  const auto names0 = other_names(rig, 0), names1 = other_names(rig, 1), names4 = other_names(rig, 4);
  std::string err;
  const std::vector<uint8_t> blank(8192, 0);
  // create: the same file twice among the members; nothing is written.
  for (const auto& alias : names0) {
    std::vector<std::unique_ptr<Drive>> m;
    m.push_back(rig.open(0));
    m.push_back(rig.open(1));
    m.push_back(rig.open_path(alias));
    EXPECT_FALSE(Group::create(rig.engine(), std::move(m), config(Level::R5), &err)) << alias;
    EXPECT_NE(err.find(alias + " is the same file as " + rig.path(0)), std::string::npos) << err;
    EXPECT_EQ(rig.raw_read(0, 0, 8192), blank) << alias;
  }
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  // replace_member: by another member under another name is refused; the
  // failed member's own file (here through a symlink) may come back.
  ASSERT_TRUE(g->fail_member(1, &err)) << err;
  for (const auto& alias : names0) {
    EXPECT_FALSE(g->replace_member(1, rig.open_path(alias), true, &err)) << alias;
    EXPECT_NE(err.find(alias + " is the same file as " + rig.path(0)), std::string::npos) << err;
  }
  EXPECT_EQ(g->state(), GroupState::Degraded);
  ASSERT_TRUE(g->replace_member(1, rig.open_path(names1[0]), true, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return !g->rebuild_progress().running; }));
  // add_spare: a member, or the spare, under another name.
  ASSERT_TRUE(g->add_spare(rig.open(4), false, &err)) << err;
  for (const auto* names : {&names0, &names4})
    for (const auto& alias : *names) {
      EXPECT_FALSE(g->add_spare(rig.open_path(alias), true, &err)) << alias;
      EXPECT_NE(err.find(alias + " is the same file as"), std::string::npos) << err;
    }
  EXPECT_EQ(g->spare_count(), 1u);
  ASSERT_TRUE(g->stop(&err)) << err;
  g.reset();
  // assemble: a member given twice (a copy of its superblock would say
  // "same member id"; this says what it is).
  for (const auto& alias : names0) {
    std::vector<std::unique_ptr<Drive>> d;
    for (uint32_t i : {0u, 1u, 2u, 3u}) d.push_back(rig.open(i));
    d.push_back(rig.open_path(alias));
    EXPECT_FALSE(rig.assemble(std::move(d), nullptr, &err)) << alias;
    EXPECT_NE(err.find(alias + " is the same file as " + rig.path(0)), std::string::npos) << err;
  }
  std::vector<std::unique_ptr<Drive>> d;
  for (uint32_t i : {0u, 1u, 2u, 3u, 4u}) d.push_back(rig.open(i));
  g = rig.assemble(std::move(d), nullptr, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_EQ(g->state(), GroupState::Optimal);
  EXPECT_EQ(g->spare_count(), 1u);
  ASSERT_TRUE(g->stop(&err)) << err;
}

TEST(GroupMetadata, RefusesDrivesHoldingFilesystems) {
  GroupRig rig(3, 32u << 20);
  std::string cmd = "mkfs.ext4 -q -F '" + rig.path(1) + "' >/dev/null 2>&1";
  if (system(cmd.c_str()) != 0) GTEST_SKIP() << "mkfs.ext4 is not available to make a filesystem to detect";
  std::string err;
  EXPECT_FALSE(rig.create(config(Level::R5), 0, 3, &err));
  EXPECT_NE(err.find("ext4"), std::string::npos) << err;
  GroupConfig f = config(Level::R5);
  f.force = true;
  EXPECT_TRUE(rig.create(f, 0, 3, &err)) << err;
}

TEST(GroupRebuild, ReplaceAndRebuildWhileIoContinues) {
  GroupRig rig(7);
  std::string err;
  auto g = rig.create(config(Level::R6), 0, 6, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  Image img(v.size_bytes());
  img.write_all(rig, v);
  uint32_t tolerated = 0;
  EXPECT_EQ(g->redundancy(&tolerated), Redundancy::Full);
  EXPECT_EQ(tolerated, 2u);
  ASSERT_TRUE(g->fail_member(2, &err)) << err;
  EXPECT_EQ(g->state(), GroupState::Degraded);
  EXPECT_EQ(g->redundancy(&tolerated), Redundancy::Reduced);
  EXPECT_EQ(tolerated, 1u);
  g->set_rebuild_rate(6u << 20);  // slow enough that I/O overlaps the rebuild
  ASSERT_TRUE(g->replace_member(2, rig.open(6), false, &err)) << err;
  EXPECT_EQ(g->state(), GroupState::Rebuilding);
  EXPECT_EQ(g->redundancy(&tolerated), Redundancy::Reduced);
  EXPECT_EQ(tolerated, 1u) << "the member being rebuilt does not count yet";
  std::mt19937_64 rng(5);
  int rounds = 0;
  while (g->rebuild_progress().running && rounds < 40) {
    img.write_random(rig, v, rng, 20);
    img.check(rig, v);
    rounds++;
  }
  EXPECT_GT(rounds, 1);
  g->set_rebuild_rate(0);
  ASSERT_TRUE(rig.wait([&] { return !g->rebuild_progress().running; }));
  ASSERT_TRUE(rig.wait([&] { return has_event(rig, GroupEvent::RebuildFinished); }));
  EXPECT_EQ(g->state(), GroupState::Optimal);
  img.check(rig, v);
  // The rebuilt member must hold the right bytes: lose two others.
  ASSERT_TRUE(g->fail_member(0, &err));
  ASSERT_TRUE(g->fail_member(5, &err));
  img.check(rig, v);
  ASSERT_TRUE(g->stop(&err));
}

TEST(GroupRebuild, ResumesFromCheckpointAfterACrash) {
  GroupRig rig(6);
  std::string err;
  GroupConfig c = config(Level::R5);
  c.bitmap_idle_ms = 100;  // the fill's regions are clean again before the crash
  auto g = rig.create(c, 0, 5, &err);
  ASSERT_TRUE(g) << err;
  Image img(g->volume().size_bytes());
  img.write_all(rig, g->volume());
  ASSERT_TRUE(rig.wait([&] { return g->impl().wi->dirty_regions() == 0; }, 10));
  ASSERT_TRUE(g->fail_member(1, &err));
  g->set_rebuild_rate(8u << 20);
  ASSERT_TRUE(g->replace_member(1, rig.open(5), false, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return g->rebuild_progress().fraction > 0.4; }));
  rig.wait([] { return false; }, 1.2);  // the housekeeper persists the checkpoint every second
  const double at = g->rebuild_progress().fraction;
  ASSERT_LT(at, 1.0);
  g.reset();  // a crash: no stop(), the superblocks still say "running" and "rebuilding"
  std::vector<std::unique_ptr<Drive>> d;
  for (uint32_t i : {0u, 2u, 3u, 4u, 5u}) d.push_back(rig.open(i));
  std::string note;
  g = rig.assemble(std::move(d), &note, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_NE(note.find("resumes"), std::string::npos) << note;
  EXPECT_GT(g->rebuild_progress().fraction, 0.2) << "rebuild restarted from zero";
  ASSERT_TRUE(rig.wait([&] { return !g->rebuild_progress().running; }));
  EXPECT_EQ(g->state(), GroupState::Optimal);
  img.check(rig, g->volume());
  ASSERT_TRUE(g->fail_member(0, &err));  // prove the rebuilt member
  img.check(rig, g->volume());
  ASSERT_TRUE(g->stop(&err));
}

TEST(GroupRebuild, Raid6SurvivesASecondFailureDuringRebuild) {
  GroupRig rig(6);
  std::string err;
  auto g = rig.create(config(Level::R6), 0, 5, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  Image img(v.size_bytes());
  img.write_all(rig, v);
  ASSERT_TRUE(g->fail_member(0, &err));
  g->set_rebuild_rate(8u << 20);
  ASSERT_TRUE(g->replace_member(0, rig.open(5), false, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return g->rebuild_progress().fraction > 0.2; }));
  ASSERT_TRUE(g->fail_member(3, &err)) << err;  // mid-rebuild
  EXPECT_EQ(g->state(), GroupState::Degraded) << "member 3 waits for a replacement: degraded, not just rebuilding";
  uint32_t tolerated = 9;
  EXPECT_EQ(g->redundancy(&tolerated), Redundancy::Reduced);
  EXPECT_EQ(tolerated, 0u);
  img.check(rig, v);
  g->set_rebuild_rate(0);
  ASSERT_TRUE(rig.wait([&] { return !g->rebuild_progress().running; }));
  img.check(rig, v);
  EXPECT_EQ(g->state(), GroupState::Degraded);  // member 3 is still out
  // Past redundancy: the group fails and says so; reads fail, never lie.
  EXPECT_FALSE(g->fail_member(1, &err) && g->fail_member(2, &err));
  v.fail_member(1, -EIO);
  v.fail_member(2, -EIO);
  EXPECT_EQ(g->state(), GroupState::Failed);
  EXPECT_EQ(g->redundancy(), Redundancy::Lost);
  AlignedBuf b(65536);
  EXPECT_EQ(-EIO, rig.io(v, IoRequest::Read, 0, 65536, b.data()));
  EXPECT_TRUE(has_event(rig, GroupEvent::GroupFailed));
}

TEST(GroupSpare, SpareTakesOverAFailedMember) {
  GroupRig rig(5);
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  Image img(g->volume().size_bytes());
  img.write_all(rig, g->volume());
  ASSERT_TRUE(g->add_spare(rig.open(4), false, &err)) << err;
  EXPECT_EQ(g->spare_count(), 1u);
  // The member dies on its own (I/O errors), not by the operator.
  g->volume().member(2)->faults().arm(FaultInjector::kVanished);
  img.check(rig, g->volume());
  ASSERT_TRUE(rig.wait([&] { return has_event(rig, GroupEvent::RebuildFinished); }));
  EXPECT_TRUE(has_event(rig, GroupEvent::SpareTaken));
  EXPECT_EQ(g->spare_count(), 0u);
  EXPECT_EQ(g->state(), GroupState::Optimal);
  img.check(rig, g->volume());
  ASSERT_TRUE(g->stop(&err));
}

// Two members of a RAID 6 fail at once (before the housekeeper's next tick),
// two spares wait: both members are rebuilt, one after the other. (The
// request to take a spare was one flag for the group: the first member took
// its spare, the second stayed failed beside the spare left.)
TEST(GroupSpare, TwoFailuresAtOnceTakeTwoSpares) {
  GroupRig rig(8);
  std::string err;
  auto g = rig.create(config(Level::R6), 0, 6, &err);
  ASSERT_TRUE(g) << err;
  Image img(g->volume().size_bytes());
  img.write_all(rig, g->volume());
  ASSERT_TRUE(g->add_spare(rig.open(6), false, &err)) << err;
  ASSERT_TRUE(g->add_spare(rig.open(7), false, &err)) << err;
  ASSERT_TRUE(g->fail_member(1, &err)) << err;
  ASSERT_TRUE(g->fail_member(4, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return g->spare_count() == 0 && g->state() == GroupState::Optimal; }))
      << "spares left: " << g->spare_count() << ", failed members: " << g->volume().failed_mask();
  img.check(rig, g->volume());
  ASSERT_TRUE(g->stop(&err));
}

// An operator's rebuild asked while the housekeeper takes the group's spare
// for the failed member (the spare out of its slot, its rebuild not started:
// here its metadata writes hang) waits for that start and says a rebuild
// runs. It answered "no spare", and the spare count read 0 meanwhile.
TEST(GroupSpare, ARebuildAskedWhileTheHousekeeperTakesTheSpareWaitsForIt) {
  GroupRig rig(7);
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  Image img(g->volume().size_bytes());
  img.write_all(rig, g->volume());
  // add_spare writes the spare's superblock (the hang cannot be armed
  // before) and asks the housekeeper to take it: should its tick come first,
  // again with the next drive.
  bool caught = false;
  for (uint32_t spare = 4; spare < 7 && !caught; spare++) {
    const size_t from = rig.event_count();
    ASSERT_TRUE(g->fail_member(2, &err)) << err;
    std::unique_ptr<Drive> d = rig.open(spare);
    FaultInjector& f = d->faults();
    ASSERT_TRUE(g->add_spare(std::move(d), false, &err)) << err;
    f.arm(FaultInjector::kHangSyncWrites);
    ASSERT_TRUE(rig.wait([&] { return f.hanging() > 0 || rig.find_event(GroupEvent::RebuildStarted, nullptr, from); }, 10));
    caught = f.hanging() > 0;
    if (caught) {
      EXPECT_EQ(g->spare_count(), 1u) << "a spare being taken is still a spare";
      std::thread release([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        f.disarm(FaultInjector::kHangSyncWrites);
      });
      const bool started = g->rebuild_onto_spare(&err);
      release.join();
      EXPECT_FALSE(started) << "the housekeeper started it";
      EXPECT_NE(err.find("a rebuild of member 2 is running"), std::string::npos) << err;
      EXPECT_TRUE(g->rebuild_progress().running);
    }
    f.disarm(FaultInjector::kHangSyncWrites);
    ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::RebuildFinished, nullptr, from); }));
    ASSERT_TRUE(rig.wait([&] { return g->state() == GroupState::Optimal; }));
  }
  EXPECT_TRUE(caught) << "the housekeeper took every spare before its hang was armed";
  EXPECT_EQ(g->spare_count(), 0u);
  img.check(rig, g->volume());
  ASSERT_TRUE(g->stop(&err));
}

TEST(GroupScrub, FindsLocatesAndRepairsCorruption) {
  GroupRig rig(6);
  std::string err;
  auto g = rig.create(config(Level::R6), 0, 6, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  const Geometry& geo = v.geometry();
  Image img(v.size_bytes());
  img.write_all(rig, v);
  ASSERT_TRUE(rig.wait([&] { return true; }));
  const uint32_t data_member = geo.data_member(3, 1), q_member = geo.parity_member(9, 1);
  std::vector<uint8_t> junk(512, 0xee);
  rig.raw_write(data_member, kMetadataBytes + 3ull * geo.strip_bytes + 4096, junk.data(), junk.size());
  rig.raw_write(q_member, kMetadataBytes + 9ull * geo.strip_bytes + 777, junk.data(), 100);
  auto scrub = [&](bool repair) {
    const size_t before = rig.event_count();
    EXPECT_TRUE(g->start_scrub(repair, &err)) << err;
    EXPECT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::ScrubFinished, nullptr, before); }));
    return g->last_scrub();
  };
  ScrubReport r = scrub(false);
  EXPECT_EQ(r.mismatched_stripes, 2u);
  ASSERT_EQ(r.mismatch_stripes.size(), 2u);
  EXPECT_EQ(r.mismatch_stripes[0], 3u);
  EXPECT_EQ(r.located_members[0], int(data_member));
  EXPECT_EQ(r.mismatch_stripes[1], 9u);
  EXPECT_EQ(r.located_members[1], int(q_member));
  r = scrub(true);
  EXPECT_EQ(r.repaired_stripes, 2u);
  r = scrub(false);
  EXPECT_EQ(r.mismatched_stripes, 0u);
  EXPECT_EQ(r.stripes_checked, geo.stripes());
  img.check(rig, v);  // the corrupt data strip was rebuilt from the others
  ASSERT_TRUE(g->stop(&err));
}

// Without a checksum a RAID 5 stripe or two copies cannot say which side is
// wrong: --repair makes them consistent and says so, never "repaired"
// (issue 33, item 10: a corrupt strip stayed and was counted repaired).
// Three copies outvote the corrupt one: that is a repair, and the data is right.
TEST(GroupScrub, Raid5AndMirrorsFindMismatches) {
  struct Case {
    Level l;
    uint32_t members;
    bool verified;
  };
  for (const Case& k : {Case{Level::R5, 4, false}, Case{Level::R1, 2, false}, Case{Level::R1, 3, true}}) {
    const Level l = k.l;
    GroupRig rig(4);
    std::string err;
    auto g = rig.create(config(l), 0, k.members, &err);
    ASSERT_TRUE(g) << err;
    Image img(g->volume().size_bytes());
    img.write_all(rig, g->volume());
    std::vector<uint8_t> junk(100, 0x11);
    // Member 0: the first copy of a mirror, the one a two-copy repair keeps.
    rig.raw_write(0, kMetadataBytes + 65536 * 2 + 10, junk.data(), junk.size());
    ASSERT_TRUE(g->start_scrub(true, &err)) << err;
    ASSERT_TRUE(rig.wait([&] { return has_event(rig, GroupEvent::ScrubFinished); }));
    EXPECT_EQ(g->last_scrub().mismatched_stripes, 1u) << level_name(l);
    EXPECT_EQ(g->last_scrub().repaired_stripes, k.verified ? 1u : 0u) << level_name(l) << " x" << k.members;
    EXPECT_EQ(g->last_scrub().made_consistent_stripes, k.verified ? 0u : 1u) << level_name(l) << " x" << k.members;
    GroupEvent e;
    ASSERT_TRUE(rig.find_event(GroupEvent::MismatchFound, &e));
    EXPECT_NE(e.message.find(k.verified ? "(repaired)" : "made consistent"), std::string::npos) << e.message;
    if (k.verified) img.check(rig, g->volume());  // the two good copies won
    rig.clear_events();
    ASSERT_TRUE(g->start_scrub(false, &err));
    ASSERT_TRUE(rig.wait([&] { return has_event(rig, GroupEvent::ScrubFinished); }));
    EXPECT_EQ(g->last_scrub().mismatched_stripes, 0u) << level_name(l);
    ASSERT_TRUE(g->stop(&err));
  }
}

// A failed group comes back with force (issue 33, item 8; mdadm
// --assemble --force): the member that failed last returns (it missed
// nothing: the group failed with it), the first stays failed and is
// re-added; every byte written before the failures reads back.
TEST(GroupForce, AFailedGroupComesBackWithTheMemberThatFailedLast) {
  GroupRig rig(3);
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 3, &err);
  ASSERT_TRUE(g) << err;
  Image img(g->volume().size_bytes());
  img.write_all(rig, g->volume());
  ASSERT_TRUE(g->fail_member(1, &err)) << err;
  // The second failure an I/O error's (an operator may not fail the group).
  ASSERT_TRUE(g->volume().fail_member(2, -EIO));
  g->volume().wait_persisted();
  EXPECT_EQ(g->state(), GroupState::Failed);
  g->stop(&err);  // refuses to call a failed group stopped cleanly
  g.reset();
  EXPECT_FALSE(rig.assemble(rig.open_range(0, 3), nullptr, &err));
  EXPECT_NE(err.find("start with force to bring back"), std::string::npos) << err;
  EXPECT_EQ(err.find("()"), std::string::npos) << err;
  std::string note;
  g = rig.assemble(rig.open_range(0, 3), &note, &err, /*force=*/true);
  ASSERT_TRUE(g) << err;
  EXPECT_NE(note.find("forced in member 2"), std::string::npos) << note;
  EXPECT_EQ(note.find("forced in member 1"), std::string::npos) << note;
  EXPECT_EQ(g->state(), GroupState::Degraded);
  img.check(rig, g->volume());
  ReaddResult rr;
  ASSERT_TRUE(g->readd_member(1, nullptr, false, &rr, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return g->state() == GroupState::Optimal; }));
  img.check(rig, g->volume());
  ASSERT_TRUE(g->start_scrub(false, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return has_event(rig, GroupEvent::ScrubFinished); }));
  EXPECT_EQ(g->last_scrub().mismatched_stripes, 0u);
  ASSERT_TRUE(g->stop(&err)) << err;
}

TEST(GroupWriteIntent, CleanStopLeavesNoDirtyBitsAndUncleanStopResyncsDirtyRegions) {
  GroupRig rig(4);
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  const Geometry geo = v.geometry();  // a copy: used after the volume is gone (the "crash" below)
  const uint64_t region_stripes = (1u << 20) / geo.strip_bytes;
  AlignedBuf b(geo.stripe_data_bytes());
  fill_random(b.data(), b.size(), 3);
  // Writes into regions 2 and 5 only.
  ASSERT_EQ(0, rig.io(v, IoRequest::Write, 2 * region_stripes * geo.stripe_data_bytes(), 8192, b.data()));
  ASSERT_EQ(0, rig.io(v, IoRequest::Write, 5 * region_stripes * geo.stripe_data_bytes() + 65536, 4096, b.data()));
  auto bits = rig.raw_read(0, kBitmapOffset, 4096);
  EXPECT_EQ(bits[0], (1u << 2) | (1u << 5)) << "bits set before the writes";
  g.reset();  // crash
  // A torn write: stripe 32 (region 2) gets parity that matches nothing.
  const uint64_t s = 2 * region_stripes;
  std::vector<uint8_t> junk(4096, 0x77);
  rig.raw_write(geo.parity_member(s, 0), kMetadataBytes + s * geo.strip_bytes, junk.data(), junk.size());
  std::string note;
  g = rig.assemble(rig.open_range(0, 4), &note, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_NE(note.find("2 dirty regions"), std::string::npos) << note;
  EXPECT_FALSE(g->redundancy_claimed());
  EXPECT_EQ(g->state(), GroupState::Resyncing);
  uint32_t tolerated = 9;
  EXPECT_EQ(g->redundancy(&tolerated), Redundancy::Pending);
  EXPECT_EQ(tolerated, 0u) << "nothing is guaranteed before the resync";
  ASSERT_TRUE(rig.wait([&] { return has_event(rig, GroupEvent::ResyncFinished); }));
  EXPECT_TRUE(g->redundancy_claimed());
  EXPECT_EQ(g->state(), GroupState::Optimal);
  EXPECT_EQ(g->redundancy(&tolerated), Redundancy::Full);
  EXPECT_EQ(tolerated, 1u);
  EXPECT_EQ(g->resync_progress().total_bytes, 2 * region_stripes * geo.strip_bytes) << "only dirty regions resync";
  ASSERT_TRUE(g->start_scrub(false, &err));
  ASSERT_TRUE(rig.wait([&] { return has_event(rig, GroupEvent::ScrubFinished); }));
  EXPECT_EQ(g->last_scrub().mismatched_stripes, 0u);
  ASSERT_TRUE(g->stop(&err)) << err;
  g.reset();
  for (uint32_t m = 0; m < 4; m++) {
    auto after = rig.raw_read(m, kBitmapOffset, 4096);
    EXPECT_TRUE(std::all_of(after.begin(), after.end(), [](uint8_t x) { return x == 0; })) << "member " << m;
  }
}

// A planned stop while an earlier crash's resync is still running: the
// bitmap keeps exactly the regions still to resync, the next start resyncs
// them without calling it an unclean stop (no log replay), and a start
// with a member gone trusts the replay the crash's start did.
TEST(GroupWriteIntent, PlannedStopDuringAResyncKeepsItsRegionsAndNoReplay) {
  GroupRig rig(4);
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  const Geometry geo = g->volume().geometry();
  const uint64_t region_stripes = (1u << 20) / geo.strip_bytes;
  AlignedBuf b(geo.stripe_data_bytes());
  fill_random(b.data(), b.size(), 4);
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Write, 2 * region_stripes * geo.stripe_data_bytes(), 8192, b.data()));
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Write, 5 * region_stripes * geo.stripe_data_bytes(), 4096, b.data()));
  g.reset();  // crash: regions 2 and 5 dirty
  std::string note;
  g = rig.assemble(rig.open_range(0, 4), &note, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_NE(note.find("unclean stop"), std::string::npos) << note;
  // Stopped before the reactor ran any of the resync.
  ASSERT_EQ(g->state(), GroupState::Resyncing);
  ASSERT_TRUE(g->stop(&err)) << err;
  g.reset();
  for (uint32_t m = 0; m < 4; m++) {
    auto bits = rig.raw_read(m, kBitmapOffset, 4096);
    EXPECT_EQ(bits[0], (1u << 2) | (1u << 5)) << "member " << m << ": the regions still to resync";
    Superblock sb;
    ASSERT_EQ(decode_superblock(rig.raw_read(m, 0, 4096).data(), &sb), DecodeResult::Ok);
    EXPECT_FALSE(sb.flags & kFlagClean);
    EXPECT_TRUE(sb.flags & kFlagResyncPending);
  }
  // Restarted: the two regions resync, no replay, no "unclean stop".
  g = rig.assemble(rig.open_range(0, 4), &note, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_NE(note.find("stopped during a resync: 2 regions still to resync"), std::string::npos) << note;
  EXPECT_EQ(note.find("unclean stop"), std::string::npos) << note;
  EXPECT_EQ(g->state(), GroupState::Resyncing);
  ASSERT_TRUE(g->stop(&err)) << err;  // planned again, still before any of it ran
  g.reset();
  g = rig.assemble(rig.open_range(0, 4), &note, &err);
  ASSERT_TRUE(g) << err;
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::ResyncFinished); }));
  ASSERT_TRUE(g->start_scrub(false, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return has_event(rig, GroupEvent::ScrubFinished); }));
  EXPECT_EQ(g->last_scrub().mismatched_stripes, 0u);
  ASSERT_TRUE(g->stop(&err)) << err;
  g.reset();
  for (uint32_t m = 0; m < 4; m++) {
    auto after = rig.raw_read(m, kBitmapOffset, 4096);
    EXPECT_TRUE(std::all_of(after.begin(), after.end(), [](uint8_t x) { return x == 0; })) << "member " << m;
  }
  // Once more (crash, start, planned stop), then a start with a member
  // gone: the crash's start replayed the log over those regions.
  g = rig.assemble(rig.open_range(0, 4), &note, &err);
  ASSERT_TRUE(g) << err;
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Write, 2 * region_stripes * geo.stripe_data_bytes(), 8192, b.data()));
  g.reset();
  g = rig.assemble(rig.open_range(0, 4), &note, &err);
  ASSERT_TRUE(g) << err;
  ASSERT_TRUE(g->stop(&err)) << err;
  g.reset();
  g = rig.assemble(rig.open_range(0, 3), &note, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_NE(note.find("no resync (degraded)"), std::string::npos) << note;
  EXPECT_EQ(g->state(), GroupState::Degraded);
  AlignedBuf r(8192);
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Read, 2 * region_stripes * geo.stripe_data_bytes(), 8192, r.data()));
  EXPECT_EQ(0, memcmp(r.data(), b.data(), 8192));
  ASSERT_TRUE(g->stop(&err)) << err;
}

// A mirror's dirty region after an unclean stop: its copies may differ (a
// write torn between them), so reads of one block could answer old and new
// by turns. The resync makes every copy the first's (as md's raid1 resync
// does); it once read the first copy and wrote nothing.
TEST(GroupWriteIntent, AMirrorsResyncMakesItsCopiesEqual) {
  for (const auto& [l, members] : {std::pair{Level::R1, 2u}, std::pair{Level::R1, 3u}, std::pair{Level::R10, 4u}}) {
    GroupRig rig(members);
    std::string err;
    auto g = rig.create(config(l), 0, members, &err);
    ASSERT_TRUE(g) << err;
    const Geometry geo = g->volume().geometry();  // a copy: used after the "crash" below
    const uint64_t s = 3;
    AlignedBuf b(geo.stripe_data_bytes());
    fill_random(b.data(), b.size(), 5);
    ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Write, s * geo.stripe_data_bytes(), b.size(), b.data()));
    g.reset();  // crash
    // Torn: the last copy of each strip of stripe s holds other bytes.
    std::vector<uint8_t> junk(geo.strip_bytes, 0x77);
    for (uint32_t i = 0; i < geo.data_strips(); i++)
      rig.raw_write(geo.data_member(s, i, geo.copies() - 1), kMetadataBytes + geo.member_offset(s), junk.data(),
                    junk.size());
    std::string note;
    g = rig.assemble(rig.open_range(0, members), &note, &err);
    ASSERT_TRUE(g) << err;
    EXPECT_NE(note.find("1 dirty region"), std::string::npos) << note;
    ASSERT_TRUE(rig.wait([&] { return has_event(rig, GroupEvent::ResyncFinished); }));
    for (uint32_t i = 0; i < geo.data_strips(); i++)
      for (uint32_t c = 1; c < geo.copies(); c++)
        EXPECT_EQ(rig.raw_read(geo.data_member(s, i, c), kMetadataBytes + geo.member_offset(s), geo.strip_bytes),
                  rig.raw_read(geo.data_member(s, i, 0), kMetadataBytes + geo.member_offset(s), geo.strip_bytes))
            << level_name(l) << " x" << members << " strip " << i << " copy " << c;
    ASSERT_TRUE(g->start_scrub(false, &err)) << err;
    ASSERT_TRUE(rig.wait([&] { return has_event(rig, GroupEvent::ScrubFinished); }));
    EXPECT_EQ(g->last_scrub().mismatched_stripes, 0u) << level_name(l) << " x" << members;
    AlignedBuf got(b.size());  // the first copies held what was written
    ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Read, s * geo.stripe_data_bytes(), got.size(), got.data()));
    EXPECT_EQ(0, memcmp(got.data(), b.data(), b.size())) << level_name(l) << " x" << members;
    ASSERT_TRUE(g->stop(&err)) << err;
  }
}

TEST(GroupWriteIntent, DirtyDegradedStartNeedsForceWithoutTheGuard) {
  GroupRig rig(4);
  std::string err;
  GroupConfig cfg = config(Level::R5);
  cfg.write_hole_guard = false;  // with it (the default) such a group starts by itself: ppl_test
  auto g = rig.create(cfg, 0, 4, &err);
  ASSERT_TRUE(g) << err;
  AlignedBuf b(4096);
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Write, 0, 4096, b.data()));
  g.reset();  // crash with a dirty region
  EXPECT_FALSE(rig.assemble(rig.open_range(0, 3), nullptr, &err));
  EXPECT_NE(err.find("uncleanly while degraded"), std::string::npos) << err;
  EXPECT_TRUE(rig.assemble(rig.open_range(0, 3), nullptr, &err, /*force=*/true)) << err;
}

TEST(GroupInit, BackgroundInitMakesGarbageConsistent) {
  GroupRig rig(5);
  // Old bytes everywhere (no signature): parity is garbage until init.
  std::vector<uint8_t> junk(1u << 20);
  for (uint32_t d = 0; d < 5; d++) {
    fill_random(junk.data(), junk.size(), d);
    for (uint64_t off = 1u << 20; off < (24u << 20); off += junk.size()) rig.raw_write(d, off, junk.data(), junk.size());
  }
  GroupConfig c = config(Level::R6);
  c.assume_zeroed = false;
  std::string err;
  auto g = rig.create(c, 0, 5, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_TRUE(g->init_progress().running);
  EXPECT_FALSE(g->redundancy_claimed());
  EXPECT_EQ(g->state(), GroupState::Initializing);
  EXPECT_EQ(g->redundancy(), Redundancy::Pending);
  Image img(g->volume().size_bytes());
  std::mt19937_64 rng(1);
  img.write_random(rig, g->volume(), rng, 30);  // writes during init
  ASSERT_TRUE(rig.wait([&] { return has_event(rig, GroupEvent::InitFinished); }));
  EXPECT_TRUE(g->redundancy_claimed());
  EXPECT_EQ(g->state(), GroupState::Optimal);
  ASSERT_TRUE(g->start_scrub(false, &err));
  ASSERT_TRUE(rig.wait([&] { return has_event(rig, GroupEvent::ScrubFinished); }));
  EXPECT_EQ(g->last_scrub().mismatched_stripes, 0u);
  ASSERT_TRUE(g->stop(&err));
}

// Whoever sees a task over (dg show --watch) finds its end told: a late
// INIT_FINISHED cut the next scrub's MISMATCH_FOUND events in two passes.
TEST(GroupInit, ATaskReadsAsRunningUntilItsEndIsTold) {
  GroupRig rig(4);
  GroupConfig c = config(Level::R5);
  c.assume_zeroed = false;
  std::string err;
  auto g = rig.create(c, 0, 4, &err);
  ASSERT_TRUE(g) << err;
  // Read the task's state first, then the events: never over and untold.
  auto over_and_told = [&](auto running, GroupEvent::Kind k) {
    return rig.wait([&] {
      if (running()) return false;
      EXPECT_TRUE(has_event(rig, k)) << "the task reads as over before its end is told";
      return true;
    });
  };
  ASSERT_TRUE(over_and_told([&] { return g->init_progress().running || g->state() == GroupState::Initializing; },
                            GroupEvent::InitFinished));
  EXPECT_TRUE(g->redundancy_claimed());
  ASSERT_TRUE(g->start_scrub(false, &err)) << err;
  ASSERT_TRUE(over_and_told([&] { return g->scrub_progress().running; }, GroupEvent::ScrubFinished));
  ASSERT_TRUE(g->stop(&err)) << err;
}

TEST(GroupStates, Raid0HasNoRedundancy) {
  GroupRig rig(3);
  std::string err;
  auto g = rig.create(config(Level::R0), 0, 3, &err);
  ASSERT_TRUE(g) << err;
  uint32_t tolerated = 9;
  EXPECT_EQ(g->state(), GroupState::Optimal);
  EXPECT_EQ(g->redundancy(&tolerated), Redundancy::None);
  EXPECT_EQ(tolerated, 0u);
  EXPECT_FALSE(g->redundancy_claimed());
  ASSERT_TRUE(g->stop(&err)) << err;
}

// The operator's fail reads as the operator's, not as an I/O error.
TEST(GroupStates, OperatorFailSaysSo) {
  GroupRig rig(4);
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  ASSERT_TRUE(g->fail_member(1, &err)) << err;
  GroupEvent e;
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::MemberFailed, &e); }, 10));
  EXPECT_EQ(e.message, "member 1 was failed by the operator");
  ASSERT_TRUE(g->stop(&err)) << err;
}

// A scrub that meets unreadable blocks (a data strip's, a parity strip's)
// rebuilds them from the others, checks the stripe with them and writes
// them back, as md's check corrects read errors: no mismatch, no member
// failed, read_corrected told.
TEST(GroupReadErrors, AScrubCorrectsTheUnreadableBlocksItMeets) {
  for (Level lv : {Level::R5, Level::R6}) {
    SCOPED_TRACE(lv == Level::R5 ? "raid5" : "raid6");
    GroupRig rig(5);
    std::string err;
    auto g = rig.create(config(lv), 0, 5, &err);
    ASSERT_TRUE(g) << err;
    Image img(g->volume().size_bytes());
    img.write_all(rig, g->volume());
    Volume& v = g->volume();
    const Geometry& geo = v.geometry();
    const uint64_t sd = 1, od = v.data_offset() + geo.member_offset(sd) + 8192;
    const uint32_t md = geo.data_member(sd, 0);
    uint64_t sp = 2;
    while (role_member(geo, sp, geo.data_strips()) == md) sp++;
    const uint32_t mp = role_member(geo, sp, geo.data_strips());  // the stripe's first parity strip
    const uint64_t op = v.data_offset() + geo.member_offset(sp);
    const std::vector<uint8_t> parity = rig.raw_read(mp, op, 4096);
    v.member(md)->faults().set_unreadable(od, 4096);
    v.member(mp)->faults().set_unreadable(op, 4096);
    ASSERT_TRUE(g->start_scrub(false, &err)) << err;
    ASSERT_TRUE(rig.wait([&] { return has_event(rig, GroupEvent::ScrubFinished); }));
    EXPECT_EQ(g->last_scrub().mismatched_stripes, 0u);
    EXPECT_EQ(g->last_scrub().stripes_checked, geo.stripes());
    EXPECT_EQ(v.failed_mask(), 0u);
    EXPECT_EQ(g->state(), GroupState::Optimal);
    EXPECT_EQ(v.corrected_reads(md), 1u);
    EXPECT_EQ(v.corrected_reads(mp), 1u);
    EXPECT_FALSE(v.member(md)->faults().unreadable()) << "the data block was not written back";
    EXPECT_FALSE(v.member(mp)->faults().unreadable()) << "the parity block was not written back";
    EXPECT_EQ(0, memcmp(rig.raw_read(md, od, 4096).data(), img.buf.data() + sd * geo.stripe_data_bytes() + 8192, 4096));
    EXPECT_EQ(0, memcmp(rig.raw_read(mp, op, 4096).data(), parity.data(), 4096));
    GroupEvent ev;
    EXPECT_TRUE(rig.find_event(GroupEvent::ReadCorrected, &ev));
    img.check(rig, v);
    ASSERT_TRUE(g->stop(&err)) << err;
  }
}

// A rebuild stopped (event ev) at an unreadable block of `member` in
// stripe s, logical byte off: it says so, the group is not failed, the
// block's read fails and is told, the next block reads right.
static void expect_rebuild_stopped_at(GroupRig& rig, Group& g, const GroupEvent& ev, uint32_t member, uint64_t s,
                                      uint64_t off, Image& img) {
  Volume& v = g.volume();
  EXPECT_NE(ev.message.find(" stopped at stripe"), std::string::npos) << ev.message;
  EXPECT_NE(g.state(), GroupState::Failed);
  EXPECT_TRUE(v.member(member)->faults().unreadable());
  AlignedBuf got(4096);
  EXPECT_NE(0, rig.io(v, IoRequest::Read, off, 4096, got.data()));
  GroupEvent bad;
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::ReadUncorrectable, &bad); }, 10));
  EXPECT_EQ(bad.member, int(member));
  const std::string said = "stripe " + std::to_string(s) + " and the group has no other copy";
  EXPECT_NE(bad.message.find(said), std::string::npos) << bad.message;
  EXPECT_EQ(bad.data_offset, s * v.geometry().stripe_data_bytes()) << "the stripe's bytes, for the daemon to name";
  EXPECT_EQ(bad.data_bytes, v.geometry().stripe_data_bytes());
  ASSERT_EQ(0, rig.io(v, IoRequest::Read, off + 4096, 4096, got.data()));
  EXPECT_EQ(0, memcmp(got.data(), img.buf.data() + off + 4096, 4096));
  EXPECT_FALSE(v.failed());
}

// What a rebuild of member `rebuilt` stopped at such a block of `member`
// (event ev) tells, and the way past it that it tells: the stripes written
// over whole (on parity levels a write of the block alone fails where it
// must rebuild what the rebuilt member held there), then the rebuild
// started again goes on from where it stopped and ends.
static void expect_rebuild_passes_once_written(GroupRig& rig, Group& g, const GroupEvent& ev, uint32_t member,
                                               uint32_t rebuilt, uint64_t s, uint64_t off, Image& img) {
  Volume& v = g.volume();
  const Geometry& geo = v.geometry();
  std::string err;
  ASSERT_GT(ev.data_bytes, 0u) << ev.message;
  EXPECT_EQ(ev.data_offset % geo.stripe_data_bytes(), 0u);
  EXPECT_EQ(ev.data_bytes % geo.stripe_data_bytes(), 0u);
  EXPECT_LE(ev.data_offset, off);
  EXPECT_GT(ev.data_offset + ev.data_bytes, off) << "the bytes it names hold the block";
  const std::string range = std::to_string(ev.data_offset) + "-" + std::to_string(ev.data_offset + ev.data_bytes - 1);
  EXPECT_NE(ev.message.find(range), std::string::npos) << ev.message;
  EXPECT_EQ(ev.member, int(rebuilt)) << ev.message;
  bool holds_data = false;
  for (uint32_t d = 0; geo.has_parity() && d < geo.data_strips(); d++) holds_data |= geo.data_member(s, d) == rebuilt;
  if (holds_data) {
    EXPECT_NE(0, rig.io(v, IoRequest::Write, off, 4096, img.buf.data() + off)) << "the block alone was written";
  }
  // Restarted before the write, it stops there again.
  rig.clear_events();
  ASSERT_TRUE(g.restart_rebuild(&err)) << err;
  GroupEvent again;
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::RebuildFinished, &again); }));
  EXPECT_LE(again.data_offset, off) << again.message;  // from its checkpoint: within the first
  EXPECT_GT(again.data_offset + again.data_bytes, off) << again.message;
  EXPECT_GE(again.data_offset, ev.data_offset) << again.message;
  EXPECT_TRUE(rig.find_event(GroupEvent::RebuildStarted));
  // Copy off what reads, write the bytes back whole.
  img.rewrite(rig, v, ev.data_offset, ev.data_bytes, 99);
  EXPECT_FALSE(v.member(member)->faults().unreadable()) << "the write did not cover the block";
  rig.clear_events();
  ASSERT_TRUE(g.restart_rebuild(&err)) << err;
  ASSERT_TRUE(rig.wait([&] { return g.state() == GroupState::Optimal; }));
  EXPECT_FALSE(rig.find_event(GroupEvent::MemberFailed));
  img.check(rig, v);
  // The rebuilt member holds the right bytes: lose another.
  ASSERT_TRUE(g.fail_member(member, &err)) << err;
  img.check(rig, v);
  EXPECT_FALSE(g.restart_rebuild(&err));
  EXPECT_NE(err.find("no member is rebuilding"), std::string::npos) << err;
}

// A block a survivor cannot read, met by a rebuild: RAID 6 rebuilds around
// it (the survivor stays, the rebuilt member holds the right bytes). A
// degraded RAID 5 cannot: the rebuild stops there and says why, the member
// it needs is kept and the group with it (not failed over one block); its
// other data reads, that block's read fails.
TEST(GroupReadErrors, AnUnreadableBlockMetByARebuild) {
  for (Level lv : {Level::R6, Level::R5}) {
    SCOPED_TRACE(lv == Level::R5 ? "raid5" : "raid6");
    GroupRig rig(6);
    std::string err;
    auto g = rig.create(config(lv), 0, 5, &err);
    ASSERT_TRUE(g) << err;
    Volume& v = g->volume();
    const Geometry& geo = v.geometry();
    Image img(v.size_bytes());
    img.write_all(rig, v);
    ASSERT_TRUE(g->fail_member(2, &err)) << err;
    const uint64_t s = 3;
    const uint32_t role = geo.data_member(s, 0) == 2 ? 1 : 0, sv = geo.data_member(s, role);
    const uint64_t moff = v.data_offset() + geo.member_offset(s);
    const uint64_t off = s * geo.stripe_data_bytes() + uint64_t(role) * geo.strip_bytes;
    v.member(sv)->faults().set_unreadable(moff, 4096);
    ASSERT_TRUE(g->replace_member(2, rig.open(5), false, &err)) << err;
    GroupEvent ev;
    ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::RebuildFinished, &ev); }));
    EXPECT_FALSE(v.failed());
    EXPECT_EQ(v.failed_mask() >> sv & 1, 0u) << "the survivor was failed";
    if (lv == Level::R6) {
      ASSERT_TRUE(rig.wait([&] { return g->state() == GroupState::Optimal; })) << ev.message;
      img.check(rig, v);  // its read corrects the block
      EXPECT_FALSE(v.member(sv)->faults().unreadable());
      // The rebuilt member holds the right bytes: lose two others.
      ASSERT_TRUE(g->fail_member(0, &err)) << err;
      ASSERT_TRUE(g->fail_member(1, &err)) << err;
      img.check(rig, v);
    } else {
      expect_rebuild_stopped_at(rig, *g, ev, sv, s, off, img);
      expect_rebuild_passes_once_written(rig, *g, ev, sv, 2, s, off, img);
    }
    ASSERT_TRUE(g->stop(&err)) << err;
  }
}

// Mirrors: a scrub that meets an unreadable copy reads the others and writes
// it back from them (no mismatch, no member failed). A rebuild reads another
// copy where one is left (RAID 1 x3: the unreadable copy is written back
// too) and otherwise stops there and says why, the last copy kept and the
// group with it; that block's read fails, the rest reads.
TEST(GroupReadErrors, MirrorsReadAroundAnUnreadableCopy) {
  for (const auto& [lv, members] : {std::pair{Level::R1, 2u}, std::pair{Level::R10, 4u}, std::pair{Level::R1, 3u}}) {
    SCOPED_TRACE(std::string(level_name(lv)) + " x" + std::to_string(members));
    GroupRig rig(members + 1);
    std::string err;
    auto g = rig.create(config(lv), 0, members, &err);
    ASSERT_TRUE(g) << err;
    Volume& v = g->volume();
    const Geometry& geo = v.geometry();
    Image img(v.size_bytes());
    img.write_all(rig, v);
    const uint64_t s = 3, moff = v.data_offset() + geo.member_offset(s) + 8192, off = s * geo.stripe_data_bytes() + 8192;
    const uint32_t m0 = geo.data_member(s, 0, 0), m1 = geo.data_member(s, 0, 1);
    // Scrub.
    v.member(m0)->faults().set_unreadable(moff, 4096);
    ASSERT_TRUE(g->start_scrub(false, &err)) << err;
    ASSERT_TRUE(rig.wait([&] { return has_event(rig, GroupEvent::ScrubFinished); }));
    EXPECT_EQ(g->last_scrub().mismatched_stripes, 0u);
    EXPECT_EQ(g->last_scrub().stripes_checked, geo.stripes());
    EXPECT_EQ(v.failed_mask(), 0u);
    EXPECT_EQ(v.corrected_reads(m0), 1u);
    EXPECT_FALSE(v.member(m0)->faults().unreadable()) << "the copy was not written back";
    EXPECT_EQ(0, memcmp(rig.raw_read(m0, moff, 4096).data(), img.buf.data() + off, 4096));
    // Rebuild of m1, the unreadable block on m0.
    rig.clear_events();
    ASSERT_TRUE(g->fail_member(m1, &err)) << err;
    v.member(m0)->faults().set_unreadable(moff, 4096);
    ASSERT_TRUE(g->replace_member(m1, rig.open(members), false, &err)) << err;
    GroupEvent ev;
    ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::RebuildFinished, &ev); }));
    EXPECT_FALSE(v.failed());
    EXPECT_EQ(v.failed_mask() >> m0 & 1, 0u) << "the copy read was failed";
    if (members == 3) {
      ASSERT_TRUE(rig.wait([&] { return g->state() == GroupState::Optimal; })) << ev.message;
      EXPECT_FALSE(v.member(m0)->faults().unreadable()) << "the copy was not written back";
      EXPECT_EQ(v.corrected_reads(m0), 2u);
      // The rebuilt member holds the right bytes: lose the two others.
      for (uint32_t m = 0; m < members; m++) {
        if (m == m1) continue;
        ASSERT_TRUE(g->fail_member(m, &err)) << err;
      }
      img.check(rig, v);
    } else {
      expect_rebuild_stopped_at(rig, *g, ev, m0, s, off, img);
      expect_rebuild_passes_once_written(rig, *g, ev, m0, m1, s, off, img);
    }
    ASSERT_TRUE(g->stop(&err)) << err;
  }
}

// A group over the rig's first `members` drives, created without
// assume_zeroed, whose background init is held near the volume's start
// (4 KiB/s): its last stripes' parity is not trusted yet.
static std::unique_ptr<Group> create_initializing(GroupRig& rig, Level lv, uint32_t members) {
  GroupConfig c = config(lv);
  c.assume_zeroed = false;
  std::string err;
  auto g = rig.create(c, 0, members, &err);
  EXPECT_TRUE(g) << err;
  if (g) g->set_rebuild_rate(4096);
  return g;
}

// Where the parity does not stand for the data yet (above the init's
// checkpoint, as in a dirty region after an unclean stop), an unreadable
// block is not read around: the parity would give bytes nobody wrote. The
// read fails, the member stays, nothing is written back; a write over the
// block makes it readable again.
TEST(GroupReadErrors, AnUnreadableBlockWhereParityIsNotTrustedFailsTheRead) {
  GroupRig rig(4);
  std::string err;
  auto g = create_initializing(rig, Level::R5, 4);
  ASSERT_TRUE(g);
  Volume& v = g->volume();
  const Geometry& geo = v.geometry();
  const uint64_t s = geo.stripes() - 1, off = s * geo.stripe_data_bytes();
  const uint64_t moff = v.data_offset() + geo.member_offset(s);
  // Old bytes on every member there, behind the group's back: the parity is garbage.
  std::vector<uint8_t> junk(geo.strip_bytes);
  for (uint32_t d = 0; d < 4; d++) {
    fill_random(junk.data(), junk.size(), 40 + d);
    rig.raw_write(d, moff, junk.data(), junk.size());
  }
  ASSERT_FALSE(v.parity_trusted(s));
  const uint32_t m = geo.data_member(s, 0);
  v.member(m)->faults().set_unreadable(moff, 4096);
  AlignedBuf got(4096);
  EXPECT_NE(0, rig.io(v, IoRequest::Read, off, 4096, got.data())) << "read around from parity nobody wrote";
  EXPECT_EQ(v.failed_mask(), 0u);
  EXPECT_EQ(v.corrected_reads(m), 0u);
  EXPECT_TRUE(v.member(m)->faults().unreadable()) << "written back from untrusted parity";
  GroupEvent ev;
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::ReadUncorrectable, &ev); }, 10));
  EXPECT_EQ(ev.member, int(m));
  EXPECT_NE(ev.message.find("stripe " + std::to_string(s) + " and its parity is not yet resynced"), std::string::npos)
      << ev.message;
  fill_random(got.data(), 4096, 7);
  ASSERT_EQ(0, rig.io(v, IoRequest::Write, off, 4096, got.data()));
  AlignedBuf back(4096);
  ASSERT_EQ(0, rig.io(v, IoRequest::Read, off, 4096, back.data()));
  EXPECT_EQ(0, memcmp(back.data(), got.data(), 4096));
  EXPECT_EQ(v.failed_mask(), 0u);
  ASSERT_TRUE(g->stop(&err)) << err;
}

// After a resync met the unreadable block at moff on member m (column 8 KiB
// of the second strip of b, written at off): the member kept, the block
// rebuilt from the parity and written back, the data and a scrub right;
// then the group stops.
static void expect_rebuilt_from_parity(GroupRig& rig, Group& g, uint32_t m, uint64_t moff, const AlignedBuf& b,
                                       uint64_t off) {
  Volume& v = g.volume();
  std::string err;
  EXPECT_EQ(v.failed_mask(), 0u);
  EXPECT_EQ(v.corrected_reads(m), 1u);
  EXPECT_FALSE(v.member(m)->faults().unreadable()) << "the block was not written back";
  EXPECT_EQ(0, memcmp(rig.raw_read(m, moff, 4096).data(), b.data() + v.geometry().strip_bytes + 8192, 4096));
  AlignedBuf got(b.size());
  ASSERT_EQ(0, rig.io(v, IoRequest::Read, off, got.size(), got.data()));
  EXPECT_EQ(0, memcmp(got.data(), b.data(), b.size()));
  ASSERT_TRUE(g.start_scrub(false, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return has_event(rig, GroupEvent::ScrubFinished); }));
  EXPECT_EQ(g.last_scrub().mismatched_stripes, 0u);
  ASSERT_TRUE(g.stop(&err)) << err;
}

// An init that meets an unreadable data block above its checkpoint rebuilds
// it from the parity and writes it back, the member kept: a stripe a user
// wrote there is consistent (writes above the checkpoint compute the
// parity whole), so the block gets its data back; the init finishes, the
// data reads right, a scrub is clean. (Before, the member failed.)
TEST(GroupReadErrors, AnInitRebuildsAnUnreadableBlockFromTheParity) {
  for (Level lv : {Level::R5, Level::R6}) {
    SCOPED_TRACE(level_name(lv));
    GroupRig rig(5);
    std::string err;
    auto g = create_initializing(rig, lv, 5);
    ASSERT_TRUE(g);
    Volume& v = g->volume();
    const Geometry& geo = v.geometry();
    const uint64_t s = geo.stripes() - 1, off = s * geo.stripe_data_bytes();
    ASSERT_FALSE(v.parity_trusted(s));
    AlignedBuf b(2 * geo.strip_bytes);
    fill_random(b.data(), b.size(), 21);
    ASSERT_EQ(0, rig.io(v, IoRequest::Write, off, b.size(), b.data()));
    const uint32_t m = geo.data_member(s, 1);
    const uint64_t moff = v.data_offset() + geo.member_offset(s) + 8192;
    v.member(m)->faults().set_unreadable(moff, 4096);
    g->set_rebuild_rate(0);
    ASSERT_TRUE(rig.wait([&] { return has_event(rig, GroupEvent::InitFinished); }));
    ASSERT_NO_FATAL_FAILURE(expect_rebuilt_from_parity(rig, *g, m, moff, b, off));
  }
}

// A region an unclean stop left dirty, on a group with the write-hole guard:
// the start replayed the log over every stripe a write was torn in, so the
// parity there stands for the data, and the resync that meets an unreadable
// data block rebuilds it from the parity and writes it back, the member kept
// (before, the member failed). Without the guard nothing made the dirty
// region consistent: the member fails, as on any read error.
TEST(GroupReadErrors, AResyncAfterTheLogsReplayRebuildsAnUnreadableBlock) {
  for (Level lv : {Level::R5, Level::R6}) {
    for (bool guard : {true, false}) {
      SCOPED_TRACE(std::string(level_name(lv)) + (guard ? " with the guard" : " without the guard"));
      GroupRig rig(5);
      std::string err;
      GroupConfig c = config(lv);
      c.write_hole_guard = guard;
      auto g = rig.create(c, 0, 5, &err);
      ASSERT_TRUE(g) << err;
      const Geometry geo = g->volume().geometry();  // a copy: used after the "crash" below
      const uint64_t s = 3, off = s * geo.stripe_data_bytes();
      AlignedBuf b(2 * geo.strip_bytes);
      fill_random(b.data(), b.size(), 22);
      ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Write, off, b.size(), b.data()));
      g.reset();  // crash: stripe s's region dirty
      std::string note;
      g = rig.assemble(rig.open_range(0, 5), &note, &err);
      ASSERT_TRUE(g) << err;
      EXPECT_NE(note.find("1 dirty region"), std::string::npos) << note;
      Volume& v = g->volume();
      // Before the reactor runs any of the resync (the test thread polls it).
      const uint32_t m = geo.data_member(s, 1);
      const uint64_t moff = v.data_offset() + geo.member_offset(s) + 8192;
      v.member(m)->faults().set_unreadable(moff, 4096);
      ASSERT_TRUE(rig.wait([&] { return has_event(rig, GroupEvent::ResyncFinished) || v.failed_mask(); }));
      if (!guard) {
        EXPECT_EQ(v.failed_mask(), 1ull << m);
        continue;
      }
      ASSERT_NO_FATAL_FAILURE(expect_rebuilt_from_parity(rig, *g, m, moff, b, off));
    }
  }
}

// A block a member cannot read is read around and written back: the group
// says so in an event (from its metadata worker) and stays optimal; the
// data and the member's own copy of the block are right, across a restart.
TEST(GroupReadErrors, AnUnreadableBlockIsCorrectedAndTold) {
  GroupRig rig(4);
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  Image img(g->volume().size_bytes());
  img.write_all(rig, g->volume());
  Volume& v = g->volume();
  const Geometry& geo = v.geometry();
  const uint64_t s = 2, off = s * geo.stripe_data_bytes();
  const uint32_t m = geo.data_member(s, 0);
  const uint64_t moff = v.data_offset() + geo.member_offset(s);
  v.member(m)->faults().set_unreadable(moff, 4096);
  AlignedBuf got(4096);
  ASSERT_EQ(0, rig.io(v, IoRequest::Read, off, 4096, got.data()));
  EXPECT_EQ(0, memcmp(got.data(), img.buf.data() + off, 4096));
  GroupEvent ev;
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::ReadCorrected, &ev); }, 10));
  EXPECT_EQ(ev.member, int(m));
  EXPECT_NE(ev.message.find("written back (1 since"), std::string::npos) << ev.message;
  EXPECT_FALSE(v.member(m)->faults().unreadable());
  EXPECT_EQ(g->state(), GroupState::Optimal);
  ASSERT_TRUE(g->stop(&err)) << err;
  g.reset();
  std::string note;
  g = rig.assemble(rig.open_range(0, 4), &note, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_EQ(g->state(), GroupState::Optimal) << note;
  img.check(rig, g->volume());
  EXPECT_EQ(0, memcmp(rig.raw_read(m, moff, 4096).data(), img.buf.data() + off, 4096)) << "the member's own block";
  ASSERT_TRUE(g->stop(&err));
}
