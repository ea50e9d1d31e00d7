#include "daemon/prom_text.h"

#include <cstdio>

namespace gpuraid::daemon {

std::string prom_escape(const std::string& v) {
  std::string o;
  for (char c : v) {
    if (c == '\\') o += "\\\\";
    else if (c == '"') o += "\\\"";
    else if (c == '\n') o += "\\n";
    else o += c;
  }
  return o;
}

void PromText::family(const std::string& name, const char* type, const char* help) {
  o_ << "# HELP gpuraid_" << name << " " << help << "\n# TYPE gpuraid_" << name << " " << type << "\n";
}

void PromText::head(const std::string& name, const Labels& labels, const char* le) {
  o_ << "gpuraid_" << name;
  if (labels.empty() && !le) {
    o_ << ' ';
    return;
  }
  o_ << '{';
  bool first = true;
  for (const auto& [k, v] : labels) {
    o_ << (first ? "" : ",") << k << "=\"" << prom_escape(v) << '"';
    first = false;
  }
  if (le) o_ << (first ? "" : ",") << "le=\"" << le << '"';
  o_ << "} ";
}

void PromText::sample(const std::string& name, const Labels& labels, double v) {
  head(name, labels);
  char b[40];
  snprintf(b, sizeof b, "%.9g", v);
  o_ << b << '\n';
}

void PromText::sample(const std::string& name, const Labels& labels, uint64_t v) {
  head(name, labels);
  o_ << v << '\n';
}

void PromText::histogram(const std::string& name, const Labels& labels, const LatencyTotals& t) {
  uint64_t cum = 0;
  char le[32];
  for (size_t i = 0; i < kLatencyBuckets; i++) {
    cum += t.buckets[i];
    if (i < kLatencyEdgesNs.size()) snprintf(le, sizeof le, "%g", double(kLatencyEdgesNs[i]) * 1e-9);
    else snprintf(le, sizeof le, "+Inf");
    head(name + "_bucket", labels, le);
    o_ << cum << '\n';
  }
  sample(name + "_sum", labels, double(t.sum_ns) * 1e-9);
  sample(name + "_count", labels, cum);
}

}  // namespace gpuraid::daemon
