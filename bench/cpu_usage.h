// CPU accounting for benchmark windows: the process (usr+sys of all its
// threads, from getrusage; io_uring's io-wq workers count there too) and
// the whole machine (/proc/stat), as the storage white papers report it.
#pragma once
#include <cstdint>

namespace gpuraid::bench {

struct CpuSample {
  double proc_usr_s = 0, proc_sys_s = 0;
  uint64_t machine_busy = 0, machine_total = 0;  // jiffies
  static CpuSample now();
};

struct CpuUsage {
  double usr_s = 0, sys_s = 0;
  double proc_pct = 0;     // % of one core
  double machine_pct = 0;  // % of all cores
  static CpuUsage between(const CpuSample& a, const CpuSample& b, double wall_s);
};

}  // namespace gpuraid::bench
