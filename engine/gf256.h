// Scalar GF(2^8) arithmetic, polynomial 0x11d, generator {02}: the field of
// Linux md RAID 6 and ISA-L. A plain reference, used to build matrices and
// by tests to check the fast backends; the data path uses ISA-L or kernels/.
#pragma once
#include <cstdint>

namespace gpuraid::gf {

constexpr unsigned kPoly = 0x11d;

// Bitwise carry-less multiply reduced by 0x11d (no tables: the reference).
constexpr uint8_t mul(uint8_t a, uint8_t b) {
  unsigned r = 0, x = a;
  for (int i = 0; i < 8; i++) {
    if (b & (1u << i)) r ^= x;
    x <<= 1;
    if (x & 0x100) x ^= kPoly;
  }
  return uint8_t(r);
}

constexpr uint8_t pow(uint8_t a, unsigned e) {
  uint8_t r = 1;
  for (unsigned i = 0; i < e; i++) r = mul(r, a);
  return r;
}

// Multiplicative inverse; inv(0) is 0 by convention (callers never ask).
constexpr uint8_t inv(uint8_t a) {
  if (a == 0) return 0;
  return pow(a, 254);  // a^255 = 1
}

// Inverts an n x n matrix in place by Gauss-Jordan elimination.
// Returns false when it is singular. The reference for ISA-L's gf_invert_matrix.
bool invert_matrix(uint8_t* m, int n);

}  // namespace gpuraid::gf
