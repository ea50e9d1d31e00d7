// The daemon's event log: every event gets a sequence number and a time,
// is logged, and is kept in a ring of the last 4096 for WatchEvents
// clients, who wait on it for new ones.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "gpuraid/v1/gpuraid.pb.h"

namespace gpuraid::daemon {

class EventBus {
 public:
  static constexpr size_t kKeep = 4096;
  // Fills in seq and time, logs, keeps, wakes waiters. Any thread.
  void publish(gpuraid::v1::Event e);
  // Kept events with seq > after (at most max).
  std::vector<gpuraid::v1::Event> since(uint64_t after, size_t max = kKeep) const;
  // Waits until an event with seq > after exists, the bus closes, or the
  // timeout passes. True when there is something new.
  bool wait(uint64_t after, std::chrono::milliseconds timeout) const;
  uint64_t last_seq() const;
  // Wakes every waiter for good (shutdown).
  void close();
  bool closed() const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::deque<gpuraid::v1::Event> ring_;
  uint64_t seq_ = 0;
  bool closed_ = false;
};

// Shorthand for the control plane.
gpuraid::v1::Event make_event(gpuraid::v1::EventKind kind, const std::string& message,
                              const std::string& group = "", const std::string& volume = "",
                              const std::string& drive = "", int member = -1);

}  // namespace gpuraid::daemon
