// The distributed spare room's rules (engine/levels/distributed_spare.h):
// where a member rebuilt into it lives in every row, what a rebuild into it
// writes (one member a row at most, the newcomer or one it moved), what is
// unavailable meanwhile and after a further failure (never more strips of
// a stripe than failed drives the room does not cover), and its capacity.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "engine/levels/distributed_spare.h"

using namespace gpuraid;

namespace {

const DeclusteredMap& map(uint32_t n, uint32_t d, uint32_t p, uint32_t s) {
  std::string err;
  const DeclusteredMap* m = DeclusteredMap::shared(n, d, p, s, &err);
  EXPECT_NE(m, nullptr) << err;
  return *m;
}

bool in_stripe(const DeclusteredMap& m, uint64_t stripe, uint32_t drive) { return m.in_stripe(stripe, drive); }

uint64_t rows_of(const DeclusteredMap& m) { return uint64_t(m.drives()) * DeclusteredMap::kPermutations; }

// Every member of the room that holds a stripe strip in a row has its own
// spare strip there, on a drive that is neither failed nor in the room.
void expect_placed(const DeclusteredMap& m, const DistributedSpare& ds, uint64_t failed) {
  for (uint64_t row = 0; row < rows_of(m); row++) {
    std::set<int> used;
    for (uint32_t member : ds.order()) {
      if (!m.holds_stripe_strip(row, member)) continue;
      const int d = ds.drive_of(member, row);
      ASSERT_GE(d, 0) << "row " << row << " member " << member;
      ASSERT_FALSE(m.holds_stripe_strip(row, uint32_t(d))) << "a stripe strip, not a spare strip";
      ASSERT_FALSE(ds.holds(uint32_t(d)));
      ASSERT_FALSE(failed >> d & 1);
      ASSERT_TRUE(used.insert(d).second) << "two members on one spare strip of row " << row;
    }
  }
}

}  // namespace

TEST(DistributedSpare, OneFailureRebuildsEveryRowItHeldAStripeStripInOverAllSurvivors) {
  const DeclusteredMap& m = map(24, 8, 2, 2);
  DistributedSpare ds(m);
  std::string err;
  ASSERT_TRUE(ds.take(5, &err)) << err;
  EXPECT_TRUE(ds.rebuilding());
  std::vector<uint64_t> writes(24, 0);
  const uint64_t stripes = rows_of(m) * m.stripes_per_row();
  for (uint64_t s = 0; s < stripes; s++) {
    const bool holds = in_stripe(m, s, 5);
    EXPECT_EQ(ds.rebuild_target(s), holds ? 5 : -1) << s;
    EXPECT_EQ(ds.unavailable(s, 0, 0), holds ? 1ull << 5 : 0) << s;
    EXPECT_EQ(ds.unavailable(s, 0, s + 1), 0u) << "below the checkpoint it is rebuilt";
    if (holds) writes[ds.drive_of(5, m.row_of(s))]++;
  }
  EXPECT_EQ(writes[5], 0u);
  const auto [lo, hi] = std::minmax_element(writes.begin() + 6, writes.end());
  EXPECT_GT(*lo, 0u);
  EXPECT_LT(double(*hi) / double(*lo), 1.6) << "the rebuild's writes spread over every survivor";
  ds.finish_rebuild();
  expect_placed(m, ds, 1ull << 5);
  for (uint64_t s = 0; s < stripes; s++) EXPECT_EQ(ds.unavailable(s, 0, 0), 0u);
}

// After member 5 is in the room, drive 11 fails: 5's strips whose spare
// strip sat on 11 are lost (only there, and never beside 11's own strip);
// 11's rebuild into the room writes 11 where it held a stripe strip and
// moves 5 where 11 held 5's spare strip, one member a row at most.
TEST(DistributedSpare, ALaterFailureMovesOnlyTheStripsItHeld) {
  const DeclusteredMap& m = map(24, 8, 2, 2);
  DistributedSpare ds(m);
  std::string err;
  ASSERT_TRUE(ds.take(5, &err)) << err;
  ds.finish_rebuild();
  std::vector<int> old_drive(rows_of(m));
  for (uint64_t row = 0; row < rows_of(m); row++) old_drive[row] = ds.drive_of(5, row);
  const uint64_t stripes = rows_of(m) * m.stripes_per_row();
  uint64_t lost_rows = 0;
  for (uint64_t s = 0; s < stripes; s++) {
    const uint64_t lost = ds.unavailable(s, 1ull << 11, 0);
    const bool on_11 = in_stripe(m, s, 5) && old_drive[m.row_of(s)] == 11;
    EXPECT_EQ(lost, on_11 ? 1ull << 5 : 0) << s;
    if (on_11) {
      EXPECT_FALSE(in_stripe(m, s, 11)) << "11 holds a spare strip in that row, not a stripe strip";
      lost_rows++;
    }
  }
  EXPECT_GT(lost_rows, 0u);
  ASSERT_TRUE(ds.take(11, &err)) << err;
  for (uint64_t row = 0; row < rows_of(m); row++) {
    int targets = 0;
    for (uint64_t s = row * m.stripes_per_row(); s < (row + 1) * m.stripes_per_row(); s++) {
      const int t = ds.rebuild_target(s);
      if (t < 0) continue;
      targets++;
      if (t == 5) EXPECT_EQ(old_drive[row], 11) << "5 moves only where 11 held its spare strip";
      else EXPECT_EQ(t, 11);
      EXPECT_EQ(ds.unavailable(s, 0, 0), 1ull << t) << "pending: exactly the target";
      EXPECT_EQ(ds.unavailable(s, 0, s + 1), 0u);
    }
    EXPECT_LE(targets, 1) << "row " << row;
  }
  ds.finish_rebuild();
  expect_placed(m, ds, 1ull << 5 | 1ull << 11);
}

// Random failure orders up to the room's capacity, further uncovered
// failures at every stage: placements stay apart, a rebuild writes one
// member a row at most, and no stripe loses more strips than there are
// uncovered failed drives.
TEST(DistributedSpare, RandomOrdersKeepTheRules) {
  const DeclusteredMap& m = map(24, 6, 2, 6);  // 2 stripes of 8 a row, 8 spare strips
  std::mt19937_64 rng(34);
  const uint64_t stripes = uint64_t(m.drives()) * 8 * m.stripes_per_row();  // a sample of rows
  for (int trial = 0; trial < 6; trial++) {
    DistributedSpare ds(m);
    std::string err;
    std::vector<uint32_t> drives(24);
    for (uint32_t i = 0; i < 24; i++) drives[i] = i;
    std::shuffle(drives.begin(), drives.end(), rng);
    uint64_t failed = 0;
    for (size_t k = 0; k < 4; k++) {
      const uint32_t x = drives[k];
      failed |= 1ull << x;
      // Uncovered: x, before it takes the room. Per stripe at most one more strip lost.
      for (uint64_t s = 0; s < stripes; s++) {
        const uint64_t lost = ds.unavailable(s, 1ull << x, 0) | (in_stripe(m, s, x) ? 1ull << x : 0);
        ASSERT_LE(__builtin_popcountll(lost), 1) << "stripe " << s;
      }
      ASSERT_TRUE(ds.take(x, &err)) << err;
      for (uint64_t row = 0; row < stripes / m.stripes_per_row(); row++) {
        int targets = 0;
        for (uint64_t s = row * m.stripes_per_row(); s < (row + 1) * m.stripes_per_row(); s++)
          targets += ds.rebuild_target(s) >= 0;
        ASSERT_LE(targets, 1) << "row " << row;
      }
      ds.finish_rebuild();
      for (uint64_t s = 0; s < stripes; s++) ASSERT_EQ(ds.unavailable(s, 0, 0), 0u);
      ASSERT_NO_FATAL_FAILURE(expect_placed(m, ds, failed));
    }
  }
}

TEST(DistributedSpare, RoomAndOrderRules) {
  const DeclusteredMap& m = map(11, 3, 2, 1);  // 2 stripes of 5 a row, 1 spare strip
  DistributedSpare ds(m);
  std::string err;
  EXPECT_FALSE(ds.take(11, &err));
  ASSERT_TRUE(ds.take(4, &err)) << err;
  EXPECT_FALSE(ds.take(6, &err));
  EXPECT_NE(err.find("still being rebuilt"), std::string::npos) << err;
  ds.finish_rebuild();
  EXPECT_FALSE(ds.take(4, &err));
  EXPECT_NE(err.find("already"), std::string::npos) << err;
  EXPECT_FALSE(ds.room_left());
  EXPECT_FALSE(ds.take(6, &err));
  EXPECT_NE(err.find("full"), std::string::npos) << err;
  DistributedSpare back(m);
  ASSERT_TRUE(back.restore({4}, false, &err)) << err;
  EXPECT_EQ(back.order(), ds.order());
  EXPECT_FALSE(back.rebuilding());
  EXPECT_FALSE(back.restore({4, 6}, false, &err)) << "more than the room holds";
}

// Copy-back (leave): 5 then 11 in the room; 11 leaves. Per row one strip
// moves onto 11's drive: 11's own where it holds a stripe strip, else 5's
// where 11's failure displaced it. Below the checkpoint the moved strips
// are there; past it they are where the room keeps them: available when
// the copy-back started live, lost when resumed after a stop. After the
// end the room is 5's alone, as before 11 failed.
TEST(DistributedSpare, CopyBackMovesOneStripARowOntoTheLeavingDrive) {
  const DeclusteredMap& m = map(24, 8, 2, 2);
  DistributedSpare ds(m);
  std::string err;
  ASSERT_TRUE(ds.take(5, &err)) << err;
  ds.finish_rebuild();
  std::vector<int> before(rows_of(m));
  for (uint64_t row = 0; row < rows_of(m); row++) before[row] = ds.drive_of(5, row);
  ASSERT_TRUE(ds.take(11, &err)) << err;
  EXPECT_FALSE(ds.leave(true, &err)) << "11 is still being rebuilt into the room";
  ds.finish_rebuild();
  DistributedSpare resumed = ds;
  ASSERT_TRUE(ds.leave(true, &err)) << err;
  ASSERT_TRUE(resumed.leave(false, &err)) << err;
  EXPECT_FALSE(ds.take(7, &err)) << "no failure takes the room while a member leaves it";
  const uint64_t stripes = rows_of(m) * m.stripes_per_row();
  uint64_t moved5 = 0;
  for (uint64_t row = 0; row < rows_of(m); row++) {
    int targets = 0;
    for (uint64_t s = row * m.stripes_per_row(); s < (row + 1) * m.stripes_per_row(); s++) {
      const int t = ds.rebuild_target(s);
      if (t < 0) {
        EXPECT_EQ(ds.unavailable(s, 0, 0), 0u);
        continue;
      }
      targets++;
      ASSERT_TRUE(ds.moved_by_leave(uint32_t(t), row));
      EXPECT_EQ(ds.drive_after_leave(uint32_t(t), row), t == 11 ? 11 : before[row]);
      if (t == 5) {
        EXPECT_EQ(before[row], 11) << "5 moves back only where 11's failure displaced it";
        moved5++;
      }
      EXPECT_EQ(ds.unavailable(s, 0, 0), 0u) << "started live: the room's copy serves past the checkpoint";
      EXPECT_EQ(resumed.unavailable(s, 0, 0), 1ull << t) << "resumed: past the checkpoint it is rebuilt first";
      EXPECT_EQ(resumed.unavailable(s, 0, s + 1), 0u) << "below it: on 11's drive";
      EXPECT_EQ(ds.unavailable(s, 1ull << 11, s + 1), 1ull << t) << "below the checkpoint it lives on 11's drive";
      EXPECT_EQ(ds.unavailable(s, 1ull << 11, 0), 0u) << "past it not (the room's copy)";
    }
    EXPECT_LE(targets, 1) << "row " << row;
  }
  EXPECT_GT(moved5, 0u);
  ds.finish_leave();
  EXPECT_EQ(ds.order(), (std::vector<uint32_t>{5}));
  EXPECT_FALSE(ds.leaving());
  for (uint64_t row = 0; row < rows_of(m); row++) EXPECT_EQ(ds.drive_of(5, row), before[row]);
  for (uint64_t s = 0; s < stripes; s++) EXPECT_EQ(ds.unavailable(s, 0, 0), 0u);
  // Its drive failed during the copy-back: it goes back in at its place, in full.
  ASSERT_TRUE(resumed.rejoin(&err)) << err;
  EXPECT_TRUE(resumed.rebuilding());
  EXPECT_EQ(resumed.order(), (std::vector<uint32_t>{5, 11}));
}
