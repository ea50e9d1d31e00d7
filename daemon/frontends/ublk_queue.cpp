#include "daemon/frontends/ublk_queue.h"
#include "daemon/frontends/frontend_log.h"

#include <sys/mman.h>
#include <sys/prctl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace gpuraid {

namespace {
size_t page_round(size_t n) { return (n + 4095) & ~size_t(4095); }
}

UblkQueue::UblkQueue(int cdev_fd, uint16_t qid, uint32_t depth, uint32_t buf_bytes, Reactor& r, BlockTarget* t)
    : fd_(cdev_fd), qid_(qid), depth_(depth), buf_bytes_(buf_bytes), r_(r), target_(t), tags_(depth) {
  descs_len_ = page_round(size_t(depth) * sizeof(ublk::IoDesc));
  void* d = mmap(nullptr, descs_len_, PROT_READ, MAP_SHARED | MAP_POPULATE, fd_, off_t(ublk::desc_mmap_offset(qid)));
  if (d != MAP_FAILED) descs_ = static_cast<const ublk::IoDesc*>(d);
  // One server buffer per tag (the kernel copies WRITE data in before the
  // CQE and READ data out at COMMIT); pages are only touched when used.
  bufs_len_ = size_t(depth) * buf_bytes;
  void* b = mmap(nullptr, bufs_len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (b != MAP_FAILED) bufs_ = static_cast<uint8_t*>(b);
  // A request's data is where the engine computes parity from (a write
  // covering whole strips) and recovers into (a degraded read): a GPU backend
  // maps these buffers too, or such jobs take its staged path.
  std::string why;
  if (bufs_ && !(bufs_mapped_ = r_.parity().register_memory(bufs_, bufs_len_, &why)))
    frontend_log("ublk: queue %u: parity backend %s cannot map its buffers (%s); their jobs take the staged path\n",
                 unsigned(qid), r_.parity().name(), why.c_str());
  for (uint32_t i = 0; i < depth; i++) {
    Tag& tg = tags_[i];
    tg.c.on_cqe = on_cqe;
    tg.q = this;
    tg.tag = uint16_t(i);
    if (bufs_) tg.buf = bufs_ + size_t(i) * buf_bytes;
  }
  start_task_.run = on_start;
  start_task_.arg = this;
  retry_task_.run = on_retry;
  retry_task_.arg = this;
}

UblkQueue::~UblkQueue() {
  if (descs_) munmap(const_cast<ublk::IoDesc*>(descs_), descs_len_);
  if (bufs_mapped_) r_.parity().unregister_memory(bufs_);
  if (bufs_) munmap(bufs_, bufs_len_);
}

bool UblkQueue::mapped(std::string* err) const {
  if (!descs_) {
    *err = "cannot map the descriptors of ublk queue " + std::to_string(qid_) + ": " + strerror(errno);
    return false;
  }
  if (!bufs_) {
    *err = "cannot map the request buffers of ublk queue " + std::to_string(qid_);
    return false;
  }
  return true;
}

void UblkQueue::start() {
  started_ = true;
  live_tags_.store(depth_, std::memory_order_release);
  r_.post(&start_task_);
}

void UblkQueue::on_start(Task* t) {
  auto* q = static_cast<UblkQueue*>(t->arg);
  // The thread that serves a block device must not wait on its own
  // writeback when memory is short (as ublksrv does for its queue threads).
  // Needs CAP_SYS_RESOURCE; without it reclaim may recurse, so say so once.
  static std::atomic<bool> warned{false};
  if (prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0) != 0 && !warned.exchange(true))
    frontend_log("ublk: PR_SET_IO_FLUSHER on the reactor thread failed: %s\n", strerror(errno));
  for (Tag& tg : q->tags_) q->issue(&tg, false);
  q->fetched_.store(true, std::memory_order_release);
}

void UblkQueue::issue(Tag* t, bool commit) {
  t->committing = commit;
  io_uring_sqe* sqe = r_.sqe_for(&t->c);
  if (!sqe) {
    // The ring is full this turn: retry in the next one.
    t->next_retry = retry_head_;
    retry_head_ = t;
    if (!retry_queued_) {
      retry_queued_ = true;
      r_.defer(&retry_task_);
    }
    return;
  }
  const uint64_t user_data = sqe->user_data;
  memset(sqe, 0, sizeof *sqe);
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->fd = fd_;
  sqe->cmd_op = commit ? ublk::kIoCommitAndFetchReq : ublk::kIoFetchReq;
  sqe->user_data = user_data;
  ublk::IoCmd cmd{};
  cmd.q_id = qid_;
  cmd.tag = t->tag;
  cmd.result = commit ? t->result : 0;
  cmd.addr = reinterpret_cast<uint64_t>(t->buf);
  memcpy(sqe->cmd, &cmd, sizeof cmd);
}

void UblkQueue::on_retry(Task* task) {
  auto* q = static_cast<UblkQueue*>(task->arg);
  q->retry_queued_ = false;
  Tag* t = q->retry_head_;
  q->retry_head_ = nullptr;
  while (t) {
    Tag* n = t->next_retry;
    q->issue(t, t->committing);
    t = n;
  }
}

void UblkQueue::on_cqe(Completion* c, const io_uring_cqe* cqe) {
  auto* t = reinterpret_cast<Tag*>(c);
  UblkQueue* q = t->q;
  if (cqe->res == ublk::kIoResOk) {
    q->handle(t);
    return;
  }
  // -ENODEV (UBLK_IO_RES_ABORT): the device is stopping. Anything else is a
  // refused command (the driver's checks): the tag is out of service either way.
  if (cqe->res != -ENODEV)
    frontend_log("ublk queue %u tag %u: %s failed: %s\n", q->qid_, t->tag,
            t->committing ? "COMMIT_AND_FETCH_REQ" : "FETCH_REQ", strerror(-cqe->res));
  q->tag_ended();
}

void UblkQueue::tag_ended() { live_tags_.fetch_sub(1, std::memory_order_acq_rel); }

void UblkQueue::handle(Tag* t) {
  // Counted before holding_ is read (both seq_cst): hold() followed by
  // quiet() == true means no request reaches the target any more.
  in_target_.fetch_add(1);
  if (holding_.load()) {
    in_target_.fetch_sub(1);
    held_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  requests_.fetch_add(1, std::memory_order_relaxed);
  const ublk::IoDesc& d = descs_[t->tag];
  t->op = uint8_t(d.op_flags & 0xff);
  const uint64_t off = d.start_sector << 9;
  const uint64_t len = uint64_t(d.nr_sectors) << 9;
  const bool fua = d.op_flags & ublk::kIoFFua;
  int rc;
  switch (t->op) {
    case ublk::kOpRead:
    case ublk::kOpWrite:
      if (len > buf_bytes_) {
        rc = -EINVAL;  // larger than max_sectors: the block layer never sends it
        break;
      }
      t->req = IoRequest{};
      t->req.op = t->op == ublk::kOpRead ? IoRequest::Read : IoRequest::Write;
      t->req.fua = fua;
      t->req.offset = off;
      t->req.length = len;
      t->req.buf = t->buf;
      t->req.done = on_io_done;
      t->req.ctx = t;
      rc = target_->submit(r_, &t->req);
      break;
    case ublk::kOpFlush:
      t->req = IoRequest{};
      t->req.op = IoRequest::Flush;
      t->req.done = on_io_done;
      t->req.ctx = t;
      rc = target_->submit(r_, &t->req);
      break;
    case ublk::kOpDiscard:
    case ublk::kOpWriteZeroes:
      // Both read back as zeroes afterwards (discard_zeroes semantics).
      rc = t->zero.start(target_, r_, off, len, fua, on_zero_done, t);
      break;
    default:
      rc = -EOPNOTSUPP;
  }
  if (rc != 0) finish(t, rc);
}

void UblkQueue::on_io_done(IoRequest* req) {
  auto* t = static_cast<Tag*>(req->ctx);
  t->q->finish(t, req->result < 0 ? req->result : int(req->length));
}

void UblkQueue::on_zero_done(void* ctx, int result) {
  auto* t = static_cast<Tag*>(ctx);
  t->q->finish(t, result);
}

void UblkQueue::finish(Tag* t, int result) {
  // The block layer turns -errno into a blk_status (EIO, ENOSPC, ENODATA,
  // EOPNOTSUPP ... are understood); reads and writes report their bytes.
  if (result >= 0 && t->op != ublk::kOpRead && t->op != ublk::kOpWrite) result = 0;
  t->result = result;
  in_target_.fetch_sub(1);
  issue(t, true);
}

}  // namespace gpuraid
