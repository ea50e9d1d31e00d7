// How the CLI prints: aligned tables for people, protobuf's JSON mapping
// for scripts (--json), and short names for the API's enums.
#pragma once
#include <google/protobuf/message.h>

#include <string>
#include <vector>

namespace gpuraid::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : rows_{std::move(header)} {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print() const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

// compact: one line (JSON Lines, for streams such as events).
void print_json(const google::protobuf::Message& m, bool compact = false);
// "DRIVE_ROLE_FREE" -> "free" (the enum's name without its type prefix).
std::string enum_short(const std::string& full, const std::string& prefix);
std::string size_str(uint64_t bytes);
std::string upper(std::string s);
std::string rate_str(double bytes_per_s);
std::string duration_str(double s);
// "key: value" lines, keys aligned.
void print_fields(const std::vector<std::pair<std::string, std::string>>& kv);

}  // namespace gpuraid::cli
