// Plug merging (engine/reactor_plug.cpp) through real io_uring on a real
// file: I/O that continues another one on the same drive in one reactor
// turn, in whatever order the turn issued it, goes as one request and
// every part completes with its own bytes;
// a merged transfer that comes back short is done again part by part.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "engine/engine.h"
#include "engine/io/drive.h"

using namespace gpuraid;

namespace {

struct FreeDeleter {
  void operator()(uint8_t* p) const { free(p); }
};
using Buf = std::unique_ptr<uint8_t, FreeDeleter>;

class PlugMerge : public ::testing::Test {
 protected:
  void SetUp() override {
    char t[] = "/tmp/gpuraid-plug-XXXXXX";
    int fd = mkstemp(t);
    ASSERT_GE(fd, 0);
    close(fd);
    path_ = t;
    EngineConfig c;
    c.arena_bytes = 4u << 20;
    std::string err;
    e_ = Engine::create(c, &err);
    ASSERT_TRUE(e_) << err;
  }
  void TearDown() override {
    if (slot_ >= 0) e_->detach(slot_);
    drive_.reset();
    unlink(path_.c_str());
  }
  void open_drive(uint64_t size) {
    std::string err;
    drive_ = Drive::open(DriveSpec{DriveType::File, path_, size, true}, &err);
    ASSERT_TRUE(drive_) << err;
    slot_ = e_->attach(drive_.get(), &err);
    ASSERT_GE(slot_, 0) << err;
    r().claim();  // this thread drives reactor 0
  }
  Reactor& r() { return e_->reactor(0); }
  // One I/O of `len` bytes at `off`, pattern byte `fill` (writes).
  MemberIo* io(MemberIo::Kind k, uint64_t off, uint32_t len, uint8_t fill) {
    bufs_.emplace_back(static_cast<uint8_t*>(aligned_alloc(4096, len)));
    memset(bufs_.back().get(), fill, len);
    MemberIo* m = r().alloc_io();
    m->kind = k;
    m->drive = drive_.get();
    m->slot = uint32_t(slot_);
    m->offset = off;
    m->len = len;
    m->buf = bufs_.back().get();
    m->ctx = this;
    m->done = [](MemberIo* x) {
      auto* self = static_cast<PlugMerge*>(x->ctx);
      self->results_.push_back({x->offset, x->res});
      self->done_++;
      Reactor::current()->free_io(x);
    };
    return m;
  }
  // Submits every I/O in one turn and polls until all completed.
  void run(const std::vector<MemberIo*>& ios) {
    done_ = 0;
    results_.clear();
    for (MemberIo* m : ios) r().submit(m);
    for (int i = 0; i < 100000 && done_ < ios.size(); i++) r().poll(true, 10);
    ASSERT_EQ(done_, ios.size()) << "I/O did not complete";
  }
  int res_at(uint64_t off) const {
    for (auto& [o, res] : results_)
      if (o == off) return res;
    return INT32_MIN;
  }
  uint64_t merged() const { return e_->reactor(0).stats().member_ios_merged; }

  std::string path_;
  std::unique_ptr<Engine> e_;
  std::unique_ptr<Drive> drive_;
  int slot_ = -1;
  std::vector<Buf> bufs_;
  std::vector<std::pair<uint64_t, int>> results_;
  size_t done_ = 0;
};

TEST_F(PlugMerge, WritesThatContinueEachOtherGoAsOneAndLandInPlace) {
  open_drive(1 << 20);
  const uint64_t m0 = merged();
  // The turn's I/O is sorted by offset first: 0, 4K and 8K..16K go as one
  // although the write at 64K was issued between them; the read of 16K
  // continues the run but is another kind, and the write of 20K continues
  // the read, again another kind.
  run({io(MemberIo::Write, 0, 4096, 'a'), io(MemberIo::Write, 4096, 4096, 'b'),
       io(MemberIo::Write, 65536, 4096, 'z'), io(MemberIo::Write, 8192, 8192, 'c'),
       io(MemberIo::Read, 16384, 4096, 0), io(MemberIo::Write, 16384 + 4096, 4096, 'd')});
  for (auto& [off, res] : results_) EXPECT_GT(res, 0) << "at " << off;
  EXPECT_EQ(res_at(8192), 8192);
  EXPECT_EQ(res_at(16384), 4096);
  EXPECT_EQ(merged() - m0, 2u) << "4K and 8K..16K rode on the write at 0; the rest stood alone";
  std::vector<char> got(24576);
  int fd = ::open(path_.c_str(), O_RDONLY);
  ASSERT_EQ(pread(fd, got.data(), got.size(), 0), ssize_t(got.size()));
  char z = 0;
  ASSERT_EQ(pread(fd, &z, 1, 65536), 1);
  EXPECT_EQ(got[20480], 'd');
  got.resize(20480);
  close(fd);
  EXPECT_EQ(z, 'z');
  for (size_t i = 0; i < got.size(); i++) {
    const char want = i < 4096 ? 'a' : i < 8192 ? 'b' : i < 16384 ? 'c' : 0;  // the file was created sparse
    ASSERT_EQ(got[i], want) << "byte " << i;
  }
}

TEST_F(PlugMerge, ReadsIssuedOutOfOrderInOneTurnGoAsOneAndLandInTheirOwnBuffers) {
  open_drive(1 << 20);
  std::vector<MemberIo*> ios;
  for (uint32_t i = 0; i < 8; i++) ios.push_back(io(MemberIo::Write, uint64_t(i) * 65536, 65536, uint8_t('A' + i)));
  run(ios);
  // Read back in the order a gather's run of stripes or a stream's
  // requests may complete in: 3, 1, 2, 0, 7, 5, 6, 4 (x 64K).
  const uint32_t order[8] = {3, 1, 2, 0, 7, 5, 6, 4};
  ios.clear();
  for (uint32_t i : order) ios.push_back(io(MemberIo::Read, uint64_t(i) * 65536, 65536, 0));
  const uint64_t m0 = merged();
  run(ios);
  EXPECT_EQ(merged() - m0, 7u) << "the eight reads go as one";
  for (uint32_t j = 0; j < 8; j++) {
    const uint8_t* b = bufs_[bufs_.size() - 8 + j].get();
    EXPECT_EQ(res_at(uint64_t(order[j]) * 65536), 65536);
    ASSERT_EQ(b[0], uint8_t('A' + order[j])) << "read of strip " << order[j];
    ASSERT_EQ(b[65535], uint8_t('A' + order[j])) << "read of strip " << order[j];
  }
}

TEST_F(PlugMerge, AMergedRequestStopsAtTheDrivesLimitAndAtSixtyFourPieces) {
  open_drive(4 << 20);
  // 20 x 64K = 1.25 MiB: one request of 1 MiB (15 ride) and one of 256K (3 ride).
  std::vector<MemberIo*> ios;
  for (uint32_t i = 0; i < 20; i++) ios.push_back(io(MemberIo::Write, uint64_t(i) * 65536, 65536, uint8_t(i)));
  uint64_t m0 = merged();
  run(ios);
  for (auto& [off, res] : results_) ASSERT_EQ(res, 65536) << "at " << off;
  EXPECT_EQ(merged() - m0, 18u);
  // 70 x 4K: 64 pieces (63 ride), then 6 (5 ride).
  ios.clear();
  for (uint32_t i = 0; i < 70; i++) ios.push_back(io(MemberIo::Read, uint64_t(i) * 4096, 4096, 0));
  m0 = merged();
  run(ios);
  for (auto& [off, res] : results_) ASSERT_EQ(res, 4096) << "at " << off;
  EXPECT_EQ(merged() - m0, 68u);
  // Every read landed in its own buffer: 4K pieces of the 64K writes.
  for (uint32_t i = 0; i < 70; i++) {
    const uint8_t* b = bufs_[bufs_.size() - 70 + i].get();
    ASSERT_EQ(b[0], uint8_t(i / 16)) << "piece " << i;
    ASSERT_EQ(b[4095], uint8_t(i / 16)) << "piece " << i;
  }
}

TEST_F(PlugMerge, AShortMergedTransferIsDoneAgainPartByPart) {
  open_drive(16384);
  // Reads of 8K..12K, 12K..16K and 16K..20K: merged, the file ends at 16K and
  // the kernel returns 8K of 12K. Each part alone: two whole, one short (EIO).
  const uint64_t m0 = merged();
  run({io(MemberIo::Read, 8192, 4096, 0), io(MemberIo::Read, 12288, 4096, 0), io(MemberIo::Read, 16384, 4096, 0)});
  EXPECT_EQ(res_at(8192), 4096);
  EXPECT_EQ(res_at(12288), 4096);
  EXPECT_EQ(res_at(16384), -EIO) << "past the end of the drive";
  EXPECT_EQ(merged() - m0, 0u) << "a merge that came back short counts none";
}

}  // namespace
