// The CLI's exit codes, listed once: the code uses the enum, --help prints
// the table (exit_codes_text), a man page generator can walk kExitCodes.
#pragma once
#include <string>

namespace gpuraid::cli {

enum Exit : int {
  kOk = 0,
  kServerError = 1,   // the daemon refused or failed the request
  kUsage = 2,         // bad command line
  kConnectError = 3,  // the daemon could not be reached
  kMismatch = 4,      // vd read --verify-pattern found different data
};

struct ExitCodeDoc {
  Exit code;
  const char* meaning;
};

inline constexpr ExitCodeDoc kExitCodes[] = {
    {kOk, "done"},
    {kServerError, "the request failed: gpuraidd refused or failed it (its message says why), or the output could not be written"},
    {kUsage, "bad command line: unknown command or option, missing or invalid argument, a file named on it that cannot be opened"},
    {kConnectError, "gpuraidd could not be reached (not running, wrong --socket/--connect, no permission)"},
    {kMismatch, "vd read --verify-pattern found data that differs from the pattern"},
};

// "Exit codes:\n  0  done\n  1  ..." for --help.
std::string exit_codes_text();

}  // namespace gpuraid::cli
