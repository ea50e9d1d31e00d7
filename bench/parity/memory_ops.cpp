// Plain memory bandwidth on the same buffers, as the ceiling for parity:
// memcpy (bytes copied) and a read pass (bytes read, widest vectors the
// CPU has, chosen at load time by target_clones).
#include <cstring>

#include "bench/parity/cases.h"

namespace gpuraid::parity_bench {
namespace {

typedef uint64_t v8u64 __attribute__((vector_size(64)));

__attribute__((target_clones("avx512f", "avx2", "default"))) uint64_t read_pass(const uint8_t* p, size_t n) {
  v8u64 a = {}, b = {}, c = {}, d = {};
  for (size_t i = 0; i + 256 <= n; i += 256) {  // four independent accumulators
    v8u64 x, y, z, w;
    memcpy(&x, p + i, 64);
    memcpy(&y, p + i + 64, 64);
    memcpy(&z, p + i + 128, 64);
    memcpy(&w, p + i + 192, 64);
    a ^= x;
    b ^= y;
    c ^= z;
    d ^= w;
  }
  a ^= b ^ c ^ d;
  uint64_t r = 0;
  for (int i = 0; i < 8; i++) r ^= a[i];
  return r;
}

}  // namespace

void run_memcpy(benchmark::State& state, const Mode& mode) {
  AlignedBuffer src(mode.data_bytes), dst(mode.data_bytes);
  for (auto _ : state) {
    memcpy(dst.data(), src.data(), mode.data_bytes);
    benchmark::ClobberMemory();
  }
  report_rate(state, mode.data_bytes);
}

void run_read(benchmark::State& state, const Mode& mode) {
  AlignedBuffer src(mode.data_bytes);
  for (auto _ : state) benchmark::DoNotOptimize(read_pass(src.data(), mode.data_bytes));
  report_rate(state, mode.data_bytes);
}

}  // namespace gpuraid::parity_bench
