// Progress of long operations (init, resync, rebuild, scrub) as a bar with
// rate and ETA.
#pragma once
#include <string>

#include "gpuraid/v1/gpuraid.pb.h"

namespace gpuraid::cli {

// "rebuild [#########-----------]  45.2%  120MiB/s  ETA 0:12"
std::string progress_line(const std::string& label, const gpuraid::v1::Progress& p, int width = 30);
// Every running task of a group, one line each ("" when none runs).
std::string group_tasks(const gpuraid::v1::Group& g);
// "N stripes checked, N mismatched, N repaired[, N made consistent (unverified)]".
std::string scrub_summary(const gpuraid::v1::ScrubReport& s);
bool any_task_running(const gpuraid::v1::Group& g);

}  // namespace gpuraid::cli
