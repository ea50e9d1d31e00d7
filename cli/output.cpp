#include "cli/output.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "engine/units.h"

namespace gpuraid::cli {

void Table::print() const {
  std::vector<size_t> w;
  for (const auto& r : rows_)
    for (size_t i = 0; i < r.size(); i++) {
      if (w.size() <= i) w.push_back(0);
      w[i] = std::max(w[i], r[i].size());
    }
  for (const auto& r : rows_) {
    std::string line;
    for (size_t i = 0; i < r.size(); i++) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(w[i] - r[i].size() + 2, ' ');
    }
    printf("%s\n", line.c_str());
  }
}

void print_json(const google::protobuf::Message& m, bool compact) {
  std::string out;
  google::protobuf::util::JsonPrintOptions o;
  o.add_whitespace = !compact;
  o.always_print_primitive_fields = true;
  o.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(m, &out, o);
  printf("%s", out.c_str());
  if (out.empty() || out.back() != '\n') printf("\n");
}

std::string enum_short(const std::string& full, const std::string& prefix) {
  std::string s = full.rfind(prefix, 0) == 0 ? full.substr(prefix.size()) : full;
  for (auto& c : s) c = char(tolower(static_cast<unsigned char>(c)));
  return s.empty() ? "-" : s;
}

std::string upper(std::string s) {
  for (auto& c : s) c = char(toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string size_str(uint64_t b) { return format_size(b); }

std::string rate_str(double bps) { return bps <= 0 ? "-" : format_size(uint64_t(bps)) + "/s"; }

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
  for (auto& [k, v] : kv) w = std::max(w, k.size());
  for (auto& [k, v] : kv) printf("%-*s  %s\n", int(w + 1), (k + ":").c_str(), v.c_str());
}

}  // namespace gpuraid::cli
