// The cases through direct ISA-L calls, as an application would make them:
// xor_gen, pq_gen, ec_encode_data, ec_encode_data_update (given old^new),
// and decode = gf_invert_matrix + ec_init_tables (once) + ec_encode_data.
#include <isa-l/erasure_code.h>
#include <isa-l/raid.h>

#include <stdexcept>
#include <vector>

#include "bench/parity/cases.h"

namespace gpuraid::parity_bench {
namespace {

// (k+m) x k encoding matrix, identity on top: RS rows (1, 2^j) for pq, the
// same as md's P and Q; ISA-L's Cauchy matrix for ec.
std::vector<uint8_t> matrix(const ParityCase& c) {
  std::vector<uint8_t> a(size_t(c.k + c.m) * c.k);
  if (c.code == Code::Cauchy)
    gf_gen_cauchy1_matrix(a.data(), int(c.k + c.m), int(c.k));
  else
    gf_gen_rs_matrix(a.data(), int(c.k + c.m), int(c.k));
  return a;
}

// Tables rebuilding data rows 0..lost-1 from rows lost..lost+k-1.
std::vector<uint8_t> decode_tables(const ParityCase& c, const std::vector<uint8_t>& a) {
  const size_t k = c.k;
  std::vector<uint8_t> sub(k * k), inv(k * k), tbls(32 * k * c.lost);
  for (size_t i = 0; i < k; i++)
    for (size_t j = 0; j < k; j++) sub[i * k + j] = a[(i + c.lost) * k + j];
  if (gf_invert_matrix(sub.data(), inv.data(), int(k)) != 0) throw std::runtime_error("singular decode matrix");
  ec_init_tables(int(k), int(c.lost), inv.data(), tbls.data());  // inverse rows 0..lost-1 are the lost data
  return tbls;
}

}  // namespace

void run_isal(benchmark::State& state, const ParityCase& c, const Mode& mode) {
  auto b = buffers_for(mode, c.k, c.m);
  const int len = int(b->strip()), k = int(c.k), m = int(c.m);
  std::vector<uint8_t> tbls(32 * size_t(k) * m);
  if (c.op == ParityCase::Decode && c.code != Code::Xor) {
    tbls = decode_tables(c, matrix(c));
  } else {
    std::vector<uint8_t> a = matrix(c);
    ec_init_tables(k, m, a.data() + size_t(k) * k, tbls.data());
  }
  // Per stripe: the pointers each call takes, built before timing.
  std::vector<std::vector<uint8_t*>> in(b->stripes()), out(b->stripes());
  for (size_t s = 0; s < b->stripes(); s++) {
    std::vector<uint8_t*> rows = b->rows(s);
    if (c.op == ParityCase::Decode) {
      in[s].assign(rows.begin() + c.lost, rows.begin() + c.lost + k);
      for (uint32_t e = 0; e < c.lost; e++) out[s].push_back(b->spare(s, e));
    } else {
      in[s].assign(rows.begin(), rows.begin() + k);
      out[s].assign(rows.begin() + k, rows.end());
    }
  }
  for (auto _ : state) {
    for (size_t s = 0; s < b->stripes(); s++) {
      uint8_t** src = in[s].data();
      uint8_t** dst = out[s].data();
      if (c.op == ParityCase::Update) {
        ec_encode_data_update(len, k, m, int(s % k), tbls.data(), b->spare(s, 0), dst);
      } else if (c.code == Code::Xor) {
        void* v[kMaxVec] = {};
        for (int i = 0; i < k; i++) v[i] = src[i];
        v[k] = dst[0];
        xor_gen(k + 1, len, v);
      } else if (c.code == Code::PQ && c.op == ParityCase::Encode) {
        void* v[kMaxVec] = {};
        for (int i = 0; i < k + 2; i++) v[i] = i < k ? src[i] : dst[i - k];
        pq_gen(k + 2, len, v);
      } else {
        ec_encode_data(len, k, c.op == ParityCase::Decode ? int(c.lost) : m, tbls.data(), src, dst);
      }
    }
    benchmark::ClobberMemory();
  }
  report_rate(state, c.data_in_per_stripe(b->strip()) * b->stripes());
}

namespace {

// The read-modify-write the backend does, from ISA-L calls (old data in
// place, new data in the spare): the delta into the old data with the
// given XOR, then ec_encode_data_update folds it into the parity rows.
int isal_update(int (*xor_fn)(int, int, void**), StripeBuffers& b, size_t s, const std::vector<uint8_t*>& rows,
                int k, int m, const uint8_t* tbls) {
  const int len = int(b.strip());
  void* v[3] = {rows[s % k], b.spare(s, 0), rows[s % k]};
  const int failed = xor_fn(3, len, v);
  ec_encode_data_update(len, k, m, int(s % k), const_cast<uint8_t*>(tbls), rows[s % k],
                        const_cast<uint8_t**>(rows.data()) + k);
  return failed;
}

// Runs one(b, stripe, rows, tables) over every stripe, per iteration; a
// nonzero return from any call fails the benchmark with `what`.
template <class F>
void run_per_stripe(benchmark::State& state, const ParityCase& c, const Mode& mode, const char* what, F one) {
  auto b = buffers_for(mode, c.k, c.m);
  const int k = int(c.k), m = int(c.m);
  std::vector<uint8_t> a = matrix(c), tbls(32 * size_t(k) * m);
  ec_init_tables(k, m, a.data() + size_t(k) * k, tbls.data());
  int failed = 0;
  for (auto _ : state) {
    for (size_t s = 0; s < b->stripes(); s++) failed |= one(*b, s, b->rows(s), tbls.data());
    benchmark::ClobberMemory();
  }
  if (failed) state.SkipWithError(what);
  report_rate(state, c.data_in_per_stripe(b->strip()) * b->stripes());
}

}  // namespace

void run_isal_base(benchmark::State& state, const ParityCase& c, const Mode& mode) {
  const int k = int(c.k), m = int(c.m);
  run_per_stripe(state, c, mode, "ISA-L _base call failed",
                 [&](StripeBuffers& b, size_t s, const std::vector<uint8_t*>& rows, const uint8_t* tbls) {
                   const int len = int(b.strip());
                   void* v[kMaxVec] = {};
                   if (c.op == ParityCase::Update) return isal_update(xor_gen_base, b, s, rows, k, m, tbls);
                   if (c.code == Code::Xor) {
                     const int lost = c.op == ParityCase::Decode ? int(c.lost) : 0;
                     for (int i = 0; i < k; i++) v[i] = rows[size_t(lost + i)];
                     v[k] = lost ? b.spare(s, 0) : rows[size_t(k)];
                     return xor_gen_base(k + 1, len, v);
                   }
                   for (int i = 0; i < k + 2; i++) v[i] = rows[size_t(i)];
                   return pq_gen_base(k + 2, len, v);
                 });
}

void run_isal_rmw(benchmark::State& state, const ParityCase& c, const Mode& mode) {
  run_per_stripe(state, c, mode, "ISA-L xor_gen failed",
                 [&](StripeBuffers& b, size_t s, const std::vector<uint8_t*>& rows, const uint8_t* tbls) {
                   return isal_update(xor_gen, b, s, rows, int(c.k), int(c.m), tbls);
                 });
}

void run_decode_setup(benchmark::State& state, const ParityCase& c) {
  const std::vector<uint8_t> a = matrix(c);
  for (auto _ : state) benchmark::DoNotOptimize(decode_tables(c, a).data());
}

}  // namespace gpuraid::parity_bench
