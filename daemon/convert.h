// Engine types <-> API enums and messages.
#pragma once
#include "engine/geometry.h"
#include "engine/group/group.h"
#include "engine/engine.h"
#include "engine/io/drive.h"
#include "gpuraid/v1/gpuraid.pb.h"

#include <string>
#include <vector>

namespace gpuraid::daemon {

bool level_from_api(gpuraid::v1::RaidLevel l, Level* out);
gpuraid::v1::RaidLevel level_to_api(Level l);
bool drive_type_from_api(gpuraid::v1::DriveType t, DriveType* out);
gpuraid::v1::DriveType drive_type_to_api(DriveType t);
gpuraid::v1::DriveState member_state_to_api(MemberState s);
gpuraid::v1::GroupState group_state_to_api(GroupState s);
gpuraid::v1::Redundancy redundancy_to_api(Redundancy r);
gpuraid::v1::EventKind group_event_to_api(GroupEvent::Kind k);
void progress_to_api(const Progress& p, gpuraid::v1::Progress* out);
void scrub_to_api(const ScrubReport& r, gpuraid::v1::ScrubReport* out);
// Every reactor's parity counters summed, and which reactors run on the CPU now.
void parity_paths_to_api(Engine& e, gpuraid::v1::ParityPaths* out);

// The words operators see for states (metric labels, hooks): the one place
// that turns a state into a word ("degraded", "rebuilding", ...).
std::string group_state_word(gpuraid::v1::GroupState s);
std::string drive_state_word(gpuraid::v1::DriveState s);
// Every state there is, in the API's order (UNSPECIFIED left out).
std::vector<gpuraid::v1::GroupState> all_group_states();
std::vector<gpuraid::v1::DriveState> all_drive_states();
std::vector<gpuraid::v1::Redundancy> all_redundancies();
std::string redundancy_word(gpuraid::v1::Redundancy r);
// "member_failed" for EVENT_KIND_MEMBER_FAILED (hooks, logs).
std::string event_kind_word(gpuraid::v1::EventKind k);

}  // namespace gpuraid::daemon
