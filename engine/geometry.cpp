#include "engine/geometry.h"

#include <bit>
#include <sstream>

namespace gpuraid {

const char* level_name(Level l) {
  switch (l) {
    case Level::R0: return "raid0";
    case Level::R1: return "raid1";
    case Level::R10: return "raid10";
    case Level::R5: return "raid5";
    case Level::R6: return "raid6";
    case Level::EC: return "ec";
  }
  return "?";
}

bool parse_level(const std::string& s, Level* out) {
  if (s == "0" || s == "raid0") *out = Level::R0;
  else if (s == "1" || s == "raid1") *out = Level::R1;
  else if (s == "10" || s == "raid10") *out = Level::R10;
  else if (s == "5" || s == "raid5") *out = Level::R5;
  else if (s == "6" || s == "raid6") *out = Level::R6;
  else if (s == "ec") *out = Level::EC;
  else return false;
  return true;
}

static bool fail(std::string* err, const std::string& msg) {
  if (err) *err = msg;
  return false;
}

bool Geometry::make(Level level, uint32_t members, uint32_t ec_parity, uint32_t strip_bytes,
                    uint64_t member_bytes, Geometry* out, std::string* err) {
  Geometry g;
  g.level = level;
  g.members = members;
  g.strip_bytes = strip_bytes;
  if (strip_bytes < kMinStrip || strip_bytes > kMaxStrip || !std::has_single_bit(strip_bytes))
    return fail(err, "strip size must be a power of two from 4 KiB to 1 MiB, got " +
                         std::to_string(strip_bytes) + " bytes");
  if (members > kMaxMembers)
    return fail(err, "at most " + std::to_string(kMaxMembers) + " members, got " +
                         std::to_string(members));
  uint32_t min_members = 0;
  switch (level) {
    case Level::R0: min_members = 1; break;
    case Level::R1: min_members = 2; break;
    case Level::R10:
      min_members = 4;
      if (members % 2 != 0)
        return fail(err, "raid10 needs an even number of members, got " + std::to_string(members));
      break;
    case Level::R5: min_members = 3; g.parity = 1; break;
    case Level::R6: min_members = 4; g.parity = 2; break;
    case Level::EC:
      if (ec_parity < 1 || ec_parity > kMaxParity)
        return fail(err, "ec parity m must be 1.." + std::to_string(kMaxParity) + ", got " +
                             std::to_string(ec_parity));
      g.parity = ec_parity;
      min_members = ec_parity + 1;
      break;
  }
  if (level != Level::EC && ec_parity != 0 && ec_parity != g.parity)
    return fail(err, std::string(level_name(level)) + " has a fixed parity count; --parity applies to ec only");
  if (members < min_members)
    return fail(err, std::string(level_name(level)) + " needs at least " +
                         std::to_string(min_members) + " members, got " + std::to_string(members));
  g.member_data_bytes = member_bytes / strip_bytes * strip_bytes;
  if (g.member_data_bytes == 0)
    return fail(err, "members are smaller than one strip (" + std::to_string(member_bytes) +
                         " bytes usable)");
  *out = g;
  return true;
}

uint32_t Geometry::data_strips() const {
  switch (level) {
    case Level::R0: return members;
    case Level::R1: return 1;
    case Level::R10: return members / 2;
    default: return members - parity;
  }
}

uint32_t Geometry::copies() const {
  if (level == Level::R1) return members;
  if (level == Level::R10) return 2;
  return 1;
}

// md's left-symmetric: parity row 0 starts on the last member and moves one
// member left per stripe; data follows the parity rows, wrapping around.
// For m = 1 this is md's raid5 ALGORITHM_LEFT_SYMMETRIC (pd = n-1 - s%n,
// dd = (pd+1+i)%n); for m = 2 md's raid6 one (qd = pd+1, dd = (pd+2+i)%n).
uint32_t Geometry::parity_member(uint64_t stripe, uint32_t j) const {
  uint32_t pd = members - 1 - uint32_t(stripe % members);
  return (pd + j) % members;
}

uint32_t Geometry::data_member(uint64_t stripe, uint32_t di, uint32_t copy) const {
  switch (level) {
    case Level::R0: return di;
    case Level::R1: return copy;
    case Level::R10: return di * 2 + copy;  // md "near=2": copies are adjacent
    default: return (parity_member(stripe, 0) + parity + di) % members;
  }
}

bool Geometry::survives(uint64_t failed_mask) const {
  if (failed_mask == 0) return true;
  switch (level) {
    case Level::R0: return false;
    case Level::R1: return std::popcount(failed_mask) < int(members);
    case Level::R10:
      for (uint32_t p = 0; p < members / 2; p++)
        if (((failed_mask >> (2 * p)) & 3) == 3) return false;
      return true;
    default: return uint32_t(std::popcount(failed_mask)) <= parity;
  }
}

uint32_t Geometry::guaranteed_redundancy() const {
  switch (level) {
    case Level::R0: return 0;
    case Level::R1: return members - 1;
    case Level::R10: return 1;
    default: return parity;
  }
}

uint32_t Geometry::failures_tolerated(uint64_t failed_mask) const {
  if (!survives(failed_mask)) return 0;
  const uint32_t failed = uint32_t(std::popcount(failed_mask));
  switch (level) {
    case Level::R0: return 0;
    case Level::R1: return members - 1 - failed;
    case Level::R10:  // a pair that lost one copy dies with its other
      for (uint32_t p = 0; p < members / 2; p++)
        if ((failed_mask >> (2 * p)) & 3) return 0;
      return 1;
    default: return parity - failed;
  }
}

std::string Geometry::describe() const {
  std::ostringstream o;
  o << level_name(level) << " " << data_strips() << "+" << (is_mirror() ? 0 : parity)
    << " members=" << members << " strip=" << strip_bytes / 1024 << "KiB"
    << " capacity=" << capacity_bytes() / (1024 * 1024) << "MiB";
  return o.str();
}

}  // namespace gpuraid
