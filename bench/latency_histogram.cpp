#include "bench/latency_histogram.h"

#include <bit>
#include <cstddef>

namespace gpuraid::bench {
using std::size_t;

int LatencyHistogram::bucket(uint64_t ns) {
  if (ns < kSub) return int(ns);
  int e = std::bit_width(ns) - 1;                  // ns in [2^e, 2^(e+1))
  int sub = int((ns >> (e - 4)) & (kSub - 1));     // next 4 bits
  return (e - 3) * kSub + sub;
}

uint64_t LatencyHistogram::upper(int b) {
  if (b < kSub) return uint64_t(b);
  int e = b / kSub + 3, sub = b % kSub;
  return (uint64_t(kSub + sub + 1) << (e - 4)) - 1;
}

void LatencyHistogram::add(uint64_t ns) {
  int i = bucket(ns);
  if (i >= kBuckets) i = kBuckets - 1;
  b_[size_t(i)]++;
  count_++;
  sum_ += ns;
}

void LatencyHistogram::merge(const LatencyHistogram& o) {
  for (size_t i = 0; i < b_.size(); i++) b_[i] += o.b_[i];
  count_ += o.count_;
  sum_ += o.sum_;
}

uint64_t LatencyHistogram::percentile_ns(double p) const {
  if (!count_) return 0;
  uint64_t want = uint64_t(double(count_) * p / 100.0 + 0.5);
  if (want == 0) want = 1;
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; i++) {
    seen += b_[size_t(i)];
    if (seen >= want) return upper(i);
  }
  return upper(kBuckets - 1);
}

}  // namespace gpuraid::bench
