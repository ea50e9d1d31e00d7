#include "kernels/slot_program.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace gpuraid::kern {
namespace {

size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

uint64_t field_dev(const SlotMemory& m, const void* field) {
  return m.ctrl_dev + uint64_t(static_cast<const uint8_t*>(field) - reinterpret_cast<const uint8_t*>(m.ctrl));
}

}  // namespace

uint64_t SlotProgram::bounce(uint64_t host, uint32_t len, bool* fresh) {
  auto [it, added] = bounce_at_.try_emplace(host, bounce_bytes_);
  *fresh = added;
  if (added) bounce_bytes_ += round_up(len, 64);
  return it->second;
}

SlotProgram::Needs SlotProgram::plan(const HostBatch& b, AddressView& view, bool bounce_all) {
  const size_t n = b.ptrs.size();
  where_.assign(n, Where::Device);
  at_.assign(n, 0);
  copy_in_.clear();
  copy_out_.clear();
  outputs_.clear();
  bounce_at_.clear();
  bounce_bytes_ = scratch_bytes_ = 0;
  // Inputs first, so that an Update's parity (read, then written through
  // the commit) is copied in once and its output lands on the same bounce.
  for (size_t i = 0; i < n; i++) {
    if (b.roles[i] == Role::Device) {
      at_[i] = b.ptrs[i];
      continue;
    }
    if (b.roles[i] != Role::In) continue;
    uint64_t dev;
    if (!bounce_all && view.translate(b.ptrs[i], b.ptr_len[i], &dev)) {
      where_[i] = Where::InPlace;
      at_[i] = dev;
      continue;
    }
    bool fresh;
    where_[i] = Where::Bounce;
    at_[i] = bounce(b.ptrs[i], b.ptr_len[i], &fresh);
    if (fresh) copy_in_.push_back(Copy{b.ptrs[i], at_[i], b.ptr_len[i]});
  }
  for (size_t i = 0; i < n; i++) {
    if (b.roles[i] != Role::Out && b.roles[i] != Role::UpdateOut) continue;
    where_[i] = Where::Scratch;
    at_[i] = scratch_bytes_;
    scratch_bytes_ += b.ptr_len[i];  // multiples of 64: every place stays aligned
    Output o{at_[i], Where::InPlace, 0, b.ptr_len[i]};
    if (bounce_all || !view.translate(b.ptrs[i], b.ptr_len[i], &o.to)) {
      bool fresh;
      o.target = Where::Bounce;
      o.to = bounce(b.ptrs[i], b.ptr_len[i], &fresh);
      copy_out_.push_back(Copy{b.ptrs[i], o.to, b.ptr_len[i]});
    }
    outputs_.push_back(o);
  }
  Needs need;
  need.scratch = scratch_bytes_;
  need.bounce = bounce_bytes_;
  need.blob = slot_blob_bytes(b);
  need.staged = bounce_bytes_ > 0;
  return need;
}

void SlotProgram::start(const HostBatch& b, const SlotMemory& mem, uint32_t seq, uint32_t max_blocks,
                        SlotLaunch* out) {
  seq_ = seq;
  aborted_ = false;
  nverify_ = b.nverify;
  for (const Copy& c : copy_in_) memcpy(mem.bounce + c.off, reinterpret_cast<const void*>(c.host), c.len);
  placed_.resize(b.ptrs.size());
  for (size_t i = 0; i < b.ptrs.size(); i++) {
    switch (where_[i]) {
      case Where::Device:
      case Where::InPlace: placed_[i] = at_[i]; break;
      case Where::Bounce: placed_[i] = mem.bounce_dev + at_[i]; break;
      case Where::Scratch: placed_[i] = mem.scratch_dev + at_[i]; break;
    }
  }
  commit_.clear();
  for (const Output& o : outputs_)
    add_copy_job(&commit_, mem.scratch_dev + o.scratch_off, o.target == Where::Bounce ? mem.bounce_dev + o.to : o.to,
                 o.len);

  const BlobLayout l1 = blob_layout(b), l2 = blob_layout(commit_);
  const size_t results_off = l1.total + l2.total;
  const size_t total = results_off + round_up(size_t(b.nverify) * 4 + 4, 64);
  write_blob(b, placed_.data(), mem.blob);
  if (!commit_.empty()) write_blob(commit_, commit_.ptrs.data(), mem.blob + l1.total);
  memset(mem.blob + results_off, 0, size_t(b.nverify) * 4 + 4);
  const uint64_t dev_results = mem.dev_blob + results_off;

  out->blob_bytes = total;
  out->main = blob_kbatch(b, l1, mem.dev_blob, reinterpret_cast<uint32_t*>(dev_results));
  out->main.started = nullptr;
  out->main.abort = nullptr;
  out->main.seq = seq;
  out->main_grid = grid_blocks(b.ntiles, max_blocks);
  out->has_commit = !commit_.empty();
  commit_grid_ = 0;
  if (out->has_commit) {
    out->commit = blob_kbatch(commit_, l2, mem.dev_blob + l1.total, nullptr);
    out->commit.started = reinterpret_cast<uint32_t*>(field_dev(mem, mem.ctrl->started));
    out->commit.abort = reinterpret_cast<const uint32_t*>(field_dev(mem, &mem.ctrl->abort));
    out->commit.seq = seq;
    commit_grid_ = out->commit_grid = grid_blocks(commit_.ntiles, std::min(max_blocks, kMaxCommitBlocks));
  }
  out->signal.results = reinterpret_cast<const uint32_t*>(dev_results);
  out->signal.host_results = reinterpret_cast<uint32_t*>(field_dev(mem, mem.ctrl->results));
  out->signal.nresults = b.nverify;
  out->signal.seq = seq;
  out->signal.marker = reinterpret_cast<uint32_t*>(field_dev(mem, &mem.ctrl->marker));
}

bool SlotProgram::finished(const SlotMemory& mem) const {
  return __atomic_load_n(&mem.ctrl->marker, __ATOMIC_ACQUIRE) == seq_;
}

void SlotProgram::complete(HostBatch& b, const SlotMemory& mem) {
  if (!aborted_)
    for (const Copy& c : copy_out_) memcpy(reinterpret_cast<void*>(c.host), mem.bounce + c.off, c.len);
  b.mismatch.assign(mem.ctrl->results, mem.ctrl->results + nverify_);
}

bool SlotProgram::abort(const SlotMemory& mem) {
  __atomic_store_n(&mem.ctrl->abort, seq_, __ATOMIC_SEQ_CST);
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  for (uint32_t blk = 0; blk < commit_grid_; blk++)
    if (__atomic_load_n(&mem.ctrl->started[blk], __ATOMIC_SEQ_CST) == seq_) return false;
  aborted_ = true;
  return true;
}

}  // namespace gpuraid::kern
