// Group: create, assemble, and the operator actions. Background work lives
// in background.cpp, the bitmap in write_intent.cpp, periodic persistence in
// housekeeping.cpp.
#include "engine/group/group.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>
#include <thread>

#include "engine/clock.h"
#include "engine/group/group_impl.h"
#include "engine/ppl/ppl_replay.h"
#include "engine/group/metadata_io.h"
#include "engine/levels/level.h"
#include "engine/planner.h"
#include "engine/units.h"

namespace gpuraid {

const char* group_event_name(GroupEvent::Kind k) {
  static const char* names[] = {"member_failed", "spare_taken", "rebuild_started", "rebuild_progress",
                                "rebuild_finished", "resync_started", "resync_finished", "init_started",
                                "init_finished", "scrub_started", "scrub_progress", "scrub_finished",
                                "mismatch_found", "group_failed", "member_missing", "member_returned",
                                "member_resynced", "spare_failed", "replace_started", "replace_finished",
                                "read_corrected", "read_uncorrectable"};
  return names[int(k)];
}

Group::Group() = default;

Group::~Group() {
  if (impl_) {
    impl_->hk_stop = true;
    if (impl_->housekeeper.joinable()) impl_->housekeeper.join();
    impl_->stop_hot_replace();
    // Its kick task may still sit in a reactor's queue when nobody polls
    // that reactor: leaked, not freed under the queue (a use after free).
    if (impl_->bg && !impl_->bg->shutdown()) {
      fprintf(stderr, "gpuraid: group: background work did not stop (reactor %u not polled): left allocated\n",
              impl_->bg->reactor()->id());
      (void)impl_->bg.release();
    }
    if (impl_->ppl && !impl_->ppl->shutdown()) {
      fprintf(stderr, "gpuraid: group: the write-hole log's flushes did not end: left allocated\n");
      (void)impl_->ppl.release();
    }
  }
  volume_.reset();
}

static std::string join_notes(const std::vector<std::string>& notes) {
  std::string s;
  for (const auto& n : notes) s += (s.empty() ? "" : "; ") + n;
  return s;
}

static bool fail(std::string* err, const std::string& m) {
  if (err) *err = m;
  return false;
}

// Bitmap granularity: a power of two of at least one strip, grown until
// the bitmap fits its area.
// A new group's superblocks, all or none: a member that cannot take its
// superblock fails the create, and those written are wiped again, so that
// no drive is left claiming a group that does not exist.
static bool write_first_superblocks(Group::Impl& im, std::string* err) {
  Group::Impl::Persisted p;
  {
    std::lock_guard<std::mutex> l(im.mu);
    p = im.persist_locked();
  }
  if (p.errors.empty()) return true;
  std::string msg = "cannot write the superblock of member " + std::to_string(p.errors.front().first) + " (" +
                    p.first_error() + "): the group was not created";
  for (uint32_t i = 0; i < im.sb.members; i++) {
    std::string e;
    if (!erase_superblock(*im.drives[i], &e))
      msg += "; wiping " + im.drives[i]->path() + " failed too (" + e +
             "): it may name a group that does not exist (create with force to reuse it)";
  }
  return fail(err, msg);
}

// One file or device is one drive: two drive objects over the same storage
// in one group would make it hold one strip where the layout says two.
// And a group's drive belongs to it alone: each is claimed (Drive::claim),
// so that another process (a second gpuraidd) cannot assemble it too.
static bool refuse_shared(const std::vector<const Drive*>& drives, std::string* err) {
  const std::string why = shared_storage(drives);
  if (!why.empty()) return fail(err, why + ": one drive cannot be in a group twice");
  for (const Drive* d : drives)
    if (!d->claim(err)) return false;
  return true;
}

static std::vector<const Drive*> raw(const std::vector<std::unique_ptr<Drive>>& drives) {
  std::vector<const Drive*> v;
  for (auto& d : drives) v.push_back(d.get());
  return v;
}

// The drive is appended last, so it is named first.
bool Group::Impl::refuse_shared(const Drive& d, std::string* err, int replacing) const {
  std::vector<const Drive*> all;
  {
    std::lock_guard<std::mutex> l(mu);
    for (uint32_t s = 0; s < kMaxSlots; s++)
      if (present(s) && int(s) != replacing) all.push_back(drives[s].get());
    // The replaced member's own storage coming back under a new drive
    // object: the claim moves to it (one process may claim it once).
    if (replacing >= 0 && present(uint32_t(replacing)) && d.identity().known() &&
        d.identity().chain[0] == drives[replacing]->identity().chain[0])
      d.adopt_claim(*drives[replacing]);
  }
  all.push_back(&d);
  return gpuraid::refuse_shared(all, err);
}

std::unique_ptr<Group> Group::create(Engine& engine, std::vector<std::unique_ptr<Drive>> members,
                                     const GroupConfig& cfg, std::string* err) {
  if (members.empty()) return fail(err, "no members given"), nullptr;
  if (cfg.name.size() > 63) return fail(err, "group name longer than 63 bytes"), nullptr;
  if (!refuse_shared(raw(members), err)) return nullptr;
  for (auto& d : members) {
    if (d->type() == DriveType::Null)
      return fail(err, d->path() + " is a null drive: it cannot hold a group's metadata"), nullptr;
    std::string what;
    if (!cfg.force && drive_holds_data(*d, &what))
      return fail(err, d->path() + " holds " + what + ": refusing to overwrite it (force to override)"), nullptr;
  }
  std::vector<Drive*> ptrs;
  for (auto& d : members) ptrs.push_back(d.get());
  Geometry g;
  std::string note;
  if (!Volume::fit_geometry(cfg.level, cfg.parity, cfg.strip_bytes, ptrs, kMetadataBytes, &g, &note, err, cfg.subgroups,
                            cfg.declustered))
    return nullptr;
  // Write-hole guard: its log slots after the member data (parity levels).
  PplLayout ppl;
  // RAID 50/60 too: a stripe's entries sit on its own sub-group's parity
  // members and name only its sub-group's members (role_member).
  if (cfg.write_hole_guard && g.has_parity()) {
    ppl = PplLayout::for_new_group(g.strip_bytes, g.member_data_bytes, 0);
    const uint64_t data = g.member_data_bytes > ppl.bytes() ? g.member_data_bytes - ppl.bytes() : 0;
    if (!Geometry::make(g.level, g.members, g.level == Level::EC ? g.parity : 0, g.strip_bytes,
                        data / g.strip_bytes * g.strip_bytes, &g, err, g.subgroups, g.declustered))
      return fail(err, "members too small for the write-hole guard's log (" + std::to_string(ppl.bytes()) +
                           " bytes each): " + (err ? *err : std::string()) + " (create with the guard off to do without)"), nullptr;
    ppl.offset = kMetadataBytes + g.member_data_bytes;
  }
  uint64_t region = 0;  // set by pick_region (GCC -O1 cannot tell)
  if (!WriteIntent::pick_region(cfg.bitmap_region_bytes, g.strip_bytes, g.stripes() * g.strip_bytes, &region, err))
    return nullptr;

  std::unique_ptr<Group> grp(new Group());
  grp->impl_ = std::make_unique<Impl>(engine);
  Impl& im = *grp->impl_;
  im.bitmap_idle_ns = uint64_t(cfg.bitmap_idle_ms) * 1000000;
  Superblock& sb = im.sb;
  sb.group_uuid = new_uuid();
  sb.level = g.level;
  sb.subgroups = g.subgroups;
  sb.declustered = g.declustered;
  sb.members = g.members;
  sb.parity = g.parity;
  sb.strip_bytes = g.strip_bytes;
  sb.member_data_bytes = g.member_data_bytes;
  sb.bitmap_region_bytes = region;
  sb.created_unix = uint64_t(time(nullptr));
  sb.name = cfg.name;
  sb.version = ppl.enabled() ? 2 : 1;
  if (ppl.enabled()) {
    sb.ppl_offset = ppl.offset;
    sb.ppl_slot_bytes = ppl.slot_bytes;
    sb.ppl_slots = ppl.slots;
    sb.ppl_format = kPplFormatTailed;  // batched, with ring tails (ppl_log.h)
    sb.ppl_seq_floor = 0;   // a new group: every entry with its uuid is this run's
  }
  const bool zeroed = cfg.assume_zeroed || (!g.has_parity() && !g.is_mirror());
  // Running from the first superblock on (not clean: see wire()).
  sb.flags = zeroed ? uint32_t(kFlagInitialized) : 0u;
  if (ppl.enabled()) sb.flags |= kFlagWriteHoleGuard;
  for (uint32_t i = 0; i < g.members; i++) sb.slots[i] = Slot{new_uuid(), SlotState::Active, 0};
  im.drives.resize(kMaxSlots);
  for (uint32_t i = 0; i < g.members; i++) im.drives[i] = std::move(members[i]);
  // Zero every member's bitmap (all of it: RAID 50/60's covers every
  // sub-group), then the superblocks (which make it a member).
  std::vector<uint8_t> zeros(std::max<uint64_t>(1, (sb.bitmap_regions() + 7) / 8), 0);
  for (uint32_t i = 0; i < g.members; i++)
    for (uint64_t b = 0; b * 4096 < zeros.size() || b == 0; b++)
      if (!write_bitmap_block(*im.drives[i], zeros.data(), zeros.size(), b, err)) return nullptr;
  std::vector<Drive*> vm;
  for (uint32_t i = 0; i < g.members; i++) vm.push_back(im.drives[i].get());
  grp->volume_ = Volume::create(engine, g, vm, kMetadataBytes, err);
  if (!grp->volume_) return nullptr;
  if (!write_first_superblocks(im, err)) return nullptr;
  grp->uuid_ = uuid_str(sb.group_uuid);
  grp->name_ = cfg.name;
  im.wire(*grp, /*write_superblocks=*/false);  // the superblocks just written say all it would
  return grp;
}

// The stripes of dirty regions and, in them, the data strips of unusable
// members: reconstructed from parity that may be stale.
static StaleParity stale_parity(const Geometry& g, uint64_t region_bytes, const std::vector<uint8_t>& dirty,
                                uint64_t unusable) {
  StaleParity sp;
  sp.members = unusable;
  const uint64_t spr = region_bytes / g.strip_bytes;
  const uint64_t data_roles = (1ull << g.data_strips()) - 1;
  for (uint64_t r = 0; r < dirty.size() * 8; r++) {
    if (!(dirty[r / 8] >> (r % 8) & 1)) continue;
    sp.regions++;
    for (uint64_t st = r * spr; st < std::min((r + 1) * spr, g.stripes()); st++) {
      sp.stripes++;
      sp.bytes += uint64_t(__builtin_popcountll(failed_roles(g, st, unusable) & data_roles)) * g.strip_bytes;
    }
  }
  return sp;
}

std::string StaleParity::describe() const {
  std::string who;
  for (uint64_t m = members; m; m &= m - 1) who += (who.empty() ? "" : ", ") + std::to_string(__builtin_ctzll(m));
  return "parity of " + count_of(regions, "dirty region") + " (" + count_of(stripes, "stripe") +
         ") may be stale and cannot be recomputed; there, " + std::to_string(bytes) +
         " bytes of data held by member" + (__builtin_popcountll(members) > 1 ? "s " : " ") + who +
         " are reconstructed from that parity and may read wrong";
}

const StaleParity& Group::forced_stale() const { return impl_->forced; }

std::unique_ptr<Group> Group::assemble(Engine& engine, std::vector<std::unique_ptr<Drive>> drives,
                                       std::string* note, std::string* err, bool force,
                                       std::vector<std::unique_ptr<Drive>>* unlisted) {
  if (drives.empty()) return fail(err, "no drives given"), nullptr;
  if (!refuse_shared(raw(drives), err)) return nullptr;
  std::vector<SuperblockRead> reads;
  for (auto& d : drives) {
    reads.push_back(read_superblock(*d));
    if (!reads.back().ok) return fail(err, d->path() + ": " + reads.back().why()), nullptr;
  }
  // One group, the newest generation's member table.
  size_t best = 0;
  for (size_t i = 0; i < reads.size(); i++) {
    if (reads[i].sb.group_uuid != reads[0].sb.group_uuid)
      return fail(err, drives[i]->path() + " belongs to group " + uuid_str(reads[i].sb.group_uuid) + ", " +
                           drives[0]->path() + " to group " + uuid_str(reads[0].sb.group_uuid) +
                           ": members of two different groups"), nullptr;
    if (reads[i].sb.generation > reads[best].sb.generation) best = i;
  }
  const Superblock top = reads[best].sb;
  std::map<Uuid, size_t> by_uuid;
  for (size_t i = 0; i < reads.size(); i++)
    if (!by_uuid.emplace(reads[i].sb.member_uuid, i).second)
      return fail(err, drives[i]->path() + " has the same member id as another drive (a copy?)"), nullptr;

  std::unique_ptr<Group> grp(new Group());
  grp->impl_ = std::make_unique<Impl>(engine);
  Impl& im = *grp->impl_;
  im.sb = top;
  im.drives.resize(kMaxSlots);
  std::vector<std::string> notes;  // for the operator, joined by "; "
  uint64_t failed = 0;
  // Members failed while the group ran, not taken by a spare or the room
  // before it stopped (a second failure waits for the first's rebuild).
  uint64_t failed_at_stop = 0;
  int rebuilding = -1;
  for (uint32_t s = 0; s < kMaxSlots; s++) {
    Slot& sl = im.sb.slots[s];
    if (sl.state == SlotState::Empty) continue;
    if (s < top.members && sl.state == SlotState::Failed && !sl.room) failed_at_stop |= 1ull << s;
    auto it = by_uuid.find(sl.uuid);
    const bool here = it != by_uuid.end();
    // A drive that missed more than the last update (a crash can interrupt
    // one) was out of the group for a while: never trusted, rebuilt.
    const bool current = here && reads[it->second].sb.generation + 1 >= top.generation;
    if (here) im.drives[s] = std::move(drives[it->second]);
    if (s >= top.members) {
      if (sl.state == SlotState::Spare && !here) sl.state = SlotState::Empty;
      continue;
    }
    if (sl.state == SlotState::Active && !current) {
      notes.push_back("member " + std::to_string(s) + (here ? " is stale (generation " + std::to_string(reads[it->second].sb.generation) + " < " + std::to_string(top.generation) + ")" : " is missing"));
      sl.state = SlotState::Failed;
    }
    if (sl.state == SlotState::Rebuilding && !here && sl.room) {
      // A copy-back whose drive is gone: what it moved below its checkpoint
      // went there only, so the room takes the member again in full.
      notes.push_back("member " + std::to_string(s) + " was being copied back out of the distributed spare room onto a " +
                      "drive that is missing: it is rebuilt into the room again");
      sl.rebuild_checkpoint = 0;
    }
    if (sl.state == SlotState::Rebuilding && !here) sl.state = SlotState::Failed;
    // Which regions a member missed while its path was lost is known to the
    // running daemon only (the bitmap does not tell missed from in flight):
    // after a restart it is rebuilt in full.
    if (sl.state == SlotState::Missing) {
      notes.push_back("member " + std::to_string(s) + " was missing (path lost) at the last stop: it is rebuilt in full");
      sl.state = SlotState::Failed;
    }
    if (sl.state == SlotState::Failed) failed |= 1ull << s;
    if (sl.state == SlotState::Rebuilding) rebuilding = int(s);
  }
  for (size_t i = 0; i < drives.size(); i++) {
    if (!drives[i]) continue;
    if (!unlisted) return fail(err, drives[i]->path() + " was a member of this group but is no longer listed in it"), nullptr;
    notes.push_back(drives[i]->path() + " was replaced: no longer a member");
    unlisted->push_back(std::move(drives[i]));
  }
  // The distributed spare room (declustered groups): its members are failed
  // slots whose data the room holds, all of it (`room_done`, in order) or
  // up to a checkpoint (the last one, whose rebuild resumes). Neither counts
  // as failed from here on; the one being rebuilt counts as a rebuilding member.
  std::vector<std::pair<uint8_t, uint32_t>> room;  // (place + 1, slot)
  for (uint32_t s = 0; s < top.members; s++)
    if (im.sb.slots[s].room) room.push_back({im.sb.slots[s].room, s});
  std::sort(room.begin(), room.end());
  std::vector<uint32_t> room_done;
  int room_newcomer = -1;
  int room_leaving = -1;  // being copied back onto its drive (a rebuilding member, copy_back.cpp)
  for (size_t i = 0; i < room.size(); i++) {
    const uint32_t s = room[i].second;
    if (room[i].first != i + 1) return fail(err, "the distributed spare room's order is broken at member " + std::to_string(s)), nullptr;
    if (im.sb.slots[s].state == SlotState::Rebuilding) {
      if (i + 1 != room.size())
        return fail(err, "member " + std::to_string(s) + " is being copied back out of the distributed spare room, and not last"), nullptr;
      room_leaving = int(s);
    } else if (im.sb.slots[s].rebuild_checkpoint >= top.member_data_bytes * top.row_stripes()) room_done.push_back(s);
    else if (i + 1 == room.size() && rebuilding < 0) room_newcomer = int(s);
    else return fail(err, "member " + std::to_string(s) + " is only partly in the distributed spare room, and not last"), nullptr;
    failed &= ~(1ull << s);
  }
  if (room_newcomer >= 0) rebuilding = room_newcomer;  // as a rebuilding member, for what survives
  Geometry g;
  if (!Geometry::make(top.level, top.members, level_description(top.level).chosen_parity ? top.parity : 0, top.strip_bytes,
                      top.member_data_bytes, &g, err, top.subgroups, top.declustered))
    return nullptr;
  // Forced, a failed group comes back (mdadm --assemble --force): failed
  // members whose drives are here return, the most recently updated first
  // (their own superblock's generation), until the level survives. What
  // they missed while out reads stale from them: the notes name each one.
  std::vector<std::pair<uint64_t, uint32_t>> back;  // (own generation, slot), newest first
  if (!g.survives(failed)) {
    for (uint32_t s = 0; s < g.members; s++)
      if ((failed >> s & 1) && im.present(s)) back.push_back({reads[by_uuid.at(im.sb.slots[s].uuid)].sb.generation, s});
    std::sort(back.rbegin(), back.rend());
  }
  bool forced_in = false;
  if (force && rebuilding < 0) {
    for (const auto& [gen, s] : back) {
      if (g.survives(failed)) break;
      failed &= ~(1ull << s);
      im.sb.slots[s].state = SlotState::Active;
      im.sb.slots[s].rebuild_checkpoint = 0;
      forced_in = true;
      notes.push_back("forced in member " + std::to_string(s) + ", failed (its superblock at generation " +
                      std::to_string(gen) + ", the group's " + std::to_string(top.generation) +
                      "): what was written while it was out reads stale from it");
    }
  }
  const uint64_t unusable = failed | (rebuilding >= 0 ? 1ull << rebuilding : 0);
  if (!g.survives(unusable)) {
    return fail(err, "too few members to start: " + std::to_string(g.members - __builtin_popcountll(unusable)) +
                         " of " + std::to_string(g.members) + " usable" +
                         (notes.empty() ? "" : " (" + join_notes(notes) + ")") + "; " + level_name(g.level) +
                         " needs at least " + std::to_string(g.members - g.guaranteed_redundancy()) +
                         (!back.empty() && !force ? "; start with force to bring back the failed members whose drives are "
                                                "here (what they missed while out reads stale from them)"
                                              : "")),
           nullptr;
  }
  // An unclean stop leaves dirty regions: their parity is recomputed. A
  // degraded array cannot do that (the write hole): refuse unless forced.
  std::vector<uint8_t> dirty;
  bool guard_replayed = false;  // dirty regions made consistent by the write-hole log
  const bool unclean = !(top.flags & kFlagClean);
  // A planned stop during a resync: no write was in flight, nothing torn.
  const bool planned = top.flags & kFlagResyncPending;
  im.dirty_untrusted = (top.flags & kFlagDirtyUntrusted) != 0;
  if (unclean) {
    const uint64_t bytes = (top.bitmap_regions() + 7) / 8;
    for (uint32_t s = 0; s < g.members; s++) {
      if (!im.present(s) || (failed >> s & 1)) continue;
      std::vector<uint8_t> bits;
      if (!read_bitmap(*im.drives[s], bytes, &bits, err)) return nullptr;
      if (dirty.empty()) dirty.assign(bytes, 0);
      for (size_t i = 0; i < bytes; i++) dirty[i] |= bits[i];
    }
    uint64_t n = 0;
    for (uint8_t b : dirty) n += __builtin_popcount(b);
    const bool guard = g.has_parity() && (top.flags & kFlagWriteHoleGuard);
    bool handled = false;  // else as a group without the guard
    std::string log_lost;  // why the guard's log could not be read (a medium error)
    if (n && planned && (guard || !unusable || !g.has_parity())) {
      handled = true;
      // The start before that stop replayed the log over these regions:
      // with a member unusable now, they are as consistent as after that replay.
      guard_replayed = unusable && guard;
      notes.push_back("stopped during a resync: " + count_of(n, "region") +
                      (guard_replayed ? " made consistent by the write-hole log before it, no resync (degraded)"
                                      : " still to resync"));
    } else if (n && guard) {
      // The write-hole guard: parity of the stripes torn by the stop is
      // rebuilt from their logged partial parity, members missing or not.
      // With every member present too: the dirty regions' resync that
      // follows takes a while, and a member failing before it reaches a torn
      // stripe would otherwise rebuild from the torn parity.
      std::vector<Drive*> usable(g.members, nullptr);
      for (uint32_t s = 0; s < g.members; s++)
        if (im.present(s) && !(unusable >> s & 1)) usable[s] = im.drives[s].get();
      const uint64_t spr = top.bitmap_region_bytes / g.strip_bytes;
      // Declustered, with members in the distributed spare room: their
      // strips, and their parity rows' log entries, are where the volume
      // will route them (the drives holding their spare strips).
      std::optional<DistributedSpare> room_now;
      PplRoomRoute room_route;
      if (!room.empty()) {
        std::vector<uint32_t> order = room_done;
        const int last = room_newcomer >= 0 ? room_newcomer : room_leaving;
        if (last >= 0) order.push_back(uint32_t(last));
        room_now.emplace(g.map());
        if (!room_now->restore(order, room_newcomer >= 0, err)) return nullptr;
        if (room_leaving >= 0 && !room_now->leave(false, err)) return nullptr;
        const uint64_t cp = last >= 0 ? im.sb.slots[last].rebuild_checkpoint / g.strip_bytes : g.stripes();
        // As the volume will route them (Volume::room_drive): a copy-back's
        // moved strips below its checkpoint are on the leaving member's drive.
        room_route = [&g, &room_now, cp, failed](uint32_t m, uint64_t stripe) {
          if (!room_now->holds(m)) return kPplNotInRoom;
          if (room_now->unavailable(stripe, failed, cp) >> m & 1) return kPplUnavailable;
          const uint64_t row = g.group_row(stripe);
          int d = room_now->drive_of(m, row);
          if (room_now->leaving() && stripe < cp && room_now->moved_by_leave(m, row)) d = room_now->drive_after_leave(m, row);
          return d < 0 ? kPplUnavailable : d;
        };
        if (room_leaving >= 0) usable[size_t(room_leaving)] = im.drives[size_t(room_leaving)].get();
      }
      // A member being rebuilt onto a drive is in sync below its checkpoint:
      // a torn stripe there is made consistent with its strip (and from its
      // log); above it, the rebuild that resumes writes it anyway. (Left
      // out everywhere, a torn stripe below the checkpoint kept a strip of
      // it that its parity no longer matched: the power-loss lane's scrub.)
      const bool onto_drive = rebuilding >= 0 && !im.sb.slots[rebuilding].room && im.present(uint32_t(rebuilding));
      PplRoomRoute route = room_route;
      if (onto_drive) {
        usable[size_t(rebuilding)] = im.drives[size_t(rebuilding)].get();
        const uint64_t rebuilt = im.sb.slots[rebuilding].rebuild_checkpoint / g.strip_bytes;
        route = [&room_route, rebuilding, rebuilt](uint32_t m, uint64_t stripe) {
          if (int(m) == rebuilding) return stripe < rebuilt ? kPplNotInRoom : kPplUnavailable;
          return room_route ? room_route(m, stripe) : kPplNotInRoom;
        };
      }
      PplReplayStats rs;
      handled = ppl_replay(g, Codec(g), top.ppl_log(), top.group_uuid, top.data_offset, usable,
                           [&](uint64_t st) { const uint64_t r = st / spr; return (dirty[r / 8] >> (r % 8) & 1) != 0; },
                           &rs, &log_lost, route);
      // A log a drive cannot read (a medium error): which stripes the stop
      // tore is not known, so the start goes on as without the guard
      // (below); any other error stops it.
      if (!handled && !rs.log_unreadable) return fail(err, log_lost), nullptr;
      // Blocks of torn stripes a member could not read were rebuilt from
      // the parity as a lost member's (they were being written).
      const std::string lost_blocks =
          rs.unreadable_blocks ? "; " + count_of(rs.unreadable_blocks, "unreadable block") + " of them to be read around from the parity" +
                                     (unusable ? " and written back when next read or scrubbed" : " and written back by the resync")
                               : "";
      if (handled && unusable) {  // nothing to resync from: the log made them consistent
        guard_replayed = true;
        notes.push_back("unclean stop while degraded: " + count_of(n, "dirty region") + " made consistent from the write-hole log (" +
                        count_of(rs.rows_written, "parity row") + " rewritten)" + lost_blocks);
      } else if (handled) {  // and still resynced: parity recomputed from the data, whatever the log held
        // Unless an earlier stop's regions that no log made consistent are among them.
        im.dirty_replayed = !(top.flags & kFlagDirtyUntrusted);
        notes.push_back("unclean stop: torn stripes made consistent from the write-hole log (" +
                        count_of(rs.rows_written, "parity row") + " rewritten" + lost_blocks + "); " +
                        count_of(n, "dirty region") + " will be resynced");
      }
    }
    if (n && !handled) {  // no log to make the torn stripes consistent
      if (guard) im.dirty_untrusted = true;
      const std::string no_log = log_lost.empty()
                                     ? "this group has no write-hole guard (created without it, or before format version 2)"
                                     : "its write-hole log cannot be read (" + log_lost + ")";
      if (unusable && g.has_parity()) {
        const StaleParity sp = stale_parity(g, top.bitmap_region_bytes, dirty, unusable);
        if (!force)
          return fail(err, "stopped uncleanly while degraded: " + sp.describe() +
                               "; start with force to accept that (then rebuild onto a spare or a replacement); " + no_log),
                 nullptr;
        im.forced = sp;
        notes.push_back("started with force: " + sp.describe() + (log_lost.empty() ? "" : "; " + no_log));
      } else {
        notes.push_back((log_lost.empty() ? "" : no_log + ", not replayed; ") + "unclean stop: " +
                        count_of(n, "dirty region") + " will be resynced");
      }
    }
  }
  // Missing members get a null stand-in (never used: they are failed).
  std::vector<Drive*> vm;
  for (uint32_t s = 0; s < g.members; s++) {
    if (!im.present(s)) {
      DriveSpec ns{DriveType::Null, "missing-member-" + std::to_string(s), top.member_bytes_needed(), false};
      im.drives[s] = Drive::open(ns, err);
    }
    vm.push_back(im.drives[s].get());
  }
  grp->volume_ = Volume::create(engine, g, vm, top.data_offset, err);
  if (!grp->volume_) return nullptr;
  for (uint32_t s = 0; s < g.members; s++)
    if (failed >> s & 1 || int(s) == rebuilding || im.sb.slots[s].room) grp->volume_->fail_member(s, -ENODEV);  // before hooks: not persisted again
  if (room_leaving >= 0) room_done.push_back(uint32_t(room_leaving));  // in the room until its copy-back ends
  if (!room_done.empty() && !grp->volume_->restore_room(room_done, err)) return nullptr;
  if (room_newcomer >= 0) {
    const uint64_t cp = im.sb.slots[room_newcomer].rebuild_checkpoint / g.strip_bytes;
    if (!grp->volume_->start_room_rebuild(uint32_t(room_newcomer), cp, err)) return nullptr;
    im.persisted_rebuild_cp = cp;
    notes.push_back("rebuild of member " + std::to_string(room_newcomer) + " into the distributed spare room resumes at " +
                    std::to_string(cp * 100 / std::max<uint64_t>(1, g.stripes())) + "%");
  } else if (room_leaving >= 0) {
    const uint64_t cp = im.sb.slots[room_leaving].rebuild_checkpoint / g.strip_bytes;
    // After a clean stop the checkpoint is the copy's last (the background
    // work stopped before it was persisted, no write came after): the
    // room's copies past it are as current as that run had them. After a
    // crash they may not be, and from then on they are not (the writes
    // past the checkpoint went to parity only): the flag keeps that across
    // clean stops until the copy ends. (Without it a clean stop after a
    // crash trusted them: crash_test --copy-back read a block's old copy.)
    const bool stale = unclean || (top.flags & kFlagRoomStale);
    if (!grp->volume_->start_copy_back(uint32_t(room_leaving), im.drives[room_leaving].get(), cp, !stale, err))
      return nullptr;
    if (stale) im.sb.flags |= kFlagRoomStale;  // written with the start's superblocks below
    im.persisted_rebuild_cp = cp;
    im.copy_back = true;
    notes.push_back("copy-back of member " + std::to_string(room_leaving) + " out of the distributed spare room resumes at " +
                    std::to_string(cp * 100 / std::max<uint64_t>(1, g.stripes())) + "%" +
                    (stale ? std::string(" (") + (unclean ? "after an unclean stop" : "since an earlier unclean stop") +
                                 " the room's copies past it are read around until it passes them)"
                           : ""));
  } else if (rebuilding >= 0) {
    const uint64_t cp = im.sb.slots[rebuilding].rebuild_checkpoint / g.strip_bytes;
    if (!grp->volume_->start_rebuild(uint32_t(rebuilding), im.drives[rebuilding].get(), cp, err)) return nullptr;
    im.persisted_rebuild_cp = cp;
    notes.push_back("rebuild of member " + std::to_string(rebuilding) + " resumes at " + std::to_string(cp * 100 / std::max<uint64_t>(1, g.stripes())) + "%");
  }
  if (failed) notes.push_back("starting degraded");
  grp->uuid_ = uuid_str(top.group_uuid);
  grp->name_ = top.name;
  // Members forced in may disagree with parity anywhere (below): no log
  // made that consistent, which the superblocks keep until the resync ends.
  if (forced_in && !unusable) im.dirty_untrusted = true;
  // Members that cannot take the new superblock fail here (and that is persisted on the others).
  const Impl::Persisted p = im.wire(*grp, /*write_superblocks=*/true);
  if (grp->volume_->failed())
    return fail(err, "too few members can take their superblock: " + p.first_error()), nullptr;
  for (const auto& [slot, why] : p.errors)
    if (slot < g.members) notes.push_back("member " + std::to_string(slot) + " failed: " + why);
  if (p.failed && !failed) notes.push_back("starting degraded");
  // Members forced in may disagree with parity anywhere: with every member
  // usable, all of it is resynced (degraded, nothing can be).
  if (forced_in && !unusable) {
    dirty.assign((top.bitmap_regions() + 7) / 8, 0xff);
    guard_replayed = false;
    im.dirty_replayed = false;
  }
  if (!dirty.empty() && !guard_replayed) {
    im.wi->set_suspect(dirty);
    if (im.wi->suspect_regions()) {
      im.bg->arm_resync();
      im.emit(GroupEvent::ResyncStarted, -1, count_of(im.wi->suspect_regions(), "dirty region"));
    }
  }
  if (rebuilding >= 0) {
    im.rebuild_slot = rebuilding;
    im.bg->arm_rebuild(grp->volume_->rebuild_checkpoint());
  }
  // Members that failed while it ran take the distributed spare room or a
  // spare drive as at run time (housekeeping, once a rebuild that resumed
  // here ends). Not those merely absent now: they may be on their way.
  const Volume& v = *grp->volume_;
  if (v.failed_mask() & failed_at_stop && (v.room_left() || im.spares_left())) {
    im.auto_replace.fetch_or(v.failed_mask() & failed_at_stop);
    notes.push_back(v.room_left() ? "a failed member will be rebuilt into the distributed spare room"
                                  : "a failed member will be rebuilt onto a spare");
  }
  if (note) *note = join_notes(notes);
  return grp;
}

void Group::set_event_handler(std::function<void(const GroupEvent&)> h) {
  std::lock_guard<std::mutex> l(impl_->ev_mu);
  impl_->on_event = std::move(h);
  // Events from create/assemble, before there was a handler.
  for (const GroupEvent& e : impl_->early_events) impl_->on_event(e);
  impl_->early_events.clear();
}

void Group::start_background(Reactor& r) { impl_->bg->attach(r); }

uint64_t Group::generation() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  return impl_->sb.generation;
}

GroupState Group::state() const {
  const Impl& im = *impl_;
  if (volume_->failed()) return GroupState::Failed;
  // failed_mask() holds failed and missing members, not the one being rebuilt.
  if (volume_->failed_mask()) return GroupState::Degraded;
  if (volume_->rebuilding_member() >= 0 || im.rebuild_finished.load() || im.bg->progress(Work::Rebuild).active)
    return GroupState::Rebuilding;
  if (im.wi->suspect_regions()) return GroupState::Resyncing;
  if (im.init_running()) return GroupState::Initializing;
  return GroupState::Optimal;
}

std::vector<MemberInfo> Group::members() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  std::vector<MemberInfo> out;
  for (uint32_t s = 0; s < kMaxSlots; s++) {
    const Slot& sl = impl_->sb.slots[s];
    if (sl.state == SlotState::Empty || sl.state == SlotState::Spare) continue;
    MemberInfo m;
    m.index = s;
    m.path = impl_->present(s) ? impl_->drives[s]->path() : "";
    m.uuid = uuid_str(sl.uuid);
    m.state = sl.state == SlotState::Active ? MemberState::Active
              : sl.state == SlotState::Rebuilding ? MemberState::Rebuilding
              : sl.state == SlotState::Missing ? MemberState::Missing
              : impl_->present(s) ? MemberState::Failed : MemberState::Missing;
    if (s < volume_->geometry().members && (volume_->room_mask() >> s & 1) && sl.state != SlotState::Rebuilding) {
      // (Being copied back onto its drive: that drive, rebuilding.)
      // In the distributed spare room: served from every other member's spare strips.
      m.path = kRoomPath;
      m.state = volume_->rebuilding_member() == int(s) ? MemberState::Rebuilding : MemberState::Active;
    }
    m.rebuild_checkpoint_bytes = m.state == MemberState::Rebuilding
                                     ? volume_->rebuild_checkpoint() * volume_->geometry().strip_bytes : 0;
    out.push_back(m);
  }
  return out;
}

size_t Group::spare_count() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  size_t n = impl_->spares_starting;  // taken by the housekeeper, its rebuild not started yet
  for (const Slot& s : impl_->sb.slots) n += s.state == SlotState::Spare;
  return n;
}

bool Group::fail_member(uint32_t index, std::string* err, int code) {
  if (index >= volume_->geometry().members) return fail(err, "no member " + std::to_string(index));
  // (One being copied back has: failing it ends the copy-back, copy_back.cpp.)
  if ((volume_->room_mask() >> index & 1) && !(volume_->copying_back() && volume_->rebuilding_member() == int(index)))
    return fail(err, "member " + std::to_string(index) + " lives in the distributed spare room: it has no drive to fail");
  if ((volume_->failed_mask() & ~volume_->missing_mask()) >> index & 1)
    return fail(err, "member " + std::to_string(index) + " is already failed");
  if (!(volume_->missing_mask() >> index & 1) && !volume_->geometry().survives(volume_->unusable_mask() | 1ull << index))
    return fail(err, "failing member " + std::to_string(index) + " would fail the group (no redundancy left)");
  volume_->fail_member(index, code);
  return true;
}

bool Group::replace_member(uint32_t index, std::unique_ptr<Drive> drive, bool force, std::string* err) {
  if (index >= volume_->geometry().members) return fail(err, "no member " + std::to_string(index));
  // A member in the distributed spare room: copied back onto the drive.
  if (volume_->room_mask() >> index & 1) return impl_->start_copy_back(index, std::move(drive), force, err);
  if (!(volume_->failed_mask() >> index & 1))
    return fail(err, "member " + std::to_string(index) + " is not failed: fail it first");
  if (volume_->missing_mask() >> index & 1)
    return fail(err, "member " + std::to_string(index) + " is missing (its path may come back): fail it first to replace it");
  std::unique_lock<std::recursive_mutex> starts;
  if (impl_->hold_rebuild_starts(&starts) >= 0) return fail(err, "a rebuild is already running");
  if (!drive || drive->type() == DriveType::Null) return fail(err, "the replacement must be a real drive");
  // A failed member's own drive may come back into its slot (rebuilt in full,
  // as md's re-add): a write still in flight to it holds its stripe's lock,
  // which the rebuild of that stripe waits for.
  if (!impl_->refuse_shared(*drive, err, int(index))) return false;
  std::string what;
  if (!force && drive_holds_data(*drive, &what))
    return fail(err, drive->path() + " holds " + what + ": refusing to overwrite it (force to override)");
  return impl_->start_replacement(index, std::move(drive), false, err);
}

bool Group::add_spare(std::unique_ptr<Drive> drive, bool force, std::string* err) {
  Impl& im = *impl_;
  if (!drive || drive->type() == DriveType::Null) return fail(err, "a spare must be a real drive");
  if (!volume_->geometry().has_parity() && !volume_->geometry().is_mirror())
    return fail(err, "raid0 has no redundancy: a spare could never take over a member (a failure fails the group)");
  if (!im.refuse_shared(*drive, err)) return false;
  const Geometry& g = volume_->geometry();
  const uint64_t need = im.sb.member_bytes_needed();
  if (drive->size_bytes() < need)
    return fail(err, drive->path() + " is too small to be a spare: needs " + std::to_string(need) + " bytes");
  std::string what;
  if (!force && drive_holds_data(*drive, &what))
    return fail(err, drive->path() + " holds " + what + ": refusing to overwrite it (force to override)");
  Impl::Persisted p;
  uint32_t s = g.members;
  bool taken;
  {
    std::lock_guard<std::mutex> l(im.mu);
    while (s < kMaxSlots && im.sb.slots[s].state != SlotState::Empty) s++;
    if (s == kMaxSlots) return fail(err, "no room for another spare");
    im.sb.slots[s] = Slot{new_uuid(), SlotState::Spare, 0};
    im.drives[s] = std::move(drive);
    p = im.persist_locked();
    taken = im.sb.slots[s].state == SlotState::Spare;  // dropped again if it cannot take its superblock
  }
  im.after_persist(p);
  if (!taken) return fail(err, "cannot make it a spare: " + p.why(s));
  // A failed member waiting for a spare takes it now.
  im.auto_replace.fetch_or(volume_->failed_mask());
  return true;
}

std::unique_ptr<Drive> Group::remove_spare(const std::string& path, std::string* err) {
  Impl& im = *impl_;
  std::unique_ptr<Drive> d;
  Impl::Persisted p;
  {
    std::lock_guard<std::mutex> l(im.mu);
    for (uint32_t s = volume_->geometry().members; s < kMaxSlots && !d; s++)
      if (im.sb.slots[s].state == SlotState::Spare && im.present(s) && im.drives[s]->path() == path) {
        d = std::move(im.drives[s]);
        im.sb.slots[s] = Slot{};
      }
    if (!d) return fail(err, path + " is not a spare of this group (it may have taken over a member)"), nullptr;
    p = im.persist_locked();  // no superblock lists it any more
  }
  im.after_persist(p);
  d->release_claim();  // a free drive again
  std::string e;
  if (!wipe_metadata(*d, &e)) *err = "it left the group, but its metadata could not be wiped: " + e;
  return d;
}

bool Group::rebuild_onto_spare(std::string* err) {
  Impl& im = *impl_;
  Volume& v = *volume_;
  // A spare the housekeeper is taking for the member: its rebuild has started when this holds the starts.
  std::unique_lock<std::recursive_mutex> starts;
  if (const int r = im.hold_rebuild_starts(&starts); r >= 0)
    return fail(err, "a rebuild of member " + std::to_string(r) + " is running");
  const uint64_t failed = v.failed_mask() & ~v.missing_mask();  // missing ones may come back
  if (!failed) return fail(err, "no member is failed: nothing to rebuild");
  const uint32_t m = uint32_t(__builtin_ctzll(failed));
  // Declustered: into the distributed spare room while it has room, as a failure does.
  if (v.room_left()) return im.start_room_rebuild(m, err);
  if (!im.spares_left())
    return fail(err, v.room() ? "no spare drive, and the distributed spare room is full" : "no spare");
  return im.take_spare_for(m, err);
}

bool Group::restart_rebuild(std::string* err) {
  Impl& im = *impl_;
  Volume& v = *volume_;
  std::unique_lock<std::recursive_mutex> starts;
  const int r = im.hold_rebuild_starts(&starts);
  if (r < 0) return fail(err, "no member is rebuilding: nothing to start again");
  if (v.failed()) return fail(err, "the group has failed");
  if (im.bg->progress(Work::Rebuild).active || im.rebuild_finished.load()) return true;  // it runs (or just ended)
  // Its last runs come back cancelled: one coming back after the new start
  // would stop it.
  for (const uint64_t deadline = mono_ns() + 10'000'000'000ull; im.bg->rebuild_in_flight();) {
    if (mono_ns() > deadline) return fail(err, "the stopped rebuild still has stripes in flight: try again");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  // Its stop is told before its new start.
  if (int e = im.rebuild_failed_err.exchange(0)) im.emit(im.rebuild_stopped_event(e));
  const uint64_t from = v.rebuild_checkpoint();
  im.bg->arm_rebuild(from);
  im.emit(GroupEvent::RebuildStarted, r, "rebuilding member " + std::to_string(r) + " again from stripe " + std::to_string(from));
  return true;
}

bool Group::start_scrub(bool repair, std::string* err) {
  const Geometry& g = volume_->geometry();
  if (!g.has_parity() && !g.is_mirror()) return fail(err, "raid0 has no redundancy to check");
  if (impl_->bg->progress(Work::Scrub).active) return fail(err, "a scrub is already running");
  {
    std::lock_guard<std::mutex> l(impl_->scrub_mu);
    impl_->scrub_report = ScrubReport{};
  }
  impl_->bg->arm_scrub(repair);
  impl_->emit(GroupEvent::ScrubStarted, -1, repair ? "repair" : "check");
  return true;
}

void Group::pause_rebuild(bool p) { impl_->bg->set_paused(Work::Rebuild, p); }
void Group::pause_scrub(bool p) { impl_->bg->set_paused(Work::Scrub, p); }
void Group::stop_scrub() { impl_->bg->stop_scrub(); }
void Group::set_rebuild_rate(uint64_t b) {
  impl_->bg->set_rate(Work::Rebuild, b);
  impl_->bg->set_rate(Work::Resync, b);
  impl_->bg->set_rate(Work::Init, b);
}
void Group::set_rebuild_min_rate(uint64_t b) {
  for (Work w : {Work::Rebuild, Work::Resync, Work::Init}) impl_->bg->set_min_rate(w, b);
}
void Group::set_scrub_rate(uint64_t b) { impl_->bg->set_rate(Work::Scrub, b); }

static Progress progress_of(const Group::Impl& im, Work w) {
  const WorkProgress& p = im.bg->progress(w);
  Progress r;
  // A finished rebuild or init runs until the housekeeper has made it so on
  // disk and told it (REBUILD_FINISHED, INIT_FINISHED).
  r.running = p.active || (w == Work::Rebuild && im.rebuild_finished.load()) || (w == Work::Init && im.init_finished.load());
  r.paused = p.paused;
  const uint64_t strip = im.vol->geometry().strip_bytes;
  r.total_bytes = p.total_stripes * strip;
  r.done_bytes = std::min(p.done_stripes.load(), p.total_stripes.load()) * strip;
  r.fraction = r.total_bytes ? double(r.done_bytes) / double(r.total_bytes) : (p.active ? 0 : 1);
  r.rate_bytes_s = im.rates[int(w)].bytes_s();
  r.eta_s = im.rates[int(w)].eta_s(r.total_bytes - r.done_bytes);
  return r;
}

Progress Group::rebuild_progress() const { return progress_of(*impl_, Work::Rebuild); }
Progress Group::resync_progress() const { return progress_of(*impl_, Work::Resync); }
Progress Group::init_progress() const { return progress_of(*impl_, Work::Init); }
Progress Group::scrub_progress() const { return progress_of(*impl_, Work::Scrub); }

ScrubReport Group::last_scrub() const {
  std::lock_guard<std::mutex> l(impl_->scrub_mu);
  ScrubReport r = impl_->scrub_report;
  ScrubSummary s = impl_->bg->last_scrub();
  r.stripes_checked = s.checked;
  r.mismatched_stripes = s.mismatched;
  r.repaired_stripes = s.repaired;
  r.made_consistent_stripes = s.made_consistent;
  return r;
}

Redundancy Group::redundancy(uint32_t* failures_tolerated) const {
  const Impl& im = *impl_;
  const Geometry& g = volume_->geometry();
  const uint64_t unusable = volume_->unusable_mask();
  uint32_t n = 0;
  Redundancy r;
  if (!g.survives(unusable)) r = Redundancy::Lost;
  else if (g.guaranteed_redundancy() == 0) r = Redundancy::None;
  else if (im.wi->suspect_regions() || im.init_running()) r = Redundancy::Pending;
  else {
    n = g.failures_tolerated(unusable);
    r = unusable || im.bg->progress(Work::Rebuild).active ? Redundancy::Reduced : Redundancy::Full;
  }
  if (failures_tolerated) *failures_tolerated = n;
  return r;
}

bool Group::stop(std::string* err) {
  Impl& im = *impl_;
  Volume& v = *volume_;
  // Not clean while background stripes may still be in flight.
  if (!im.bg->shutdown())
    return fail(err, "background work did not stop within 30 s: reactor " + std::to_string(im.bg->reactor()->id()) +
                         " is not polled");
  im.hk_stop = true;
  if (im.housekeeper.joinable()) im.housekeeper.join();
  im.stop_hot_replace();       // a copy not swapped in is dropped: the member stays where it is
  im.housekeeping_tick(true);  // last checkpoints
  // A member that cannot flush, clear its bitmap or take the clean
  // superblock fails; the others stop cleanly without it (the caller is told).
  const uint64_t before = v.failed_mask();
  std::string why;
  if (const uint64_t f = im.flush_members()) {
    why = "cannot flush it";
    v.members_error(f, -EIO);
  }
  // Clean when no region still waits for its resync; otherwise the bitmap
  // keeps those regions and the next start resyncs them without a replay.
  const bool pending = im.wi->suspect_regions() != 0;
  {
    std::string e;
    const uint64_t f = im.wi->clear_all(&e);
    v.members_error(f, -EIO);
    if (f && why.empty()) why = e;
  }
  const Impl::Persisted p = im.persist([&] {
    if (!v.failed()) im.sb.flags |= pending ? kFlagResyncPending : kFlagClean;
    if (!pending) im.sb.flags &= ~uint32_t(kFlagDirtyUntrusted);  // nothing left to resync, the bitmap cleared
  });
  if (why.empty()) why = p.first_error();
  if (v.failed()) return fail(err, "the group failed while stopping: " + why);
  const uint64_t lost = v.failed_mask() & ~before;
  if (!lost && p.dropped.empty()) return true;
  std::string who;
  for (uint64_t m = lost; m; m &= m - 1) who += (who.empty() ? "" : ", ") + std::to_string(__builtin_ctzll(m));
  return fail(err, (lost ? "stopped, but member " + who + " failed: " + why : "stopped, but " + p.dropped.front()));
}

}  // namespace gpuraid
