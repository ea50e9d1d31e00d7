// The operations and geometries of shared/notes/parity.md, each run both
// through direct ISA-L calls and through the engine's parity backend.
#pragma once
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench/parity/stripe_buffers.h"

namespace gpuraid::parity_bench {

enum class Code { Xor, PQ, Cauchy };
constexpr int kMaxVec = 24;  // k + m + 1 pointers at most (16+4)

struct ParityCase {
  enum Op { Encode, Update, Decode } op;
  Code code;
  uint32_t k, m;
  uint32_t lost = 0;  // Decode: data strips 0..lost-1 are lost
  std::string name() const;
  // Bytes of data in per stripe (encode: k strips; update: the 1 changed
  // strip; decode: the k survivors read), as parity.md counts them.
  size_t data_in_per_stripe(uint32_t strip) const;
};

const std::vector<ParityCase>& parity_cases();

// Buffers for (mode, k, m), kept while consecutive benchmarks ask for the
// same ones (Google Benchmark calls a benchmark several times).
std::shared_ptr<StripeBuffers> buffers_for(const Mode& mode, uint32_t k, uint32_t m);

// Reports GB/s = 10^9 bytes of data in per second of CPU time, one core.
void report_rate(benchmark::State& state, size_t bytes_per_iteration);

// Where a benchmark puts its buffers in each strip: the engine's way
// (aligned, whole strips) or an awkward one, which the CPU backend bounces
// through aligned scratch (engine/parity/isal_raid.h) where xor_gen or
// pq_gen would be called.
struct Shape {
  std::string name;   // suffix of the benchmark name ("" for the engine's way)
  uint32_t offset;    // bytes past the strip's start (alignment mod 64)
  uint32_t trim;      // len = strip - trim
};
const Shape& aligned_shape();
// "misaligned": every buffer 8 bytes past a 64-byte boundary (len strip-64);
// "oddlen": aligned, len = strip - 24 (pq_gen's last piece is bounced).
const std::vector<Shape>& awkward_shapes();
// Cases the CPU backend runs through xor_gen or pq_gen (the rest are ec
// calls, which take any buffer).
bool uses_raid_gen(const ParityCase& c);

// One benchmark body per way of running a case.
void run_isal(benchmark::State& state, const ParityCase& c, const Mode& mode);
// ISA-L's portable xor_gen_base / pq_gen_base on aligned buffers: what a
// fallback to _base would cost instead of the bounce (uses_raid_gen cases).
void run_isal_base(benchmark::State& state, const ParityCase& c, const Mode& mode);
// Update only: the whole read-modify-write from ISA-L's own calls (xor_gen
// for the delta, then ec_encode_data_update), the job the backend does;
// "isal" is given the delta for free.
void run_isal_rmw(benchmark::State& state, const ParityCase& c, const Mode& mode);
void run_backend(benchmark::State& state, const ParityCase& c, const Mode& mode, const Shape& shape);
void run_decode_setup(benchmark::State& state, const ParityCase& c);
void run_memcpy(benchmark::State& state, const Mode& mode);
void run_read(benchmark::State& state, const Mode& mode);

}  // namespace gpuraid::parity_bench
