// Fixed latency buckets: the engine's per-drive member I/O histograms, and
// the bucket edges the daemon exports to Prometheus (le, in seconds) for
// member drives and virtual drives alike.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

namespace gpuraid {

// Upper edges (inclusive), 1 µs .. 10 s; one more bucket above the last is +Inf.
inline constexpr std::array<uint64_t, 22> kLatencyEdgesNs = {
    1'000,       2'500,       5'000,         10'000,        25'000,        50'000,
    100'000,     250'000,     500'000,       1'000'000,     2'500'000,     5'000'000,
    10'000'000,  25'000'000,  50'000'000,    100'000'000,   250'000'000,   500'000'000,
    1'000'000'000, 2'500'000'000, 5'000'000'000, 10'000'000'000};
inline constexpr size_t kLatencyBuckets = kLatencyEdgesNs.size() + 1;

// The bucket of a latency: the first edge >= ns (kLatencyBuckets - 1: above all).
inline size_t latency_bucket(uint64_t ns) {
  size_t i = 0;
  while (i < kLatencyEdgesNs.size() && ns > kLatencyEdgesNs[i]) i++;
  return i;
}

}  // namespace gpuraid
