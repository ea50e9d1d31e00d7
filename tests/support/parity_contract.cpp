#include "tests/support/parity_contract.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "engine/gf256.h"

#include "tests/support/parity_wait.h"

namespace gpuraid::test {

GridOptions grid_options_from_env() {
  GridOptions o;
  const char* g = getenv("GPURAID_PARITY_GRID");
  o.small = g && std::string(g) == "small";
  return o;
}

namespace {

using Bytes = std::vector<uint8_t>;
constexpr size_t kGuard = 64;  // guard bytes on each side, and the offset range

struct Code {
  CodeKind kind;
  uint32_t k, m;
};

std::vector<Code> codes(bool small) {
  if (small)
    return {{CodeKind::Xor, 1, 1},    {CodeKind::Xor, 3, 1},    {CodeKind::PQ, 1, 2},
            {CodeKind::PQ, 3, 2},     {CodeKind::Cauchy, 2, 1}, {CodeKind::Cauchy, 2, 2},
            {CodeKind::Cauchy, 5, 3}, {CodeKind::Cauchy, 3, 4}};
  std::vector<Code> v;
  for (uint32_t k : {1u, 2u, 3u, 5u}) v.push_back({CodeKind::Xor, k, 1});
  for (uint32_t k : {1u, 2u, 3u, 6u}) v.push_back({CodeKind::PQ, k, 2});
  for (uint32_t m = 1; m <= 4; m++)
    for (uint32_t k : {1u, 2u, 5u}) v.push_back({CodeKind::Cauchy, k, m});
  return v;
}

// Not multiples of 8/16/32/64, tiny ones, and (16417, 40000) past the 16 KiB
// chunk IsalRaid bounces in, with a tail.
std::vector<uint32_t> lengths(bool small) {
  if (small) return {1, 15, 33, 64, 100, 4104, 16417};
  return {1, 7, 15, 16, 31, 33, 63, 64, 65, 100, 127, 4096, 4104, 16383, 16417, 40000};
}

// Where a buffer starts mod 64, by its place in the job and whether it is
// written. 16-byte steps are what the kernels take and ISA-L's AVX code
// does not; "odd" gives every buffer a different odd or even offset.
enum class Layout { Aligned, Steps16, Odd, OutputsOff, FirstInputOff };
const char* layout_name(Layout l) {
  switch (l) {
    case Layout::Aligned: return "aligned";
    case Layout::Steps16: return "16-byte-steps";
    case Layout::Odd: return "odd";
    case Layout::OutputsOff: return "outputs-at-33";
    case Layout::FirstInputOff: return "first-input-at-63";
  }
  return "?";
}
std::vector<Layout> layouts(bool small) {
  if (small) return {Layout::Aligned, Layout::Steps16, Layout::Odd};
  return {Layout::Aligned, Layout::Steps16, Layout::Odd, Layout::OutputsOff, Layout::FirstInputOff};
}
uint32_t offset_of(Layout l, size_t b, bool written) {
  switch (l) {
    case Layout::Aligned: return 0;
    case Layout::Steps16: return uint32_t(16 * b % 64);
    case Layout::Odd: return uint32_t((1 + 7 * b) % 64);
    case Layout::OutputsOff: return written ? 33 : 0;
    case Layout::FirstInputOff: return b == 0 ? 63 : 0;
  }
  return 0;
}

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
Bytes random_bytes(uint32_t n, uint64_t seed) {
  Bytes v(n);
  for (uint32_t i = 0; i < n; i += 8) {
    const uint64_t r = splitmix(seed);
    memcpy(v.data() + i, &r, std::min<uint32_t>(8, n - i));
  }
  return v;
}

// The parity rows of `data` by the code's definition: sum_i coeff(r,i) * D_i.
std::vector<Bytes> parity_of(const Codec& c, const std::vector<Bytes>& data, uint32_t len) {
  std::vector<Bytes> p(c.m(), Bytes(len, 0));
  for (uint32_t r = 0; r < c.m(); r++)
    for (uint32_t i = 0; i < c.k(); i++) {
      uint8_t t[256];
      for (int x = 0; x < 256; x++) t[x] = gf::mul(c.coeff(r, i), uint8_t(x));
      for (uint32_t b = 0; b < len; b++) p[r][b] ^= t[data[i][b]];
    }
  return p;
}

// One job on its own guarded buffers, with what it must produce.
class Case {
 public:
  enum Role { In, Out, Scratch };  // Scratch: Update's old data, content not checked

  Case(std::string what, Layout layout, uint32_t len) : what_(std::move(what)), layout_(layout), len_(len) {
    job.len = len;
    job.ctx = this;
    job.done = [](ParityJob* j) { static_cast<Case*>(j->ctx)->done_calls++; };
    job.status = 12345;  // must be overwritten
  }
  ~Case() {
    for (Buf& b : bufs_) free(b.base);
  }
  Case(const Case&) = delete;
  Case& operator=(const Case&) = delete;

  // A buffer holding `content` (Out: garbage to be overwritten by `want`).
  uint8_t* add(Role role, const Bytes& content, Bytes want = {}) {
    Buf b;
    b.role = role;
    b.off = offset_of(layout_, bufs_.size(), role != In);
    b.total = kGuard + b.off + len_ + kGuard;
    b.base = static_cast<uint8_t*>(aligned_alloc(64, (b.total + 63) / 64 * 64));
    for (size_t i = 0; i < b.total; i++) b.base[i] = uint8_t(0xa5 ^ (i * 29) ^ bufs_.size());
    b.p = b.base + kGuard + b.off;
    memcpy(b.p, content.data(), len_);
    b.snap.assign(b.base, b.base + b.total);
    b.want = std::move(want);
    bufs_.push_back(std::move(b));
    return bufs_.back().p;
  }

  // Checks everything after the job ran; false (with gtest failures) if not right.
  bool check() {
    const std::string w = describe();
    bool ok = true;
    auto fail = [&](const std::string& msg) {
      ADD_FAILURE() << w << ": " << msg;
      ok = false;
    };
    if (done_calls != 1) fail("done() ran " + std::to_string(done_calls) + " times");
    if (job.status != 0) fail("status " + std::to_string(job.status));
    if (job.op == ParityOp::Verify && job.mismatch_rows != want_mismatch)
      fail("mismatch_rows " + std::to_string(job.mismatch_rows) + ", want " + std::to_string(want_mismatch));
    for (size_t i = 0; i < bufs_.size(); i++) {
      const Buf& b = bufs_[i];
      const std::string name = "buffer " + std::to_string(i) + " (offset " + std::to_string(b.off) + ")";
      if (long d = diff(b.base, b.snap.data(), kGuard + b.off); d >= 0)
        fail(name + ": guard byte " + std::to_string(d) + " before it was written");
      const size_t tail = kGuard + b.off + len_;
      if (long d = diff(b.base + tail, b.snap.data() + tail, kGuard); d >= 0)
        fail(name + ": guard byte " + std::to_string(d) + " past its end was written");
      if (b.role == In)
        if (long d = diff(b.p, b.snap.data() + kGuard + b.off, len_); d >= 0)
          fail(name + ": input changed at byte " + std::to_string(d));
      if (b.role == Out)
        if (long d = diff(b.p, b.want.data(), len_); d >= 0)
          fail(name + ": output differs from the definition at byte " + std::to_string(d));
    }
    return ok;
  }

  ParityJob job;
  int done_calls = 0;
  uint32_t want_mismatch = 0;

 private:
  struct Buf {
    uint8_t* base = nullptr;
    uint8_t* p = nullptr;
    size_t total = 0;
    uint32_t off = 0;
    Role role = In;
    Bytes snap, want;
  };

  static long diff(const uint8_t* a, const uint8_t* b, size_t n) {
    for (size_t i = 0; i < n; i++)
      if (a[i] != b[i]) return long(i);
    return -1;
  }

  std::string describe() const {
    std::string d = what_ + " len=" + std::to_string(len_) + " layout=" + layout_name(layout_) + " offsets=";
    for (const Buf& b : bufs_) d += std::to_string(b.off) + ",";
    return d;
  }

  std::string what_;
  Layout layout_;
  uint32_t len_;
  std::vector<Buf> bufs_;
};

const char* kind_name(CodeKind k) {
  return k == CodeKind::Xor ? "xor" : k == CodeKind::PQ ? "pq" : "ec";
}

// Everything one (code, len, layout) cell needs: a stripe and its parity.
struct Cell {
  const Codec& c;
  uint32_t len;
  Layout layout;
  std::vector<Bytes> rows;  // k data rows then m parity rows
  std::string name(const char* op) const {
    return std::string(op) + " " + kind_name(c.kind()) + " k=" + std::to_string(c.k()) +
           " m=" + std::to_string(c.m());
  }
};

void encode_cases(const Cell& x, std::vector<std::unique_ptr<Case>>& out) {
  const uint32_t k = x.c.k(), m = x.c.m();
  for (bool shared : {false, true}) {
    if (shared && k < 2) continue;
    // shared: data rows 0 and 1 are one buffer (inputs may overlap).
    std::vector<Bytes> data(x.rows.begin(), x.rows.begin() + k);
    if (shared) data[1] = data[0];
    const std::vector<Bytes> want = parity_of(x.c, data, x.len);
    auto cs = std::make_unique<Case>(x.name(shared ? "encode(src0=src1)" : "encode"), x.layout, x.len);
    ParityJob& j = cs->job;
    j.op = ParityOp::Encode;
    j.codec = &x.c;
    j.nsrc = k;
    j.ndst = m;
    for (uint32_t i = 0; i < k; i++) j.src[i] = shared && i == 1 ? j.src[0] : cs->add(Case::In, data[i]);
    for (uint32_t r = 0; r < m; r++) j.dst[r] = cs->add(Case::Out, random_bytes(x.len, 900 + r), want[r]);
    out.push_back(std::move(cs));
  }
}

void update_cases(const Cell& x, std::vector<std::unique_ptr<Case>>& out) {
  const uint32_t k = x.c.k(), m = x.c.m();
  std::vector<std::vector<uint8_t>> col_sets = {{0}};
  if (k >= 2) col_sets.push_back({uint8_t(k - 1), 0});  // not in order
  if (k >= 3) {
    std::vector<uint8_t> all;
    for (uint32_t i = 0; i < k; i++) all.push_back(uint8_t(i));
    col_sets.push_back(all);
  }
  for (size_t s = 0; s < col_sets.size() + (k >= 2 ? 1 : 0); s++) {
    // The extra last set: columns 0 and 1 take their new data from one buffer.
    const bool shared = s == col_sets.size();
    const std::vector<uint8_t> cols = shared ? std::vector<uint8_t>{0, 1} : col_sets[s];
    std::vector<Bytes> data(x.rows.begin(), x.rows.begin() + k);
    const Bytes common = random_bytes(x.len, 777 + s);
    for (size_t n = 0; n < cols.size(); n++)
      data[cols[n]] = shared ? common : random_bytes(x.len, 500 + s * 64 + n);
    const std::vector<Bytes> want = parity_of(x.c, data, x.len);
    auto cs = std::make_unique<Case>(x.name(shared ? "update(new0=new1)" : "update"), x.layout, x.len);
    ParityJob& j = cs->job;
    j.op = ParityOp::Update;
    j.codec = &x.c;
    j.nsrc = uint32_t(cols.size());
    j.ndst = m;
    for (uint32_t n = 0; n < cols.size(); n++) {
      j.src_idx[n] = cols[n];
      j.src[n] = cs->add(Case::Scratch, x.rows[cols[n]]);
    }
    for (uint32_t n = 0; n < cols.size(); n++)
      j.src2[n] = shared && n == 1 ? j.src2[0] : cs->add(Case::In, data[cols[n]]);
    for (uint32_t r = 0; r < m; r++) j.dst[r] = cs->add(Case::Out, x.rows[k + r], want[r]);
    out.push_back(std::move(cs));
  }
}

void recover_cases(const Cell& x, std::vector<std::unique_ptr<Case>>& out) {
  const uint32_t k = x.c.k(), m = x.c.m(), n = k + m;
  std::vector<std::vector<uint8_t>> patterns = {{0}, {uint8_t(n - 1)}};
  if (m >= 2) {
    std::vector<uint8_t> first, last;
    for (uint32_t e = 0; e < m; e++) {
      first.push_back(uint8_t(e));
      last.push_back(uint8_t(k + e));
    }
    patterns.push_back(first);  // data first (then parity, where k < m)
    patterns.push_back(last);   // every parity row
  }
  for (size_t p = 0; p <= patterns.size(); p++) {
    // The extra last case: pattern 0 with the survivors in descending order.
    const bool reversed = p == patterns.size();
    const std::vector<uint8_t>& erased = patterns[reversed ? 0 : p];
    std::vector<uint8_t> surv;
    for (uint32_t r = 0; r < n && surv.size() < k; r++)
      if (std::find(erased.begin(), erased.end(), uint8_t(r)) == erased.end()) surv.push_back(uint8_t(r));
    if (reversed) std::reverse(surv.begin(), surv.end());
    auto cs = std::make_unique<Case>(x.name(reversed ? "recover(descending)" : "recover"), x.layout, x.len);
    ParityJob& j = cs->job;
    j.op = ParityOp::Recover;
    j.codec = &x.c;
    j.nsrc = k;
    j.ndst = uint32_t(erased.size());
    for (uint32_t i = 0; i < k; i++) {
      j.src_idx[i] = surv[i];
      j.src[i] = cs->add(Case::In, x.rows[surv[i]]);
    }
    for (uint32_t e = 0; e < j.ndst; e++) {
      j.dst_idx[e] = erased[e];
      j.dst[e] = cs->add(Case::Out, random_bytes(x.len, 300 + e), x.rows[erased[e]]);
    }
    out.push_back(std::move(cs));
  }
}

void verify_cases(const Cell& x, std::vector<std::unique_ptr<Case>>& out) {
  const uint32_t k = x.c.k(), m = x.c.m();
  const uint32_t all = (1u << m) - 1;
  // (damaged rows, byte damaged): none; every row at the first or last
  // byte; the last row in the middle.
  const std::pair<uint32_t, uint32_t> damage[] = {{0, 0}, {all, 0}, {all, x.len - 1}, {1u << (m - 1), x.len / 2}};
  for (auto [mask, at] : damage) {
    auto cs = std::make_unique<Case>(x.name("verify") + " damage=" + std::to_string(mask) + "@" + std::to_string(at),
                                     x.layout, x.len);
    ParityJob& j = cs->job;
    j.op = ParityOp::Verify;
    j.codec = &x.c;
    j.nsrc = k + m;
    j.ndst = m;
    j.mismatch_rows = 0xdead;  // must be overwritten
    for (uint32_t r = 0; r < k + m; r++) {
      Bytes row = x.rows[r];
      if (r >= k && (mask >> (r - k) & 1)) row[at] ^= uint8_t(1 + r);
      j.src[r] = cs->add(Case::In, row);
    }
    cs->want_mismatch = mask;
    out.push_back(std::move(cs));
  }
}

// Submits the cases together and polls until each completed (or 60 s).
void run_all(ParityBackend& be, std::vector<std::unique_ptr<Case>>& cases) {
  std::vector<ParityJob*> jobs;
  for (auto& c : cases) jobs.push_back(&c->job);
  be.submit(jobs.data(), jobs.size());
  const auto start = std::chrono::steady_clock::now();
  auto pending = [&] {
    for (auto& c : cases)
      if (c->done_calls == 0) return true;
    return false;
  };
  while (pending()) {
    if (be.poll() > 0) continue;
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(60)) break;
    wait_for_parity(be, 50000000);
  }
}

}  // namespace

size_t check_parity_grid(ParityBackend& be, ParityOp op, const GridOptions& o) {
  size_t jobs = 0;
  int failed = 0;
  uint64_t seed = 1;
  for (const Code& code : codes(o.small)) {
    const Codec c(code.kind, code.k, code.m);
    for (uint32_t len : lengths(o.small))
      for (Layout layout : layouts(o.small)) {
        Cell x{c, len, layout, {}};
        for (uint32_t i = 0; i < code.k; i++) x.rows.push_back(random_bytes(len, seed++ * 1000));
        for (Bytes& p : parity_of(c, x.rows, len)) x.rows.push_back(std::move(p));
        std::vector<std::unique_ptr<Case>> cases;
        switch (op) {
          case ParityOp::Encode: encode_cases(x, cases); break;
          case ParityOp::Update: update_cases(x, cases); break;
          case ParityOp::Recover: recover_cases(x, cases); break;
          case ParityOp::Verify: verify_cases(x, cases); break;
        }
        run_all(be, cases);
        for (auto& cs : cases)
          if (!cs->check() && ++failed >= 20) {
            ADD_FAILURE() << be.name() << ": stopping after 20 failed jobs";
            return jobs;
          }
        jobs += cases.size();
      }
  }
  return jobs;
}

size_t check_rejects_invalid_jobs(ParityBackend& be) {
  static const Codec ec(CodeKind::Cauchy, 4, 2), xor2(CodeKind::Xor, 3, 2), pq3(CodeKind::PQ, 3, 3),
      none(CodeKind::None, 3, 1);
  constexpr uint32_t kLen = 256, kBufs = 12;
  alignas(64) static uint8_t pool[kBufs][kLen];
  for (uint32_t b = 0; b < kBufs; b++) memcpy(pool[b], random_bytes(kLen, 40 + b).data(), kLen);
  std::vector<uint8_t> before(&pool[0][0], &pool[0][0] + sizeof pool);
  // A valid job of each op on ec 4+2; each bad job is one of them, broken.
  auto base = [&](ParityOp op) {
    ParityJob j;
    j.op = op;
    j.codec = &ec;
    j.len = kLen;
    j.nsrc = op == ParityOp::Verify ? 6 : op == ParityOp::Update ? 1 : 4;
    j.ndst = op == ParityOp::Recover ? 1 : 2;
    for (uint32_t i = 0; i < 6; i++) j.src[i] = pool[i];
    j.src2[0] = pool[6];
    j.dst[0] = pool[7];
    j.dst[1] = pool[8];
    for (uint32_t i = 0; i < 4; i++) j.src_idx[i] = uint8_t(op == ParityOp::Recover ? i + 1 : i);
    j.dst_idx[0] = 0;
    return j;
  };
  struct Bad {
    const char* what;
    ParityJob job;
  };
  std::vector<Bad> bad;
  auto add = [&](const char* what, ParityOp op, auto&& mutate) {
    ParityJob j = base(op);
    mutate(j);
    bad.push_back({what, j});
  };
  add("no codec", ParityOp::Encode, [](ParityJob& j) { j.codec = nullptr; });
  add("code None", ParityOp::Encode, [](ParityJob& j) { j.codec = &none; });
  add("xor with m=2", ParityOp::Encode, [](ParityJob& j) { j.codec = &xor2; });
  add("pq with m=3", ParityOp::Encode, [](ParityJob& j) { j.codec = &pq3; });
  add("len 0", ParityOp::Encode, [](ParityJob& j) { j.len = 0; });
  add("len over INT_MAX", ParityOp::Encode, [](ParityJob& j) { j.len = 0x80000000u; });
  add("null output", ParityOp::Encode, [](ParityJob& j) { j.dst[1] = nullptr; });
  add("update column out of range", ParityOp::Update, [](ParityJob& j) { j.src_idx[0] = 4; });
  add("update column repeated", ParityOp::Update, [](ParityJob& j) {
    j.nsrc = 2;
    j.src[1] = pool[9];
    j.src2[1] = pool[10];
    j.src_idx[1] = j.src_idx[0];
  });
  add("update more columns than k", ParityOp::Update, [](ParityJob& j) { j.nsrc = 5; });
  add("update null new data", ParityOp::Update, [](ParityJob& j) { j.src2[0] = nullptr; });
  add("recover from k-1 rows", ParityOp::Recover, [](ParityJob& j) { j.nsrc = 3; });
  add("recover nothing", ParityOp::Recover, [](ParityJob& j) { j.ndst = 0; });
  add("recover more than m rows", ParityOp::Recover, [](ParityJob& j) {
    j.ndst = 3;
    j.dst_idx[1] = 5;
    j.dst_idx[2] = 4;
    j.dst[2] = pool[9];
  });
  add("recover a survivor", ParityOp::Recover, [](ParityJob& j) { j.dst_idx[0] = 2; });
  add("recover from a repeated row", ParityOp::Recover, [](ParityJob& j) { j.src_idx[1] = j.src_idx[0]; });
  add("recover a row out of range", ParityOp::Recover, [](ParityJob& j) { j.dst_idx[0] = 6; });
  add("recover an erased row twice", ParityOp::Recover, [](ParityJob& j) {
    j.ndst = 2;
    j.dst_idx[1] = 0;
  });
  add("verify with a null row", ParityOp::Verify, [](ParityJob& j) { j.src[5] = nullptr; });
  add("verify xor with m=2", ParityOp::Verify, [](ParityJob& j) { j.codec = &xor2; });

  std::vector<int> done(bad.size(), 0);
  std::vector<ParityJob*> jobs;
  for (size_t i = 0; i < bad.size(); i++) {
    bad[i].job.ctx = &done[i];
    bad[i].job.done = [](ParityJob* j) { ++*static_cast<int*>(j->ctx); };
    bad[i].job.status = 12345;
    bad[i].job.mismatch_rows = 0;
    jobs.push_back(&bad[i].job);
  }
  be.submit(jobs.data(), jobs.size());
  const auto start = std::chrono::steady_clock::now();
  while (be.in_flight() > 0 && std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) {
    if (be.poll() > 0) continue;
    wait_for_parity(be, 50000000);
  }
  for (size_t i = 0; i < bad.size(); i++) {
    const ParityJob& j = bad[i].job;
    EXPECT_EQ(done[i], 1) << be.name() << ": " << bad[i].what << ": done() calls";
    EXPECT_EQ(j.status, -EINVAL) << be.name() << ": " << bad[i].what;
    if (j.op == ParityOp::Verify) {
      const uint32_t m = j.codec->m();
      EXPECT_EQ(j.mismatch_rows, (1u << m) - 1) << be.name() << ": " << bad[i].what << ": every row mismatched";
    }
  }
  EXPECT_EQ(0, memcmp(before.data(), pool, sizeof pool)) << be.name() << ": a rejected job changed a buffer";
  return bad.size();
}

}  // namespace gpuraid::test
