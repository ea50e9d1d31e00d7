// The free gaps of a group's data bytes within a window, given what its
// virtual drives use: vd create's free space, and the part of a stopped
// rebuild's run that no virtual drive holds.
#pragma once
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace gpuraid::daemon {

// used: (offset, length) of each VD; the gaps [start, end) within [from, to).
inline std::vector<std::pair<uint64_t, uint64_t>> free_gaps(std::vector<std::pair<uint64_t, uint64_t>> used,
                                                            uint64_t from, uint64_t to) {
  std::sort(used.begin(), used.end());
  std::vector<std::pair<uint64_t, uint64_t>> out;
  uint64_t at = from;
  for (auto& [off, len] : used) {
    if (off >= to) break;
    if (off > at) out.push_back({at, off});
    at = std::max(at, off + len);
  }
  if (to > at) out.push_back({at, to});
  return out;
}

}  // namespace gpuraid::daemon
