// A ParityBackend that gathers jobs into batches and runs each batch as one
// kernel launch on an Executor (a GPU, or the host shim).
//
// Batching: jobs collect in an open batch, which is closed when it reaches
// max_batch_jobs or max_batch_bytes, or window_us after its first job
// (window_us = 0: at the end of every submit()). Closed batches launch as
// soon as the executor has a free slot. Completions are run by poll() on the
// caller's thread, never inside submit(); event_fd() (an epoll set holding an
// eventfd the executor writes and a timerfd for the window and a watchdog)
// becomes readable whenever poll() has something to do.
//
// Contract: a batch gathers jobs from several submit() calls and batches
// overlap on the device, so no two jobs in flight at once (not just of one
// submit) may share a buffer that either writes. The engine's stripe locks
// give this.
//
// Fallback: jobs the kernels do not take (odd lengths, misaligned buffers,
// k or m out of range) run on the ISA-L backend. When the executor fails,
// the backend switches to ISA-L for good: the failed batch and every batch
// not known to have finished are rerun there, so every job still completes
// exactly once with the right result; switched_to_cpu() and a line on
// stderr say so.
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "engine/parity/parity_backend.h"
#include "kernels/batch_builder.h"
#include "kernels/executor.h"

namespace gpuraid::kern {

struct BatchOptions {
  uint32_t max_batch_jobs = 2048;
  uint64_t max_batch_bytes = 64ull << 20;  // bytes read plus written
  // How long a batch waits for more jobs. Tens of microseconds is the order
  // of one launch plus one PCIe round trip, so waiting longer buys little.
  uint32_t window_us = 20;
  // Poll cadence while batches are in flight, so that a device which never
  // signals completion (a fault) is still noticed.
  uint32_t watchdog_us = 2000;
};

class BatchingBackend final : public ParityBackend {
 public:
  struct Stats {
    uint64_t batches = 0;      // launches (batches handed to the executor)
    uint64_t kernel_jobs = 0;  // jobs completed by the kernels
    uint64_t cpu_jobs = 0;     // jobs run on ISA-L (unsupported or fallback)
  };

  BatchingBackend(std::string name, std::unique_ptr<Executor> exec, const BatchOptions& opts);
  ~BatchingBackend() override;  // drains: every job still completes

  const char* name() const override { return name_.c_str(); }
  void submit(ParityJob* const* jobs, size_t n) override;
  size_t poll() override;
  int event_fd() const override { return epoll_fd_; }
  size_t in_flight() const override { return in_flight_; }

  // Closes the open batch and launches what a slot can take, now.
  void flush();
  // Runs poll() (waiting on event_fd()) until no job is in flight.
  void drain();
  bool switched_to_cpu() const { return switched_.load(std::memory_order_acquire); }
  bool fell_back(std::string* reason) const override {
    if (!switched_to_cpu()) return false;
    *reason = switch_reason_;  // written once, before switched_ was set
    return true;
  }
  const std::string& switch_reason() const { return switch_reason_; }
  const Stats& stats() const { return stats_; }
  Executor& executor() { return *exec_; }

 private:
  struct Flight {
    uint32_t slot;
    std::unique_ptr<HostBatch> batch;
  };

  void run_cpu(ParityJob* j);
  void rerun_cpu(HostBatch& b);
  void close_open();
  void launch_closed();
  void harvest();
  void complete(HostBatch& b);
  void switch_to_cpu(const std::string& why, std::unique_ptr<HostBatch> failed);
  std::unique_ptr<HostBatch> take_batch();
  void recycle(std::unique_ptr<HostBatch> b);
  void arm_timer();
  void wake();

  std::string name_;
  std::unique_ptr<Executor> exec_;
  std::unique_ptr<ParityBackend> cpu_;
  BatchOptions opts_;
  BatchBuilder builder_;

  std::unique_ptr<HostBatch> open_;
  uint64_t open_since_ns_ = 0;
  std::deque<std::unique_ptr<HostBatch>> closed_;
  std::deque<Flight> flying_;
  std::vector<uint32_t> free_slots_;
  std::vector<std::unique_ptr<HostBatch>> pool_;
  std::vector<ParityJob*> ready_;  // finished, done() not yet run
  std::vector<ParityJob*> running_;  // poll(): the completions being run

  int epoll_fd_ = -1, wake_fd_ = -1, timer_fd_ = -1;
  uint64_t armed_ns_ = 0;  // timer deadline, 0 when disarmed
  size_t in_flight_ = 0;
  std::atomic<bool> switched_{false};  // read by other threads (fell_back)
  std::string switch_reason_;
  Stats stats_;
};

}  // namespace gpuraid::kern
