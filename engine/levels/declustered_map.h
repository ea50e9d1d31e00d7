// The placement map of a declustered parity group (issue 34, as ZFS dRAID's
// precomputed permutations): N drives, stripes of W = D + P strips, and
// distributed spare space. Pure arithmetic, no I/O, no state: the layout a
// declustered level will put on its members, and what its rebuild into
// distributed spare space will read and write.
//
// Rows: every drive holds one strip per row, at member offset row x strip.
// A row holds k = (N - S) / W whole stripes side by side (a stripe never
// spans two rows, so all its strips sit at one member offset, as the engine
// wants); its other N - k x W strips are distributed spare space (at least
// S). Which drive holds position p of row r: (base_b[p] + r) mod N, where
// base_b is a seeded random permutation of the drives, b = (r / N) mod
// kPermutations. The N rows of one permutation rotate it through every
// drive, so over each N rows every drive holds exactly the same number of
// data, parity and spare strips; the different permutations spread a
// failed drive's rebuild reads and writes over all the others.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gpuraid {

class DeclusteredMap {
 public:
  static constexpr uint32_t kPermutations = 64;
  static constexpr uint32_t kMaxDrives = 64;  // make() refuses more

  // False with *err when the shape cannot be made (fewer drives than a
  // stripe and its spares, more than 64 drives).
  static bool make(uint32_t drives, uint32_t data, uint32_t parity, uint32_t min_spares, uint64_t seed,
                   DeclusteredMap* out, std::string* err);

  // The map of a declustered group's shape, with the seed every group of
  // that shape uses (ON-DISK.md: the layout is a function of N, D, P and S
  // alone); built once per shape and kept for the process's life, so that
  // geometries can point at it. nullptr with *err as make().
  static const DeclusteredMap* shared(uint32_t drives, uint32_t data, uint32_t parity, uint32_t min_spares,
                                      std::string* err);
  static uint64_t seed_of(uint32_t drives, uint32_t data, uint32_t parity, uint32_t min_spares);

  uint32_t drives() const { return n_; }
  uint32_t width() const { return w_; }             // D + P
  uint32_t data() const { return d_; }
  uint32_t parity() const { return w_ - d_; }
  uint32_t stripes_per_row() const { return k_; }   // k
  uint32_t spares_per_row() const { return n_ - k_ * w_; }

  // The drive holding strip `col` (0..W-1: data strips, then parity) of `stripe`,
  // and the row (member offset / strip) it sits at.
  uint32_t drive(uint64_t stripe, uint32_t col) const { return at(row_of(stripe), uint32_t(stripe % k_) * w_ + col); }
  uint64_t row_of(uint64_t stripe) const { return stripe / k_; }
  // The drive holding spare strip `i` (0..spares_per_row()-1) of `row`.
  uint32_t spare_drive(uint64_t row, uint32_t i) const { return at(row, k_ * w_ + i); }
  // Where the strip that failed drive `failed[j]` held in `row` goes in the
  // distributed spare space. The failures are replayed in order, and each
  // changes as little as it can: one that held a stripe strip takes the
  // first spare strip of the row that is free and on no drive failed so
  // far; one that held a spare strip another failure's strip had been put
  // on moves that strip (only that one) to the first such free spare
  // strip. A failure never moves a strip whose spare strip is still alive,
  // so each failure changes one strip a row at most (distributed_spare.h
  // relies on it). -1: that drive holds no stripe strip in this row, or no
  // spare strip is left there.
  int spare_for(uint64_t row, const std::vector<uint32_t>& failed, size_t j) const {
    return spare_for(row, failed.data(), failed.size(), j);
  }
  // The same over the first n failures of `failed`, allocating nothing
  // (asked per stripe and per member I/O of a member in the room).
  int spare_for(uint64_t row, const uint32_t* failed, size_t n, size_t j) const;
  // Whether `drive` holds a strip of a stripe in `row` (else one of its spare strips).
  bool holds_stripe_strip(uint64_t row, uint32_t drive) const;
  // The stripe of `row` that `drive` holds a strip of, or -1 (a spare strip there).
  int64_t stripe_holding(uint64_t row, uint32_t drive) const {
    for (uint32_t pos = 0; pos < k_ * w_; pos++)
      if (at(row, pos) == drive) return int64_t(row * k_ + pos / w_);
    return -1;
  }
  // The drives holding `stripe`'s strips, as a mask.
  uint64_t members_of(uint64_t stripe) const {
    uint64_t m = 0;
    for (uint32_t c = 0; c < w_; c++) m |= 1ull << drive(stripe, c);
    return m;
  }
  // Whether drive `d` holds a strip of `stripe`.
  bool in_stripe(uint64_t stripe, uint32_t d) const {
    for (uint32_t c = 0; c < w_; c++)
      if (drive(stripe, c) == d) return true;
    return false;
  }

 private:
  uint32_t at(uint64_t row, uint32_t pos) const {
    const uint32_t b = uint32_t((row / n_) % kPermutations);
    return (perm_[b * n_ + pos] + uint32_t(row % n_)) % n_;
  }
  uint32_t n_ = 0, w_ = 0, d_ = 0, k_ = 0;
  std::vector<uint32_t> perm_;  // kPermutations x N
};

}  // namespace gpuraid
