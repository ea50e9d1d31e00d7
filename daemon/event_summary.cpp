#include "daemon/event_summary.h"

#include "daemon/convert.h"

namespace gpuraid::daemon {

namespace v1 = gpuraid::v1;

bool EventSummary::repetitive(v1::EventKind k) {
  return k == v1::EVENT_KIND_MISMATCH_FOUND || k == v1::EVENT_KIND_REBUILD_PROGRESS ||
         k == v1::EVENT_KIND_SCRUB_PROGRESS || k == v1::EVENT_KIND_READ_UNCORRECTABLE;  // an application retrying
}

namespace {
// Events that begin or end a group's task pass.
bool task_boundary(v1::EventKind k) {
  switch (k) {
    case v1::EVENT_KIND_REBUILD_STARTED:
    case v1::EVENT_KIND_REBUILD_FINISHED:
    case v1::EVENT_KIND_RESYNC_STARTED:
    case v1::EVENT_KIND_RESYNC_FINISHED:
    case v1::EVENT_KIND_INIT_STARTED:
    case v1::EVENT_KIND_INIT_FINISHED:
    case v1::EVENT_KIND_SCRUB_STARTED:
    case v1::EVENT_KIND_SCRUB_FINISHED:
    case v1::EVENT_KIND_MEMBER_RESYNCED:
    case v1::EVENT_KIND_GROUP_FAILED:
    case v1::EVENT_KIND_GROUP_DELETED: return true;
    default: return false;
  }
}
}  // namespace

v1::Event EventSummary::summary(const std::string& group, v1::EventKind kind, Pass& p) const {
  v1::Event s;
  s.set_kind(v1::EVENT_KIND_EVENTS_SUPPRESSED);
  s.set_group(group);
  s.set_member(-1);
  s.set_summarised_kind(kind);
  s.set_summarised_count(p.left_out);
  s.set_message(std::to_string(p.left_out) + " more " + event_kind_word(kind) + " events not listed one by one (the first " +
                std::to_string(first_) + " of this task were); the last: " + p.last.message());
  p.left_out = 0;
  return s;
}

std::vector<v1::Event> EventSummary::admit(v1::Event e, Clock::time_point now) {
  std::vector<v1::Event> out;
  if (repetitive(e.kind())) {
    Pass& p = passes_[{e.group(), int(e.kind())}];
    if (++p.seen <= first_) {
      out.push_back(std::move(e));
    } else {
      if (p.left_out++ == 0) p.since = now;
      p.last = std::move(e);
    }
    return out;
  }
  if (task_boundary(e.kind()))
    for (auto it = passes_.begin(); it != passes_.end();) {
      if (it->first.first != e.group()) {
        ++it;
        continue;
      }
      if (it->second.left_out) out.push_back(summary(it->first.first, v1::EventKind(it->first.second), it->second));
      it = passes_.erase(it);
    }
  out.push_back(std::move(e));
  return out;
}

std::vector<v1::Event> EventSummary::due(Clock::time_point now) {
  std::vector<v1::Event> out;
  for (auto& [key, p] : passes_)
    if (p.left_out && now - p.since >= interval_) out.push_back(summary(key.first, v1::EventKind(key.second), p));
  return out;
}

}  // namespace gpuraid::daemon
