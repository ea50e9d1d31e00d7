// A deterministic data pattern: every 8-byte word is a function of a seed
// and its byte offset in the VD, so any range can be written and later
// verified on its own (vd write --pattern / vd read --verify-pattern).
#pragma once
#include <cstdint>
#include <string>

namespace gpuraid::cli {

void fill_pattern(uint64_t seed, uint64_t offset, uint8_t* buf, size_t len);
// First byte offset (relative to buf) that differs, or -1.
int64_t check_pattern(uint64_t seed, uint64_t offset, const uint8_t* buf, size_t len);

}  // namespace gpuraid::cli
