// A virtual drive as the daemon hands it to frontends: the VD's extent,
// wrapped to count I/O, bytes, errors and latency per VD. Each reactor
// counts in its own shard (no cache line written by two reactors, no
// locked instruction per I/O) and totals() sums them. The caller's done/ctx
// are parked in a per-reactor pooled shim for the I/O's life (no allocation
// in steady state).
#pragma once
#include <atomic>
#include <memory>
#include <vector>

#include "daemon/latency_hist.h"
#include "engine/block_target.h"

namespace gpuraid::daemon {

// One reactor's counts of a VD (its writer is that reactor), or a sum of them.
struct IoCounters {
  std::atomic<uint64_t> reads{0}, writes{0}, flushes{0}, read_bytes{0}, write_bytes{0}, errors{0};
  std::array<LatencyHist, kMemberOps> latency;  // per op (kOpRead, kOpWrite, kOpFlush)
  // Every op's counts together, per bucket.
  std::vector<uint64_t> all_latency() const;
  // Adds another's counts (into a sum no one counts into meanwhile).
  void merge(const IoCounters& o);
};

class MeteredTarget final : public BlockTarget {
 public:
  MeteredTarget(std::unique_ptr<BlockTarget> inner, uint32_t reactors);
  ~MeteredTarget() override;
  uint64_t size_bytes() const override { return inner_->size_bytes(); }
  uint32_t min_io_bytes() const override { return inner_->min_io_bytes(); }
  uint32_t optimal_io_bytes() const override { return inner_->optimal_io_bytes(); }
  int submit(Reactor& r, IoRequest* req, std::string* why = nullptr) override;
  // Every reactor's counts summed into *out (a fresh IoCounters); any thread.
  void totals(IoCounters* out) const;
  // Swaps the extent (a resize). Only while no I/O can reach this target.
  void replace_inner(std::unique_ptr<BlockTarget> inner) { inner_ = std::move(inner); }

 private:
  struct Shim;
  struct alignas(64) Shard {  // a reactor's: only it writes here
    IoCounters c;
    Shim* free_head = nullptr;
  };
  static void on_done(IoRequest* req);

  std::unique_ptr<BlockTarget> inner_;
  std::vector<std::unique_ptr<Shard>> shards_;  // per reactor
  std::atomic<Shim*> all_{nullptr};  // every shim ever made, for the destructor
};

}  // namespace gpuraid::daemon
