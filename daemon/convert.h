// Engine types <-> API enums and messages.
#pragma once
#include "engine/geometry.h"
#include "engine/group/group.h"
#include "engine/io/drive.h"
#include "gpuraid/v1/gpuraid.pb.h"

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

}  // namespace gpuraid::daemon
