// The cases through the engine's CPU parity backend (make_cpu_backend), one
// batch of jobs (one per stripe) per iteration, as a reactor submits them.
#include <vector>

#include "bench/parity/cases.h"
#include "engine/parity/parity_backend.h"

namespace gpuraid::parity_bench {
namespace {

CodeKind kind_of(Code c) {
  switch (c) {
    case Code::Xor: return CodeKind::Xor;
    case Code::PQ: return CodeKind::PQ;
    case Code::Cauchy: return CodeKind::Cauchy;
  }
  return CodeKind::None;
}

ParityJob make_job(const ParityCase& c, const Codec& codec, const StripeBuffers& b, size_t s,
                   const Shape& shape) {
  ParityJob j;
  j.codec = &codec;
  j.len = b.strip() - shape.trim;
  j.done = [](ParityJob*) {};
  std::vector<uint8_t*> rows = b.rows(s);
  for (uint8_t*& r : rows) r += shape.offset;
  switch (c.op) {
    case ParityCase::Encode:
      j.op = ParityOp::Encode;
      j.nsrc = c.k;
      j.ndst = c.m;
      for (uint32_t i = 0; i < c.k; i++) j.src[i] = rows[i];
      for (uint32_t r = 0; r < c.m; r++) j.dst[r] = rows[c.k + r];
      break;
    case ParityCase::Update:  // old data in place, new data in the spare strip
      j.op = ParityOp::Update;
      j.nsrc = 1;
      j.ndst = c.m;
      j.src_idx[0] = uint8_t(s % c.k);
      j.src[0] = rows[s % c.k];
      j.src2[0] = b.spare(s, 0) + shape.offset;
      for (uint32_t r = 0; r < c.m; r++) j.dst[r] = rows[c.k + r];
      break;
    case ParityCase::Decode:
      j.op = ParityOp::Recover;
      j.nsrc = c.k;
      j.ndst = c.lost;
      for (uint32_t i = 0; i < c.k; i++) {
        j.src[i] = rows[c.lost + i];
        j.src_idx[i] = uint8_t(c.lost + i);
      }
      for (uint32_t e = 0; e < c.lost; e++) {
        j.dst[e] = b.spare(s, e) + shape.offset;
        j.dst_idx[e] = uint8_t(e);
      }
      break;
  }
  return j;
}

}  // namespace

void run_backend(benchmark::State& state, const ParityCase& c, const Mode& mode, const Shape& shape) {
  auto b = buffers_for(mode, c.k, c.m);
  const Codec codec(kind_of(c.code), c.k, c.m);
  auto backend = make_cpu_backend();
  std::vector<ParityJob> jobs;
  for (size_t s = 0; s < b->stripes(); s++) jobs.push_back(make_job(c, codec, *b, s, shape));
  std::vector<ParityJob*> batch;
  for (auto& j : jobs) batch.push_back(&j);
  for (auto _ : state) {
    backend->submit(batch.data(), batch.size());
    benchmark::ClobberMemory();
  }
  for (auto& j : jobs)
    if (j.status != 0) state.SkipWithError("backend job failed");
  state.SetLabel(backend->name());
  report_rate(state, c.data_in_per_stripe(b->strip() - shape.trim) * b->stripes());
}

}  // namespace gpuraid::parity_bench
