// Prometheus text exposition (format 0.0.4): families with HELP and TYPE,
// samples with escaped label values, histograms from the engine's fixed
// latency edges (_bucket{le=...} cumulative, _sum, _count).
#pragma once
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "engine/reactor.h"

namespace gpuraid::daemon {

using Labels = std::vector<std::pair<std::string, std::string>>;

class PromText {
 public:
  // HELP and TYPE ("gauge", "counter", "histogram"); name without the gpuraid_ prefix.
  void family(const std::string& name, const char* type, const char* help);
  void sample(const std::string& name, const Labels& labels, double v);
  void sample(const std::string& name, const Labels& labels, uint64_t v);
  // A histogram sample set (per-bucket counts, not cumulative) in seconds.
  void histogram(const std::string& name, const Labels& labels, const LatencyTotals& t);
  std::string str() const { return o_.str(); }

 private:
  void head(const std::string& name, const Labels& labels, const char* le = nullptr);
  std::ostringstream o_;
};

// A label value as the format wants it (\\, \", \n escaped).
std::string prom_escape(const std::string& v);

}  // namespace gpuraid::daemon
