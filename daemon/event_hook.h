// gpuraidd --event-hook CMD: runs CMD (through /bin/sh -c) for every event,
// like mdadm --monitor --program. The event comes as one JSON line on
// stdin (the API's JSON mapping, as `gpuraid events --json` prints it) and
// in GPURAID_EVENT_* environment variables. Hooks run one at a time, in
// event order, on a thread of their own: offer() never blocks the daemon.
// A bounded queue holds the events waiting; when it is full, new events are
// not passed on (counted and logged). A hook that runs past the timeout is
// killed (its whole process group). Failures and output are logged.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "gpuraid/v1/gpuraid.pb.h"

namespace gpuraid::daemon {

class EventHook {
 public:
  EventHook(std::string command, size_t queue_max, std::chrono::milliseconds timeout);
  ~EventHook();  // finishes the hook running now; events still queued are logged as not delivered
  void offer(const gpuraid::v1::Event& e);
  // Prometheus text: runs by result, events dropped, queued (all 0 when h
  // is null: no hook configured).
  static std::string metrics_text(const EventHook* h);
  const std::string& command() const { return cmd_; }

 private:
  enum Result { kOk, kFailed, kTimedOut, kNotRun, kResults };
  void loop();
  Result run(const gpuraid::v1::Event& e);

  const std::string cmd_;
  const size_t queue_max_;
  const std::chrono::milliseconds timeout_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<gpuraid::v1::Event> queue_;
  bool stop_ = false;
  uint64_t results_[kResults] = {};
  uint64_t dropped_ = 0;
  std::thread th_;
};

}  // namespace gpuraid::daemon
