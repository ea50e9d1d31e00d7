// The engine inside the daemon: N reactors, each polled by its own thread
// until stop(), plus synchronous I/O for the control plane (debug reads and
// writes) and the reactor threads' CPU time for the stats.
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/block_target.h"
#include "engine/engine.h"

namespace gpuraid::daemon {

class EngineHost {
 public:
  static std::unique_ptr<EngineHost> start(const EngineConfig& cfg, std::string* err);
  ~EngineHost();
  Engine& engine() { return *engine_; }
  uint32_t reactors() const { return engine_->reactor_count(); }
  // Stops and joins the reactor threads (idempotent).
  void stop();
  // Runs one request on a reactor (round robin) and waits for it. Returns
  // 0 or -errno; *why says why a request was refused.
  int io(BlockTarget& t, IoRequest::Op op, uint64_t offset, uint64_t length, uint8_t* buf, bool fua,
         std::string* why);
  // Sum of the reactor threads' CPU time.
  double reactor_cpu_seconds() const;

 private:
  EngineHost() = default;
  void loop(uint32_t i);

  std::unique_ptr<Engine> engine_;
  std::vector<std::thread> threads_;
  std::vector<std::atomic<int64_t>> clocks_;  // pthread CPU clock ids (as int64)
  std::atomic<bool> stop_{false};
  std::atomic<uint32_t> next_{0};
};

}  // namespace gpuraid::daemon
