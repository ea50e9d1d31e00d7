// The planner over a grid, as SPDK's raid5f_ut runs its tests: parity level x
// members (x sub-groups for raid50/60) x write (or read) ranges x failed
// members. Each plan is checked
// against a brute force: its reads must let it compute every parity row it
// writes (a rank test over GF(2^8) on the level's own code), it must write
// exactly the surviving strips that change, and no other set of member reads
// may be smaller. Which roles a failed member takes from a stripe comes from
// a reference layout written here (md's left-symmetric rotation within the
// stripe's sub-group), not from the planner's own mapping. A failure names
// the grid point that fails.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <map>
#include <random>
#include <sstream>
#include <vector>

#include "engine/codec.h"
#include "engine/gf256.h"
#include "engine/planner.h"

using namespace gpuraid;

namespace {

constexpr uint32_t kUnit = 4096;           // grid step within a strip
constexpr uint32_t kUnitsPerStrip = 4;
constexpr uint32_t kStrip = kUnit * kUnitsPerStrip;

struct Shape {
  Level level;
  uint32_t members, parity;
  uint32_t subgroups = 1;  // raid50/60: G
};

// Every parity level with up to 8 members in a stripe (all 256 read sets
// enumerable); raid50/60 over 2 sub-groups of the smallest widths.
std::vector<Shape> shapes() {
  std::vector<Shape> v;
  for (uint32_t n = 3; n <= 7; n++) v.push_back({Level::R5, n, 0});
  for (uint32_t n = 4; n <= 8; n++) v.push_back({Level::R6, n, 0});
  for (uint32_t m = 1; m <= 3; m++)
    for (uint32_t n = m + 2; n <= 8; n++) v.push_back({Level::EC, n, m});
  for (uint32_t w = 3; w <= 4; w++) v.push_back({Level::R50, 2 * w, 0, 2});
  for (uint32_t w = 4; w <= 5; w++) v.push_back({Level::R60, 2 * w, 0, 2});
  return v;
}

Geometry make_geo(const Shape& s) {
  Geometry g;
  std::string err;
  EXPECT_TRUE(Geometry::make(s.level, s.members, s.parity, kStrip, 1ull << 24, &g, &err, s.subgroups)) << err;
  return g;
}

// The stripes checked: row 1 (parity rotated off the last member) of every
// sub-group; stripe s lives in sub-group s % G at row s / G.
std::vector<uint64_t> stripes(const Geometry& g) {
  std::vector<uint64_t> v;
  for (uint32_t sg = 0; sg < g.subgroups; sg++) v.push_back(g.subgroups + sg);
  return v;
}

// Reference layout: the member of a role of a stripe. The stripe's
// sub-group is members [sg*w, sg*w + w); within it, md's left-symmetric
// rotation: parity row 0 at w-1 - row%w, then the other parity rows, then
// the data strips, wrapping around.
uint32_t ref_member(const Geometry& g, uint64_t stripe, uint32_t role) {
  const uint32_t G = g.subgroups, w = g.members / G, m = g.parity, k = w - m;
  const uint64_t sg = stripe % G, row = stripe / G;
  const uint32_t pd = w - 1 - uint32_t(row % w);
  const uint32_t pos = role < k ? (pd + m + role) % w : (pd + (role - k)) % w;
  return uint32_t(sg) * w + pos;
}
uint64_t ref_failed_roles(const Geometry& g, uint64_t stripe, uint64_t failed_members) {
  uint64_t r = 0;
  for (uint32_t role = 0; role < g.data_strips() + g.parity; role++)
    if (failed_members >> ref_member(g, stripe, role) & 1) r |= 1ull << role;
  return r;
}

constexpr uint32_t kMaxRoles = 8;
using Row = std::array<uint8_t, kMaxRoles>;  // coefficients over the k old data strips

// GF(2^8) products by table: the grid asks for millions.
uint8_t mul(uint8_t a, uint8_t b) {
  static const auto table = [] {
    std::vector<uint8_t> t(256 * 256);
    for (unsigned x = 0; x < 256; x++)
      for (unsigned y = 0; y < 256; y++) t[x * 256 + y] = gf::mul(uint8_t(x), uint8_t(y));
    return t;
  }();
  return table[a * 256u + b];
}

// The span of some rows, kept reduced (one pivot column per row) so that
// membership is one reduction.
class Span {
 public:
  explicit Span(uint32_t k) : k_(k) {}
  void add(Row r) {
    reduce(r);
    uint32_t col = 0;
    while (col < k_ && !r[col]) col++;
    if (col == k_) return;  // already in the span
    const uint8_t s = gf::inv(r[col]);
    for (uint32_t c = 0; c < k_; c++) r[c] = mul(r[c], s);
    rows_[n_] = r;
    pivot_[n_++] = col;
  }
  bool contains(Row t) const {
    reduce(t);
    for (uint32_t c = 0; c < k_; c++)
      if (t[c]) return false;
    return true;
  }

 private:
  void reduce(Row& t) const {
    for (uint32_t p = 0; p < n_; p++)
      if (const uint8_t f = t[pivot_[p]])
        for (uint32_t c = 0; c < k_; c++) t[c] ^= mul(f, rows_[p][c]);
  }
  uint32_t k_, n_ = 0;
  std::array<Row, kMaxRoles> rows_{};
  std::array<uint32_t, kMaxRoles> pivot_{};
};

// One stripe of one geometry with its code: what a set of reads can compute.
struct Oracle {
  Geometry g;
  Codec codec;
  uint32_t k, m;
  explicit Oracle(const Geometry& geo) : g(geo), codec(geo), k(geo.data_strips()), m(geo.parity) {
    spans_.assign(size_t(1) << (k + m), Span(k));
    for (uint64_t r = 1; r < spans_.size(); r++) {  // a set = the set without its lowest role, plus it
      spans_[r] = spans_[r & (r - 1)];
      spans_[r].add(row_of(uint32_t(std::countr_zero(r))));
    }
  }

  Row row_of(uint32_t role) const {  // role's old content as a function of old data
    Row r{};
    if (role < k) r[role] = 1;
    else
      for (uint32_t i = 0; i < k; i++) r[i] = codec.coeff(role - k, i);
    return r;
  }
  // What a set of roles spans, for every set (built once: the grid asks
  // for each many times).
  const Span& span_of(uint64_t roles) const { return spans_[roles]; }
  std::vector<Span> spans_;

  // Whether reading `reads` (old contents, over the columns [c0, c1) the
  // write's parity covers) lets a writer compute the new content of every
  // surviving parity row there, by one method for all those columns, as an
  // op does (read-modify-write, reconstruct-write and degraded write are
  // such methods). A data strip's new content is known where it is written
  // over all of [c0, c1), or its old content is read or rebuilt from the
  // reads (then the new bytes are laid over it); every strip written only in
  // part needs that. The rest of the new parity (the strips nobody writes)
  // must then be a combination of the reads. Mixing methods column by column
  // can save a read for some gathered writes; no op does that, so it is not
  // counted.
  bool write_feasible(const StripRange* w, uint64_t reads, uint64_t failed_roles) const {
    if ((failed_roles >> k) == (1ull << m) - 1) return true;  // no parity row left to write
    uint32_t c0 = kStrip, c1 = 0;
    for (uint32_t i = 0; i < k; i++)
      if (!w[i].empty()) c0 = std::min(c0, w[i].a), c1 = std::max(c1, w[i].b);
    const Span& known = span_of(reads);
    uint64_t new_known = 0;
    for (uint32_t i = 0; i < k; i++) {
      const bool covers = !w[i].empty() && w[i].covers(c0, c1);
      if (covers || known.contains(row_of(i))) new_known |= 1ull << i;
      else if (!w[i].empty()) return false;  // written in part, old content unknown
    }
    for (uint32_t j = 0; j < m; j++) {
      if (failed_roles >> (k + j) & 1) continue;
      Row t = row_of(k + j);
      for (uint32_t i = 0; i < k; i++)
        if (new_known >> i & 1) t[i] = 0;
      if (!known.contains(t)) return false;
    }
    return true;
  }

  // Whether some set of `n` reads of surviving roles makes the write
  // feasible; parity reads only where parity can be trusted. Feasibility
  // only grows with more reads, so "none of n-1" means "none of fewer".
  bool write_feasible_with(uint32_t n, const StripRange* w, uint64_t failed_roles, bool parity_stale) const {
    for (uint64_t r = 0; r < (1ull << (k + m)); r++) {
      if (uint32_t(std::popcount(r)) != n || (r & failed_roles)) continue;
      if (parity_stale && (r >> k)) continue;
      if (write_feasible(w, r, failed_roles)) return true;
    }
    return false;
  }
  uint32_t min_write_reads(const StripRange* w, uint64_t failed_roles, bool parity_stale) const {
    for (uint32_t n = 0; n <= k + m; n++)
      if (write_feasible_with(n, w, failed_roles, parity_stale)) return n;
    return k + m + 1;
  }

  // Fewest member reads that return the requested data: the requested
  // strips that survive, plus whatever rebuilds the lost ones.
  uint32_t min_read_ios(uint64_t requested, uint64_t failed_roles) const {
    uint32_t best = k + m + 1;
    for (uint64_t r = 0; r < (1ull << (k + m)); r++) {
      if (r & failed_roles) continue;
      const uint64_t ios = r | (requested & ~failed_roles);
      if (uint32_t(std::popcount(ios)) >= best) continue;
      const Span& known = span_of(ios);
      bool ok = true;
      for (uint32_t f = 0; f < k && ok; f++)
        if ((requested & failed_roles) >> f & 1) ok = known.contains(row_of(f));
      if (ok) best = uint32_t(std::popcount(ios));
    }
    return best;
  }
};

// Failed-member sets the level survives, all of them.
std::vector<uint64_t> survivable_failures(const Geometry& g) {
  std::vector<uint64_t> v;
  for (uint64_t f = 0; f < (1ull << g.members); f++)
    if (g.survives(f)) v.push_back(f);
  return v;
}

// Per-strip write ranges: every contiguous byte range of the stripe on the
// grid step, then seeded random independent ranges per strip (what gathered
// writers produce).
std::vector<std::vector<StripRange>> write_sets(uint32_t k, uint32_t seed) {
  std::vector<std::vector<StripRange>> v;
  const uint32_t units = k * kUnitsPerStrip;
  for (uint32_t a = 0; a < units; a++)
    for (uint32_t b = a + 1; b <= units; b++) {
      std::vector<StripRange> w(k);
      for (uint32_t i = 0; i < k; i++) {
        const uint32_t lo = std::max(a, i * kUnitsPerStrip), hi = std::min(b, (i + 1) * kUnitsPerStrip);
        if (lo < hi) w[i] = {(lo - i * kUnitsPerStrip) * kUnit, (hi - i * kUnitsPerStrip) * kUnit};
      }
      v.push_back(w);
    }
  std::mt19937 rng(seed);
  for (int n = 0; n < 32; n++) {
    std::vector<StripRange> w(k);
    for (uint32_t i = 0; i < k; i++) {
      if (rng() % 2) continue;
      uint32_t a = rng() % kUnitsPerStrip, b = a + 1 + rng() % (kUnitsPerStrip - a);
      w[i] = {a * kUnit, b * kUnit};
    }
    bool any = false;
    for (auto& r : w) any |= !r.empty();
    if (any) v.push_back(w);
  }
  return v;
}

std::string where(const Geometry& g, uint64_t stripe, uint64_t failed, const std::vector<StripRange>& w,
                  bool stale) {
  std::ostringstream o;
  o << g.describe() << " stripe " << stripe;
  if (g.subgroups > 1) o << " (sub-group " << stripe % g.subgroups << ")";
  o << " failed members 0x" << std::hex << failed << std::dec << (stale ? " parity stale" : "") << " writes";
  for (size_t i = 0; i < w.size(); i++)
    if (!w[i].empty()) o << " d" << i << "[" << w[i].a / kUnit << "," << w[i].b / kUnit << ")";
  return o.str();
}

constexpr uint32_t kSeed = 18;

}  // namespace

TEST(PlannerGrid, EveryWritePlanIsFeasibleAndMinimal) {
  uint64_t points = 0;
  for (const Shape& s : shapes()) {
    const Geometry g = make_geo(s);
    const Oracle o(g);
    const uint32_t k = o.k, m = o.m;
    const uint64_t parity_roles = ((1ull << m) - 1) << k;
    const auto writes = write_sets(k, kSeed);
    // The minimum, by the stripe's failed roles, written and covering strips, and staleness.
    std::map<uint64_t, uint32_t> min_reads;
    for (const uint64_t stripe : stripes(g))
    for (uint64_t failed : survivable_failures(g)) {
      const uint64_t fr = ref_failed_roles(g, stripe, failed);
      for (const auto& w : writes) {
        for (bool stale : {false, true}) {
          const auto at = [&] { return where(g, stripe, failed, w, stale); };
          points++;
          const WritePlan p = plan_stripe_write(g, stripe, w.data(), failed, stale);
          uint64_t written = 0;
          for (uint32_t i = 0; i < k; i++)
            if (!w[i].empty()) written |= 1ull << i;
          ASSERT_EQ(p.read_roles & fr, 0u) << "reads a failed member\n  at " << at();
          ASSERT_EQ(p.write_roles, (written | parity_roles) & ~fr) << "writes other than the changed survivors\n  at " << at();
          ASSERT_TRUE(o.write_feasible(w.data(), p.read_roles, fr)) << write_mode_name(p.mode)
              << " reads 0x" << std::hex << p.read_roles << ", which cannot give the new parity\n  at " << at();
          if (stale && p.mode == WriteMode::ReadModifyWrite) FAIL() << "read-modify-write over stale parity\n  at " << at();
          // A degraded write must read parity even when it may be stale:
          // only the minimum over trusted reads is compared there.
          if (stale && p.mode == WriteMode::DegradedWrite) continue;
          // The minimum depends on which strips are written and which of
          // them cover the parity's columns, not on the ranges themselves.
          uint64_t covering = 0;
          for (uint32_t i = 0; i < k; i++)
            if (!w[i].empty() && w[i].covers(p.c0, p.c1)) covering |= 1ull << i;
          auto [it, fresh] = min_reads.try_emplace(written | covering << 16 | fr << 32 | uint64_t(stale) << 63, 0);
          if (fresh) it->second = o.min_write_reads(w.data(), fr, stale);
          ASSERT_EQ(p.reads(), it->second) << write_mode_name(p.mode) << " reads 0x" << std::hex << p.read_roles << "\n  at " << at();
        }
      }
    }
  }
  std::printf("checked %llu write plans\n", (unsigned long long)points);
}

TEST(PlannerGrid, EveryDegradedReadPlanIsFeasibleAndMinimal) {
  uint64_t points = 0;
  for (const Shape& s : shapes()) {
    const Geometry g = make_geo(s);
    const Oracle o(g);
    const uint32_t k = o.k;
    const auto requests = write_sets(k, kSeed);  // here: the requested ranges
    std::map<uint64_t, uint32_t> min_ios;        // by the stripe's failed roles and the requested strips
    for (const uint64_t stripe : stripes(g))
    for (uint64_t failed : survivable_failures(g)) {
      const uint64_t fr = ref_failed_roles(g, stripe, failed);
      for (const auto& w : requests) {
        const auto at = [&] { return where(g, stripe, failed, w, false); };
        points++;
        uint64_t requested = 0;
        for (uint32_t i = 0; i < k; i++)
          if (!w[i].empty()) requested |= 1ull << i;
        DegradedReadPlan p;
        const bool planned = plan_degraded_read(g, stripe, w.data(), failed, &p);
        ASSERT_EQ(planned, (requested & fr) != 0) << "a degraded read where a plain one serves, or none where one is needed\n  at " << at();
        if (!planned) continue;
        ASSERT_EQ(p.recover_roles, requested & fr) << "\n  at " << at();
        ASSERT_EQ(p.survivors & fr, 0u) << "reads a failed member\n  at " << at();
        const Span& known = o.span_of(p.survivors);
        for (uint32_t f = 0; f < k; f++) {
          if (!(p.recover_roles >> f & 1)) continue;
          ASSERT_TRUE(known.contains(o.row_of(f))) << "cannot rebuild d" << f << "\n  at " << at();
        }
        uint32_t c0 = kStrip, c1 = 0;
        for (uint32_t f = 0; f < k; f++)
          if (p.recover_roles >> f & 1) c0 = std::min(c0, w[f].a), c1 = std::max(c1, w[f].b);
        ASSERT_EQ(p.c0, c0) << "\n  at " << at();
        ASSERT_EQ(p.c1, c1) << "\n  at " << at();
        // The minimum depends on the strips asked for, not on their ranges.
        auto [it, fresh] = min_ios.try_emplace(requested | fr << 32, 0);
        if (fresh) it->second = o.min_read_ios(requested, fr);
        const uint32_t ios = uint32_t(std::popcount(p.survivors | (requested & ~fr)));
        ASSERT_EQ(ios, it->second) << "survivors 0x" << std::hex << p.survivors << "\n  at " << at();
      }
    }
  }
  std::printf("checked %llu degraded read plans\n", (unsigned long long)points);
}

// The oracle itself: a read set too small must be refused (else the grid
// would pass any plan).
TEST(PlannerGrid, OracleRefusesTooFewReads) {
  const Geometry g = make_geo({Level::R6, 6, 0});
  const Oracle o(g);
  std::vector<StripRange> w(o.k);
  w[0] = {0, kUnit};  // small write to d0: needs old d0 + P + Q, or d1..d3
  EXPECT_EQ(o.min_write_reads(w.data(), 0, false), 3u);
  EXPECT_FALSE(o.write_feasible(w.data(), 1ull << 0 | 1ull << o.k, 0));  // d0 + P: Q unknown
  EXPECT_TRUE(o.write_feasible(w.data(), 0b1110, 0));                     // d1..d3
}
