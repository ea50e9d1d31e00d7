#include "bench/parity_report.h"

namespace gpuraid::bench {

ParityCounters parity_delta(const ParityCounters& a, const ParityCounters& b) {
  ParityCounters d;
  d.zero_copy_batches = a.zero_copy_batches - b.zero_copy_batches;
  d.staged_batches = a.staged_batches - b.staged_batches;
  d.cpu_batches = a.cpu_batches - b.cpu_batches;
  d.device_jobs = a.device_jobs - b.device_jobs;
  d.cpu_jobs = a.cpu_jobs - b.cpu_jobs;
  d.routed_jobs = a.routed_jobs - b.routed_jobs;
  d.capped_jobs = a.capped_jobs - b.capped_jobs;
  d.unsupported_jobs = a.unsupported_jobs - b.unsupported_jobs;
  d.fallback_jobs = a.fallback_jobs - b.fallback_jobs;
  d.device_errors = a.device_errors - b.device_errors;
  d.device_timeouts = a.device_timeouts - b.device_timeouts;
  d.device_resumes = a.device_resumes - b.device_resumes;
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
  return {{"backend", configured},
          {"ran", parity_ran(configured, d)},
          {"zero_copy_batches", d.zero_copy_batches},
          {"staged_batches", d.staged_batches},
          {"cpu_batches", d.cpu_batches},
          {"device_jobs", d.device_jobs},
          {"cpu_jobs", d.cpu_jobs},
          {"routed_jobs", d.routed_jobs},
          {"capped_jobs", d.capped_jobs},
          {"unsupported_jobs", d.unsupported_jobs},
          {"fallback_jobs", d.fallback_jobs},
          {"device_errors", d.device_errors},
          {"device_timeouts", d.device_timeouts},
          {"device_resumes", d.device_resumes},
          {"on_cpu_at_end", d.on_cpu}};
}

}  // namespace gpuraid::bench
