// The parity kernels on a real GPU through the CUDA backend, against ISA-L
// bit for bit: zero-copy from mapped host memory, the staged path, pageable
// buffers, many small jobs, large strips. Skips when no GPU is present.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>

#include "kernels/cuda_backend.h"
#include "parity_harness.h"

namespace gpuraid {
namespace {

using test::all_codes;
using test::codec;
using test::JobSpec;

bool have_gpu(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    *why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e);
    return false;
  }
  if (n == 0) {
    *why = "no CUDA device";
    return false;
  }
  return true;
}

#define REQUIRE_GPU()                                                          \
  do {                                                                         \
    std::string why_;                                                          \
    if (!have_gpu(&why_)) GTEST_SKIP() << "no GPU: skipped (" << why_ << ")"; \
  } while (0)

test::Allocator mapped_allocator() {
  return test::Allocator{+[](size_t n) -> void* { return cuda_host_alloc_mapped(n); },
                         +[](void* p) { cuda_host_free(p); }};
}

std::unique_ptr<kern::BatchingBackend> gpu(const CudaBackendOptions& o = {}) {
  std::string err;
  auto be = make_cuda_backend(o, &err);
  EXPECT_TRUE(be) << "make_cuda_backend: " << err;
  return be;
}

// Every code and width, every operation, tails and multi-tile lengths.
std::vector<JobSpec> full_matrix(uint32_t big_len) {
  std::vector<JobSpec> specs;
  uint64_t seed = 1;
  for (const auto& code : all_codes())
    for (uint32_t k : {2u, 3u, 7u, 8u, 16u, 64u - code.m}) {
      const Codec* c = codec(code.kind, k, code.m);
      for (uint32_t len : {64u, 4096u, 8192u + 576u, big_len}) {
        specs.push_back(test::encode_spec(c, len, seed++));
        specs.push_back(test::update_spec(c, len, {0, uint8_t(k - 1)}, seed++));
        specs.push_back(test::verify_spec(c, len, seed % (1u << code.m), seed));
        seed++;
        specs.push_back(test::recover_first_survivors(c, len, {0}, 0, seed++));
        if (code.m > 1)
          specs.push_back(test::recover_first_survivors(c, len, {1, uint8_t(k + code.m - 1)}, 0, seed++));
      }
    }
  return specs;
}

void check(kern::BatchingBackend& be, const std::vector<JobSpec>& specs, const test::Allocator& a,
           test::RunOptions o = {}) {
  o.with_reference = false;  // ISA-L is proven against the reference by the CPU tests
  test::expect_matches_isal(be, specs, a, o);
  std::string why;
  EXPECT_FALSE(be.fell_back(&why)) << why;
  EXPECT_EQ(be.counters().jobs_on_cpu(), 0u);
}

uint64_t batches(const ParityBackend& be) {
  const ParityCounters c = be.counters();
  return c.zero_copy_batches + c.staged_batches;
}

TEST(GpuParity, ZeroCopyFromMappedMemory) {
  REQUIRE_GPU();
  auto be = gpu();
  ASSERT_TRUE(be);
  check(*be, full_matrix(256 * 1024 + 64), mapped_allocator());
  EXPECT_EQ(be->counters().staged_batches, 0u);
}

// Completions through a host function and the event fd instead of the
// polled marker: the same bytes.
TEST(GpuParity, EventCompletion) {
  REQUIRE_GPU();
  CudaBackendOptions o;
  o.batch.completion = kern::Completion::Event;
  auto be = gpu(o);
  ASSERT_TRUE(be);
  check(*be, test::mixed_specs(2000, 16384, 8), mapped_allocator());
}

// The engine's way: pageable memory registered (cudaHostRegister) through
// the backend, read in place.
TEST(GpuParity, RegisteredPageableMemoryIsZeroCopy) {
  REQUIRE_GPU();
  auto be = gpu();
  ASSERT_TRUE(be);
  check(*be, test::mixed_specs(500, 16384, 6), test::registered_allocator(*be));
  EXPECT_EQ(be->counters().staged_batches, 0u);
  EXPECT_GT(be->counters().zero_copy_batches, 0u);
}

TEST(GpuParity, StagedThroughBounceMemory) {
  REQUIRE_GPU();
  CudaBackendOptions o;
  o.path = CudaDataPath::Staged;
  o.bounce_bytes = 160u << 20;  // a whole batch (64 MiB read and written) bounces
  auto be = gpu(o);
  ASSERT_TRUE(be);
  check(*be, full_matrix(1 << 20), mapped_allocator());
  EXPECT_EQ(be->counters().zero_copy_batches, 0u);
}

TEST(GpuParity, PageableBuffersAreStaged) {
  REQUIRE_GPU();
  CudaBackendOptions o;
  o.bounce_bytes = 160u << 20;
  auto be = gpu(o);
  ASSERT_TRUE(be);
  check(*be, test::mixed_specs(500, 16384, 5), test::aligned_allocator());
  EXPECT_GT(be->counters().staged_batches, 0u);
}

TEST(GpuParity, EveryErasurePatternSmallK) {
  REQUIRE_GPU();
  auto be = gpu();
  ASSERT_TRUE(be);
  check(*be, test::every_erasure_pattern({2, 3, 4, 5}, 4096 * 3 + 64, 4096), mapped_allocator());
}

TEST(GpuParity, ThousandsOfSmallJobsAcrossBatches) {
  REQUIRE_GPU();
  CudaBackendOptions o;
  o.batch.max_batch_jobs = 512;
  auto be = gpu(o);
  ASSERT_TRUE(be);
  test::RunOptions ro;
  ro.submit_chunk = 100;
  const auto specs = test::mixed_specs(5000, 8192, 11);
  check(*be, specs, mapped_allocator(), ro);
  EXPECT_GE(batches(*be), specs.size() / 512);
}

TEST(GpuParity, LargeStripsOneBatch) {
  REQUIRE_GPU();
  CudaBackendOptions o;
  o.batch.window_us = 0;
  o.batch.max_batch_bytes = 1ull << 32;
  auto be = gpu(o);
  ASSERT_TRUE(be);
  std::vector<JobSpec> specs;
  for (const auto& code : all_codes()) {
    const Codec* c = codec(code.kind, 8, code.m);
    specs.push_back(test::encode_spec(c, 1 << 20, 1));
    specs.push_back(test::update_spec(c, 1 << 20, {3}, 2));
    specs.push_back(test::recover_first_survivors(c, 1 << 20, {2}, 0, 3));
  }
  check(*be, specs, mapped_allocator());
  EXPECT_EQ(batches(*be), 1u);
}

// Unregistered buffers too big for the slot's bounce memory: those batches
// run on ISA-L, right, and the device is not blamed for it.
TEST(GpuParity, BatchesTooBigToBounceRunOnCpu) {
  REQUIRE_GPU();
  CudaBackendOptions o;
  o.bounce_bytes = 64u << 10;
  auto be = gpu(o);
  ASSERT_TRUE(be);
  const auto specs = test::mixed_specs(100, 8192, 21);
  test::RunOptions ro;
  ro.with_reference = false;
  test::expect_matches_isal(*be, specs, test::aligned_allocator(), ro);
  std::string why;
  EXPECT_FALSE(be->fell_back(&why)) << why;
  EXPECT_GT(be->counters().unsupported_jobs, 0u);
}

TEST(GpuParity, NoDeviceGivesAReason) {
  std::string why;
  if (have_gpu(&why)) GTEST_SKIP() << "a GPU is present";
  std::string err;
  EXPECT_EQ(make_cuda_backend(&err), nullptr);
  EXPECT_FALSE(err.empty());
  printf("make_cuda_backend without a GPU: %s\n", err.c_str());
}

}  // namespace
}  // namespace gpuraid
