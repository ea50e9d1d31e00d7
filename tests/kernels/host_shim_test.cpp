// The host shim's execution model (indices, barriers, shared memory) and the
// SWAR GF(2^8) arithmetic of the kernels, compiled from kernel source.
#include "kernels/host_shim.h"

#include <gtest/gtest.h>

#include <vector>

#include "engine/gf256.h"
#include "kernels/gf_swar.cuh"

namespace {

using gpuraid::shim::launch;

__global__ void index_kernel(unsigned* hits) {
  const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned bid = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned nthreads = blockDim.x * blockDim.y * blockDim.z;
  atomicAdd(&hits[bid * nthreads + tid], 1u);
}

TEST(HostShim, EveryThreadOfA3dGridRunsOnce) {
  const dim3 grid(3, 2, 2), block(4, 3, 2);
  std::vector<unsigned> hits(3 * 2 * 2 * 4 * 3 * 2, 0);
  launch(grid, block, [&] { index_kernel(hits.data()); });
  for (size_t i = 0; i < hits.size(); i++) EXPECT_EQ(hits[i], 1u) << "thread " << i;
}

// Reverse within the block through shared memory, then a tree reduction:
// both are wrong unless every barrier holds all threads.
__global__ void barrier_kernel(const unsigned* in, unsigned* reversed, unsigned* sums) {
  __shared__ unsigned s[64];
  const unsigned t = threadIdx.x, base = blockIdx.x * blockDim.x;
  s[t] = in[base + t];
  __syncthreads();
  reversed[base + t] = s[blockDim.x - 1 - t];
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (t < half) s[t] += s[t + half];
    __syncthreads();
  }
  if (t == 0) sums[blockIdx.x] = s[0];
}

TEST(HostShim, SyncthreadsSeparatesPhasesForAllThreads) {
  const unsigned blocks = 5, threads = 64;
  std::vector<unsigned> in(blocks * threads), rev(in.size()), sums(blocks);
  for (size_t i = 0; i < in.size(); i++) in[i] = unsigned(i * 7 + 3);
  launch(dim3(blocks), dim3(threads), [&] { barrier_kernel(in.data(), rev.data(), sums.data()); });
  for (unsigned b = 0; b < blocks; b++) {
    unsigned want = 0;
    for (unsigned t = 0; t < threads; t++) {
      EXPECT_EQ(rev[b * threads + t], in[b * threads + threads - 1 - t]);
      want += in[b * threads + t];
    }
    EXPECT_EQ(sums[b], want) << "block " << b;
  }
}

// Threads that leave early no longer count at a barrier, as on a GPU.
__global__ void early_exit_kernel(unsigned* out) {
  __shared__ unsigned s[32];
  const unsigned t = threadIdx.x;
  if (t % 2 == 1) return;
  s[t] = t + 1;
  __syncthreads();
  out[t] = s[(t + 2) % 32];
}

TEST(HostShim, ExitedThreadsDoNotBlockABarrier) {
  std::vector<unsigned> out(32, 0);
  launch(dim3(1), dim3(32), [&] { early_exit_kernel(out.data()); });
  for (unsigned t = 0; t < 32; t += 2) EXPECT_EQ(out[t], (t + 2) % 32 + 1);
}

__global__ void divergent_barrier_kernel() {
  if (threadIdx.x == 0) return;
  __syncthreads();
}

TEST(HostShimDeathTest, DivergentBarrierAborts) {
  EXPECT_DEATH(launch(dim3(1), dim3(4), [] { divergent_barrier_kernel(); }), "divergent barrier");
}

// gf_x2 on four bytes = gf::mul by 2 on each byte, for every byte value.
TEST(GfSwar, TimesTwoMatchesTheFieldForEveryByte) {
  for (unsigned v = 0; v < 256; v += 4) {
    const uint32_t w = v | (v + 1) << 8 | (v + 2) << 16 | (v + 3) << 24;
    const uint32_t got = gpuraid::kern::gf_x2(w);
    for (int b = 0; b < 4; b++)
      EXPECT_EQ((got >> (8 * b)) & 0xff, gpuraid::gf::mul(2, uint8_t(v + b))) << "value " << v + b;
  }
}

// gf_mul_acc with four rows = gf::mul for every coefficient and byte.
TEST(GfSwar, MultiplyAccumulateMatchesTheFieldForAllPairs) {
  for (unsigned c = 0; c < 256; c++)
    for (unsigned v = 0; v < 256; v += 16) {
      uint4 x[1];
      uint32_t lanes[4];
      for (int l = 0; l < 4; l++)
        lanes[l] = (v + 4 * l) | (v + 4 * l + 1) << 8 | (v + 4 * l + 2) << 16 | (v + 4 * l + 3) << 24;
      x[0] = uint4{lanes[0], lanes[1], lanes[2], lanes[3]};
      uint4 acc[4][1] = {};
      // Row r gets coefficient c ^ r (row 0: c itself), packed byte r.
      const uint32_t cw = c | (c ^ 1) << 8 | (c ^ 2) << 16 | (c ^ 3) << 24;
      gpuraid::kern::gf_mul_acc<4, 1>(cw, x, acc);
      for (int r = 0; r < 4; r++) {
        const uint32_t got[4] = {acc[r][0].x, acc[r][0].y, acc[r][0].z, acc[r][0].w};
        for (int l = 0; l < 4; l++)
          for (int b = 0; b < 4; b++) {
            const uint8_t byte = uint8_t(v + 4 * l + b);
            ASSERT_EQ((got[l] >> (8 * b)) & 0xff, gpuraid::gf::mul(uint8_t(c ^ r), byte))
                << "coefficient " << (c ^ r) << " byte " << unsigned(byte);
          }
      }
    }
}

}  // namespace
