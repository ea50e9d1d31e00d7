#include "engine/units.h"

#include <cctype>
#include <cstdio>

namespace gpuraid {

bool parse_size(const std::string& s, uint64_t* out) {
  size_t i = 0;
  uint64_t v = 0;
  if (s.empty() || !isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (; i < s.size() && isdigit(static_cast<unsigned char>(s[i])); i++) {
    if (v > (UINT64_MAX - 9) / 10) return false;
    v = v * 10 + uint64_t(s[i] - '0');
  }
  std::string unit = s.substr(i);
  for (auto& c : unit) c = char(toupper(static_cast<unsigned char>(c)));
  if (unit.size() >= 2 && unit.substr(unit.size() - 2) == "IB") unit.resize(unit.size() - 2);
  else if (unit.size() == 2 && unit[1] == 'B') unit.resize(1);
  int shift = 0;
  if (unit.empty() || unit == "B") shift = 0;
  else if (unit == "K") shift = 10;
  else if (unit == "M") shift = 20;
  else if (unit == "G") shift = 30;
  else if (unit == "T") shift = 40;
  else if (unit == "P") shift = 50;
  else return false;
  if (shift && v > (UINT64_MAX >> shift)) return false;
  *out = v << shift;
  return true;
}

std::string format_size(uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  double v = double(bytes);
  while (v >= 1024 && u < 5) {
    v /= 1024;
    u++;
  }
  char buf[32];
  if (v == double(uint64_t(v))) snprintf(buf, sizeof buf, "%llu%s", (unsigned long long)v, units[u]);
  else snprintf(buf, sizeof buf, "%.1f%s", v, units[u]);
  return buf;
}

std::string count_of(uint64_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

}  // namespace gpuraid
