// ublk server conformance against the running kernel's ublk_drv: the
// behaviours ../shared/notes/ublk.md lists as must-test that the VM lane's
// shell steps do not reach (feature negotiation, invalid arguments refused
// by the kernel and by us, SET_PARAMS on a live device, errors reaching the
// application, delete with every request held in the server, exclusive
// char device). The VM lane runs it (step "conformance"); on a host without
// ublk_drv every test skips, saying why.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "daemon/frontends/ublk_control.h"
#include "daemon/frontends/ublk_device.h"
#include "engine/block_target.h"
#include "engine/engine.h"
#include "engine/io/drive.h"
#include "engine/volume.h"

namespace gpuraid {
namespace {

class UblkConformance : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    ctl_ = UblkControl::open(&err);
    if (!ctl_) GTEST_SKIP() << "no ublk on this kernel (" << err << "): the VM lane runs these tests";
    EngineConfig ec;
    ec.reactors = 2;
    ec.arena_bytes = 64u << 20;
    engine_ = Engine::create(ec, &err);
    ASSERT_TRUE(engine_) << err;
    // The reactors' threads, as the daemon runs them: they own the queues.
    for (uint32_t i = 0; i < engine_->reactor_count(); i++)
      threads_.emplace_back([this, i] {
        Reactor& r = engine_->reactor(i);
        Reactor::set_current(&r);
        while (!stop_.load(std::memory_order_relaxed)) r.poll(true, 50);
        for (int k = 0; k < 200 && r.in_flight(); k++) r.poll(true, 10);
      });
  }
  void TearDown() override {
    stop_ = true;
    for (auto& t : threads_) t.join();
  }

  // A volume over `n` mem drives of 32 MiB, exported as one target.
  void make_volume(Level level, uint32_t n) {
    std::string err;
    std::vector<Drive*> members;
    for (uint32_t i = 0; i < n; i++) {
      DriveSpec s;
      s.type = DriveType::Mem;
      s.size_bytes = 32u << 20;
      auto d = Drive::open(s, &err);
      ASSERT_TRUE(d) << err;
      members.push_back(d.get());
      drives_.push_back(std::move(d));
    }
    Geometry g;
    ASSERT_TRUE(Volume::fit_geometry(level, 0, 64 << 10, members, 0, &g, nullptr, &err)) << err;
    volume_ = Volume::create(*engine_, g, members, 0, &err);
    ASSERT_TRUE(volume_) << err;
    target_ = std::make_unique<VolumeExtent>(*volume_, 0, volume_->geometry().capacity_bytes());
  }

  std::unique_ptr<UblkDevice> export_it(uint32_t depth = 32) {
    UblkConfig cfg;
    cfg.depth = depth;
    std::string err;
    auto d = UblkDevice::create(*ctl_, *engine_, target_.get(), -1, cfg, &err);
    EXPECT_TRUE(d) << err;
    return d;
  }

  // A raw ADD_DEV, as a server would send it; returns the CQE result and the id.
  int raw_add(uint16_t queues, uint16_t depth, uint32_t* id) {
    ublk::DevInfo info{};
    info.nr_hw_queues = queues;
    info.queue_depth = depth;
    info.max_io_buf_bytes = 512 << 10;
    info.dev_id = UINT32_MAX;  // the kernel picks
    info.ublksrv_pid = getpid();
    info.flags = ublk::kFCmdIoctlEncode;
    ublk::CtrlCmd cmd{};
    cmd.dev_id = UINT32_MAX;
    cmd.queue_id = UINT16_MAX;
    cmd.addr = reinterpret_cast<uint64_t>(&info);
    cmd.len = sizeof info;
    int r = ctl_->run(ublk::kCmdAddDev, cmd);
    *id = info.dev_id;
    return r;
  }

  int raw_set_params(uint32_t id, const ublk::Params& p) {
    ublk::CtrlCmd cmd{};
    cmd.dev_id = id;
    cmd.queue_id = UINT16_MAX;
    cmd.addr = reinterpret_cast<uint64_t>(&p);
    cmd.len = sizeof p;
    return ctl_->run(ublk::kCmdSetParams, cmd);
  }

  static ublk::Params good_params(uint64_t bytes) {
    ublk::Params p{};
    p.len = sizeof p;
    p.types = ublk::kParamBasic;
    p.basic.logical_bs_shift = 12;
    p.basic.physical_bs_shift = 12;
    p.basic.max_sectors = (512 << 10) >> 9;
    p.basic.dev_sectors = bytes >> 9;
    return p;
  }

  std::unique_ptr<UblkControl> ctl_;
  std::unique_ptr<Engine> engine_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  std::vector<std::unique_ptr<Drive>> drives_;
  std::unique_ptr<Volume> volume_;
  std::unique_ptr<VolumeExtent> target_;
};

// An O_DIRECT 4 KiB read; returns 0 or errno.
int read_block(const std::string& dev, uint64_t off) {
  int fd = open(dev.c_str(), O_RDONLY | O_DIRECT);
  if (fd < 0) return errno;
  void* buf = nullptr;
  if (posix_memalign(&buf, 4096, 4096)) return ENOMEM;
  ssize_t n = pread(fd, buf, 4096, off);
  int e = n == 4096 ? 0 : n < 0 ? errno : EIO;
  free(buf);
  close(fd);
  return e;
}

bool gone(const std::string& path) {
  struct stat st;
  for (int i = 0; i < 400; i++) {  // devtmpfs removes nodes asynchronously
    if (stat(path.c_str(), &st) != 0) return true;
    usleep(5000);
  }
  return false;
}

TEST_F(UblkConformance, FeaturesOfferWhatTheServerNeeds) {
  const uint64_t f = ctl_->features();
  EXPECT_TRUE(f & ublk::kFCmdIoctlEncode) << std::hex << f;
  EXPECT_TRUE(f & ublk::kFUserRecovery) << std::hex << f;
  EXPECT_TRUE(f & ublk::kFUserRecoveryReissue) << std::hex << f;
}

TEST_F(UblkConformance, AddDevWithBadArgumentsIsRefused) {
  uint32_t id = 0;
  EXPECT_EQ(raw_add(1, 0, &id), -EINVAL) << "queue depth 0";
  EXPECT_EQ(raw_add(1, 4097, &id), -EINVAL) << "queue depth above 4096";
  EXPECT_EQ(raw_add(0, 32, &id), -EINVAL) << "no queues";
  // Our own checks come first, with a message, and leave nothing behind.
  make_volume(Level::R0, 2);
  UblkConfig cfg;
  cfg.depth = 0;
  std::string err;
  EXPECT_FALSE(UblkDevice::create(*ctl_, *engine_, target_.get(), -1, cfg, &err));
  EXPECT_NE(err.find("depth"), std::string::npos) << err;
  cfg.depth = 32;
  EXPECT_FALSE(UblkDevice::create(*ctl_, *engine_, target_.get(), 1 << 20, cfg, &err));
  EXPECT_NE(err.find("2^20"), std::string::npos) << err;
}

TEST_F(UblkConformance, SetParamsValidatedByTheKernel) {
  uint32_t id = 0;
  ASSERT_EQ(raw_add(1, 32, &id), 0);
  ublk::Params p = good_params(64 << 20);
  p.basic.logical_bs_shift = 8;  // below 512 bytes
  EXPECT_EQ(raw_set_params(id, p), -EINVAL);
  p = good_params(64 << 20);
  p.basic.logical_bs_shift = 13;  // above the page size
  p.basic.physical_bs_shift = 13;
  EXPECT_EQ(raw_set_params(id, p), -EINVAL);
  EXPECT_EQ(raw_set_params(id, good_params(64 << 20)), 0);
  EXPECT_EQ(ctl_->simple(ublk::kCmdDelDev, id), 0);
  ublk::DevInfo info;
  EXPECT_EQ(ctl_->get_dev_info(id, &info), -ENODEV) << "the device is deleted";
}

TEST_F(UblkConformance, SetParamsOnALiveDeviceIsRefusedAndItKeepsServing) {
  make_volume(Level::R5, 4);
  auto d = export_it();
  ASSERT_TRUE(d);
  EXPECT_LT(raw_set_params(d->id(), good_params(4096)), 0);
  ublk::Params p;
  ASSERT_EQ(ctl_->get_params(d->id(), &p), 0);
  EXPECT_EQ(p.basic.dev_sectors << 9, target_->size_bytes()) << "the size did not change";
  EXPECT_EQ(read_block(d->block_path(), 0), 0);
  std::string err;
  EXPECT_TRUE(d->remove(&err)) << err;
}

TEST_F(UblkConformance, CharDeviceIsExclusiveToTheServer) {
  make_volume(Level::R0, 2);
  auto d = export_it();
  ASSERT_TRUE(d);
  int fd = open(("/dev/ublkc" + std::to_string(d->id())).c_str(), O_RDWR);
  EXPECT_LT(fd, 0);
  EXPECT_EQ(errno, EBUSY);
  if (fd >= 0) close(fd);
  std::string err;
  EXPECT_TRUE(d->remove(&err)) << err;
}

TEST_F(UblkConformance, MemberErrorsPastRedundancyReachTheApplicationAsEio) {
  make_volume(Level::R0, 2);
  auto d = export_it();
  ASSERT_TRUE(d);
  ASSERT_EQ(read_block(d->block_path(), 0), 0);
  drives_[0]->faults().arm(FaultInjector::kFailReads);
  EXPECT_EQ(read_block(d->block_path(), 0), EIO);
  // The volume has failed (RAID 0 lost a member): every later read is EIO
  // too, never stale or zero data, and the server keeps answering.
  EXPECT_EQ(read_block(d->block_path(), 64 << 10), EIO);
  std::string err;
  EXPECT_TRUE(d->remove(&err)) << err;
  EXPECT_TRUE(gone(d->block_path()));
}

TEST_F(UblkConformance, DeleteWhileEveryTagIsHeldInTheServer) {
  make_volume(Level::R5, 4);
  const uint32_t depth = 8;
  auto d = export_it(depth);
  ASSERT_TRUE(d);
  const std::string dev = d->block_path();
  for (auto& dr : drives_) dr->faults().set_latency_us(1500 * 1000);
  // More readers than tags: every tag of both queues is in the server.
  std::atomic<int> ok{0}, failed{0};
  std::vector<std::thread> readers;
  for (int i = 0; i < 24; i++)
    readers.emplace_back([&, i] { (read_block(dev, uint64_t(i) << 16) == 0 ? ok : failed)++; });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto t0 = std::chrono::steady_clock::now();
  std::string err;
  EXPECT_TRUE(d->remove(&err)) << err;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto& t : readers) t.join();
  EXPECT_LT(secs, 20.0) << "delete waited for the block layer's timeout";
  EXPECT_EQ(ok + failed, 24) << "every reader returned";
  EXPECT_GT(ok.load(), 0) << "requests held in the server completed with their data";
  EXPECT_TRUE(gone(dev));
  for (auto& dr : drives_) dr->faults().clear();
  printf("delete with %u tags x %u queues held: %.2f s, %d reads completed, %d failed\n", depth,
         engine_->reactor_count(), secs, ok.load(), failed.load());
}

}  // namespace
}  // namespace gpuraid
