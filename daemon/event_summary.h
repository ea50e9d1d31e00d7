// Keeps repetitive events from flooding the event log, the hook and
// watchers. For each group and repetitive kind (one MISMATCH_FOUND per
// stripe, a *_PROGRESS every second), the first `first` of a task pass go
// through; the rest are counted, and one EVENTS_SUPPRESSED event says how
// many (and the last one's message) when the task ends (the group's next
// *_STARTED or *_FINISHED event) and every `interval` while they go on.
#pragma once
#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gpuraid/v1/gpuraid.pb.h"

namespace gpuraid::daemon {

class EventSummary {
 public:
  using Clock = std::chrono::steady_clock;
  explicit EventSummary(size_t first = 8, std::chrono::seconds interval = std::chrono::seconds(60))
      : first_(first), interval_(interval) {}
  static bool repetitive(gpuraid::v1::EventKind k);
  // What to publish for e, in order: summaries it closes, then e itself
  // unless it is left out.
  std::vector<gpuraid::v1::Event> admit(gpuraid::v1::Event e, Clock::time_point now);
  // Summaries whose interval has passed.
  std::vector<gpuraid::v1::Event> due(Clock::time_point now);

 private:
  struct Pass {
    size_t seen = 0;        // of this kind in this task pass
    uint64_t left_out = 0;  // since the last summary
    Clock::time_point since;
    gpuraid::v1::Event last;
  };
  gpuraid::v1::Event summary(const std::string& group, gpuraid::v1::EventKind kind, Pass& p) const;
  size_t first_;
  std::chrono::seconds interval_;
  std::map<std::pair<std::string, int>, Pass> passes_;  // (group, kind)
};

}  // namespace gpuraid::daemon
