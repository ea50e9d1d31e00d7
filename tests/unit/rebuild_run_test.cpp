// Rebuild in runs of stripes (ops/rebuild_run.h): member I/O of about
// 1 MiB instead of one strip, the rebuilt member right, and the md-style
// rate policy (held to its minimum while foreground I/O comes in).
#include <gtest/gtest.h>

#include <random>

#include "engine/clock.h"
#include "engine/ops/rebuild_run.h"
#include "tests/support/group_rig.h"
#include "tests/support/volume_image.h"

using namespace gpuraid;
using namespace gpuraid::test;

namespace {

GroupConfig config(Level l, uint32_t parity = 0) { return test_group_config(l, parity, 65536, "dg-run"); }

// Member I/O counted by the reactor over the rebuild of member `failed` of
// a group of `n` drives (drive n is the replacement); the data is checked
// with the rebuilt member standing in for another one.
void rebuild_in_runs(Level level, uint32_t parity, uint32_t n) {
  GroupRig rig(n + 1);
  std::string err;
  auto g = rig.create(config(level, parity), 0, n, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  Image img(v.size_bytes());
  img.write_all(rig, v);
  ASSERT_TRUE(g->fail_member(1, &err)) << err;
  const ReactorStats before = rig.reactor().stats();
  ASSERT_TRUE(g->replace_member(1, rig.open(n), false, &err)) << err;
  ASSERT_TRUE(rig.wait([&] { return !g->rebuild_progress().running; }));
  const ReactorStats after = rig.reactor().stats();
  EXPECT_EQ(g->state(), GroupState::Optimal);
  const Geometry& geo = v.geometry();
  const uint64_t run = rebuild_run_stripes(geo, rig.engine().rebuild_run_bytes(), rig.reactor().pool().size() / 4);
  ASSERT_GT(run, 4u) << "the test wants runs of several stripes";
  const uint64_t runs = (geo.stripes() + run - 1) / run;
  // Every run: one read per survivor and one write; the rest is metadata
  // (superblocks at the start and the end, checkpoints) and runs cut short.
  const uint64_t reads = after.member_reads - before.member_reads;
  const uint64_t writes = after.member_writes - before.member_writes;
  EXPECT_LE(reads, (runs + 2) * (n - 1) + 16) << geo.stripes() << " stripes, runs of " << run;
  EXPECT_LE(writes, runs + 2 + 48) << geo.stripes() << " stripes, runs of " << run;
  EXPECT_EQ(v.stats().rebuild_stripes_written, geo.stripes());
  img.check(rig, v);
  ASSERT_TRUE(g->fail_member(0, &err)) << err;  // the rebuilt member now serves member 0's strips too
  img.check(rig, v);
  ASSERT_TRUE(g->stop(&err)) << err;
}

}  // namespace

TEST(RebuildRun, Raid5MemberIoComesInRuns) { rebuild_in_runs(Level::R5, 0, 5); }

TEST(RebuildRun, Raid6MemberIoComesInRuns) { rebuild_in_runs(Level::R6, 0, 6); }

TEST(RebuildRun, MinRateHoldsTheRebuildWhileForegroundIoComesIn) {
  GroupRig rig(6, 48u << 20);
  std::string err;
  auto g = rig.create(config(Level::R5), 0, 5, &err);
  ASSERT_TRUE(g) << err;
  Volume& v = g->volume();
  ASSERT_TRUE(g->fail_member(1, &err)) << err;
  constexpr uint64_t kMin = 1u << 20;  // bytes per member per second
  g->set_rebuild_min_rate(kMin);
  ASSERT_TRUE(g->replace_member(1, rig.open(5), false, &err)) << err;
  alignas(4096) static uint8_t buf[4096];  // direct reads land in it: O_DIRECT alignment
  std::mt19937_64 rng(3);
  auto read_some = [&] {
    ASSERT_EQ(0, rig.io(v, IoRequest::Op::Read, (rng() % (v.size_bytes() / 4096)) * 4096, 4096, buf));
  };
  for (int i = 0; i < 20; i++) read_some();  // the volume is busy from here
  const uint64_t t0 = mono_ns();
  const uint64_t done0 = g->rebuild_progress().done_bytes;
  while (mono_ns() - t0 < 1'500'000'000ull) read_some();
  const double secs = double(mono_ns() - t0) / 1e9;
  const uint64_t done = g->rebuild_progress().done_bytes - done0;
  const Geometry& geo = v.geometry();
  const uint64_t run_bytes =
      rebuild_run_stripes(geo, rig.engine().rebuild_run_bytes(), rig.reactor().pool().size() / 4) * uint64_t(geo.strip_bytes);
  // At most the minimum over the window, plus what was in flight when the
  // volume turned busy (two runs) and one run of overshoot.
  EXPECT_LE(double(done), double(kMin) * secs + 3.0 * double(run_bytes))
      << "rebuilt " << done << " bytes per member in " << secs << " s under foreground reads";
  GroupEvent ev;
  EXPECT_TRUE(g->rebuild_progress().running)
      << "the rebuild (" << geo.member_data_bytes << " bytes per member) ended under foreground reads: "
      << (rig.find_event(GroupEvent::RebuildFinished, &ev) ? ev.message : "no event");
  // Idle again: it goes at its maximum (unlimited) and ends.
  ASSERT_TRUE(rig.wait([&] { return !g->rebuild_progress().running; }, 60));
  EXPECT_EQ(g->state(), GroupState::Optimal);
  ASSERT_TRUE(g->stop(&err)) << err;
}
