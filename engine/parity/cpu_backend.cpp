// CPU parity backend over ISA-L: xor_gen for RAID 5, pq_gen for RAID 6,
// ec_encode_data for ec and for recoveries (or its GFNI equivalent,
// gf_gfni.h, where the CPU has GFNI); decode tables cached per failure
// pattern; the read-modify-write XORs through xor_cached (cached stores).
// Takes every job parity_backend.h allows: xor_gen and pq_gen go through
// IsalRaid (any alignment and length), the ec calls take any pointer and
// length.
#include <isa-l/erasure_code.h>
#include <isa-l/raid.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "engine/parity/gf_gfni.h"
#include "engine/parity/gf_update_fused.h"
#include "engine/parity/isal_raid.h"
#include "engine/parity/job_check.h"
#include "engine/parity/parity_backend.h"
#include "engine/parity/xor_cached.h"
#include "engine/ppl/ppl_sum.h"
#include "engine/single_writer.h"

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
    bump(jobs_, n);
    for (size_t i = 0; i < n; i++) {
      ParityJob* j = jobs[i];
      run(j);
      j->done(j);
    }
  }

  ParityCounters counters() const override {
    ParityCounters c;
    c.cpu_jobs = jobs_.load(std::memory_order_relaxed);
    return c;
  }

 private:
  std::atomic<uint64_t> jobs_{0};  // single writer: the owning reactor
  void run(ParityJob* j) {
    j->status = 0;
    if (parity_job_invalid(*j)) return fail_parity_job(j, -EINVAL);
    int r = 0;
    switch (j->op) {
      case ParityOp::Encode: r = encode(*j, j->dst); break;
      case ParityOp::Update: r = update(j); break;
      case ParityOp::Recover: r = recover(j); break;
      case ParityOp::Verify: r = verify(j); break;
    }
    if (r < 0) fail_parity_job(j, r);
  }

  // Parity of j's k data rows into dst[0..m-1]. 0 or -errno.
  int encode(const ParityJob& j, uint8_t* const* dst) {
    const Codec& c = *j.codec;
    const uint32_t k = c.k(), m = c.m();
    if (c.kind() == CodeKind::Xor && k == 1) {  // xor_gen wants two sources
      memcpy(dst[0], j.src[0], j.len);
      return 0;
    }
    if (c.kind() == CodeKind::Xor || (c.kind() == CodeKind::PQ && k >= 2)) {
      void* v[kMaxMembers + 2];
      for (uint32_t i = 0; i < k; i++) v[i] = j.src[i];
      for (uint32_t r = 0; r < m; r++) v[k + r] = dst[r];
      return c.kind() == CodeKind::Xor ? raid_.xor_gen(int(k + 1), j.len, v)
                                       : raid_.pq_gen(int(k + 2), j.len, v);
    }
    dot_prod(j.len, k, m, c.parity_tables(), c.parity_gfni(), j.src, dst);
    return 0;
  }

  // dst[r] = sum over j of coefficient (r, j) * src[j], the coefficients
  // given as ISA-L tables and as the same GFNI matrices. Any pointer and
  // length (ec_encode_data: vmovdqu, _base below a vector; GFNI: masked tails).
  void dot_prod(uint32_t len, uint32_t k, uint32_t rows, const uint8_t* tables, const uint64_t* gfni,
                const uint8_t* const* src, uint8_t* const* dst) {
    if (gfni_) return gf_dot_prod_gfni(len, k, rows, gfni, src, dst);
    ec_encode_data(int(len), int(k), int(rows), const_cast<uint8_t*>(tables), const_cast<uint8_t**>(src),
                   const_cast<uint8_t**>(dst));
  }

  // Read-modify-write: fold each data delta into every parity row. The XORs
  // here keep their output in the cache (xor_cached.h says why).
  int update(ParityJob* j) {
    const Codec& c = *j->codec;
    const uint32_t k = c.k(), m = c.m();
    if (j->nsrc == 0) return 0;
    if (c.kind() == CodeKind::Xor) {
      // With the write-hole guard's partial parity (old parity and old
      // data, ParityJob::pp) made and summed in the same pass.
      if (j->pp[0] && j->len % 64 == 0) {
        j->pp_sum[0] = ppl_update_xor_sum(j->dst[0], j->pp[0], j->src, j->src2, int(j->nsrc), j->len);
        j->pp_made = true;
        return 0;
      }
      // P ^= old_i ^ new_i for all i, in one pass over every source.
      const uint8_t* v[2 * kMaxMembers + 1];
      int n = 0;
      v[n++] = j->dst[0];
      for (uint32_t i = 0; i < j->nsrc; i++) {
        v[n++] = j->src[i];
        v[n++] = j->src2[i];
      }
      xor_cached(j->dst[0], v, n, j->len);
      return 0;
    }
    // One strip with the write-hole guard's partial parities: made and
    // summed in the update's pass.
    if (j->pp[0] && j->nsrc == 1 &&
        ppl_update_mad_sum(j->len, m, c.parity_tables() + size_t(32) * j->src_idx[0], 32 * k, j->src[0],
                           j->src2[0], j->dst, j->pp, j->pp_sum)) {
      j->pp_made = true;
      return 0;
    }
    if (fused_update_ && m <= 4) {  // old ^ new folded into the multiply-add: one pass (gf_update_fused.h)
      for (uint32_t i = 0; i < j->nsrc; i++)
        gf_update_fused_avx512(j->len, m, c.parity_tables() + size_t(32) * j->src_idx[i], 32 * k, j->src[i],
                               j->src2[i], j->dst);
      return 0;
    }
    for (uint32_t i = 0; i < j->nsrc; i++) {
      // delta into the old-data buffer (the engine owns it), then one pass
      // over all m parity rows.
      const uint8_t* d[2] = {j->src[i], j->src2[i]};
      xor_cached(j->src[i], d, 2, j->len);
      ec_encode_data_update(int(j->len), int(k), int(m), int(j->src_idx[i]),
                            const_cast<uint8_t*>(c.parity_tables()), j->src[i], j->dst);
    }
    return 0;
  }

  // A decode pattern's coefficients: ec_init_tables() output and the same
  // as GFNI matrices.
  struct DecodeTables {
    std::vector<uint8_t> isal;
    std::vector<uint64_t> gfni;
  };

  // The tables of this pattern, or nullptr if the survivors cannot rebuild
  // the erasures.
  const DecodeTables* tables_for(const Codec& c, const uint8_t* surv, const uint8_t* erased, uint32_t ne) {
    PatternKey key{uint32_t(c.kind()) << 16 | c.k() << 8 | c.m(), 0, 0};
    for (uint32_t i = 0; i < c.k(); i++) key.survivors |= 1ull << surv[i];
    for (uint32_t e = 0; e < ne; e++) key.erased |= 1ull << erased[e];
    auto it = cache_.find(key);
    if (it != cache_.end()) return &it->second;
    if (!make_tables(c, surv, erased, ne, &uncached_)) return nullptr;  // a failure is not cached
    if (cache_.size() > 4096) cache_.clear();  // bounded; patterns are few in practice
    return &cache_.emplace(key, uncached_).first->second;
  }

  static bool make_tables(const Codec& c, const uint8_t* surv, const uint8_t* erased, uint32_t ne,
                          DecodeTables* tables) {
    std::vector<uint8_t> coeffs(size_t(ne) * c.k());
    if (!c.decode_coeffs(surv, erased, ne, coeffs.data())) return false;
    tables->isal.resize(size_t(32) * c.k() * ne);
    ec_init_tables(int(c.k()), int(ne), coeffs.data(), tables->isal.data());
    tables->gfni.resize(size_t(c.k()) * ne);
    gfni_matrices(c.k() * ne, tables->isal.data(), tables->gfni.data());
    return true;
  }

  // Recoveries up to a strip (degraded reads) keep their output in the
  // cache: it is copied to the reader next. Longer ones (rebuild runs, ~1
  // MiB per member) go to a drive: xor_gen's non-temporal stores suit them.
  static constexpr uint32_t kCachedRecoverBytes = 64 * 1024;

  // The lost row is the XOR of the k survivors: RAID 5 whichever they are;
  // RAID 6 when one data row is lost and P survives (Q unused). xor_gen is
  // about 2.6x faster than the general GF decode.
  static bool is_xor_recovery(const Codec& c, const ParityJob& j) {
    if (c.kind() == CodeKind::Xor) return true;
    if (c.kind() != CodeKind::PQ || j.ndst != 1 || j.dst_idx[0] >= c.k()) return false;
    for (uint32_t i = 0; i < c.k(); i++)
      if (j.src_idx[i] == c.k() + 1) return false;  // Q is a survivor: not the XOR pattern
    return true;
  }

  int recover(ParityJob* j) {
    const Codec& c = *j->codec;
    const uint32_t k = c.k();
    if (is_xor_recovery(c, *j)) {
      if (k == 1) {
        memcpy(j->dst[0], j->src[0], j->len);
        return 0;
      }
      if (j->len <= kCachedRecoverBytes) {  // a degraded read's: copied to the reader at once
        xor_cached(j->dst[0], j->src, int(k), j->len);
        return 0;
      }
      void* v[kMaxMembers + 1];
      for (uint32_t i = 0; i < k; i++) v[i] = j->src[i];
      v[k] = j->dst[0];
      return raid_.xor_gen(int(k + 1), j->len, v);
    }
    // The cache key is a pair of sets, so it only stands for the tables when
    // rows come in ascending order (the engine always passes them so); any
    // other order is computed without the cache.
    const DecodeTables* t = nullptr;
    if (ascending(j->src_idx, k) && ascending(j->dst_idx, j->ndst))
      t = tables_for(c, j->src_idx, j->dst_idx, j->ndst);
    else if (make_tables(c, j->src_idx, j->dst_idx, j->ndst, &uncached_))
      t = &uncached_;
    if (!t) return -EINVAL;
    dot_prod(j->len, k, j->ndst, t->isal.data(), t->gfni.data(), j->src, j->dst);
    return 0;
  }

  static bool ascending(const uint8_t* v, uint32_t n) {
    for (uint32_t i = 1; i < n; i++)
      if (v[i - 1] >= v[i]) return false;
    return true;
  }

  int verify(ParityJob* j) {
    const Codec& c = *j->codec;
    const uint32_t k = c.k(), m = c.m();
    // Parity recomputed into 64-byte aligned scratch rows (grown, never per job).
    const size_t stride = (size_t(j->len) + 63) / 64 * 64;
    if (scratch_.size() < m * stride + 64) scratch_.resize(m * stride + 64);
    uint8_t* base = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(scratch_.data()) + 63) & ~uintptr_t(63));
    uint8_t* rows[kMaxMembers];
    for (uint32_t r = 0; r < m; r++) rows[r] = base + r * stride;
    if (const int r = encode(*j, rows)) return r;
    j->mismatch_rows = 0;
    for (uint32_t r = 0; r < m; r++)
      if (memcmp(rows[r], j->src[k + r], j->len) != 0) j->mismatch_rows |= 1u << r;
    return 0;
  }

  IsalRaid raid_;
  const bool fused_update_ = gf_update_fused_available();  // else the delta, then ISA-L's update
  const bool gfni_ = gf_gfni_available();                  // else ISA-L's ec_encode_data
  std::unordered_map<PatternKey, DecodeTables, PatternHash> cache_;
  DecodeTables uncached_;  // tables of the last pattern not taken from the cache
  std::vector<uint8_t> scratch_;
};

}  // namespace

std::unique_ptr<ParityBackend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace gpuraid
