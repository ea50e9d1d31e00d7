#include "bench/io_bound.h"

#include <bit>

#include "engine/planner.h"

namespace gpuraid::bench {

bool parse_rw(const std::string& s, Rw* out) {
  if (s == "randread") *out = Rw::RandRead;
  else if (s == "randwrite") *out = Rw::RandWrite;
  else if (s == "randrw") *out = Rw::RandRw;
  else if (s == "read") *out = Rw::SeqRead;
  else if (s == "write") *out = Rw::SeqWrite;
  else return false;
  return true;
}

const char* rw_name(Rw rw) {
  switch (rw) {
    case Rw::RandRead: return "randread";
    case Rw::RandWrite: return "randwrite";
    case Rw::RandRw: return "randrw";
    case Rw::SeqRead: return "read";
    case Rw::SeqWrite: return "write";
  }
  return "?";
}

bool is_random(Rw rw) { return rw == Rw::RandRead || rw == Rw::RandWrite || rw == Rw::RandRw; }

// Cost of one bs-sized I/O at logical offset `off`, in member I/Os.
static double random_cost(const Geometry& g, uint64_t off, uint32_t bs, uint64_t failed, bool write) {
  const uint64_t sdb = g.stripe_data_bytes();
  const uint32_t k = g.data_strips();
  double ios = 0;
  for (uint64_t s = off / sdb; s <= (off + bs - 1) / sdb; s++) {
    StripRange r[kMaxMembers];
    const uint64_t base = s * sdb;
    for (uint32_t i = 0; i < k; i++) {
      uint64_t lo = base + uint64_t(i) * g.strip_bytes, hi = lo + g.strip_bytes;
      uint64_t a = std::max(lo, off), b = std::min(hi, off + bs);
      r[i] = a < b ? StripRange{uint32_t(a - lo), uint32_t(b - lo)} : StripRange{};
    }
    if (g.is_mirror() || g.level == Level::R0) {
      for (uint32_t i = 0; i < k; i++) {
        if (r[i].empty()) continue;
        if (!write) {
          ios += 1;
          continue;
        }
        for (uint32_t c = 0; c < g.copies(); c++) ios += (failed >> g.data_member(s, i, c) & 1) ? 0 : 1;
      }
      continue;
    }
    if (write) {
      WritePlan p = plan_stripe_write(g, s, r, failed, false);
      ios += p.reads() + p.writes();
      continue;
    }
    DegradedReadPlan d;
    const uint64_t lost = failed_roles(g, s, failed);
    if (plan_degraded_read(g, s, r, failed, &d)) {
      ios += std::popcount(d.survivors);
      for (uint32_t i = 0; i < k; i++)  // healthy requested strips outside the survivors' columns
        if (!r[i].empty() && !(lost >> i & 1) && !r[i].covers(d.c0, d.c1)) ios += 1;
    } else {
      for (uint32_t i = 0; i < k; i++) ios += r[i].empty() ? 0 : 1;
    }
  }
  return ios;
}

double member_cost(const Geometry& g, Rw rw, uint32_t bs, uint64_t failed, bool write) {
  const uint64_t sdb = g.stripe_data_bytes();
  if (!is_random(rw)) {
    // Sequential: member bytes per logical byte over whole stripes.
    double bytes = 0;
    for (uint64_t s = 0; s < g.members; s++) {
      uint32_t alive_copies = 0, alive_parity = 0;
      if (g.is_mirror()) {
        for (uint32_t c = 0; c < g.copies(); c++) alive_copies += (failed >> g.data_member(s, 0, c) & 1) ? 0 : 1;
        bytes += write ? alive_copies : 1;
        continue;
      }
      for (uint32_t j = 0; j < g.parity; j++) alive_parity += (failed >> g.parity_member(s, j) & 1) ? 0 : 1;
      uint32_t alive_data = 0;
      for (uint32_t i = 0; i < g.data_strips(); i++) alive_data += (failed >> g.data_member(s, i) & 1) ? 0 : 1;
      bytes += write ? double(alive_data + alive_parity) / g.data_strips() : 1.0;
    }
    return bytes / g.members;
  }
  // Random: average over every bs-aligned position in n stripes (all rotations).
  double total = 0;
  uint64_t n = 0;
  for (uint64_t off = 0; off + bs <= sdb * g.members; off += bs, n++) total += random_cost(g, off, bs, failed, write);
  return n ? total / double(n) : 1;
}

double io_count_bound(const Geometry& g, Rw rw, uint32_t bs, uint32_t rwmixread, uint64_t failed) {
  switch (rw) {
    case Rw::RandRead:
    case Rw::SeqRead: return 1.0 / member_cost(g, rw, bs, failed, false);
    case Rw::RandWrite:
    case Rw::SeqWrite: return 1.0 / member_cost(g, rw, bs, failed, true);
    case Rw::RandRw: {
      double r = rwmixread / 100.0;
      return 1.0 / (r * member_cost(g, rw, bs, failed, false) + (1 - r) * member_cost(g, rw, bs, failed, true));
    }
  }
  return 1;
}

}  // namespace gpuraid::bench
