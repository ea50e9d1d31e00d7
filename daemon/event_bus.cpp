#include "daemon/event_bus.h"

#include "daemon/logging.h"
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

void EventBus::publish(v1::Event e) {
  using namespace std::chrono;
  e.set_time_unix_ms(duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
  bool progress = e.kind() == v1::EVENT_KIND_REBUILD_PROGRESS || e.kind() == v1::EVENT_KIND_SCRUB_PROGRESS;
  std::string subject = e.group().empty() ? (e.volume().empty() ? e.drive() : e.volume()) : e.group();
  const std::string kind = v1::api_word(e.kind());  // the word `gpuraid events` prints
  // Progress events repeat by design: log them rate-limited per subject.
  log_limited(progress ? spdlog::level::debug : spdlog::level::info,
              kind + ":" + subject + (progress ? "" : ":" + e.message()), "event {} {}: {}",
              kind, subject, e.message());
  {
    std::lock_guard<std::mutex> g(mu_);
    e.set_seq(++seq_);
    ring_.push_back(std::move(e));
    if (ring_.size() > kKeep) ring_.pop_front();
  }
  cv_.notify_all();
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

}  // namespace gpuraid::daemon
