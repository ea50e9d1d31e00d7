#include "tests/support/isal_path.h"

#include <cpuid.h>

#include <cstdint>

namespace gpuraid::test {
namespace {

constexpr uint32_t kCpuid1EcxSse42 = 1u << 20, kCpuid1EcxOsxsave = 1u << 27, kCpuid1EcxAvx = 1u << 28;
constexpr uint32_t kCpuid7EbxAvx2 = 1u << 5;
// AVX512 F, DQ, CD, BW, VL: ISA-L's FLAGS_CPUID7_EBX_AVX512_G1.
constexpr uint32_t kCpuid7EbxAvx512G1 = (1u << 16) | (1u << 17) | (1u << 28) | (1u << 30) | (1u << 31);
constexpr uint32_t kXcr0XmmYmm = 0x6, kXcr0ZmmOpmask = 0xe0;

uint32_t xgetbv0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return eax;
}

}  // namespace

IsalPath isal_path() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return IsalPath::Base;
  const uint32_t ecx1 = c;
  if (!(ecx1 & kCpuid1EcxSse42)) return IsalPath::Base;
  if (!(ecx1 & kCpuid1EcxOsxsave)) return IsalPath::Sse;
  const uint32_t xcr0 = xgetbv0();
  if ((xcr0 & kXcr0XmmYmm) != kXcr0XmmYmm || !(ecx1 & kCpuid1EcxAvx)) return IsalPath::Sse;
  __cpuid_count(7, 0, a, b, c, d);
  if (!(b & kCpuid7EbxAvx2)) return IsalPath::Avx;
  if ((xcr0 & kXcr0ZmmOpmask) != kXcr0ZmmOpmask || (b & kCpuid7EbxAvx512G1) != kCpuid7EbxAvx512G1)
    return IsalPath::Avx2;
  return IsalPath::Avx512;
}

const char* isal_path_name(IsalPath p) {
  switch (p) {
    case IsalPath::Base: return "base";
    case IsalPath::Sse: return "sse";
    case IsalPath::Avx: return "avx";
    case IsalPath::Avx2: return "avx2";
    case IsalPath::Avx512: return "avx512";
  }
  return "?";
}

std::string isal_path_line() {
  const IsalPath p = isal_path();
  // raid_multibinary.asm: xor_gen has no AVX2 version (the AVX one serves).
  const char* xor_fn = p == IsalPath::Avx2 ? "avx" : isal_path_name(p);
  const std::string n = isal_path_name(p);
  return "ISA-L path: " + n + " (xor_gen_" + xor_fn + ", pq_gen_" + n + ", ec_encode_data_" + n + ")";
}

}  // namespace gpuraid::test
