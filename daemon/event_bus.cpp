#include "daemon/event_bus.h"

#include <algorithm>

#include "daemon/convert.h"
#include "daemon/event_hook.h"
#include "daemon/event_log.h"
#include "daemon/logging.h"
#include "daemon/prom_text.h"
#include "proto/api_words.h"

namespace gpuraid::daemon {

namespace v1 = gpuraid::v1;

v1::Event make_event(v1::EventKind kind, const std::string& message, const std::string& group,
                     const std::string& volume, const std::string& drive, int member) {
  v1::Event e;
  e.set_kind(kind);
  e.set_message(message);
  e.set_group(group);
  e.set_volume(volume);
  e.set_drive(drive);
  e.set_member(member);
  return e;
}

EventBus::EventBus() = default;
EventBus::~EventBus() = default;

bool EventBus::open_log(const std::string& dir, uint64_t max_bytes, std::string* err) {
  auto log = std::make_unique<EventLog>(dir, max_bytes);
  std::vector<v1::Event> recent;
  uint64_t last = 0;
  if (!log->open(kKeep, &recent, &last, err)) return false;
  std::lock_guard<std::mutex> g(mu_);
  ring_.assign(recent.begin(), recent.end());
  seq_ = std::max(seq_, last);
  log_ = std::move(log);
  spdlog::info("event log {}: {} events kept, sequence goes on after {}", log_->path(), ring_.size(), seq_);
  return true;
}

void EventBus::set_hook(EventHook* hook) {
  std::lock_guard<std::mutex> g(mu_);
  hook_ = hook;
}

void EventBus::publish(v1::Event e) {
  {
    std::lock_guard<std::mutex> g(mu_);
    const v1::EventKind kind = e.kind();
    auto out = summary_.admit(std::move(e), std::chrono::steady_clock::now());
    if (out.empty() || out.back().kind() != kind) left_out_[int(kind)]++;
    for (auto& x : out) publish_locked(std::move(x));
  }
  cv_.notify_all();
}

void EventBus::tick() {
  {
    std::lock_guard<std::mutex> g(mu_);
    for (auto& x : summary_.due(std::chrono::steady_clock::now())) publish_locked(std::move(x));
    std::string err;
    if (log_ && !log_->sync(&err)) {
      log_errors_++;
      log_limited(spdlog::level::err, "event-log-sync", "event log: {}", err);
    }
  }
  cv_.notify_all();
}

// Under mu_, so that seq order is the order in the file, the ring and the hook.
void EventBus::publish_locked(v1::Event e) {
  using namespace std::chrono;
  e.set_time_unix_ms(duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
  bool progress = e.kind() == v1::EVENT_KIND_REBUILD_PROGRESS || e.kind() == v1::EVENT_KIND_SCRUB_PROGRESS;
  std::string subject = e.group().empty() ? (e.volume().empty() ? e.drive() : e.volume()) : e.group();
  const std::string kind = v1::api_word(e.kind());  // the word `gpuraid events` prints
  // Progress events repeat by design: log them rate-limited per subject.
  log_limited(progress ? spdlog::level::debug : spdlog::level::info,
              kind + ":" + subject + (progress ? "" : ":" + e.message()), "event {} {}: {}",
              kind, subject, e.message());
  e.set_seq(++seq_);
  published_[int(e.kind())]++;
  std::string err;
  if (log_ && !log_->append(e, &err)) {
    // Kept in memory and passed on all the same; the log says what is missing.
    log_errors_++;
    log_limited(spdlog::level::err, "event-log-write", "event log: event {} not written: {}", e.seq(), err);
  }
  if (hook_) hook_->offer(e);
  ring_.push_back(std::move(e));
  if (ring_.size() > kKeep) ring_.pop_front();
}

std::vector<v1::Event> EventBus::since(uint64_t after, size_t max) const {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<v1::Event> out;
  for (const auto& e : ring_)
    if (e.seq() > after && out.size() < max) out.push_back(e);
  return out;
}

bool EventBus::wait(uint64_t after, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> g(mu_);
  return cv_.wait_for(g, timeout, [&] { return closed_ || seq_ > after; }) && seq_ > after;
}

uint64_t EventBus::last_seq() const {
  std::lock_guard<std::mutex> g(mu_);
  return seq_;
}

void EventBus::close() {
  {
    std::lock_guard<std::mutex> g(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

bool EventBus::closed() const {
  std::lock_guard<std::mutex> g(mu_);
  return closed_;
}

std::string EventBus::metrics_text() const {
  PromText p;
  std::lock_guard<std::mutex> g(mu_);
  p.family("events_total", "counter", "Events published since the daemon started, by kind.");
  for (auto& [k, n] : published_) p.sample("events_total", {{"kind", event_kind_word(v1::EventKind(k))}}, n);
  p.family("events_left_out_total", "counter", "Repetitive events summarised instead of published, by kind.");
  for (auto& [k, n] : left_out_) p.sample("events_left_out_total", {{"kind", event_kind_word(v1::EventKind(k))}}, n);
  p.family("event_log_errors_total", "counter", "Failed writes or syncs of the event log.");
  p.sample("event_log_errors_total", {}, log_errors_);
  p.family("event_last_seq", "gauge", "Sequence number of the last event.");
  p.sample("event_last_seq", {}, seq_);
  return p.str();
}

}  // namespace gpuraid::daemon
