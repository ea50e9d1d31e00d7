// RAID 50 and RAID 60 (engine/levels/grouped_layout.h): the layout against a
// scalar reference written out here (md RAID 0 over md RAID 5/6 sub-arrays,
// chunk = one sub-array stripe), the creation rules, the superblock field,
// failures of one member per sub-group and of two in one sub-group, rebuild
// and scrub through a drive group.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>

#include "engine/group/superblock.h"
#include "tests/support/group_rig.h"
#include "tests/support/test_array.h"
#include "tests/support/volume_image.h"

using namespace gpuraid;
using namespace gpuraid::test;

namespace {

Geometry make(Level l, uint32_t n, uint32_t groups) {
  Geometry g;
  std::string err;
  EXPECT_TRUE(Geometry::make(l, n, 0, 65536, 64ull << 20, &g, &err, groups)) << err;
  return g;
}

// The reference: stripe s is row s / G of sub-array s % G, whose members
// are [sg * w, sg * w + w); within it md's left-symmetric rotation (raid5:
// pd = w-1 - row%w, raid6: qd = pd+1, data from pd + parity).
struct Where {
  uint32_t member;
  uint64_t member_strip;  // strip index within the member's data area
};
Where reference(uint32_t n, uint32_t G, uint32_t parity, uint64_t s, int role /* <0: parity -1-role */) {
  const uint32_t w = n / G, sg = uint32_t(s % G);
  const uint64_t row = s / G;
  const uint32_t pd = w - 1 - uint32_t(row % w);
  uint32_t local;
  if (role < 0) local = (pd + uint32_t(-1 - role)) % w;
  else local = (pd + parity + uint32_t(role)) % w;
  return {sg * w + local, row};
}

GroupConfig config(Level l, uint32_t groups) {
  GroupConfig c;
  c.level = l;
  c.subgroups = groups;
  c.strip_bytes = 16384;
  c.name = "dg-grouped";
  c.assume_zeroed = true;
  c.bitmap_region_bytes = 1u << 20;
  return c;
}

}  // namespace

TEST(Raid50_60, LayoutMatchesMdRaid0OverSubArrays) {
  for (Level l : {Level::R50, Level::R60})
    for (uint32_t G : {2u, 3u, 4u})
      for (uint32_t w = l == Level::R50 ? 3 : 4; w <= 7; w++) {
        const uint32_t n = w * G, parity = l == Level::R50 ? 1 : 2;
        const Geometry g = make(l, n, G);
        SCOPED_TRACE(g.describe());
        ASSERT_EQ(g.data_strips(), w - parity);
        ASSERT_EQ(g.stripes(), G * ((64ull << 20) / 65536));
        ASSERT_EQ(g.capacity_bytes(), uint64_t(n - G * parity) * (64ull << 20));
        for (uint64_t s = 0; s < 3ull * n * G; s++) {
          for (uint32_t di = 0; di < g.data_strips(); di++) {
            const Where r = reference(n, G, parity, s, int(di));
            ASSERT_EQ(g.data_member(s, di), r.member) << "stripe " << s << " data " << di;
            ASSERT_EQ(g.member_offset(s), r.member_strip * g.strip_bytes);
          }
          for (uint32_t j = 0; j < parity; j++)
            ASSERT_EQ(g.parity_member(s, j), reference(n, G, parity, s, -1 - int(j)).member) << "stripe " << s;
        }
      }
}

// Every member strip holds exactly one stripe's strip: no two stripes share one.
TEST(Raid50_60, EveryMemberStripHoldsOneStripe) {
  const Geometry g = make(Level::R60, 12, 3);
  std::set<std::pair<uint32_t, uint64_t>> used;
  for (uint64_t s = 0; s < 10 * 12; s++) {
    for (uint32_t di = 0; di < g.data_strips(); di++)
      ASSERT_TRUE(used.insert({g.data_member(s, di), g.member_offset(s)}).second) << s;
    for (uint32_t j = 0; j < g.parity; j++)
      ASSERT_TRUE(used.insert({g.parity_member(s, j), g.member_offset(s)}).second) << s;
  }
}

TEST(Raid50_60, CreationRulesSayWhy) {
  Geometry g;
  std::string err;
  EXPECT_FALSE(Geometry::make(Level::R50, 6, 0, 65536, 1 << 30, &g, &err));
  EXPECT_NE(err.find("--subgroups"), std::string::npos) << err;
  EXPECT_FALSE(Geometry::make(Level::R50, 7, 0, 65536, 1 << 30, &g, &err, 2));
  EXPECT_NE(err.find("do not divide into 2 equal sub-groups"), std::string::npos) << err;
  EXPECT_FALSE(Geometry::make(Level::R50, 8, 0, 65536, 1 << 30, &g, &err, 4));
  EXPECT_NE(err.find("at least 3 members each, got 2"), std::string::npos) << err;
  EXPECT_FALSE(Geometry::make(Level::R60, 9, 0, 65536, 1 << 30, &g, &err, 3));
  EXPECT_NE(err.find("at least 4 members each, got 3"), std::string::npos) << err;
  EXPECT_FALSE(Geometry::make(Level::R5, 6, 0, 65536, 1 << 30, &g, &err, 2));
  EXPECT_NE(err.find("applies to raid50 and raid60 only"), std::string::npos) << err;
  EXPECT_TRUE(Geometry::make(Level::R60, 8, 0, 65536, 1 << 30, &g, &err, 2)) << err;
  EXPECT_EQ(g.subgroups, 2u);
}

// Each sub-group is its own failure domain.
TEST(Raid50_60, SurvivesPerSubGroup) {
  const Geometry r50 = make(Level::R50, 9, 3), r60 = make(Level::R60, 8, 2);
  EXPECT_TRUE(r50.survives(0b001'010'100));   // one in each
  EXPECT_FALSE(r50.survives(0b000'000'011));  // two in sub-group 0
  EXPECT_EQ(r50.guaranteed_redundancy(), 1u);
  EXPECT_EQ(r50.failures_tolerated(0b000'000'001), 0u);
  EXPECT_TRUE(r60.survives(0b0011'0011));
  EXPECT_FALSE(r60.survives(0b0000'0111));
  EXPECT_EQ(r60.failures_tolerated(0b0001'0000), 1u);
}

// The sub-group count is stored at offset 68 in a version 2 superblock;
// every other level's superblock stays version 1 with 0 there.
TEST(Raid50_60, SuperblockKeepsTheSubGroupCount) {
  Superblock sb;
  sb.level = Level::R60;
  sb.members = 8;
  sb.subgroups = 2;
  sb.strip_bytes = 65536;
  sb.member_data_bytes = 64ull << 20;
  std::vector<uint8_t> buf(kSuperblockBytes);
  encode_superblock(sb, buf.data());
  EXPECT_EQ(buf[8], 2);   // version
  EXPECT_EQ(buf[68], 2);  // sub-groups
  Superblock back;
  ASSERT_EQ(decode_superblock(buf.data(), &back), DecodeResult::Ok);
  EXPECT_EQ(back.subgroups, 2u);
  EXPECT_EQ(back.level, Level::R60);
  sb.level = Level::R6;
  sb.subgroups = 1;
  encode_superblock(sb, buf.data());
  EXPECT_EQ(buf[8], 1);
  EXPECT_EQ(buf[68], 0);
  ASSERT_EQ(decode_superblock(buf.data(), &back), DecodeResult::Ok);
  EXPECT_EQ(back.subgroups, 1u);
}

// Create zeroes the whole write-intent bitmap, which covers every
// sub-group: bits left on a reused drive would make the next unclean start
// resync regions nobody wrote (it zeroed one sub-group's worth before).
TEST(Raid50_60, CreateZeroesTheWholeBitmap) {
  for (Level l : {Level::R50, Level::R60}) {
    SCOPED_TRACE(level_name(l));
    const uint32_t n = l == Level::R50 ? 6 : 8;
    // One sub-group's regions fill more than one 4 KiB bitmap block (sparse files).
    GroupRig rig(n, 640u << 20);
    const std::vector<uint8_t> ones(kBitmapMaxBytes, 0xff);
    for (uint32_t m = 0; m < n; m++) rig.raw_write(m, kBitmapOffset, ones.data(), ones.size());
    GroupConfig c = config(l, 2);
    c.bitmap_region_bytes = c.strip_bytes;  // 16 KiB: > 32768 regions per sub-group
    std::string err;
    auto g = rig.create(c, 0, n, &err);
    ASSERT_TRUE(g) << err;
    const uint64_t regions = g->volume().geometry().stripes() * c.strip_bytes / c.bitmap_region_bytes;
    for (uint32_t m = 0; m < n; m++) {
      const std::vector<uint8_t> bits = rig.raw_read(m, kBitmapOffset, (regions + 7) / 8);
      size_t set = 0;
      for (uint8_t b : bits) set += __builtin_popcount(b);
      EXPECT_EQ(set, 0u) << "member " << m << ": " << set << " of " << regions << " region bits left set";
    }
    ASSERT_TRUE(g->stop(&err)) << err;
  }
}

// Data written, then one member per sub-group lost: every byte reads back.
// Then a second member of one sub-group: raid50 fails the group (reads
// error, never wrong data); raid60 still reads every byte.
TEST(Raid50_60, OnePerSubGroupThenTwoInOne) {
  for (Level l : {Level::R50, Level::R60}) {
    SCOPED_TRACE(level_name(l));
    ArrayOptions o;
    o.level = l;
    o.members = l == Level::R50 ? 6 : 8;
    o.subgroups = 2;
    o.strip = 16384;
    o.member_bytes = 2u << 20;
    TestArray a(o);
    const uint64_t size = a.vol().geometry().capacity_bytes();
    AlignedBuf data(size), back(size);
    fill_random(data.data(), size, 50);
    ASSERT_EQ(a.write(0, size, data.data()), 0);
    const uint32_t w = o.members / 2;
    a.drive(1).faults().arm(FaultInjector::kVanished);
    a.drive(w + 2).faults().arm(FaultInjector::kVanished);
    ASSERT_EQ(a.read(0, size, back.data()), 0);
    ASSERT_EQ(memcmp(data.data(), back.data(), size), 0);
    EXPECT_FALSE(a.group_failed_event);
    a.drive(0).faults().arm(FaultInjector::kVanished);  // a second in sub-group 0
    const int r = a.read(0, size, back.data());
    if (l == Level::R50) {
      EXPECT_LT(r, 0);
      EXPECT_TRUE(a.group_failed_event);
    } else {
      ASSERT_EQ(r, 0);
      EXPECT_EQ(memcmp(data.data(), back.data(), size), 0);
      EXPECT_FALSE(a.group_failed_event);
    }
  }
}

// Through a drive group: a member of each sub-group failed, replaced and
// rebuilt, the rebuilt members then relied on; scrub finds and repairs a
// corrupt strip in sub-group 1 (and checks every stripe of every sub-group).
TEST(Raid50_60, GroupRebuildsEachSubGroupAndScrubs) {
  for (Level l : {Level::R50, Level::R60}) {
    SCOPED_TRACE(level_name(l));
    const uint32_t n = l == Level::R50 ? 6 : 8, w = n / 2;
    GroupRig rig(n + 2, 8u << 20);
    std::string err;
    auto g = rig.create(config(l, 2), 0, n, &err);
    ASSERT_TRUE(g) << err;
    Volume& v = g->volume();
    Image img(v.size_bytes());
    img.write_all(rig, v);
    ASSERT_TRUE(g->fail_member(1, &err)) << err;
    ASSERT_TRUE(g->fail_member(w + 1, &err)) << err;
    EXPECT_EQ(g->state(), GroupState::Degraded);
    img.check(rig, v);
    for (uint32_t m : {1u, w + 1}) {
      rig.clear_events();
      ASSERT_TRUE(g->replace_member(m, rig.open(m == 1 ? n : n + 1), false, &err)) << err;
      ASSERT_TRUE(rig.wait([&] { return !g->rebuild_progress().running && rig.find_event(GroupEvent::RebuildFinished); }))
          << "rebuild of member " << m;
    }
    EXPECT_EQ(g->state(), GroupState::Optimal);
    // The rebuilt members now carry their sub-groups: lose the others.
    for (uint32_t m : {0u, w + 2}) ASSERT_TRUE(g->fail_member(m, &err)) << err;
    img.check(rig, v);
    ASSERT_TRUE(g->stop(&err)) << err;
  }
  for (Level l : {Level::R50, Level::R60}) {
    SCOPED_TRACE(level_name(l));
    const uint32_t n = l == Level::R50 ? 6 : 8;
    GroupRig rig(n, 8u << 20);
    std::string err;
    auto g = rig.create(config(l, 2), 0, n, &err);
    ASSERT_TRUE(g) << err;
    Volume& v = g->volume();
    const Geometry& geo = v.geometry();
    Image img(v.size_bytes());
    img.write_all(rig, v);
    const uint64_t stripe = 7;  // sub-group 1, row 3
    // raid60 locates a corrupt data strip and rebuilds it; raid50 (one
    // parity row) cannot locate, and repair rewrites parity: corrupt that.
    const uint32_t member = l == Level::R60 ? geo.data_member(stripe, 0) : geo.parity_member(stripe, 0);
    ASSERT_GE(member, n / 2);
    std::vector<uint8_t> junk(100, 0x5a);
    rig.raw_write(member, kMetadataBytes + geo.member_offset(stripe) + 10, junk.data(), junk.size());
    rig.clear_events();
    ASSERT_TRUE(g->start_scrub(true, &err)) << err;
    ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::ScrubFinished); }));
    EXPECT_EQ(g->last_scrub().mismatched_stripes, 1u);
    ASSERT_EQ(g->last_scrub().mismatch_stripes.size(), 1u);
    EXPECT_EQ(g->last_scrub().mismatch_stripes[0], stripe);
    // raid60 knew the wrong strip (repaired); raid50 made the stripe
    // consistent without knowing (here parity was the wrong side).
    EXPECT_EQ(g->last_scrub().repaired_stripes, l == Level::R60 ? 1u : 0u);
    EXPECT_EQ(g->last_scrub().made_consistent_stripes, l == Level::R60 ? 0u : 1u);
    EXPECT_EQ(g->last_scrub().stripes_checked, geo.stripes());
    img.check(rig, v);
    ASSERT_TRUE(g->stop(&err)) << err;
  }
}
