// Sizes with units, as operators write them: 4096, 64K, 64KiB, 1M, 2G, 1T
// (binary multiples either way).
#pragma once
#include <cstdint>
#include <string>

namespace gpuraid {

// False on anything that is not a whole number with an optional unit, or overflows.
bool parse_size(const std::string& s, uint64_t* out);
// 65536 -> "64KiB", 1536 -> "1.5KiB".
std::string format_size(uint64_t bytes);
// A count and its noun, singular for one: (1, "region") -> "1 region",
// (3, "dirty region") -> "3 dirty regions".
std::string count_of(uint64_t n, const std::string& noun);

}  // namespace gpuraid
