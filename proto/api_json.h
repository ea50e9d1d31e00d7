// The JSON every script reads from gpuraid: the CLI's --json, the event
// hook's stdin and the daemon's event log (issue 33: one JSON, not two).
// Protobuf messages written by reflection, so that every number is a JSON
// number (protobuf's own mapping quotes 64-bit integers) and every enum
// value is the word the tables print (api_words.h). Fields come in
// declaration order; scalars and lists always, a message or a oneof member
// only when set. The reader takes that back, and protobuf's own mapping
// too (quoted integers, ENUM_NAMES: event logs written before 2026-11-27).
#pragma once
#include <google/protobuf/message.h>

#include <string>

namespace gpuraid::v1 {

// compact: one line (JSON Lines, for streams such as events).
std::string api_json(const google::protobuf::Message& m, bool compact = false);
// Fills m (cleared first) from JSON of either form; unknown fields are
// ignored (a newer writer). false with *err on anything else.
bool api_json_parse(const std::string& json, google::protobuf::Message* m, std::string* err);
std::string json_quote(const std::string& s);
std::string json_number(double v);

}  // namespace gpuraid::v1
