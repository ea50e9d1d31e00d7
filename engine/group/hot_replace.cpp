// Hot replace (mdadm --replace): a working member is copied onto a new
// drive while it keeps serving, so the group keeps its redundancy for the
// whole copy, and only then swapped in.
//
// The copy: the copier thread reads the member's data area from its drive
// and writes it to the new one (rate-limited as rebuilds are), while the
// write-intent bitmap tracks every region written meanwhile (as it does for
// a missing member: WriteIntent::set_tracking). Then the housekeeper swaps:
// the member leaves its old drive (failed on purpose, with no member_failed
// event and no spare taken) and resumes on the new drive under a new member
// UUID through resume_member, the partial rebuild of a re-add: only the
// regions written since the copy began are rebuilt, from the other members.
// The old drive leaves the group with its metadata wiped. Between the swap
// and the end of that short rebuild the member counts as rebuilding.
//
// When the member fails (or a read of it fails) during the copy, the new
// drive takes its place by a full rebuild; when it goes missing, or the new
// drive fails, the replace ends and the member stays where it is. A group
// stop drops a copy not yet swapped in (the new drive keeps no superblock).
#include <cstdlib>
#include <cstring>

#include "engine/clock.h"
#include "engine/group/group_impl.h"
#include "engine/group/metadata_io.h"
#include "engine/thread_name.h"
#include "engine/units.h"

namespace gpuraid {

namespace {
constexpr size_t kCopyChunk = 1 << 20;
}

bool Group::hot_replace(uint32_t index, std::unique_ptr<Drive> drive, bool force, std::string* err) {
  Impl& im = *impl_;
  Volume& v = *volume_;
  const Geometry& g = v.geometry();
  const std::string who = "member " + std::to_string(index);
  if (index >= g.members) return *err = "no " + who, false;
  // A member in the distributed spare room is copied back onto the drive.
  if (v.room_mask() >> index & 1) {
    if (im.hot.member.load() >= 0) return *err = "member " + std::to_string(im.hot.member.load()) + " is being replaced", false;
    return im.start_copy_back(index, std::move(drive), force, err);
  }
  if (!g.has_parity() && !g.is_mirror()) return *err = "raid0 has no redundancy: a member cannot be swapped out", false;
  if (v.unusable_mask() >> index & 1)
    return *err = who + " is not working (failed, missing or rebuilding): replace it with a rebuild instead", false;
  if (im.hot.member.load() >= 0) return *err = "member " + std::to_string(im.hot.member.load()) + " is being replaced", false;
  std::unique_lock<std::recursive_mutex> starts;
  if (const int r = im.hold_rebuild_starts(&starts); r >= 0)
    return *err = "a rebuild of member " + std::to_string(r) + " is running: replace " + who + " when it ends", false;
  if (!drive || drive->type() == DriveType::Null) return *err = "the replacement must be a real drive", false;
  if (!im.refuse_shared(*drive, err)) return false;
  const uint64_t need = im.sb.member_bytes_needed();
  if (drive->size_bytes() < need) return *err = drive->path() + " is too small: needs " + std::to_string(need) + " bytes", false;
  std::string what;
  if (!force && drive_holds_data(*drive, &what))
    return *err = drive->path() + " holds " + what + ": refusing to overwrite it (force to override)", false;
  if (!drive->claim(err)) return false;
  if (im.hot.copier.joinable()) im.hot.copier.join();  // an earlier copy's thread, ended
  // Tracking first: a region written from now on is rebuilt after the swap,
  // whether the copy read it before or after that write.
  im.wi->set_tracking(true);
  im.hot.stop = false;
  im.hot.done = false;
  im.hot.copy_err = 0;
  im.hot.done_bytes = 0;
  im.hot.total_bytes = g.member_data_bytes;
  im.hot.waiting_said = false;
  im.hot.target_path = drive->path();
  {
    std::lock_guard<std::mutex> l(im.mu);
    im.hot.left_path.clear();
  }
  const std::string from = v.member(index)->path();
  im.hot.target = std::move(drive);
  im.hot.member = int(index);
  im.hot.copier = std::thread([&im] { im.hot_replace_copy(); });
  im.emit(GroupEvent::ReplaceStarted, int(index),
          "copying " + who + " from " + from + " onto " + im.hot.target_path +
              " while it serves; it moves there once the copy is done");
  return true;
}

Progress Group::replace_progress() const {
  const Impl::HotReplace& h = impl_->hot;
  Progress p;
  p.running = h.member.load() >= 0;
  p.total_bytes = h.total_bytes.load();
  p.done_bytes = std::min(h.done_bytes.load(), p.total_bytes);
  p.fraction = p.total_bytes ? double(p.done_bytes) / double(p.total_bytes) : 0;
  p.paused = p.running && impl_->bg->progress(Work::Rebuild).paused.load();
  p.rate_bytes_s = h.rate.bytes_s();
  p.eta_s = h.rate.eta_s(p.total_bytes - p.done_bytes);
  return p;
}

int Group::replacing_member() const { return impl_->hot.member.load(); }

std::string Group::hot_replace_left() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  return impl_->hot.left_path;
}

void Group::Impl::hot_replace_copy() {
  set_thread_name("gpuraid-replace");
  const uint32_t m = uint32_t(hot.member.load());
  const uint64_t bit = 1ull << m;
  Drive* src = vol->member(m);
  Drive* dst = hot.target.get();
  const uint64_t base = vol->data_offset(), total = hot.total_bytes.load();
  void* buf = std::aligned_alloc(4096, kCopyChunk);
  const uint64_t t0 = mono_ns();
  int e = 0;
  for (uint64_t off = 0; off < total && !hot.stop.load() && !e;) {
    if (vol->unusable_mask() & bit) break;  // the housekeeper sees why
    if (bg->progress(Work::Rebuild).paused.load()) {  // dg rebuild stop holds copies too
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    const size_t n = size_t(std::min<uint64_t>(kCopyChunk, total - off));
    if ((e = src->sync_read(buf, n, base + off))) break;
    if ((e = dst->sync_write(buf, n, base + off))) {
      e = -EXDEV;  // the new drive's fault, told apart below
      break;
    }
    off += n;
    hot.done_bytes = off;
    // At most the rebuild rate (dg rates --rebuild), as rebuilds are.
    if (const uint64_t rate = bg->progress(Work::Rebuild).rate_bytes_s.load()) {
      const uint64_t due = t0 + uint64_t(double(off) * 1e9 / double(rate));
      while (!hot.stop.load() && mono_ns() < due) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  std::free(buf);
  if (!e && !hot.stop.load() && !(vol->unusable_mask() & bit) && hot.done_bytes.load() >= total && dst->sync_flush())
    e = -EXDEV;
  hot.copy_err = e;
  hot.done = true;
}

void Group::Impl::end_hot_replace(GroupEvent::Kind k, const std::string& msg) {
  const int m = hot.member.load();
  hot.member = -1;
  // The tracking the copy turned on ends as a rebuild's does (rebuild_ended).
  if (vol->missing_mask() == 0 && rebuild_owner() < 0) wi->set_tracking(false);
  emit(k, m, msg);
}

void Group::Impl::stop_hot_replace() {
  hot.stop = true;
  if (hot.copier.joinable()) hot.copier.join();
  if (hot.member.load() < 0) return;
  hot.target.reset();
  end_hot_replace(GroupEvent::ReplaceFinished, "replace of member " + std::to_string(hot.member.load()) +
                                                   " stopped with the group: it stays on its drive; " +
                                                   hot.target_path + " holds no member");
}

void Group::Impl::hot_replace_tick() {
  const int mi = hot.member.load();
  if (mi < 0 || !hot.done.load()) {
    // A member that fails or goes missing during the copy: the copier stops at its next chunk.
    return;
  }
  if (hot.copier.joinable()) hot.copier.join();
  const uint32_t m = uint32_t(mi);
  const uint64_t bit = 1ull << m;
  const std::string who = "member " + std::to_string(m), onto = hot.target_path;
  const int e = hot.copy_err.load();
  if (e == -EXDEV) {
    hot.target.reset();
    return end_hot_replace(GroupEvent::ReplaceFinished,
                           "replace of " + who + " stopped: " + onto + " could not be written or flushed; " + who +
                               " stays on its drive");
  }
  if (vol->missing_mask() & bit) {
    hot.target.reset();
    return end_hot_replace(GroupEvent::ReplaceFinished, "replace of " + who + " stopped: it went missing during the copy");
  }
  if (e || (vol->unusable_mask() & bit)) {
    // The member (or a read of it) failed: the new drive takes its place in full.
    if (e) vol->fail_member(m, e);
    std::string err;
    settle_rebuild(1);
    if (!(vol->failed_mask() & bit) || !start_replacement(m, std::move(hot.target), false, &err)) {
      hot.target.reset();
      return end_hot_replace(GroupEvent::ReplaceFinished, "replace of " + who + " stopped: it failed during the copy (" +
                                                             (e ? strerror(-e) : "failed") + ") and " + onto +
                                                             " cannot take it: " + (err.empty() ? "not failed" : err));
    }
    return end_hot_replace(GroupEvent::ReplaceFinished, who + " failed during the copy (" +
                                                            (e ? strerror(-e) : std::string("failed")) +
                                                            "): it is rebuilt in full onto " + onto + " instead");
  }
  // Copied. The swap takes the member out for a moment: only where the group
  // survives that, and with no rebuild running (it needs the rebuild).
  if (rebuild_owner() >= 0 || !vol->geometry().survives(vol->unusable_mask() | bit)) {
    if (!hot.waiting_said) {
      hot.waiting_said = true;
      emit(GroupEvent::ReplaceStarted, mi,
           who + " is copied onto " + onto + "; it moves there once the group can spare it (a rebuild runs or too " +
               "few members are usable)");
    }
    return;
  }
  Drive* old = vol->member(m);
  const std::string from = old->path();
  hot.swapping = mi;
  vol->fail_member(m, -ECANCELED);
  {
    std::lock_guard<std::mutex> l(mu);
    sb.slots[m].uuid = new_uuid();  // the new drive is a new member identity; the old one's superblock no longer counts
  }
  std::string err;
  const uint64_t regions = wi->missed_regions();
  if (!resume_member(m, std::move(hot.target), SlotState::Failed, &err)) {
    // The new drive cannot take the member: it goes back onto its own drive
    // (its data is current but for the regions written since the copy began).
    std::string e2;
    const bool back = resume_member(m, nullptr, SlotState::Failed, &e2);
    hot.swapping = -1;
    return end_hot_replace(GroupEvent::ReplaceFinished,
                           "replace of " + who + " stopped: " + err +
                               (back ? "; it stays on " + from + " (the regions written meanwhile are resynced)"
                                     : "; it stays failed: " + e2));
  }
  hot.swapping = -1;
  std::string werr;
  const bool wiped = wipe_metadata(*old, &werr);
  {
    std::lock_guard<std::mutex> l(mu);
    hot.left_path = from;
  }
  end_hot_replace(GroupEvent::ReplaceFinished,
                  who + " moved from " + from + " onto " + onto + "; " + from + " left the group (" +
                      (wiped ? "its metadata wiped" : "its metadata could not be wiped: " + werr) + "); the " +
                      count_of(regions, "region") + " written during the copy are rebuilt onto it");
}

}  // namespace gpuraid
