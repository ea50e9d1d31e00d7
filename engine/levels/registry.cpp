// The registered levels: adding a level is one unit plus one line here.
#include <cstdio>
#include <cstdlib>

#include "engine/levels/level.h"
#include "engine/levels/units.h"

namespace gpuraid {

namespace {

constexpr uint32_t kCount = 10;

// Indexed by Level's value; built on first use, so it is safe from static
// initialisers too.
const LevelLayout* const* levels() {
  static const LevelLayout* const table[kCount] = {
      &raid0_level(), &raid1_level(), &raid10_level(), &raid5_level(), &raid6_level(), &ec_level(),
      &raid50_level(), &raid60_level(), &draid5_level(), &draid6_level(),
  };
  return table;
}

}  // namespace

bool LevelLayout::check_members(uint32_t, std::string*) const { return true; }
uint32_t LevelLayout::copies(const Geometry&) const { return 1; }
uint32_t LevelLayout::parity_member(const Geometry&, uint64_t, uint32_t) const {
  std::fprintf(stderr, "gpuraid: parity_member() asked of %s, which has no parity\n", description().name);
  std::abort();
}

const LevelLayout& level_layout(Level l) {
  const uint32_t i = uint32_t(l);
  if (i >= kCount || levels()[i]->description().level != l) {
    std::fprintf(stderr, "gpuraid: level value %u is not registered\n", i);
    std::abort();
  }
  return *levels()[i];
}

bool level_known(uint32_t raw) { return raw < kCount; }

const LevelDescription* level_by_api(int api_value) {
  for (uint32_t i = 0; i < kCount; i++)
    if (levels()[i]->description().api_value == api_value) return &levels()[i]->description();
  return nullptr;
}

const LevelDescription* level_by_name(const std::string& s) {
  for (uint32_t i = 0; i < kCount; i++)
    if (s == levels()[i]->description().number || s == levels()[i]->description().name)
      return &levels()[i]->description();
  return nullptr;
}

std::string level_numbers() {
  std::string out;
  for (uint32_t i = 0; i < kCount; i++) {
    if (i) out += i + 1 == kCount ? " or " : ", ";
    out += levels()[i]->description().number;
  }
  return out;
}

}  // namespace gpuraid
