// The engine: its reactors and the fixed-file slots of every member drive.
// Threads are the caller's: each reactor is polled by exactly one thread.
#pragma once
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/io/drive.h"
#include "engine/parity/parity_backend.h"
#include "engine/reactor.h"

namespace gpuraid {

struct EngineConfig {
  uint32_t reactors = 1;
  size_t arena_bytes = 64u << 20;   // I/O buffer arena per reactor
  uint32_t ring_entries = 512;
  uint32_t max_drives = 256;        // fixed-file slots per ring
  // SQE128|CQE32 rings, so that nvme-char members (NVMe passthrough) can be attached.
  bool nvme_passthru = false;
  // Ops per volume per reactor: a request that finds them all in use waits
  // for some to come back (see engine/ops/op_pool.h).
  uint32_t ops_per_reactor = 1024;
  // Longest a sequential stream's parity write waits for the rest of its
  // stripe (engine/ops/stripe_gather.h); 0: never held.
  uint32_t write_gather_us = 1000;
  // Member bytes of one rebuild run's I/O (engine/ops/rebuild_run.h); about
  // kRebuildInFlightBytes per member stay in flight however it is cut.
  uint32_t rebuild_run_bytes = 1u << 20;
  // Deterministic tests: every reactor in lockstep (Reactor::set_lockstep).
  // Needs a parity backend that completes inside submit() (the CPU ones);
  // a group's housekeeping thread and idle timers stay outside it.
  bool lockstep = false;
  // Makes each reactor's parity backend; default: ISA-L on the CPU.
  std::function<std::unique_ptr<ParityBackend>()> parity_factory;
};

class Engine {
 public:
  static std::unique_ptr<Engine> create(const EngineConfig& cfg, std::string* err);
  uint32_t reactor_count() const { return uint32_t(reactors_.size()); }
  Reactor& reactor(uint32_t i) { return *reactors_[i]; }
  // Gives the drive a fixed-file slot in every ring; -1 when full. Call
  // before any I/O on it.
  int attach(Drive* d, std::string* err);
  uint32_t ops_per_reactor() const { return ops_per_reactor_; }
  uint64_t write_gather_ns() const { return write_gather_ns_; }
  uint32_t rebuild_run_bytes() const { return rebuild_run_bytes_; }
  void detach(int slot);
  // Member I/O of a drive summed over every reactor (zeros when it has no slot).
  DriveTotals drive_totals(const Drive* d);
  // Where every reactor's parity jobs ran (any thread).
  ParityCounters parity_counters();

 private:
  std::vector<std::unique_ptr<Reactor>> reactors_;
  std::vector<Drive*> slots_;
  bool nvme_passthru_ = false;
  uint32_t ops_per_reactor_ = 1024;
  uint64_t write_gather_ns_ = 0;
  uint32_t rebuild_run_bytes_ = 1u << 20;
  std::mutex mu_;  // control path only
};

}  // namespace gpuraid
