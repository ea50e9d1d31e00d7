// --json output: proto/api_json.h writes it (the same JSON the daemon's
// event hook and event log write).
#include <cstdio>

#include "cli/output.h"
#include "proto/api_json.h"

namespace gpuraid::cli {

void print_json(const google::protobuf::Message& m, bool compact) { printf("%s\n", v1::api_json(m, compact).c_str()); }

std::string json_quote(const std::string& s) { return v1::json_quote(s); }

}  // namespace gpuraid::cli
