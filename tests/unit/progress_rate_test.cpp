// The rate and ETA `gpuraid status` shows for a background task.
#include "engine/group/progress_rate.h"

#include <gtest/gtest.h>

namespace gpuraid {
namespace {

constexpr uint64_t kS = 1'000'000'000ull;

TEST(ProgressRate, SteadyTaskShowsItsRate) {
  ProgressRate r;
  for (uint64_t t = 0; t <= 60; t++) r.sample(t * kS, t * (100u << 20));
  EXPECT_NEAR(r.bytes_s(), 100u << 20, 1.0);
  EXPECT_NEAR(r.eta_s(1000u << 20), 10.0, 1e-6);
}

// A 1K/s limit moves one 64 KiB strip every 64 s: the rate between steps is
// about 1K/s, never 0 (what an average over 50 ms ticks showed: "0B/s ETA 0:00").
TEST(ProgressRate, CoarseSlowTaskShowsItsRateBetweenSteps) {
  ProgressRate r;
  const uint64_t strip = 64 << 10;
  for (uint64_t ms = 0; ms <= 300'000; ms += 50) {
    r.sample(ms * 1'000'000, ms / 64'000 * strip);
    if (ms >= 130'000) {
      EXPECT_GT(r.bytes_s(), 600.0) << ms;
      EXPECT_LT(r.bytes_s(), 2100.0) << ms;
      EXPECT_GT(r.eta_s(1 << 20), 400.0) << ms;
    }
  }
}

TEST(ProgressRate, StalledTaskDecaysAndHasNoEta) {
  ProgressRate r;
  r.sample(0, 0);
  EXPECT_EQ(r.eta_s(1 << 20), 0.0);  // unknown, never infinite
  r.sample(1 * kS, 10 << 20);
  r.sample(2 * kS, 20 << 20);
  for (uint64_t t = 3; t < 3600; t++) r.sample(t * kS, 20 << 20);
  EXPECT_LT(r.bytes_s(), 20.0 * (1 << 20) / 3000);
  for (uint64_t t = 3600; t < 100'000'000; t *= 2) r.sample(t * kS, 20 << 20);
  EXPECT_EQ(r.eta_s(1 << 20), 0.0);
}

TEST(ProgressRate, ANewRunStartsOver) {
  ProgressRate r;
  for (uint64_t t = 0; t <= 10; t++) r.sample(t * kS, t * (50u << 20));
  r.sample(11 * kS, 0);  // the task started again from 0
  r.sample(12 * kS, 5u << 20);
  EXPECT_NEAR(r.bytes_s(), 5u << 20, 1.0);
}

}  // namespace
}  // namespace gpuraid
