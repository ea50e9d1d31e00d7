// The write-hole guard (engine/ppl/): torn stripes made on purpose (the
// fault injector drops the data writes of one member, as a crash between
// the member writes of a stripe would leave them) in RAID 5, RAID 6 and ec
// groups with members failed before the crash or lost with it. After the
// crash the group starts without force and every block that was not being
// written reads back, those of the missing members included.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "engine/clock.h"
#include "engine/group/superblock.h"
#include "engine/ppl/ppl_log.h"
#include "engine/planner.h"
#include "tests/support/group_rig.h"
#include "tests/support/volume_image.h"

using namespace gpuraid;
using namespace gpuraid::test;

namespace {

GroupConfig config(Level l, uint32_t parity = 0) { return test_group_config(l, parity, 65536, "dg-ppl"); }

// A batch piece in a member's log ring (format 4), as replay finds it.
struct FoundPiece {
  uint64_t off;  // member byte offset of its header
  PplBatchHeader h;
  std::vector<PplEntry> entries;
};
std::vector<FoundPiece> pieces_on(GroupRig& rig, uint32_t member, const PplLayout& l, uint32_t strip) {
  std::vector<FoundPiece> out;
  const PplRing ring = ppl_ring(l, kPplFormatTailed);
  const std::vector<uint8_t> area = rig.raw_read(member, ring.offset, ring.bytes);
  for (size_t o = 0; o + 4096 <= area.size(); o += 4096) {
    FoundPiece f;
    f.off = ring.offset + o;
    if (decode_ppl_batch_header(area.data() + o, area.size() - o, strip, &f.h, &f.entries, nullptr))
      out.push_back(std::move(f));
  }
  return out;
}
// The newest piece on `member` with an entry for `stripe` (nullptr: none).
const FoundPiece* newest_with(const std::vector<FoundPiece>& ps, uint64_t stripe, const PplEntry** entry = nullptr) {
  const FoundPiece* best = nullptr;
  for (const FoundPiece& p : ps)
    for (const PplEntry& e : p.entries)
      if (e.stripe == stripe && (!best || p.h.seq > best->h.seq)) {
        best = &p;
        if (entry) *entry = &e;
      }
  return best;
}

// Drives 0..n-1 but those with a bit in `missing`, for assemble().
std::vector<std::unique_ptr<Drive>> open_present(GroupRig& rig, uint32_t n, uint64_t missing) {
  std::vector<std::unique_ptr<Drive>> v;
  for (uint32_t i = 0; i < n; i++)
    if (!(missing >> i & 1)) v.push_back(rig.open(i));
  return v;
}

struct Case {
  const char* name;
  Level level;
  uint32_t parity, drives;
  // Members missing at the restart, per sub-group (one entry for RAID 5/6/ec).
  std::vector<uint32_t> lose;
  bool fail_before;  // failed before the torn write (else lost with the crash)
  // Roles whose members drop their writes (the crash came before them):
  // data role 1 by default; parity roles (k, k+1) leave the new data
  // beside the old parity, the classic write hole.
  std::vector<uint32_t> torn_roles = {1};
  DeclusteredShape declustered = {};  // draid5/6
};

// Writes `ranges` of the image with the stripe writes (not the log
// entries) to the `torn` members dropped, then "crashes" (no stop).
void torn_write(GroupRig& rig, std::unique_ptr<Group>& g, Image& img,
                const std::vector<std::pair<uint64_t, uint64_t>>& ranges, const std::vector<Drive*>& torn) {
  for (Drive* d : torn) d->faults().arm(FaultInjector::kDropPlainWrites);  // the log entries land
  g->volume().ppl->freeze_reclaim_for_crash_test();  // the writes stand for ones in flight at the crash
  for (auto [off, len] : ranges) {
    fill_random(img.buf.data() + off, len, off + 1);
    ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Write, off, len, img.buf.data() + off));
  }
  for (Drive* d : torn) d->faults().clear();
  g.reset();  // crash: no clean stop
}

// Every block reads back as written, except those of the torn writes
// (ranges[t], whose content before it is before[t]): old or new there,
// never anything else.
void check_torn_image(const uint8_t* got, Image& img, const Geometry& geo,
                      const std::vector<std::pair<uint64_t, uint64_t>>& ranges,
                      const std::vector<std::vector<uint8_t>>& before) {
  auto in_torn = [&](uint64_t i) -> int {
    for (size_t t = 0; t < ranges.size(); t++)
      if (i >= ranges[t].first && i < ranges[t].first + ranges[t].second) return int(t);
    return -1;
  };
  for (uint64_t i = 0; i < img.buf.size(); i += 4096) {
    const int t = in_torn(i);
    if (t < 0) {
      // Outside the torn writes: exactly as written before (the lost
      // members' strips included, reconstructed from the replayed parity).
      ASSERT_EQ(0, memcmp(got + i, img.buf.data() + i, 4096))
          << "block at " << i << " (stripe " << i / geo.stripe_data_bytes() << ") was not being written";
      continue;
    }
    const bool is_new = memcmp(got + i, img.buf.data() + i, 4096) == 0;
    const bool is_old = memcmp(got + i, before[t].data() + (i - ranges[t].first), 4096) == 0;
    EXPECT_TRUE(is_new || is_old) << "block at " << i << " of the torn write is neither old nor new";
  }
}

// A group of n members with its image written, then stripe 5 torn as
// run_case tears it (data role 0 from column 8 KiB and role 1 up to it,
// role 1's member dropping its writes) and a crash: what the tests of
// medium errors at the restart start from.
struct TornStripe {
  static constexpr uint64_t kStripe = 5;
  Geometry geo;
  uint64_t data_offset = 0;
  PplLayout layout;
  std::unique_ptr<Image> img;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // the torn write
  std::vector<std::vector<uint8_t>> before;           // what it wrote over
};
void make_torn_stripe(GroupRig& rig, Level lv, uint32_t n, TornStripe* t) {
  std::string err;
  auto g = rig.create(config(lv), 0, n, &err);
  ASSERT_TRUE(g) << err;
  t->geo = g->volume().geometry();
  t->data_offset = g->volume().data_offset();
  t->layout = g->volume().ppl->layout();
  t->img = std::make_unique<Image>(16 * t->geo.stripe_data_bytes());
  t->img->write_all(rig, g->volume());
  const uint64_t off = TornStripe::kStripe * t->geo.stripe_data_bytes() + 8192, len = t->geo.strip_bytes;
  t->ranges = {{off, len}};
  t->before = {{t->img->buf.data() + off, t->img->buf.data() + off + len}};
  Drive* torn = g->volume().member(role_member(t->geo, TornStripe::kStripe, 1));
  ASSERT_NO_FATAL_FAILURE(torn_write(rig, g, *t->img, t->ranges, {torn}));
}

// Every block of the volume reads as check_torn_image wants, then a scrub
// finds nothing, and the group stops.
void check_and_scrub(GroupRig& rig, std::unique_ptr<Group>& g, const TornStripe& t) {
  std::string err;
  AlignedBuf got(t.img->buf.size());
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Read, 0, t.img->buf.size(), got.data()));
  ASSERT_NO_FATAL_FAILURE(check_torn_image(got.data(), *t.img, t.geo, t.ranges, t.before));
  ASSERT_TRUE(g->start_scrub(false, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::ScrubFinished); }));
  EXPECT_EQ(g->last_scrub().mismatched_stripes, 0u);
  ASSERT_TRUE(g->stop(&err)) << err;
}

void run_case(const Case& c) {
  SCOPED_TRACE(c.name);
  GroupRig rig(c.drives);
  std::string err, note;
  GroupConfig cfg = config(c.level, c.parity);
  cfg.subgroups = uint32_t(c.lose.size() > 1 ? c.lose.size() : 0);
  cfg.declustered = c.declustered;
  auto g = rig.create(cfg, 0, c.drives, &err);
  ASSERT_TRUE(g) << err;
  ASSERT_NE(g->volume().ppl, nullptr) << "the guard is on by default";
  const Geometry geo = g->volume().geometry();
  const uint32_t k = geo.data_strips();
  Image img(16 * geo.stripe_data_bytes());
  img.write_all(rig, g->volume());
  // One torn stripe per sub-group, 5 .. 5+G-1 (stripe s lives in sub-group
  // s mod G): the torn write goes to data role 0 (8 KiB at column 8 KiB) and
  // role 1 (4 KiB) in one request, merged or not; role 1's member drops its
  // writes. The members lost in a sub-group are data roles of its torn
  // stripe that the write does not touch.
  uint64_t lost = 0;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  std::vector<std::vector<uint8_t>> before;
  std::vector<Drive*> torn;
  for (uint64_t stripe = 5; stripe < 5 + geo.subgroups; stripe++) {
    const uint32_t want = c.lose[stripe % geo.subgroups];
    uint64_t here = 0;
    for (uint32_t role = k - 1; role >= 2 && uint32_t(__builtin_popcountll(here)) < want; role--)
      here |= 1ull << role_member(geo, stripe, role);
    ASSERT_EQ(uint32_t(__builtin_popcountll(here)), want) << "too few untouched data roles in stripe " << stripe;
    lost |= here;
    const uint64_t off = stripe * geo.stripe_data_bytes() + 8192;
    const uint64_t len = geo.strip_bytes;  // from role 0 column 8K into role 1 column 8K
    ranges.push_back({off, len});
    before.emplace_back(img.buf.data() + off, img.buf.data() + off + len);
    for (uint32_t role : c.torn_roles) torn.push_back(g->volume().member(role_member(geo, stripe, role)));
  }
  if (c.fail_before) {
    for (uint64_t s = lost; s; s &= s - 1) ASSERT_TRUE(g->fail_member(uint32_t(__builtin_ctzll(s)), &err)) << err;
  }
  ASSERT_NO_FATAL_FAILURE(torn_write(rig, g, img, ranges, torn));

  std::vector<std::unique_ptr<Drive>> drives = open_present(rig, c.drives, lost);
  g = rig.assemble(std::move(drives), &note, &err);
  ASSERT_TRUE(g) << "an unclean stop while degraded must start without force: " << err;
  EXPECT_NE(note.find("write-hole log"), std::string::npos) << note;
  AlignedBuf got(img.buf.size());
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Read, 0, img.buf.size(), got.data()));
  ASSERT_NO_FATAL_FAILURE(check_torn_image(got.data(), img, geo, ranges, before));
  // No resync follows the replay, in any sub-group: the parity of a torn
  // stripe with failures to spare must now match its data. Fail one more
  // untouched data member there and read everything again.
  uint64_t more = 0;
  for (uint64_t stripe = 5; stripe < 5 + geo.subgroups; stripe++) {
    if (c.lose[stripe % geo.subgroups] >= geo.parity) continue;
    for (uint32_t role = k - 1; role >= 2; role--) {
      const uint32_t m = role_member(geo, stripe, role);
      if (!(lost >> m & 1)) {
        more |= 1ull << m;
        break;
      }
    }
  }
  if (more) {
    for (uint64_t s = more; s; s &= s - 1) ASSERT_TRUE(g->fail_member(uint32_t(__builtin_ctzll(s)), &err)) << err;
    AlignedBuf again(img.buf.size());
    ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Read, 0, img.buf.size(), again.data()));
    for (uint64_t i = 0; i < img.buf.size(); i += 4096)
      ASSERT_EQ(0, memcmp(again.data() + i, got.data() + i, 4096))
          << "block at " << i << " (stripe " << i / geo.stripe_data_bytes() << ") reads otherwise with one more member failed";
  }
  ASSERT_TRUE(g->stop(&err)) << err;
}

}  // namespace

TEST(WriteHoleGuard, Raid5MemberFailedBeforeTheCrash) { run_case({"raid5", Level::R5, 0, 4, {1}, true}); }
TEST(WriteHoleGuard, Raid5MemberLostWithTheCrash) { run_case({"raid5 lost", Level::R5, 0, 4, {1}, false}); }
TEST(WriteHoleGuard, Raid6TwoMembersFailedBeforeTheCrash) { run_case({"raid6", Level::R6, 0, 6, {2}, true}); }
TEST(WriteHoleGuard, Raid6TwoMembersLostWithTheCrash) { run_case({"raid6 lost", Level::R6, 0, 6, {2}, false}); }
TEST(WriteHoleGuard, EcTwoMembersFailedBeforeTheCrash) { run_case({"ec 4+2", Level::EC, 2, 6, {2}, true}); }
// The crash came after the data writes and before the parity writes.
// Every member present at the restart: the log is replayed too (not only
// the resync that follows), so a member failing before that resync reaches
// a torn stripe reconstructs right (unclean_stop_test --fail-in-resync).
TEST(WriteHoleGuard, Raid5ParityTornEveryMemberPresent) {
  run_case({"raid5 all present", Level::R5, 0, 4, {0}, false, {3}});
}
TEST(WriteHoleGuard, Raid6BothParityTornEveryMemberPresent) {
  run_case({"raid6 all present", Level::R6, 0, 6, {0}, false, {4, 5}});
}
// A block of a torn stripe that its member cannot read after the crash (a
// drive may lose the sector it was writing when the power went): the
// replay takes it as a lost member's block, rebuilt from the parity (it was
// being written: old or new), instead of failing the start, which left the
// group unable to start at all. The resync that follows reads it around
// and writes it back; the member stays.
TEST(WriteHoleGuard, AnUnreadableBlockOfATornStripeDoesNotStopTheStart) {
  for (const auto& [lv, n] : {std::pair{Level::R5, 4u}, std::pair{Level::R6, 6u}}) {
    SCOPED_TRACE(level_name(lv));
    GroupRig rig(n);
    TornStripe t;
    ASSERT_NO_FATAL_FAILURE(make_torn_stripe(rig, lv, n, &t));
    // Role 0's block at column 8 KiB (its new bytes landed) cannot be read now.
    const uint32_t m = role_member(t.geo, TornStripe::kStripe, 0);
    std::vector<std::unique_ptr<Drive>> drives = rig.open_range(0, n);
    drives[m]->faults().set_unreadable(t.data_offset + t.geo.member_offset(TornStripe::kStripe) + 8192, 4096);
    std::string err, note;
    auto g = rig.assemble(std::move(drives), &note, &err);
    ASSERT_TRUE(g) << "one unreadable block must not stop the start: " << err;
    EXPECT_NE(note.find("1 unreadable block of them"), std::string::npos) << note;
    Volume& v = g->volume();
    ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::ResyncFinished) || v.failed_mask(); }));
    EXPECT_EQ(v.failed_mask(), 0u);
    EXPECT_EQ(v.corrected_reads(m), 1u);
    EXPECT_FALSE(v.member(m)->faults().unreadable()) << "the block was not written back";
    ASSERT_NO_FATAL_FAILURE(check_and_scrub(rig, g, t));
  }
}

// A log a member cannot read after the crash (a medium error in its ring):
// which stripes the stop tore is not known, so the start goes on as for a
// group without the guard instead of failing (which left the group unable
// to start): a member missing, it is refused without force and says why;
// every member present, the dirty regions are resynced, their parity
// untrusted until then (superblock flag bit 5, cleared once that resync
// has ended).
TEST(WriteHoleGuard, AnUnreadableLogFallsBackToTheResync) {
  GroupRig rig(4);
  TornStripe t;
  ASSERT_NO_FATAL_FAILURE(make_torn_stripe(rig, Level::R5, 4, &t));
  const Geometry& geo = t.geo;
  const uint64_t stripe = TornStripe::kStripe;
  const PplRing ring = ppl_ring(t.layout, kPplFormatTailed);
  const uint32_t pm = role_member(geo, stripe, geo.data_strips());
  std::string err, note;
  auto flags = [&] {
    Superblock sb;
    EXPECT_EQ(decode_superblock(rig.raw_read(pm, 0, 4096).data(), &sb), DecodeResult::Ok);
    return sb.flags;
  };
  {
    std::vector<std::unique_ptr<Drive>> drives = open_present(rig, 4, 1ull << role_member(geo, stripe, 2));
    for (auto& d : drives)
      if (d->path() == rig.path(pm)) d->faults().set_unreadable(ring.offset, 4096);
    EXPECT_FALSE(rig.assemble(std::move(drives), &note, &err)) << "degraded, with no log to trust";
    EXPECT_NE(err.find("start with force"), std::string::npos) << err;
    EXPECT_NE(err.find("its write-hole log cannot be read"), std::string::npos) << err;
  }
  std::vector<std::unique_ptr<Drive>> drives = rig.open_range(0, 4);
  drives[pm]->faults().set_unreadable(ring.offset, 4096);
  auto g = rig.assemble(std::move(drives), &note, &err);
  ASSERT_TRUE(g) << "an unreadable log must not stop the start: " << err;
  EXPECT_NE(note.find("its write-hole log cannot be read"), std::string::npos) << note;
  EXPECT_NE(note.find("1 dirty region will be resynced"), std::string::npos) << note;
  EXPECT_TRUE(flags() & kFlagDirtyUntrusted);
  EXPECT_FALSE(g->volume().parity_trusted(stripe)) << "no log made the torn stripe consistent";
  // Another crash before that resync ran: this start's replay (of a log
  // it can read, whose entries of the first run are below its floor) does
  // not make the first stop's torn stripe consistent, and says nothing of it.
  g.reset();
  g = rig.assemble(rig.open_range(0, 4), &note, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_NE(note.find("made consistent from the write-hole log"), std::string::npos) << note;
  EXPECT_TRUE(flags() & kFlagDirtyUntrusted);
  EXPECT_FALSE(g->volume().parity_trusted(stripe)) << "trusted after a replay that did not cover it";
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::ResyncFinished); }));
  EXPECT_EQ(g->volume().failed_mask(), 0u);
  EXPECT_TRUE(rig.wait([&] { return !(flags() & kFlagDirtyUntrusted); }, 10)) << "kept after the resync ended";
  ASSERT_NO_FATAL_FAILURE(check_and_scrub(rig, g, t));
}

TEST(WriteHoleGuard, Raid5ParityWriteTorn) { run_case({"raid5 parity torn", Level::R5, 0, 4, {1}, true, {3}}); }
TEST(WriteHoleGuard, Raid6BothParityWritesTorn) {
  run_case({"raid6 P and Q torn", Level::R6, 0, 6, {2}, true, {4, 5}});
}
TEST(WriteHoleGuard, Raid6QWriteTornAndADataWrite) {
  run_case({"raid6 Q and data 1 torn", Level::R6, 0, 6, {2}, true, {1, 5}});
}
// RAID 50/60: a torn stripe in each sub-group (the log entries and the
// members a stripe names are its own sub-group's), members lost in one or
// both: a sub-group's losses never touch the other's replay.
// RAID 50: 2 sub-groups of 4 (k = 3); RAID 60: 2 sub-groups of 6 (k = 4).
TEST(WriteHoleGuard, Raid50OneMemberFailedInEachSubgroup) {
  run_case({"raid50 1+1", Level::R50, 0, 8, {1, 1}, true});
}
TEST(WriteHoleGuard, Raid50OneMemberLostInEachSubgroupWithTheCrash) {
  run_case({"raid50 1+1 lost", Level::R50, 0, 8, {1, 1}, false});
}
TEST(WriteHoleGuard, Raid50MemberFailedInOneSubgroupParityTorn) {
  run_case({"raid50 0+1 parity torn", Level::R50, 0, 8, {0, 1}, true, {3}});
}
TEST(WriteHoleGuard, Raid60OneMemberFailedInEachSubgroup) {
  run_case({"raid60 1+1", Level::R60, 0, 12, {1, 1}, true});
}
TEST(WriteHoleGuard, Raid60TwoMembersFailedInOneSubgroup) {
  run_case({"raid60 2+0", Level::R60, 0, 12, {2, 0}, true});
}
TEST(WriteHoleGuard, Raid60TwoMembersLostInOneSubgroupWithTheCrash) {
  run_case({"raid60 0+2 lost", Level::R60, 0, 12, {0, 2}, false});
}
TEST(WriteHoleGuard, Raid60TwoMembersFailedInEachSubgroupPAndQTorn) {
  run_case({"raid60 2+2 P and Q torn", Level::R60, 0, 12, {2, 2}, true, {4, 5}});
}
// Declustered (11 members; a row holds one stripe of 4+2 and 5 spare strips,
// or two of 3+2 or 4+1 and one spare strip): the
// torn stripe's members are wherever the map put them.
TEST(WriteHoleGuard, Draid6TwoMembersFailedBeforeTheCrash) {
  run_case({"draid6 4+2", Level::DR6, 0, 11, {2}, true, {1}, {4, 1}});
}
TEST(WriteHoleGuard, Draid6BothParityTornEveryMemberPresent) {
  run_case({"draid6 3+2 all present", Level::DR6, 0, 11, {0}, false, {3, 4}, {3, 1}});
}
TEST(WriteHoleGuard, Draid5MemberFailedParityTorn) {
  run_case({"draid5 4+1 parity torn", Level::DR5, 0, 11, {1}, true, {4}, {4, 1}});
}

// draid6 4+2 over 11 drives: the P member of the torn stripe failed and was
// rebuilt into the distributed spare room, so its strip there, and its
// parity row's log entry, are on the drive holding its spare strip of that
// row. A data member of the stripe fails, then a write to the stripe whose
// P write is dropped (on that drive) and a crash. The start needs no force:
// the replay finds the room member's entry in that drive's log and makes P
// agree with the data, so the failed member's strip reconstructs from it.
TEST(WriteHoleGuard, Draid6ParityInTheSpareRoomTornWithAMemberFailed) {
  GroupRig rig(11);
  std::string err, note;
  GroupConfig cfg = config(Level::DR6);
  cfg.declustered = {4, 1};
  auto g = rig.create(cfg, 0, 11, &err);
  ASSERT_TRUE(g) << err;
  const Geometry geo = g->volume().geometry();
  const uint32_t k = geo.data_strips();
  Image img(16 * geo.stripe_data_bytes());
  img.write_all(rig, g->volume());
  const uint64_t stripe = 5;
  const uint32_t p_member = role_member(geo, stripe, k), lost = role_member(geo, stripe, k - 1);
  ASSERT_TRUE(g->fail_member(p_member, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return g->state() == GroupState::Optimal && g->volume().room_mask() == 1ull << p_member; }))
      << "P's member was not rebuilt into the room";
  const int holder = g->volume().room()->drive_of(p_member, geo.group_row(stripe));
  ASSERT_GE(holder, 0);
  ASSERT_TRUE(g->fail_member(lost, &err)) << err;
  const uint64_t off = stripe * geo.stripe_data_bytes() + 8192, len = geo.strip_bytes;
  const std::vector<std::vector<uint8_t>> before{{img.buf.data() + off, img.buf.data() + off + len}};
  ASSERT_NO_FATAL_FAILURE(torn_write(rig, g, img, {{off, len}}, {g->volume().member(uint32_t(holder))}));
  std::vector<std::unique_ptr<Drive>> drives = open_present(rig, 11, (1ull << p_member) | (1ull << lost));
  g = rig.assemble(std::move(drives), &note, &err);
  ASSERT_TRUE(g) << "an unclean stop with a member in the room and another failed must start without force: " << err;
  EXPECT_NE(note.find("made consistent from the write-hole log"), std::string::npos) << note;
  AlignedBuf got(img.buf.size());
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Read, 0, img.buf.size(), got.data()));
  ASSERT_NO_FATAL_FAILURE(check_torn_image(got.data(), img, geo, {{off, len}}, before));
  ASSERT_TRUE(g->stop(&err)) << err;
}

// RAID 6 of 5 with a member being rebuilt onto a spare drive: a write to
// a stripe below the persisted rebuild checkpoint (the new drive is in sync
// there) loses that member's part (the cut came before it), and a crash.
// The replay must take the rebuilding member's strip as it is there: left
// out (as before 72838ca), the parity was made from the new data while the
// new drive kept the old, and a member failed after the start read wrong
// (the power-loss lane's scrub found that stripe mismatched).
TEST(WriteHoleGuard, Raid6TornBelowTheCheckpointOfARebuildOntoADrive) {
  GroupRig rig(6);
  std::string err, note;
  auto g = rig.create(config(Level::R6), 0, 5, &err);
  ASSERT_TRUE(g) << err;
  const Geometry geo = g->volume().geometry();
  const uint32_t k = geo.data_strips();
  Image img(16 * geo.stripe_data_bytes());
  img.write_all(rig, g->volume());
  ASSERT_TRUE(g->add_spare(rig.open(5), false, &err)) << err;
  const uint64_t stripe = 0;  // below any persisted checkpoint
  const uint32_t rebuilt = role_member(geo, stripe, 1), other = role_member(geo, stripe, k - 1);
  g->set_rebuild_rate(2u << 20);
  ASSERT_TRUE(g->fail_member(rebuilt, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::RebuildProgress); })) << "no checkpoint persisted";
  g->set_rebuild_rate(256u << 10);
  ASSERT_EQ(g->volume().rebuilding_member(), int(rebuilt));
  const uint64_t off = stripe * geo.stripe_data_bytes() + 8192, len = geo.strip_bytes;
  const std::vector<std::vector<uint8_t>> before{{img.buf.data() + off, img.buf.data() + off + len}};
  ASSERT_NO_FATAL_FAILURE(torn_write(rig, g, img, {{off, len}}, {g->volume().member(rebuilt)}));
  std::vector<std::unique_ptr<Drive>> drives = open_present(rig, 6, 1ull << rebuilt);
  g = rig.assemble(std::move(drives), &note, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_NE(note.find("write-hole log"), std::string::npos) << note;
  ASSERT_EQ(g->volume().rebuilding_member(), int(rebuilt)) << "the rebuild resumes";
  AlignedBuf got(img.buf.size());
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Read, 0, img.buf.size(), got.data()));
  ASSERT_NO_FATAL_FAILURE(check_torn_image(got.data(), img, geo, {{off, len}}, before));
  // The stripe's parity matches what its members hold, the new drive's
  // strip included: with another member failed it reads the same.
  ASSERT_TRUE(g->fail_member(other, &err)) << err;
  AlignedBuf again(geo.stripe_data_bytes());
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Read, 0, again.size(), again.data()));
  for (uint64_t i = 0; i < again.size(); i += 4096)
    ASSERT_EQ(0, memcmp(again.data() + i, got.data() + i, 4096)) << "block at " << i << " reads otherwise with member "
                                                                 << other << " failed";
  ASSERT_TRUE(g->stop(&err)) << err;
}

namespace {

// RAID 6/60: the crash came between the log writes of one stripe write:
// its entry landed on the P member, not on the Q member (which still holds
// the stripe's previous entry), and nothing else of it was written. The
// stripe's two data members being missing and the write going to one of
// them, replaying the P entry alone would leave P and Q from different
// writes, and the other missing member's blocks would read wrong.
void run_half_logged(Level l, uint32_t drives, uint32_t subgroups) {
  SCOPED_TRACE(level_name(l));
  GroupRig rig(drives);
  std::string err, note;
  GroupConfig cfg = config(l);
  cfg.subgroups = subgroups;
  auto g = rig.create(cfg, 0, drives, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  const Geometry geo = v.geometry();
  const uint32_t k = geo.data_strips();
  Image img(16 * geo.stripe_data_bytes());
  img.write_all(rig, v);
  const uint64_t stripe = 5;
  const uint64_t lost = 1ull << role_member(geo, stripe, k - 1) | 1ull << role_member(geo, stripe, k - 2);
  for (uint64_t s = lost; s; s &= s - 1) ASSERT_TRUE(g->fail_member(uint32_t(__builtin_ctzll(s)), &err)) << err;
  // The first write, to missing data role k-1, completes.
  const uint64_t off = stripe * geo.stripe_data_bytes() + uint64_t(k - 1) * geo.strip_bytes + 8192, len = 8192;
  fill_random(img.buf.data() + off, len, 5);
  ASSERT_EQ(0, rig.io(v, IoRequest::Write, off, len, img.buf.data() + off));
  const uint32_t qm = role_member(geo, stripe, k + 1);
  const PplLayout pl = v.ppl->layout();
  const uint64_t first_seq = newest_with(pieces_on(rig, qm, pl, geo.strip_bytes), stripe)->h.seq;
  // The second, to the same blocks: only its log entries land ...
  const std::vector<uint8_t> before(img.buf.data() + off, img.buf.data() + off + len);
  fill_random(img.buf.data() + off, len, 6);
  for (uint32_t m = 0; m < geo.members; m++)
    if (!(lost >> m & 1)) v.member(m)->faults().arm(FaultInjector::kDropPlainWrites);
  v.ppl->freeze_reclaim_for_crash_test();
  ASSERT_EQ(0, rig.io(v, IoRequest::Write, off, len, img.buf.data() + off));
  for (uint32_t m = 0; m < geo.members; m++) v.member(m)->faults().clear();
  g.reset();  // crash
  // ... and not the Q member's: its piece (the newest with the stripe) is
  // wiped, the first write's is still there.
  const std::vector<FoundPiece> qp = pieces_on(rig, qm, pl, geo.strip_bytes);
  const FoundPiece* second = newest_with(qp, stripe);
  ASSERT_TRUE(second && second->h.seq > first_seq) << "the second write's entry was not logged on the Q member";
  const std::vector<uint8_t> zero(second->h.header_bytes, 0);
  rig.raw_write(qm, second->off, zero.data(), zero.size());
  ASSERT_EQ(newest_with(pieces_on(rig, qm, pl, geo.strip_bytes), stripe)->h.seq, first_seq);
  std::vector<std::unique_ptr<Drive>> present = open_present(rig, drives, lost);
  g = rig.assemble(std::move(present), &note, &err);
  ASSERT_TRUE(g) << err;
  AlignedBuf got(img.buf.size());
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Read, 0, img.buf.size(), got.data()));
  ASSERT_NO_FATAL_FAILURE(check_torn_image(got.data(), img, geo, {{off, len}}, {before}));
  ASSERT_TRUE(g->stop(&err)) << err;
}

}  // namespace

TEST(WriteHoleGuard, Raid6EntryOnPNotOnQ) { run_half_logged(Level::R6, 6, 0); }
TEST(WriteHoleGuard, Raid60EntryOnPNotOnQ) { run_half_logged(Level::R60, 8, 2); }

// RAID 50/60 groups are made with the guard (the log after the member data
// of every member, batched: superblock version 3) and keep it across a
// restart.
TEST(WriteHoleGuard, Raid50And60GroupsHaveItAcrossARestart) {
  for (Level l : {Level::R50, Level::R60}) {
    SCOPED_TRACE(level_name(l));
    GroupRig rig(8);
    std::string err, note;
    GroupConfig cfg = config(l);
    cfg.subgroups = 2;
    auto g = rig.create(cfg, 0, 8, &err);
    ASSERT_TRUE(g) << err;
    ASSERT_NE(g->volume().ppl, nullptr);
    const PplLayout made = g->volume().ppl->layout();
    const uint64_t data = g->volume().geometry().member_data_bytes;
    ASSERT_TRUE(g->stop(&err)) << err;
    for (uint32_t m = 0; m < 8; m++) {
      Superblock sb;
      ASSERT_EQ(decode_superblock(rig.raw_read(m, 0, 4096).data(), &sb), DecodeResult::Ok);
      EXPECT_EQ(sb.version, 3u);
      EXPECT_EQ(sb.ppl_format, kPplFormatTailed);
      EXPECT_EQ(sb.subgroups, 2u);
      EXPECT_TRUE(sb.flags & kFlagWriteHoleGuard);
      EXPECT_EQ(sb.member_data_bytes, data);
      EXPECT_EQ(sb.ppl_slots, made.slots);
      EXPECT_GE(sb.ppl_offset, sb.data_offset + sb.member_data_bytes) << "the log lies after the member data";
    }
    g.reset();  // its drives go with it (a group claims its drives: Drive::claim)
    g = rig.assemble(rig.open_range(0, 8), &note, &err);
    ASSERT_TRUE(g) << err;
    EXPECT_EQ(g->volume().geometry().subgroups, 2u);
    ASSERT_NE(g->volume().ppl, nullptr);
    EXPECT_EQ(g->volume().ppl->layout().offset, made.offset);
    ASSERT_TRUE(g->stop(&err)) << err;
  }
}

// With the guard off the old behaviour stays, and says so.
TEST(WriteHoleGuard, OffKeepsTheForcedStartAndVersion1) {
  GroupRig rig(4);
  std::string err;
  GroupConfig cfg = config(Level::R5);
  cfg.write_hole_guard = false;
  auto g = rig.create(cfg, 0, 4, &err);
  ASSERT_TRUE(g) << err;
  AlignedBuf b(4096);
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Write, 0, 4096, b.data()));
  g.reset();  // crash with a dirty region
  auto raw = rig.raw_read(0, 0, 4096);
  Superblock sb;
  ASSERT_EQ(decode_superblock(raw.data(), &sb), DecodeResult::Ok);
  EXPECT_EQ(sb.version, 1u);
  EXPECT_FALSE(sb.flags & kFlagWriteHoleGuard);
  EXPECT_FALSE(rig.assemble(rig.open_range(0, 3), nullptr, &err));
  EXPECT_NE(err.find("uncleanly while degraded"), std::string::npos) << err;
}

namespace {

struct Pending {
  IoRequest q;
  bool done = false;
};

// A write-hole log of eight slots at the start of a volume's members (below
// the test array's data_offset of 1 MiB), the volume's for the test's
// lifetime; taken back before the log goes, also when an assertion ends
// the test.
struct AttachedLog {
  static PplLayout layout(uint32_t strip) {
    PplLayout l;
    l.offset = 0;
    l.slot_bytes = strip + 4096;
    l.slots = 8;
    return l;
  }
  AttachedLog(Volume& vol, uint32_t strip, uint8_t id)
      : v(vol), log(vol, layout(strip), std::array<uint8_t, 16>{id}, 1) {
    v.ppl = &log;
  }
  ~AttachedLog() { v.ppl = nullptr; }
  Volume& v;
  PplLog log;
};

void submit_write(Volume& v, Reactor& r, Pending& p, uint64_t off, uint64_t len, uint8_t* buf) {
  p.q.op = IoRequest::Write;
  p.q.offset = off;
  p.q.length = len;
  p.q.buf = buf;
  p.q.ctx = &p.done;
  p.q.done = [](IoRequest* x) { *static_cast<bool*>(x->ctx) = true; };
  ASSERT_EQ(0, v.submit(r, &p.q));
}

}  // namespace

// The writes of one reactor turn share one batch: one piece (one log write)
// per parity member for all of them, not one per write. Whole stripes, into
// bitmap regions dirty already, so that neither member reads nor the
// bitmap's worker spread their logging over the turns their completions
// come back in (on a loaded machine read-modify-writes took 18 batches,
// first writes into clean regions 10).
TEST(WriteHoleGuard, OneTurnsWritesShareABatch) {
  GroupRig rig(6);  // RAID 6: its full-stripe writes are all logged (a RAID 5 stripe's first is not)
  std::string err;
  auto g = rig.create(config(Level::R6), 0, 6, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  const Geometry geo = v.geometry();
  constexpr int kWrites = 32;
  const uint64_t sdb = geo.stripe_data_bytes();
  AlignedBuf buf(kWrites * sdb);
  fill_random(buf.data(), buf.size(), 3);
  ASSERT_EQ(0, rig.io(v, IoRequest::Write, 0, buf.size(), buf.data()));  // the regions' bits set
  fill_random(buf.data(), buf.size(), 4);
  const uint64_t logged0 = v.ppl->logged_writes(), batches0 = v.ppl->batches();
  std::vector<Pending> p(kWrites);
  for (int i = 0; i < kWrites; i++)  // 32 whole stripes, submitted in one go
    submit_write(v, rig.reactor(), p[i], uint64_t(i) * sdb, sdb, buf.data() + i * sdb);
  ASSERT_TRUE(rig.wait([&] { return std::all_of(p.begin(), p.end(), [](const Pending& x) { return x.done; }); }, 30));
  for (const Pending& x : p) EXPECT_EQ(x.q.result, 0);
  EXPECT_EQ(v.ppl->logged_writes() - logged0, uint64_t(kWrites));
  EXPECT_LE(v.ppl->batches() - batches0, 4u) << "writes submitted together were logged one batch each";
  AlignedBuf got(kWrites * sdb);
  ASSERT_EQ(0, rig.io(v, IoRequest::Read, 0, got.size(), got.data()));
  ASSERT_EQ(0, memcmp(got.data(), buf.data(), got.size()));
  ASSERT_TRUE(g->stop(&err)) << err;
}

// A ring too small for the writes in flight: a batch waits for room (queued,
// nothing polls), the writes already logged go out, a flush round makes
// them durable (file drives: volatile caches), their room is reused, and
// every write completes with its data.
TEST(WriteHoleGuard, FullRingWaitsForAFlushThenGoesOn) {
  GroupRig rig(4, 8u << 20);  // small members: the smallest log (16 slots)
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  const Geometry geo = v.geometry();
  ASSERT_TRUE(v.member(0)->volatile_cache()) << "file drives may cache writes";
  const uint64_t stripes = std::min<uint64_t>(geo.stripes(), 48);
  const uint32_t len = 60 * 1024;  // within strip 0 of each stripe: a 60 KiB partial parity each
  AlignedBuf buf(stripes * len);
  fill_random(buf.data(), buf.size(), 9);
  for (int round = 0; round < 3; round++) {
    std::vector<Pending> p(stripes);
    for (uint64_t i = 0; i < stripes; i++)
      submit_write(v, rig.reactor(), p[i], i * geo.stripe_data_bytes() + 4096, len, buf.data() + i * len);
    ASSERT_TRUE(rig.wait([&] { return std::all_of(p.begin(), p.end(), [](const Pending& x) { return x.done; }); }, 60))
        << "writes stuck with the ring full (round " << round << ")";
    for (const Pending& x : p) ASSERT_EQ(x.q.result, 0);
  }
  EXPECT_GE(v.ppl->waits(), 1u) << "no batch found the ring full: the test does not test it";
  EXPECT_GE(v.ppl->flush_rounds(), 1u);
  for (uint64_t i = 0; i < stripes; i++) {
    AlignedBuf got(len);
    ASSERT_EQ(0, rig.io(v, IoRequest::Read, i * geo.stripe_data_bytes() + 4096, len, got.data()));
    ASSERT_EQ(0, memcmp(got.data(), buf.data() + i * len, len)) << "stripe " << i;
  }
  ASSERT_TRUE(g->stop(&err)) << err;
}

// A ring past half full asks for a flush round at once (pressure), long
// before kFlushEvery written batches or a batch that finds no room would:
// one-at-a-time writes whose pieces all land on one member's ring, enough
// to pass half of it, not to fill it.
TEST(WriteHoleGuard, ARingPastHalfFullStartsAFlushRound) {
  GroupRig rig(4, 8u << 20);  // small members: the smallest log
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  const Geometry geo = v.geometry();
  ASSERT_TRUE(v.member(0)->volatile_cache()) << "file drives may cache writes";
  const uint32_t len = 60 * 1024;               // within strip 0: a 60 KiB partial parity
  const uint64_t piece = 4096 + len;            // its header and payload
  const uint64_t area = ppl_ring(v.ppl->layout(), kPplFormatTailed).bytes;
  const uint64_t writes = area / 2 / piece + 2;  // past half the ring
  ASSERT_LT(writes * piece, area) << "the writes would fill the ring: the test would test waiting instead";
  const uint32_t parity_member = role_member(geo, 0, geo.data_strips());
  AlignedBuf buf(len);
  fill_random(buf.data(), buf.size(), 21);
  uint64_t done = 0;
  for (uint64_t stripe = 0; done < writes && stripe < geo.stripes(); stripe++) {
    if (role_member(geo, stripe, geo.data_strips()) != parity_member) continue;
    Pending p;
    submit_write(v, rig.reactor(), p, stripe * geo.stripe_data_bytes() + 4096, len, buf.data());
    ASSERT_TRUE(rig.wait([&] { return p.done; }, 30)) << "write " << done;
    ASSERT_EQ(p.q.result, 0);
    done++;
  }
  ASSERT_EQ(done, writes);
  EXPECT_EQ(v.ppl->waits(), 0u) << "a batch found no room: the ring was not meant to fill";
  EXPECT_LT(v.ppl->batches(), 64u) << "kFlushEvery batches could start a round on their own";
  EXPECT_GE(v.ppl->flush_rounds(), 1u) << "a ring past half full started no flush round";
  ASSERT_TRUE(g->stop(&err)) << err;
}

// A full-stripe write leaves nothing old in the stripe: its entry has no
// payload (kPplZeroPayload), the piece is its header alone. Replay takes the
// partial parity as zero.
TEST(WriteHoleGuard, FullStripeEntryIsHeaderOnly) {
  GroupRig rig(4);
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  const Geometry geo = v.geometry();
  const uint64_t stripe = 3;
  const uint32_t pm = role_member(geo, stripe, geo.data_strips());
  AlignedBuf buf(geo.stripe_data_bytes());
  fill_random(buf.data(), buf.size(), 11);
  ASSERT_EQ(0, rig.io(v, IoRequest::Write, stripe * geo.stripe_data_bytes(), buf.size(), buf.data()));
  EXPECT_EQ(v.ppl->logged_writes(), 1u);
  const PplEntry* e = nullptr;
  const std::vector<FoundPiece> ps = pieces_on(rig, pm, v.ppl->layout(), geo.strip_bytes);
  const FoundPiece* p = newest_with(ps, stripe, &e);
  ASSERT_TRUE(p && e);
  EXPECT_TRUE(e->flags & kPplZeroPayload);
  EXPECT_EQ(p->h.total_bytes, p->h.header_bytes) << "a full-stripe write's piece has no payload";
  ASSERT_TRUE(g->stop(&err)) << err;
}

// Why every full-stripe write is logged, on RAID 5 too, though its entry
// carries no partial parity: after an unclean stop with every member
// present, replay recomputes a torn full-stripe write's parity from the data
// before the group starts. Without the entry only the dirty region's resync
// would, later, in the background: a member failing before it reached the
// stripe had its strip rebuilt from the torn parity, neither old nor new
// (unclean_stop_test --seed 20 --fail-in-resync found it, 2026-11-29, in a
// day's build that skipped such entries where the stripe had no older one).
// Here the parity and data role 0 land, role 1's write is dropped; after the
// restart role 0's member fails before anything else runs.
TEST(WriteHoleGuard, ATornFullStripeWriteIsReplayedBeforeTheResync) {
  GroupRig rig(4);
  std::string err, note;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  const Geometry geo = g->volume().geometry();
  const uint64_t stripe = 6, base = stripe * geo.stripe_data_bytes();
  Image img(16 * geo.stripe_data_bytes());
  img.write_all(rig, g->volume());
  const std::vector<uint8_t> before(img.buf.data() + base, img.buf.data() + base + geo.stripe_data_bytes());
  const uint32_t landed = role_member(geo, stripe, 0), dropped = role_member(geo, stripe, 1);
  ASSERT_NO_FATAL_FAILURE(
      torn_write(rig, g, img, {{base, geo.stripe_data_bytes()}}, {g->volume().member(dropped)}));
  g = rig.assemble(rig.open_range(0, 4), &note, &err);
  ASSERT_TRUE(g) << err;
  ASSERT_TRUE(g->fail_member(landed, &err)) << err;
  AlignedBuf got(img.buf.size());
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Read, 0, got.size(), got.data()));
  ASSERT_NO_FATAL_FAILURE(check_torn_image(got.data(), img, geo, {{base, geo.stripe_data_bytes()}}, {before}));
  ASSERT_TRUE(g->stop(&err)) << err;
}

// A full-stripe write's entry also supersedes the stripe's older one: the
// older entry's partial parity holds the strips it did not write as they
// were then. A full-stripe write rewrites them, all of it completes, the
// stop is unclean with the region dirty, and a member the older write did
// not touch is lost with it: replay must take the newer write's entry, or it
// rewrites the parity from the old partial parity and the lost member's
// strip is rebuilt wrong.
TEST(WriteHoleGuard, AFullStripeWriteAfterAPartialOneIsLogged) {
  GroupRig rig(4);
  std::string err, note;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  const Geometry geo = g->volume().geometry();
  const uint64_t stripe = 6, base = stripe * geo.stripe_data_bytes();
  Image img(16 * geo.stripe_data_bytes());
  img.write_all(rig, g->volume());
  const uint64_t logged = g->volume().ppl->logged_writes();
  fill_random(img.buf.data() + base + 8192, 4096, 31);  // data role 0
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Write, base + 8192, 4096, img.buf.data() + base + 8192));
  fill_random(img.buf.data() + base, geo.stripe_data_bytes(), 32);
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Write, base, geo.stripe_data_bytes(), img.buf.data() + base));
  EXPECT_EQ(g->volume().ppl->logged_writes() - logged, 2u);
  g.reset();  // unclean stop, the stripe's region dirty
  const uint32_t other = role_member(geo, stripe, 1);
  std::vector<std::unique_ptr<Drive>> present = open_present(rig, 4, 1ull << other);
  g = rig.assemble(std::move(present), &note, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_NE(note.find("write-hole log"), std::string::npos) << note;
  AlignedBuf got(img.buf.size());
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Read, 0, got.size(), got.data()));
  ASSERT_NO_FATAL_FAILURE(check_torn_image(got.data(), img, geo, {}, {}));  // nothing was being written
  ASSERT_TRUE(g->stop(&err)) << err;
}

// Entries an earlier run left in the ring are not this run's: after an
// unclean stop, replay takes only entries at or above the run's floor (the
// superblock's ppl_seq_floor). Here the stripe's entry of the earlier run is
// still on disk and its newer write's entry is gone (as when its room was
// reused): applying the old one would make the parity lie about the data.
TEST(WriteHoleGuard, AnEarlierRunsEntriesAreIgnored) {
  GroupRig rig(4);
  std::string err, note;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  const Geometry geo = g->volume().geometry();
  const uint64_t stripe = 6, off = stripe * geo.stripe_data_bytes() + 8192;  // data role 0
  Image img(16 * geo.stripe_data_bytes());
  img.write_all(rig, g->volume());
  // Run 1: other stripes first, so that the stripe's entry sits further in the ring.
  for (uint64_t s = 0; s < 4; s++) ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Write, s * geo.stripe_data_bytes(), 4096, img.buf.data() + s * geo.stripe_data_bytes()));
  fill_random(img.buf.data() + off, 4096, 21);
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Write, off, 4096, img.buf.data() + off));
  g.reset();  // unclean stop
  g = rig.assemble(rig.open_range(0, 4), &note, &err);
  ASSERT_TRUE(g) << err;
  Superblock sb;
  ASSERT_EQ(decode_superblock(rig.raw_read(0, 0, 4096).data(), &sb), DecodeResult::Ok);
  EXPECT_EQ(sb.ppl_seq_floor, g->volume().ppl->first_seq()) << "the floor is persisted before the run writes";
  // Run 2: another strip of the stripe written (run 1's partial parity
  // holds its old bytes), durably; its entry then lost.
  const uint64_t off2 = off + 2 * uint64_t(geo.strip_bytes);  // data role 2
  fill_random(img.buf.data() + off2, 4096, 22);
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Write, off2, 4096, img.buf.data() + off2));
  const uint32_t pm = role_member(geo, stripe, geo.data_strips());
  const PplLayout pl = g->volume().ppl->layout();
  const std::vector<FoundPiece> now = pieces_on(rig, pm, pl, geo.strip_bytes);
  const FoundPiece* run2 = newest_with(now, stripe);
  ASSERT_TRUE(run2 && run2->h.seq >= sb.ppl_seq_floor);
  const uint64_t run2_at = run2->off;
  const uint32_t run2_bytes = run2->h.header_bytes;
  g.reset();  // unclean stop, the stripe's region dirty
  const std::vector<uint8_t> zero(run2_bytes, 0);
  rig.raw_write(pm, run2_at, zero.data(), zero.size());
  const std::vector<FoundPiece> after = pieces_on(rig, pm, pl, geo.strip_bytes);
  const FoundPiece* left = newest_with(after, stripe);
  ASSERT_TRUE(left && left->h.seq < sb.ppl_seq_floor) << "run 1's entry should still be in the ring";
  // A member other than the written one and the parity missing: its strip
  // of the stripe is rebuilt from the parity, which replay must leave alone.
  const uint32_t other = role_member(geo, stripe, 1);
  std::vector<std::unique_ptr<Drive>> present = open_present(rig, 4, 1ull << other);
  g = rig.assemble(std::move(present), &note, &err);
  ASSERT_TRUE(g) << err;
  AlignedBuf got(geo.stripe_data_bytes());
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Read, stripe * geo.stripe_data_bytes(), got.size(), got.data()));
  EXPECT_EQ(0, memcmp(got.data(), img.buf.data() + stripe * geo.stripe_data_bytes(), got.size()))
      << "the missing member's strip was rebuilt from parity an earlier run's entry rewrote";
  ASSERT_TRUE(g->stop(&err)) << err;
}

// A piece whose room was reclaimed (its writes durable) stays whole on disk
// until new pieces overwrite it. Where the overwrite of a stripe's newer
// entry lands and that of an older one does not (two piece writes in flight
// at a power cut, the later one landing; or a piece write torn across its
// blocks), replay would take the older entry and rewrite the parity from
// partial parity the newer write made stale. The ring tail (format 4), on
// disk before any reclaimed room is reused, rules such pieces out. Here the
// newer entry is wiped by hand once the tail has passed both.
TEST(WriteHoleGuard, AReclaimedPieceBelowTheRingTailIsIgnored) {
  GroupRig rig(4);
  std::string err, note;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  const Geometry geo = g->volume().geometry();
  const uint32_t k = geo.data_strips();
  const uint64_t sdb = geo.stripe_data_bytes(), stripe = 6, base = stripe * sdb;
  Image img(16 * sdb);  // stripes 0..15: one bitmap region, dirty to the end
  img.write_all(rig, g->volume());
  // Two writes of the stripe, data roles 0 then 2: the first's partial
  // parity holds role 2's bytes from before the second.
  for (uint32_t role : {0u, 2u}) {
    const uint64_t off = base + role * uint64_t(geo.strip_bytes) + 8192;
    fill_random(img.buf.data() + off, 4096, 40 + role);
    ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Write, off, 4096, img.buf.data() + off));
  }
  const uint32_t pm = role_member(geo, stripe, k);
  const PplLayout pl = g->volume().ppl->layout();
  const std::vector<FoundPiece> written = pieces_on(rig, pm, pl, geo.strip_bytes);
  const FoundPiece* newer = newest_with(written, stripe);
  ASSERT_TRUE(newer);
  const uint64_t newer_seq = newer->h.seq, newer_at = newer->off, newer_bytes = newer->h.header_bytes;
  // Writes of other stripes with the same parity member, until a tail
  // write on it has passed both entries (a flush round made them durable).
  const std::array<uint8_t, 16> uuid = g->volume().ppl->group();
  auto tail = [&] { return ppl_tail_seq(rig.raw_read(pm, pl.offset, kPplTailAreaBytes).data(), uuid); };
  const uint64_t writes_before = g->volume().ppl->tail_writes();
  for (int i = 0; tail() <= newer_seq; i++) {
    ASSERT_LT(i, 2000) << "no tail write passed the stripe's entries";
    uint64_t s = 2 + 4 * uint64_t(i % 4);  // stripes 2, 6, 10, 14 have their parity on one member
    if (s == stripe) s = 14;
    const uint64_t off = s * sdb + 16384;
    fill_random(img.buf.data() + off, 4096, 1000 + i);
    ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Write, off, 4096, img.buf.data() + off));
  }
  EXPECT_GT(g->volume().ppl->tail_writes(), writes_before);
  g.reset();  // unclean stop, the region dirty
  // The newer entry's piece overwritten (as by a later piece that landed);
  // the older one's still whole.
  const std::vector<uint8_t> zero(newer_bytes, 0);
  rig.raw_write(pm, newer_at, zero.data(), zero.size());
  const std::vector<FoundPiece> left = pieces_on(rig, pm, pl, geo.strip_bytes);
  const FoundPiece* older = newest_with(left, stripe);
  ASSERT_TRUE(older && older->h.seq < newer_seq) << "the older entry should still be in the ring";
  // A member neither write touched missing: its strip is rebuilt from the parity.
  const uint32_t other = role_member(geo, stripe, 1);
  g = rig.assemble(open_present(rig, 4, 1ull << other), &note, &err);
  ASSERT_TRUE(g) << err;
  AlignedBuf got(img.buf.size());
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Read, 0, got.size(), got.data()));
  ASSERT_NO_FATAL_FAILURE(check_torn_image(got.data(), img, geo, {}, {}));  // nothing was being written
  ASSERT_TRUE(g->stop(&err)) << err;
}

// The ring tail's two blocks: the valid one of the group with the higher
// seq counts; a torn (bad crc) or foreign block is ignored.
TEST(WriteHoleGuard, RingTailBlocks) {
  std::array<uint8_t, 16> group{};
  group[0] = 7;
  std::vector<uint8_t> blocks(kPplTailAreaBytes, 0);
  EXPECT_EQ(ppl_tail_seq(blocks.data(), group), 0u) << "no tail written";
  PplTail t;
  t.group = group;
  t.seq = 100;
  t.count = 4;
  encode_ppl_tail(t, blocks.data());
  t.seq = 120;
  t.count = 5;
  encode_ppl_tail(t, blocks.data() + 4096);
  EXPECT_EQ(ppl_tail_seq(blocks.data(), group), 120u);
  PplTail back;
  ASSERT_TRUE(decode_ppl_tail(blocks.data() + 4096, &back));
  EXPECT_EQ(back.seq, 120u);
  EXPECT_EQ(back.count, 5u);
  EXPECT_EQ(back.group, group);
  blocks[4096 + 30] ^= 1;  // the newer write torn
  EXPECT_EQ(ppl_tail_seq(blocks.data(), group), 100u) << "a torn tail block leaves the older";
  std::array<uint8_t, 16> other = group;
  other[1] = 1;
  EXPECT_EQ(ppl_tail_seq(blocks.data(), other), 0u) << "another group's tail";
  const PplLayout l{1u << 20, 4096 + 65536, 16};
  EXPECT_EQ(ppl_ring(l, kPplFormatRing).offset, l.offset);
  EXPECT_EQ(ppl_ring(l, kPplFormatRing).bytes, l.bytes());
  EXPECT_EQ(ppl_ring(l, kPplFormatTailed).offset, l.offset + kPplTailAreaBytes);
  EXPECT_EQ(ppl_ring(l, kPplFormatTailed).bytes, l.bytes() - kPplTailAreaBytes);
}

// A piece that runs past the log area's end goes on at its start (the ring
// is used without gaps): such a piece of a torn write is found and replayed.
TEST(WriteHoleGuard, APieceOverTheRingsEndIsReplayed) {
  GroupRig rig(4);
  std::string err, note;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  const Geometry geo = g->volume().geometry();
  const PplLayout pl = g->volume().ppl->layout();
  const PplRing ring = ppl_ring(pl, kPplFormatTailed);
  const uint32_t k = geo.data_strips();
  Image img(16 * geo.stripe_data_bytes());
  img.write_all(rig, g->volume());
  // 8 KiB read-modify-writes of data role 0 in stripes with one parity
  // member: 12 KiB pieces (a header and 8 KiB) one after another on it,
  // until the next would cross the area's end.
  const uint64_t stripe = 4;  // stripes 0, 4, 8, 12 share a parity member
  const uint32_t pm = role_member(geo, stripe, k), lost = role_member(geo, stripe, 0);
  auto head = [&] {  // where the newest piece on pm ends
    uint64_t best_seq = 0, end = 0;
    for (const FoundPiece& p : pieces_on(rig, pm, pl, geo.strip_bytes))
      if (p.h.seq > best_seq) best_seq = p.h.seq, end = (p.off - ring.offset + p.h.total_bytes) % ring.bytes;
    return end;
  };
  // (A 4 KiB write, an 8 KiB piece, where 12 KiB pieces would end exactly at the ring's end.)
  for (int i = 0; ring.bytes - head() >= 12288 || head() < 12288; i++) {
    ASSERT_LT(i, 1000) << "the ring never came near its end";
    const uint32_t len = (ring.bytes - head()) % 12288 == 0 ? 4096 : 8192;
    const uint64_t s = 4 * (i % 4), off = s * geo.stripe_data_bytes() + 16384;
    fill_random(img.buf.data() + off, len, 100 + i);
    ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Write, off, len, img.buf.data() + off));
  }
  // The torn write, over data roles 1 and 2: role 1's write dropped, role
  // 2's and the parity's land; its piece crosses the area's end. The
  // stripe's older entry (role 0's write) is whole too: replaying it instead
  // would leave the parity lying about role 2's new bytes.
  const uint64_t so = stripe * geo.stripe_data_bytes();
  const uint64_t off = so + 2 * uint64_t(geo.strip_bytes) - 4096;
  const std::vector<uint8_t> before(img.buf.data() + off, img.buf.data() + off + 8192);
  ASSERT_NO_FATAL_FAILURE(torn_write(rig, g, img, {{off, 8192}}, {g->volume().member(role_member(geo, stripe, 1))}));
  bool crossed = false;
  for (const FoundPiece& p : pieces_on(rig, pm, pl, geo.strip_bytes))
    for (const PplEntry& e : p.entries)
      if (e.stripe == stripe && e.ranges[1].b > 0 && p.off - ring.offset + p.h.total_bytes > ring.bytes) crossed = true;
  ASSERT_TRUE(crossed) << "the torn write's piece did not cross the area's end";
  std::vector<std::unique_ptr<Drive>> present = open_present(rig, 4, 1ull << lost);
  g = rig.assemble(std::move(present), &note, &err);
  ASSERT_TRUE(g) << err;
  AlignedBuf got(geo.stripe_data_bytes());
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Read, so, got.size(), got.data()));
  for (uint64_t b = 0; b < got.size(); b += 4096) {
    if (so + b >= off && so + b < off + 8192) {
      const bool is_new = memcmp(got.data() + b, img.buf.data() + so + b, 4096) == 0;
      const bool is_old = memcmp(got.data() + b, before.data() + (so + b - off), 4096) == 0;
      EXPECT_TRUE(is_new || is_old) << "block " << b << " of the torn write";
    } else {
      EXPECT_EQ(0, memcmp(got.data() + b, img.buf.data() + so + b, 4096))
          << "block " << b << " (the missing member's, rebuilt from parity) was not being written";
    }
  }
  ASSERT_TRUE(g->stop(&err)) << err;
}

// A group an older gpuraid made (superblock version 2, a log slot per
// stripe) whose stop tore a stripe while a member was missing: its version 2
// entry is replayed, and the group goes on with the batched log.
TEST(WriteHoleGuard, AVersion2LogIsReplayed) {
  GroupRig rig(4);
  std::string err, note;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  const Geometry geo = g->volume().geometry();
  const PplLayout pl = g->volume().ppl->layout();
  const uint32_t k = geo.data_strips();
  Image img(16 * geo.stripe_data_bytes());
  img.write_all(rig, g->volume());
  const uint64_t stripe = 5;
  // The stripe's data role 0 is written (the new data lands), its parity is not.
  const uint64_t off = stripe * geo.stripe_data_bytes();
  const uint32_t d0 = role_member(geo, stripe, 0), pm = role_member(geo, stripe, k), lost = role_member(geo, stripe, 1);
  std::vector<uint8_t> old_d0(img.buf.data() + off, img.buf.data() + off + geo.strip_bytes);
  fill_random(img.buf.data() + off, geo.strip_bytes, 31);
  g->volume().member(pm)->faults().arm(FaultInjector::kDropPlainWrites);
  g->volume().ppl->freeze_reclaim_for_crash_test();
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Write, off, geo.strip_bytes, img.buf.data() + off));
  g->volume().member(pm)->faults().clear();
  g.reset();  // crash, the region dirty
  // What an older gpuraid had on disk: version 2 superblocks, and in the
  // stripe's slot on the parity member its entry: pp = P(new) + D0(new)
  // = D1 + D2 (row 0 over the stripe as the write left it, data role 0 out).
  for (uint32_t m = 0; m < 4; m++) {
    for (uint64_t copy : {uint64_t(0), uint64_t(kSuperblockBytes)}) {
      Superblock sb;
      ASSERT_EQ(decode_superblock(rig.raw_read(m, copy, kSuperblockBytes).data(), &sb), DecodeResult::Ok);
      sb.version = 2;
      sb.ppl_format = 0;
      sb.ppl_seq_floor = 0;
      std::vector<uint8_t> raw(kSuperblockBytes);
      encode_superblock(sb, raw.data());
      rig.raw_write(m, copy, raw.data(), raw.size());
    }
    const std::vector<uint8_t> zero(pl.bytes(), 0);
    rig.raw_write(m, pl.offset, zero.data(), zero.size());  // no batched pieces
  }
  std::vector<uint8_t> pp(geo.strip_bytes, 0);
  for (uint32_t role = 1; role < k; role++)
    for (uint32_t b = 0; b < geo.strip_bytes; b++)
      pp[b] ^= img.buf.data()[off + uint64_t(role) * geo.strip_bytes + b];
  PplEntry e;
  {
    Superblock sb;
    ASSERT_EQ(decode_superblock(rig.raw_read(0, 0, kSuperblockBytes).data(), &sb), DecodeResult::Ok);
    e.group = sb.group_uuid;
  }
  e.seq = 1;
  e.stripe = stripe;
  e.c0 = 0;
  e.c1 = geo.strip_bytes;
  e.row = 0;
  e.k = k;
  e.flags = kPplWriteSeq;
  e.ranges[0] = StripRange{0, geo.strip_bytes};
  e.payload_crc = ppl_crc(pp.data(), pp.size());
  std::vector<uint8_t> hdr(kPplHeaderBytes);
  encode_ppl_header(e, hdr.data());
  rig.raw_write(pm, pl.slot_offset(pl.slot_of(stripe)), hdr.data(), hdr.size());
  rig.raw_write(pm, pl.slot_offset(pl.slot_of(stripe)) + kPplHeaderBytes, pp.data(), pp.size());
  (void)old_d0;
  // Started with the member holding data role 1 missing: replay makes the
  // parity match the new D0, so D1 (rebuilt from it) reads as written.
  std::vector<std::unique_ptr<Drive>> present = open_present(rig, 4, 1ull << lost);
  g = rig.assemble(std::move(present), &note, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_NE(note.find("write-hole log"), std::string::npos) << note;
  AlignedBuf got(geo.stripe_data_bytes());
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Read, off, got.size(), got.data()));
  EXPECT_EQ(0, memcmp(got.data(), img.buf.data() + off, got.size())) << "the version 2 entry was not replayed";
  Superblock now;
  ASSERT_EQ(decode_superblock(rig.raw_read(d0, 0, kSuperblockBytes).data(), &now), DecodeResult::Ok);
  EXPECT_EQ(now.ppl_format, kPplFormatTailed) << "the group goes on with the batched log";
  EXPECT_EQ(now.version, 3u);
  ASSERT_TRUE(g->stop(&err)) << err;
}

// A group a gpuraid of format 3 made (its ring from the log area's start,
// no tail blocks) whose stop tore a stripe while a member was missing: its
// pieces are found where format 3 put them and replayed, and the group goes
// on with format 4. Made here from a format 4 group's log moved to where
// format 3 has it (the torn write's piece is the ring's first, in the 8 KiB
// format 4 keeps for its tail: read as format 4 it would not be found).
TEST(WriteHoleGuard, AFormat3LogIsReplayed) {
  GroupRig rig(4);
  std::string err, note;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  const Geometry geo = g->volume().geometry();
  const uint32_t k = geo.data_strips();
  const PplLayout pl = g->volume().ppl->layout();
  const PplRing ring = ppl_ring(pl, kPplFormatTailed);
  Image img(16 * geo.stripe_data_bytes());
  memset(img.buf.data(), 0, img.buf.size());  // as the new group's drives are: nothing logged yet
  const uint64_t stripe = 5, off = stripe * geo.stripe_data_bytes() + 8192;  // data role 0
  const uint32_t pm = role_member(geo, stripe, k), lost = role_member(geo, stripe, 1);
  // The parity's write dropped: new data beside old parity (the write hole).
  const std::vector<uint8_t> before(img.buf.data() + off, img.buf.data() + off + 4096);
  ASSERT_NO_FATAL_FAILURE(torn_write(rig, g, img, {{off, 4096}}, {g->volume().member(pm)}));
  const std::vector<FoundPiece> ps = pieces_on(rig, pm, pl, geo.strip_bytes);
  const FoundPiece* torn = newest_with(ps, stripe);
  ASSERT_TRUE(torn && torn->off == ring.offset) << "the torn write's piece should be the ring's first";
  for (uint32_t m = 0; m < 4; m++) {
    std::vector<uint8_t> area = rig.raw_read(m, ring.offset, ring.bytes);
    area.resize(pl.bytes(), 0);
    rig.raw_write(m, pl.offset, area.data(), area.size());  // format 3's ring: from the area's start
    for (uint64_t copy : {uint64_t(0), uint64_t(kSuperblockBytes)}) {
      Superblock sb;
      ASSERT_EQ(decode_superblock(rig.raw_read(m, copy, kSuperblockBytes).data(), &sb), DecodeResult::Ok);
      ASSERT_EQ(sb.ppl_format, kPplFormatTailed);
      sb.ppl_format = kPplFormatRing;
      std::vector<uint8_t> raw(kSuperblockBytes);
      encode_superblock(sb, raw.data());
      rig.raw_write(m, copy, raw.data(), raw.size());
    }
  }
  // Started with the member holding data role 1 missing: replay makes the
  // parity match the new data role 0, so role 1 (rebuilt from it) reads as
  // written.
  g = rig.assemble(open_present(rig, 4, 1ull << lost), &note, &err);
  ASSERT_TRUE(g) << err;
  EXPECT_NE(note.find("write-hole log"), std::string::npos) << note;
  AlignedBuf got(img.buf.size());
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Read, 0, got.size(), got.data()));
  ASSERT_NO_FATAL_FAILURE(check_torn_image(got.data(), img, geo, {{off, 4096}}, {before}));
  Superblock now;
  ASSERT_EQ(decode_superblock(rig.raw_read(pm, 0, kSuperblockBytes).data(), &now), DecodeResult::Ok);
  EXPECT_EQ(now.ppl_format, kPplFormatTailed) << "the group goes on with ring tails";
  ASSERT_TRUE(g->stop(&err)) << err;
}

// Batch headers (format 3): what is encoded decodes, the crc covers every
// byte in use, and headers too long for the bytes at hand say how many they need.
TEST(WriteHoleGuard, BatchHeaderFormat) {
  PplBatchHeader h;
  h.group[3] = 9;
  h.seq = 77;
  h.k = 5;
  h.entries = 3;
  h.header_bytes = ppl_batch_header_bytes(3, 5);
  EXPECT_EQ(h.header_bytes, 4096u);
  EXPECT_EQ(ppl_batch_header_bytes(200, 63), 110592u) << "long headers take more blocks (64 + 200 x 536 + 4 bytes)";
  h.total_bytes = h.header_bytes + 2 * 8192;
  std::vector<PplEntry> e(3);
  for (uint32_t i = 0; i < 3; i++) {
    e[i].stripe = 100 + i;
    e[i].c0 = 0;
    e[i].c1 = 8192;
    e[i].row = i % 2;
    e[i].flags = i == 2 ? kPplZeroPayload | kPplWriteSeq : kPplWriteSeq;
    e[i].payload_crc = 0xabc0 + i;
    e[i].payload_off = i == 2 ? h.header_bytes : h.header_bytes + 8192 * i;
    e[i].ranges[i] = StripRange{0, 8192};
  }
  std::vector<uint8_t> buf(h.header_bytes, 0xcc);
  std::vector<PplEntryRef> refs;
  for (const PplEntry& x : e) refs.push_back(PplEntryRef{&x, x.row, x.payload_crc, x.payload_off});
  encode_ppl_batch_header(h, refs.data(), buf.data());
  PplBatchHeader d;
  std::vector<PplEntry> got;
  size_t need = 0;
  ASSERT_TRUE(decode_ppl_batch_header(buf.data(), buf.size(), 65536, &d, &got, &need));
  EXPECT_EQ(d.seq, 77u);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[1].stripe, 101u);
  EXPECT_EQ(got[1].payload_off, h.header_bytes + 8192);
  EXPECT_EQ(got[2].flags & kPplZeroPayload, kPplZeroPayload);
  EXPECT_EQ(got[0].seq, 77u) << "entries carry the batch's seq";
  for (size_t at : {size_t(9), size_t(30), size_t(64 + 3), size_t(64 + 2 * (32 + 40) + 36)}) {
    std::vector<uint8_t> bad = buf;
    bad[at] ^= 0x40;
    EXPECT_FALSE(decode_ppl_batch_header(bad.data(), bad.size(), 65536, &d, &got, &need)) << "byte " << at;
  }
  EXPECT_FALSE(decode_ppl_batch_header(buf.data(), 64, 65536, &d, &got, &need));
  EXPECT_EQ(need, h.header_bytes) << "a header cut short says how long it is";
  std::vector<uint8_t> v2(kPplHeaderBytes, 0);
  EXPECT_FALSE(is_ppl_batch_header(v2.data()));
}

// Entry headers: GPRPPL02's crc covers the bytes in use (magic .. ranges),
// and the GPRPPL01 headers an older gpuraid left in a log still decode
// (their crc covers bytes 0..4091), so replay after an upgrade finds them.
TEST(WriteHoleGuard, EntryHeaderFormats) {
  PplEntry e;
  e.group[0] = 7;
  e.seq = 42;
  e.stripe = 9;
  e.c0 = 4096;
  e.c1 = 8192;
  e.row = 1;
  e.k = 6;
  e.payload_crc = 0x1234;
  e.flags = kPplWriteSeq;
  e.ranges[2] = StripRange{4096, 8192};
  std::vector<uint8_t> hdr(kPplHeaderBytes, 0xee);
  encode_ppl_header(e, hdr.data());
  EXPECT_EQ(0, memcmp(hdr.data(), "GPRPPL02", 8));
  for (size_t i = 64 + 8 * 6; i < kPplHeaderBytes - 4; i++) ASSERT_EQ(hdr[i], 0) << "byte " << i;
  PplEntry d;
  ASSERT_TRUE(decode_ppl_header(hdr.data(), 65536, &d));
  EXPECT_EQ(d.seq, 42u);
  EXPECT_EQ(d.stripe, 9u);
  EXPECT_EQ(d.row, 1u);
  EXPECT_EQ(d.ranges[2].a, 4096u);
  EXPECT_EQ(d.ranges[2].b, 8192u);
  // Any byte in use that changes is caught.
  for (size_t at : {size_t(0), size_t(24), size_t(60), size_t(64 + 8 * 2 + 1), size_t(64 + 8 * 6 - 1)}) {
    std::vector<uint8_t> bad = hdr;
    bad[at] ^= 0x10;
    EXPECT_FALSE(decode_ppl_header(bad.data(), 65536, &d)) << "byte " << at << " changed";
  }
  // Reusing a zeroed header buffer writes the same bytes.
  std::vector<uint8_t> reuse(kPplHeaderBytes, 0);
  PplEntry other = e;
  other.k = 6;
  other.ranges[2] = StripRange{};
  other.ranges[4] = StripRange{0, 4096};
  encode_ppl_header(other, reuse.data(), /*rest_zeroed=*/true);
  encode_ppl_header(e, reuse.data(), /*rest_zeroed=*/true);
  EXPECT_EQ(reuse, hdr);
  // An older gpuraid's header: magic GPRPPL01, crc32c of bytes 0..4091.
  std::vector<uint8_t> v1 = hdr;
  memcpy(v1.data(), "GPRPPL01", 8);
  const uint32_t crc = ppl_crc(v1.data(), kPplHeaderBytes - 4);
  for (int i = 0; i < 4; i++) v1[kPplHeaderBytes - 4 + i] = uint8_t(crc >> (8 * i));
  ASSERT_TRUE(decode_ppl_header(v1.data(), 65536, &d));
  EXPECT_EQ(d.seq, 42u);
  v1[3000] ^= 1;  // covered by the old crc
  EXPECT_FALSE(decode_ppl_header(v1.data(), 65536, &d));
}

// Drives with no volatile cache (mem): a batch's room is free once its
// writes complete, told to the rings under the reactor's next lock of the
// log only where an issue of its open batch is queued. A reactor whose
// poller stopped (a writer thread that ended) must not keep pieces that the
// other reactor's batches, wrapping around the ring, wait behind: with its
// last batch kept back, this test's second writer waits for ever.
TEST(WriteHoleGuard, AReactorNobodyPollsKeepsNoRoomBack) {
  ArrayOptions o;
  o.level = Level::R5;
  o.members = 4;
  o.reactors = 2;
  o.member_bytes = 8u << 20;
  o.data_offset = 1u << 20;  // the log area below the data
  TestArray a(o);
  Volume& v = a.vol();
  ASSERT_FALSE(v.member(0)->volatile_cache()) << "mem drives: no flush makes their writes durable";
  AttachedLog attached(v, o.strip, 7);  // about 550 KiB a member: a lap every few dozen 4 KiB writes
  PplLog& log = attached.log;
  const uint64_t sdb = v.geometry().stripe_data_bytes();
  const uint64_t stripes = v.geometry().stripes();
  AlignedBuf buf(4096);
  fill_random(buf.data(), buf.size(), 11);
  // Writes on reactor `r`, polled by this thread until they are done or
  // the deadline passes: read-modify-writes of one block, eight stripes in
  // flight at a time (no two on one stripe: each its own entry).
  auto write_on = [&](uint32_t r, uint64_t first, uint64_t n, double seconds) {
    const double deadline = mono_ns() / 1e9 + seconds;
    for (uint64_t at = 0; at < n; at += 8) {
      std::vector<Pending> p(std::min<uint64_t>(8, n - at));
      for (uint64_t i = 0; i < p.size(); i++) {
        const uint64_t w = first + at + i;
        submit_write(v, a.reactor(r), p[i], (w % stripes) * sdb + 4096 * (w % 7), 4096, buf.data());
      }
      while (!std::all_of(p.begin(), p.end(), [](const Pending& x) { return x.done; })) {
        if (mono_ns() / 1e9 > deadline) return false;
        a.reactor(r).poll(true, 10);
      }
      for (const Pending& x : p) EXPECT_EQ(x.q.result, 0);
    }
    return true;
  };
  ASSERT_TRUE(write_on(1, 0, 5, 30)) << "reactor 1's writes";
  // Reactor 1 is polled no more. Reactor 0's writes go around every ring
  // several times: past reactor 1's pieces each lap.
  ASSERT_TRUE(write_on(0, 5, 2000, 30)) << "reactor 0's writes wait for room that reactor 1 keeps";
  EXPECT_EQ(log.logged_writes(), 2005u);
  EXPECT_EQ(log.waits(), 0u) << "a batch waited for room on drives that need no flush";
  ASSERT_TRUE(log.shutdown());
}

// The batching tests' rig: RAID 5 3+1, the log area below the data,
// lockstep (each turn completes every member I/O in the ring, so which turn
// a write joins in is fixed); write i is one block at the start of stripe i
// (a read-modify-write, two reads).
struct LockstepLogRig {
  static ArrayOptions options() {
    ArrayOptions o;
    o.level = Level::R5;
    o.members = 4;
    o.member_bytes = 8u << 20;
    o.data_offset = 1u << 20;
    o.lockstep = true;
    return o;
  }
  ArrayOptions o = options();
  TestArray a{o};
  Volume& v = a.vol();
  AttachedLog attached{v, o.strip, 9};
  PplLog& log = attached.log;
  Reactor& r = a.reactor();
  AlignedBuf buf{4096};
  std::vector<Pending> p;
  LockstepLogRig(size_t writes, uint32_t seed) : p(writes) { fill_random(buf.data(), buf.size(), seed); }
  void wave(size_t first, size_t n) {
    for (size_t i = first; i < first + n; i++)
      submit_write(v, r, p[i], i * v.geometry().stripe_data_bytes(), 4096, buf.data());
  }
  bool all_done(size_t first, size_t n) {  // polls until they are (at most 1000 turns)
    for (int turns = 0; turns < 1000; turns++) {
      if (std::all_of(p.begin() + std::ptrdiff_t(first), p.begin() + std::ptrdiff_t(first + n),
                      [](const Pending& x) { return x.done; }))
        return true;
      r.poll();
    }
    return false;
  }
};

// A busy reactor's batch waits a turn more for the writes whose reads
// complete in it, and a second where that turn was twice as busy
// (kHoldBelowOps, kBusyCompletions, kMaxHolds); a write alone goes at once. Lockstep:
// each turn completes every member I/O in the ring, so which turn a write
// joins in is fixed. One-block read-modify-writes (two reads each) on
// stripes of their own.
TEST(WriteHoleGuard, ABusyReactorsBatchWaitsForTheNextWrites) {
  LockstepLogRig rig(49, 12);
  PplLog& log = rig.log;
  Reactor& r = rig.r;
  std::vector<Pending>& p = rig.p;
  auto wave = [&](size_t first, size_t n) { rig.wave(first, n); };
  auto all_done = [&](size_t first, size_t n) { return rig.all_done(first, n); };

  // Queue depth 1: the lone write's batch goes in the turn after its reads.
  wave(16, 1);
  r.poll();  // its reads; the write joins a batch
  r.poll();  // the batch goes
  EXPECT_EQ(log.batches(), 1u) << "a write alone was kept waiting a turn";
  ASSERT_TRUE(all_done(16, 1));
  EXPECT_EQ(p[16].q.result, 0);

  // Eight writes, sixteen reads completed in one turn: the batch waits a
  // turn, and the next eight writes' reads complete in it.
  const uint64_t batches0 = log.batches();
  wave(0, 8);
  r.poll();  // 16 reads complete; 8 writes join the open batch
  wave(8, 8);
  r.poll();  // the batch is held; the next 8 writes' reads complete and they join it
  r.poll();  // the held turn reaped 16 (under 32): the batch goes
  EXPECT_EQ(log.batches() - batches0, 1u) << "a batch was held a second turn after a turn of 16 completions";
  ASSERT_TRUE(all_done(0, 16));
  for (size_t i = 0; i < 16; i++) EXPECT_EQ(p[i].q.result, 0) << i;
  EXPECT_EQ(log.batches() - batches0, 1u) << "writes one turn apart on a busy reactor were logged apart";
  EXPECT_EQ(log.logged_writes(), 17u);

  // Busier: 32 reads completed in the held turn: the batch waits a second
  // turn (no more), for the writes that turn brings.
  const uint64_t batches1 = log.batches();
  wave(17, 8);
  r.poll();  // 16 reads; 8 writes join
  wave(25, 16);
  r.poll();  // held once; 32 reads complete, 16 writes join
  wave(41, 4);
  r.poll();  // held twice; 4 writes join
  wave(45, 4);
  r.poll();  // the batch goes (28 writes); these 4 join the next
  EXPECT_EQ(log.batches() - batches1, 1u) << "a busy reactor's batch was not held a second turn, or was held a third";
  ASSERT_TRUE(all_done(17, 32));
  for (size_t i = 17; i < 49; i++) EXPECT_EQ(p[i].q.result, 0) << i;
  EXPECT_EQ(log.batches() - batches1, 2u);
  EXPECT_EQ(log.logged_writes(), 49u);
  ASSERT_TRUE(log.shutdown());
}

// A busy reactor whose held turns bring no write (a sequential stream's next
// writes wait behind the held ones) stops holding: after kNoGainHolds such
// turns in a row its batches go in the turn after their writes join, for
// kSkipHoldsAfterNoGain batches. Lockstep, as above: eight one-block
// read-modify-writes (sixteen reads) a wave, nothing submitted while held.
TEST(WriteHoleGuard, HeldTurnsThatBringNoWriteStopHolding) {
  LockstepLogRig rig(40, 13);
  PplLog& log = rig.log;
  Reactor& r = rig.r;
  auto wave = [&](size_t first) {
    rig.wave(first, 8);
    r.poll();  // 16 reads complete; 8 writes join the open batch
  };
  auto all_done = [&](size_t first) { return rig.all_done(first, 8); };
  for (size_t round = 0; round < 4; round++) {
    const uint64_t b0 = log.batches();
    wave(8 * round);
    r.poll();  // held: nothing more comes
    EXPECT_EQ(log.batches(), b0) << "round " << round << ": a busy reactor's batch was not held";
    r.poll();  // the held turn brought no write: the batch goes
    EXPECT_EQ(log.batches(), b0 + 1) << "round " << round;
    ASSERT_TRUE(all_done(8 * round));
  }
  const uint64_t b0 = log.batches();
  wave(32);
  r.poll();
  EXPECT_EQ(log.batches(), b0 + 1) << "held again after four held turns that brought no write";
  ASSERT_TRUE(all_done(32));
  for (const Pending& x : rig.p) EXPECT_EQ(x.q.result, 0);
  EXPECT_EQ(log.logged_writes(), 40u);
  ASSERT_TRUE(log.shutdown());
}
