// gpuraid-bench --state rebuilding: the rebuild rate of a drive group with
// the foreground idle and under a (rate-capped) foreground workload, as
// ratios to the replacement drive's raw sequential write rate and to the
// foreground's raw IOPS on the same drives.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "bench/runner.h"
#include "engine/geometry.h"

namespace gpuraid::bench {

struct RebuildSetup {
  Level level;
  uint32_t parity, strip;
  DeclusteredShape declustered;  // draid5/6
  uint64_t rate_bytes_s;      // rebuild rate limit, 0 = unlimited
  uint64_t min_rate_bytes_s;  // held to this while the foreground runs, 0 = not held
};

// drives: the members, then one replacement drive. Returns the exit code.
int run_rebuild_mode(Engine& e, std::vector<std::unique_ptr<Drive>> drives, const RebuildSetup& rs, const Workload& w,
                     const Options& o, const std::string& backend);

}  // namespace gpuraid::bench
