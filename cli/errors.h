// How the CLI reports an error: "gpuraid: MESSAGE" on stderr, or, under
// --json, one JSON object on stderr (stdout stays empty, so a pipe never
// reads an error as data):
//   {"error": "no drive group 'x' (see: gpuraid dg list)", "kind": "not_found", "code": 1}
// kind names the failure (usage, not_found, refused, unreachable, ...);
// code is the exit code (exit_codes.h).
#pragma once
#include <string>

#include "cli/exit_codes.h"

namespace gpuraid::cli {

void set_json_errors(bool on);
// Prints the error and returns `code`. An empty kind prints no prefix in
// the text form ("gpuraid: MESSAGE"); otherwise "gpuraid: KIND: MESSAGE".
int report_error(Exit code, const std::string& kind, const std::string& msg, bool kind_in_text = true);
inline int usage_error(const std::string& msg) { return report_error(kUsage, "usage", msg, false); }
// A local file that cannot be read or written.
inline int file_error(const std::string& msg) { return report_error(kUsage, "file", msg, false); }

}  // namespace gpuraid::cli
