// The host side of the kernels: which jobs go to the CPU, descriptor
// layout, a slot's placement (in place, bounced), its commit and its gate.
#include "kernels/batch_builder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <new>
#include <set>

#include "kernels/address_registry.h"
#include "kernels/slot_program.h"

namespace gpuraid::kern {
namespace {

alignas(64) uint8_t pool[16][8192];

ParityJob encode_job(const Codec* c, uint32_t len) {
  ParityJob j;
  j.codec = c;
  j.len = len;
  for (uint32_t i = 0; i < c->k(); i++) j.src[i] = pool[i];
  for (uint32_t r = 0; r < c->m(); r++) j.dst[r] = pool[c->k() + r];
  return j;
}

TEST(BatchBuilder, RoutesOddJobsToTheCpu) {
  const Codec c(CodeKind::Cauchy, 4, 2), wide(CodeKind::Cauchy, 8, 5);
  ParityJob j = encode_job(&c, 4096);
  EXPECT_EQ(BatchBuilder::unsupported(j), nullptr);
  j.len = 96;
  EXPECT_NE(BatchBuilder::unsupported(j), nullptr);
  j.len = 0;
  EXPECT_NE(BatchBuilder::unsupported(j), nullptr);
  j = encode_job(&c, 4096);
  j.src[2] += 8;
  EXPECT_NE(BatchBuilder::unsupported(j), nullptr);
  j = encode_job(&wide, 4096);  // m = 5 > kMaxRows
  EXPECT_NE(BatchBuilder::unsupported(j), nullptr);
  ParityJob u = encode_job(&c, 4096);
  u.op = ParityOp::Update;
  u.nsrc = 1;
  u.src2[0] = pool[10];
  u.src_idx[0] = 4;  // column out of range
  EXPECT_NE(BatchBuilder::unsupported(u), nullptr);
  u.src_idx[0] = 3;
  EXPECT_EQ(BatchBuilder::unsupported(u), nullptr);
}

TEST(BatchBuilder, Raid6UsesHornerWithColumnsHighestFirst) {
  const Codec c(CodeKind::PQ, 5, 2);
  ParityJob j = encode_job(&c, 4096 * 2 + 64);
  BatchBuilder bb;
  HostBatch b;
  ASSERT_TRUE(bb.add(&j, &b));
  ASSERT_EQ(b.jobs.size(), 1u);
  EXPECT_EQ(b.jobs[0].horner, 1);
  EXPECT_EQ(b.jobs[0].ndst, 2);
  EXPECT_TRUE(b.coefs.empty());
  for (uint32_t i = 0; i < 5; i++) EXPECT_EQ(b.ptrs[i], reinterpret_cast<uintptr_t>(pool[4 - i]));
  EXPECT_EQ(b.ntiles, 3u);
}

TEST(BatchBuilder, CauchyCoefficientsPackRowsIntoBytes) {
  const Codec c(CodeKind::Cauchy, 3, 4);
  ParityJob j = encode_job(&c, 4096);
  BatchBuilder bb;
  HostBatch b;
  ASSERT_TRUE(bb.add(&j, &b));
  ASSERT_EQ(b.coefs.size(), 3u);
  for (uint32_t col = 0; col < 3; col++)
    for (uint32_t r = 0; r < 4; r++) EXPECT_EQ((b.coefs[col] >> (8 * r)) & 0xff, c.coeff(r, col));
}

// Identity mapping, as the host shim's: registered memory is read in place.
struct IdentityMapper final : AddressRegistry::Mapper {
  bool map(void* p, size_t, uint64_t* dev) override {
    *dev = reinterpret_cast<uint64_t>(p);
    return true;
  }
  void unmap(void*) override {}
};

// A slot whose "device" addresses are host ones, so a test can read what
// the executor would copy to the device.
struct alignas(64) Line {
  uint64_t w[8];
};
struct FakeSlot {
  std::unique_ptr<SlotCtrl> ctrl = std::make_unique<SlotCtrl>();
  std::vector<Line> blob = std::vector<Line>(1 << 13), bounce = std::vector<Line>(1 << 13),
                    scratch = std::vector<Line>(1 << 13);
  SlotMemory mem;
  FakeSlot() {
    mem.ctrl = ctrl.get();
    mem.ctrl_dev = reinterpret_cast<uint64_t>(ctrl.get());
    mem.blob = reinterpret_cast<uint8_t*>(blob.data());
    mem.blob_cap = blob.size() * 64;
    mem.dev_blob = reinterpret_cast<uint64_t>(blob.data());
    mem.bounce = reinterpret_cast<uint8_t*>(bounce.data());
    mem.bounce_dev = reinterpret_cast<uint64_t>(bounce.data());
    mem.bounce_cap = bounce.size() * 64;
    mem.scratch_dev = reinterpret_cast<uint64_t>(scratch.data());
    mem.scratch_cap = scratch.size() * 64;
  }
  uint64_t bounce_at(uint64_t off) const { return mem.bounce_dev + off; }
};

// The commit's copy jobs: (from, to) device addresses, read off the blob.
std::vector<std::pair<uint64_t, uint64_t>> commit_copies(const SlotLaunch& l) {
  std::vector<std::pair<uint64_t, uint64_t>> v;
  for (uint32_t j = 0; j < l.commit.njobs; j++) {
    const KJob& job = l.commit.jobs[j];
    v.emplace_back(l.commit.ptrs[job.ptr], l.commit.ptrs[job.ptr + 1]);
  }
  return v;
}

TEST(SlotProgram, UnregisteredBuffersBounceSharedInputsOnce) {
  const Codec pq(CodeKind::PQ, 4, 2), ec(CodeKind::Cauchy, 4, 3);
  ParityJob a = encode_job(&pq, 4096), e = encode_job(&ec, 4096);
  for (uint32_t r = 0; r < 3; r++) e.dst[r] = pool[8 + r];
  BatchBuilder bb;
  HostBatch b;
  ASSERT_TRUE(bb.add(&a, &b));
  ASSERT_TRUE(bb.add(&e, &b));
  AddressRegistry nothing;
  AddressView view(nothing);
  SlotProgram prog;
  const SlotProgram::Needs need = prog.plan(b, view, false);
  EXPECT_TRUE(need.staged);
  EXPECT_EQ(need.bounce, 9u * 4096);   // the 4 shared data strips once, P, Q and three ec rows
  EXPECT_EQ(need.scratch, 5u * 4096);  // every output is computed into scratch first
  FakeSlot slot;
  for (int i = 0; i < 4; i++) memset(pool[i], 0x10 + i, 4096);
  SlotLaunch l;
  prog.start(b, slot.mem, 7, 64, &l);
  // Inputs copied into bounce memory, read there by the kernel.
  std::set<uint64_t> inputs;
  for (uint32_t p = 0; p < 4; p++) inputs.insert(l.main.ptrs[p]);  // PQ's data pointers
  for (uint64_t at : inputs) {
    EXPECT_GE(at, slot.mem.bounce_dev);
    EXPECT_LT(at, slot.mem.bounce_dev + need.bounce);
  }
  EXPECT_EQ(inputs.size(), 4u);
  const uint8_t* first = reinterpret_cast<const uint8_t*>(l.main.ptrs[3]);  // Horner: pool[0] last
  EXPECT_EQ(first[0], 0x10);
  // Five commit copies, scratch -> bounce, each output once.
  ASSERT_TRUE(l.has_commit);
  const auto copies = commit_copies(l);
  ASSERT_EQ(copies.size(), 5u);
  std::set<uint64_t> to;
  for (auto [from, dst] : copies) {
    EXPECT_GE(from, slot.mem.scratch_dev);
    EXPECT_GE(dst, slot.mem.bounce_dev);
    EXPECT_EQ(dst % 64, 0u);
    to.insert(dst);
  }
  EXPECT_EQ(to.size(), 5u);
  EXPECT_EQ(l.commit.seq, 7u);
  EXPECT_NE(l.commit.started, nullptr);
  EXPECT_EQ(l.main.started, nullptr) << "only the commit is gated";
}

TEST(SlotProgram, RegisteredBuffersInPlaceOutputsCommitToThem) {
  const Codec c(CodeKind::Cauchy, 6, 3);
  ParityJob u = encode_job(&c, 8192);
  u.op = ParityOp::Update;
  u.nsrc = 2;
  u.src_idx[0] = 1;
  u.src_idx[1] = 5;
  u.src2[0] = pool[12];
  u.src2[1] = pool[13];
  BatchBuilder bb;
  HostBatch b;
  ASSERT_TRUE(bb.add(&u, &b));
  AddressRegistry reg;
  IdentityMapper m;
  ASSERT_EQ(reg.add(pool, sizeof pool, m), AddressRegistry::Add::Added);
  AddressView view(reg);
  SlotProgram prog;
  const SlotProgram::Needs need = prog.plan(b, view, false);
  EXPECT_FALSE(need.staged);
  EXPECT_EQ(need.bounce, 0u);
  EXPECT_EQ(need.scratch, 3u * 8192);
  FakeSlot slot;
  SlotLaunch l;
  prog.start(b, slot.mem, 3, 64, &l);
  const auto copies = commit_copies(l);
  ASSERT_EQ(copies.size(), 3u);
  for (uint32_t r = 0; r < 3; r++) {
    EXPECT_EQ(copies[r].first, slot.mem.scratch_dev + r * 8192);
    EXPECT_EQ(copies[r].second, reinterpret_cast<uintptr_t>(pool[6 + r])) << "new parity over the old, in place";
  }
  // The Update reads the old parity in place, and writes only scratch.
  const KJob& j = l.main.jobs[0];
  for (uint32_t r = 0; r < 3; r++) {
    EXPECT_EQ(l.main.ptrs[j.ptr + 4 + r], reinterpret_cast<uintptr_t>(pool[6 + r]));
    EXPECT_EQ(l.main.ptrs[j.ptr + 7 + r], slot.mem.scratch_dev + r * 8192);
  }
}

TEST(SlotProgram, GateClosesOnlyBeforeTheCommitStarts) {
  const Codec c(CodeKind::Xor, 3, 1);
  ParityJob j = encode_job(&c, 4096);
  BatchBuilder bb;
  HostBatch b;
  ASSERT_TRUE(bb.add(&j, &b));
  AddressRegistry nothing;
  AddressView view(nothing);
  FakeSlot slot;
  SlotProgram prog;
  prog.plan(b, view, false);
  SlotLaunch l;
  prog.start(b, slot.mem, 41, 64, &l);
  EXPECT_FALSE(prog.finished(slot.mem));
  slot.ctrl->started[0] = 40;  // a block of an older batch
  EXPECT_TRUE(prog.abort(slot.mem)) << "no block of this commit started: it will write nothing";
  EXPECT_EQ(slot.ctrl->abort, 41u);
  EXPECT_TRUE(prog.aborted());

  prog.plan(b, view, false);
  prog.start(b, slot.mem, 42, 64, &l);
  EXPECT_FALSE(prog.aborted());
  slot.ctrl->started[l.commit_grid - 1] = 42;
  EXPECT_FALSE(prog.abort(slot.mem)) << "a block passed the gate: the batch must be waited for";
  EXPECT_FALSE(prog.aborted());
  slot.ctrl->marker = 42;
  EXPECT_TRUE(prog.finished(slot.mem));
}

// Recovering rows 0 and 1 of a 2+2 code from rows 2 and 3, the codec made
// in `at` (and destroyed after): the coefficient words the builder packs.
std::vector<uint32_t> recover_coefs(BatchBuilder& bb, void* at, CodeKind kind) {
  const Codec* c = new (at) Codec(kind, 2, 2);
  ParityJob j;
  j.op = ParityOp::Recover;
  j.codec = c;
  j.len = 4096;
  j.nsrc = 2;
  j.ndst = 2;
  for (uint32_t i = 0; i < 2; i++) {
    j.src[i] = pool[i];
    j.src_idx[i] = uint8_t(2 + i);
    j.dst[i] = pool[2 + i];
    j.dst_idx[i] = uint8_t(i);
  }
  HostBatch b;
  EXPECT_TRUE(bb.add(&j, &b));
  c->~Codec();
  return b.coefs;
}

// A volume deleted and another made can put a new codec where the old one
// was: the decode cache must not hand it the old code's coefficients.
TEST(BatchBuilder, DecodeCacheIsPerCodeNotPerAddress) {
  alignas(Codec) unsigned char storage[sizeof(Codec)];
  BatchBuilder shared, fresh;
  const std::vector<uint32_t> pq = recover_coefs(shared, storage, CodeKind::PQ);
  const std::vector<uint32_t> ec = recover_coefs(shared, storage, CodeKind::Cauchy);
  EXPECT_NE(pq, ec);
  EXPECT_EQ(ec, recover_coefs(fresh, storage, CodeKind::Cauchy));
}

TEST(BatchBuilder, GridNeverExceedsTilesOrDevice) {
  EXPECT_EQ(grid_blocks(1, 1000), 1u);
  EXPECT_EQ(grid_blocks(5000, 1000), 1000u);
  EXPECT_EQ(grid_blocks(5000, 0), 1u);
}

}  // namespace
}  // namespace gpuraid::kern
