// A ParityBackend that gathers jobs into batches and runs each batch on an
// Executor (a GPU, or the host shim) as slot_program.h describes.
//
// Batching: jobs collect in an open batch, which closes when it reaches
// max_batch_jobs, max_batch_bytes or max_blob_bytes of descriptors, or at
// the end of the owner's turn (its next poll(); window_us > 0 holds it that
// long instead). Closed batches launch as soon as the executor has a slot.
//
// Completion: the owner polls. Each poll() reads every flying batch's
// completion marker (a word in mapped host memory the device writes last);
// poll_within_ns() says when to look next, from a running estimate of how
// long a batch of that size takes (a reactor sleeps until shortly before
// and spins the rest). Completion::Event has the executor signal an eventfd
// instead (CUDA: a host function), for comparison.
//
// Routing: a batch the CPU computes in less time than a launch costs the
// CPU (both measured as the backend runs), or while every slot is busy for
// longer than the CPU needs, runs on the CPU instead (routed_jobs). With a
// cap (max_gbps) the bytes beyond it run on the CPU (capped_jobs).
//
// Failures: a batch that fails on the device, or does not finish within
// timeout_ms (given up through the slot's commit gate, so the device can no
// longer write its outputs), runs on the CPU; the backend then runs
// everything on the CPU for retry_ms (doubling while the device keeps
// failing, up to a minute) and tries the device again: a transient error
// costs a pause, not the device. fell_back() is true while paused. Jobs the
// kernels do not take (odd lengths, misaligned buffers, k or m out of range)
// always run on the CPU. Every job completes exactly once, from poll(),
// never inside submit().
//
// Contract: batches gather jobs from several submit() calls and run
// concurrently, so no two jobs in flight at once may share a buffer that
// either writes. The engine's stripe locks give this.
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/parity/parity_backend.h"
#include "kernels/batch_builder.h"
#include "kernels/executor.h"

namespace gpuraid::kern {

enum class Completion : uint8_t { Poll, Event };
enum class Routing : uint8_t {
  Off,       // every batch the kernels take goes to the device
  Measured,  // the CPU takes what it does cheaper (see the file comment)
  Below,     // the CPU takes batches under route_below_bytes
};

struct BatchOptions {
  uint32_t max_batch_jobs = 2048;
  uint64_t max_batch_bytes = 64ull << 20;  // bytes read plus written
  uint32_t max_blob_bytes = 512u << 10;    // descriptors of one batch (fixed memory per slot)
  // How long an open batch waits for more jobs; 0: until the owner's turn
  // ends (its next poll()), which gathers what one turn submits.
  uint32_t window_us = 0;
  Completion completion = Completion::Poll;
  // Poll: the owner spins (poll_within_ns() = 0) from this long before a
  // batch's predicted end; it sleeps before.
  uint32_t spin_us = 20;
  // While batches fly the device is asked for errors this often.
  uint32_t watchdog_us = 1000;
  // A batch not finished by then is given up (its jobs run on the CPU).
  uint32_t timeout_ms = 500;
  // The device is tried again this long after an error or a timeout.
  uint32_t retry_ms = 1000;
  Routing routing = Routing::Measured;
  uint32_t route_below_bytes = 0;   // Routing::Below
  uint32_t launch_ns_guess = 8000;  // Measured: a launch's CPU cost until one is measured
  double max_gbps = 0;              // cap on the device's bytes read plus written, GB/s; 0: none
};

// The settings every accelerator backend takes (parity_backend.h), onto its
// batching options.
void apply_accelerator_settings(const AcceleratorSettings& s, BatchOptions* o);

class BatchingBackend final : public ParityBackend {
 public:
  BatchingBackend(std::string name, std::unique_ptr<Executor> exec, const BatchOptions& opts);
  ~BatchingBackend() override;  // drains: every job still completes

  const char* name() const override { return name_.c_str(); }
  void submit(ParityJob* const* jobs, size_t n) override;
  size_t poll() override;
  int event_fd() const override { return opts_.completion == Completion::Event ? epoll_fd_ : -1; }
  size_t in_flight() const override { return in_flight_; }
  uint64_t poll_within_ns() override;
  ParityCounters counters() const override;
  bool fell_back(std::string* reason) const override;
  bool register_memory(void* p, size_t len, std::string* err) override {
    return exec_->register_memory(p, len, err);
  }
  void unregister_memory(void* p) override { exec_->unregister_memory(p); }

  // Closes the open batch and launches what the slots can take, now.
  void flush();
  // Runs poll() until no job is in flight.
  void drain();
  bool on_cpu() const { return on_cpu_.load(std::memory_order_acquire); }
  Executor& executor() { return *exec_; }
  const BatchOptions& options() const { return opts_; }

  // What the routing rule and the owner's wake-ups go by (tests, bench).
  struct Estimates {
    double launch_ns;        // CPU time of one launch
    double cpu_ns_per_byte;  // the CPU computing a batch
    double device_fixed_ns;  // a small batch, launch to finish
    double device_ns_per_byte;
  };
  Estimates estimates() const { return est_; }

 private:
  struct Flight {
    uint32_t slot;
    std::unique_ptr<HostBatch> batch;
    uint64_t launch_ns;
    uint64_t est_ns;            // predicted launch-to-finish
    bool zombie = false;        // given up: its jobs ran on the CPU; only the slot is left
    bool commit_begun = false;  // past its limit with its commit under way: waited for
  };
  enum class Route : uint8_t { Device, Routed, Capped };
  // Counters: written by the owner (single_writer.h's bump), read by anyone.
  struct Counts {
    std::atomic<uint64_t> zero_copy_batches{0}, staged_batches{0}, cpu_batches{0}, device_jobs{0}, routed_jobs{0},
        capped_jobs{0}, unsupported_jobs{0}, fallback_jobs{0}, device_errors{0}, device_timeouts{0},
        device_resumes{0};
  };

  void run_cpu(ParityJob* j);
  void run_cpu_batch(std::unique_ptr<HostBatch> b, std::atomic<uint64_t>& counter);
  bool batch_full(const HostBatch& b) const;
  void close_open();
  void launch_closed(uint64_t now);
  Route route(const HostBatch& b, bool slot_free, uint64_t now);
  void harvest(uint64_t now);
  void give_up(Flight& f, uint64_t now);
  void complete(HostBatch& b);
  void pause(const std::string& why, uint64_t now);
  void maybe_resume(uint64_t now);
  uint64_t device_estimate(uint64_t bytes) const;
  void learn_device(uint64_t bytes, uint64_t ns);
  std::unique_ptr<HostBatch> take_batch();
  void recycle(std::unique_ptr<HostBatch> b);
  void arm_timer(uint64_t now);
  void wake_waiters();

  std::string name_;
  std::unique_ptr<Executor> exec_;
  std::unique_ptr<ParityBackend> cpu_;
  BatchOptions opts_;
  BatchBuilder builder_;

  std::unique_ptr<HostBatch> open_;
  uint64_t open_since_ns_ = 0;
  std::deque<std::unique_ptr<HostBatch>> closed_;
  std::vector<Flight> flights_;
  uint32_t live_flights_ = 0;  // flights that are not zombies
  std::vector<uint32_t> free_slots_;
  std::vector<std::unique_ptr<HostBatch>> pool_;
  std::vector<ParityJob*> ready_;    // finished, done() not yet run
  std::vector<ParityJob*> running_;  // poll(): the completions being run

  int epoll_fd_ = -1, wake_fd_ = -1, timer_fd_ = -1;
  uint64_t armed_ns_ = 0;  // timer deadline, 0 when disarmed (Event)
  uint64_t next_deep_ns_ = 0;
  size_t in_flight_ = 0;

  std::atomic<bool> on_cpu_{false};
  uint32_t failures_ = 0;  // in a row, since the device last finished a batch
  uint64_t retry_at_ns_ = 0;
  mutable std::mutex reason_mu_;  // reason_ is read by other threads (fell_back)
  std::string reason_;

  Estimates est_;
  double tokens_ = 0;  // max_gbps: bytes the device may take now
  uint64_t tokens_ns_ = 0;
  Counts n_;
};

}  // namespace gpuraid::kern
