#include "daemon/convert.h"

#include "engine/levels/level.h"
#include "proto/api_words.h"

#include <cctype>
#include <cstring>

namespace gpuraid::daemon {

namespace v1 = gpuraid::v1;

// Each level's description carries its RaidLevel value (engine/levels/).
bool level_from_api(v1::RaidLevel l, Level* out) {
  const LevelDescription* d = level_by_api(int(l));
  if (!d) return false;
  *out = d->level;
  return true;
}

v1::RaidLevel level_to_api(Level l) {
  const int v = level_description(l).api_value;
  return v1::RaidLevel_IsValid(v) ? v1::RaidLevel(v) : v1::RAID_LEVEL_UNSPECIFIED;
}

bool drive_type_from_api(v1::DriveType t, DriveType* out) {
  switch (t) {
    case v1::DRIVE_TYPE_FILE: *out = DriveType::File; return true;
    case v1::DRIVE_TYPE_BLOCK: *out = DriveType::Block; return true;
    case v1::DRIVE_TYPE_MEM: *out = DriveType::Mem; return true;
    case v1::DRIVE_TYPE_NULL: *out = DriveType::Null; return true;
    case v1::DRIVE_TYPE_NVME_CHAR: *out = DriveType::NvmeChar; return true;
    default: return false;
  }
}

v1::DriveType drive_type_to_api(DriveType t) {
  switch (t) {
    case DriveType::File: return v1::DRIVE_TYPE_FILE;
    case DriveType::Block: return v1::DRIVE_TYPE_BLOCK;
    case DriveType::Mem: return v1::DRIVE_TYPE_MEM;
    case DriveType::Null: return v1::DRIVE_TYPE_NULL;
    case DriveType::NvmeChar: return v1::DRIVE_TYPE_NVME_CHAR;
  }
  return v1::DRIVE_TYPE_UNSPECIFIED;
}

v1::DriveState member_state_to_api(MemberState s) {
  switch (s) {
    case MemberState::Active: return v1::DRIVE_STATE_ONLINE;
    case MemberState::Failed: return v1::DRIVE_STATE_FAILED;
    case MemberState::Rebuilding: return v1::DRIVE_STATE_REBUILDING;
    case MemberState::Missing: return v1::DRIVE_STATE_MISSING;
  }
  return v1::DRIVE_STATE_UNSPECIFIED;
}

v1::GroupState group_state_to_api(GroupState s) {
  switch (s) {
    case GroupState::Optimal: return v1::GROUP_STATE_OPTIMAL;
    case GroupState::Degraded: return v1::GROUP_STATE_DEGRADED;
    case GroupState::Rebuilding: return v1::GROUP_STATE_REBUILDING;
    case GroupState::Failed: return v1::GROUP_STATE_FAILED;
    case GroupState::Initializing: return v1::GROUP_STATE_INITIALIZING;
    case GroupState::Resyncing: return v1::GROUP_STATE_RESYNCING;
  }
  return v1::GROUP_STATE_UNSPECIFIED;
}

v1::Redundancy redundancy_to_api(Redundancy r) {
  switch (r) {
    case Redundancy::Full: return v1::REDUNDANCY_FULL;
    case Redundancy::Reduced: return v1::REDUNDANCY_REDUCED;
    case Redundancy::None: return v1::REDUNDANCY_NONE;
    case Redundancy::Pending: return v1::REDUNDANCY_PENDING;
    case Redundancy::Lost: return v1::REDUNDANCY_LOST;
  }
  return v1::REDUNDANCY_UNSPECIFIED;
}

v1::EventKind group_event_to_api(GroupEvent::Kind k) {
  switch (k) {
    case GroupEvent::MemberFailed: return v1::EVENT_KIND_MEMBER_FAILED;
    case GroupEvent::SpareTaken: return v1::EVENT_KIND_SPARE_TAKEN;
    case GroupEvent::RebuildStarted: return v1::EVENT_KIND_REBUILD_STARTED;
    case GroupEvent::RebuildProgress: return v1::EVENT_KIND_REBUILD_PROGRESS;
    case GroupEvent::RebuildFinished: return v1::EVENT_KIND_REBUILD_FINISHED;
    case GroupEvent::ResyncStarted: return v1::EVENT_KIND_RESYNC_STARTED;
    case GroupEvent::ResyncFinished: return v1::EVENT_KIND_RESYNC_FINISHED;
    case GroupEvent::InitStarted: return v1::EVENT_KIND_INIT_STARTED;
    case GroupEvent::InitFinished: return v1::EVENT_KIND_INIT_FINISHED;
    case GroupEvent::ScrubStarted: return v1::EVENT_KIND_SCRUB_STARTED;
    case GroupEvent::ScrubProgress: return v1::EVENT_KIND_SCRUB_PROGRESS;
    case GroupEvent::ScrubFinished: return v1::EVENT_KIND_SCRUB_FINISHED;
    case GroupEvent::MismatchFound: return v1::EVENT_KIND_MISMATCH_FOUND;
    case GroupEvent::GroupFailed: return v1::EVENT_KIND_GROUP_FAILED;
    case GroupEvent::MemberMissing: return v1::EVENT_KIND_MEMBER_MISSING;
    case GroupEvent::MemberReturned: return v1::EVENT_KIND_MEMBER_RETURNED;
    case GroupEvent::MemberResynced: return v1::EVENT_KIND_MEMBER_RESYNCED;
    case GroupEvent::SpareFailed: return v1::EVENT_KIND_SPARE_FAILED;
    case GroupEvent::ReplaceStarted: return v1::EVENT_KIND_REPLACE_STARTED;
    case GroupEvent::ReplaceFinished: return v1::EVENT_KIND_REPLACE_FINISHED;
    case GroupEvent::ReadCorrected: return v1::EVENT_KIND_READ_CORRECTED;
    case GroupEvent::ReadUncorrectable: return v1::EVENT_KIND_READ_UNCORRECTABLE;
  }
  return v1::EVENT_KIND_UNSPECIFIED;
}

void progress_to_api(const Progress& p, v1::Progress* o) {
  o->set_running(p.running);
  o->set_paused(p.paused);
  o->set_fraction(p.fraction);
  o->set_rate_bytes_s(p.rate_bytes_s);
  o->set_eta_s(p.eta_s);
  o->set_done_bytes(p.done_bytes);
  o->set_total_bytes(p.total_bytes);
}

void scrub_to_api(const ScrubReport& r, v1::ScrubReport* o) {
  o->set_stripes_checked(r.stripes_checked);
  o->set_mismatched_stripes(r.mismatched_stripes);
  o->set_repaired_stripes(r.repaired_stripes);
  o->set_made_consistent_stripes(r.made_consistent_stripes);
  for (auto s : r.mismatch_stripes) o->add_mismatch_stripes(s);
  for (auto m : r.located_members) o->add_located_members(m);
}

// The words of proto/api_words.h, the one source of the API's words.
std::string group_state_word(v1::GroupState s) { return v1::api_word(s); }
std::string drive_state_word(v1::DriveState s) { return v1::api_word(s); }
std::string event_kind_word(v1::EventKind k) { return v1::api_word(k); }

void parity_paths_to_api(Engine& e, v1::ParityPaths* out) {
  ParityCounters c;
  uint32_t on_cpu = 0;
  for (uint32_t i = 0; i < e.reactor_count(); i++) {
    const ParityCounters r = e.reactor(i).parity().counters();
    c += r;
    std::string why;
    if (r.on_cpu && e.reactor(i).parity().fell_back(&why) && on_cpu++ == 0)
      out->set_on_cpu_reason("reactor " + std::to_string(i) + ": " + why);
  }
  out->set_zero_copy_batches(c.zero_copy_batches);
  out->set_staged_batches(c.staged_batches);
  out->set_cpu_batches(c.cpu_batches);
  out->set_device_jobs(c.device_jobs);
  out->set_cpu_jobs(c.cpu_jobs);
  out->set_routed_jobs(c.routed_jobs);
  out->set_capped_jobs(c.capped_jobs);
  out->set_unsupported_jobs(c.unsupported_jobs);
  out->set_fallback_jobs(c.fallback_jobs);
  out->set_device_errors(c.device_errors);
  out->set_device_timeouts(c.device_timeouts);
  out->set_device_resumes(c.device_resumes);
  out->set_reactors_on_cpu(on_cpu);
}
std::string redundancy_word(v1::Redundancy r) { return v1::api_word(r); }

namespace {
// Every value of an API enum but its UNSPECIFIED (0), in declaration order.
template <typename E>
std::vector<E> all_values(const google::protobuf::EnumDescriptor* d) {
  std::vector<E> out;
  for (int i = 0; i < d->value_count(); i++)
    if (d->value(i)->number() != 0) out.push_back(E(d->value(i)->number()));
  return out;
}
}  // namespace

std::vector<v1::GroupState> all_group_states() { return all_values<v1::GroupState>(v1::GroupState_descriptor()); }
std::vector<v1::DriveState> all_drive_states() { return all_values<v1::DriveState>(v1::DriveState_descriptor()); }
std::vector<v1::Redundancy> all_redundancies() { return all_values<v1::Redundancy>(v1::Redundancy_descriptor()); }

}  // namespace gpuraid::daemon
