// What the bench says about parity: which backend actually ran the
// measured jobs (a GPU backend that paused mid-run is not reported as the
// GPU), and where its jobs went (zero-copy / staged batches, jobs routed to
// the CPU, capped, fallen back), over the measured window.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "engine/parity/parity_backend.h"

namespace gpuraid::bench {

// after - before, counter by counter (on_cpu: after's).
ParityCounters parity_delta(const ParityCounters& after, const ParityCounters& before);
// "cuda", "cpu-isal", "cuda+cpu-fallback", "cpu-isal (cuda fell back)".
std::string parity_ran(const std::string& configured, const ParityCounters& d);
nlohmann::json parity_json(const std::string& configured, const ParityCounters& d);

}  // namespace gpuraid::bench
