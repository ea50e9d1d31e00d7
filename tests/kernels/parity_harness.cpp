#include "parity_harness.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <time.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <random>
#include <tuple>

#include "engine/gf256.h"
#include "tests/support/parity_wait.h"

namespace gpuraid::test {

Allocator aligned_allocator() {
  return Allocator{[](size_t n) -> void* { return aligned_alloc(4096, (n + 4095) / 4096 * 4096); },
                   [](void* p) { ::free(p); }};
}

namespace {
ParityBackend* g_registering = nullptr;  // registered_allocator's backend
}  // namespace

Allocator registered_allocator(ParityBackend& be) {
  g_registering = &be;
  return Allocator{[](size_t n) -> void* {
                     n = (n + 4095) / 4096 * 4096;
                     void* p = aligned_alloc(4096, n);
                     std::string err;
                     EXPECT_TRUE(g_registering->register_memory(p, n, &err)) << err;
                     return p;
                   },
                   [](void* p) {
                     g_registering->unregister_memory(p);
                     ::free(p);
                   }};
}

const std::vector<CodeShape>& all_codes() {
  static const std::vector<CodeShape> v = {
      {CodeKind::Xor, 1, "raid5"},    {CodeKind::PQ, 2, "raid6"},     {CodeKind::Cauchy, 1, "ec-m1"},
      {CodeKind::Cauchy, 2, "ec-m2"}, {CodeKind::Cauchy, 3, "ec-m3"}, {CodeKind::Cauchy, 4, "ec-m4"},
  };
  return v;
}

const Codec* codec(CodeKind kind, uint32_t k, uint32_t m) {
  static std::map<std::tuple<CodeKind, uint32_t, uint32_t>, std::unique_ptr<Codec>> codecs;
  auto& c = codecs[{kind, k, m}];
  if (!c) c = std::make_unique<Codec>(kind, k, m);
  return c.get();
}

JobSpec encode_spec(const Codec* c, uint32_t len, uint64_t seed) {
  JobSpec s;
  s.codec = c;
  s.op = ParityOp::Encode;
  s.len = len;
  s.seed = seed;
  return s;
}

JobSpec update_spec(const Codec* c, uint32_t len, std::vector<uint8_t> cols, uint64_t seed) {
  JobSpec s = encode_spec(c, len, seed);
  s.op = ParityOp::Update;
  s.cols = std::move(cols);
  return s;
}

JobSpec recover_spec(const Codec* c, uint32_t len, std::vector<uint8_t> survivors,
                     std::vector<uint8_t> erased, uint64_t seed) {
  JobSpec s = encode_spec(c, len, seed);
  s.op = ParityOp::Recover;
  s.survivors = std::move(survivors);
  s.erased = std::move(erased);
  return s;
}

JobSpec recover_first_survivors(const Codec* c, uint32_t len, std::vector<uint8_t> erased,
                                uint64_t skip_mask, uint64_t seed) {
  uint64_t out = skip_mask;
  for (uint8_t e : erased) out |= 1ull << e;
  std::vector<uint8_t> surv;
  for (uint32_t r = 0; r < c->k() + c->m() && surv.size() < c->k(); r++)
    if (!(out >> r & 1)) surv.push_back(uint8_t(r));
  return recover_spec(c, len, std::move(surv), std::move(erased), seed);
}

JobSpec verify_spec(const Codec* c, uint32_t len, uint32_t corrupt, uint64_t seed) {
  JobSpec s = encode_spec(c, len, seed);
  s.op = ParityOp::Verify;
  s.corrupt = corrupt;
  return s;
}

std::vector<JobSpec> mixed_specs(size_t n, uint32_t max_len, uint64_t seed) {
  std::mt19937 rng{uint32_t(seed)};
  std::vector<JobSpec> specs;
  for (size_t i = 0; i < n; i++) {
    const auto& code = all_codes()[rng() % all_codes().size()];
    const uint32_t k = 2 + rng() % 7;
    const Codec* c = codec(code.kind, k, code.m);
    const uint32_t len = 64 * (1 + rng() % (max_len / 64));
    switch (rng() % 4) {
      case 0: specs.push_back(encode_spec(c, len, seed + i)); break;
      case 1: {
        const uint8_t a = uint8_t(rng() % k), b = uint8_t((a + 1 + rng() % (k - 1)) % k);
        specs.push_back(update_spec(c, len, {a, b}, seed + i));
        break;
      }
      case 2: {
        const size_t want = 1 + rng() % code.m;
        std::vector<uint8_t> erased;
        for (uint32_t r = 0; r < k + code.m && erased.size() < want; r++)
          if (rng() % 3 == 0) erased.push_back(uint8_t(r));
        if (erased.empty()) erased.push_back(uint8_t(k));
        specs.push_back(recover_first_survivors(c, len, erased, 0, seed + i));
        break;
      }
      default: specs.push_back(verify_spec(c, len, rng() % (1u << code.m), seed + i)); break;
    }
  }
  return specs;
}

std::vector<JobSpec> every_erasure_pattern(const std::vector<uint32_t>& ks, uint32_t len, uint32_t len2) {
  std::vector<JobSpec> specs;
  uint64_t seed = 1000;
  for (const auto& code : all_codes())
    for (uint32_t k : ks) {
      if (k < 2 && code.kind != CodeKind::Cauchy) continue;  // RAID 5/6 need two data strips
      const Codec* c = codec(code.kind, k, code.m);
      const uint32_t n = k + code.m;
      for (uint64_t mask = 1; mask < (1ull << n); mask++) {
        const int lost = __builtin_popcountll(mask);
        if (lost > int(code.m)) continue;
        std::vector<uint8_t> erased;
        for (uint32_t r = 0; r < n; r++)
          if (mask >> r & 1) erased.push_back(uint8_t(r));
        specs.push_back(recover_first_survivors(c, len, erased, 0, seed++));
        if (lost > 1) specs.push_back(recover_first_survivors(c, len2, {erased.back()}, mask, seed++));
      }
    }
  return specs;
}

namespace {

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  std::vector<uint8_t> v(n);
  uint64_t s = seed;
  for (size_t i = 0; i < n; i += 8) {
    uint64_t r = splitmix(s);
    memcpy(v.data() + i, &r, std::min<size_t>(8, n - i));
  }
  return v;
}

// A whole stripe: k random data rows, then the m parity rows of the code.
std::vector<std::vector<uint8_t>> stripe(const Codec& c, uint32_t len, uint64_t seed) {
  std::vector<std::vector<uint8_t>> rows;
  for (uint32_t i = 0; i < c.k(); i++) rows.push_back(random_bytes(len, seed * 1000 + i));
  for (uint32_t r = 0; r < c.m(); r++) {
    std::vector<uint8_t> p(len, 0);
    for (uint32_t i = 0; i < c.k(); i++) {
      uint8_t t[256];
      for (int x = 0; x < 256; x++) t[x] = gf::mul(c.coeff(r, i), uint8_t(x));
      for (uint32_t b = 0; b < len; b++) p[b] ^= t[rows[i][b]];
    }
    rows.push_back(std::move(p));
  }
  return rows;
}

// Initial contents of a spec's buffers in job order, and known answers.
//   Encode: src[k], dst[m]       Update: old[n], new[n], dst[m]
//   Recover: src[k], dst[ne]     Verify: src[k+m]
struct SpecData {
  std::vector<std::vector<uint8_t>> bufs;
  std::vector<std::vector<uint8_t>> truth;  // Recover: the true erased rows
};

SpecData make_data(const JobSpec& s) {
  const Codec& c = *s.codec;
  SpecData d;
  auto garbage = [&](uint32_t i) { return random_bytes(s.len, s.seed * 7919 + 500 + i); };
  switch (s.op) {
    case ParityOp::Encode:
      for (uint32_t i = 0; i < c.k() + c.m(); i++) d.bufs.push_back(garbage(i));
      break;
    case ParityOp::Update:
      for (uint32_t i = 0; i < 2 * s.cols.size() + c.m(); i++) d.bufs.push_back(garbage(i));
      break;
    case ParityOp::Recover: {
      auto rows = stripe(c, s.len, s.seed);
      for (uint8_t r : s.survivors) d.bufs.push_back(rows[r]);
      for (uint32_t e = 0; e < s.erased.size(); e++) {
        d.bufs.push_back(garbage(e));
        d.truth.push_back(rows[s.erased[e]]);
      }
      break;
    }
    case ParityOp::Verify: {
      d.bufs = stripe(c, s.len, s.seed);
      for (uint32_t r = 0; r < c.m(); r++)
        if (s.corrupt >> r & 1) {
          const uint32_t pos = uint32_t((s.seed * 2654435761u + r * 977u) % s.len);
          d.bufs[c.k() + r][pos] ^= uint8_t(1 + r);
        }
      break;
    }
  }
  return d;
}

// One spec made real on one backend's buffers.
struct Instance {
  ParityJob job;
  std::vector<uint8_t*> bases;  // allocations
  std::vector<uint8_t*> bufs;   // buffers (bases + misalignment)
  int done_calls = 0;
};

void on_done(ParityJob* j) { static_cast<Instance*>(j->ctx)->done_calls++; }

std::unique_ptr<Instance> make_instance(const JobSpec& s, const SpecData& d, const Allocator& a) {
  auto in = std::make_unique<Instance>();
  for (size_t b = 0; b < d.bufs.size(); b++) {
    auto* base = static_cast<uint8_t*>(a.alloc(s.len + 64));
    uint8_t* p = base + (b == 0 ? s.misalign : 0);
    memcpy(p, d.bufs[b].data(), s.len);
    in->bases.push_back(base);
    in->bufs.push_back(p);
  }
  const Codec& c = *s.codec;
  ParityJob& j = in->job;
  j.op = s.op;
  j.codec = s.codec;
  j.len = s.len;
  j.done = on_done;
  j.ctx = in.get();
  j.status = 12345;  // must be overwritten
  auto& b = in->bufs;
  switch (s.op) {
    case ParityOp::Encode:
      j.nsrc = c.k();
      j.ndst = c.m();
      for (uint32_t i = 0; i < c.k(); i++) j.src[i] = b[i];
      for (uint32_t r = 0; r < c.m(); r++) j.dst[r] = b[c.k() + r];
      break;
    case ParityOp::Update: {
      const uint32_t n = uint32_t(s.cols.size());
      j.nsrc = n;
      j.ndst = c.m();
      for (uint32_t i = 0; i < n; i++) {
        j.src[i] = b[i];
        j.src2[i] = b[n + i];
        j.src_idx[i] = s.cols[i];
      }
      for (uint32_t r = 0; r < c.m(); r++) j.dst[r] = b[2 * n + r];
      break;
    }
    case ParityOp::Recover:
      j.nsrc = c.k();
      j.ndst = uint32_t(s.erased.size());
      for (uint32_t i = 0; i < c.k(); i++) {
        j.src[i] = b[i];
        j.src_idx[i] = s.survivors[i];
      }
      for (uint32_t e = 0; e < j.ndst; e++) {
        j.dst[e] = b[c.k() + e];
        j.dst_idx[e] = s.erased[e];
      }
      break;
    case ParityOp::Verify:
      j.nsrc = c.k() + c.m();
      j.ndst = c.m();
      for (uint32_t i = 0; i < c.k() + c.m(); i++) j.src[i] = b[i];
      j.mismatch_rows = 0xdead;  // must be overwritten
      break;
  }
  return in;
}

// The buffers a job writes.
std::vector<const uint8_t*> outputs(const JobSpec& s, const Instance& in) {
  const Codec& c = *s.codec;
  std::vector<const uint8_t*> v;
  switch (s.op) {
    case ParityOp::Encode:
      for (uint32_t r = 0; r < c.m(); r++) v.push_back(in.bufs[c.k() + r]);
      break;
    case ParityOp::Update:
      for (uint32_t r = 0; r < c.m(); r++) v.push_back(in.bufs[2 * s.cols.size() + r]);
      break;
    case ParityOp::Recover:
      for (uint32_t e = 0; e < s.erased.size(); e++) v.push_back(in.bufs[c.k() + e]);
      break;
    case ParityOp::Verify:
      break;
  }
  return v;
}

struct Run {
  std::vector<std::unique_ptr<Instance>> inst;
  Allocator alloc;
  ~Run() {
    for (auto& i : inst)
      for (uint8_t* p : i->bases) alloc.free(p);
  }
};

void run_on(ParityBackend& be, const std::vector<JobSpec>& specs, const std::vector<SpecData>& data,
            const Allocator& a, const RunOptions& o, Run* run) {
  run->alloc = a;
  std::vector<ParityJob*> jobs;
  for (size_t i = 0; i < specs.size(); i++) {
    run->inst.push_back(make_instance(specs[i], data[i], a));
    jobs.push_back(&run->inst.back()->job);
  }
  const size_t done = run_to_completion(be, jobs, o.submit_chunk, o.timeout_s);
  EXPECT_EQ(done, jobs.size()) << be.name() << ": not every job completed";
}

const char* op_name(ParityOp op) {
  switch (op) {
    case ParityOp::Encode: return "encode";
    case ParityOp::Update: return "update";
    case ParityOp::Recover: return "recover";
    case ParityOp::Verify: return "verify";
  }
  return "?";
}

std::string describe(const JobSpec& s, size_t idx) {
  std::string d = "job " + std::to_string(idx) + " (" + op_name(s.op) + ", k=" +
                  std::to_string(s.codec->k()) + " m=" + std::to_string(s.codec->m()) +
                  " kind=" + std::to_string(int(s.codec->kind())) + " len=" + std::to_string(s.len);
  if (s.op == ParityOp::Recover) {
    d += " survivors=";
    for (uint8_t r : s.survivors) d += std::to_string(r) + ",";
    d += " erased=";
    for (uint8_t r : s.erased) d += std::to_string(r) + ",";
  }
  return d + ")";
}

// First differing byte, or -1.
long first_diff(const uint8_t* a, const uint8_t* b, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (a[i] != b[i]) return long(i);
  return -1;
}

}  // namespace

size_t run_to_completion(ParityBackend& be, std::vector<ParityJob*>& jobs, size_t chunk,
                         double timeout_s) {
  if (chunk == 0) chunk = 1;
  const size_t before = be.in_flight();
  for (size_t i = 0; i < jobs.size(); i += chunk)
    be.submit(jobs.data() + i, std::min(chunk, jobs.size() - i));
  const auto start = std::chrono::steady_clock::now();
  while (be.in_flight() > before) {
    if (be.poll() > 0) continue;
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > timeout_s) break;
    wait_for_parity(be, 50000000);
  }
  return jobs.size() - (be.in_flight() - before);
}

void expect_matches_isal(ParityBackend& be, const std::vector<JobSpec>& specs, const Allocator& alloc,
                         const RunOptions& o) {
  std::vector<SpecData> data;
  data.reserve(specs.size());
  for (const JobSpec& s : specs) data.push_back(make_data(s));

  auto isal = make_cpu_backend();
  auto ref = make_reference_backend();
  Run under, want, scalar;
  run_on(be, specs, data, alloc, o, &under);
  run_on(*isal, specs, data, aligned_allocator(), o, &want);
  if (o.with_reference) run_on(*ref, specs, data, aligned_allocator(), o, &scalar);

  int failures = 0;
  for (size_t i = 0; i < specs.size() && failures < 20; i++) {
    const JobSpec& s = specs[i];
    const Instance& u = *under.inst[i];
    const Instance& w = *want.inst[i];
    const std::string what = describe(s, i);
    const int before = ::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count();
    EXPECT_EQ(u.done_calls, 1) << what << ": done() calls";
    EXPECT_EQ(u.job.status, w.job.status) << what << ": status";
    if (s.op == ParityOp::Verify) {
      EXPECT_EQ(u.job.mismatch_rows, w.job.mismatch_rows) << what << ": mismatch_rows vs ISA-L";
      EXPECT_EQ(u.job.mismatch_rows, s.corrupt) << what << ": mismatch_rows vs the damage done";
    }
    const auto got = outputs(s, u), isa = outputs(s, w);
    for (size_t r = 0; r < got.size() && u.job.status == 0; r++) {
      const long d = first_diff(got[r], isa[r], s.len);
      EXPECT_EQ(d, -1) << what << ": output row " << r << " differs from ISA-L at byte " << d;
      if (o.with_reference) {
        const long dr = first_diff(got[r], outputs(s, *scalar.inst[i])[r], s.len);
        EXPECT_EQ(dr, -1) << what << ": output row " << r << " differs from the reference at byte " << dr;
      }
      if (s.op == ParityOp::Recover) {
        const long dt = first_diff(got[r], data[i].truth[r].data(), s.len);
        EXPECT_EQ(dt, -1) << what << ": rebuilt row " << r << " is not the lost row (byte " << dt << ")";
      }
    }
    if (::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count() != before)
      failures++;
  }
}

}  // namespace gpuraid::test
