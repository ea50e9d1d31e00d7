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
#include "engine/group/group.h"

namespace gpuraid::bench {

struct RebuildSetup {
  Level level;
  uint32_t parity, strip;
  DeclusteredShape declustered;  // draid5/6
  uint64_t rate_bytes_s;      // rebuild rate limit, 0 = unlimited
  uint64_t min_rate_bytes_s;  // held to this while the foreground runs, 0 = not held
};

// A drive's own sequential write rate: 1 MiB writes, 8 in flight, over
// the whole drive, through reactor 0's io_uring (the bound of a rebuild
// onto that one drive).
double raw_write_mbps(Engine& e, Drive& d);
// The bench's drive group of `rs` over `drives`, its background on reactor
// 0, filled unless --no-fill; nullptr (said on stderr) when refused.
std::unique_ptr<Group> bench_group(Engine& e, std::vector<std::unique_ptr<Drive>> drives, const RebuildSetup& rs,
                                   const Options& o);
// The end of a rebuild run: the foreground rows (when printing), the group
// stopped; the exit code (1 on I/O errors or a rebuild that failed).
int end_rebuild_run(Group& g, const RunResult& raw_fg, const RunResult& loaded_fg, bool rebuilds_ok, bool print);
// Polls reactor 0 until the group's rebuild ends: true when it is optimal; *secs how long.
bool wait_rebuild(Engine& e, Group& g, double* secs);

// drives: the members, then one replacement drive. Returns the exit code.
// Declustered levels rebuild into their distributed spare room instead
// (room_rebuild_mode.cpp; the replacement drive only gives the one-drive bound).
int run_rebuild_mode(Engine& e, std::vector<std::unique_ptr<Drive>> drives, const RebuildSetup& rs, const Workload& w,
                     const Options& o, const std::string& backend);
int run_room_rebuild_mode(Engine& e, std::vector<std::unique_ptr<Drive>> drives, const RebuildSetup& rs,
                          const Workload& w, const Options& o, const std::string& backend);

}  // namespace gpuraid::bench
