#include <gtest/gtest.h>

#include "engine/geometry.h"

using namespace gpuraid;

static Geometry make(Level l, uint32_t n, uint32_t m = 0, uint32_t strip = 65536) {
  Geometry g;
  std::string err;
  EXPECT_TRUE(Geometry::make(l, n, m, strip, 64ull << 20, &g, &err)) << err;
  return g;
}

// md's raid5 left-symmetric (mdadm default), 4 disks: rows are stripes,
// entries are what each disk holds (data index or P). From md's
// raid5_compute_sector: pd = n-1 - s%n, dd = (pd+1+i)%n.
//   D0 D1 D2 P
//   D4 D5 P  D3
//   D8 P  D6 D7
//   P  D9 D10 D11
TEST(Geometry, Raid5LeftSymmetricMatchesMd) {
  Geometry g = make(Level::R5, 4);
  const int P = -1;
  int layout[4][4] = {{0, 1, 2, P}, {1, 2, P, 0}, {2, P, 0, 1}, {P, 0, 1, 2}};
  for (uint64_t s = 0; s < 8; s++) {
    EXPECT_EQ(g.parity_member(s, 0), 3 - s % 4);
    for (uint32_t disk = 0; disk < 4; disk++) {
      int want = layout[s % 4][disk];
      if (want == P) EXPECT_EQ(g.parity_member(s, 0), disk);
      else EXPECT_EQ(g.data_member(s, uint32_t(want)), disk) << "stripe " << s;
    }
  }
}

// md's raid6 left-symmetric, 5 disks (md's comment: "Q D D D P" first):
//   Q  D0 D1 D2 P
//   D0 D1 D2 P  Q      (stripe 1: P on disk 3, Q on disk 4)
//   D1 D2 P  Q  D0
TEST(Geometry, Raid6LeftSymmetricMatchesMd) {
  Geometry g = make(Level::R6, 5);
  EXPECT_EQ(g.data_strips(), 3u);
  const int P = -1, Q = -2;
  int layout[5][5] = {{Q, 0, 1, 2, P}, {0, 1, 2, P, Q}, {1, 2, P, Q, 0}, {2, P, Q, 0, 1}, {P, Q, 0, 1, 2}};
  for (uint64_t s = 0; s < 10; s++)
    for (uint32_t disk = 0; disk < 5; disk++) {
      int want = layout[s % 5][disk];
      if (want == P) EXPECT_EQ(g.parity_member(s, 0), disk) << s;
      else if (want == Q) EXPECT_EQ(g.parity_member(s, 1), disk) << s;
      else EXPECT_EQ(g.data_member(s, uint32_t(want)), disk) << "stripe " << s;
    }
}

// Every stripe of every parity geometry places each member exactly once.
TEST(Geometry, EveryStripeIsAPermutation) {
  for (Level l : {Level::R5, Level::R6, Level::EC})
    for (uint32_t n = 3; n <= 20; n++) {
      uint32_t m = l == Level::EC ? std::min(4u, n - 1) : 0;
      if (l == Level::R6 && n < 4) continue;
      Geometry g = make(l, n, m);
      for (uint64_t s = 0; s < 2 * n; s++) {
        uint64_t seen = 0;
        for (uint32_t i = 0; i < g.data_strips(); i++) seen |= 1ull << g.data_member(s, i);
        for (uint32_t j = 0; j < g.parity; j++) seen |= 1ull << g.parity_member(s, j);
        EXPECT_EQ(seen, (1ull << n) - 1) << level_name(l) << " n=" << n << " s=" << s;
      }
    }
}

TEST(Geometry, MirrorsAndStripes) {
  Geometry r0 = make(Level::R0, 3), r1 = make(Level::R1, 3), r10 = make(Level::R10, 6);
  EXPECT_EQ(r0.data_strips(), 3u);
  EXPECT_EQ(r0.data_member(5, 2), 2u);
  EXPECT_EQ(r1.data_strips(), 1u);
  EXPECT_EQ(r1.copies(), 3u);
  EXPECT_EQ(r10.data_strips(), 3u);
  EXPECT_EQ(r10.data_member(0, 1, 0), 2u);  // md near=2: copies on adjacent members
  EXPECT_EQ(r10.data_member(0, 1, 1), 3u);
  EXPECT_EQ(r10.capacity_bytes(), 3 * (64ull << 20));
}

TEST(Geometry, Survival) {
  Geometry r5 = make(Level::R5, 4), r6 = make(Level::R6, 6), r10 = make(Level::R10, 4),
           ec = make(Level::EC, 7, 3), r1 = make(Level::R1, 3), r0 = make(Level::R0, 2);
  EXPECT_TRUE(r5.survives(0b0010));
  EXPECT_FALSE(r5.survives(0b0110));
  EXPECT_TRUE(r6.survives(0b100001));
  EXPECT_FALSE(r6.survives(0b100011));
  EXPECT_TRUE(r10.survives(0b0101));   // one of each pair
  EXPECT_FALSE(r10.survives(0b0011));  // both copies of pair 0
  EXPECT_TRUE(ec.survives(0b0000111));
  EXPECT_FALSE(ec.survives(0b0001111));
  EXPECT_TRUE(r1.survives(0b011));
  EXPECT_FALSE(r1.survives(0b111));
  EXPECT_FALSE(r0.survives(1));
}

// Further failures survived now, whichever members they hit.
TEST(Geometry, FailuresTolerated) {
  Geometry r5 = make(Level::R5, 4), r6 = make(Level::R6, 6), r10 = make(Level::R10, 4),
           ec = make(Level::EC, 7, 3), r1 = make(Level::R1, 3), r0 = make(Level::R0, 2);
  EXPECT_EQ(r0.failures_tolerated(0), 0u);
  EXPECT_EQ(r5.failures_tolerated(0), 1u);
  EXPECT_EQ(r5.failures_tolerated(0b0010), 0u);
  EXPECT_EQ(r6.failures_tolerated(0), 2u);
  EXPECT_EQ(r6.failures_tolerated(0b000100), 1u);
  EXPECT_EQ(r6.failures_tolerated(0b100001), 0u);
  EXPECT_EQ(r6.failures_tolerated(0b100011), 0u);  // past it: failed
  EXPECT_EQ(ec.failures_tolerated(0b0000001), 2u);
  EXPECT_EQ(r1.failures_tolerated(0), 2u);
  EXPECT_EQ(r1.failures_tolerated(0b001), 1u);
  EXPECT_EQ(r10.failures_tolerated(0), 1u);
  EXPECT_EQ(r10.failures_tolerated(0b0100), 0u);  // pair 1 has one copy left
  for (const Geometry* g : {&r5, &r6, &r10, &ec, &r1, &r0}) EXPECT_EQ(g->failures_tolerated(0), g->guaranteed_redundancy());
}

TEST(Geometry, RefusesBadGeometry) {
  Geometry g;
  std::string err;
  EXPECT_FALSE(Geometry::make(Level::R5, 4, 0, 3000, 1 << 30, &g, &err));
  EXPECT_NE(err.find("power of two"), std::string::npos) << err;
  EXPECT_FALSE(Geometry::make(Level::R5, 4, 0, 2u << 20, 1 << 30, &g, &err));
  EXPECT_FALSE(Geometry::make(Level::R5, 2, 0, 65536, 1 << 30, &g, &err));
  EXPECT_NE(err.find("at least 3"), std::string::npos) << err;
  EXPECT_FALSE(Geometry::make(Level::R6, 3, 0, 65536, 1 << 30, &g, &err));
  EXPECT_FALSE(Geometry::make(Level::R10, 5, 0, 65536, 1 << 30, &g, &err));
  EXPECT_FALSE(Geometry::make(Level::EC, 10, 5, 65536, 1 << 30, &g, &err));
  EXPECT_FALSE(Geometry::make(Level::EC, 10, 0, 65536, 1 << 30, &g, &err));
  EXPECT_FALSE(Geometry::make(Level::EC, 65, 4, 65536, 1 << 30, &g, &err));
  EXPECT_NE(err.find("at most 64"), std::string::npos) << err;
  EXPECT_FALSE(Geometry::make(Level::R5, 4, 0, 65536, 4096, &g, &err));
  EXPECT_TRUE(Geometry::make(Level::EC, 64, 4, 4096, 1 << 20, &g, &err)) << err;
  EXPECT_EQ(g.data_strips(), 60u);
}

TEST(Geometry, ParseLevel) {
  Level l;
  EXPECT_TRUE(parse_level("6", &l));
  EXPECT_EQ(l, Level::R6);
  EXPECT_TRUE(parse_level("ec", &l));
  EXPECT_FALSE(parse_level("7", &l));
}
