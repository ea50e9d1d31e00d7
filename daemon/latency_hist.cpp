#include "daemon/latency_hist.h"

namespace gpuraid::daemon {

int LatencyHist::bucket(uint64_t ns) {
  if (ns < 8) return int(ns);
  int msb = 63 - __builtin_clzll(ns);
  int sub = int((ns >> (msb - 3)) & 7);
  return (msb - 2) * 8 + sub;
}

uint64_t LatencyHist::upper_ns(int b) {
  if (b < 8) return uint64_t(b);
  int msb = b / 8 + 2, sub = b % 8;
  uint64_t lower = uint64_t(8 + sub) << (msb - 3);
  return lower + ((uint64_t(1) << (msb - 3)) - 1);
}

void LatencyHist::merge(const LatencyHist& o) {
  for (int i = 0; i < kBuckets; i++) bump(b_[size_t(i)], o.b_[size_t(i)].load(std::memory_order_relaxed));
  bump(sum_ns_, o.sum_ns());
}

std::vector<uint64_t> LatencyHist::snapshot() const {
  std::vector<uint64_t> out(kBuckets);
  for (int i = 0; i < kBuckets; i++) out[size_t(i)] = b_[size_t(i)].load(std::memory_order_relaxed);
  return out;
}

LatencyTotals LatencyHist::on_edges() const {
  LatencyTotals t;
  for (int i = 0; i < kBuckets; i++)
    if (uint64_t n = b_[size_t(i)].load(std::memory_order_relaxed)) t.buckets[latency_bucket(upper_ns(i))] += n;
  t.sum_ns = sum_ns();
  return t;
}

double LatencyHist::percentile(const std::vector<uint64_t>& c, double p) {
  uint64_t total = 0;
  for (uint64_t v : c) total += v;
  if (!total) return 0;
  double want = p / 100.0 * double(total);
  uint64_t seen = 0;
  for (size_t i = 0; i < c.size(); i++) {
    seen += c[i];
    if (double(seen) >= want && c[i]) return double(upper_ns(int(i)));
  }
  return double(upper_ns(int(c.size()) - 1));
}

}  // namespace gpuraid::daemon
