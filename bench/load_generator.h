// The in-process load generator (like SPDK's bdevperf): one per reactor
// thread, keeping iodepth requests in flight against a target, counting
// what completes inside the measured window.
#pragma once
#include <atomic>
#include <cstdint>
#include <random>
#include <vector>

#include "bench/io_bound.h"
#include "bench/latency_histogram.h"
#include "bench/targets.h"

namespace gpuraid::bench {

struct Workload {
  Rw rw = Rw::RandRead;
  uint32_t bs = 4096;
  uint32_t rwmixread = 70;
  uint32_t iodepth = 32;
  uint64_t rate_iops = 0;  // per generator; 0 = unlimited
};

// Shared clock of a run: the window [start_ns, end_ns) that counts; the
// generators stop issuing at end_ns and drain.
struct RunClock {
  std::atomic<uint64_t> start_ns{UINT64_MAX};
  std::atomic<uint64_t> end_ns{UINT64_MAX};
  // Generators whose own I/O is not all back yet. One that is done keeps
  // polling its reactor until none is left: another reactor's request may
  // wait for a stripe that an op of this reactor holds (a rebuild run on
  // reactor 0), and only this reactor's poll moves that op on.
  mutable std::atomic<uint32_t> running{0};
};

struct ThreadResult {
  uint64_t ops = 0, bytes = 0, errors = 0;
  LatencyHistogram lat;
};

uint64_t now_ns();

// Costs as little as it can beside the engine it measures: a completion is
// only noted where it happens, and after each reactor turn one clock read
// times every completion of that turn and stamps the I/Os issued in their
// place (so latency is exact to one turn, and the clock is read once per
// turn, not twice per I/O).
class LoadGenerator {
 public:
  LoadGenerator(Target& t, Reactor& r, const Workload& w, uint32_t thread, uint32_t threads, uint64_t seed);
  ~LoadGenerator();  // gives its request buffers back to the reactor's arena
  LoadGenerator(const LoadGenerator&) = delete;
  LoadGenerator& operator=(const LoadGenerator&) = delete;
  // Runs until the clock's end, then drains in-flight I/O.
  void run(const RunClock& clock);
  const ThreadResult& result() const { return res_; }

 private:
  struct Slot {
    IoRequest req;
    uint8_t* buf = nullptr;
    uint64_t t0 = 0;
    LoadGenerator* gen = nullptr;
  };
  static constexpr uint32_t kSpinPolls = 1;  // empty polls before run() blocks in the ring
  static void on_done(IoRequest* r);
  bool may_issue(uint64_t now);
  void issue(Slot& s, uint64_t now);
  void account(uint64_t now);  // the turn's completions, at one clock read
  uint64_t next_offset(bool* is_write);

  Target& t_;
  Reactor& r_;
  Workload w_;
  std::mt19937_64 rng_;
  std::vector<Slot> slots_;
  uint64_t region_start_, region_len_, cursor_ = 0;
  uint64_t pieces_;  // bs-sized pieces of the target (its size, asked once)
  uint64_t in_flight_ = 0;
  const RunClock* clock_ = nullptr;
  bool stopping_ = false;
  uint64_t issued_ = 0, first_ns_ = 0;
  std::vector<Slot*> idle_;  // rate-limited slots waiting for their turn
  std::vector<Slot*> done_;  // completed in this reactor turn, not yet accounted
  std::vector<Slot*> turn_;  // the turn being accounted
  size_t arena_mark_ = 0;
  ThreadResult res_;
};

}  // namespace gpuraid::bench
