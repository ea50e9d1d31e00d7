#include "engine/geometry.h"

#include <algorithm>
#include <bit>
#include <sstream>

#include "engine/invariant.h"
#include "engine/levels/declustered_map.h"
#include "engine/levels/level.h"

namespace gpuraid {

const char* level_name(Level l) { return level_description(l).name; }

bool parse_level(const std::string& s, Level* out) {
  const LevelDescription* d = level_by_name(s);
  if (!d) return false;
  *out = d->level;
  return true;
}

static bool fail(std::string* err, const std::string& msg) {
  if (err) *err = msg;
  return false;
}

void Geometry::not_built() { GPR_ASSERT(false, "Geometry not built by Geometry::make()"); }

bool Geometry::make(Level level, uint32_t members, uint32_t ec_parity, uint32_t strip_bytes,
                    uint64_t member_bytes, Geometry* out, std::string* err, uint32_t subgroups,
                    DeclusteredShape declustered) {
  const LevelLayout& unit = level_layout(level);
  const LevelDescription& d = unit.description();
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
  if (d.chosen_parity) {
    if (ec_parity < 1 || ec_parity > kMaxParity)
      return fail(err, std::string(d.name) + " parity m must be 1.." + std::to_string(kMaxParity) + ", got " +
                           std::to_string(ec_parity));
    g.parity = ec_parity;
  } else {
    g.parity = d.parity;
  }
  if (!unit.check_members(members, err)) return false;
  if (!d.chosen_parity && ec_parity != 0 && ec_parity != g.parity)
    return fail(err, std::string(d.name) + " has a fixed parity count; --parity applies to ec only");
  if (d.min_group_members) {
    if (subgroups < 2)
      return fail(err, std::string(d.name) + " stripes over sub-groups: give their count (--subgroups, at least 2)");
    if (members % subgroups)
      return fail(err, std::string(d.name) + ": " + std::to_string(members) + " members do not divide into " +
                           std::to_string(subgroups) + " equal sub-groups");
    if (members / subgroups < d.min_group_members)
      return fail(err, std::string(d.name) + " sub-groups need at least " + std::to_string(d.min_group_members) +
                           " members each, got " + std::to_string(members / subgroups) + " (" +
                           std::to_string(members) + " members in " + std::to_string(subgroups) + " sub-groups)");
    g.subgroups = subgroups;
  } else if (subgroups > 1) {
    return fail(err, std::string(d.name) + " has no sub-groups; --subgroups applies to raid50 and raid60 only");
  }
  if (d.declustered) {
    if (declustered.data < 2)
      return fail(err, std::string(d.name) + " needs its stripe's data strips (--data, at least 2)");
    if (declustered.spares < 1)
      return fail(err, std::string(d.name) + " keeps distributed spare room: give its spares (--spares, at least 1)");
    std::string why;
    g.map_ = DeclusteredMap::shared(members, declustered.data, g.parity, declustered.spares, &why);
    if (!g.map_) return fail(err, std::string(d.name) + ": " + why);
    g.declustered = declustered;
    g.row_stripes_ = g.map_->stripes_per_row();
  } else if (declustered.data || declustered.spares) {
    return fail(err, std::string(d.name) + " is not declustered; --data and --spares apply to draid5 and draid6 only");
  }
  if (d.min_group_members) g.row_stripes_ = g.subgroups;
  const uint32_t min_members = std::max(d.min_members, g.parity + 1);
  if (members < min_members)
    return fail(err, std::string(d.name) + " needs at least " + std::to_string(min_members) + " members, got " +
                         std::to_string(members));
  g.member_data_bytes = member_bytes / strip_bytes * strip_bytes;
  if (g.member_data_bytes == 0)
    return fail(err, "members are smaller than one strip (" + std::to_string(member_bytes) +
                         " bytes usable)");
  g.unit_ = &unit;
  g.group_members_ = members / g.subgroups;
  g.data_strips_ = unit.data_strips(g);
  g.copies_ = unit.copies(g);
  g.mirror_ = d.write_path == WritePath::Mirror;
  *out = g;
  return true;
}

// Failures in each of the level's failure domains, and what the worst
// domain still tolerates; negative once one has lost more than it survives.
static int64_t worst_domain_margin(const Geometry& g, uint64_t failed_mask) {
  const FailureDomains r = g.layout().redundancy(g);
  int64_t worst = int64_t(r.tolerated);
  for (uint32_t first = 0; first < g.members; first += r.domain_members) {
    const uint64_t domain = (r.domain_members >= 64 ? ~0ull : (1ull << r.domain_members) - 1) << first;
    worst = std::min(worst, int64_t(r.tolerated) - std::popcount(failed_mask & domain));
  }
  return worst;
}

bool Geometry::survives(uint64_t failed_mask) const {
  return failed_mask == 0 || worst_domain_margin(*this, failed_mask) >= 0;  // asked on every write
}

uint32_t Geometry::guaranteed_redundancy() const { return layout().redundancy(*this).tolerated; }

uint32_t Geometry::failures_tolerated(uint64_t failed_mask) const {
  return uint32_t(std::max<int64_t>(0, worst_domain_margin(*this, failed_mask)));
}

std::string Geometry::describe() const {
  std::ostringstream o;
  o << level_name(level) << " " << data_strips() << "+" << (is_mirror() ? 0 : parity)
    << " members=" << members;
  if (subgroups > 1) o << " subgroups=" << subgroups;
  if (map_) o << " spares/row=" << map_->spares_per_row() << " stripes/row=" << row_stripes_;
  o << " strip=" << strip_bytes / 1024 << "KiB"
    << " capacity=" << capacity_bytes() / (1024 * 1024) << "MiB";
  return o.str();
}

}  // namespace gpuraid
