// What a declustered group's distributed spare room holds (issue 34): the
// failed members rebuilt into it, in the order they took it, and where each
// one's strip of a row lives now. Pure state and arithmetic over the
// placement map (declustered_map.h), no I/O: the rules the volume's routing,
// its per-stripe failure masks and the rebuild into the spare room follow.
//
// A member in the spare room has its strip of row r on the drive
// DeclusteredMap::spare_for(r, order, j) names (j: its place in the order),
// at the same member offset. That rule skips every drive in the order, so
// when a later failure X joins it, an earlier member whose spare strip of
// some row sat on X moves to another spare strip of that row: X held a
// spare strip there, so X itself has nothing to rebuild in that row. Hence
// a rebuild into the spare room writes at most one member per row: the
// newcomer where it held a stripe strip, or the one member it moved.
// Until that rebuild passes a stripe, the moved strips and the newcomer's
// are unavailable there (read around by the parity); a member in the room
// whose spare strip sits on a failed drive not (yet) in the room is
// unavailable in that row too. Per stripe no more strips are ever lost than
// drives are failed and not covered by the room (each failed drive holds
// one strip a row: a stripe strip, or the spare strip of at most one
// member), so the level's rule, any P uncovered failures, still holds.
//
// Copy-back (dRAID's rebalance): the room's last member X leaves it for a
// drive of its own (leave()). Without X in the order, one strip a row moves
// back, onto X's drive at the same member offset: X's own strip, or the
// strip of the one earlier member that X's failure had displaced from X's
// drive. The copy-back is a rebuild of those strips (rebuild_target) onto
// X's new drive, behind a checkpoint: below it they are on X's drive
// (drive_after_leave), at or past it where the room keeps them. Started
// live, the room's copies past the checkpoint are current and serve (the
// writes still go there): full redundancy for the whole copy. Restored
// after a stop they are not trusted (a crash can lose the checkpoint's
// last moves, whose writes went to X's drive only): unavailable until the
// copy passes them, as a rebuild into the room treats its newcomer.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/levels/declustered_map.h"

namespace gpuraid {

class DistributedSpare {
 public:
  explicit DistributedSpare(const DeclusteredMap& map) : map_(&map) {}

  // The members in the spare room, in the order they took it.
  const std::vector<uint32_t>& order() const { return order_; }
  bool holds(uint32_t member) const { return index_of(member) >= 0; }
  // Whether the last member of the order is still being rebuilt into it.
  bool rebuilding() const { return rebuilding_; }
  // Whether the last member of the order is being copied back onto a drive
  // of its own (it leaves the room when that ends: finish_leave).
  bool leaving() const { return leaving_; }
  // Whether the room's copies past the copy-back's checkpoint serve (started live).
  bool old_current() const { return old_current_; }
  // Room for one more member: every row keeps spares_per_row() strips.
  bool room_left() const { return order_.size() < map_->spares_per_row(); }

  // A failed member starts its rebuild into the room (the last of the
  // order, rebuilding() until finish_rebuild). False with *err when it is
  // in the room already, another rebuild into it runs, or no room is left.
  bool take(uint32_t member, std::string* err);
  void finish_rebuild() { rebuilding_ = false; }
  // Restores a persisted order (assembly): `rebuilding` as saved.
  bool restore(const std::vector<uint32_t>& order, bool rebuilding, std::string* err);
  // Copy-back of the last member: false with *err when the room is empty,
  // or its last member is still being rebuilt into it. `old_current`: the
  // room's copies past the checkpoint are current (a copy-back started
  // live); false: restored after a stop.
  bool leave(bool old_current, std::string* err);
  // The copy-back ended: the last member is no longer in the room.
  void finish_leave();
  // The copy-back's drive failed: the leaving member is rebuilt into the
  // room again in full (rebuilding(), its place kept).
  bool rejoin(std::string* err);
  // Whether leaving moves `member`'s strip of `row` (the leaving member's
  // own, or the one it displaced), and where it is after the move: the
  // leaving member's own drive, or the displaced member's earlier spare
  // strip (on that same drive). -1: not moved.
  bool moved_by_leave(uint32_t member, uint64_t row) const;
  int drive_after_leave(uint32_t member, uint64_t row) const;

  // The drive holding `member`'s strip of `row` now; -1 when the member is
  // not in the room or holds no stripe strip in that row.
  int drive_of(uint32_t member, uint64_t row) const;
  // Members of the room whose strips of this stripe cannot be read:
  // their spare strip is on a drive of `uncovered` (failed, not in the
  // room), or, while a rebuild into the room runs and the stripe is at or
  // past its checkpoint, the newcomer's and the strips it moved. During a
  // copy-back the strips it moves are where the checkpoint puts them
  // (drive_after_leave below it), and past it lost unless old_current.
  uint64_t unavailable(uint64_t stripe, uint64_t uncovered, uint64_t checkpoint) const;
  // While a rebuild into the room (or a copy-back) runs: the member whose
  // strip in this stripe it writes (the newcomer, or one it moved; the
  // leaving member, or the one it displaced), or -1: none.
  int rebuild_target(uint64_t stripe) const;

 private:
  int index_of(uint32_t member) const;
  // Where order_[j]'s strip of `row` was before the newcomer joined.
  int before_newcomer(size_t j, uint64_t row) const;
  const DeclusteredMap* map_;
  std::vector<uint32_t> order_;
  bool rebuilding_ = false;
  bool leaving_ = false;
  bool old_current_ = false;
};

}  // namespace gpuraid
