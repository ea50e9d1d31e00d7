#include "engine/volume.h"

#include <algorithm>
#include <cerrno>

#include "engine/invariant.h"
#include "engine/levels/level.h"
#include "engine/ops/op.h"
#include "engine/units.h"

namespace gpuraid {

namespace {
// Largest part of a read (or RAID 0 write) handled as one op: big enough
// that per-member runs are long, small enough to bound iovec counts.
constexpr uint64_t kMaxDirectOpBytes = 4u << 20;
// Ops of each reactor's pool kept for background maintenance (its largest
// window is two rebuild runs) and read retries; at most half of a small pool.
constexpr uint32_t kMaintenanceOps = kMaxRebuildStripesInFlight;
}  // namespace

void OpPoolDeleter::operator()(OpPool* p) const { delete p; }

Volume::~Volume() {
  meta_.drain();  // failures still being persisted (their hooks are the owner's)
  for (uint32_t s : owned_slots_) engine_.detach(int(s));
}

bool Volume::fit_geometry(Level level, uint32_t ec_parity, uint32_t strip_bytes,
                          const std::vector<Drive*>& members, uint64_t data_offset, Geometry* out,
                          std::string* note, std::string* err, uint32_t subgroups,
                          DeclusteredShape declustered) {
  if (members.empty()) {
    *err = "no members given";
    return false;
  }
  uint64_t smallest = UINT64_MAX, largest = 0, total = 0;
  for (Drive* d : members) {
    smallest = std::min(smallest, d->size_bytes());
    largest = std::max(largest, d->size_bytes());
    total += d->size_bytes();
  }
  if (smallest <= data_offset) {
    *err = "a member (" + std::to_string(smallest) + " bytes) is not larger than the " +
           std::to_string(data_offset) + "-byte metadata area";
    return false;
  }
  if (!Geometry::make(level, uint32_t(members.size()), ec_parity, strip_bytes, smallest - data_offset,
                      out, err, subgroups, declustered))
    return false;
  if (note) {
    note->clear();
    if (smallest != largest)
      *note = "members differ in size (" + format_size(smallest) + " to " + format_size(largest) +
              "): each gives as much as the smallest, " + format_size(total - smallest * members.size()) +
              " of the larger ones is unused";
  }
  return true;
}

std::unique_ptr<Volume> Volume::create(Engine& engine, const Geometry& geo, std::vector<Drive*> members,
                                       uint64_t data_offset, std::string* err) {
  if (members.size() != geo.members) {
    *err = "the geometry has " + std::to_string(geo.members) + " members but " +
           std::to_string(members.size()) + " drives were given";
    return nullptr;
  }
  if (data_offset % kBlockSize) {
    *err = "the data offset must be a multiple of 4 KiB";
    return nullptr;
  }
  for (Drive* d : members) {
    if (d->size_bytes() < data_offset + geo.member_data_bytes) {
      *err = d->path() + " is too small: " + std::to_string(d->size_bytes()) + " bytes, needs " +
             std::to_string(data_offset + geo.member_data_bytes);
      return nullptr;
    }
    if (std::count(members.begin(), members.end(), d) > 1) {
      *err = d->path() + " is given twice";
      return nullptr;
    }
  }
  if (std::string why = shared_storage(std::vector<const Drive*>(members.begin(), members.end())); !why.empty()) {
    *err = why + ": one drive cannot be two members";
    return nullptr;
  }
  std::unique_ptr<Volume> v(new Volume(engine, geo));
  v->members_.reset(new std::atomic<Drive*>[kMaxMembers]);
  v->slots_.reset(new std::atomic<uint32_t>[kMaxMembers]);
  v->corrected_.reset(new std::atomic<uint32_t>[kMaxMembers]);
  for (uint32_t i = 0; i < kMaxMembers; i++) v->corrected_[i].store(0);
  v->data_offset_ = data_offset;
  // Whole stripes, about kMaxDirectOpBytes: one direct read or RAID 0 write op's most.
  v->size_bytes_ = geo.capacity_bytes();
  v->direct_chunk_ = std::max(geo.stripe_data_bytes(), kMaxDirectOpBytes / geo.stripe_data_bytes() * geo.stripe_data_bytes());
  for (size_t i = 0; i < members.size(); i++) {
    int slot = engine.attach(members[i], err);
    if (slot < 0) return nullptr;  // the destructor detaches the slots taken so far
    v->owned_slots_.push_back(uint32_t(slot));
    v->members_[i].store(members[i]);
    v->slots_[i].store(uint32_t(slot));
  }
  if (geo.description().declustered) v->publish_room(std::make_unique<DistributedSpare>(geo.map()));
  for (uint32_t i = 0; i < engine.reactor_count(); i++)
    v->op_pools_.emplace_back(new OpPool(v.get(), &engine.reactor(i), engine.ops_per_reactor(),
                                         std::min(kMaintenanceOps * rebuild_window_scale(geo), engine.ops_per_reactor() / 2),
                                         engine.write_gather_ns()));
  return v;
}

VolumeStats Volume::stats() const {
  VolumeStats sum;
  for (const auto& p : op_pools_) sum.add(p->counters());
  return sum;
}

void VolumeStats::add(const VolumeStats& o) {
  static constexpr uint64_t VolumeStats::*kCounters[] = {
      &VolumeStats::full_stripe_writes, &VolumeStats::rmw_writes,      &VolumeStats::rcw_writes,
      &VolumeStats::degraded_writes,    &VolumeStats::degraded_reads,  &VolumeStats::merged_writes,
      &VolumeStats::retried_reads,      &VolumeStats::merged_reads,    &VolumeStats::held_writes,
      &VolumeStats::held_reads,         &VolumeStats::held_expired,    &VolumeStats::rebuild_stripes_written,
      &VolumeStats::rebuild_stripes_skipped, &VolumeStats::degraded_flushes,
      &VolumeStats::corrected_reads,    &VolumeStats::uncorrectable_reads};
  static_assert(sizeof(VolumeStats) == sizeof(kCounters) / sizeof(kCounters[0]) * sizeof(uint64_t),
                "a VolumeStats counter is missing from kCounters");
  for (auto c : kCounters)
    this->*c += read_counter(o.*c);
}

uint64_t Volume::foreground_requests() const {
  uint64_t n = 0;
  for (const auto& p : op_pools_) n += p->requests();
  return n;
}

bool Volume::validate(const IoRequest& req, std::string* why) const {
  auto no = [&](const std::string& m) {
    if (why) *why = m;
    return false;
  };
  if (req.op == IoRequest::Flush) return true;
  if (req.op != IoRequest::Read && req.op != IoRequest::Write) return no("unknown operation");
  if (!req.buf) return no("no data buffer");
  if (req.length == 0) return no("zero-length I/O");
  // Member I/O is zero-copy and O_DIRECT: an unaligned buffer would come
  // back from the kernel as EINVAL and fail a healthy member.
  if (reinterpret_cast<uintptr_t>(req.buf) % kBlockSize)
    return no("the data buffer must be 4 KiB-aligned (member I/O is direct)");
  if (req.offset % kBlockSize || req.length % kBlockSize)
    return no("I/O must be aligned to 4 KiB (offset " + std::to_string(req.offset) + ", length " +
              std::to_string(req.length) + ")");
  if (req.offset > size_bytes() || req.length > size_bytes() - req.offset)
    return no("I/O past the end of the volume (offset " + std::to_string(req.offset) + " + length " +
              std::to_string(req.length) + " > size " + std::to_string(size_bytes()) + ")");
  return true;
}

static void complete_deferred(Task* t) {
  auto* req = static_cast<IoRequest*>(t->arg);
  req->done(req);
}

int Volume::submit(Reactor& r, IoRequest* req, std::string* why) {
  r.claim();
  if (!validate(*req, why)) return -EINVAL;
  req->home = &r;
  req->result = 0;
  req->parts_left = 1;  // the split guard: no part completes the request while it is being split
  req->next_off = req->offset;
  req->stream = false;  // set by the split of a parity write or degraded read (ops/stripe_gather.h)
  OpPool& pool = op_pool(r.id());
  pool.count_request();
  if (failed()) {
    req->result = -EIO;
    end_split(r, req);
    return 0;
  }
  if (pool.has_waiters() || !split(r, req)) pool.park(req, false);  // behind those already waiting
  return 0;
}

void Volume::end_split(Reactor& r, IoRequest* req) {
  if (--req->parts_left == 0) {  // never complete inside submit(): callers may resubmit from done
    req->complete_task.run = complete_deferred;
    req->complete_task.arg = req;
    r.defer(&req->complete_task);
  }
}

bool Volume::split(Reactor& r, IoRequest* req) {
  const uint64_t end = req->offset + req->length;
  bool all = true;
  switch (req->op) {
    case IoRequest::Read:
      all = split_read(r, req, req->offset, req->buf, &req->next_off, end, OpClass::Foreground);
      break;
    case IoRequest::Write: all = split_write(r, req); break;
    case IoRequest::Flush: all = split_flush(r, req); break;
  }
  if (all) end_split(r, req);
  return all;
}

void Volume::finish_part(IoRequest* req, int result) {
  if (result < 0 && req->result == 0) req->result = result;
  if (--req->parts_left == 0) req->done(req);
}

void Volume::correct_read(Reactor& r, IoRequest* req, uint64_t off, uint64_t len, uint8_t* buf) {
  const uint64_t sdb = geo_.stripe_data_bytes();
  for (uint64_t o = off, end = off + len; o < end;) {
    const uint64_t s = o / sdb, e = std::min(end, (s + 1) * sdb);
    Op* op = new_op(this, r, req, geo_.is_mirror() ? OpKind::MirrorFix : OpKind::DegradedRead, OpClass::Retry);
    GPR_ASSERT(op, "a corrected read of %llu bytes at %llu was refused an op", (unsigned long long)len,
               (unsigned long long)off);
    op->off = o;
    op->len = e - o;
    op->buf = buf + (o - off);
    op->stripe = s;
    strip_ranges(geo_, s, o, e - o, op->ranges);
    if (geo_.is_mirror()) start_mirror_fix(op);
    else start_degraded_read(op);
    o = e;
  }
}

void Volume::redo_read(Reactor& r, IoRequest* req, uint64_t off, uint64_t len, uint8_t* buf) {
  uint64_t cursor = off;
  const bool all = split_read(r, req, off, buf, &cursor, off + len, OpClass::Retry);
  GPR_ASSERT(all, "a retried read of %llu bytes at %llu was refused ops", (unsigned long long)len,
             (unsigned long long)off);
}

bool Volume::split_read(Reactor& r, IoRequest* req, uint64_t off0, uint8_t* buf0, uint64_t* cursor, uint64_t end,
                        OpClass c) {
  const uint64_t sdb = geo_.stripe_data_bytes();
  const uint64_t failed = unusable_mask();
  if (failed == 0 || geo_.is_mirror()) {
    const uint64_t chunk = direct_chunk_;
    while (*cursor < end) {
      // Chunks are whole stripes: a read within its stripe (most small
      // reads) ends in its chunk, and start_read reuses the one division.
      const uint64_t o = *cursor, s = o / sdb;
      const uint64_t e = end <= (s + 1) * sdb ? end : std::min(end, (o / chunk + 1) * chunk);
      Op* op = new_op(this, r, req, OpKind::Read, c);
      if (!op) return false;
      op->off = o;
      op->len = e - o;
      op->buf = buf0 + (o - off0);
      op->stripe = s;
      *cursor = e;
      start_read(op);
    }
    return true;
  }
  // Degraded: one op per stripe; every read of a stripe that lost a data
  // strip takes the stripe lock, so that reads of it gather and each
  // survivor is read once (ops/read_ops.cpp); a stream's read that leaves
  // the rest of such a stripe to its next reads is held for them
  // (ops/stripe_gather.h).
  const uint64_t data_roles = (1ull << geo_.data_strips()) - 1;
  StripeGather& gather = op_pool(r.id()).read_gather();
  if (c == OpClass::Foreground && *cursor == req->offset) req->stream = gather.note_request(req->offset, req->length);
  while (*cursor < end) {
    const uint64_t o = *cursor, s = o / sdb, e = std::min(end, (s + 1) * sdb);
    const bool lost_data = failed_roles(geo_, s, failed_mask_for(s)) & data_roles;
    Op* op = new_op(this, r, req, lost_data ? OpKind::DegradedRead : OpKind::Read, c);
    if (!op) return false;
    op->off = o;
    op->len = e - o;
    op->buf = buf0 + (o - off0);
    op->stripe = s;
    *cursor = e;
    strip_ranges(geo_, s, o, e - o, op->ranges);
    if (lost_data) start_degraded_read(op);
    else start_read(op);
  }
  if (gather.holding()) gather.scan();  // held stripes take the reads that queued on them
  return true;
}

bool Volume::split_write(Reactor& r, IoRequest* req) {
  const uint64_t sdb = geo_.stripe_data_bytes();
  const uint64_t end = req->offset + req->length;
  uint64_t& cursor = req->next_off;
  if (geo_.description().write_path == WritePath::Direct) {
    const uint64_t chunk = direct_chunk_;
    while (cursor < end) {
      const uint64_t o = cursor, e = std::min(end, (o / chunk + 1) * chunk);
      Op* op = new_op(this, r, req, OpKind::DirectWrite);
      if (!op) return false;
      op->off = o;
      op->len = e - o;
      op->buf = req->buf + (o - req->offset);
      cursor = e;
      start_direct_write(op);
    }
    return true;
  }
  const OpKind kind = geo_.is_mirror() ? OpKind::MirrorWrite : OpKind::ParityWrite;
  StripeGather& gather = op_pool(r.id()).write_gather();
  if (kind == OpKind::ParityWrite && cursor == req->offset) req->stream = gather.note_request(req->offset, req->length);
  while (cursor < end) {
    const uint64_t o = cursor, s = o / sdb, e = std::min(end, (s + 1) * sdb);
    Op* op = new_op(this, r, req, kind);
    if (!op) return false;
    op->off = o;
    op->len = e - o;
    op->buf = req->buf + (o - req->offset);
    op->stripe = s;
    cursor = e;
    strip_ranges(geo_, s, o, e - o, op->ranges);
    if (kind == OpKind::MirrorWrite) start_mirror_write(op);
    else start_parity_write(op);
  }
  if (gather.holding()) gather.scan();  // held stripes take the writes that queued on them
  return true;
}

int Volume::submit_maintenance(Reactor& r, IoRequest* req, Maintenance kind, uint64_t stripe,
                               MaintenanceResult* out) {
  r.claim();
  if (stripe >= geo_.stripes()) return -EINVAL;
  if (kind == Maintenance::Rebuild && rebuilding_member() < 0) return -EINVAL;
  *out = MaintenanceResult{};
  req->home = &r;
  req->result = 0;
  req->parts_left = 1;
  Op* op = new_op(this, r, req, OpKind::Maintenance, OpClass::Maintenance);
  if (!op) return -EAGAIN;  // every op is in use: the background work tries again on its next kick
  op->stripe = stripe;
  op->off = stripe * geo_.stripe_data_bytes();
  op->len = geo_.stripe_data_bytes();
  op->buf = nullptr;
  op->maint.kind = kind;
  op->maint.res = out;
  op->maint.rebuild_member = rebuild_target(stripe);
  op->maint.rebuilding = rebuilding_member();
  start_maintenance(op);
  end_split(r, req);
  return 0;
}

int Volume::submit_rebuild_run(Reactor& r, IoRequest* req, uint64_t first, RebuildRun* run) {
  r.claim();
  if (first >= geo_.stripes() || run->n == 0 || run->n > kMaxRunStripes) return -EINVAL;
  if (rebuilding_member() < 0) return -EINVAL;
  const uint32_t want = uint32_t(std::min<uint64_t>(run->n, geo_.stripes() - first));
  req->home = &r;
  req->result = 0;
  req->parts_left = 1;
  uint32_t got = 0;
  for (; got < want; got++) {
    Op* op = new_op(this, r, req, OpKind::Maintenance, OpClass::Maintenance);
    if (!op) break;
    run->res[got] = MaintenanceResult{};
    op->stripe = first + got;
    op->off = op->stripe * geo_.stripe_data_bytes();
    op->len = geo_.stripe_data_bytes();
    op->buf = nullptr;
    op->maint.kind = Maintenance::Rebuild;
    op->maint.res = &run->res[got];
    op->maint.rebuild_member = rebuild_target(op->stripe);
    op->maint.rebuilding = rebuilding_member();
    run->ops[got] = op;
  }
  if (got == 0) return -EAGAIN;  // every op is in use: the background work tries again on its next kick
  run->n = got;
  run->member = rebuilding_member();
  if (geo_.has_parity()) {
    for (uint32_t i = 0; i < got; i++) run->ops[i]->maint.run = run;
    start_rebuild_run(run);
  } else {  // mirrors: each stripe on its own (a copy, no recovery to batch)
    for (uint32_t i = 0; i < got; i++) start_maintenance(run->ops[i]);
  }
  end_split(r, req);
  return int(got);
}

bool Volume::split_flush(Reactor& r, IoRequest* req) {
  Op* op = new_op(this, r, req, OpKind::Flush);
  if (!op) return false;
  op->off = op->len = 0;
  req->next_off = req->offset + req->length;
  start_flush(op);
  return true;
}

void Volume::report_if_group_failed(uint64_t unusable) {
  if (!geo_.survives(unusable) && !group_failed_reported_.exchange(true) && events_.group_failed)
    events_.group_failed();
}

// Under fail_mu_: a failure (missing: a loss) takes effect in memory. A
// member being rebuilt that fails again stops being rebuilt.
void Volume::take_effect_locked(uint32_t member, bool missing) {
  const uint64_t bit = 1ull << member;
  if (rebuilding_.load() & bit) rebuilding_.store(0);
  if (hooks.before_failure) hooks.before_failure(member, missing);
  holds_.fetch_add(1, std::memory_order_acq_rel);  // before any op can skip it
  durability_.all_written(geo_.members);            // before any op sees it failed
  if (missing) missing_.fetch_or(bit, std::memory_order_acq_rel);  // seen with the failure
  failed_.fetch_or(bit, std::memory_order_seq_cst);
  if (!missing) missing_.fetch_and(~bit, std::memory_order_acq_rel);
}

bool Volume::fail_if(uint32_t member, int err, bool only_missing) {
  if (member >= geo_.members) return false;
  const uint64_t bit = 1ull << member;
  // A member in the spare room (rebuilt or being rebuilt there) has no drive
  // of its own to fail: an error of its I/O fails the drive that took it
  // (ops/op_common.cpp), and its stripes there then read around it. But
  // one being copied back has: that drive failing ends the copy-back (what
  // it moved is lost; the group rebuilds it into the room again).
  if ((room_mask_.load() & bit) && !leaving_member(member)) return false;
  auto settled = [&] { return (failed_.load(std::memory_order_acquire) & ~missing_.load(std::memory_order_acquire)) & bit; };
  if (settled()) return false;
  {
    std::lock_guard<std::mutex> g(fail_mu_);
    if (settled() || (only_missing && !(missing_.load() & bit))) return false;
    take_effect_locked(member, false);
  }
  persist_later(member, err, false);
  return true;
}

bool Volume::mark_missing(uint32_t member, int err) {
  if (member >= geo_.members) return false;
  const uint64_t bit = 1ull << member;
  if (failed_.load(std::memory_order_acquire) & bit) return false;
  {
    std::lock_guard<std::mutex> g(fail_mu_);
    if (failed_.load(std::memory_order_acquire) & bit) return false;
    take_effect_locked(member, true);
  }
  persist_later(member, err, true);
  return true;
}

// On the worker, in the order the failures took effect: the superblocks
// say so, the events go out, members that could not take that write fail
// next (queued behind), and the requests held meanwhile are released once
// none is pending.
void Volume::persist_later(uint32_t member, int err, bool missing) {
  auto job = [this, member, err, missing] {
    const uint64_t bit = 1ull << member;
    uint64_t also = 0;
    if (missing) {
      if (hooks.persist_missing) also = hooks.persist_missing(member);
      if (events_.member_missing) events_.member_missing(member, err);
    } else {
      if (hooks.persist_failure) also = hooks.persist_failure(member, err);
      if (events_.member_failed) events_.member_failed(member, err);
    }
    report_if_group_failed(unusable_mask());  // a copy-back started live is no loss
    members_error(also & ~bit, -EIO);
    release_acks();
  };
  // Lockstep (deterministic tests): here and now, as the one thread runs
  // everything in a fixed order; a real disk never hangs there.
  if (engine_.reactor(0).lockstep()) return job();
  meta_.post(std::move(job));
  wait_persisted();
}

void Volume::wait_persisted() {
  if (Reactor::in_poll() || meta_.on_worker()) return;
  meta_.drain();
}

bool Volume::hold_ack(Op* op, void (*resume)(Op*)) {
  std::lock_guard<std::mutex> g(hold_mu_);
  if (holds_.load(std::memory_order_acquire) == 0) return false;
  op->resume_fn = resume;
  held_.push_back(op);
  return true;
}

void Volume::release_acks() {
  std::vector<Op*> go;
  {
    std::lock_guard<std::mutex> g(hold_mu_);
    if (holds_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    go.swap(held_);
  }
  for (Op* op : go) {
    auto fn = op->resume_fn;
    resume_on_home(op, fn);
  }
}

void Volume::member_error(uint32_t member, int err) {
  if (member >= geo_.members) return;
  // Its routed I/O's drive failed instead (but a copy-back's own drive is its).
  if ((room_mask_.load(std::memory_order_acquire) >> member & 1) && !leaving_member(member)) return;
  // I/O issued before the member went missing fails later: expected, not a death.
  if (missing_.load(std::memory_order_acquire) >> member & 1) return;
  if (hooks.path_lost && hooks.path_lost(member, err)) {
    mark_missing(member, err);  // or it already is, or it failed meanwhile
    return;
  }
  fail_member(member, err);
}

bool Volume::may_correct(uint32_t member, uint64_t unreadable) const {
  if (member >= geo_.members || !(geo_.has_parity() || geo_.is_mirror())) return false;
  const uint64_t unusable = unusable_mask();
  // A member in the room has no drive of its own (its I/O's drive fails).
  if (((unusable | room_mask()) >> member & 1) || corrected_reads(member) >= kMaxCorrectedReads) return false;
  return geo_.survives(unusable | unreadable);
}

void Volume::read_corrected(uint32_t member) {
  const uint32_t n = corrected_[member].fetch_add(1, std::memory_order_relaxed) + 1;
  if (events_.read_corrected) tell_from_meta([this, member, n] { events_.read_corrected(member, n); });
  if (n >= kMaxCorrectedReads) member_error(member, -ENODATA);  // a drive that keeps losing blocks
}

void Volume::read_uncorrectable(uint32_t member, uint64_t stripe, bool parity_untrusted) {
  if (events_.read_uncorrectable)
    tell_from_meta([this, member, stripe, parity_untrusted] { events_.read_uncorrectable(member, stripe, parity_untrusted); });
}

void Volume::tell_from_meta(std::function<void()> tell) {
  if (engine_.reactor(0).lockstep()) return tell();  // deterministic tests: here and now
  meta_.post(std::move(tell));
}

void Volume::members_error(uint64_t members, int err) {
  for (uint64_t m = members; m; m &= m - 1) member_error(uint32_t(__builtin_ctzll(m)), err);
}

bool Volume::start_rebuild(uint32_t member, Drive* drive, uint64_t checkpoint_stripe, std::string* err) {
  std::lock_guard<std::mutex> g(fail_mu_);
  const uint64_t bit = 1ull << member;
  // A drive that replaces (or is) a failed member holds no spare strips of
  // the room's members it missed: it would need them rebuilt too, which a
  // rebuild onto one drive does not do (copy-back, issue 34, is to come).
  if (room_mask_.load()) {
    *err = "the group has members in its distributed spare room: member " + std::to_string(member) +
           " is rebuilt into the room, not onto a drive";
    return false;
  }
  if (member >= geo_.members || !(failed_.load() & bit)) {
    *err = "member " + std::to_string(member) + " is not failed or missing";
    return false;
  }
  if (rebuilding_.load()) {
    *err = "a rebuild is already running";
    return false;
  }
  if (drive->size_bytes() < data_offset_ + geo_.member_data_bytes) {
    *err = drive->path() + " is too small: needs " + std::to_string(data_offset_ + geo_.member_data_bytes) + " bytes";
    return false;
  }
  // A member back from a path loss keeps its drive and its slot.
  int slot = drive == members_[member].load() ? int(slots_[member].load()) : engine_.attach(drive, err);
  if (slot < 0) return false;
  if (drive != members_[member].load()) owned_slots_.push_back(uint32_t(slot));
  // Order matters: the new drive and the checkpoint are in place before the
  // member stops counting as failed, so no op sees it usable too early.
  if (drive != members_[member].load()) corrected_[member].store(0);
  members_[member].store(drive);
  slots_[member].store(uint32_t(slot));
  rebuild_cp_.store(checkpoint_stripe);
  rebuilding_.store(bit);
  failed_.fetch_and(~bit);
  missing_.fetch_and(~bit);
  group_failed_reported_.store(!geo_.survives(failed_.load() | bit));
  return true;
}

void Volume::publish_room(std::unique_ptr<DistributedSpare> next) {
  room_.store(next.get(), std::memory_order_release);
  room_versions_.push_back(std::move(next));
}

bool Volume::start_room_rebuild(uint32_t member, uint64_t checkpoint_stripe, std::string* err) {
  std::lock_guard<std::mutex> g(fail_mu_);
  const uint64_t bit = 1ull << member;
  if (!room()) return *err = std::string(geo_.description().name) + " has no distributed spare room", false;
  if (member >= geo_.members || !(failed_.load() & bit))
    return *err = "member " + std::to_string(member) + " is not failed or missing", false;
  if (rebuilding_.load()) return *err = "a rebuild is already running", false;
  auto next = std::make_unique<DistributedSpare>(*room());
  // A member whose copy-back failed goes back in at its place, in full.
  if (next->leaving() && next->order().back() == member) {
    if (!next->rejoin(err)) return false;
  } else if (!next->take(member, err)) {
    return false;
  }
  // As start_rebuild: the room and the checkpoint are in place before the
  // member stops counting as failed.
  publish_room(std::move(next));
  rebuild_cp_.store(checkpoint_stripe);
  room_mask_.fetch_or(bit);
  rebuilding_.store(bit);
  failed_.fetch_and(~bit);
  missing_.fetch_and(~bit);
  group_failed_reported_.store(!geo_.survives(failed_.load() | bit));
  return true;
}

bool Volume::restore_room(const std::vector<uint32_t>& order, std::string* err) {
  std::lock_guard<std::mutex> g(fail_mu_);
  if (!room()) return *err = std::string(geo_.description().name) + " has no distributed spare room", false;
  auto next = std::make_unique<DistributedSpare>(*room());
  if (!next->restore(order, false, err)) return false;
  uint64_t bits = 0;
  for (uint32_t m : order) bits |= 1ull << m;
  publish_room(std::move(next));
  room_mask_.store(bits);
  failed_.fetch_and(~bits);
  missing_.fetch_and(~bits);
  return true;
}

bool Volume::start_copy_back(uint32_t member, Drive* drive, uint64_t checkpoint_stripe, bool old_current,
                             std::string* err) {
  std::lock_guard<std::mutex> g(fail_mu_);
  const uint64_t bit = 1ull << member;
  if (!room() || !(room_mask_.load() & bit))
    return *err = "member " + std::to_string(member) + " is not in the distributed spare room", false;
  if (room()->order().back() != member)
    return *err = "only the last member into the distributed spare room (member " +
                  std::to_string(room()->order().back()) + ") can leave it: copy that one back first",
           false;
  if (rebuilding_.load()) return *err = "a rebuild is already running", false;
  if (drive->size_bytes() < data_offset_ + geo_.member_data_bytes)
    return *err = drive->path() + " is too small: needs " + std::to_string(data_offset_ + geo_.member_data_bytes) +
                  " bytes", false;
  auto next = std::make_unique<DistributedSpare>(*room());
  if (!next->leave(old_current, err)) return false;
  const int slot = drive == members_[member].load() ? int(slots_[member].load()) : engine_.attach(drive, err);
  if (slot < 0) return false;
  if (drive != members_[member].load()) owned_slots_.push_back(uint32_t(slot));
  // The drive and the checkpoint first: from the room's publication on,
  // stripes below the checkpoint route the moved strips to that drive.
  if (drive != members_[member].load()) corrected_[member].store(0);
  members_[member].store(drive);
  slots_[member].store(uint32_t(slot));
  rebuild_cp_.store(checkpoint_stripe);
  publish_room(std::move(next));
  rebuilding_.store(bit);
  return true;
}

uint64_t Volume::failed_in_room_for(uint64_t stripe) const {
  // The room first: a version published after a change of the others is
  // read with that change.
  const DistributedSpare* rm = room();
  const uint64_t f = failed_.load(std::memory_order_acquire);
  const uint64_t r = rebuilding_.load(std::memory_order_acquire);
  const uint64_t cp = rebuild_cp_.load(std::memory_order_acquire);
  // A member being copied back counts where the room says (its strips may
  // still be there), not as a member being rebuilt.
  const bool lost_past_cp = r && stripe >= cp && !(rm->leaving() && (r & room_mask_.load(std::memory_order_acquire)));
  const uint64_t out = lost_past_cp ? f | r : f;
  // The stripe's own members only: what it survives is counted over them
  // (other members' failures and the room's losses elsewhere are not its).
  return (out | rm->unavailable(stripe, f, cp)) & geo_.map().members_of(stripe);
}

int Volume::room_drive(uint32_t member, uint64_t row, bool rebuild_write) const {
  const DistributedSpare* rm = room();
  // One that left the room meanwhile (its copy-back ended): its own drive.
  int d = rm->holds(member) ? rm->drive_of(member, row) : int(member);
  if (rm->leaving() && rm->moved_by_leave(member, row)) {
    // Below the checkpoint (or the copy-back writing it): where leaving puts it.
    const int64_t s = geo_.map().stripe_holding(row, member);
    if (rebuild_write || (s >= 0 && uint64_t(s) < rebuild_cp_.load(std::memory_order_acquire)))
      d = rm->drive_after_leave(member, row);
  }
  return d;
}

void Volume::route_to_room(MemberIo* io, uint32_t member, bool rebuild_write) const {
  const uint64_t row = (io->offset - data_offset_) / geo_.strip_bytes;
  const int d = room_drive(member, row, rebuild_write);
  // An op issues I/O only where the room holds the member's strip (failed_mask_for).
  GPR_ASSERT(d >= 0, "member %u in the spare room has no strip in row %llu", member, (unsigned long long)row);
  io->drive = this->member(uint32_t(d));
  io->slot = member_slot(uint32_t(d));
  io->drive_index = uint32_t(d);
}

int Volume::rebuilding_member() const {
  uint64_t r = rebuilding_.load();
  return r ? __builtin_ctzll(r) : -1;
}

void Volume::finish_rebuild() {
  std::lock_guard<std::mutex> g(fail_mu_);
  const uint64_t r = rebuilding_.load();
  if (room_mask_.load() & r) {  // the room's newcomer is in, or the leaving member out
    auto next = std::make_unique<DistributedSpare>(*room());
    const bool left = next->leaving();
    if (left) next->finish_leave();
    else next->finish_rebuild();
    publish_room(std::move(next));
    if (left) room_mask_.fetch_and(~r);
  }
  rebuild_cp_.store(geo_.stripes());
  rebuilding_.store(0);
}

}  // namespace gpuraid
