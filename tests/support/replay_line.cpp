#include "tests/support/replay_line.h"

#include <limits.h>
#include <unistd.h>

namespace gpuraid::test {

std::string shell_quote(const std::string& s) {
  bool plain = !s.empty();
  for (char c : s)
    if (!isalnum(static_cast<unsigned char>(c)) && std::string("/._-=:,+@%").find(c) == std::string::npos) plain = false;
  if (plain) return s;
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  return q + "'";
}

std::string replay_command(const std::string& fallback, const std::vector<std::string>& args) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  std::string line = shell_quote(n > 0 ? std::string(self, size_t(n)) : fallback);
  for (const std::string& a : args) line += " " + shell_quote(a);
  return line;
}

}  // namespace gpuraid::test
