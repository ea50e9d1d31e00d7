#include "bench/parity_report.h"

namespace gpuraid::bench {

ParityCounters parity_delta(const ParityCounters& a, const ParityCounters& b) {
  ParityCounters d;
  for (const ParityCount& c : kParityCounts) d.*c.field = a.*c.field - b.*c.field;
  d.on_cpu = a.on_cpu;
  return d;
}

std::string parity_ran(const std::string& configured, const ParityCounters& d) {
  const bool device = d.device_jobs > 0 || d.zero_copy_batches > 0 || d.staged_batches > 0;
  if (d.fallback_jobs == 0 && !d.on_cpu) return configured;
  if (!device) return "cpu-isal (" + configured + " fell back)";
  return configured + "+cpu-fallback";
}

nlohmann::json parity_json(const std::string& configured, const ParityCounters& d) {
  nlohmann::json j = {{"backend", configured}, {"ran", parity_ran(configured, d)}, {"on_cpu_at_end", d.on_cpu}};
  for (const ParityCount& c : kParityCounts) j[c.name] = d.*c.field;
  return j;
}

}  // namespace gpuraid::bench
