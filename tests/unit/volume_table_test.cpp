// The volume table on a group's members (engine/group/volume_table.h):
// what dg import brings virtual drives back from.
#include <gtest/gtest.h>

#include <cstring>

#include "engine/group/metadata_io.h"
#include "engine/group/volume_table.h"
#include "tests/support/group_rig.h"

using namespace gpuraid;
using namespace gpuraid::test;

TEST(VolumeTable, EncodesAndDecodes) {
  VolumeTable t;
  t.group_uuid[0] = 7;
  t.generation = 42;
  t.volumes = {{"v", 0, 1 << 20}, {"数据卷", 1 << 20, 3 << 20}};
  std::vector<uint8_t> b(kVolumeTableBytes);
  std::string err;
  ASSERT_TRUE(encode_volume_table(t, b.data(), &err)) << err;
  VolumeTable d;
  ASSERT_TRUE(decode_volume_table(b.data(), &d, &err)) << err;
  EXPECT_EQ(d.generation, 42u);
  EXPECT_EQ(d.group_uuid, t.group_uuid);
  EXPECT_EQ(d.volumes, t.volumes);
  b[100] ^= 1;
  EXPECT_FALSE(decode_volume_table(b.data(), &d, &err));
  EXPECT_NE(err.find("checksum"), std::string::npos) << err;
  t.volumes.assign(kVolumeTableMax + 1, VolumeEntry{"x", 0, 1});
  EXPECT_FALSE(encode_volume_table(t, b.data(), &err));
  std::vector<uint8_t> zero(kVolumeTableBytes, 0);
  EXPECT_FALSE(decode_volume_table(zero.data(), &d, &err)) << "a group of before the table has none";
}

// Written to every usable member, each write a newer generation; a torn
// copy leaves the other; a failed member is left out.
TEST(VolumeTable, GroupWritesItToItsMembers) {
  GroupRig rig(4);
  std::string err;
  auto g = rig.create(test_group_config(Level::R5, 0, 65536, "dg-vt"), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  ASSERT_TRUE(g->write_volume_table({{"a", 0, 1 << 20}}, &err)) << err;
  ASSERT_TRUE(g->fail_member(3, &err)) << err;
  ASSERT_TRUE(g->write_volume_table({{"a", 0, 1 << 20}, {"b", 1 << 20, 2 << 20}}, &err)) << err;
  ASSERT_TRUE(g->stop(&err)) << err;
  g.reset();
  for (uint32_t m = 0; m < 4; m++) {
    auto d = rig.open(m);
    VolumeTable t;
    std::string why;
    ASSERT_TRUE(read_volume_table(*d, &t, &why)) << why;
    EXPECT_EQ(t.volumes.size(), m == 3 ? 1u : 2u) << "member " << m;
    EXPECT_EQ(t.generation, m == 3 ? 1u : 2u) << "member " << m;
  }
  // Copy A torn: copy B is read.
  std::vector<uint8_t> junk(4096, 0xab);
  rig.raw_write(0, kVolumeTableOffsets[0], junk.data(), junk.size());
  auto d = rig.open(0);
  VolumeTable t;
  std::string why;
  ASSERT_TRUE(read_volume_table(*d, &t, &why)) << why;
  EXPECT_EQ(t.volumes.size(), 2u);
}

// The daemon asks for the table at every start: a table every member holds
// already is not written again (no generation, no flush); a change is.
TEST(VolumeTable, ATableTheMembersHoldIsNotWrittenAgain) {
  GroupRig rig(3);
  std::string err;
  auto g = rig.create(test_group_config(Level::R5, 0, 65536, "dg-vt2"), 0, 3, &err);
  ASSERT_TRUE(g) << err;
  ASSERT_TRUE(g->write_volume_table({{"a", 0, 1 << 20}}, &err)) << err;
  ASSERT_TRUE(g->stop(&err)) << err;
  g.reset();
  auto gen_of = [&](uint32_t m) {
    VolumeTable t;
    std::string why;
    auto d = rig.open(m);
    EXPECT_TRUE(read_volume_table(*d, &t, &why)) << why;
    return t.generation;
  };
  auto again = rig.assemble(rig.open_range(0, 3), nullptr, &err);
  ASSERT_TRUE(again) << err;
  ASSERT_TRUE(again->write_volume_table({{"a", 0, 1 << 20}}, &err)) << err;
  for (uint32_t m = 0; m < 3; m++) EXPECT_EQ(gen_of(m), 1u) << "member " << m << ": written again";
  ASSERT_TRUE(again->write_volume_table({{"a", 0, 2 << 20}}, &err)) << err;
  for (uint32_t m = 0; m < 3; m++) EXPECT_EQ(gen_of(m), 2u) << "member " << m;
  ASSERT_TRUE(again->stop(&err)) << err;
}
