#include "cli/progress.h"

#include <algorithm>
#include <cstdio>

#include "cli/output.h"

namespace gpuraid::cli {

std::string progress_line(const std::string& label, const gpuraid::v1::Progress& p, int width) {
  double f = std::clamp(p.fraction(), 0.0, 1.0);
  int full = int(f * width + 0.5);
  char pct[16];
  snprintf(pct, sizeof pct, "%5.1f%%", f * 100);
  std::string s = label;
  s.resize(std::max<size_t>(s.size(), 8), ' ');
  s += "[" + std::string(size_t(full), '#') + std::string(size_t(width - full), '-') + "] " + pct;
  s += "  " + size_str(p.done_bytes()) + "/" + size_str(p.total_bytes());
  if (p.paused()) return s + "  paused";
  s += "  " + rate_str(p.rate_bytes_s()) + "  ETA " + duration_str(p.eta_s());
  return s;
}

std::string scrub_summary(const gpuraid::v1::ScrubReport& s) {
  std::string r = std::to_string(s.stripes_checked()) + " stripes checked, " + std::to_string(s.mismatched_stripes()) +
                  " mismatched, " + std::to_string(s.repaired_stripes()) + " repaired";
  // Rewritten without knowing which side was right: never called repaired.
  if (s.made_consistent_stripes())
    r += ", " + std::to_string(s.made_consistent_stripes()) + " made consistent (unverified: no checksum says which copy was right)";
  return r;
}

std::string group_tasks(const gpuraid::v1::Group& g) {
  std::string out;
  auto add = [&](const char* name, const gpuraid::v1::Progress& p) {
    if (p.running()) out += progress_line(name, p) + "\n";
  };
  add("init", g.init());
  add("resync", g.resync());
  add("rebuild", g.rebuild());
  add("scrub", g.scrub());
  add("replace", g.replace());
  return out;
}

bool any_task_running(const gpuraid::v1::Group& g) {
  return g.init().running() || g.resync().running() || g.rebuild().running() || g.scrub().running() ||
         g.replace().running();
}

}  // namespace gpuraid::cli
