#pragma once
#include <time.h>

#include <cstdint>

namespace gpuraid {

// Monotonic nanoseconds (steady across the engine, the groups and the bench).
inline uint64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// The same clock at tick resolution (a few ms), never ahead of mono_ns() and
// cheaper to read: for timestamps taken per I/O that only rules measured in
// seconds look at.
inline uint64_t mono_coarse_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

}  // namespace gpuraid
