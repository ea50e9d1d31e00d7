// Words and short descriptions the commands share: a group's level, an
// export, and the one place that turns a group or drive state into a word.
#pragma once
#include <string>

#include "gpuraid/v1/gpuraid.pb.h"

namespace gpuraid::cli {

std::string level_str(const gpuraid::v1::Group& g);     // "raid6", "ec 4+2"
std::string export_str(const gpuraid::v1::Volume& v);   // "ublk /dev/ublkb0", "-"
// draid5/6: "1 of 2 used, 1 free" (members the distributed spare room holds); "" otherwise.
std::string room_str(const gpuraid::v1::Group& g);
std::string export_security_str(const gpuraid::v1::Volume& v);  // NBD: "TLS required (...)", "no TLS; INSECURE ..."
std::string group_state_word(gpuraid::v1::GroupState s);  // "degraded"
std::string drive_state_word(gpuraid::v1::DriveState s);  // "rebuilding"
// Where an accelerator's parity jobs went: "1 of 2 reactors on the CPU
// (reactor 1: ...); 1234 zero-copy / 0 staged batches, ..."; "" for a CPU
// backend.
std::string parity_paths_str(const gpuraid::v1::ParityPaths& p);

}  // namespace gpuraid::cli
