#include "engine/ops/op_pool.h"

#include "engine/invariant.h"
#include "engine/ops/op.h"

namespace gpuraid {

OpPool::OpPool(Volume* v, Reactor* r, uint32_t capacity, uint32_t reserve, uint64_t gather_hold_ns)
    : vol_(v),
      r_(r),
      capacity_(capacity),
      reserve_(reserve),
      write_gather_(r, gather_hold_ns, &VolumeStats::merged_writes, &VolumeStats::held_writes, false),
      read_gather_(r, gather_hold_ns, &VolumeStats::merged_reads, &VolumeStats::held_reads, true) {
  GPR_ASSERT(reserve < capacity, "op pool of %u with a reserve of %u", capacity, reserve);
  resume_.arg = this;
  resume_.run = on_ops_back;
}

OpPool::~OpPool() {
  GPR_ASSERT(!wait_head_ && !resume_.is_queued(), "op pool destroyed with requests parked");
  GPR_ASSERT(!write_gather_.holding() && !read_gather_.holding(), "op pool destroyed with ops held");
  while (free_) {
    Op* n = free_->next_free;
    delete free_;
    free_ = n;
  }
}

Op* OpPool::get(OpClass c) {
  const uint32_t limit = c == OpClass::Foreground ? capacity_ - reserve_ : capacity_;
  if (c != OpClass::Retry && in_use_ >= limit) return nullptr;
  Op* op = free_;
  if (op) {
    GPR_ASSERT(op->in_pool, "op %p on the free list is in use", (void*)op);
    free_ = op->next_free;
    op->in_pool = false;
  } else {
    op = new Op();  // made on demand, up to the capacity (and retries), then recycled
    op->bufs.reserve(2 * kMaxMembers);
    made_++;
  }
  op->next_free = nullptr;
  in_use_++;
  if (in_use_ > peak_) peak_ = in_use_;
  return op;
}

void OpPool::put(Op* op) {
  GPR_ASSERT(!op->in_pool, "op %p freed twice", (void*)op);
  GPR_ASSERT(op->pending == 0 && !op->holds_lock && op->bufs.empty(),
             "op %p freed with %u member I/Os pending, lock %s, %zu buffers", (void*)op, op->pending,
             op->holds_lock ? "held" : "free", op->bufs.size());
  op->in_pool = true;
  op->next_free = free_;
  free_ = op;
  in_use_--;
  // Not inline: put() runs inside completions that must not re-enter a split.
  if (wait_head_ && !resume_.is_queued()) r_->defer(&resume_);
}

void OpPool::park(IoRequest* req, bool front) {
  req->wait_next = nullptr;
  if (!wait_head_) {
    wait_head_ = wait_tail_ = req;
  } else if (front) {
    req->wait_next = wait_head_;
    wait_head_ = req;
  } else {
    wait_tail_->wait_next = req;
    wait_tail_ = req;
  }
}

void OpPool::on_ops_back(Task* t) {
  OpPool* p = static_cast<OpPool*>(t->arg);
  while (IoRequest* req = p->wait_head_) {
    p->wait_head_ = req->wait_next;
    if (!p->wait_head_) p->wait_tail_ = nullptr;
    if (!p->vol_->split(*p->r_, req)) {
      p->park(req, true);  // still first in line
      return;
    }
  }
}

}  // namespace gpuraid
