// ISA-L's RAID kernels, xor_gen and pq_gen, for any buffers.
//
// ISA-L picks a version by CPUID. Its SSE, AVX and AVX2 versions load and
// store with aligned instructions (movdqa, vmovntdq): a pointer that is not
// 16 (SSE) or 32 (AVX, AVX2) byte aligned faults. pq_gen refuses a length
// that is not a multiple of 16 (SSE, AVX) or 32 (AVX2, AVX-512), and its
// _base version (CPUs without SSE4.2) drops a len % 8 tail without a word.
// Only the AVX-512 versions take any pointer, which is why all of this went
// unseen on AVX-512 machines.
//
// IsalRaid calls ISA-L directly when every pointer is 32-byte aligned (and,
// for pq_gen, len a multiple of 32): the engine's page-aligned buffers
// always are. Otherwise it bounces the buffers that break a rule through an
// aligned scratch area, kChunk bytes at a time, so scratch stays bounded
// (vects * kChunk) and is allocated once, not per job. Aligned buffers are
// used in place. One instance per backend; not thread-safe.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

namespace gpuraid {

class IsalRaid {
 public:
  static constexpr uint32_t kAlign = 32;     // pointer alignment ISA-L's SIMD versions need
  static constexpr uint32_t kPqUnit = 32;    // pq_gen's length unit
  static constexpr uint32_t kChunk = 16384;  // bytes per buffer per bounced call (a multiple of kAlign)
  static constexpr int kMaxVects = 130;      // XOR Update: parity, 2 x 63 columns, parity

  // v[0..vects-1]: the sources, then the outputs (xor: the last pointer; pq:
  // the last two, P then Q), as ISA-L takes them; len >= 1 bytes each. An
  // output may also be passed as a source (the same pointer: it is read
  // before it is written). Needs vects >= 3 (xor) / >= 4 (pq), at most
  // kMaxVects. Returns 0, -EIO where ISA-L refused (a nonzero return) or
  // -ENOMEM where no scratch could be had; outputs are undefined then.
  int xor_gen(int vects, uint32_t len, void** v);
  int pq_gen(int vects, uint32_t len, void** v);

  // Direct ISA-L calls when true (else bounced); tests and benchmarks ask.
  static bool direct(bool pq, int vects, uint32_t len, void* const* v);

 private:
  int gen(bool pq, int vects, uint32_t len, void** v);
  int bounce(bool pq, int vects, uint32_t len, void** v);
  uint8_t* scratch(size_t bytes);

  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Free> scratch_;
  size_t scratch_bytes_ = 0;
};

}  // namespace gpuraid
