#include "proto/api_words.h"

#include <cctype>

namespace gpuraid::v1 {

namespace {
// Every API enum's value 0 is PREFIX_UNSPECIFIED.
std::string prefix_of(const google::protobuf::EnumDescriptor* type) {
  const auto* zero = type->FindValueByNumber(0);
  const std::string n = zero ? zero->name() : "";
  const std::string tail = "UNSPECIFIED";
  return n.size() > tail.size() && n.compare(n.size() - tail.size(), tail.size(), tail) == 0
             ? n.substr(0, n.size() - tail.size())
             : "";
}
}  // namespace

std::string api_word(const google::protobuf::EnumDescriptor* type, int value) {
  const auto* v = type->FindValueByNumber(value);
  if (!v) return std::to_string(value);  // a value newer than this build
  const std::string prefix = prefix_of(type);
  std::string w = v->name().rfind(prefix, 0) == 0 ? v->name().substr(prefix.size()) : v->name();
  for (auto& c : w) c = char(tolower(static_cast<unsigned char>(c)));
  // RAID_LEVEL_6 reads "raid6", as operators say it.
  if (prefix == "RAID_LEVEL_" && !w.empty() && isdigit(static_cast<unsigned char>(w[0]))) w = "raid" + w;
  return w;
}

bool api_value(const google::protobuf::EnumDescriptor* type, const std::string& word, int* out) {
  std::string want = word;
  for (auto& c : want) c = c == '-' ? '_' : char(tolower(static_cast<unsigned char>(c)));
  for (int i = 0; i < type->value_count(); i++)
    if (api_word(type, type->value(i)->number()) == want) return *out = type->value(i)->number(), true;
  return false;
}

}  // namespace gpuraid::v1
