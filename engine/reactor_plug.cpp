// Plug merging: member I/O that continues another one on the same drive in
// the same reactor turn goes to the kernel as one vectored SQE, in
// whatever order the turn issued them (a gather's run of stripes, a
// stream's requests that completed out of order): the turn's I/O is
// sorted by drive and offset first. A run of full-stripe writes (one op
// per stripe, each writing one strip per member) then reaches each member
// as one large write, as the block layer's plug sorts and merges bios;
// io_uring merges nothing across SQEs, and mem/file members never reach a
// block layer, so this is ours. A merged transfer that comes
// back short or failed is issued again part by part, so that every part
// gets its own result (a failing drive's error lands on the right op).
#include <sys/uio.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "engine/io/drive.h"
#include "engine/reactor.h"
#include "engine/single_writer.h"

namespace gpuraid {

namespace {
// 16 strips per member I/O at most; IOV_MAX is the kernel's limit.
constexpr size_t kMaxMergedPieces = 64;
static_assert(kMaxMergedPieces <= IOV_MAX);

size_t pieces(const MemberIo* io) { return io->iov.empty() ? 1 : io->iov.size(); }
void append_pieces(std::vector<iovec>& to, const MemberIo* io) {
  if (io->iov.empty()) to.push_back(iovec{io->buf, io->len});
  else to.insert(to.end(), io->iov.begin(), io->iov.end());
}
// Whether io may ride on the chain [head .. tail] of its drive slot.
bool continues(const MemberIo* head, const MemberIo* tail, const MemberIo* io) {
  if (io->kind == MemberIo::Flush || io->kind != tail->kind || io->dsync != tail->dsync) return false;
  if (tail->offset + tail->len != io->offset) return false;
  if (uint64_t(head->merged_len) + io->len > io->drive->max_io_bytes()) return false;
  const size_t have = head->merged_iov.empty() ? pieces(head) : head->merged_iov.size();
  return have + pieces(io) <= kMaxMergedPieces;
}
}  // namespace

bool Reactor::pluggable(const MemberIo* io) const {
  const DriveType t = io->drive->type();
  // Null drives are NOPs (one per I/O, as the raw baseline's), passthrough
  // commands carry one LBA range each; lockstep and fault injection keep one
  // SQE per I/O, so that they see every I/O.
  return !lockstep_ && !io->no_merge && t != DriveType::Null && t != DriveType::NvmeChar &&
         !io->drive->faults().active();
}

void Reactor::flush_plug() {
  if (plug_.empty()) return;
  // By slot, then offset (a flush after its slot's reads and writes), then
  // issue order: deterministic, and I/Os of one slot at one offset keep
  // their order. In-flight I/Os were never ordered among themselves
  // (io_uring runs SQEs concurrently; the stripe lock orders writes).
  std::sort(plug_.begin(), plug_.end(), [](const MemberIo* a, const MemberIo* b) {
    if (a->slot != b->slot) return a->slot < b->slot;
    const uint64_t ao = a->kind == MemberIo::Flush ? UINT64_MAX : a->offset;
    const uint64_t bo = b->kind == MemberIo::Flush ? UINT64_MAX : b->offset;
    if (ao != bo) return ao < bo;
    return a->seq < b->seq;
  });
  plug_heads_.clear();
  for (MemberIo* io : plug_) {
    io->merged_next = nullptr;
    io->merged_len = io->len;
    MemberIo*& head = plug_head_[io->slot];
    MemberIo*& tail = plug_tail_[io->slot];
    if (head && continues(head, tail, io)) {
      if (head->merged_iov.empty()) append_pieces(head->merged_iov, head);
      append_pieces(head->merged_iov, io);
      head->merged_len += io->len;
      tail->merged_next = io;
      tail = io;
      continue;
    }
    io->merged_iov.clear();
    head = tail = io;
    plug_heads_.push_back(io);
  }
  plug_.clear();
  for (MemberIo* h : plug_heads_) {
    plug_head_[h->slot] = plug_tail_[h->slot] = nullptr;
    if (!prep(h)) unsubmitted_.push_back(h);  // the chain stays whole
  }
}

void Reactor::prep_merged(io_uring_sqe* sqe, MemberIo* head) {
  const bool wr = head->kind == MemberIo::Write;
  const unsigned n = unsigned(head->merged_iov.size());
  if (wr) io_uring_prep_writev(sqe, int(head->slot), head->merged_iov.data(), n, head->offset);
  else io_uring_prep_readv(sqe, int(head->slot), head->merged_iov.data(), n, head->offset);
  for (MemberIo* io = head; io; io = io->merged_next) count_issued(wr, io->len);
}

void Reactor::complete_merged(MemberIo* head, int res) {
  // reap_cq counted one I/O out of flight for the CQE.
  if (res >= 0 && uint32_t(res) == head->merged_len) {
    for (MemberIo *io = head, *n; io; io = n) {
      n = io->merged_next;
      io->merged_next = nullptr;
      if (io != head) {
        in_flight_--;
        bump(stats_.member_ios_merged);
      }
      complete(io, int(io->len));  // may free io
    }
    return;
  }
  in_flight_++;
  for (MemberIo *io = head, *n; io; io = n) {
    n = io->merged_next;
    io->merged_next = nullptr;
    io->no_merge = true;
    if (!prep(io)) unsubmitted_.push_back(io);
  }
}

}  // namespace gpuraid
