// RAID geometry: level, member count, strip size and where every strip lives.
// Pure functions of the geometry; no I/O. Where strips live and what the
// level survives is the level's own unit's answer (engine/levels/): this
// file never switches on the level.
#pragma once
#include <cstdint>
#include <string>

#include "engine/levels/level.h"

namespace gpuraid {

const char* level_name(Level l);
// Parses "0", "1", "10", "5", "6", "ec"; returns false on anything else.
bool parse_level(const std::string& s, Level* out);

constexpr uint32_t kBlockSize = 4096;        // logical block of every VD
constexpr uint32_t kMinStrip = 4096;
constexpr uint32_t kMaxStrip = 1u << 20;
constexpr uint32_t kMaxMembers = 64;         // failure masks are uint64_t
constexpr uint32_t kMaxParity = 4;           // ec m

class DeclusteredMap;
// A declustered group's stripe shape (draid5/6): D data strips per stripe
// (its P parity strips are the level's) and the spare strips every row keeps
// at least. Zero for every other level.
struct DeclusteredShape {
  uint32_t data = 0;
  uint32_t spares = 0;
  bool operator==(const DeclusteredShape& o) const { return data == o.data && spares == o.spares; }
};

struct Geometry {
  Level level = Level::R5;
  uint32_t members = 0;        // n
  uint32_t parity = 0;         // m for ec (R5: 1, R6: 2, others 0; filled by make())
  uint32_t strip_bytes = 0;
  uint64_t member_data_bytes = 0;  // usable bytes per member, multiple of strip
  uint32_t subgroups = 1;      // raid50/60: G sub-groups of members/G; 1 otherwise
  DeclusteredShape declustered;  // draid5/6 only

  // Builds and validates a geometry. member_bytes is the smallest member's
  // usable size; it is rounded down to a whole number of strips. subgroups:
  // G for raid50/60 (required there), 0 or 1 for the others. On error
  // returns false and says why in *err.
  static bool make(Level level, uint32_t members, uint32_t ec_parity, uint32_t strip_bytes,
                   uint64_t member_bytes, Geometry* out, std::string* err, uint32_t subgroups = 0,
                   DeclusteredShape declustered = {});

  // The level's unit and its description.
  const LevelLayout& layout() const {
    built();
    return *unit_;
  }
  const LevelDescription& description() const { return layout().description(); }

  // Data strips per stripe (row): R0 n, R1 1, R10 n/2, R5 n-1, R6 n-2, EC n-m.
  uint32_t data_strips() const {
    built();
    return data_strips_;
  }
  // Copies of each data strip for mirror levels (R1: n, R10: 2); 1 otherwise.
  uint32_t copies() const {
    built();
    return copies_;
  }
  bool is_mirror() const {
    built();
    return mirror_;
  }
  bool has_parity() const { return parity > 0; }
  uint64_t stripes() const { return member_data_bytes / strip_bytes * row_stripes_; }
  // Stripes side by side in one row of strips (one strip per member at one
  // member offset): raid50/60 G, declustered levels the map's k, 1 otherwise.
  uint32_t row_stripes() const { return row_stripes_; }
  // Members per sub-group (raid50/60; the whole group otherwise), and a
  // stripe's row: the member offset of its strips is row x strip.
  uint32_t group_members() const { return group_members_; }
  uint64_t group_row(uint64_t stripe) const {
    // A branch, not x / 1: GCC folds `row_stripes_ == 1 ? x : x / row_stripes_`
    // into the division, which every member I/O's offset then waited for.
    if (__builtin_expect(row_stripes_ == 1, 1)) return stripe;
    return stripe / row_stripes_;
  }
  // The placement map of a declustered level (declustered_map.h).
  const DeclusteredMap& map() const { return *map_; }
  uint64_t stripe_data_bytes() const { return uint64_t(data_strips()) * strip_bytes; }
  uint64_t capacity_bytes() const { return stripes() * stripe_data_bytes(); }

  // Member holding data strip `di` (0..data_strips()-1) of `stripe`;
  // for mirrors, copy `copy` of it.
  uint32_t data_member(uint64_t stripe, uint32_t di, uint32_t copy = 0) const {
    return layout().data_member(*this, stripe, di, copy);
  }
  // Member holding parity row `j` (0 = P, 1 = Q, ...) of `stripe`.
  uint32_t parity_member(uint64_t stripe, uint32_t j) const { return layout().parity_member(*this, stripe, j); }
  // Byte offset of a stripe's strip within every member's data area.
  uint64_t member_offset(uint64_t stripe) const { return group_row(stripe) * strip_bytes; }

  // Whether the group can still serve every block with these members failed.
  bool survives(uint64_t failed_mask) const;
  // Failures any pattern of which is survivable (R10: 1, R1: n-1, ...).
  uint32_t guaranteed_redundancy() const;
  // Further failures survived, whichever members they hit, with these
  // members already failed (0 once !survives(failed_mask)).
  uint32_t failures_tolerated(uint64_t failed_mask) const;
  std::string describe() const;

 private:
  // A release invariant (as GPR_ASSERT, engine/invariant.h, which this
  // header does not include: gRPC defines a macro of that name too): a
  // default-constructed Geometry maps nothing.
  void built() const {
    if (__builtin_expect(unit_ == nullptr, 0)) not_built();
  }
  [[noreturn]] static void not_built() __attribute__((cold));
  // What is constant per geometry, filled by make() (every Geometry in use
  // comes from it): the per-I/O mapping asks the level unit directly and
  // reads the counts here, with no registry lookup or virtual call.
  const LevelLayout* unit_ = nullptr;
  uint32_t data_strips_ = 0;
  uint32_t copies_ = 1;
  uint32_t group_members_ = 0;
  uint32_t row_stripes_ = 1;
  const DeclusteredMap* map_ = nullptr;  // shared, lives as long as the process
  bool mirror_ = false;
};

}  // namespace gpuraid
