// A degraded partial stripe write flushes the stripe's members that may
// hold earlier writes in a volatile cache before its new parity goes out
// (engine/io/member_durability.h says why; the VM power-cut lane with
// volatile caches, tests/vm/powerloss.sh degraded, is the end-to-end proof:
// this test pins down when the flushes are issued and when they are not).
#include <gtest/gtest.h>

#include "tests/support/group_rig.h"
#include "tests/support/volume_image.h"

using namespace gpuraid;
using namespace gpuraid::test;

namespace {

uint64_t flushes(Group& g) { return g.volume().stats().degraded_flushes; }

}  // namespace

TEST(DegradedFlush, OnlyWhenDegradedPartialAndNotYetDurable) {
  GroupRig rig(4);
  std::string err;
  auto g = rig.create(test_group_config(Level::R5, 0, 65536), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  const Geometry& geo = v.geometry();
  for (uint32_t m = 0; m < 4; m++) ASSERT_TRUE(v.member(m)->volatile_cache()) << "file drives have a page cache";
  const uint64_t strip = geo.strip_bytes, s = 3;  // stripe 3, its data roles 0..2
  const uint64_t base = s * geo.stripe_data_bytes();
  AlignedBuf a(4096), b(4096), c(4096), full(geo.stripe_data_bytes()), r(4096);
  fill_random(a.data(), 4096, 1);
  fill_random(b.data(), 4096, 2);
  fill_random(c.data(), 4096, 3);
  fill_random(full.data(), full.size(), 4);

  // Healthy: parity never stands for a strip nobody can read.
  ASSERT_EQ(0, rig.io(v, IoRequest::Write, base + 2 * strip, 4096, c.data()));
  ASSERT_EQ(0, rig.io(v, IoRequest::Write, base, 4096, a.data()));
  EXPECT_EQ(flushes(*g), 0u);

  // Role 2's member fails: every member's earlier writes count as not durable.
  const uint32_t failed = geo.data_member(s, 2);
  ASSERT_TRUE(g->fail_member(failed, &err)) << err;
  for (uint32_t m = 0; m < 4; m++) {
    if (m == failed) continue;
    EXPECT_TRUE(v.durability().dirty(m)) << "member " << m;
  }
  ASSERT_EQ(0, rig.io(v, IoRequest::Write, base + strip, 4096, b.data()));  // role 1
  EXPECT_EQ(flushes(*g), 1u) << "the first degraded partial write flushed roles 0 and 1 first";
  EXPECT_FALSE(v.durability().dirty(geo.data_member(s, 0)));
  // Role 1's member just took a write; a write to role 0 depends on it.
  EXPECT_TRUE(v.durability().dirty(geo.data_member(s, 1)));
  ASSERT_EQ(0, rig.io(v, IoRequest::Write, base, 4096, a.data()));
  EXPECT_EQ(flushes(*g), 2u);

  // A client's flush makes them durable: the next write needs none.
  ASSERT_EQ(0, rig.io(v, IoRequest::Flush, 0, 0, nullptr));
  EXPECT_FALSE(v.durability().dirty(geo.data_member(s, 0)));
  EXPECT_FALSE(v.durability().dirty(geo.data_member(s, 1)));
  ASSERT_EQ(0, rig.io(v, IoRequest::Write, base + strip, 4096, b.data()));
  EXPECT_EQ(flushes(*g), 2u);

  // A full-stripe write depends on nothing already there.
  ASSERT_EQ(0, rig.io(v, IoRequest::Write, base + geo.stripe_data_bytes(), full.size(), full.data()));
  EXPECT_EQ(flushes(*g), 2u);

  // The failed strip still reads back (through the new parity).
  ASSERT_EQ(0, rig.io(v, IoRequest::Read, base + 2 * strip, 4096, r.data()));
  EXPECT_EQ(0, memcmp(r.data(), c.data(), 4096));
  ASSERT_TRUE(g->stop(&err)) << err;
}

// Where the failed member holds only this stripe's parity, no data strip
// depends on the new parity: no flush.
TEST(DegradedFlush, NoneWhereOnlyParityFailed) {
  GroupRig rig(4);
  std::string err;
  auto g = rig.create(test_group_config(Level::R5, 0, 65536), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  const Geometry& geo = v.geometry();
  const uint64_t s = 1;
  ASSERT_TRUE(g->fail_member(geo.parity_member(s, 0), &err)) << err;
  AlignedBuf a(4096);
  fill_random(a.data(), 4096, 5);
  ASSERT_EQ(0, rig.io(v, IoRequest::Write, s * geo.stripe_data_bytes(), 4096, a.data()));
  ASSERT_EQ(0, rig.io(v, IoRequest::Write, s * geo.stripe_data_bytes() + 8192, 4096, a.data()));
  EXPECT_EQ(flushes(*g), 0u);
  ASSERT_TRUE(g->stop(&err)) << err;
}

// While a member is rebuilt, stripes past its checkpoint still stand in for
// it: writes there are counted and flushed as when it was failed.
TEST(DegradedFlush, WhileRebuildingPastTheCheckpoint) {
  GroupRig rig(5);
  std::string err;
  auto g = rig.create(test_group_config(Level::R5, 0, 65536), 0, 4, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  const Geometry& geo = v.geometry();
  const uint64_t strip = geo.strip_bytes, s = geo.stripes() - 2;  // far past any checkpoint
  const uint64_t base = s * geo.stripe_data_bytes();
  AlignedBuf a(4096);
  fill_random(a.data(), 4096, 9);
  const uint32_t failed = geo.data_member(s, 2);
  ASSERT_TRUE(g->fail_member(failed, &err)) << err;
  ASSERT_EQ(0, rig.io(v, IoRequest::Flush, 0, 0, nullptr));  // nothing dirty
  g->pause_rebuild(true);
  ASSERT_TRUE(g->replace_member(failed, rig.open(4), false, &err)) << err;
  ASSERT_GE(v.rebuilding_member(), 0);
  const uint64_t before = flushes(*g);
  ASSERT_EQ(0, rig.io(v, IoRequest::Write, base, 4096, a.data()));           // role 0: counted
  ASSERT_EQ(0, rig.io(v, IoRequest::Write, base + strip, 4096, a.data()));   // role 1: role 0 first
  EXPECT_GE(flushes(*g), before + 1) << "a write past the rebuild checkpoint flushed nothing";
  g->pause_rebuild(false);
  ASSERT_TRUE(rig.wait([&] { return g->state() == GroupState::Optimal; }));
  AlignedBuf r(4096);
  ASSERT_EQ(0, rig.io(v, IoRequest::Read, base + strip, 4096, r.data()));
  EXPECT_EQ(0, memcmp(r.data(), a.data(), 4096));
  ASSERT_TRUE(g->stop(&err)) << err;
}
