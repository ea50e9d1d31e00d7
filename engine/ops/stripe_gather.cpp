#include "engine/ops/stripe_gather.h"

#include "engine/invariant.h"
#include "engine/ops/op.h"

namespace gpuraid {

bool StripeGather::note_request(uint64_t off, uint64_t len) {
  for (uint64_t& end : stream_end_) {
    if (end != off || off == 0) continue;
    end = off + len;
    return true;
  }
  stream_end_[next_slot_] = off + len;
  next_slot_ = (next_slot_ + 1) % kStreams;
  return false;
}

// How many of the op's data strips, from the first, it writes whole.
static uint32_t whole_strips(const Op* op) {
  const Geometry& g = op->vol->geometry();
  uint32_t i = 0;
  while (i < g.data_strips() && op->ranges[i].a == 0 && op->ranges[i].b == g.strip_bytes) i++;
  return i;
}

static bool stripe_full(const Op* op) { return whole_strips(op) == op->vol->geometry().data_strips(); }

// The op's bytes are a head [0, x) of its stripe, short of the whole: the
// stream it belongs to goes on in this stripe.
bool StripeGather::qualifies(const Op* op) const {
  if (hold_ns_ == 0 || !op->req->stream || op->fua) return false;
  const uint32_t k = op->vol->geometry().data_strips(), i = whole_strips(op);
  if (i == k) return false;  // full already
  if (!op->ranges[i].empty() && op->ranges[i].a != 0) return false;
  for (uint32_t j = i + 1; j < k; j++)
    if (!op->ranges[j].empty()) return false;
  return i > 0 || !op->ranges[0].empty();
}

// Held ops and the riders of this reactor they carry: none of them moves
// until a held op goes on. With weigh_parts_, each counts with the other
// parts of its request (a request over two stripes): those cannot complete
// the request while this part waits, so their completions bring the
// submitter no new request either. Counted as if they were all ours: more
// weight only releases sooner.
uint32_t StripeGather::held_weight() const {
  uint32_t w = 0;
  auto weight = [&](const Op* o) { return weigh_parts_ ? o->req->parts_left : 1u; };
  for (const Op* h = head_; h; h = h->held_next) {
    w += weight(h);
    for (const Op* rd = h->rider_head; rd; rd = rd->rider_next)
      if (rd->home == r_) w += weight(rd);
  }
  return w;
}

bool StripeGather::try_hold(Op* op, void (*go)(Op*)) {
  if (!qualifies(op)) return false;
  go_ = go;
  op->held_next = nullptr;
  if (tail_) tail_->held_next = op;
  else head_ = op;
  tail_ = op;
  bump(counters_of(op).*held_);
  op->task.run = expired;
  op->task.arg = op;
  r_->defer_until(&op->task, r_->turn_ns() + hold_ns_);
  release_if_idle();
  return true;
}

void StripeGather::unlink(Op* op) {
  Op** pp = &head_;
  Op* prev = nullptr;
  while (*pp != op) {
    GPR_ASSERT(*pp, "op %p (stripe %llu) is not held", (void*)op, (unsigned long long)op->stripe);
    prev = *pp;
    pp = &(*pp)->held_next;
  }
  *pp = op->held_next;
  if (tail_ == op) tail_ = prev;
  op->held_next = nullptr;
}

void StripeGather::release(Op* op) {
  const bool was_timed = r_->cancel_timed(&op->task);
  GPR_ASSERT(was_timed, "held op %p (stripe %llu) had no hold timer", (void*)op, (unsigned long long)op->stripe);
  unlink(op);
  resume_on_home(op, go_);  // next turn: never inside the caller's completion or split
}

void StripeGather::expired(Task* t) {
  Op* op = static_cast<Op*>(t->arg);
  StripeGather& g = *gather_of(op);
  g.unlink(op);
  bump(counters_of(op).held_expired);
  g.go_(op);
}

void StripeGather::release_if_idle() {
  if (head_ && live_ <= held_weight())
    while (head_) release(head_);
}

void StripeGather::op_finished() {
  GPR_ASSERT(live_ > 0, "an op finished that never started (gathering)");
  live_--;
  release_if_idle();
}

void StripeGather::scan() {
  for (Op* op = head_; op;) {
    Op* next = op->held_next;
    const bool waited_for = take_riders(op, merged_);
    // A FUA rider (take_riders passed its FUA on) wants its write durable now.
    if (waited_for || stripe_full(op) || op->fua) release(op);
    op = next;
  }
  release_if_idle();
}

}  // namespace gpuraid
