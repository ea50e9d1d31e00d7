#include "engine/codec.h"

#include <isa-l/erasure_code.h>

#include <cassert>

#include "engine/gf256.h"
#include "engine/parity/gf_gfni.h"

namespace gpuraid {

Codec::Codec(const Geometry& g) : Codec(g.description().code, g.data_strips(), g.is_mirror() ? 0 : g.parity) {}

Codec::Codec(CodeKind kind, uint32_t k, uint32_t m) : kind_(kind), k_(k), m_(m) { build(); }

void Codec::build() {
  matrix_.assign(size_t(k_ + m_) * k_, 0);
  for (uint32_t i = 0; i < k_; i++) matrix_[size_t(i) * k_ + i] = 1;
  for (uint32_t r = 0; r < m_; r++) {
    for (uint32_t j = 0; j < k_; j++) {
      uint8_t c = 0;
      switch (kind_) {
        case CodeKind::Xor: c = 1; break;
        case CodeKind::PQ: c = r == 0 ? 1 : gf::pow(2, j); break;
        case CodeKind::Cauchy: c = gf::inv(uint8_t((k_ + r) ^ j)); break;
        case CodeKind::None: break;
      }
      matrix_[size_t(k_ + r) * k_ + j] = c;
    }
  }
  if (m_ > 0) {
    tables_.assign(size_t(32) * k_ * m_, 0);
    ec_init_tables(int(k_), int(m_), matrix_.data() + size_t(k_) * k_, tables_.data());
    gfni_.resize(size_t(k_) * m_);
    gfni_matrices(k_ * m_, tables_.data(), gfni_.data());
  }
}

bool Codec::decode_coeffs(const uint8_t* survivors, const uint8_t* erased, uint32_t n_erased,
                          uint8_t* out) const {
  const uint32_t k = k_;
  std::vector<uint8_t> sub(size_t(k) * k), inv(size_t(k) * k);
  for (uint32_t i = 0; i < k; i++) {
    if (survivors[i] >= k + m_) return false;
    for (uint32_t j = 0; j < k; j++) sub[size_t(i) * k + j] = matrix_[size_t(survivors[i]) * k + j];
  }
  if (gf_invert_matrix(sub.data(), inv.data(), int(k)) != 0) return false;
  // inv maps survivors -> data. A lost data row d is inv's row d; a lost
  // parity row p is (matrix row p) x inv.
  for (uint32_t e = 0; e < n_erased; e++) {
    uint8_t* o = out + size_t(e) * k;
    uint32_t row = erased[e];
    if (row >= k + m_) return false;
    if (row < k) {
      for (uint32_t j = 0; j < k; j++) o[j] = inv[size_t(row) * k + j];
    } else {
      for (uint32_t j = 0; j < k; j++) {
        uint8_t s = 0;
        for (uint32_t i = 0; i < k; i++) s ^= gf::mul(matrix_[size_t(row) * k + i], inv[size_t(i) * k + j]);
        o[j] = s;
      }
    }
  }
  return true;
}

}  // namespace gpuraid
