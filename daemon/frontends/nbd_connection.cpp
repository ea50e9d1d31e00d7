#include "daemon/frontends/nbd_connection.h"
#include "daemon/frontends/frontend_log.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "daemon/frontends/nbd_proto.h"
#include "daemon/frontends/nbd_share.h"

namespace gpuraid {

using namespace nbd;

namespace {
constexpr size_t kRecvBuf = 256 << 10;
constexpr size_t kMaxBatch = 64;  // replies per sendmsg
// After a write at least this large, the next header is received alone, so
// that a large payload behind it goes straight into its buffer instead of
// being copied out of the receive buffer (measured: a user-space memcpy of
// ~8% of the serving CPU at 128K sequential writes). Smaller writes keep
// the batched receive, whose copy costs less than an extra receive.
constexpr uint32_t kLargeWrite = 32 << 10;
}

NbdConnection::NbdConnection(int fd, Reactor& r, BlockTarget* t, const NbdExportInfo& ex,
                             uint64_t max_inflight_bytes, std::function<void()> on_closed)
    : fd_(fd),
      r_(r),
      t_(t),
      ex_(ex),
      on_closed_(std::move(on_closed)),
      reqs_(kMaxInflight),
      max_inflight_bytes_(std::min<uint64_t>(max_inflight_bytes, r.pool().size() / 2)),
      share_(NbdShare::of(r)),
      rbuf_(kRecvBuf) {
  for (auto& q : reqs_) {
    q.conn = this;
    q.next = free_;
    free_ = &q;
  }
  recv_hook_ = {{on_recv_cqe}, this};
  send_hook_ = {{on_send_cqe}, this};
  start_task_ = {on_start, this, nullptr};
  buf_task_ = {on_buffers, this, nullptr};
  send_retry_task_ = {on_send_retry, this, nullptr};
  drain_task_ = {on_drain, this, nullptr};
  idle_task_ = {on_close_if_idle, this, nullptr};
  dispose_task_ = {on_dispose, this, nullptr};
  iov_.resize(kMaxBatch * 2);
  batch_.reserve(kMaxBatch);
}

NbdConnection::~NbdConnection() {
  std::lock_guard<std::mutex> g(fd_mu_);
  if (fd_open_) close(fd_);
}

void NbdConnection::start() { r_.post(&start_task_); }

void NbdConnection::kill() {
  std::lock_guard<std::mutex> g(fd_mu_);
  if (fd_open_) shutdown(fd_, SHUT_RDWR);  // pending recv/send complete; the reactor closes
}

void NbdConnection::dispose(std::unique_ptr<NbdConnection> c) {
  NbdConnection* p = c.release();
  p->r_.post(&p->dispose_task_);
}

void NbdConnection::on_dispose(Task* t) { delete static_cast<NbdConnection*>(t->arg); }

void NbdConnection::on_start(Task* t) {
  auto* c = static_cast<NbdConnection*>(t->arg);
  c->share_.join();
  c->joined_ = true;
  c->pump();
}

void NbdConnection::drain() { r_.post(&drain_task_); }

void NbdConnection::on_drain(Task* t) {
  auto* c = static_cast<NbdConnection*>(t->arg);
  if (c->closing_) return;
  c->draining_ = true;
  c->pump();
}

void NbdConnection::close_if_idle() { r_.post(&idle_task_); }

void NbdConnection::on_close_if_idle(Task* t) {
  auto* c = static_cast<NbdConnection*>(t->arg);
  // Nothing in flight, nothing half received: an idle client (or a told one
  // that went quiet without disconnecting).
  if (c->draining_ && !c->closing_ && c->inflight_ == 0 && c->rx_ == RxState::Header &&
      c->rtail_ == c->rhead_)
    c->begin_close(nullptr);
}

void NbdConnection::on_buffers(Task* t) {
  auto* c = static_cast<NbdConnection*>(t->arg);
  c->buf_wait_ = false;
  if (c->closing_) c->maybe_finish();
  else c->pump();
}

// Parses what has arrived, as far as requests and buffers allow, then
// keeps a receive armed.
void NbdConnection::pump() {
  while (!closing_ && !disconnecting_ && !buf_wait_) {
    const size_t avail = rtail_ - rhead_;
    if (rx_ == RxState::Header) {
      if (avail < kRequestBytes || !free_) break;
      if (!parse_header()) break;
    } else if (rx_ == RxState::Payload) {
      const size_t n = std::min<size_t>(avail, cur_->len - have_);
      memcpy(cur_->buf + have_, rbuf_.data() + rhead_, n);
      rhead_ += n;
      have_ += uint32_t(n);
      if (have_ < cur_->len) break;
      rx_ = RxState::Header;
      submit_io(cur_, IoRequest::Write);
      cur_ = nullptr;
    } else {
      const size_t n = std::min<uint64_t>(avail, discard_left_);
      rhead_ += n;
      discard_left_ -= n;
      if (discard_left_) break;
      rx_ = RxState::Header;
      reply(cur_, cur_->error);
      cur_ = nullptr;
    }
  }
  // Draining: a client that was told (NBD_ESHUTDOWN) is not closed under it:
  // requests it sent before it read the reply would go unanswered (libnbd
  // then fails them as a dead connection, not as the shutdown). Every further
  // request gets NBD_ESHUTDOWN too until the client disconnects, or the
  // server's drain closes it once quiet (close_if_idle) or at its limit.
  if (disconnecting_ && inflight_ == 0 && !closing_) begin_close(nullptr);
  arm_recv();
}

uint32_t NbdConnection::check(uint64_t off, uint32_t len, bool write) const {
  if (len == 0 || (off | len) % ex_.min_block) return kEINVAL;
  if (len > ex_.max_block) return kEOVERFLOW;
  if (off > ex_.size || len > ex_.size - off) return write ? kENOSPC : kEINVAL;
  return 0;
}

bool NbdConnection::parse_header() {
  const uint8_t* h = rbuf_.data() + rhead_;
  if (get32(h) != kRequestMagic) {
    begin_close("bad request magic");
    return false;
  }
  const uint16_t flags = get16(h + 4), type = get16(h + 6);
  const uint64_t handle = get64(h + 8), off = get64(h + 16);
  const uint32_t len = get32(h + 24);
  Req* q = free_;
  q->type = type;
  q->flags = flags;
  q->handle = handle;
  q->offset = off;
  q->len = len;
  q->buf = nullptr;
  q->error = 0;
  const bool data = type == kCmdRead || type == kCmdWrite;
  large_writes_ = type == kCmdWrite && len >= kLargeWrite;
  const uint32_t bad = data ? check(off, len, type == kCmdWrite) : 0;
  // Draining: nothing new is served (a write's payload is skipped).
  const uint32_t refuse = draining_ && type != kCmdDisc ? uint32_t(kESHUTDOWN) : 0;
  if (type == kCmdWrite && (bad || refuse) && len > kMaxDiscardBytes) {
    begin_close("write far larger than the maximum block size");
    return false;
  }
  if (data && !bad && !refuse) {
    switch (share_.admit(inflight_bytes_, len, max_inflight_bytes_)) {
      case NbdShare::kOverShare:
        // Over this connection's share: the header stays unparsed (so the
        // socket is not read) until a reply frees bytes (release).
        bytes_wait_ = true;
        return false;
      case NbdShare::kBudgetFull:
        // The reactor's connections hold their whole budget: retry once any
        // of them frees buffers (release).
        buf_wait_ = true;
        r_.wait_for_buffers(&buf_task_);
        return false;
      case NbdShare::kAdmit:
        break;
    }
    q->buf = r_.pool().get(len);
    if (!q->buf) {
      // Arena used up: leave the header unparsed and retry once buffers are freed.
      buf_wait_ = true;
      r_.wait_for_buffers(&buf_task_);
      return false;
    }
    inflight_bytes_ += len;
    share_.take(len);
  }
  rhead_ += kRequestBytes;
  free_ = q->next;
  inflight_++;
  if (refuse) {
    if (type == kCmdWrite) {
      q->error = refuse;
      cur_ = q;
      discard_left_ = len;
      rx_ = RxState::Discard;
    } else {
      reply(q, refuse);
    }
    return true;
  }
  switch (type) {
    case kCmdRead:
      if (bad) reply(q, bad);
      else submit_io(q, IoRequest::Read);
      break;
    case kCmdWrite:
      if (bad) {
        // The payload follows the header whatever we think of it: skip it.
        q->error = bad;
        cur_ = q;
        discard_left_ = len;
        rx_ = RxState::Discard;
      } else {
        cur_ = q;
        have_ = 0;
        rx_ = RxState::Payload;
      }
      break;
    case kCmdFlush:
      submit_io(q, IoRequest::Flush);
      break;
    case kCmdTrim:
    case kCmdWriteZeroes: {
      const bool trim = type == kCmdTrim;
      uint64_t a = off, e = off + len;
      if (len == 0 || off > ex_.size || len > ex_.size - off) {
        reply(q, trim ? kEINVAL : kENOSPC);
        break;
      }
      if (trim) {
        // Advisory: only whole blocks inside the range are zeroed.
        a = (a + ex_.min_block - 1) / ex_.min_block * ex_.min_block;
        e = e / ex_.min_block * ex_.min_block;
        if (e <= a) {
          reply(q, 0);
          break;
        }
      } else if ((off | len) % ex_.min_block) {
        reply(q, kEINVAL);
        break;
      }
      int rc = q->zero.start(t_, r_, a, e - a, flags & kCmdFlagFua, on_zero_done, q);
      if (rc) reply(q, wire_error(rc));
      break;
    }
    case kCmdDisc:
      // Finish what is in flight, answer it, then close.
      inflight_--;
      q->next = free_;
      free_ = q;
      disconnecting_ = true;
      return false;
    default:
      reply(q, kEINVAL);
  }
  return true;
}

void NbdConnection::submit_io(Req* q, IoRequest::Op op) {
  q->io = IoRequest{};
  q->io.op = op;
  q->io.fua = op == IoRequest::Write && (q->flags & kCmdFlagFua);
  q->io.offset = q->offset;
  q->io.length = op == IoRequest::Flush ? 0 : q->len;
  q->io.buf = q->buf;
  q->io.done = on_io_done;
  q->io.ctx = q;
  int rc = t_->submit(r_, &q->io);
  if (rc) reply(q, wire_error(rc));
}

void NbdConnection::on_io_done(IoRequest* io) {
  auto* q = static_cast<Req*>(io->ctx);
  q->conn->reply(q, wire_error(io->result));
}

void NbdConnection::on_zero_done(void* ctx, int result) {
  auto* q = static_cast<Req*>(ctx);
  q->conn->reply(q, wire_error(result));
}

void NbdConnection::reply(Req* q, uint32_t error) {
  if (closing_) {
    release(q);
    maybe_finish();
    return;
  }
  q->error = error;
  put32(q->reply, kSimpleReplyMagic);
  put32(q->reply + 4, error);
  put64(q->reply + 8, q->handle);
  q->next = nullptr;
  if (sendq_tail_) sendq_tail_->next = q;
  else sendq_head_ = q;
  sendq_tail_ = q;
  kick_send();
}

void NbdConnection::kick_send() {
  if (send_pending_ || !sendq_head_ || closing_) return;
  io_uring_sqe* sqe = r_.sqe_for(&send_hook_.c);
  if (!sqe) {
    if (!send_retry_queued_) {
      send_retry_queued_ = true;
      r_.defer(&send_retry_task_);
    }
    return;
  }
  batch_.clear();
  size_t n = 0;
  while (sendq_head_ && batch_.size() < kMaxBatch) {
    Req* q = sendq_head_;
    sendq_head_ = q->next;
    batch_.push_back(q);
    iov_[n++] = {q->reply, kReplyBytes};
    if (q->type == kCmdRead && q->error == 0) iov_[n++] = {q->buf, q->len};
  }
  if (!sendq_head_) sendq_tail_ = nullptr;
  iov_at_ = 0;
  msg_ = msghdr{};
  msg_.msg_iov = iov_.data();
  msg_.msg_iovlen = n;
  io_uring_prep_sendmsg(sqe, fd_, &msg_, MSG_NOSIGNAL);
  send_pending_ = true;
}

void NbdConnection::on_send_retry(Task* t) {
  auto* c = static_cast<NbdConnection*>(t->arg);
  c->send_retry_queued_ = false;
  if (c->closing_) c->maybe_finish();
  else c->kick_send();
}

void NbdConnection::on_send_cqe(Completion* cc, const io_uring_cqe* cqe) {
  auto* c = reinterpret_cast<Hook*>(cc)->self;
  c->send_pending_ = false;
  if (cqe->res <= 0) {
    for (Req* q : c->batch_) c->release(q);
    c->batch_.clear();
    c->begin_close(cqe->res == 0 ? nullptr : "send failed");
    return;
  }
  // Advance over what went out; a short send resends the rest first.
  size_t left = size_t(cqe->res);
  while (left && c->iov_at_ < c->msg_.msg_iovlen) {
    iovec& v = c->iov_[c->iov_at_];
    const size_t k = std::min(left, v.iov_len);
    v.iov_base = static_cast<uint8_t*>(v.iov_base) + k;
    v.iov_len -= k;
    left -= k;
    if (v.iov_len == 0) c->iov_at_++;
  }
  if (c->iov_at_ < c->msg_.msg_iovlen && !c->closing_) {
    io_uring_sqe* sqe = c->r_.sqe_for(&c->send_hook_.c);
    if (sqe) {
      c->msg_.msg_iov = c->iov_.data() + c->iov_at_;
      c->msg_.msg_iovlen -= c->iov_at_;
      c->iov_at_ = 0;
      // Keep iov_ indices aligned with msg_iov for the next advance.
      std::copy(c->msg_.msg_iov, c->msg_.msg_iov + c->msg_.msg_iovlen, c->iov_.begin());
      c->msg_.msg_iov = c->iov_.data();
      io_uring_prep_sendmsg(sqe, c->fd_, &c->msg_, MSG_NOSIGNAL);
      c->send_pending_ = true;
      return;
    }
    c->begin_close("no SQE to finish a reply");
  }
  const bool was_full = !c->free_ || c->bytes_wait_;
  for (Req* q : c->batch_) c->release(q);
  c->batch_.clear();
  if (c->closing_) {
    c->maybe_finish();
    return;
  }
  c->kick_send();
  if (was_full || c->disconnecting_ || c->draining_) c->pump();
}

void NbdConnection::release(Req* q) {
  if (q->buf) {
    r_.pool().put(q->buf, q->len);
    q->buf = nullptr;
    inflight_bytes_ -= q->len;
    share_.give(q->len);
    bytes_wait_ = false;  // the caller pumps (on_send_cqe) or is closing
    r_.buffers_freed();
  }
  q->next = free_;
  free_ = q;
  inflight_--;
}

void NbdConnection::arm_recv() {
  if (recv_pending_ || closing_ || disconnecting_ || buf_wait_) return;
  if (rx_ == RxState::Header && rtail_ - rhead_ >= kRequestBytes) return;  // waiting for a free request
  io_uring_sqe* sqe = r_.sqe_for(&recv_hook_.c);
  if (!sqe) return;  // the ring is full: the next completion pumps again
  if (rx_ == RxState::Payload && rhead_ == rtail_ && cur_->len - have_ >= 4096) {
    // A large payload goes straight into its buffer.
    recv_direct_ = true;
    io_uring_prep_recv(sqe, fd_, cur_->buf + have_, cur_->len - have_, 0);
  } else {
    if (rhead_ == rtail_) rhead_ = rtail_ = 0;
    else if (rhead_ > rbuf_.size() / 2) {
      memmove(rbuf_.data(), rbuf_.data() + rhead_, rtail_ - rhead_);
      rtail_ -= rhead_;
      rhead_ = 0;
    }
    recv_direct_ = false;
    size_t want = rbuf_.size() - rtail_;
    if (rx_ == RxState::Header && large_writes_) want = std::min(want, kRequestBytes - (rtail_ - rhead_));
    io_uring_prep_recv(sqe, fd_, rbuf_.data() + rtail_, want, 0);
  }
  recv_pending_ = true;
}

void NbdConnection::on_recv_cqe(Completion* cc, const io_uring_cqe* cqe) {
  auto* c = reinterpret_cast<Hook*>(cc)->self;
  c->recv_pending_ = false;
  if (cqe->res <= 0) {
    if (cqe->res == -EINTR || cqe->res == -EAGAIN) {
      c->pump();
      return;
    }
    // EOF without NBD_CMD_DISC (or a reset): in-flight work is dropped.
    c->begin_close(cqe->res == 0 || c->closing_ ? nullptr : "receive failed");
    return;
  }
  if (c->recv_direct_) c->have_ += uint32_t(cqe->res);
  else c->rtail_ += size_t(cqe->res);
  if (c->recv_direct_ && c->have_ == c->cur_->len) {
    c->rx_ = RxState::Header;
    c->submit_io(c->cur_, IoRequest::Write);
    c->cur_ = nullptr;
  }
  c->pump();
}

void NbdConnection::begin_close(const char* why) {
  if (why) frontend_log("nbd: closing a connection to '%s': %s\n", ex_.name.c_str(), why);
  if (!closing_) {
    closing_ = true;
    kill();  // completes a pending recv/send
    // Replies not yet sent are dropped.
    while (sendq_head_) {
      Req* q = sendq_head_;
      sendq_head_ = q->next;
      release(q);
    }
    sendq_tail_ = nullptr;
  }
  maybe_finish();
}

void NbdConnection::maybe_finish() {
  if (closing_ && cur_ && !recv_pending_) {
    // A write whose payload never fully arrived (its buffer is free of the kernel now).
    release(cur_);
    cur_ = nullptr;
  }
  if (!closing_ || recv_pending_ || send_pending_ || inflight_ || buf_wait_ || send_retry_queued_) return;
  if (closed_.load(std::memory_order_relaxed)) return;
  {
    std::lock_guard<std::mutex> g(fd_mu_);
    close(fd_);
    fd_open_ = false;
  }
  if (joined_) share_.leave();
  joined_ = false;
  closed_.store(true, std::memory_order_release);
  on_closed_();  // the owner may free this object from now on (not from this call)
}

}  // namespace gpuraid
