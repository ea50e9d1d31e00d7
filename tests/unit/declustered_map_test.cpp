// The placement map of declustered parity (engine/levels/declustered_map.h,
// issue 34): every stripe on distinct drives, every drive the same share of
// data, parity and spare room, and a failed drive's rebuild spread over all
// the others, reads and writes.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "engine/levels/declustered_map.h"

using namespace gpuraid;

namespace {

DeclusteredMap make(uint32_t n, uint32_t d, uint32_t p, uint32_t s, uint64_t seed = 42) {
  DeclusteredMap m;
  std::string err;
  EXPECT_TRUE(DeclusteredMap::make(n, d, p, s, seed, &m, &err)) << err;
  return m;
}

// Rows in which every permutation has rotated through every drive.
uint64_t full_cycle(const DeclusteredMap& m) { return uint64_t(m.drives()) * DeclusteredMap::kPermutations; }

}  // namespace

TEST(DeclusteredMap, Shapes) {
  DeclusteredMap m;
  std::string err;
  EXPECT_FALSE(DeclusteredMap::make(10, 8, 2, 1, 1, &m, &err)) << "no room for a spare";
  EXPECT_FALSE(DeclusteredMap::make(65, 8, 2, 1, 1, &m, &err));
  EXPECT_FALSE(DeclusteredMap::make(24, 8, 2, 0, 1, &m, &err));
  m = make(24, 8, 2, 1);
  EXPECT_EQ(m.stripes_per_row(), 2u);  // 20 of 24 strips a row: 4 of spare room (at least the 1 asked)
  EXPECT_EQ(m.spares_per_row(), 4u);
  m = make(48, 8, 2, 2);
  EXPECT_EQ(m.stripes_per_row(), 4u);
  EXPECT_EQ(m.spares_per_row(), 8u);
}

TEST(DeclusteredMap, EveryStripeOnDistinctDrivesEveryDriveTheSameShare) {
  for (auto [n, d, p, s] : {std::array<uint32_t, 4>{24, 8, 2, 1}, {48, 8, 2, 2}, {11, 4, 1, 1}, {64, 6, 3, 4}}) {
    const DeclusteredMap m = make(n, d, p, s);
    std::vector<uint64_t> data(n), parity(n), spare(n);
    const uint64_t rows = full_cycle(m);
    for (uint64_t st = 0; st < rows * m.stripes_per_row(); st++) {
      std::set<uint32_t> on;
      for (uint32_t c = 0; c < m.width(); c++) {
        const uint32_t dr = m.drive(st, c);
        ASSERT_LT(dr, n);
        EXPECT_TRUE(on.insert(dr).second) << "stripe " << st << " has two strips on drive " << dr;
        (c < d ? data : parity)[dr]++;
      }
    }
    for (uint64_t r = 0; r < rows; r++)
      for (uint32_t i = 0; i < m.spares_per_row(); i++) spare[m.spare_drive(r, i)]++;
    for (uint32_t dr = 0; dr < n; dr++) {
      EXPECT_EQ(data[dr], data[0]) << n << " drives: data strips of drive " << dr;
      EXPECT_EQ(parity[dr], parity[0]) << n << " drives: parity strips of drive " << dr;
      EXPECT_EQ(spare[dr], spare[0]) << n << " drives: spare strips of drive " << dr;
    }
    EXPECT_EQ(data[0] + parity[0] + spare[0], rows) << "one strip per drive per row";
  }
}

// What the rebuild of one failed drive reads and writes, per drive: spread
// over all the others, so that it is not bound by one drive's speed.
TEST(DeclusteredMap, ARebuildIsSpreadOverEveryOtherDrive) {
  for (auto [n, s] : {std::array<uint32_t, 2>{24, 1}, {48, 2}}) {
    const DeclusteredMap m = make(n, 8, 2, s);
    const uint32_t f = 5;
    std::vector<uint64_t> reads(n), writes(n);
    uint64_t rebuilt = 0;
    for (uint64_t st = 0; st < full_cycle(m) * m.stripes_per_row(); st++) {
      int lost = -1;
      for (uint32_t c = 0; c < m.width(); c++)
        if (m.drive(st, c) == f) lost = int(c);
      if (lost < 0) continue;
      const int to = m.spare_for(m.row_of(st), {f}, 0);
      ASSERT_GE(to, 0);
      ASSERT_NE(uint32_t(to), f);
      for (uint32_t c = 0, used = 0; c < m.width() && used < m.data(); c++)
        if (int(c) != lost) {
          ASSERT_NE(m.drive(st, c), uint32_t(to)) << "the rebuilt strip would share a drive with its stripe";
          reads[m.drive(st, c)]++;
          used++;
        }
      writes[to]++;
      rebuilt++;
    }
    EXPECT_EQ(reads[f], 0u);
    EXPECT_EQ(writes[f], 0u);
    const uint64_t max_w = *std::max_element(writes.begin(), writes.end());
    const uint64_t max_r = *std::max_element(reads.begin(), reads.end());
    // Onto one spare drive the rebuild writes `rebuilt` strips to it; here
    // no drive gets more than max_w: the write-bound speedup. Ideal: N - 1.
    const double write_speedup = double(rebuilt) / double(max_w);
    std::printf("%u drives, 8+2: %lu strips rebuilt; writes at most %lu per drive (speedup %.1f of %u), "
                "reads at most %lu (speedup %.1f)\n",
                n, (unsigned long)rebuilt, (unsigned long)max_w, write_speedup, n - 1, (unsigned long)max_r,
                double(rebuilt) / double(max_r));
    EXPECT_GE(write_speedup, 0.75 * (n - 1));
    for (uint32_t dr = 0; dr < n; dr++) {
      if (dr == f) continue;
      EXPECT_GT(writes[dr], 0u) << "drive " << dr << " takes no rebuild writes";
    }
    // Reads: onto one spare, each of the D drives read reads every strip; here at most max_r. Ideal: (N - 1) / D.
    EXPECT_GE(double(rebuilt) / double(max_r), 0.8 * (n - 1) / m.data());
  }
}

TEST(DeclusteredMap, SecondFailureTakesTheNextSpareAndMovesWhatWasOnIt) {
  const DeclusteredMap m = make(24, 8, 2, 1);
  for (uint64_t row = 0; row < 200; row++) {
    const uint32_t a = m.drive(row * m.stripes_per_row(), 0);  // holds a stripe strip of this row
    const uint32_t b = m.drive(row * m.stripes_per_row(), 1);
    const int sa = m.spare_for(row, {a, b}, 0), sb = m.spare_for(row, {a, b}, 1);
    ASSERT_GE(sa, 0);
    ASSERT_GE(sb, 0);
    EXPECT_NE(sa, sb);
    EXPECT_TRUE(uint32_t(sa) != a && uint32_t(sa) != b && uint32_t(sb) != a && uint32_t(sb) != b);
    // The second failure is the drive the first one's strip was rebuilt onto: that strip moves on.
    const int first = m.spare_for(row, {a}, 0);
    const int moved = m.spare_for(row, {a, uint32_t(first)}, 0);
    EXPECT_NE(moved, first);
  }
}

TEST(DeclusteredMap, TheSeedFixesTheMap) {
  const DeclusteredMap a = make(24, 8, 2, 1, 7), b = make(24, 8, 2, 1, 7), c = make(24, 8, 2, 1, 8);
  bool differs = false;
  for (uint64_t st = 0; st < 5000; st++)
    for (uint32_t col = 0; col < 10; col++) {
      EXPECT_EQ(a.drive(st, col), b.drive(st, col));
      differs |= a.drive(st, col) != c.drive(st, col);
    }
  EXPECT_TRUE(differs);
  // Format pinned: the first strips of seed 7 (a change here would move every declustered group's strips).
  EXPECT_EQ(a.drive(0, 0), 4u);
  EXPECT_EQ(a.drive(0, 1), 10u);
  EXPECT_EQ(a.drive(0, 9), 18u);
}
