// Group internals: persistence, wiring into the volume, spares and
// replacement, and the housekeeping thread (rate kicks, bitmap clearing,
// checkpoint persistence, automatic spare takeover) — the blocking
// metadata I/O lives here, off the reactors.
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "engine/group/group_impl.h"
#include "engine/ppl/ppl_replay.h"
#include "engine/group/metadata_io.h"

#include "engine/clock.h"
#include "engine/thread_name.h"
#include "engine/units.h"

namespace gpuraid {

void Group::Impl::emit(GroupEvent::Kind k, int member, const std::string& msg) { emit(GroupEvent{k, member, msg}); }

void Group::Impl::emit(const GroupEvent& ev) {
  std::lock_guard<std::mutex> l(ev_mu);
  if (on_event) on_event(ev);
  else if (early_events.size() < 64) early_events.push_back(ev);
}

void Group::Impl::Persisted::add(const Persisted& o) {
  failed |= o.failed;
  errors.insert(errors.end(), o.errors.begin(), o.errors.end());
  dropped.insert(dropped.end(), o.dropped.begin(), o.dropped.end());
}

std::string Group::Impl::Persisted::why(uint32_t slot) const {
  for (const auto& [s, e] : errors)
    if (s == slot) return e;
  return "";
}

Group::Impl::Persisted Group::Impl::persist_locked() {
  Persisted p;
  // Again after dropping a spare, so that no superblock lists it; members
  // that failed are left to the volume (after_persist). Ends: each round
  // that goes again removes a spare.
  if (!sb.copying_back()) sb.flags &= ~uint32_t(kFlagRoomStale);  // the copy-back it was about ended
  for (bool again = true; again;) {
    again = false;
    sb.generation++;
    for (uint32_t s = 0; s < kMaxSlots; s++) {
      const SlotState st = sb.slots[s].state;
      if (!present(s) || (st != SlotState::Active && st != SlotState::Rebuilding && st != SlotState::Spare)) continue;
      if (s < sb.members && (p.failed >> s & 1)) continue;
      Superblock copy = sb;
      copy.slot = s;
      copy.member_uuid = sb.slots[s].uuid;
      std::string e;
      if (write_superblock(*drives[s], copy, &e)) continue;
      p.errors.emplace_back(s, e);
      if (s < sb.members) {
        p.failed |= 1ull << s;
        continue;
      }
      p.dropped.push_back("spare " + drives[s]->path() + " dropped from the group: " + e);
      sb.slots[s] = Slot{};
      drives[s]->release_claim();  // no longer the group's
      retired.push_back(std::move(drives[s]));
      again = true;
    }
  }
  return p;
}

void Group::Impl::emit_dropped(const Persisted& p) {
  for (const std::string& m : p.dropped) emit(GroupEvent::SpareFailed, -1, m);
}

void Group::Impl::after_persist(const Persisted& p) {
  emit_dropped(p);
  vol->members_error(p.failed, -EIO);
}

uint64_t Group::Impl::persist_slot_state(uint32_t m, SlotState st) {
  Persisted p;
  {
    std::lock_guard<std::mutex> l(mu);
    // A member leaving an active slot holds every write up to now (its own
    // superblock is of this generation): a re-add needs only the regions the
    // bitmap tracks from here on. One leaving a full rebuild holds part of
    // its data only; one leaving a partial rebuild still lacks just the
    // tracked regions (they stay tracked until nobody is out).
    const SlotState was = sb.slots[m].state;
    if (was == SlotState::Active) readd_gen[m] = sb.generation;
    else if (was == SlotState::Rebuilding && !(partial_rebuild.load() && rebuild_slot.load() == int(m))) readd_gen[m] = 0;
    sb.slots[m].state = st;
    sb.slots[m].rebuild_checkpoint = 0;
    p = persist_locked();
  }
  emit_dropped(p);
  return p.failed;
}

Group::Impl::Persisted Group::Impl::persist(const std::function<void()>& change) {
  Persisted p;
  {
    std::lock_guard<std::mutex> l(mu);
    change();
    p = persist_locked();
  }
  after_persist(p);
  return p;
}

std::vector<BitmapCopy> Group::Impl::writable_members() const {
  std::vector<BitmapCopy> out;
  const uint64_t failed = vol->failed_mask() | vol->room_without_drive();  // the room's members have no drive of their own
  for (uint32_t m = 0; m < vol->geometry().members; m++) {
    Drive* d = vol->member(m);
    if (!(failed >> m & 1) && d->type() != DriveType::Null) out.push_back({m, d});
  }
  return out;
}

uint64_t Group::Impl::flush_members() {
  uint64_t failed = 0;
  for (const BitmapCopy& c : writable_members())
    if (c.drive->sync_flush() != 0) failed |= 1ull << c.member;
  return failed;
}

bool Group::Impl::forget_ppl(Drive& d, std::string* err) {
  return !ppl || ppl_invalidate(d, ppl->layout(), err);
}

bool Group::Impl::blank_member_metadata(Drive& d, const std::string& who, std::string* err) {
  if (!forget_ppl(d, err)) return *err = "cannot write the write-hole log of " + who + ": " + *err, false;
  std::vector<uint8_t> zeros(std::max<uint64_t>(1, wi->bitmap_bytes()), 0);
  for (uint64_t b = 0; b * 4096 < zeros.size(); b++)
    if (!write_bitmap_block(d, zeros.data(), zeros.size(), b, err)) return false;
  return true;
}

Group::Impl::Persisted Group::Impl::wire(Group& g, bool write_superblocks) {
  self = &g;
  vol = g.volume_.get();
  const Geometry& geo = vol->geometry();
  wi = std::make_unique<WriteIntent>(sb.bitmap_regions(), sb.bitmap_region_bytes, geo.strip_bytes,
                                     [this] { return writable_members(); },
                                     WriteIntent::shards_for(sb.bitmap_regions(), engine.reactor_count()));
  bg = std::make_unique<BackgroundWork>(*vol, *wi);
  uint64_t ppl_first_seq = 0;
  if (sb.flags & kFlagWriteHoleGuard) {
    // Write seqs unique across runs (2^40 writes per run): above the
    // generation every superblock says, which this start raises (its persist
    // below); a new group's run is its first (no earlier entries).
    ppl_first_seq = ((sb.generation + (write_superblocks ? 1 : 0)) << 40) + 1;
    ppl = std::make_unique<PplLog>(*vol, sb.ppl_layout(), sb.group_uuid, ppl_first_seq);
    vol->ppl = ppl.get();
  }
  initialized = (sb.flags & kFlagInitialized) != 0;
  WorkCallbacks cb;
  cb.rebuild_done = [this] { rebuild_finished = true; };
  cb.rebuild_failed = [this](int e, uint64_t first, uint32_t stripes) {
    rebuild_failed_first = first;
    rebuild_failed_stripes = stripes;
    rebuild_failed_err = e;
  };
  cb.init_done = [this] { init_finished = true; };
  cb.resync_done = [this] {
    resync_finished = true;
    emit(GroupEvent::ResyncFinished, -1, "dirty regions resynced");
  };
  cb.resync_failed = [this](int e) {
    emit(GroupEvent::ResyncFinished, -1, std::string("resync stopped: ") + strerror(-e) + "; " +
                                             count_of(wi->suspect_regions(), "dirty region") + " left");
  };
  cb.init_failed = [this](int e) {
    emit(GroupEvent::InitFinished, -1, "initialization stopped at stripe " + std::to_string(bg->init_checkpoint()) +
                                           ": " + strerror(-e));
  };
  cb.scrub_mismatch = [this](uint64_t stripe, const Volume::MaintenanceResult& r) {
    {
      std::lock_guard<std::mutex> l(scrub_mu);
      if (scrub_report.mismatch_stripes.size() < 64) {
        scrub_report.mismatch_stripes.push_back(stripe);
        scrub_report.located_members.push_back(r.located_member);
      }
    }
    std::string how;
    if (r.repaired) how = " (repaired)";
    else if (r.made_consistent && r.trusted_member >= 0)
      how = " (made consistent: member " + std::to_string(r.trusted_member) +
            "'s copy kept; without a checksum the right copy cannot be known)";
    else if (r.made_consistent)
      how = " (made consistent: parity rewritten from the data; without a checksum the data cannot be verified)";
    emit(GroupEvent::MismatchFound, r.located_member,
         "stripe " + std::to_string(stripe) + (r.located_member >= 0 ? ": member " + std::to_string(r.located_member) + " holds the corrupt strip" : "") +
             how);
  };
  cb.scrub_done = [this](const ScrubSummary& s) {
    emit(GroupEvent::ScrubFinished, -1,
         std::to_string(s.checked) + " stripes checked, " + std::to_string(s.mismatched) + " mismatched, " +
             std::to_string(s.repaired) + " repaired, " +
             (s.made_consistent ? std::to_string(s.made_consistent) + " made consistent unverified, " : "") +
             std::to_string(s.skipped) + " skipped (degraded)" +
             (s.failed ? ", stopped: " + std::to_string(s.failed) + " failed (" + strerror(-s.err) + ")" : ""));
  };
  bg->set_callbacks(cb);
  vol->hooks.parity_suspect = [this](uint64_t stripe) {
    return parity_may_be_torn(stripe) || (!initialized.load(std::memory_order_relaxed) && stripe >= bg->init_checkpoint());
  };
  vol->hooks.parity_may_be_torn = [this](uint64_t stripe) { return parity_may_be_torn(stripe); };
  wi->set_inline(vol->engine().reactor(0).lockstep());
  vol->hooks.write_begin = [this](uint64_t stripe, uint32_t reactor, IntentWait* w) { return wi->begin(stripe, reactor, w); };
  vol->hooks.write_end = [this](uint64_t stripe, uint32_t reactor) { wi->end(stripe, reactor); };
  vol->hooks.persist_failure = [this](uint32_t m, int) { return persist_slot_state(m, SlotState::Failed); };
  Volume::Events ev;
  ev.member_missing = [this](uint32_t m, int e) {
    emit(GroupEvent::MemberMissing, int(m), std::string("member ") + std::to_string(m) + " is missing (path lost: " +
                                              strerror(-e) + "); serving degraded, its missed writes are tracked");
  };
  ev.member_failed = [this](uint32_t m, int e) {
    if (int(m) == hot.swapping.load()) return;  // a hot replace's swap: not a failure (its own event)
    // -ECANCELED is the operator's fail (Group::fail_member), not an I/O error.
    emit(GroupEvent::MemberFailed, int(m),
         "member " + std::to_string(m) + (e == -ECANCELED ? " was failed by the operator" : std::string(" failed: ") + strerror(-e)));
    auto_replace.fetch_or(1ull << m);
  };
  ev.group_failed = [this] { emit(GroupEvent::GroupFailed, -1, "more members failed than the level survives"); };
  ev.read_corrected = [this](uint32_t m, uint32_t n) {
    emit(GroupEvent::ReadCorrected, int(m),
         "member " + std::to_string(m) + " could not read a block: rebuilt from the other members and written back (" +
             std::to_string(n) + " since its drive took its place; it is failed at " +
             std::to_string(Volume::kMaxCorrectedReads) + ")");
  };
  // With the stripe's bytes (the daemon names the virtual drives' there).
  // On parity levels a write of the block alone may have to rebuild what
  // a failed member held in its stripe, which needs the block: the
  // stripe written whole reads nothing.
  ev.read_uncorrectable = [this](uint32_t m, uint64_t stripe, bool untrusted) {
    const Geometry& g = vol->geometry();
    GroupEvent e{GroupEvent::ReadUncorrectable, int(m), ""};
    e.data_offset = stripe * g.stripe_data_bytes();
    e.data_bytes = g.stripe_data_bytes();
    e.message = "member " + std::to_string(m) + " could not read a block of stripe " + std::to_string(stripe) +
                (untrusted ? " and its parity is not yet resynced" : " and the group has no other copy of it") +
                ": that I/O failed, the member stays; " +
                (g.has_parity() ? "writing the stripe's bytes whole makes it readable (a write of the block alone "
                                  "fails where it must rebuild what a failed member held there)"
                                : "writing the block makes it readable");
    emit(e);
  };
  vol->set_events(ev);
  wire_path_loss();
  if (!initialized) {
    bg->arm_init(sb.init_checkpoint);
    persisted_init_cp = sb.init_checkpoint;
    emit(GroupEvent::InitStarted, -1, "background initialization");
  }
  Persisted p;
  // Running: an unclean stop from now on leaves the flag cleared. Before
  // the housekeeper starts, so that none of its updates says clean.
  // The log is written batched with ring tails (format 4) from now on, an
  // older group's slots or tail-less ring included (replayed already, when
  // they held anything), and its replay after this run ignores what earlier
  // runs left (the floor).
  if (write_superblocks) p = persist([this, ppl_first_seq] {
    sb.flags &= ~uint32_t(kFlagClean | kFlagResyncPending);
    if (dirty_untrusted) sb.flags |= kFlagDirtyUntrusted;
    if (ppl) {
      sb.ppl_format = kPplFormatTailed;
      sb.ppl_seq_floor = ppl_first_seq;
    }
  });
  housekeeper = std::thread([this] {
    set_thread_name("gpuraid-hk");
    housekeeping_loop();
  });
  return p;
}

bool Group::Impl::start_replacement(uint32_t member, std::unique_ptr<Drive> d, bool from_spare, std::string* err) {
  std::lock_guard<std::recursive_mutex> starts(start_mu);
  const Geometry& g = vol->geometry();
  // No new drive: the slot's own one again (a re-add in full), which the
  // volume still holds; it stays in place whatever happens.
  Drive* raw = d ? d.get() : vol->member(member);
  (void)g;
  if (const int r = rebuild_owner(); r >= 0) {
    *err = "a rebuild of member " + std::to_string(r) + " is running";
    return false;
  }
  const uint64_t need = sb.member_bytes_needed();
  if (raw->size_bytes() < need) {
    *err = raw->path() + " is too small: needs " + std::to_string(need) + " bytes";
    return false;
  }
  if (!blank_member_metadata(*raw, "member " + std::to_string(member), err)) return false;
  const std::string path = raw->path();
  const bool swapped = d != nullptr;
  Persisted p;
  {
    std::lock_guard<std::mutex> l(mu);
    const Slot old = sb.slots[member];
    const uint64_t old_gen = readd_gen[member];
    readd_gen[member] = 0;  // a new member: nothing to re-add
    sb.slots[member] = Slot{new_uuid(), SlotState::Rebuilding, 0};
    if (swapped) {
      retired.push_back(std::move(drives[member]));
      drives[member] = std::move(d);
    }
    p = persist_locked();
    if (p.failed >> member & 1) {
      // The new drive cannot hold the member's superblock: the old one
      // goes back, and the others say so again (a crash before that finds
      // a rebuilding member whose drive is gone: failed, as it is).
      *err = "cannot make " + path + " member " + std::to_string(member) + ": " + p.why(member);
      sb.slots[member] = old;
      readd_gen[member] = old_gen;
      if (swapped) {
        std::swap(drives[member], retired.back());
        retired.pop_back();
      }
      p.failed &= ~(1ull << member);  // it is failed already
      p.add(persist_locked());
      raw = nullptr;
    } else if (swapped) {
      retired.back()->release_claim();  // the replaced drive is no longer the group's
    }
  }
  after_persist(p);
  if (!raw) return false;
  persisted_rebuild_cp = 0;
  rebuild_slot = int(member);
  partial_rebuild = false;  // a new drive holds nothing
  if (!vol->start_rebuild(member, raw, 0, err)) return false;
  bg->arm_rebuild(0);
  if (from_spare) emit(GroupEvent::SpareTaken, int(member), raw->path() + " replaces member " + std::to_string(member));
  emit(GroupEvent::RebuildStarted, int(member), "rebuilding member " + std::to_string(member) + " onto " + raw->path());
  return true;
}

bool Group::Impl::start_room_rebuild(uint32_t member, std::string* err) {
  std::lock_guard<std::recursive_mutex> starts(start_mu);
  if (const int r = rebuild_owner(); r >= 0) return *err = "a rebuild of member " + std::to_string(r) + " is running", false;
  const Geometry& g = vol->geometry();
  uint8_t place = 1;
  {
    std::lock_guard<std::mutex> l(mu);
    for (uint32_t s = 0; s < g.members; s++) place = std::max<uint8_t>(place, uint8_t(sb.slots[s].room + 1));
    if (sb.slots[member].room) place = sb.slots[member].room;  // its copy-back failed: back in at its place
  }
  copy_back = false;
  // The superblocks name it the room's next member (nothing rebuilt yet)
  // before any of its data goes there.
  Persisted p = persist([&] {
    sb.slots[member].room = place;
    sb.slots[member].rebuild_checkpoint = 0;
  });
  (void)p;
  if (!vol->start_room_rebuild(member, 0, err)) {
    persist([&] { sb.slots[member].room = 0; });
    return false;
  }
  persisted_rebuild_cp = 0;
  rebuild_slot = int(member);
  partial_rebuild = false;
  bg->arm_rebuild(0);
  emit(GroupEvent::SpareTaken, int(member), "the distributed spare room takes member " + std::to_string(member));
  emit(GroupEvent::RebuildStarted, int(member),
       "rebuilding member " + std::to_string(member) + " into the distributed spare room (every survivor)");
  return true;
}

bool Group::Impl::take_spare_for(uint32_t member, std::string* err) {
  std::lock_guard<std::recursive_mutex> starts(start_mu);
  if (const int r = rebuild_owner(); r >= 0) return *err = "a rebuild of member " + std::to_string(r) + " is running", false;
  std::unique_ptr<Drive> d;
  {
    std::lock_guard<std::mutex> l(mu);
    for (uint32_t s = vol->geometry().members; s < kMaxSlots && !d; s++)
      if (sb.slots[s].state == SlotState::Spare && present(s)) {
        d = std::move(drives[s]);
        sb.slots[s] = Slot{};
      }
    spares_starting += d != nullptr;
  }
  if (!d) {
    *err = "no spare";
    return false;
  }
  const std::string path = d->path();
  const bool started = start_replacement(member, std::move(d), true, err);
  {
    std::lock_guard<std::mutex> l(mu);
    spares_starting--;
  }
  if (started) return true;
  // It cannot take over: it leaves the group (no superblock lists it).
  *err = "spare " + path + " cannot replace member " + std::to_string(member) + ": " + *err;
  persist([] {});
  emit(GroupEvent::SpareFailed, int(member), *err);
  return false;
}

void Group::Impl::settle_rebuild(double timeout_s) const {
  const uint64_t deadline = mono_ns() + uint64_t(timeout_s * 1e9);
  while (vol->rebuilding_member() < 0 && rebuild_finished.load() && mono_ns() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

int Group::Impl::hold_rebuild_starts(std::unique_lock<std::recursive_mutex>* l) {
  settle_rebuild();
  *l = std::unique_lock<std::recursive_mutex>(start_mu);
  return rebuild_owner();
}

size_t Group::Impl::spares_left() const {
  std::lock_guard<std::mutex> l(mu);
  size_t n = 0;
  for (const Slot& s : sb.slots) n += s.state == SlotState::Spare;
  return n;
}

// A block that nothing rebuilds stops the rebuild at its run of stripes.
// What gets it past: a write of the run's stripes whole (their parity from
// the new data alone, the unreadable block overwritten). A write of the
// block alone cannot be computed where the failed member holds data in its
// stripe (its old content is needed, and nothing rebuilds it), so the
// event says which bytes to write.
GroupEvent Group::Impl::rebuild_stopped_event(int e) const {
  GroupEvent ev{GroupEvent::RebuildFinished, rebuild_slot.load(), ""};
  const std::string who = "rebuild of member " + std::to_string(ev.member);
  if (e != -ENODATA) return ev.message = who + " stopped: " + strerror(-e), ev;
  const uint64_t sdb = vol->geometry().stripe_data_bytes(), first = rebuild_failed_first.load();
  const uint32_t n = std::max<uint32_t>(1, rebuild_failed_stripes.load());
  ev.data_offset = first * sdb;
  ev.data_bytes = n * sdb;
  const std::string stripes = n == 1 ? "stripe " + std::to_string(first)
                                     : "stripes " + std::to_string(first) + "-" + std::to_string(first + n - 1);
  const std::string how =
      vol->geometry().has_parity()
          ? " whole, in writes of whole stripes (" + format_size(sdb) +
                ", aligned: a write of the unreadable block alone fails where it must rebuild what the member "
                "being rebuilt held in its stripe)"
          : "";
  ev.message = who + " stopped at " + stripes + " (the group's data bytes " + std::to_string(ev.data_offset) + "-" +
               std::to_string(ev.data_offset + ev.data_bytes - 1) + ", " + format_size(ev.data_bytes) +
               "): a member it reads has a block there it cannot read (a medium error) that no other member's "
               "redundancy covers. The group stays degraded, its other data readable. To get past it, copy off "
               "what reads of those bytes, write them back" + how + ", then start the rebuild again (dg rebuild "
               "start): what did not read is lost";
  return ev;
}

void Group::Impl::housekeeping_loop() {
  for (uint32_t tick = 0; !hk_stop; tick++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    housekeeping_tick(tick % 20 == 0);
  }
}

void Group::Impl::housekeeping_tick(bool slow) {
  const Geometry& g = vol->geometry();
  bg->kick();  // rate-limited work continues
  const uint64_t now = mono_ns();
  for (int w = 0; w < int(Work::kCount); w++)
    rates[w].sample(now, bg->progress(Work(w)).done_stripes * g.strip_bytes);
  hot.rate.sample(now, hot.done_bytes.load());
  hot_replace_tick();
  if (resync_finished.exchange(false) && dirty_untrusted.load() && wi->suspect_regions() == 0) {
    // The regions no log made consistent are resynced: durable first, then
    // a later unclean stop's replay may be trusted again.
    vol->members_error(flush_members(), -EIO);
    persist([&] { sb.flags &= ~uint32_t(kFlagDirtyUntrusted); });
    dirty_untrusted = false;
  }
  if (int e = rebuild_failed_err.exchange(0)) emit(rebuild_stopped_event(e));
  // The flag stays up until the member is active on disk: until then the
  // rebuild still reads as running (progress_of), so nobody sees a finished
  // rebuild whose member the superblocks still call rebuilding.
  if (rebuild_finished.load()) {
    const int m = rebuild_slot.exchange(-1);
    std::string msg = "member " + std::to_string(m) + " rebuilt";
    if (m >= 0 && (vol->room_mask() >> m & 1)) {
      // Rebuilt into the distributed spare room: durable on the drives that
      // took it before the superblocks say all of it is there.
      msg = "member " + std::to_string(m) + " rebuilt into the distributed spare room";
      vol->members_error(flush_members(), -EIO);
      persist([&] { sb.slots[m].rebuild_checkpoint = g.stripes() * g.strip_bytes; });
    } else if (m >= 0) {
      // Its rebuilt data is durable before the superblocks call it active;
      // a member that cannot flush (or take that superblock) fails. A
      // copy-back's member leaves the room with it (the volume's did).
      if (copy_back.exchange(false))
        msg = "member " + std::to_string(m) + " copied back onto " + vol->member(uint32_t(m))->path() +
              ": it left the distributed spare room";
      if (vol->member(uint32_t(m))->sync_flush() != 0) {
        vol->member_error(uint32_t(m), -EIO);
        msg += ", but failed: it cannot flush";
      } else {
        Persisted p = persist([&] {
          sb.slots[m].state = SlotState::Active;
          sb.slots[m].rebuild_checkpoint = 0;
          sb.slots[m].room = 0;
          readd_gen[m] = 0;
        });
        if (p.failed >> m & 1) msg += ", but failed: " + p.why(uint32_t(m));
      }
    }
    rebuild_ended(m);
    // Down before the event, unlike the init's: the daemon acts on this
    // event by the rebuild being over (a pool spare for a member that
    // failed meanwhile, control_restore.cpp).
    rebuild_finished = false;
    emit(GroupEvent::RebuildFinished, m, msg);
  }
  fail_overdue_missing();
  // The init reads as running until it is on disk and told: a scrub started
  // once it reads as over comes after its INIT_FINISHED.
  if (init_finished.load()) {
    vol->members_error(flush_members(), -EIO);  // the survivors' init writes are durable
    persist([&] {
      sb.flags |= kFlagInitialized;
      sb.init_checkpoint = g.stripes();
    });
    initialized = true;
    emit(GroupEvent::InitFinished, -1, "initialized");
    init_finished = false;
  }
  // A failure during a rebuild keeps the request until that rebuild ends.
  if (auto_replace.load() && rebuild_owner() < 0 && !vol->failed()) {
    auto_replace.fetch_and(vol->failed_mask());  // members back in service need nothing
    // Missing members may come back: they wait, their requests kept.
    const uint64_t ready = auto_replace.load() & ~vol->missing_mask();
    if (ready) {
      const uint32_t m = uint32_t(__builtin_ctzll(ready));
      auto_replace.fetch_and(~(1ull << m));
      std::string err;
      // Declustered: into the distributed spare room while it has room (a
      // rebuild onto every survivor), spare drives after. The others wait
      // for the end of this rebuild.
      if (vol->room_takes(m)) {
        if (!start_room_rebuild(m, &err)) emit(GroupEvent::SpareFailed, int(m), err);
      } else if (!take_spare_for(m, &err) && spares_left()) {
        auto_replace.fetch_or(1ull << m);  // that spare left the group: the next one, next tick
      }
    }
  }
  if (!slow) return;
  // A member whose flush or bitmap write failed there fails.
  vol->members_error(wi->clear_idle(bitmap_idle_ns, [this] { return flush_members(); }).failed, -EIO);
  const int rm = vol->rebuilding_member();
  const uint64_t rcp = vol->rebuild_checkpoint();
  if (rm >= 0 && rcp > persisted_rebuild_cp && rcp < g.stripes()) {
    // The new member's data below the checkpoint is durable before the
    // checkpoint says so; a member that cannot flush fails (its rebuild stops).
    // In the spare room: every drive that took part of it.
    if (vol->room_mask() >> rm & 1) {
      vol->members_error(flush_members(), -EIO);
      persist([&] { sb.slots[rm].rebuild_checkpoint = rcp * g.strip_bytes; });
      persisted_rebuild_cp = rcp;
      emit(GroupEvent::RebuildProgress, rm, std::to_string(rcp * 100 / g.stripes()) + "%");
    } else if (vol->member(uint32_t(rm))->sync_flush() != 0) {
      vol->member_error(uint32_t(rm), -EIO);
    } else {
      persist([&] { sb.slots[rm].rebuild_checkpoint = rcp * g.strip_bytes; });
      persisted_rebuild_cp = rcp;
      emit(GroupEvent::RebuildProgress, rm, std::to_string(rcp * 100 / g.stripes()) + "%");
    }
  }
  const uint64_t icp = bg->init_checkpoint();
  if (!initialized && icp > persisted_init_cp) {
    // Members whose flush fails are failed; the others' init writes below
    // the checkpoint are durable before it says so.
    vol->members_error(flush_members(), -EIO);
    persist([&] { sb.init_checkpoint = icp; });
    persisted_init_cp = icp;
  }
  if (bg->progress(Work::Scrub).active)
    emit(GroupEvent::ScrubProgress, -1,
         std::to_string(bg->progress(Work::Scrub).done_stripes * 100 / std::max<uint64_t>(1, g.stripes())) + "%");
}

}  // namespace gpuraid
