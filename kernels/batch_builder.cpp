#include "kernels/batch_builder.h"

#include <algorithm>
#include <cstring>

#include "engine/parity/job_check.h"

namespace gpuraid::kern {

void HostBatch::clear() {
  jobs.clear();
  ptrs.clear();
  roles.clear();
  ptr_len.clear();
  coefs.clear();
  owners.clear();
  mismatch.clear();
  ntiles = nverify = nout = 0;
  bytes = 0;
}

static size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

BlobLayout blob_layout(const HostBatch& b) {
  BlobLayout l;
  l.jobs = 0;
  l.ptrs = round_up(b.jobs.size() * sizeof(KJob), 64);
  l.coefs = round_up(l.ptrs + b.ptrs.size() * sizeof(uint64_t), 64);
  l.total = round_up(l.coefs + b.coefs.size() * sizeof(uint32_t), 64);
  return l;
}

void write_blob(const HostBatch& b, const uint64_t* ptrs, uint8_t* blob) {
  const BlobLayout l = blob_layout(b);
  // (empty vectors may have null data(), which memcpy must not see)
  if (!b.jobs.empty()) memcpy(blob + l.jobs, b.jobs.data(), b.jobs.size() * sizeof(KJob));
  if (!b.ptrs.empty()) memcpy(blob + l.ptrs, ptrs, b.ptrs.size() * sizeof(uint64_t));
  if (!b.coefs.empty()) memcpy(blob + l.coefs, b.coefs.data(), b.coefs.size() * sizeof(uint32_t));
}

KBatch blob_kbatch(const HostBatch& b, const BlobLayout& l, uintptr_t base, uint32_t* mismatch) {
  KBatch k{};  // no commit gate
  k.jobs = reinterpret_cast<const KJob*>(base + l.jobs);
  k.ptrs = reinterpret_cast<const uint64_t*>(base + l.ptrs);
  k.coefs = reinterpret_cast<const uint32_t*>(base + l.coefs);
  k.mismatch = mismatch;
  k.njobs = uint32_t(b.jobs.size());
  k.ntiles = b.ntiles;
  return k;
}

uint32_t grid_blocks(uint32_t ntiles, uint32_t max_blocks) {
  return std::max(1u, std::min(ntiles, std::max(1u, max_blocks)));
}

size_t slot_blob_bytes(const HostBatch& b) {
  // The batch's arrays, the commit's (one copy job per output: a job, two
  // pointers, a coefficient word), the results, each 64-byte aligned.
  const size_t main = blob_layout(b).total;
  const size_t commit = b.nout * (sizeof(KJob) + 2 * sizeof(uint64_t) + sizeof(uint32_t)) + 3 * 64;
  return main + commit + round_up(size_t(b.nverify) * 4 + 4, 64);
}

namespace {

// Appends one job's descriptor pieces to a batch.
class JobWriter {
 public:
  JobWriter(HostBatch* b, uint32_t len, uint8_t mode) : b_(b) {
    j_.tile0 = b->ntiles;
    j_.len = len;
    j_.ptr = uint32_t(b->ptrs.size());
    j_.coef = uint32_t(b->coefs.size());
    j_.mode = mode;
  }
  KJob& job() { return j_; }
  void ptr(const void* p, Role r) { ptr(reinterpret_cast<uintptr_t>(p), r); }
  void ptr(uint64_t p, Role r) {
    b_->ptrs.push_back(p);
    b_->roles.push_back(r);
    b_->ptr_len.push_back(j_.len);
    b_->bytes += j_.len;
    if (r == Role::Out || r == Role::UpdateOut) b_->nout++;
  }
  // Column word: the n row coefficients get(r) packed byte r.
  template <class Get>
  void coef(uint32_t n, Get get) {
    uint32_t w = 0;
    for (uint32_t r = 0; r < n; r++) w |= uint32_t(get(r)) << (8 * r);
    b_->coefs.push_back(w);
  }
  void finish(ParityJob* owner) {
    b_->jobs.push_back(j_);
    b_->owners.push_back(owner);
    b_->ntiles += (j_.len + kTileBytes - 1) / kTileBytes;
  }

 private:
  HostBatch* b_;
  KJob j_{};
};

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kPtrAlign == 0; }

bool all_aligned(uint8_t* const* v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (!v[i] || !aligned(v[i])) return false;
  return true;
}

}  // namespace

void add_copy_job(HostBatch* b, uint64_t from, uint64_t to, uint32_t len) {
  JobWriter w(b, len, kModeWrite);
  w.job().nsrc = 1;
  w.job().ndst = 1;
  w.ptr(from, Role::Device);
  w.ptr(to, Role::Device);
  w.coef(1, [](uint32_t) { return 1; });
  w.finish(nullptr);
}

// Jobs that break the interface's rules go to the CPU too, which fails them
// (-EINVAL) exactly as without a GPU.
const char* BatchBuilder::unsupported(const ParityJob& j) {
  if (const char* why = parity_job_invalid(j)) return why;
  const Codec* c = j.codec;
  if (c->k() > kMaxCols) return "k out of the kernels' range";
  if (c->m() > kMaxRows) return "m out of the kernels' range";
  if (j.len % kLenAlign != 0) return "length is not a multiple of 64";
  const uint32_t k = c->k(), m = c->m();
  switch (j.op) {
    case ParityOp::Encode:
      if (!all_aligned(j.src, k) || !all_aligned(j.dst, m)) return "buffer not 16-byte aligned";
      return nullptr;
    case ParityOp::Verify:
      if (!all_aligned(j.src, k + m)) return "buffer not 16-byte aligned";
      return nullptr;
    case ParityOp::Update:
      if (!all_aligned(j.src, j.nsrc) || !all_aligned(j.src2, j.nsrc) || !all_aligned(j.dst, m))
        return "buffer not 16-byte aligned";
      return nullptr;
    case ParityOp::Recover:
      if (!all_aligned(j.src, k) || !all_aligned(j.dst, j.ndst)) return "buffer not 16-byte aligned";
      return nullptr;
  }
  return "unknown operation";
}

// Decode coefficients for j's exact (ordered) survivors and erasures, cached.
// The key names the code by (kind, k, m), of which a codec is a pure
// function, not by its address: a codec freed and another made at the same
// address must not hit the old one's entries.
const std::vector<uint8_t>* BatchBuilder::decode(const ParityJob& j) {
  const Codec& c = *j.codec;
  const uint8_t code[3] = {uint8_t(c.kind()), uint8_t(c.k()), uint8_t(c.m())};
  std::string key(reinterpret_cast<const char*>(code), sizeof code);
  key.append(reinterpret_cast<const char*>(j.src_idx), c.k());
  key.append(reinterpret_cast<const char*>(j.dst_idx), j.ndst);
  auto it = decode_cache_.find(key);
  if (it != decode_cache_.end()) return &it->second;
  std::vector<uint8_t> coef(size_t(j.ndst) * c.k());
  if (!c.decode_coeffs(j.src_idx, j.dst_idx, j.ndst, coef.data())) return nullptr;
  if (decode_cache_.size() >= 4096) decode_cache_.clear();  // patterns are few in practice
  return &decode_cache_.emplace(std::move(key), std::move(coef)).first->second;
}

bool BatchBuilder::add(ParityJob* j, HostBatch* b) {
  const Codec& c = *j->codec;
  const uint32_t k = c.k(), m = c.m();
  switch (j->op) {
    case ParityOp::Encode:
    case ParityOp::Verify: {
      const bool verify = j->op == ParityOp::Verify;
      JobWriter w(b, j->len, verify ? kModeVerify : kModeWrite);
      w.job().nsrc = uint8_t(k);
      w.job().ndst = uint8_t(m);
      if (c.kind() == CodeKind::PQ && m == 2) {
        w.job().horner = 1;  // columns highest first, no coefficients
        for (uint32_t i = k; i-- > 0;) w.ptr(j->src[i], Role::In);
      } else {
        for (uint32_t i = 0; i < k; i++) {
          w.ptr(j->src[i], Role::In);
          w.coef(m, [&](uint32_t r) { return c.coeff(r, i); });
        }
      }
      for (uint32_t r = 0; r < m; r++)
        w.ptr(verify ? j->src[k + r] : j->dst[r], verify ? Role::In : Role::Out);
      if (verify) w.job().result = b->nverify++;
      w.finish(j);
      return true;
    }
    case ParityOp::Update: {
      JobWriter w(b, j->len, kModeUpdate);
      w.job().nsrc = uint8_t(j->nsrc);
      w.job().ndst = uint8_t(m);
      w.job().delta = 1;
      for (uint32_t i = 0; i < j->nsrc; i++) {
        w.ptr(j->src[i], Role::In);
        w.coef(m, [&](uint32_t r) { return c.coeff(r, j->src_idx[i]); });
      }
      for (uint32_t i = 0; i < j->nsrc; i++) w.ptr(j->src2[i], Role::In);
      for (uint32_t r = 0; r < m; r++) w.ptr(j->dst[r], Role::In);
      for (uint32_t r = 0; r < m; r++) w.ptr(j->dst[r], Role::UpdateOut);
      w.finish(j);
      return true;
    }
    case ParityOp::Recover: {
      const std::vector<uint8_t>* coef = decode(*j);
      if (!coef) return false;
      JobWriter w(b, j->len, kModeWrite);
      w.job().nsrc = uint8_t(k);
      w.job().ndst = uint8_t(j->ndst);
      for (uint32_t i = 0; i < k; i++) {
        w.ptr(j->src[i], Role::In);
        w.coef(j->ndst, [&](uint32_t e) { return (*coef)[size_t(e) * k + i]; });
      }
      for (uint32_t e = 0; e < j->ndst; e++) w.ptr(j->dst[e], Role::Out);
      w.finish(j);
      return true;
    }
  }
  return false;
}

}  // namespace gpuraid::kern
