// A failed member's drive back into its slot (mdadm --re-add). While a
// member is out, the write-intent bitmap tracks every region written
// (persist_failure turns tracking on, as persist_missing does), so a drive
// that still carries the member's superblock, and left while this group ran,
// needs only those regions rebuilt (resume_member, path_loss.cpp). Anything
// else — a drive that is no longer this member, or one whose absence the
// bitmap did not follow (it failed before assembly, or during a full
// rebuild) — is rebuilt in full, as a replacement would be.
#include "engine/group/group_impl.h"
#include "engine/group/metadata_io.h"
#include "engine/units.h"

namespace gpuraid {

namespace {
// Why the drive's data cannot be trusted outside the tracked regions, or ""
// when it can.
std::string why_full(const SuperblockRead& r, const Superblock& sb, uint32_t index, uint64_t since) {
  if (!r.ok) return "it carries no valid superblock (" + r.why() + ")";
  if (r.sb.group_uuid != sb.group_uuid) return "its superblock is of another group (" + uuid_str(r.sb.group_uuid) + ")";
  if (r.sb.member_uuid != sb.slots[index].uuid) return "its superblock names another member of this group";
  if (!since)
    return "it left before this group was started (or during a full rebuild), so which regions it missed is not known";
  if (r.sb.generation + 1 < since)
    return "its superblock (generation " + std::to_string(r.sb.generation) +
           ") is older than the write-intent bitmap covers (from generation " + std::to_string(since) + ")";
  return "";
}
}  // namespace

bool Group::readd_member(uint32_t index, std::unique_ptr<Drive> drive, bool force, ReaddResult* out, std::string* err) {
  Impl& im = *impl_;
  Volume& v = *volume_;
  const Geometry& g = v.geometry();
  const std::string who = "member " + std::to_string(index);
  *out = ReaddResult{};
  if (index >= g.members) return *err = "no " + who, false;
  if (!g.has_parity() && !g.is_mirror()) return *err = "raid0 has no redundancy to rebuild a member from", false;
  if (!(v.failed_mask() >> index & 1)) return *err = who + " is not failed: nothing to re-add", false;
  std::unique_lock<std::recursive_mutex> starts;
  if (const int r = im.hold_rebuild_starts(&starts); r >= 0)
    return *err = "a rebuild of member " + std::to_string(r) + " is running: re-add " + who + " when it ends", false;
  if (!drive && !im.present(index)) return *err = who + " has no drive here: give the drive to put back", false;
  if (drive && drive->type() == DriveType::Null) return *err = "a re-added member must be a real drive", false;
  Drive& d = drive ? *drive : *v.member(index);
  if (drive && !im.refuse_shared(d, err, int(index))) return false;
  const SuperblockRead r = read_superblock(d);
  std::string why;
  {
    std::lock_guard<std::mutex> l(im.mu);
    why = why_full(r, im.sb, index, im.readd_gen[index]);
  }
  const bool missing = v.missing_mask() >> index & 1;
  if (why.empty()) {
    if (!im.resume_member(index, std::move(drive), missing ? SlotState::Missing : SlotState::Failed, err)) return false;
    const uint64_t spr = im.wi->stripes_per_region();
    out->partial = true;
    out->regions = im.resync_missed_regions;
    out->bytes = std::min(out->regions * spr, g.stripes()) * g.strip_bytes;
    out->how = "its drive still holds everything but the " + count_of(out->regions, "region") +
               " written since it left: only those are rebuilt (" + count_of(out->bytes, "byte") + ")";
    im.emit(GroupEvent::MemberReturned, int(index), who + " re-added: " + out->how);
    return true;
  }
  if (missing) return *err = who + " is missing (its path may come back) and " + why + ": fail it first", false;
  // A full rebuild over whatever the drive holds: refused over foreign data
  // unless forced (its own stale superblock is not foreign).
  const bool own = r.ok && r.sb.group_uuid == im.sb.group_uuid;
  std::string what;
  if (!force && !own && drive_holds_data(d, &what))
    return *err = d.path() + " holds " + what + ": refusing to overwrite it (force to override)", false;
  if (!im.start_replacement(index, std::move(drive), false, err)) return false;
  out->bytes = g.member_data_bytes;
  out->how = why + ": it is rebuilt in full (" + std::to_string(out->bytes) + " bytes)";
  im.emit(GroupEvent::MemberReturned, int(index), who + " re-added: " + out->how);
  return true;
}

bool Group::wipe_failed_member(uint32_t index, std::string* err) {
  Impl& im = *impl_;
  Volume& v = *volume_;
  const std::string who = "member " + std::to_string(index);
  if (index >= v.geometry().members) return *err = "no " + who, false;
  if (!(v.failed_mask() >> index & 1) || (v.missing_mask() >> index & 1))
    return *err = who + " is not failed", false;
  std::lock_guard<std::mutex> l(im.mu);
  if (!im.present(index)) return *err = who + " has no drive here", false;
  im.readd_gen[index] = 0;  // nothing of it is kept: a re-add is in full
  return wipe_metadata(*im.drives[index], err);
}

}  // namespace gpuraid
