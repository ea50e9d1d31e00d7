#include "cli/pattern.h"

#include <cstring>

namespace gpuraid::cli {

namespace {
uint64_t mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
}  // namespace

void fill_pattern(uint64_t seed, uint64_t offset, uint8_t* buf, size_t len) {
  for (size_t i = 0; i + 8 <= len; i += 8) {
    uint64_t v = mix(seed * 0x100000001b3ull ^ (offset + i));
    memcpy(buf + i, &v, 8);
  }
}

int64_t check_pattern(uint64_t seed, uint64_t offset, const uint8_t* buf, size_t len) {
  for (size_t i = 0; i + 8 <= len; i += 8) {
    uint64_t v = mix(seed * 0x100000001b3ull ^ (offset + i));
    if (memcmp(buf + i, &v, 8) != 0) return int64_t(i);
  }
  return -1;
}

}  // namespace gpuraid::cli
