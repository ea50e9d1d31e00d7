// The level interface. Each RAID level is one unit (raid0.cpp, raid5.cpp,
// ...) implementing LevelLayout, registered in registry.cpp. The core
// (Geometry, Volume, the ops, the group) asks the level, never switches on it:
//   - geometry: where a data strip and a parity row of a stripe live;
//   - redundancy, as data: which members may fail together and how many;
//   - its description, as data: names, member limits, parity, the code and
//     how the core writes it (and so where it splits requests).
// Pure functions of the geometry; no I/O, no state.
#pragma once
#include <cstdint>
#include <string>

namespace gpuraid {

// Values are stored in superblocks: never renumber. Each has its unit in
// engine/levels/ and its line in engine/levels/registry.cpp.
enum class Level : uint8_t { R0, R1, R10, R5, R6, EC, R50, R60, DR5, DR6 };

struct Geometry;

// The erasure code over a stripe's data strips (engine/codec.h builds it).
enum class CodeKind : uint8_t { None, Xor, PQ, Cauchy };

// How the core writes a request, and so the boundary it splits requests at.
enum class WritePath : uint8_t {
  Direct,  // no redundancy: chunks of whole stripes straight to members, no stripe lock
  Mirror,  // one stripe per op, every copy of each data strip written
  Parity,  // one stripe per op, through the stripe-write planner (engine/planner.h)
};

// Failure domains as data: the members, in slot order, form consecutive
// domains of `domain_members`; the data survives while no domain has lost
// more than `tolerated` of its members.
struct FailureDomains {
  uint32_t domain_members = 0;
  uint32_t tolerated = 0;
};

// What the daemon, the CLI and the metadata need to know about a level.
struct LevelDescription {
  Level level;
  const char* name;                 // "raid5": logs, describe(), metrics
  const char* number;               // "5": what --level takes (the name is taken too)
  int api_value;                    // its RaidLevel value in proto/gpuraid/v1/gpuraid.proto
  uint32_t min_members;             // with chosen_parity, at least parity + 1 as well
  uint32_t parity = 0;              // parity rows per stripe (0 with chosen_parity)
  uint32_t min_group_members = 0;   // > 0: striped over sub-groups of at least this many (raid50/60)
  bool chosen_parity = false;       // the operator gives 1..kMaxParity rows (ec)
  bool spares = true;               // a spare can take over a failed member (false: raid0)
  bool declustered = false;         // draid5/6: D + P strips per stripe over N members (Geometry::declustered)
  CodeKind code = CodeKind::None;
  WritePath write_path;
};

class LevelLayout {
 public:
  virtual ~LevelLayout() = default;
  virtual const LevelDescription& description() const = 0;
  // Member-count rules beyond min_members (raid10: even); says why in *err.
  virtual bool check_members(uint32_t members, std::string* err) const;
  // Data strips per stripe.
  virtual uint32_t data_strips(const Geometry& g) const = 0;
  // Copies of each data strip (mirrors); 1 otherwise.
  virtual uint32_t copies(const Geometry& g) const;
  // Member holding copy `copy` of data strip `di` of `stripe`.
  virtual uint32_t data_member(const Geometry& g, uint64_t stripe, uint32_t di, uint32_t copy) const = 0;
  // Member holding parity row `j` of `stripe`; only levels with parity rows.
  virtual uint32_t parity_member(const Geometry& g, uint64_t stripe, uint32_t j) const;
  virtual FailureDomains redundancy(const Geometry& g) const = 0;
};

// The registered level; aborts on a value no unit registered (a programmer
// error: decoded values are checked with level_known first).
const LevelLayout& level_layout(Level l);
inline const LevelDescription& level_description(Level l) { return level_layout(l).description(); }
// Whether a raw value (as stored in a superblock) names a registered level.
bool level_known(uint32_t raw);
// The level with this RaidLevel API value, or nullptr.
const LevelDescription* level_by_api(int api_value);
// The level named `s` ("5" or "raid5"), or nullptr.
const LevelDescription* level_by_name(const std::string& s);
// "0, 1, 10, 5, 6 or ec": the --level values, for messages.
std::string level_numbers();

}  // namespace gpuraid

// Users of the level interface get the Geometry it works on (geometry.h
// includes this file first: its inline mapping calls the unit).
#include "engine/geometry.h"  // IWYU pragma: export
