// Log-linear latency histogram (16 sub-buckets per power of two, <= 6%
// error), mergeable across threads. Hand-written: Debian ships no C/C++
// HDR histogram library.
#pragma once
#include <array>
#include <cstdint>

namespace gpuraid::bench {

class LatencyHistogram {
 public:
  void add(uint64_t ns);
  void merge(const LatencyHistogram& o);
  void clear() { *this = LatencyHistogram(); }
  uint64_t count() const { return count_; }
  double mean_ns() const { return count_ ? double(sum_) / double(count_) : 0; }
  // Upper edge of the bucket holding the p-th percentile (p in 0..100).
  uint64_t percentile_ns(double p) const;

 private:
  static constexpr int kSub = 16;
  static constexpr int kBuckets = 64 * kSub;
  static int bucket(uint64_t ns);
  static uint64_t upper(int b);
  std::array<uint64_t, kBuckets> b_{};
  uint64_t count_ = 0, sum_ = 0;
};

}  // namespace gpuraid::bench
