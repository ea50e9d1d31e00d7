// The write-hole guard (engine/ppl/): torn stripes made on purpose (the
// fault injector drops the data writes of one member, as a crash between
// the member writes of a stripe would leave them) in RAID 5, RAID 6 and ec
// groups with members failed before the crash or lost with it. After the
// crash the group starts without force and every block that was not being
// written reads back, those of the missing members included.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "engine/group/superblock.h"
#include "engine/ppl/ppl_log.h"
#include "engine/planner.h"
#include "tests/support/group_rig.h"
#include "tests/support/volume_image.h"

using namespace gpuraid;
using namespace gpuraid::test;

namespace {

GroupConfig config(Level l, uint32_t parity = 0) { return test_group_config(l, parity, 65536, "dg-ppl"); }

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
};

// Writes `ranges` of the image with the stripe writes (not the log
// entries) to the `torn` members dropped, then "crashes" (no stop).
void torn_write(GroupRig& rig, std::unique_ptr<Group>& g, Image& img,
                const std::vector<std::pair<uint64_t, uint64_t>>& ranges, const std::vector<Drive*>& torn) {
  for (Drive* d : torn) d->faults().arm(FaultInjector::kDropPlainWrites);  // the log entries land
  for (auto [off, len] : ranges) {
    fill_random(img.buf.data() + off, len, off + 1);
    ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Write, off, len, img.buf.data() + off));
  }
  for (Drive* d : torn) d->faults().clear();
  g.reset();  // crash: no clean stop
}

void run_case(const Case& c) {
  SCOPED_TRACE(c.name);
  GroupRig rig(c.drives);
  std::string err, note;
  GroupConfig cfg = config(c.level, c.parity);
  cfg.subgroups = uint32_t(c.lose.size() > 1 ? c.lose.size() : 0);
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

  std::vector<std::unique_ptr<Drive>> drives;
  for (uint32_t i = 0; i < c.drives; i++)
    if (!(lost >> i & 1)) drives.push_back(rig.open(i));
  g = rig.assemble(std::move(drives), &note, &err);
  ASSERT_TRUE(g) << "an unclean stop while degraded must start without force: " << err;
  EXPECT_NE(note.find("write-hole log"), std::string::npos) << note;
  AlignedBuf got(img.buf.size());
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Read, 0, img.buf.size(), got.data()));
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
      ASSERT_EQ(0, memcmp(got.data() + i, img.buf.data() + i, 4096))
          << "block at " << i << " (stripe " << i / geo.stripe_data_bytes() << ") was not being written";
      continue;
    }
    // Inside one: each block old or new, never anything else.
    const bool is_new = memcmp(got.data() + i, img.buf.data() + i, 4096) == 0;
    const bool is_old = memcmp(got.data() + i, before[t].data() + (i - ranges[t].first), 4096) == 0;
    EXPECT_TRUE(is_new || is_old) << "block at " << i << " of the torn write is neither old nor new";
  }
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
  const uint64_t slot = pl.slot_offset(pl.slot_of(stripe));
  const std::vector<uint8_t> q_entry = rig.raw_read(qm, slot, pl.slot_bytes);
  // The second, to the same blocks: only its log entries land ...
  const std::vector<uint8_t> before(img.buf.data() + off, img.buf.data() + off + len);
  fill_random(img.buf.data() + off, len, 6);
  for (uint32_t m = 0; m < geo.members; m++)
    if (!(lost >> m & 1)) v.member(m)->faults().arm(FaultInjector::kDropPlainWrites);
  ASSERT_EQ(0, rig.io(v, IoRequest::Write, off, len, img.buf.data() + off));
  for (uint32_t m = 0; m < geo.members; m++) v.member(m)->faults().clear();
  g.reset();  // crash
  // ... and not the Q member's.
  rig.raw_write(qm, slot, q_entry.data(), q_entry.size());
  std::vector<std::unique_ptr<Drive>> present;
  for (uint32_t i = 0; i < drives; i++)
    if (!(lost >> i & 1)) present.push_back(rig.open(i));
  g = rig.assemble(std::move(present), &note, &err);
  ASSERT_TRUE(g) << err;
  AlignedBuf got(img.buf.size());
  ASSERT_EQ(0, rig.io(g->volume(), IoRequest::Read, 0, img.buf.size(), got.data()));
  for (uint64_t i = 0; i < img.buf.size(); i += 4096) {
    if (i >= off && i < off + len) {
      const bool is_new = memcmp(got.data() + i, img.buf.data() + i, 4096) == 0;
      const bool is_old = memcmp(got.data() + i, before.data() + (i - off), 4096) == 0;
      EXPECT_TRUE(is_new || is_old) << "block at " << i << " of the torn write is neither old nor new";
      continue;
    }
    ASSERT_EQ(0, memcmp(got.data() + i, img.buf.data() + i, 4096))
        << "block at " << i << " (stripe " << i / geo.stripe_data_bytes() << ") was not being written";
  }
  ASSERT_TRUE(g->stop(&err)) << err;
}

}  // namespace

TEST(WriteHoleGuard, Raid6EntryOnPNotOnQ) { run_half_logged(Level::R6, 6, 0); }
TEST(WriteHoleGuard, Raid60EntryOnPNotOnQ) { run_half_logged(Level::R60, 8, 2); }

// RAID 50/60 groups are made with the guard (version 2, the log after the
// member data of every member) and keep it across a restart.
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
      EXPECT_EQ(sb.version, 2u);
      EXPECT_EQ(sb.subgroups, 2u);
      EXPECT_TRUE(sb.flags & kFlagWriteHoleGuard);
      EXPECT_EQ(sb.member_data_bytes, data);
      EXPECT_EQ(sb.ppl_slots, made.slots);
      EXPECT_GE(sb.ppl_offset, sb.data_offset + sb.member_data_bytes) << "the log lies after the member data";
    }
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

// Two stripes whose log slots collide on member `m` (it holds parity for both).
bool colliding_stripes(const Geometry& geo, const PplLayout& l, uint64_t* a, uint64_t* b) {
  const uint32_t k = geo.data_strips();
  for (uint64_t s = 0; s < geo.stripes(); s++)
    for (uint64_t t = s + 1; t < geo.stripes() && t < s + 4096; t++)
      if (l.slot_of(s) == l.slot_of(t) && role_member(geo, s, k) == role_member(geo, t, k)) {
        *a = s;
        *b = t;
        return true;
      }
  return false;
}

struct Pending {
  IoRequest q;
  bool done = false;
};

void submit_write(Volume& v, Reactor& r, Pending& p, uint64_t off, uint8_t* buf) {
  p.q.op = IoRequest::Write;
  p.q.offset = off;
  p.q.length = 4096;
  p.q.buf = buf;
  p.q.ctx = &p.done;
  p.q.done = [](IoRequest* x) { *static_cast<bool*>(x->ctx) = true; };
  ASSERT_EQ(0, v.submit(r, &p.q));
}

}  // namespace

// A write whose log slot another stripe's write holds waits in the slot's
// queue and is resumed once when it frees, instead of trying again every
// reactor turn (which burnt a core under load).
TEST(WriteHoleGuard, BusySlotQueuesInsteadOfPolling) {
  GroupRig rig(4);
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  ASSERT_NE(v.ppl, nullptr);
  const Geometry geo = v.geometry();
  uint64_t a = 0, b = 0;
  ASSERT_TRUE(colliding_stripes(geo, v.ppl->layout(), &a, &b));
  const uint32_t pm = role_member(geo, a, geo.data_strips());
  AlignedBuf buf(8192);
  fill_random(buf.data(), 8192, 7);
  // The first write's I/O to the shared parity member is slow: the second
  // write finds the slot held for about 0.1 s, many reactor turns.
  v.member(pm)->faults().set_latency_us(50000);
  Pending pa, pb;
  submit_write(v, rig.reactor(), pa, a * geo.stripe_data_bytes(), buf.data());
  submit_write(v, rig.reactor(), pb, b * geo.stripe_data_bytes(), buf.data() + 4096);
  ASSERT_TRUE(rig.wait([&] { return pa.done && pb.done; }, 30)) << "writes to stripes " << a << " and " << b;
  v.member(pm)->faults().clear();
  EXPECT_EQ(0, pa.q.result);
  EXPECT_EQ(0, pb.q.result);
  EXPECT_GE(v.ppl->waits(), 1u) << "the second write should have found the slot held";
  EXPECT_LE(v.ppl->waits(), 2u) << "a queued write is tried again once per release, not every turn";
  AlignedBuf got(4096);
  ASSERT_EQ(0, rig.io(v, IoRequest::Read, b * geo.stripe_data_bytes(), 4096, got.data()));
  EXPECT_EQ(0, memcmp(got.data(), buf.data() + 4096, 4096));
  ASSERT_TRUE(g->stop(&err)) << err;
}

// A full-stripe write leaves nothing old in the stripe: its entry is the
// header alone (kPplZeroPayload), one 4 KiB write instead of 4 KiB + strip.
// Replay takes the partial parity as zero.
TEST(WriteHoleGuard, FullStripeEntryIsHeaderOnly) {
  GroupRig rig(4);
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  const Geometry geo = v.geometry();
  const uint64_t stripe = 3;
  const uint32_t pm = role_member(geo, stripe, geo.data_strips());
  const PplLayout l = v.ppl->layout();
  const uint64_t payload = l.slot_offset(l.slot_of(stripe)) + kPplHeaderBytes;
  const std::vector<uint8_t> mark(geo.strip_bytes, 0xa5);
  rig.raw_write(pm, payload, mark.data(), mark.size());
  AlignedBuf buf(geo.stripe_data_bytes());
  fill_random(buf.data(), buf.size(), 11);
  ASSERT_EQ(0, rig.io(v, IoRequest::Write, stripe * geo.stripe_data_bytes(), buf.size(), buf.data()));
  const auto hdr = rig.raw_read(pm, payload - kPplHeaderBytes, kPplHeaderBytes);
  PplEntry e;
  ASSERT_TRUE(decode_ppl_header(hdr.data(), geo.strip_bytes, &e));
  EXPECT_EQ(e.stripe, stripe);
  EXPECT_TRUE(e.flags & kPplZeroPayload);
  EXPECT_EQ(rig.raw_read(pm, payload, mark.size()), mark) << "a full-stripe write's entry has no payload";
  ASSERT_TRUE(g->stop(&err)) << err;
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
