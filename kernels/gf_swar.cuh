// GF(2^8) arithmetic on four bytes at once (SWAR in 32-bit lanes), field
// 0x11d, for the parity kernels. No tables.
//
// Why this method:
//  * Q of RAID 6 is a Horner sum, Q = ((D_{k-1})*2 ^ D_{k-2})*2 ^ ... ^ D_0,
//    as Linux int.uc does it: one multiply-by-2 (5 integer ops, LOP3 fuses
//    the xors) and two xors per 32-bit word per column.
//  * General coefficients (Cauchy encode, update, decode) use shift-and-add:
//    a column word is doubled up to 7 times and each output row xors in the
//    doublings its coefficient's bits select. The doublings are shared by
//    the m rows, and every thread of a block works on the same job, so the
//    bit tests are block-uniform branches: no divergence, no memory traffic.
//    Worst case (m=4, dense coefficients) is about 7*5 + 4*8 = 67 ops per
//    4 bytes per column, ~17 ops/byte: an H100 (~14 Tops/s of INT32) still
//    does ~800 GB/s, 15x the PCIe Gen5 rate the data crosses from host
//    memory. The ladder stops at the highest bit any row needs, so XOR
//    columns (coefficient 1) cost one xor.
//  * Tables were rejected: log/exp needs two dependent lookups per byte and
//    a zero test; a 256-byte product table per coefficient (16 KiB for
//    64x4) or nibble tables in shared memory need per-job staging behind a
//    barrier, and byte-serial lookups hit shared-memory bank conflicts;
//    nibble tables in registers (PRMT) need 8 registers per coefficient,
//    which 64 columns x 4 rows cannot keep.
#pragma once
#if !defined(__CUDACC__)
#include "kernels/host_shim.h"
#endif
#include <cstdint>

namespace gpuraid::kern {

// Each byte times {02}: shift left, reduce the carried-out bit by 0x1d.
__device__ __forceinline__ uint32_t gf_x2(uint32_t v) {
  return ((v & 0x7f7f7f7fu) << 1) ^ (((v >> 7) & 0x01010101u) * 0x1du);
}

__device__ __forceinline__ uint4 gf_x2(uint4 v) {
  return uint4{gf_x2(v.x), gf_x2(v.y), gf_x2(v.z), gf_x2(v.w)};
}

__device__ __forceinline__ uint4 xor4(uint4 a, uint4 b) {
  return uint4{a.x ^ b.x, a.y ^ b.y, a.z ^ b.z, a.w ^ b.w};
}

__device__ __forceinline__ bool nonzero4(uint4 a) { return (a.x | a.y | a.z | a.w) != 0; }

// acc[r][w] ^= coef_r * x[w] for the M rows whose coefficients are packed in
// cw (row r in byte r). x is consumed.
template <int M, int W>
__device__ __forceinline__ void gf_mul_acc(uint32_t cw, uint4 (&x)[W], uint4 (&acc)[M][W]) {
  // Bits any row still needs: the ladder stops after the highest.
  uint32_t need = cw;
#pragma unroll
  for (int r = 1; r < M; r++) need |= cw >> (8 * r);
  need &= 0xffu;
#pragma unroll
  for (int bit = 0; bit < 8; bit++) {
#pragma unroll
    for (int r = 0; r < M; r++)
      if ((cw >> (8 * r + bit)) & 1u) {
#pragma unroll
        for (int w = 0; w < W; w++) acc[r][w] = xor4(acc[r][w], x[w]);
      }
    if ((need >> (bit + 1)) == 0) break;
#pragma unroll
    for (int w = 0; w < W; w++) x[w] = gf_x2(x[w]);
  }
}

}  // namespace gpuraid::kern
