// How the CLI prints: aligned tables for people, JSON for scripts (--json,
// proto/api_json.h), and short names for the API's enums.
#pragma once
#include <google/protobuf/message.h>

#include <string>
#include <vector>

#include "proto/api_words.h"

namespace gpuraid::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : rows_{std::move(header)} {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print() const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

// --json (proto/api_json.h): numbers as JSON numbers, enum values as the
// words the tables print. compact: one line (JSON Lines, for streams such
// as events).
void print_json(const google::protobuf::Message& m, bool compact = false);
std::string json_quote(const std::string& s);
std::string size_str(uint64_t bytes);
std::string upper(std::string s);
std::string rate_str(double bytes_per_s);
// A path as the daemon must get it: absolute ("" stays "").
std::string absolute_path(const std::string& p);
std::string duration_str(double s);
// "key: value" lines, keys aligned (by terminal columns: names may be UTF-8).
void print_fields(const std::vector<std::pair<std::string, std::string>>& kv);

}  // namespace gpuraid::cli
