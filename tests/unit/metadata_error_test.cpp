// Metadata writes that fail (superblocks, the write-intent bitmap, the
// flushes before checkpoints): the member that cannot take one fails, the
// others record that on disk, and an operation that cannot be made safe
// fails with a clear error. Faults come from the drives' injector, which
// reaches the synchronous metadata path (kFailSyncWrites, kFailSyncFlushes)
// while the member's data I/O goes on working. Also: background stripes
// that fail do not count as done.
#include <gtest/gtest.h>

#include "engine/group/group_impl.h"
#include "engine/group/metadata_io.h"
#include "engine/group/superblock.h"
#include "tests/support/group_rig.h"
#include "tests/support/volume_image.h"

using namespace gpuraid;
using namespace gpuraid::test;

namespace {

constexpr uint64_t kRegion = 1u << 20;

GroupConfig config(Level l, uint32_t idle_ms = 5000) {
  GroupConfig c = test_group_config(l, 0, 65536, "dg-meta");
  c.bitmap_idle_ms = idle_ms;
  return c;
}

// The member table as another member's superblock records it on disk.
SlotState on_disk(GroupRig& rig, uint32_t reader, uint32_t slot) {
  SuperblockRead r = read_superblock(*rig.open(reader));
  EXPECT_TRUE(r.ok) << r.why();
  return r.sb.slots[slot].state;
}

bool bitmap_bit(GroupRig& rig, uint32_t drive, uint64_t region) {
  return rig.raw_read(drive, kBitmapOffset + region / 8, 1)[0] >> (region % 8) & 1;
}

MemberState state_of(Group& g, uint32_t m) { return g.members()[m].state; }

}  // namespace

TEST(MetadataErrors, CreateRefusedWhenASuperblockCannotBeWrittenAndLeavesNoneBehind) {
  GroupRig rig(4);
  auto drives = rig.open_range(0, 4);
  // Member 2 is probed for signatures (both superblock copies read) and
  // takes its bitmap (one block: a write and a flush), then no more writes.
  drives[2]->faults().arm_after(4, FaultInjector::kFailSyncWrites);
  std::string err;
  auto g = Group::create(rig.engine(), std::move(drives), config(Level::R5), &err);
  EXPECT_FALSE(g);
  EXPECT_NE(err.find("cannot write the superblock of member 2"), std::string::npos) << err;
  EXPECT_NE(err.find("not created"), std::string::npos) << err;
  for (uint32_t i = 0; i < 4; i++) {
    SuperblockRead r = read_superblock(*rig.open(i));
    EXPECT_FALSE(r.ok) << "drive " << i << " still names the group";
    EXPECT_FALSE(r.any_magic) << "drive " << i;
  }
  EXPECT_FALSE(rig.assemble(rig.open_range(0, 4), nullptr, &err));
  // Nothing half-written is in the way: a create without force works.
  g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  AlignedBuf b(4096);
  EXPECT_EQ(0, rig.io(g->volume(), IoRequest::Write, 0, b.size(), b.data()));
}

TEST(MetadataErrors, AMemberThatCannotRecordAnotherFailureFailsToo) {
  GroupRig rig(6);
  std::string err;
  auto g = rig.create(config(Level::R6), 0, 6, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  Image img(v.size_bytes());
  img.write_all(rig, v);
  v.member(3)->faults().arm(FaultInjector::kFailSyncWrites);
  ASSERT_TRUE(g->fail_member(1, &err)) << err;
  EXPECT_EQ(v.failed_mask(), (1ull << 1) | (1ull << 3));
  EXPECT_EQ(state_of(*g, 3), MemberState::Failed);
  EXPECT_EQ(on_disk(rig, 0, 1), SlotState::Failed);
  EXPECT_EQ(on_disk(rig, 0, 3), SlotState::Failed);
  img.check(rig, v);
  ASSERT_TRUE(g->stop(&err)) << err;
  g.reset();
  std::string note;
  g = rig.assemble(rig.open_range(0, 6), &note, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_EQ(g->volume().failed_mask(), (1ull << 1) | (1ull << 3)) << note;
  img.check(rig, g->volume());
}

TEST(MetadataErrors, AMemberThatCannotRecordAnotherGoingMissingFails) {
  GroupRig rig(6);
  std::string err;
  auto g = rig.create(config(Level::R6), 0, 6, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  Image img(v.size_bytes());
  img.write_all(rig, v);
  v.member(4)->faults().arm(FaultInjector::kFailSyncWrites);
  ASSERT_TRUE(g->mark_member_missing(0, &err)) << err;
  EXPECT_EQ(g->missing_mask(), 1ull << 0);
  EXPECT_EQ(v.failed_mask(), (1ull << 0) | (1ull << 4));
  EXPECT_EQ(on_disk(rig, 1, 0), SlotState::Missing);
  EXPECT_EQ(on_disk(rig, 1, 4), SlotState::Failed);
  img.check(rig, v);
}

TEST(MetadataErrors, FailuresThatCascadePastRedundancyEnd) {
  GroupRig rig(6);
  std::string err;
  auto g = rig.create(config(Level::R6), 0, 6, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  for (uint32_t m : {2u, 3u, 4u}) v.member(m)->faults().arm(FaultInjector::kFailSyncWrites);
  ASSERT_TRUE(g->fail_member(0, &err)) << err;  // each persistence fails one more member, then it stops
  EXPECT_EQ(v.failed_mask(), 0b11101ull);
  EXPECT_EQ(g->state(), GroupState::Failed);
  EXPECT_TRUE(rig.find_event(GroupEvent::GroupFailed));
  AlignedBuf b(65536);
  EXPECT_EQ(-EIO, rig.io(v, IoRequest::Read, 0, b.size(), b.data()));
  EXPECT_EQ(on_disk(rig, 1, 0), SlotState::Failed);  // the survivor recorded every one
  for (uint32_t m : {2u, 3u, 4u}) EXPECT_EQ(on_disk(rig, 1, m), SlotState::Failed) << m;
}

// Parity (RAID 5) and mirror (RAID 1) writes both open the write intent.
class BitmapSet : public ::testing::TestWithParam<Level> {};

TEST_P(BitmapSet, AMemberWhoseBitmapWriteFailsFailsBeforeTheWriteIsAcknowledged) {
  const Level l = GetParam();
  const uint32_t n = l == Level::R1 ? 2 : 4;
  GroupRig rig(n);
  std::string err;
  auto g = rig.create(config(l), 0, n, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  const uint32_t bad = n - 1;
  v.member(bad)->faults().arm(FaultInjector::kFailSyncWrites);
  AlignedBuf w(65536), r(65536);
  fill_random(w.data(), w.size(), 9);
  ASSERT_EQ(0, rig.io(v, IoRequest::Write, 0, w.size(), w.data()));  // region 0 was clean
  EXPECT_EQ(v.failed_mask(), 1ull << bad);
  for (uint32_t m = 0; m < bad; m++) {
    EXPECT_TRUE(bitmap_bit(rig, m, 0)) << "member " << m;
    EXPECT_EQ(on_disk(rig, m, bad), SlotState::Failed);
  }
  ASSERT_EQ(0, rig.io(v, IoRequest::Read, 0, r.size(), r.data()));
  EXPECT_EQ(0, memcmp(w.data(), r.data(), w.size()));
  g.reset();  // a crash: the survivors' bitmaps say what to resync
  g = rig.assemble(rig.open_range(0, n), nullptr, &err, /*force=*/true);
  ASSERT_TRUE(g) << err;
  EXPECT_EQ(g->volume().failed_mask(), 1ull << bad);
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Read, 0, r.size(), r.data()));
  EXPECT_EQ(0, memcmp(w.data(), r.data(), w.size()));
}

TEST_P(BitmapSet, PastRedundancyTheWriteFailsWithEio) {
  const Level l = GetParam();
  const uint32_t n = l == Level::R1 ? 2 : 4;
  GroupRig rig(n);
  std::string err;
  auto g = rig.create(config(l), 0, n, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  v.member(0)->faults().arm(FaultInjector::kFailSyncWrites);
  v.member(1)->faults().arm(FaultInjector::kFailSyncWrites);
  AlignedBuf w(65536);
  EXPECT_EQ(-EIO, rig.io(v, IoRequest::Write, 2 * kRegion, w.size(), w.data()));
  EXPECT_EQ(g->state(), GroupState::Failed);
}

INSTANTIATE_TEST_SUITE_P(Levels, BitmapSet, ::testing::Values(Level::R5, Level::R1),
                         [](const auto& i) { return std::string(level_name(i.param)); });

TEST(MetadataErrors, AMemberThatCannotClearItsBitmapFails) {
  GroupRig rig(4);
  std::string err;
  auto g = rig.create(config(Level::R5, /*idle_ms=*/100), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  AlignedBuf w(65536), r(65536);
  fill_random(w.data(), w.size(), 4);
  ASSERT_EQ(0, rig.io(v, IoRequest::Write, 0, w.size(), w.data()));
  ASSERT_TRUE(bitmap_bit(rig, 1, 0));
  v.member(1)->faults().arm(FaultInjector::kFailSyncWrites);  // flushes still work
  ASSERT_TRUE(rig.wait([&] { return v.failed_mask() != 0; }, 10)) << "the failed clear went unnoticed";
  v.wait_persisted();  // in effect at once, on disk once the worker wrote it
  EXPECT_EQ(v.failed_mask(), 1ull << 1);
  ASSERT_TRUE(rig.wait([&] { return g->impl().wi->dirty_regions() == 0; }, 10));
  for (uint32_t m : {0u, 2u, 3u}) {
    EXPECT_FALSE(bitmap_bit(rig, m, 0)) << "member " << m;
    EXPECT_EQ(on_disk(rig, m, 1), SlotState::Failed);
  }
  ASSERT_EQ(0, rig.io(v, IoRequest::Read, 0, r.size(), r.data()));
  EXPECT_EQ(0, memcmp(w.data(), r.data(), w.size()));
}

TEST(MetadataErrors, ARebuildingMemberThatCannotFlushForItsCheckpointFails) {
  GroupRig rig(5);
  std::string err;
  // Regions stay dirty throughout: no bitmap clearing (which flushes too) gets there first.
  auto g = rig.create(config(Level::R5, /*idle_ms=*/600000), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  Image img(v.size_bytes());
  img.write_all(rig, v);
  ASSERT_TRUE(g->fail_member(1, &err));
  g->set_rebuild_rate(4u << 20);  // several checkpoints before the end
  ASSERT_TRUE(g->replace_member(1, rig.open(4), false, &err)) << err;
  // Not the first failure's event (fail_member above): this one's.
  rig.clear_events();
  v.member(1)->faults().arm(FaultInjector::kFailSyncFlushes);  // the new drive
  // The event goes out once the failure is on disk (it takes effect in memory first).
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::MemberFailed); }, 20)) << "the failed flush went unnoticed";
  ASSERT_TRUE(rig.wait([&] { return !g->rebuild_progress().running; }, 10));
  EXPECT_EQ(v.rebuilding_member(), -1);
  EXPECT_EQ(g->state(), GroupState::Degraded);
  EXPECT_EQ(on_disk(rig, 0, 1), SlotState::Failed);
  img.check(rig, v);
}

TEST(MetadataErrors, AMemberThatCannotFlushForTheInitCheckpointFails) {
  GroupRig rig(4);
  GroupConfig c = config(Level::R5);
  c.assume_zeroed = false;
  std::string err;
  auto g = rig.create(c, 0, 4, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  g->set_rebuild_rate(4u << 20);  // init too: several checkpoints before the end
  v.member(2)->faults().arm(FaultInjector::kFailSyncFlushes);
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::MemberFailed); }, 20)) << "the failed flush went unnoticed";
  EXPECT_EQ(v.failed_mask(), 1ull << 2);
  EXPECT_EQ(on_disk(rig, 0, 2), SlotState::Failed);
  g->set_rebuild_rate(0);
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::InitFinished); }));
  SuperblockRead r = read_superblock(*rig.open(0));
  EXPECT_TRUE(r.sb.flags & kFlagInitialized);
}

TEST(MetadataErrors, AScrubRepairWhoseBitmapWriteFailsFailsThatMemberAndKeepsDataCorrect) {
  GroupRig rig(6);
  std::string err;
  auto g = rig.create(config(Level::R6, /*idle_ms=*/100), 0, 6, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  const Geometry& geo = v.geometry();
  Image img(v.size_bytes());
  img.write_all(rig, v);
  ASSERT_TRUE(rig.wait([&] { return g->impl().wi->dirty_regions() == 0; }, 10));  // the repair dirties region 0 again
  const uint32_t bad = geo.data_member(3, 1);
  std::vector<uint8_t> junk(512, 0xee);
  rig.raw_write(bad, kMetadataBytes + 3ull * geo.strip_bytes + 4096, junk.data(), junk.size());
  v.member(bad)->faults().arm(FaultInjector::kFailSyncWrites);
  ASSERT_TRUE(g->start_scrub(true, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::ScrubFinished); }));
  EXPECT_EQ(v.failed_mask(), 1ull << bad);
  EXPECT_EQ(on_disk(rig, bad == 0 ? 1 : 0, bad), SlotState::Failed);
  img.check(rig, v);  // the corrupt strip is rebuilt from the others
}

TEST(MetadataErrors, StopFailsAMemberThatCannotClearItsBitmapAndTheRestStopsClean) {
  GroupRig rig(4);
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  Image img(g->volume().size_bytes());
  img.write_all(rig, g->volume());
  g->volume().member(3)->faults().arm(FaultInjector::kFailSyncWrites);
  EXPECT_FALSE(g->stop(&err));
  EXPECT_NE(err.find("member 3 failed"), std::string::npos) << err;
  g.reset();
  std::string note;
  g = rig.assemble(rig.open_range(0, 4), &note, &err);  // clean: no force needed though degraded
  ASSERT_TRUE(g) << err;
  EXPECT_EQ(g->volume().failed_mask(), 1ull << 3) << note;
  EXPECT_EQ(note.find("dirty"), std::string::npos) << note;
  img.check(rig, g->volume());
}

TEST(MetadataErrors, AssembleFailsAMemberThatCannotTakeTheNewSuperblock) {
  GroupRig rig(4);
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  Image img(g->volume().size_bytes());
  img.write_all(rig, g->volume());
  ASSERT_TRUE(g->stop(&err)) << err;
  g.reset();
  auto drives = rig.open_range(0, 4);
  drives[2]->faults().arm(FaultInjector::kFailSyncWrites);
  std::string note;
  g = rig.assemble(std::move(drives), &note, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_NE(note.find("member 2 failed"), std::string::npos) << note;
  EXPECT_EQ(g->volume().failed_mask(), 1ull << 2);
  EXPECT_EQ(on_disk(rig, 0, 2), SlotState::Failed);
  img.check(rig, g->volume());
}

TEST(MetadataErrors, ReplaceRefusedWhenTheNewDriveCannotTakeTheSuperblock) {
  GroupRig rig(5);
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  Image img(g->volume().size_bytes());
  img.write_all(rig, g->volume());
  ASSERT_TRUE(g->fail_member(1, &err));
  auto fresh = rig.open(4);
  // Probed (two superblock reads), its write-hole log wiped (the area is
  // under 1 MiB here: a write and a flush), takes its bitmap (a write and a
  // flush), not its superblock.
  fresh->faults().arm_after(6, FaultInjector::kFailSyncWrites);
  EXPECT_FALSE(g->replace_member(1, std::move(fresh), false, &err));
  EXPECT_NE(err.find("member 1"), std::string::npos) << err;
  EXPECT_EQ(g->state(), GroupState::Degraded);
  EXPECT_EQ(g->rebuild_progress().running, false);
  EXPECT_EQ(on_disk(rig, 0, 1), SlotState::Failed);
  img.check(rig, g->volume());
  // A good drive still can.
  ASSERT_TRUE(g->replace_member(1, rig.open(4), false, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::RebuildFinished); }));
  EXPECT_EQ(g->state(), GroupState::Optimal);
}

TEST(MetadataErrors, ASpareThatCannotTakeItsSuperblockIsRefused) {
  GroupRig rig(5);
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  auto spare = rig.open(4);
  spare->faults().arm(FaultInjector::kFailSyncWrites);
  EXPECT_FALSE(g->add_spare(std::move(spare), false, &err));
  EXPECT_NE(err.find("spare"), std::string::npos) << err;
  EXPECT_EQ(g->spare_count(), 0u);
  for (uint32_t s = 4; s < kMaxSlots; s++) EXPECT_EQ(on_disk(rig, 0, s), SlotState::Empty) << s;
}

TEST(MetadataErrors, AMissingMemberThatCannotTakeItsSuperblockStaysMissing) {
  GroupRig rig(6);
  std::string err;
  auto g = rig.create(config(Level::R6), 0, 6, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  ASSERT_TRUE(g->mark_member_missing(2, &err)) << err;
  v.member(2)->faults().arm(FaultInjector::kFailSyncWrites);
  EXPECT_FALSE(g->reinstate_member(2, &err));
  EXPECT_NE(err.find("cannot come back"), std::string::npos) << err;
  EXPECT_EQ(g->missing_mask(), 1ull << 2);
  EXPECT_EQ(v.rebuilding_member(), -1);
  EXPECT_EQ(on_disk(rig, 0, 2), SlotState::Missing);
}

// Background stripes that fail (here: the group failed under them) do not
// count as done: init's checkpoint and resync's regions stay, a scrub stops
// and says so.
TEST(BackgroundErrors, InitStopsBelowAFailedStripeAndNeverClaimsInitialized) {
  GroupRig rig(4);
  GroupConfig c = config(Level::R5);
  c.assume_zeroed = false;
  std::string err;
  auto g = rig.create(c, 0, 4, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  g->set_rebuild_rate(2u << 20);
  ASSERT_TRUE(rig.wait([&] { return g->init_progress().fraction > 0.05; }));
  v.fail_member(1, -EIO);
  v.fail_member(2, -EIO);  // past redundancy: every init stripe from here fails
  g->set_rebuild_rate(0);
  GroupEvent ev;
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::InitFinished, &ev); }, 20));
  EXPECT_NE(ev.message.find("stopped"), std::string::npos) << ev.message;
  EXPECT_FALSE(g->redundancy_claimed());
  rig.wait([] { return false; }, 1.2);  // a checkpoint tick
  SuperblockRead r = read_superblock(*rig.open(0));
  EXPECT_FALSE(r.sb.flags & kFlagInitialized);
  EXPECT_LT(r.sb.init_checkpoint, g->geometry().stripes());
}

TEST(BackgroundErrors, AScrubWhoseStripesFailStopsAndSaysSo) {
  GroupRig rig(4);
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  g->set_scrub_rate(2u << 20);
  ASSERT_TRUE(g->start_scrub(false, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return g->scrub_progress().fraction > 0.05; }));
  v.fail_member(1, -EIO);
  v.fail_member(2, -EIO);
  g->set_scrub_rate(0);
  GroupEvent ev;
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::ScrubFinished, &ev); }, 20));
  EXPECT_NE(ev.message.find("failed"), std::string::npos) << ev.message;
  EXPECT_LT(g->last_scrub().stripes_checked, g->geometry().stripes());
}

TEST(BackgroundErrors, AResyncWhoseStripesFailLeavesItsRegionsDirty) {
  GroupRig rig(4);
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  AlignedBuf b(4096);
  for (uint64_t r = 0; r < 8; r++) ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Write, r * 3 * kRegion, b.size(), b.data()));
  g.reset();  // a crash with dirty regions
  g = rig.assemble(rig.open_range(0, 4), nullptr, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  g->set_rebuild_rate(1u << 20);  // resync too
  ASSERT_TRUE(rig.wait([&] { return g->resync_progress().done_bytes > 0; }));
  v.fail_member(1, -EIO);
  v.fail_member(2, -EIO);
  g->set_rebuild_rate(0);
  GroupEvent ev;
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::ResyncFinished, &ev); }, 20));
  EXPECT_NE(ev.message.find("stopped"), std::string::npos) << ev.message;
  EXPECT_GT(g->impl().wi->suspect_regions(), 0u);
  EXPECT_FALSE(g->redundancy_claimed());
}
