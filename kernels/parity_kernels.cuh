// The parity kernel: one launch runs a batch of jobs of any kind (encode,
// read-modify-write update, recover, verify) described in parity_desc.h.
// Compiled by nvcc into a __global__ kernel and by g++ through host_shim.h;
// both run this source.
//
// Geometry: blocks of kBlockThreads threads; a tile is kTileBytes of one job,
// each thread handling kWordsPerThread 16-byte words, consecutive threads on
// consecutive words (coalesced 512-byte runs per warp, also over PCIe). The
// grid is sized to the device, not to the batch: block b walks the tiles
// [b*T/G, (b+1)*T/G), finding its first job by binary search and the next
// ones by stepping forward. All threads of a block work on the same job at
// a time, so every branch on the job (kind, rows, coefficients) is uniform.
// No shared memory, no barriers: descriptors are broadcast loads that hit L1.
#pragma once
#if !defined(__CUDACC__)
#include "kernels/host_shim.h"
#endif
#include "kernels/gf_swar.cuh"
#include "kernels/parity_desc.h"
#include "kernels/sys_mem.cuh"

namespace gpuraid::kern {

constexpr int kW = int(kWordsPerThread);

__device__ __forceinline__ uint4 load16(uint64_t base, uint32_t off) {
  return *reinterpret_cast<const uint4*>(static_cast<uintptr_t>(base) + off);
}

__device__ __forceinline__ void store16(uint64_t base, uint32_t off, uint4 v) {
  *reinterpret_cast<uint4*>(static_cast<uintptr_t>(base) + off) = v;
}

// The words of one column at this thread's offsets (zero past the end).
__device__ __forceinline__ void load_col(uint64_t base, const uint32_t (&off)[kW],
                                         const bool (&live)[kW], uint4 (&x)[kW]) {
#pragma unroll
  for (int w = 0; w < kW; w++) x[w] = live[w] ? load16(base, off[w]) : uint4{0, 0, 0, 0};
}

// One tile of job j starting at byte `base`, with M output rows.
template <int M, bool kHorner>
__device__ __forceinline__ void run_tile(const KBatch& b, const KJob& j, uint32_t base) {
  const uint64_t* __restrict__ p = b.ptrs + j.ptr;
  uint32_t off[kW];
  bool live[kW];
#pragma unroll
  for (int w = 0; w < kW; w++) {
    off[w] = base + (uint32_t(w) * kBlockThreads + threadIdx.x) * 16u;
    live[w] = off[w] < j.len;
  }
  uint4 acc[M][kW];
#pragma unroll
  for (int r = 0; r < M; r++)
#pragma unroll
    for (int w = 0; w < kW; w++) acc[r][w] = uint4{0, 0, 0, 0};

  const uint32_t n = j.nsrc;
  for (uint32_t c = 0; c < n; c++) {
    uint4 x[kW];
    load_col(p[c], off, live, x);
    if (j.delta) {
      uint4 y[kW];
      load_col(p[n + c], off, live, y);
#pragma unroll
      for (int w = 0; w < kW; w++) x[w] = xor4(x[w], y[w]);
    }
    if constexpr (kHorner) {
      // Columns come highest data index first: Q = Q*2 ^ D.
#pragma unroll
      for (int w = 0; w < kW; w++) {
        acc[0][w] = xor4(acc[0][w], x[w]);
        acc[M - 1][w] = xor4(gf_x2(acc[M - 1][w]), x[w]);
      }
    } else {
      gf_mul_acc<M, kW>(b.coefs[j.coef + c], x, acc);
    }
  }

  const uint64_t* rows = p + (j.delta ? 2 * n : n);
  if (j.mode == kModeVerify) {
    uint32_t bad = 0;
#pragma unroll
    for (int r = 0; r < M; r++)
#pragma unroll
      for (int w = 0; w < kW; w++)
        if (live[w] && nonzero4(xor4(load16(rows[r], off[w]), acc[r][w]))) bad |= 1u << r;
    if (bad) atomicOr(&b.mismatch[j.result], bad);
    return;
  }
  const uint64_t* out = j.mode == kModeUpdate ? rows + M : rows;
#pragma unroll
  for (int r = 0; r < M; r++)
#pragma unroll
    for (int w = 0; w < kW; w++) {
      if (!live[w]) continue;
      uint4 v = acc[r][w];
      if (j.mode == kModeUpdate) v = xor4(v, load16(rows[r], off[w]));
      store16(out[r], off[w], v);
    }
}

__device__ __forceinline__ void dispatch_tile(const KBatch& b, const KJob& j, uint32_t base) {
  switch (j.ndst) {
    case 1: run_tile<1, false>(b, j, base); break;
    case 2:
      if (j.horner)
        run_tile<2, true>(b, j, base);
      else
        run_tile<2, false>(b, j, base);
      break;
    case 3: run_tile<3, false>(b, j, base); break;
    case 4: run_tile<4, false>(b, j, base); break;
    default: break;  // the builder never emits other row counts
  }
}

// The last job whose first tile is <= t.
__device__ __forceinline__ uint32_t find_job(const KBatch& b, uint32_t t) {
  uint32_t lo = 0, hi = b.njobs;
  while (hi - lo > 1) {
    uint32_t mid = (lo + hi) / 2;
    if (b.jobs[mid].tile0 <= t)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

// The commit gate (KBatch::started): a Dekker handshake with the host's
// abort (slot_program.cpp), over mapped host memory. A thread that passes
// has made its started word visible before reading abort, so a host that
// stores abort, fences and then finds no started word knows that no thread
// will write; a host that finds one waits for the batch instead.
__device__ __forceinline__ bool commit_gate_open(const KBatch& b) {
  if (!b.started) return true;
  sys_store(b.started + blockIdx.x, b.seq);
  __threadfence_system();
  return sys_load(b.abort) != b.seq;
}

__global__ void __launch_bounds__(kBlockThreads) parity_batch_kernel(const KBatch b) {
  const uint32_t t0 = uint32_t(uint64_t(b.ntiles) * blockIdx.x / gridDim.x);
  const uint32_t t1 = uint32_t(uint64_t(b.ntiles) * (blockIdx.x + 1) / gridDim.x);
  if (t0 >= t1) return;
  if (!commit_gate_open(b)) return;
  uint32_t ji = find_job(b, t0);
  for (uint32_t t = t0; t < t1; t++) {
    while (ji + 1 < b.njobs && b.jobs[ji + 1].tile0 <= t) ji++;
    const KJob j = b.jobs[ji];
    dispatch_tile(b, j, (t - j.tile0) * kTileBytes);
  }
  // A commit's stores reach host memory before the signal launch's marker.
  if (b.started) __threadfence_system();
}

__global__ void signal_kernel(const KSignal s) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  for (uint32_t i = 0; i < s.nresults; i++) sys_store(s.host_results + i, s.results[i]);
  __threadfence_system();
  sys_store(s.marker, s.seq);
}

}  // namespace gpuraid::kern
