// The erasure code of a geometry: its (k+m) x k encoding matrix and the
// ISA-L tables for the parity rows. Shared read-only by every reactor.
//   RAID 5: P row all ones (XOR).
//   RAID 6: P all ones, Q = 2^i (md's convention; data index = md slot).
//   ec:     Cauchy rows a[k+i][j] = 1/((k+i) xor j), MDS for every k, m.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/geometry.h"
#include "engine/levels/level.h"

namespace gpuraid {

class Codec {
 public:
  explicit Codec(const Geometry& g);
  Codec(CodeKind kind, uint32_t k, uint32_t m);

  CodeKind kind() const { return kind_; }
  uint32_t k() const { return k_; }
  uint32_t m() const { return m_; }
  // Row-major (k+m) x k; rows 0..k-1 are the identity.
  const uint8_t* matrix() const { return matrix_.data(); }
  const uint8_t* parity_rows() const { return matrix_.data() + size_t(k_) * k_; }
  uint8_t coeff(uint32_t parity_row, uint32_t data_col) const {
    return matrix_[size_t(k_ + parity_row) * k_ + data_col];
  }
  // ec_init_tables() output for the m parity rows (32 bytes per coefficient).
  const uint8_t* parity_tables() const { return tables_.data(); }
  // The same coefficients as GFNI bit matrices (parity/gf_gfni.h), m x k.
  const uint64_t* parity_gfni() const { return gfni_.data(); }

  // Coefficients that rebuild the rows `erased` (indices 0..k+m-1) from the
  // k rows `survivors`: out is n_erased x k, row-major, so that
  // erased[e] = sum_j out[e][j] * survivor[j]. False if the survivors cannot
  // (duplicates, or a singular choice, which an MDS code never has).
  bool decode_coeffs(const uint8_t* survivors, const uint8_t* erased, uint32_t n_erased,
                     uint8_t* out) const;

 private:
  void build();
  CodeKind kind_;
  uint32_t k_, m_;
  std::vector<uint8_t> matrix_;
  std::vector<uint8_t> tables_;
  std::vector<uint64_t> gfni_;
};

}  // namespace gpuraid
