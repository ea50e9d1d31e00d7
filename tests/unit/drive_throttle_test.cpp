// Throttled drives (engine/io/drive_throttle.h): the completion time of
// each I/O on the drive's virtual clock, per direction. Arithmetic on given
// clocks only: no timing here (speed is measured in bench/).
#include <gtest/gtest.h>

#include "engine/io/drive_throttle.h"

using namespace gpuraid;

TEST(DriveThrottle, BandwidthAndIopsCapsPerDirection) {
  DriveLimits l;
  l.read_bytes_s = 2ull << 30;   // 2 GiB/s
  l.write_bytes_s = 1ull << 30;  // 1 GiB/s
  l.write_iops = 100000;         // 10 us per write at least
  DriveThrottle t(l);
  const uint64_t now = 1000000000;
  const uint64_t mib = 1u << 20;
  // 1 MiB at 2 GiB/s: 488,281 ns; the next read queues behind it.
  EXPECT_EQ(t.reserve(false, mib, now), now + 488281);
  EXPECT_EQ(t.reserve(false, mib, now), now + 2 * 488281);
  // Writes have their own clocks: 1 MiB at 1 GiB/s (and 10 us of the IOPS clock).
  EXPECT_EQ(t.reserve(true, mib, now), now + 976562);
  // The caps are independent: a 4 KiB write then takes 3.8 us more of the
  // bandwidth clock and 10 us of the IOPS clock, whose turn (at 20 us) ends
  // long before the bandwidth clock's: the bandwidth binds.
  EXPECT_EQ(t.reserve(true, 4096, now), now + 976562 + 3814);
  // Small writes on an idle drive: the IOPS cap binds (10 us each, more than
  // their bytes' 3.8 us).
  const uint64_t idle = now + 10000000000ull;
  EXPECT_EQ(t.reserve(true, 4096, idle), idle + 10000);
  EXPECT_EQ(t.reserve(true, 4096, idle), idle + 20000);
  // An idle drive starts at the issue time, not at its old clock.
  const uint64_t later = now + 5000000000ull;
  EXPECT_EQ(t.reserve(false, 4096, later), later + 4096ull * 1000000000 / (2ull << 30));
}

TEST(DriveThrottle, NoCapNoDelay) {
  DriveLimits l;
  EXPECT_FALSE(l.any());
  l.write_bytes_s = 1u << 30;
  DriveThrottle t(l);
  EXPECT_EQ(t.reserve(false, 1u << 20, 42), 42u) << "reads are not capped";
}
