// Path loss: a member whose path is gone but may come back (an NVMe-oF
// controller reconnecting) is "missing" rather than failed. The volume
// serves degraded meanwhile; the write-intent bitmap tracks every region
// written (WriteIntent::set_tracking) and keeps it dirty (so it does for a
// failed member: readd.cpp). When the member returns, the ordinary rebuild
// runs over it with hooks.rebuild_skip passing over the stripes of regions
// it did not miss; past the missing timeout the member is failed and the
// usual spare takeover follows.
#include <cstring>

#include "engine/clock.h"
#include "engine/units.h"
#include "engine/group/group_impl.h"
#include "engine/group/metadata_io.h"

namespace gpuraid {

void Group::Impl::wire_path_loss() {
  // Before the member counts as failed or missing: no write that skips it
  // goes unrecorded (a re-add rebuilds only what it missed, see WriteIntent).
  vol->hooks.before_failure = [this](uint32_t m, bool missing) {
    if (!missing) return wi->set_tracking_failed(true);
    wi->set_tracking(true);
    missing_deadline_ns[m] = mono_ns() + missing_timeout_ns.load();
  };
  vol->hooks.persist_missing = [this](uint32_t m) { return persist_slot_state(m, SlotState::Missing); };
  vol->hooks.path_lost = [this](uint32_t m, int err) {
    std::lock_guard<std::mutex> l(policy_mu);
    return path_policy && path_policy(m, err);
  };
  vol->hooks.rebuild_skip = [this](uint64_t stripe) {
    return partial_rebuild.load(std::memory_order_acquire) && !wi->missed_stripe(stripe);
  };
}

void Group::Impl::fail_overdue_missing() {
  const uint64_t now = mono_ns();
  for (uint64_t mm = vol->missing_mask(); mm; mm &= mm - 1) {
    const uint32_t m = uint32_t(__builtin_ctzll(mm));
    if (now >= missing_deadline_ns[m].load()) vol->fail_missing_member(m, -ETIMEDOUT);  // member_failed asks for a spare
  }
}

void Group::Impl::rebuild_ended(int member) {
  if (partial_rebuild.exchange(false)) {
    const VolumeStats& st = vol->stats();
    const uint64_t written = st.rebuild_stripes_written - resync_written0;
    const uint64_t skipped = st.rebuild_stripes_skipped - resync_skipped0;
    const uint64_t strip = vol->geometry().strip_bytes;
    emit(GroupEvent::MemberResynced, member,
         "member " + std::to_string(member) + " resynced: " + std::to_string(written * strip) + " of " +
             count_of((written + skipped) * strip, "byte") + " (" + std::to_string(written) + " of " +
             count_of(written + skipped, "stripe") + ", " + count_of(resync_missed_regions, "missed region") + ")");
  }
  // Nobody else is missing or failed: stop tracking; the missed regions
  // become ordinary dirty regions, cleared once idle.
  if (vol->missing_mask() == 0) wi->set_tracking(false);
  if (vol->failed_mask() == 0) {
    wi->set_tracking_failed(false);
    wi->clear_missed();
  }
}

void Group::set_path_policy(std::function<bool(uint32_t member, int err)> lost) {
  std::lock_guard<std::mutex> l(impl_->policy_mu);
  impl_->path_policy = std::move(lost);
}

void Group::set_missing_timeout_ms(uint64_t ms) { impl_->missing_timeout_ns = ms * 1'000'000ull; }

bool Group::mark_member_missing(uint32_t index, std::string* err) {
  Volume& v = *volume_;
  const std::string who = "member " + std::to_string(index);
  if (index >= v.geometry().members) return *err = "no " + who, false;
  if (v.missing_mask() >> index & 1) return *err = who + " is already missing", false;
  if (v.failed_mask() >> index & 1) return *err = who + " is failed", false;
  if (!impl_->present(index)) return *err = who + " has no drive", false;
  v.mark_missing(index, -ENOTCONN);
  return true;
}

bool Group::reinstate_member(uint32_t index, std::string* err) {
  Impl& im = *impl_;
  Volume& v = *volume_;
  const std::string who = "member " + std::to_string(index);
  if (index >= v.geometry().members) return *err = "no " + who, false;
  if (!(v.missing_mask() >> index & 1)) return *err = who + " is not missing", false;
  std::unique_lock<std::recursive_mutex> starts;
  if (const int r = im.hold_rebuild_starts(&starts); r >= 0)
    return *err = "a rebuild of member " + std::to_string(r) + " is running: " + who + " returns when it ends", false;
  Drive* d = v.member(index);
  const SuperblockRead r = read_superblock(*d);
  {
    std::lock_guard<std::mutex> l(im.mu);
    if (!r.ok || r.sb.group_uuid != im.sb.group_uuid || r.sb.member_uuid != im.sb.slots[index].uuid)
      return *err = d->path() + " no longer carries " + who + "'s superblock" + (r.ok ? "" : " (" + r.why() + ")") +
                    ": fail the member instead", false;
  }
  if (!im.resume_member(index, nullptr, SlotState::Missing, err)) return false;
  im.emit(GroupEvent::MemberReturned, int(index),
          who + " is back: rebuilding the " + count_of(im.resync_missed_regions, "region") + " it missed");
  return true;
}

bool Group::Impl::resume_member(uint32_t index, std::unique_ptr<Drive> fresh, SlotState back, std::string* err) {
  Volume& v = *vol;
  const std::string who = "member " + std::to_string(index);
  Drive* d = fresh ? fresh.get() : v.member(index);
  std::lock_guard<std::recursive_mutex> starts(start_mu);
  if (const int r = rebuild_owner(); r >= 0) return *err = "a rebuild of member " + std::to_string(r) + " is running", false;
  // Its own bitmap is as old as its departure: the current image goes first.
  if (!wi->copy_to(*d, err)) return *err = who + " cannot come back: it cannot take the write-intent bitmap (" + *err + ")", false;
  if (!forget_ppl(*d, err)) return *err = who + " cannot come back: it cannot take the write-hole log (" + *err + ")", false;
  Uuid want;
  Persisted p;
  bool refused = false;
  {
    std::lock_guard<std::mutex> l(mu);
    want = sb.slots[index].uuid;
    sb.slots[index] = Slot{want, SlotState::Rebuilding, 0};
    const bool swapped = fresh != nullptr;
    if (swapped) {
      retired.push_back(std::move(drives[index]));
      drives[index] = std::move(fresh);
    }
    p = persist_locked();
    if (p.failed >> index & 1) {
      // It cannot take its superblock: as it was, and the others say so again.
      *err = who + " cannot come back: " + p.why(index);
      refused = true;
      sb.slots[index] = Slot{want, back, 0};
      if (swapped) {
        std::swap(drives[index], retired.back());
        retired.pop_back();
      }
      p.failed &= ~(1ull << index);
      p.add(persist_locked());
    } else if (swapped) {
      retired.back()->release_claim();  // the old drive object is no longer the group's
    }
  }
  after_persist(p);
  if (refused) return false;
  resync_written0 = v.stats().rebuild_stripes_written;
  resync_skipped0 = v.stats().rebuild_stripes_skipped;
  resync_missed_regions = wi->missed_regions();
  persisted_rebuild_cp = 0;
  rebuild_slot = int(index);
  partial_rebuild = true;  // before the rebuild can issue a stripe
  if (!v.start_rebuild(index, d, 0, err)) {
    partial_rebuild = false;
    persist([&] { sb.slots[index] = Slot{want, back, 0}; });
    return false;
  }
  bg->arm_rebuild(0);
  return true;
}

}  // namespace gpuraid
