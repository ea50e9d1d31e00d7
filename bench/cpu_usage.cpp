#include "bench/cpu_usage.h"

#include <sys/resource.h>

#include <fstream>
#include <sstream>
#include <string>

namespace gpuraid::bench {

CpuSample CpuSample::now() {
  CpuSample s;
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  s.proc_usr_s = double(ru.ru_utime.tv_sec) + double(ru.ru_utime.tv_usec) / 1e6;
  s.proc_sys_s = double(ru.ru_stime.tv_sec) + double(ru.ru_stime.tv_usec) / 1e6;
  std::ifstream f("/proc/stat");
  std::string line;
  if (std::getline(f, line)) {
    std::istringstream in(line);
    std::string cpu;
    uint64_t v[10] = {};
    in >> cpu;
    for (auto& x : v) in >> x;
    for (auto x : v) s.machine_total += x;
    s.machine_busy = s.machine_total - v[3] - v[4];  // minus idle and iowait
  }
  return s;
}

CpuUsage CpuUsage::between(const CpuSample& a, const CpuSample& b, double wall_s) {
  CpuUsage u;
  u.usr_s = b.proc_usr_s - a.proc_usr_s;
  u.sys_s = b.proc_sys_s - a.proc_sys_s;
  u.proc_pct = wall_s > 0 ? (u.usr_s + u.sys_s) / wall_s * 100 : 0;
  uint64_t dt = b.machine_total - a.machine_total;
  u.machine_pct = dt ? double(b.machine_busy - a.machine_busy) / double(dt) * 100 : 0;
  return u;
}

}  // namespace gpuraid::bench
