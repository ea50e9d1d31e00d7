// draid5 / draid6 (engine/levels/declustered.cpp, issue 34): the level puts
// every stripe where the placement map says (declustered_map_test checks
// the map itself), one strip per member per row with spare room left free;
// the creation rules; the superblock keeps the shape (version 4); any P
// members fail and every byte still reads; through a drive group a failed
// member is rebuilt into the distributed spare room, relied on, and the
// group comes back from its superblocks after a stop.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "engine/group/superblock.h"
#include "engine/levels/declustered_map.h"
#include "tests/support/group_rig.h"
#include "tests/support/test_array.h"
#include "tests/support/volume_image.h"

using namespace gpuraid;
using namespace gpuraid::test;

namespace {

Geometry make(Level l, uint32_t n, uint32_t data, uint32_t spares, uint32_t strip = 65536) {
  Geometry g;
  std::string err;
  EXPECT_TRUE(Geometry::make(l, n, 0, strip, 64ull << 20, &g, &err, 0, {data, spares})) << err;
  return g;
}

GroupConfig config(Level l, uint32_t data, uint32_t spares) {
  GroupConfig c;
  c.level = l;
  c.declustered = {data, spares};
  c.strip_bytes = 16384;
  c.name = "dg-declustered";
  c.assume_zeroed = true;
  c.bitmap_region_bytes = 1u << 20;
  return c;
}

}  // namespace

TEST(Declustered, LayoutIsTheMap) {
  const Geometry g = make(Level::DR6, 24, 8, 2);
  DeclusteredMap m;
  std::string err;
  ASSERT_TRUE(DeclusteredMap::make(24, 8, 2, 2, DeclusteredMap::seed_of(24, 8, 2, 2), &m, &err)) << err;
  EXPECT_EQ(g.data_strips(), 8u);
  EXPECT_EQ(g.parity, 2u);
  EXPECT_EQ(g.row_stripes(), 2u);
  EXPECT_EQ(g.stripes(), (64ull << 20) / 65536 * 2);
  EXPECT_EQ(g.capacity_bytes(), g.stripes() * 8 * 65536);
  for (uint64_t s = 0; s < 24 * 64 * 2 + 10; s += 7) {
    EXPECT_EQ(g.member_offset(s), s / 2 * 65536);
    for (uint32_t di = 0; di < 8; di++) ASSERT_EQ(g.data_member(s, di), m.drive(s, di)) << s;
    for (uint32_t j = 0; j < 2; j++) ASSERT_EQ(g.parity_member(s, j), m.drive(s, 8 + j)) << s;
  }
}

// One strip per member per row: stripes never share a member strip, and
// each row leaves the map's spare strips free.
TEST(Declustered, EveryMemberStripHoldsOneStripe) {
  for (const auto& [l, n, d, sp] : {std::tuple{Level::DR6, 24u, 8u, 2u}, std::tuple{Level::DR5, 11u, 4u, 1u},
                                    std::tuple{Level::DR6, 48u, 8u, 2u}}) {
    const Geometry g = make(l, n, d, sp);
    SCOPED_TRACE(g.describe());
    std::set<std::pair<uint32_t, uint64_t>> used;
    for (uint64_t s = 0; s < uint64_t(n) * 70 * g.row_stripes(); s++) {
      for (uint32_t di = 0; di < g.data_strips(); di++)
        ASSERT_TRUE(used.insert({g.data_member(s, di), g.member_offset(s)}).second) << s;
      for (uint32_t j = 0; j < g.parity; j++)
        ASSERT_TRUE(used.insert({g.parity_member(s, j), g.member_offset(s)}).second) << s;
    }
    const uint64_t rows = uint64_t(n) * 70;
    EXPECT_EQ(used.size(), rows * g.row_stripes() * (d + g.parity));
    EXPECT_EQ(rows * n - used.size(), rows * g.map().spares_per_row());
  }
}

TEST(Declustered, CreationRulesSayWhy) {
  Geometry g;
  std::string err;
  EXPECT_FALSE(Geometry::make(Level::DR6, 24, 0, 65536, 1 << 30, &g, &err));
  EXPECT_NE(err.find("--data"), std::string::npos) << err;
  EXPECT_FALSE(Geometry::make(Level::DR6, 24, 0, 65536, 1 << 30, &g, &err, 0, {8, 0}));
  EXPECT_NE(err.find("--spares"), std::string::npos) << err;
  EXPECT_FALSE(Geometry::make(Level::DR6, 10, 0, 65536, 1 << 30, &g, &err, 0, {8, 1}));
  EXPECT_NE(err.find("10 drives cannot hold a stripe of 10 and 1 spare(s)"), std::string::npos) << err;
  EXPECT_FALSE(Geometry::make(Level::R6, 10, 0, 65536, 1 << 30, &g, &err, 0, {8, 1}));
  EXPECT_NE(err.find("apply to draid5 and draid6 only"), std::string::npos) << err;
  EXPECT_FALSE(Geometry::make(Level::DR5, 8, 0, 65536, 1 << 30, &g, &err, 2, {4, 1}));
  EXPECT_NE(err.find("no sub-groups"), std::string::npos) << err;
  EXPECT_TRUE(Geometry::make(Level::DR5, 6, 0, 65536, 1 << 30, &g, &err, 0, {4, 1})) << err;
  EXPECT_EQ(g.parity, 1u);
  EXPECT_EQ(g.guaranteed_redundancy(), 1u);
  EXPECT_EQ(g.failures_tolerated(0b1), 0u);
  EXPECT_TRUE(make(Level::DR6, 12, 4, 2).survives(0b1000'0000'0001));
  EXPECT_FALSE(make(Level::DR6, 12, 4, 2).survives(0b1000'0000'0011));
}

// The shape is stored at offsets 240 and 244 of a version 4 superblock;
// other levels' superblocks keep their versions.
TEST(Declustered, SuperblockKeepsTheShape) {
  Superblock sb;
  sb.level = Level::DR6;
  sb.members = 24;
  sb.parity = 2;
  sb.declustered = {8, 2};
  sb.strip_bytes = 65536;
  sb.member_data_bytes = 64ull << 20;
  sb.bitmap_region_bytes = 1u << 20;
  std::vector<uint8_t> buf(kSuperblockBytes);
  encode_superblock(sb, buf.data());
  EXPECT_EQ(buf[8], 4);    // version
  EXPECT_EQ(buf[240], 8);  // data strips
  EXPECT_EQ(buf[244], 2);  // spares
  Superblock back;
  ASSERT_EQ(decode_superblock(buf.data(), &back), DecodeResult::Ok);
  EXPECT_EQ(back.level, Level::DR6);
  EXPECT_EQ(back.declustered, (DeclusteredShape{8, 2}));
  EXPECT_EQ(back.row_stripes(), 2u);
  EXPECT_EQ(back.bitmap_regions(), 128u);  // 64 MiB x 2 stripes a row / 1 MiB
  sb.level = Level::R6;
  sb.members = 10;
  sb.declustered = {};
  encode_superblock(sb, buf.data());
  EXPECT_EQ(buf[8], 1);
  EXPECT_EQ(buf[240], 0);
}

// Any P members lost: every byte reads back; one more fails the group
// (reads error, never wrong data).
TEST(Declustered, AnyParityMembersFail) {
  for (Level l : {Level::DR5, Level::DR6}) {
    SCOPED_TRACE(level_name(l));
    ArrayOptions o;
    o.level = l;
    o.members = 12;
    o.declustered = {3, 2};
    o.strip = 16384;
    o.member_bytes = 2u << 20;
    TestArray a(o);
    const uint64_t size = a.vol().geometry().capacity_bytes();
    AlignedBuf data(size), back(size);
    fill_random(data.data(), size, 34);
    ASSERT_EQ(a.write(0, size, data.data()), 0);
    const uint32_t p = a.vol().geometry().parity;
    for (uint32_t i = 0; i < p; i++) a.drive(3 + 4 * i).faults().arm(FaultInjector::kVanished);
    ASSERT_EQ(a.read(0, size, back.data()), 0);
    ASSERT_EQ(memcmp(data.data(), back.data(), size), 0);
    EXPECT_FALSE(a.group_failed_event);
    a.drive(0).faults().arm(FaultInjector::kVanished);
    EXPECT_LT(a.read(0, size, back.data()), 0);
    EXPECT_TRUE(a.group_failed_event);
  }
}

// Through a drive group: a failed member is rebuilt into the distributed
// spare room by itself (distributed_spare_group_test covers the room in
// depth, on draid6); the group reassembles from its superblocks (the shape
// and the room read back), the member is copied back onto a replacement
// drive (dg replace) and relied on there while P others fail.
TEST(Declustered, GroupRebuildsIntoTheRoomAndReassembles) {
  for (Level l : {Level::DR5, Level::DR6}) {
    SCOPED_TRACE(level_name(l));
    const uint32_t n = 9;
    GroupRig rig(n + 1, 8u << 20);
    std::string err;
    auto g = rig.create(config(l, 4, 1), 0, n, &err);
    ASSERT_TRUE(g) << err;
    Volume& v = g->volume();
    const uint32_t p = v.geometry().parity;
    Image img(v.size_bytes());
    img.write_all(rig, v);
    rig.clear_events();
    ASSERT_TRUE(g->fail_member(2, &err)) << err;
    img.check(rig, v);
    ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::RebuildFinished) && g->state() == GroupState::Optimal; }));
    EXPECT_EQ(v.room_mask(), 1ull << 2);
    ASSERT_TRUE(g->stop(&err)) << err;
    g.reset();
    std::vector<std::unique_ptr<Drive>> drives;
    for (uint32_t i = 0; i < n; i++)
      if (i != 2) drives.push_back(rig.open(i));
    std::string note;
    g = rig.assemble(std::move(drives), &note, &err);
    ASSERT_TRUE(g) << err;
    EXPECT_EQ(g->geometry().declustered, (DeclusteredShape{4, 1}));
    EXPECT_EQ(g->state(), GroupState::Optimal) << note;
    EXPECT_EQ(g->volume().room_mask(), 1ull << 2);
    img.check(rig, g->volume());
    // Copied back onto a new drive: the room is empty again, and the
    // member on that drive is relied on while P others fail.
    rig.clear_events();
    ASSERT_TRUE(g->replace_member(2, rig.open(n), false, &err)) << err;
    ASSERT_TRUE(rig.wait([&] { return rig.find_event(GroupEvent::RebuildFinished) && g->state() == GroupState::Optimal; }));
    EXPECT_EQ(g->volume().room_mask(), 0u);
    EXPECT_EQ(g->members()[2].path, rig.path(n));
    for (uint32_t i = 0; i < p; i++) ASSERT_TRUE(g->fail_member(5 + i, &err)) << err;
    img.check(rig, g->volume());
    ASSERT_TRUE(g->stop(&err)) << err;
  }
}
