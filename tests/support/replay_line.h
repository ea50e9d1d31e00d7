// The command line that reruns a test program on a failing case, printed
// on failure so that it can be pasted into a shell as it is.
#pragma once
#include <string>
#include <vector>

namespace gpuraid::test {

// `s` quoted for a POSIX shell where it needs it ('...' with ' escaped).
std::string shell_quote(const std::string& s);
// This program's own executable (an absolute path, from /proc/self/exe;
// `fallback`, normally argv[0], if that cannot be read) followed by `args`,
// each quoted where it needs it.
std::string replay_command(const std::string& fallback, const std::vector<std::string>& args);

}  // namespace gpuraid::test
