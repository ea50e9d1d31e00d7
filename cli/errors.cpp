#include "cli/errors.h"

#include <cstdio>

#include "cli/output.h"

namespace gpuraid::cli {

namespace {
bool g_json = false;
}

void set_json_errors(bool on) { g_json = on; }

int report_error(Exit code, const std::string& kind, const std::string& msg, bool kind_in_text) {
  if (g_json) {
    fprintf(stderr, "{\"error\": %s, \"kind\": %s, \"code\": %d}\n", json_quote(msg).c_str(), json_quote(kind).c_str(),
            int(code));
  } else {
    std::string k = kind;
    for (auto& c : k) c = c == '_' ? ' ' : c;
    fprintf(stderr, "gpuraid: %s%s\n", kind_in_text && !k.empty() ? (k + ": ").c_str() : "", msg.c_str());
  }
  return code;
}

std::string exit_codes_text() {
  std::string s = "Exit codes:\n";
  for (const auto& e : kExitCodes) s += "  " + std::to_string(int(e.code)) + "  " + e.meaning + "\n";
  return s;
}

}  // namespace gpuraid::cli
