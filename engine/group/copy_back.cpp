// Copy-back (issue 34, dRAID's rebalance): a member rebuilt into the
// distributed spare room moves onto a drive of its own again, and the room
// is free for the next failure. Only the room's last member can leave it
// (the room's order decides where every member's strips are:
// distributed_spare.h); the operator asks with a hot replace of that member.
//
// It is a rebuild onto the new drive of the strips leaving moves (the
// member's own, and those of the one earlier member its failure displaced
// from its drive), from parity, behind a checkpoint, at the rebuild's rate.
// Started live, the room's copies past the checkpoint keep serving reads
// and taking writes: the group keeps all its redundancy for the whole copy.
// On disk the member is "rebuilding" with its room place kept (superblock
// version 5); after a stop the copy-back resumes at the persisted
// checkpoint, the room's copies past it untrusted (read around) until it
// passes them. If the new drive fails, the member is rebuilt into the room
// again in full (its data below the checkpoint was on that drive only).
#include "engine/group/group_impl.h"
#include "engine/group/metadata_io.h"

namespace gpuraid {

bool Group::Impl::start_copy_back(uint32_t member, std::unique_ptr<Drive> d, bool force, std::string* err) {
  const std::string who = "member " + std::to_string(member);
  const DistributedSpare* room = vol->room();
  if (room->rebuilding()) return *err = who + " is still being rebuilt into the distributed spare room", false;
  if (room->order().back() != member)
    return *err = "only the last member into the distributed spare room (member " + std::to_string(room->order().back()) +
                  ") can leave it: copy that one back first",
           false;
  std::unique_lock<std::recursive_mutex> starts;
  if (const int r = hold_rebuild_starts(&starts); r >= 0)
    return *err = "a rebuild of member " + std::to_string(r) + " is running: copy " + who + " back when it ends", false;
  if (!d || d->type() == DriveType::Null) return *err = "the drive to copy back onto must be a real drive", false;
  if (!refuse_shared(*d, err, int(member))) return false;  // its own old drive may come back
  const uint64_t need = sb.member_bytes_needed();
  if (d->size_bytes() < need) return *err = d->path() + " is too small: needs " + std::to_string(need) + " bytes", false;
  std::string what;
  if (!force && drive_holds_data(*d, &what))
    return *err = d->path() + " holds " + what + ": refusing to overwrite it (force to override)", false;
  if (!d->claim(err)) return false;
  // As a replacement drive: its log holds nothing, its bitmap is clear.
  if (!blank_member_metadata(*d, d->path(), err)) return false;
  Drive* raw = d.get();
  const std::string path = d->path();
  Persisted p;
  {
    std::lock_guard<std::mutex> l(mu);
    const Slot old = sb.slots[member];
    // The room keeps its place until the copy-back ends; "rebuilding" with
    // a place is the copy-back (format version 5).
    sb.slots[member] = Slot{new_uuid(), SlotState::Rebuilding, 0, old.room};
    retired.push_back(std::move(drives[member]));
    drives[member] = std::move(d);
    p = persist_locked();
    if (p.failed >> member & 1) {
      *err = "cannot make " + path + " member " + std::to_string(member) + ": " + p.why(member);
      sb.slots[member] = old;
      std::swap(drives[member], retired.back());
      retired.pop_back();
      p.failed &= ~(1ull << member);
      p.add(persist_locked());
      raw = nullptr;
    }
  }
  after_persist(p);
  if (!raw) return false;
  if (!vol->start_copy_back(member, raw, 0, true, err)) {  // checked above: not expected
    persist([&] {
      sb.slots[member] = Slot{sb.slots[member].uuid, SlotState::Failed, need_full_room_cp(), sb.slots[member].room};
      std::swap(drives[member], retired.back());
    });
    return false;
  }
  persisted_rebuild_cp = 0;
  rebuild_slot = int(member);
  partial_rebuild = false;
  copy_back = true;
  bg->arm_rebuild(0);
  emit(GroupEvent::RebuildStarted, int(member),
       "copying " + who + " back from the distributed spare room onto " + path +
           " (it keeps serving from the room until then)");
  return true;
}

uint64_t Group::Impl::need_full_room_cp() const {
  return sb.member_data_bytes * sb.row_stripes();
}

}  // namespace gpuraid
