// CPU parity backend over ISA-L: xor_gen for RAID 5, pq_gen for RAID 6,
// ec_encode_data for ec; decode tables cached per failure pattern.
#include <isa-l/erasure_code.h>
#include <isa-l/raid.h>

#include <cerrno>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "engine/parity/parity_backend.h"

namespace gpuraid {
namespace {

// Key of one decode pattern: the code (kind, k, m: a codec is a pure
// function of these, so a codec freed and another made at the same address
// can never hit a stale entry), which k rows survive, which are rebuilt.
struct PatternKey {
  uint32_t code;  // kind << 16 | k << 8 | m
  uint64_t survivors;
  uint64_t erased;
  bool operator==(const PatternKey&) const = default;
};
struct PatternHash {
  size_t operator()(const PatternKey& k) const {
    return std::hash<uint64_t>()(k.survivors * 0x9e3779b97f4a7c15ull ^ k.erased ^ (uint64_t(k.code) << 40));
  }
};

class CpuBackend final : public ParityBackend {
 public:
  const char* name() const override { return "cpu-isal"; }

  void submit(ParityJob* const* jobs, size_t n) override {
    for (size_t i = 0; i < n; i++) {
      ParityJob* j = jobs[i];
      run(j);
      j->done(j);
    }
  }

 private:
  void run(ParityJob* j) {
    j->status = 0;
    switch (j->op) {
      case ParityOp::Encode: encode(j); break;
      case ParityOp::Update: update(j); break;
      case ParityOp::Recover: recover(j); break;
      case ParityOp::Verify: verify(j); break;
    }
  }

  void encode(ParityJob* j) {
    const Codec& c = *j->codec;
    const uint32_t k = c.k(), m = c.m();
    if (c.kind() == CodeKind::Xor || (c.kind() == CodeKind::PQ && k >= 2)) {
      void* v[kMaxMembers + 2];
      for (uint32_t i = 0; i < k; i++) v[i] = j->src[i];
      for (uint32_t r = 0; r < m; r++) v[k + r] = j->dst[r];
      if (c.kind() == CodeKind::Xor)
        xor_gen(int(k + 1), int(j->len), v);
      else
        pq_gen(int(k + 2), int(j->len), v);
      return;
    }
    ec_encode_data(int(j->len), int(k), int(m), const_cast<uint8_t*>(c.parity_tables()), j->src,
                   j->dst);
  }

  // Read-modify-write: fold each data delta into every parity row.
  void update(ParityJob* j) {
    const Codec& c = *j->codec;
    const uint32_t k = c.k(), m = c.m();
    if (c.kind() == CodeKind::Xor) {
      // P ^= old_i ^ new_i for all i, in one pass; xor_gen writes its last
      // pointer after reading all others, so dest may alias source 0.
      void* v[2 * kMaxMembers + 2];
      int n = 0;
      v[n++] = j->dst[0];
      for (uint32_t i = 0; i < j->nsrc; i++) {
        v[n++] = j->src[i];
        v[n++] = j->src2[i];
      }
      v[n++] = j->dst[0];
      xor_gen(n, int(j->len), v);
      return;
    }
    for (uint32_t i = 0; i < j->nsrc; i++) {
      // delta into the old-data buffer (the engine owns it), then one pass
      // over all m parity rows.
      void* d[3] = {j->src[i], j->src2[i], j->src[i]};
      xor_gen(3, int(j->len), d);
      ec_encode_data_update(int(j->len), int(k), int(m), int(j->src_idx[i]),
                            const_cast<uint8_t*>(c.parity_tables()), j->src[i], j->dst);
    }
  }

  const std::vector<uint8_t>& tables_for(const Codec& c, const uint8_t* surv, const uint8_t* erased,
                                         uint32_t ne, bool* ok) {
    PatternKey key{uint32_t(c.kind()) << 16 | c.k() << 8 | c.m(), 0, 0};
    for (uint32_t i = 0; i < c.k(); i++) key.survivors |= 1ull << surv[i];
    for (uint32_t e = 0; e < ne; e++) key.erased |= 1ull << erased[e];
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      *ok = true;
      return it->second;
    }
    std::vector<uint8_t> coeffs(size_t(ne) * c.k());
    *ok = c.decode_coeffs(surv, erased, ne, coeffs.data());
    std::vector<uint8_t> tables(size_t(32) * c.k() * ne);
    if (*ok) ec_init_tables(int(c.k()), int(ne), coeffs.data(), tables.data());
    if (cache_.size() > 4096) cache_.clear();  // bounded; patterns are few in practice
    return cache_.emplace(key, std::move(tables)).first->second;
  }

  void recover(ParityJob* j) {
    const Codec& c = *j->codec;
    const uint32_t k = c.k();
    // RAID 5, or any single lost row of an XOR-parity code: XOR of the k survivors.
    if (c.kind() == CodeKind::Xor && j->ndst == 1) {
      void* v[kMaxMembers + 1];
      for (uint32_t i = 0; i < k; i++) v[i] = j->src[i];
      v[k] = j->dst[0];
      if (k == 1)
        memcpy(j->dst[0], j->src[0], j->len);
      else
        xor_gen(int(k + 1), int(j->len), v);
      return;
    }
    // The cache key is a pair of sets, so it only stands for the tables when
    // rows come in ascending order (the engine always passes them so); any
    // other order is computed without the cache.
    bool ok = false;
    std::vector<uint8_t> uncached;
    const std::vector<uint8_t>* t = &uncached;
    if (ascending(j->src_idx, k) && ascending(j->dst_idx, j->ndst)) {
      t = &tables_for(c, j->src_idx, j->dst_idx, j->ndst, &ok);
    } else {
      std::vector<uint8_t> coeffs(size_t(j->ndst) * k);
      ok = c.decode_coeffs(j->src_idx, j->dst_idx, j->ndst, coeffs.data());
      uncached.resize(size_t(32) * k * j->ndst);
      if (ok) ec_init_tables(int(k), int(j->ndst), coeffs.data(), uncached.data());
    }
    if (!ok) {
      j->status = -EINVAL;
      return;
    }
    ec_encode_data(int(j->len), int(k), int(j->ndst), const_cast<uint8_t*>(t->data()), j->src,
                   j->dst);
  }

  static bool ascending(const uint8_t* v, uint32_t n) {
    for (uint32_t i = 1; i < n; i++)
      if (v[i - 1] >= v[i]) return false;
    return true;
  }

  void verify(ParityJob* j) {
    const Codec& c = *j->codec;
    const uint32_t k = c.k(), m = c.m();
    // ISA-L's AVX2/AVX-512 kernels store with aligned instructions: a
    // vector's 16-byte alignment is not enough (the daemon's scrub crashed).
    if (scratch_.size() < size_t(m) * j->len + 64) scratch_.resize(size_t(m) * j->len + 64);
    uint8_t* base = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(scratch_.data()) + 63) & ~uintptr_t(63));
    ParityJob e = *j;
    e.op = ParityOp::Encode;
    for (uint32_t r = 0; r < m; r++) e.dst[r] = base + size_t(r) * j->len;
    encode(&e);
    j->mismatch_rows = 0;
    for (uint32_t r = 0; r < m; r++)
      if (memcmp(e.dst[r], j->src[k + r], j->len) != 0) j->mismatch_rows |= 1u << r;
  }

  std::unordered_map<PatternKey, std::vector<uint8_t>, PatternHash> cache_;
  std::vector<uint8_t> scratch_;
};

}  // namespace

std::unique_ptr<ParityBackend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace gpuraid
