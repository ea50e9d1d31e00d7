// The daemon's event log: every event gets a sequence number and a time,
// is logged, written to the event log in the state dir (event_log.h: the
// sequence goes on across restarts), kept in a ring of the last 4096 for
// WatchEvents clients, who wait on it for new ones, and passed to the
// event hook (event_hook.h). Repetitive events are summarised first
// (event_summary.h).
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "daemon/event_summary.h"
#include "gpuraid/v1/gpuraid.pb.h"

namespace gpuraid::daemon {

class EventLog;
class EventHook;

class EventBus {
 public:
  static constexpr size_t kKeep = 4096;
  EventBus();
  ~EventBus();
  // Opens the event log in dir (before any publish): the ring and the
  // sequence go on from what it holds.
  bool open_log(const std::string& dir, uint64_t max_bytes, std::string* err);
  // Every event published from now on is offered to the hook (not owned).
  void set_hook(EventHook* hook);
  // Fills in seq and time, logs, writes, keeps, wakes waiters. Any thread.
  void publish(gpuraid::v1::Event e);
  // Summaries that are due, and the event log's fdatasync: about once a second.
  void tick();
  // Kept events with seq > after (at most max).
  std::vector<gpuraid::v1::Event> since(uint64_t after, size_t max = kKeep) const;
  // Waits until an event with seq > after exists, the bus closes, or the
  // timeout passes. True when there is something new.
  bool wait(uint64_t after, std::chrono::milliseconds timeout) const;
  uint64_t last_seq() const;
  // Wakes every waiter for good (shutdown).
  void close();
  bool closed() const;
  // Prometheus text: events by kind, left out by kind, log write errors.
  std::string metrics_text() const;

 private:
  void publish_locked(gpuraid::v1::Event e);
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::deque<gpuraid::v1::Event> ring_;
  uint64_t seq_ = 0;
  bool closed_ = false;
  EventSummary summary_;
  std::unique_ptr<EventLog> log_;
  EventHook* hook_ = nullptr;
  std::map<int, uint64_t> published_, left_out_;  // by kind
  uint64_t log_errors_ = 0;
};

// Shorthand for the control plane.
gpuraid::v1::Event make_event(gpuraid::v1::EventKind kind, const std::string& message,
                              const std::string& group = "", const std::string& volume = "",
                              const std::string& drive = "", int member = -1);

}  // namespace gpuraid::daemon
