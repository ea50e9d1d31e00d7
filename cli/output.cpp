#include "cli/output.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "engine/units.h"
#include "engine/utf8.h"

namespace gpuraid::cli {

void Table::print() const {
  std::vector<size_t> w;
  for (const auto& r : rows_)
    for (size_t i = 0; i < r.size(); i++) {
      if (w.size() <= i) w.push_back(0);
      w[i] = std::max(w[i], display_width(r[i]));
    }
  for (const auto& r : rows_) {
    std::string line;
    for (size_t i = 0; i < r.size(); i++) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(w[i] - display_width(r[i]) + 2, ' ');
    }
    printf("%s\n", line.c_str());
  }
}

std::string upper(std::string s) {
  for (auto& c : s) c = char(toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string size_str(uint64_t b) { return format_size(b); }

std::string rate_str(double bps) { return bps < 1 ? "-" : format_size(uint64_t(bps)) + "/s"; }

std::string absolute_path(const std::string& p) {
  if (p.empty() || p[0] == '/') return p;
  char cwd[4096];
  return getcwd(cwd, sizeof cwd) ? std::string(cwd) + "/" + p : p;
}

std::string duration_str(double s) {
  if (s <= 0) return "-";
  uint64_t t = uint64_t(s + 0.5);
  char buf[32];
  if (t >= 3600) snprintf(buf, sizeof buf, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60, t % 60);
  else snprintf(buf, sizeof buf, "%lu:%02lu", t / 60, t % 60);
  return buf;
}

void print_fields(const std::vector<std::pair<std::string, std::string>>& kv) {
  size_t w = 0;
  for (auto& [k, v] : kv) w = std::max(w, display_width(k));
  for (auto& [k, v] : kv) printf("%s:%s  %s\n", k.c_str(), std::string(w - display_width(k), ' ').c_str(), v.c_str());
}

}  // namespace gpuraid::cli
