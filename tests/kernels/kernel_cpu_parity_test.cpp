// The parity kernel source, run on the CPU by the host shim behind the
// batching backend, against ISA-L and the scalar reference, bit for bit.
// Lengths stay small for wide stripes: the shim runs every GPU thread in turn.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "kernels/kernel_cpu_backend.h"
#include "parity_harness.h"
#include "tests/support/parity_contract.h"

namespace gpuraid {
namespace {

using test::all_codes;
using test::codec;
using test::JobSpec;

std::unique_ptr<kern::BatchingBackend> backend(KernelCpuOptions o = {}) {
  return make_kernel_cpu_backend(o);
}

// Widths up to the 64-member limit (k + m <= 64); ec also allows k = 1.
std::vector<uint32_t> widths(const test::CodeShape& code) {
  std::vector<uint32_t> v = {2, 3, 7, 8, 16, 31, 64 - code.m};
  if (code.kind == CodeKind::Cauchy) v.insert(v.begin(), 1);
  return v;
}

std::string why_on_cpu(const ParityBackend& be) {
  std::string why;
  be.fell_back(&why);
  return why;
}

uint64_t batches(const ParityBackend& be) {
  const ParityCounters c = be.counters();
  return c.zero_copy_batches + c.staged_batches;
}

// Buffers registered with the backend, as the engine's are: every batch
// runs zero-copy (staged: every buffer bounced, on purpose).
void check(kern::BatchingBackend& be, const std::vector<JobSpec>& specs, test::RunOptions o = {},
           bool staged = false) {
  test::expect_matches_isal(be, specs, test::registered_allocator(be), o);
  EXPECT_FALSE(be.on_cpu()) << why_on_cpu(be);
  EXPECT_EQ(be.in_flight(), 0u);
  const ParityCounters c = be.counters();
  if (staged)
    EXPECT_EQ(c.zero_copy_batches, 0u);
  else
    EXPECT_EQ(c.staged_batches, 0u) << "registered buffers were bounced";
}

TEST(KernelCpuParity, EncodeEveryCodeWidthAndTail) {
  std::vector<JobSpec> specs;
  uint64_t seed = 1;
  for (const auto& code : all_codes())
    for (uint32_t k : widths(code)) {
      const Codec* c = codec(code.kind, k, code.m);
      const std::vector<uint32_t> lens =
          k <= 8 ? std::vector<uint32_t>{64, 128, 4096, 8192 + 64 * 3, 12288, 4096 * 3 + 64 * 7, 65536}
                 : std::vector<uint32_t>{64 * 3, 4096, 4096 + 64 * 5, 8192 + 64 * 33};
      for (uint32_t len : lens) specs.push_back(test::encode_spec(c, len, seed++));
    }
  auto be = backend();
  check(*be, specs);
}

TEST(KernelCpuParity, UpdateSeveralChangedColumns) {
  std::vector<JobSpec> specs;
  uint64_t seed = 100;
  for (const auto& code : all_codes())
    for (uint32_t k : {3u, 8u, 16u, 64u - code.m}) {
      const Codec* c = codec(code.kind, k, code.m);
      std::vector<std::vector<uint8_t>> col_sets = {
          {0}, {uint8_t(k - 1)}, {0, 2, uint8_t(k - 1)}, {uint8_t(k / 2), 1}};
      std::vector<uint8_t> all(k), every_fifth;
      for (uint32_t i = 0; i < k; i++) all[i] = uint8_t(i);
      for (uint32_t i = 4; i < k; i += 5) every_fifth.push_back(uint8_t(i));
      col_sets.push_back(all);
      col_sets.push_back(every_fifth);
      for (const auto& cols : col_sets)
        for (uint32_t len : {4096u, 64u * 5, 8192u + 64u})
          specs.push_back(test::update_spec(c, len, cols, seed++));
    }
  auto be = backend();
  check(*be, specs);
}

TEST(KernelCpuParity, RecoverEveryErasurePatternSmallK) {
  auto be = backend();
  check(*be, test::every_erasure_pattern({1, 2, 3, 4, 5}, 4096 + 128, 192));
}

TEST(KernelCpuParity, RecoverWideStripesAndUnorderedRows) {
  std::vector<JobSpec> specs;
  std::mt19937 rng(7);
  uint64_t seed = 5000;
  for (const auto& code : all_codes())
    for (uint32_t k : {7u, 16u, 40u, 64u - code.m}) {
      const Codec* c = codec(code.kind, k, code.m);
      for (int rep = 0; rep < 8; rep++) {
        std::vector<uint8_t> rows(k + code.m);
        for (uint32_t r = 0; r < rows.size(); r++) rows[r] = uint8_t(r);
        std::shuffle(rows.begin(), rows.end(), rng);
        const uint32_t lost = 1 + rep % code.m;
        std::vector<uint8_t> erased(rows.begin(), rows.begin() + lost);
        std::vector<uint8_t> surv(rows.begin() + lost, rows.begin() + lost + k);
        if (rep % 2 == 0) {  // the engine's ascending order; odd reps keep the shuffle
          std::sort(erased.begin(), erased.end());
          std::sort(surv.begin(), surv.end());
        }
        specs.push_back(test::recover_spec(c, k > 16 ? 1024 : 4096 + 64, surv, erased, seed++));
      }
    }
  auto be = backend();
  check(*be, specs);
}

TEST(KernelCpuParity, VerifyFlagsExactlyTheDamagedRows) {
  std::vector<JobSpec> specs;
  uint64_t seed = 9000;
  for (const auto& code : all_codes())
    for (uint32_t k : {3u, 16u, 64u - code.m}) {
      const Codec* c = codec(code.kind, k, code.m);
      const uint32_t all = (1u << code.m) - 1;
      for (uint32_t mask : {0u, 1u, 1u << (code.m - 1), all, all & 0x5u})
        for (uint32_t len : {64u, 4096u * 2 + 64 * 9}) specs.push_back(test::verify_spec(c, len, mask, seed++));
    }
  auto be = backend();
  check(*be, specs);
}

TEST(KernelCpuParity, MixedKindsInOneLaunch) {
  KernelCpuOptions o;
  o.batch.window_us = 0;  // launch at the end of the submit: one batch for all
  o.batch.max_batch_jobs = 1 << 20;
  o.batch.max_batch_bytes = 1ull << 40;
  auto be = backend(o);
  const auto specs = test::mixed_specs(300, 9000, 77);
  check(*be, specs);
  EXPECT_EQ(batches(*be), 1u);
  EXPECT_EQ(be->counters().device_jobs, specs.size());
}

TEST(KernelCpuParity, ThousandsOfSmallJobs) {
  KernelCpuOptions o;
  o.max_blocks = 16;
  auto be = backend(o);
  const auto specs = test::mixed_specs(3000, 512, 4242);
  test::RunOptions ro;
  ro.submit_chunk = 250;
  check(*be, specs, ro);
  EXPECT_EQ(be->counters().device_jobs, specs.size());
}

// Grids far smaller than the tile count: each block walks many tiles and
// crosses job boundaries mid-range.
TEST(KernelCpuParity, SmallGridsWalkManyTilesAndJobs) {
  for (uint32_t blocks : {1u, 3u, 7u}) {
    KernelCpuOptions o;
    o.max_blocks = blocks;
    auto be = backend(o);
    std::vector<JobSpec> specs;
    uint64_t seed = 300 + blocks;
    for (const auto& code : all_codes()) {
      const Codec* c = codec(code.kind, 5, code.m);
      specs.push_back(test::encode_spec(c, 4096 * 5 + 64, seed++));
      specs.push_back(test::update_spec(c, 4096 * 2, {1, 3}, seed++));
      specs.push_back(test::verify_spec(c, 4096 * 3, 1u << (code.m - 1), seed++));
      specs.push_back(test::recover_first_survivors(c, 4096 + 64, {0}, 0, seed++));
    }
    check(*be, specs);
  }
}

TEST(KernelCpuParity, BatchesSplitBySizeAndWindow) {
  KernelCpuOptions o;
  o.batch.max_batch_jobs = 7;
  o.batch.window_us = 200;  // the leftover batch launches from the timer
  auto be = backend(o);
  const auto specs = test::mixed_specs(50, 2048, 9);
  test::RunOptions ro;
  ro.submit_chunk = 1;
  check(*be, specs, ro);
  EXPECT_EQ(batches(*be), (specs.size() + 6) / 7);

  KernelCpuOptions bytes;
  bytes.batch.max_batch_bytes = 64 * 1024;
  auto by_bytes = backend(bytes);
  check(*by_bytes, specs, ro);
  EXPECT_GT(batches(*by_bytes), 3u);
}

// The staged path's placement: copies into the slot's bounce memory (inputs
// read by several jobs once), kernel on the copies, outputs copied back.
TEST(KernelCpuParity, StagedPathMatchesIsal) {
  KernelCpuOptions o;
  o.staged = true;
  o.max_blocks = 8;
  auto be = backend(o);
  check(*be, test::mixed_specs(400, 9000, 123), {}, true);
  check(*be, test::every_erasure_pattern({3}, 4096 + 64, 128), {}, true);
}

// As strict as a GPU: memory nobody registered is never read in place. It
// bounces (counted staged), and a batch too big for the bounce memory runs
// on the CPU; the results are right either way.
TEST(KernelCpuParity, UnregisteredBuffersAreStagedNeverReadInPlace) {
  auto be = backend();
  const auto specs = test::mixed_specs(60, 4096, 17);
  test::expect_matches_isal(*be, specs, test::aligned_allocator());
  const ParityCounters c = be->counters();
  EXPECT_EQ(c.zero_copy_batches, 0u);
  EXPECT_GT(c.staged_batches, 0u);
  EXPECT_EQ(c.device_jobs, specs.size());

  KernelCpuOptions small;
  small.bounce_bytes = 64 * 1024;
  auto tight = backend(small);
  test::expect_matches_isal(*tight, test::mixed_specs(60, 4096, 18), test::aligned_allocator());
  EXPECT_GT(tight->counters().unsupported_jobs, 0u) << "a batch that cannot bounce runs on the CPU";
  EXPECT_FALSE(tight->on_cpu()) << "not a device failure";
}

TEST(KernelCpuParity, RegistrationIsCountedAndRefusesOverlaps) {
  auto be = backend();
  std::vector<uint8_t> mem(1 << 16);
  std::string err;
  ASSERT_TRUE(be->register_memory(mem.data(), mem.size(), &err)) << err;
  EXPECT_TRUE(be->register_memory(mem.data(), mem.size(), &err)) << "the same range again: counted";
  EXPECT_FALSE(be->register_memory(mem.data() + 4096, 4096, &err)) << "inside a registered range";
  EXPECT_FALSE(err.empty());
  EXPECT_FALSE(be->register_memory(mem.data(), 4096, &err)) << "same start, other length";
  EXPECT_FALSE(be->register_memory(nullptr, 4096, &err));
  // Registered by one instance, seen by every instance (one process, one registry).
  auto other = backend();
  std::vector<JobSpec> specs = {test::encode_spec(codec(CodeKind::PQ, 4, 2), 4096, 3)};
  be->unregister_memory(mem.data());
  be->unregister_memory(mem.data());  // counted: this one removes it
  test::expect_matches_isal(*other, specs, test::aligned_allocator());
  EXPECT_EQ(other->counters().zero_copy_batches, 0u);
}

// Two encodes of different codes, a verify and a recover reading the same
// data buffers in one batch (each input is staged once, read by all).
TEST(KernelCpuParity, JobsSharingInputBuffers) {
  for (bool staged : {false, true}) {
    KernelCpuOptions o;
    o.staged = staged;
    auto be = backend(o);
    auto isal = make_cpu_backend();
    constexpr uint32_t k = 5, len = 8192 + 64;
    const Codec* pq = codec(CodeKind::PQ, k, 2);
    const Codec* ec = codec(CodeKind::Cauchy, k, 3);
    // data[0..k) shared; per backend: pq parity, ec parity, recovered row.
    std::vector<std::vector<uint8_t>> data(k, std::vector<uint8_t>(len));
    for (uint32_t i = 0; i < k; i++)
      for (uint32_t b = 0; b < len; b++) data[i][b] = uint8_t(i * 37 + b * 11 + (b >> 8));
    struct Out {
      alignas(64) uint8_t p[6][len];
    };
    auto run = [&](ParityBackend& target, Out* out) {
      ParityJob jobs[3];
      for (ParityJob& j : jobs) {
        j.len = len;
        j.done = [](ParityJob*) {};
        for (uint32_t i = 0; i < k; i++) j.src[i] = data[i].data();
      }
      jobs[0].codec = pq;
      jobs[0].dst[0] = out->p[0];
      jobs[0].dst[1] = out->p[1];
      jobs[1].codec = ec;
      for (int r = 0; r < 3; r++) jobs[1].dst[r] = out->p[2 + r];
      // A Recover reading the same data rows: ec parity row 1 from data.
      jobs[2].codec = ec;
      jobs[2].op = ParityOp::Recover;
      jobs[2].nsrc = k;
      jobs[2].ndst = 1;
      for (uint32_t i = 0; i < k; i++) jobs[2].src_idx[i] = uint8_t(i);
      jobs[2].dst_idx[0] = uint8_t(k + 1);
      jobs[2].dst[0] = out->p[5];
      ParityJob* ptrs[3] = {&jobs[0], &jobs[1], &jobs[2]};
      std::vector<ParityJob*> v(ptrs, ptrs + 3);
      ASSERT_EQ(test::run_to_completion(target, v, 3, 30), 3u);
      for (ParityJob& j : jobs) EXPECT_EQ(j.status, 0);
    };
    auto got = std::make_unique<Out>(), want = std::make_unique<Out>();
    run(*be, got.get());
    run(*isal, want.get());
    for (int r = 0; r < 6; r++)
      EXPECT_EQ(memcmp(got->p[r], want->p[r], len), 0) << "staged=" << staged << " output " << r;
    EXPECT_EQ(memcmp(got->p[5], got->p[3], len), 0) << "recovered ec row 1 = encoded ec row 1";
    EXPECT_EQ(batches(*be), 1u);
  }
}

TEST(KernelCpuParity, OneJobBatch) {
  auto be = backend();
  check(*be, {test::encode_spec(codec(CodeKind::Cauchy, 10, 4), 4096, 1)});
  EXPECT_EQ(batches(*be), 1u);
}

TEST(KernelCpuParity, DoneRunsOnceFromPollNotSubmit) {
  auto be = backend();
  alignas(4096) static uint8_t buf[6][4096];
  ParityJob j;
  int calls = 0;
  j.codec = codec(CodeKind::PQ, 4, 2);
  j.len = 4096;
  for (int i = 0; i < 4; i++) j.src[i] = buf[i];
  j.dst[0] = buf[4];
  j.dst[1] = buf[5];
  j.ctx = &calls;
  j.done = [](ParityJob* p) { ++*static_cast<int*>(p->ctx); };
  ParityJob* jp = &j;
  be->submit(&jp, 1);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(be->in_flight(), 1u);
  be->drain();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(be->in_flight(), 0u);
  EXPECT_EQ(be->poll(), 0u);
  EXPECT_EQ(calls, 1);
}

TEST(KernelCpuParity, UnsupportedJobsRunOnIsal) {
  std::vector<JobSpec> specs;
  JobSpec odd = test::encode_spec(codec(CodeKind::Cauchy, 4, 2), 96, 1);  // not a multiple of 64
  specs.push_back(odd);
  JobSpec mis = test::update_spec(codec(CodeKind::PQ, 6, 2), 4096, {2}, 2);
  mis.misalign = 8;  // not 16-byte aligned
  specs.push_back(mis);
  JobSpec mis2 = test::encode_spec(codec(CodeKind::Xor, 3, 1), 4096, 3);
  mis2.misalign = 32;  // 16-aligned: the kernels take it
  specs.push_back(mis2);
  auto be = backend();
  check(*be, specs, test::RunOptions{SIZE_MAX, false});
  EXPECT_EQ(be->counters().unsupported_jobs, 2u);
  EXPECT_EQ(be->counters().device_jobs, 1u);
}

// Any alignment and length (tests/support/parity_contract.h): the kernels
// take the 16-byte aligned, 64-multiple jobs of the grid, ISA-L the rest.
void check_grid(ParityOp op) {
  auto be = backend();
  const size_t jobs = test::check_parity_grid(*be, op, test::grid_options_from_env());
  const ParityCounters c = be->counters();
  EXPECT_GT(c.device_jobs, 0u);
  EXPECT_GT(c.unsupported_jobs, 0u);
  EXPECT_EQ(c.device_jobs + c.jobs_on_cpu(), jobs);
  EXPECT_FALSE(be->on_cpu()) << why_on_cpu(*be);
}
TEST(KernelCpuParity, GridEncodeAnyAlignmentAndLength) { check_grid(ParityOp::Encode); }
TEST(KernelCpuParity, GridUpdateAnyAlignmentAndLength) { check_grid(ParityOp::Update); }
TEST(KernelCpuParity, GridRecoverAnyAlignmentAndLength) { check_grid(ParityOp::Recover); }
TEST(KernelCpuParity, GridVerifyAnyAlignmentAndLength) { check_grid(ParityOp::Verify); }

TEST(KernelCpuParity, JobsBreakingTheRulesFailWithEinval) {
  auto be = backend();
  EXPECT_GT(test::check_rejects_invalid_jobs(*be), 10u);
  EXPECT_EQ(be->counters().device_jobs, 0u);
}

TEST(KernelCpuParity, ImpossibleRecoveryIsEinvalLikeIsal) {
  const Codec* c = codec(CodeKind::Cauchy, 4, 2);
  std::vector<JobSpec> specs = {
      test::recover_spec(c, 4096, {0, 1, 1, 2}, {3}, 1),  // duplicate survivor
      test::recover_spec(c, 4096, {0, 1, 2, 4}, {3}, 2),  // a valid one beside it
  };
  auto be = backend();
  check(*be, specs, test::RunOptions{SIZE_MAX, false});
}

// A launch that fails: everything still completes correctly, on ISA-L, and
// the backend stays on the CPU until the device is tried again.
TEST(KernelCpuParity, FallbackWhenALaunchFails) {
  KernelCpuOptions o;
  o.batch.max_batch_jobs = 5;
  o.batch.retry_ms = 60000;
  o.fail_launch_at = 2;
  auto be = backend(o);
  const auto specs = test::mixed_specs(40, 4096, 31);
  test::expect_matches_isal(*be, specs, test::registered_allocator(*be), test::RunOptions{5, false});
  EXPECT_TRUE(be->on_cpu());
  std::string why;
  const ParityBackend& base = *be;
  EXPECT_TRUE(base.fell_back(&why)) << "the daemon asks through the base interface";
  EXPECT_NE(why.find("injected"), std::string::npos) << why;
  EXPECT_NE(why.find("tried again"), std::string::npos) << why;
  const ParityCounters c = be->counters();
  EXPECT_GT(c.device_jobs, 0u);
  EXPECT_GT(c.fallback_jobs, 0u);
  EXPECT_EQ(c.device_errors, 1u);
  EXPECT_TRUE(c.on_cpu);
  EXPECT_EQ(c.device_jobs + c.jobs_on_cpu(), specs.size());
}

// The kernel ran (outputs written to device scratch) but the batch failed
// before its commit: nothing reached host memory, so Updates rerun on ISA-L
// apply once.
TEST(KernelCpuParity, FallbackAfterKernelFaultAppliesUpdatesOnce) {
  for (bool staged : {false, true}) {
    KernelCpuOptions o;
    o.fail_after_kernel_at = 0;
    o.staged = staged;
    auto be = backend(o);
    std::vector<JobSpec> specs;
    uint64_t seed = 60;
    for (const auto& code : all_codes()) {
      const Codec* c = codec(code.kind, 6, code.m);
      specs.push_back(test::update_spec(c, 4096, {0, 5}, seed++));
      specs.push_back(test::encode_spec(c, 4096, seed++));
      specs.push_back(test::verify_spec(c, 4096, 1, seed++));
    }
    test::expect_matches_isal(*be, specs, test::registered_allocator(*be), test::RunOptions{SIZE_MAX, false});
    EXPECT_TRUE(be->on_cpu());
    EXPECT_EQ(be->counters().fallback_jobs, specs.size());
  }
}

}  // namespace
}  // namespace gpuraid
