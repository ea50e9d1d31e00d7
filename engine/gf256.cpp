#include "engine/gf256.h"

#include <cstddef>
#include <utility>
#include <vector>

namespace gpuraid::gf {
using std::size_t;

bool invert_matrix(uint8_t* m, int n) {
  std::vector<uint8_t> out(size_t(n) * n, 0);
  for (int i = 0; i < n; i++) out[size_t(i) * n + i] = 1;
  for (int col = 0; col < n; col++) {
    int piv = col;
    while (piv < n && m[size_t(piv) * n + col] == 0) piv++;
    if (piv == n) return false;
    if (piv != col) {
      for (int j = 0; j < n; j++) {
        std::swap(m[size_t(piv) * n + j], m[size_t(col) * n + j]);
        std::swap(out[size_t(piv) * n + j], out[size_t(col) * n + j]);
      }
    }
    uint8_t s = inv(m[size_t(col) * n + col]);
    for (int j = 0; j < n; j++) {
      m[size_t(col) * n + j] = mul(m[size_t(col) * n + j], s);
      out[size_t(col) * n + j] = mul(out[size_t(col) * n + j], s);
    }
    for (int r = 0; r < n; r++) {
      if (r == col) continue;
      uint8_t f = m[size_t(r) * n + col];
      if (!f) continue;
      for (int j = 0; j < n; j++) {
        m[size_t(r) * n + j] ^= mul(f, m[size_t(col) * n + j]);
        out[size_t(r) * n + j] ^= mul(f, out[size_t(col) * n + j]);
      }
    }
  }
  for (size_t i = 0; i < out.size(); i++) m[i] = out[i];
  return true;
}

}  // namespace gpuraid::gf
