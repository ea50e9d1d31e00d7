// Latency histogram with one writer (a reactor: each keeps its own, and
// sums are made with merge()) that any thread may read, log-linear: 8
// sub-buckets per power of two (<= 12.5% error), from 1 ns to 2^64 ns.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include "engine/latency_buckets.h"
#include "engine/single_writer.h"
#include "engine/reactor.h"

namespace gpuraid::daemon {

class LatencyHist {
 public:
  static constexpr int kBuckets = 504;
  void add(uint64_t ns) {  // by its one writer
    bump(b_[size_t(bucket(ns))]);
    bump(sum_ns_, ns);
  }
  // Adds another histogram's counts (a sum no one adds to meanwhile).
  void merge(const LatencyHist& o);
  // A consistent-enough copy: counts per bucket.
  std::vector<uint64_t> snapshot() const;
  uint64_t sum_ns() const { return sum_ns_.load(std::memory_order_relaxed); }
  // The same counts on the engine's fixed edges (latency_buckets.h), for
  // Prometheus: each bucket goes to the first edge at or above its upper
  // end, so a count under `le` never holds a latency above it (one within
  // 12.5% below an edge may land in the next bucket).
  LatencyTotals on_edges() const;
  static uint64_t upper_ns(int bucket);
  static int bucket(uint64_t ns);
  // p-th percentile (0..100) of a snapshot (or of the difference of two).
  static double percentile(const std::vector<uint64_t>& counts, double p);

 private:
  std::array<std::atomic<uint64_t>, kBuckets> b_{};
  std::atomic<uint64_t> sum_ns_{0};
};

}  // namespace gpuraid::daemon
