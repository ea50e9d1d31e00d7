// What every operation shares: pooling, member I/O phases, buffers, the
// stripe lock, resumption on the home reactor, and completion.
#include "engine/ops/op.h"

#include <algorithm>

#include "engine/invariant.h"

namespace gpuraid {

Op* new_op(Volume* v, Reactor& r, IoRequest* req, OpKind kind, OpClass c) {
  Op* op = v->op_pool(r.id()).get(c);
  if (!op) return nullptr;
  op->vol = v;
  op->home = &r;
  op->req = req;
  op->kind = kind;
  op->fua = req->fua;
  op->holds_lock = false;
  op->intent_held = false;
  op->read = ReadCtx{};
  op->dread.unreadable = 0;
  op->w.unreadable = 0;
  op->rider_head = op->rider_tail = op->rider_next = nullptr;
  op->rider_result = 0;
  op->held_next = nullptr;
  op->maint.run = nullptr;
  op->maint.corrected = 0;
  if (StripeGather* g = gather_of(op)) g->op_started();  // put_op counts it out
  op->pending = 0;
  op->errored = op->used = 0;
  op->bufs.clear();
  op->lock.owner = op;
  op->task.arg = op;
  // Every reader of ranges stops at the data strips: only those are cleared.
  std::fill_n(op->ranges, v->geometry().data_strips(), StripRange{});
  req->parts_left++;
  return op;
}

static void run_resume(Task* t) {
  Op* op = static_cast<Op*>(t->arg);
  auto fn = op->resume_fn;
  GPR_ASSERT(fn, "op %p (kind %d, stripe %llu) resumed with nothing to resume: its task ran twice", (void*)op,
             int(op->kind), (unsigned long long)op->stripe);
  op->resume_fn = nullptr;
  fn(op);
}

void resume_on_home(Op* op, void (*fn)(Op*)) {
  op->resume_fn = fn;
  op->task.run = run_resume;
  op->task.arg = op;
  if (Reactor::current() == op->home) op->home->defer(&op->task);
  else op->home->post(&op->task);
}

bool take_riders(Op* op, uint64_t VolumeStats::*merged) {
  const uint32_t k = op->vol->geometry().data_strips();
  return op->vol->locks().absorb(
      &op->lock,
      [&](StripeLockNode* n) {
        Op* w = static_cast<Op*>(n->owner);
        if (w->kind != op->kind) return false;
        StripRange trial[kMaxMembers];
        for (uint32_t i = 0; i < k; i++) {
          trial[i] = op->ranges[i];
          if (!w->ranges[i].empty() && !trial[i].merge(w->ranges[i].a, w->ranges[i].b)) return false;
        }
        for (uint32_t i = 0; i < k; i++) op->ranges[i] = trial[i];
        return true;
      },
      [&](StripeLockNode* n) {
        Op* w = static_cast<Op*>(n->owner);
        w->rider_next = nullptr;
        if (op->rider_tail) op->rider_tail->rider_next = w;
        else op->rider_head = w;
        op->rider_tail = w;
        op->fua |= w->fua;
        bump(counters_of(op).*merged);
      });
}


// Back to its pool; a parity write or degraded read counts out of its
// reactor's gathering.
static void put_op(Op* op) {
  StripeGather* g = gather_of(op);
  op->vol->op_pool(op->home->id()).put(op);
  if (g) g->op_finished();
}

static void rider_finish(Op* r) {
  Volume::finish_part(r->req, r->rider_result);
  put_op(r);
}

static void finish_held(Op* op);

// No request completes while a member failure that took effect is not yet
// on disk (Volume::fail_member): it is held, and finishes once it is.
void finish_op(Op* op, int result) {
  GPR_ASSERT(!op->holds_lock && op->bufs.empty() && op->pending == 0 && op->read.unreadable == 0,
             "op %p (kind %d, stripe %llu) finished holding its lock, buffers, member I/O or unreadable blocks set aside", (void*)op,
             int(op->kind), (unsigned long long)op->stripe);
  if (__builtin_expect(op->vol->acks_held(), 0)) {
    op->held_result = result;
    if (op->vol->hold_ack(op, finish_held)) return;
  }
  for (Op* r = op->rider_head; r;) {
    Op* n = r->rider_next;
    r->rider_result = result;
    resume_on_home(r, rider_finish);
    r = n;
  }
  IoRequest* req = op->req;
  put_op(op);
  Volume::finish_part(req, result);
}

static void finish_held(Op* op) { finish_op(op, op->held_result); }

// Ops whose reads that meet an unreadable block set it aside (read.unreadable)
// instead of failing its member at once: user reads, scrubs, resyncs,
// parity rebuild runs and all of a mirror's maintenance may read around it; a
// parity write's read of old data keeps the member when the group needs it
// (correctable_unreadable).
static bool sets_unreadable_aside(const Op* op) {
  if (op->kind == OpKind::Read || op->kind == OpKind::DegradedRead || op->kind == OpKind::ParityWrite ||
      op->kind == OpKind::MirrorFix)
    return true;
  if (op->kind != OpKind::Maintenance) return false;
  const Volume::Maintenance k = op->maint.kind;
  if (k == Volume::Maintenance::Scrub || k == Volume::Maintenance::ScrubRepair) return true;
  // Mirrors read another copy (ops/maintenance.cpp), an init rebuilds it
  // from the parity; parity rebuilds in runs.
  if (op->vol->geometry().is_mirror() || k == Volume::Maintenance::Resync) return true;
  return k == Volume::Maintenance::Rebuild && op->maint.run;
}

static void member_io_done(MemberIo* io) {
  Op* op = static_cast<Op*>(io->ctx);
  if (io->res < 0 && io->kind == MemberIo::Read && io->drive_index == io->tag && medium_error(io->res) &&
      sets_unreadable_aside(op)) {
    op->read.unreadable |= 1ull << io->tag;  // the read's end: read around it, or fail the member
  } else if (io->res < 0) {
    op->errored |= 1ull << io->tag;
    op->io_err = io->res;
    // A member in the spare room: the drive that took its I/O failed.
    if (io->drive_index != io->tag) op->vol->member_error(io->drive_index, io->res);
  } else if (io->kind == MemberIo::Write) {
    // Counted while any stripe may be degraded: a member failed, or one
    // being rebuilt (stripes past its checkpoint still stand in for it).
    // By the drive that took it: a flush of that member makes it durable.
    if (op->vol->unusable_mask()) op->vol->durability().wrote(io->drive_index);
  } else if (io->kind == MemberIo::Flush) {
    op->vol->durability().flushed(io->tag, io->flush_upto);
  }
  op->home->free_io(io);
  GPR_ASSERT(op->pending > 0 && op->phase_done, "op %p: a member I/O completed outside a phase", (void*)op);
  if (--op->pending == 0) op->phase_done(op);
}

void begin_phase(Op* op, void (*done)(Op*)) {
  GPR_ASSERT(op->pending == 0, "op %p begins a phase with %u member I/Os of the last one pending", (void*)op,
             op->pending);
  // A medium error set aside is handled by the phase that met it: never dropped.
  GPR_ASSERT(op->read.unreadable == 0, "op %p (kind %d) left unreadable blocks of members %llx unhandled", (void*)op,
             int(op->kind), (unsigned long long)op->read.unreadable);
  op->phase_done = done;
  op->errored = 0;
  op->pending = 1;  // held until end_issue(): completions cannot end the phase early
}

void end_issue(Op* op) {
  GPR_ASSERT(op->pending > 0, "op %p ends the issue of a phase it did not begin", (void*)op);
  if (--op->pending == 0) op->phase_done(op);
}

uint64_t member_off(const Volume* v, uint64_t stripe, uint32_t col) {
  return v->data_offset() + v->geometry().member_offset(stripe) + col;
}

MemberIo* prepare_member_io(Op* op, uint32_t member, MemberIo::Kind kind, uint64_t moff,
                            bool dsync) {
  MemberIo* io = op->home->alloc_io();
  io->kind = kind;
  io->drive = op->vol->member(member);
  io->slot = op->vol->member_slot(member);
  io->offset = moff;
  io->len = 0;
  io->dsync = dsync;
  io->tag = member;
  io->drive_index = member;
  if (__builtin_expect(op->vol->room_mask() >> member & 1, 0) && kind != MemberIo::Flush)
    op->vol->route_to_room(io, member,
                           kind == MemberIo::Write && op->kind == OpKind::Maintenance &&
                               op->maint.kind == Volume::Maintenance::Rebuild);
  io->ctx = op;
  io->done = member_io_done;
  if (kind == MemberIo::Flush) io->flush_upto = op->vol->durability().written(member);
  return io;
}

void issue_prepared(Op* op, MemberIo* io) {
  // Redundant writes are ordered per stripe (RAID 0 writes hold no lock).
  GPR_ASSERT(io->kind != MemberIo::Write || op->holds_lock || op->kind == OpKind::DirectWrite,
             "op %p (kind %d) writes member %u of stripe %llu without holding the stripe's lock", (void*)op,
             int(op->kind), io->tag, (unsigned long long)op->stripe);
  if (io->kind == MemberIo::Read) op->used |= 1ull << io->tag;
  op->pending++;
  op->home->submit(io);
}

void issue_member_io(Op* op, uint32_t member, MemberIo::Kind kind, uint64_t moff, uint8_t* buf,
                     uint32_t len, bool dsync) {
  MemberIo* io = prepare_member_io(op, member, kind, moff, dsync);
  io->buf = buf;
  io->len = len;
  issue_prepared(op, io);
}

uint8_t* user_ptr(const Op* op, uint64_t stripe, uint32_t i, uint32_t col) {
  const Geometry& g = op->vol->geometry();
  uint64_t logical = stripe * g.stripe_data_bytes() + uint64_t(i) * g.strip_bytes + col;
  return op->buf + (logical - op->off);
}

// Whether two member offsets lie in one row of strips.
static bool same_row(const Volume* v, uint64_t a, uint64_t b) {
  const uint32_t strip = v->geometry().strip_bytes;
  return (a - v->data_offset()) / strip == (b - v->data_offset()) / strip;
}

void RunBuilder::add(uint32_t member, uint64_t moff, uint8_t* p, uint32_t len) {
  MemberIo* io = (open_mask_ >> member & 1) ? open_[member] : nullptr;
  if (io && (io->offset + io->len != moff || io->len + len > io->drive->max_io_bytes() || io->iov.size() >= 256 ||
             ((op_->vol->room_mask() >> member & 1) && !same_row(op_->vol, io->offset, moff)))) {  // the room: a row each
    close(member);
    io = nullptr;
  }
  if (!io) {
    io = open_[member] = prepare_member_io(op_, member, kind_, moff, dsync_);
    open_mask_ |= 1ull << member;
  } else if (io->iov.empty()) {
    io->iov.push_back({io->buf, io->len});  // second piece: switch to iovecs
    io->buf = nullptr;
  }
  if (io->len == 0) io->buf = p;
  else io->iov.push_back({p, len});
  io->len += len;
}

void RunBuilder::close(uint32_t member) {
  if (!(open_mask_ >> member & 1)) return;
  open_mask_ &= ~(1ull << member);
  MemberIo* io = open_[member];
  // Pieces that turned out adjacent in memory too go back to one buffer.
  if (!io->iov.empty()) {
    bool contiguous = true;
    for (size_t i = 1; i < io->iov.size() && contiguous; i++)
      contiguous = static_cast<uint8_t*>(io->iov[i - 1].iov_base) + io->iov[i - 1].iov_len ==
                   io->iov[i].iov_base;
    if (contiguous) {
      io->buf = static_cast<uint8_t*>(io->iov[0].iov_base);
      io->iov.clear();
    }
  }
  issue_prepared(op_, io);
}

void RunBuilder::flush() {
  while (open_mask_) close(uint32_t(__builtin_ctzll(open_mask_)));
}

uint8_t* op_buffer(Op* op, uint32_t len) {
  uint8_t* p = op->home->pool().get(len);
  if (p) op->bufs.push_back({p, len});
  return p;
}

void release_buffers(Op* op) {
  if (op->bufs.empty()) return;
  for (auto& b : op->bufs) op->home->pool().put(b.p, b.len);
  op->bufs.clear();
  op->home->buffers_freed();
}

void wait_buffers(Op* op, void (*retry)(Op*)) {
  release_buffers(op);
  op->resume_fn = retry;
  op->task.run = run_resume;
  op->task.arg = op;
  op->home->wait_for_buffers(&op->task);
}

bool absorb_errors(Op* op) {
  for (uint64_t e = op->errored; e; e &= e - 1)
    op->vol->member_error(uint32_t(__builtin_ctzll(e)), op->io_err < 0 ? op->io_err : -EIO);
  op->errored = 0;
  return !op->vol->failed();
}

bool lock_stripe(Op* op, void (*resume)(Op*)) {
  op->lock_resume = resume;
  if (op->vol->locks().acquire(&op->lock, op->stripe)) {
    op->holds_lock = true;
    return true;
  }
  return false;
}

void unlock_stripe(Op* op) {
  if (!op->holds_lock) return;
  op->holds_lock = false;
  StripeLockNode* next = op->vol->locks().release(&op->lock);
  if (next) {
    Op* w = static_cast<Op*>(next->owner);
    GPR_ASSERT(!w->holds_lock && w->lock_resume, "op %p handed stripe %llu it already holds or never waited for",
               (void*)w, (unsigned long long)w->stripe);
    w->holds_lock = true;
    resume_on_home(w, w->lock_resume);
  }
}

// The bitmap's worker: the region's bit is on disk (or failed there).
static void intent_ready(IntentWait* w, uint64_t failed) {
  Op* op = static_cast<Op*>(w->owner);
  op->intent_failed = failed;
  resume_on_home(op, [](Op* o) {
    if (o->intent_failed) {
      o->errored = o->intent_failed;
      o->io_err = -EIO;
      o->intent_failed = 0;
      o->intent_ok = absorb_errors(o);
    } else {
      o->intent_ok = true;
    }
    o->intent_then(o);
  });
}

void begin_write_intent(Op* op, void (*then)(Op*)) {
  op->intent_held = true;
  op->intent_ok = true;
  if (!op->vol->hooks.write_begin) return then(op);
  GPR_ASSERT(op->errored == 0, "op %p takes the write intent with member errors not yet absorbed", (void*)op);
  op->intent_then = then;
  op->intent_wait.ready = intent_ready;
  op->intent_wait.owner = op;
  if (op->vol->hooks.write_begin(op->stripe, op->home->id(), &op->intent_wait)) return then(op);
}

void release_write_intent(Op* op) {
  if (!op->intent_held) return;
  op->intent_held = false;
  if (op->vol->hooks.write_end) op->vol->hooks.write_end(op->stripe, op->home->id());
}

uint64_t correctable_unreadable(Op* op, bool read_around) {
  uint64_t keep = op->read.unreadable;
  op->read.unreadable = 0;
  for (uint64_t u = keep; u; u &= u - 1) {
    const uint32_t m = uint32_t(__builtin_ctzll(u));
    if (read_around && op->vol->may_correct(m, keep)) continue;
    keep &= ~(1ull << m);
    if (op->vol->needs_member(m)) {
      unreadable_uncorrected(op, 1ull << m, false);
      continue;
    }
    op->errored |= 1ull << m;
    op->io_err = -ENODATA;
  }
  return keep;
}

void unreadable_uncorrected(Op* op, uint64_t members, bool parity_untrusted) {
  op->read.uncorrectable = true;
  for (uint64_t u = members; u; u &= u - 1) {
    bump(counters_of(op).uncorrectable_reads);
    op->vol->read_uncorrectable(uint32_t(__builtin_ctzll(u)), op->stripe, parity_untrusted);
  }
}

void make_recover_job(ParityJob& j, const Codec& c, uint32_t len, uint64_t src_roles, uint8_t* const* src,
                      uint64_t dst_roles, uint8_t* const* dst) {
  j.op = ParityOp::Recover;
  j.codec = &c;
  j.len = len;
  j.nsrc = j.ndst = 0;
  for (uint64_t s = src_roles; s; s &= s - 1) {
    uint32_t role = uint32_t(__builtin_ctzll(s));
    j.src[j.nsrc] = src[role];
    j.src_idx[j.nsrc++] = uint8_t(role);
  }
  for (uint64_t d = dst_roles; d; d &= d - 1) {
    uint32_t role = uint32_t(__builtin_ctzll(d));
    j.dst[j.ndst] = dst[role];
    j.dst_idx[j.ndst++] = uint8_t(role);
  }
}

void strip_ranges(const Geometry& g, uint64_t stripe, uint64_t off, uint64_t len, StripRange* out) {
  const uint32_t k = g.data_strips();
  const uint64_t base = stripe * g.stripe_data_bytes();
  for (uint32_t i = 0; i < k; i++)
    out[i] = range_in_strip(base + uint64_t(i) * g.strip_bytes, g.strip_bytes, off, off + len);
}

StripRange own_range(const Op* op, const Op* c, uint32_t i) {
  if (c != op || !op->rider_head) return c->ranges[i];
  const Geometry& g = op->vol->geometry();
  return range_in_strip(op->stripe * g.stripe_data_bytes() + uint64_t(i) * g.strip_bytes, g.strip_bytes, c->off,
                        c->off + c->len);
}

}  // namespace gpuraid
