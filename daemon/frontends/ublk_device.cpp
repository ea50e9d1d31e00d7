#include "daemon/frontends/ublk_device.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace gpuraid {

namespace {

uint8_t log2_floor(uint64_t v) {
  uint8_t s = 0;
  while (v > 1) {
    v >>= 1;
    s++;
  }
  return s;
}

std::string fail(const char* what, int r) { return std::string("ublk ") + what + ": " + ublk_errname(r); }

// /dev/ublkcN appears a moment after ADD_DEV (devtmpfs); open it with retries.
int open_cdev(uint32_t id, std::string* err) {
  const std::string path = "/dev/ublkc" + std::to_string(id);
  for (int i = 0; i < 200; i++) {
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd >= 0) return fd;
    if (errno != ENOENT) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  *err = "cannot open " + path + ": " + strerror(errno);
  return -1;
}

}  // namespace

std::unique_ptr<UblkDevice> UblkDevice::create(UblkControl& ctl, Engine& engine, BlockTarget* target, int want_id,
                                               const UblkConfig& cfg, std::string* err) {
  if (cfg.depth == 0 || cfg.depth > ublk::kMaxQueueDepth) {
    *err = "ublk queue depth must be 1..4096";
    return nullptr;
  }
  if (cfg.max_io_bytes < 4096 || cfg.max_io_bytes % 4096) {
    *err = "ublk max I/O size must be a multiple of 4 KiB";
    return nullptr;
  }
  if (want_id >= int(ublk::kMaxDevId)) {
    *err = "ublk device id must be below 2^20";
    return nullptr;
  }
  std::unique_ptr<UblkDevice> d(new UblkDevice(ctl));
  if (!d->add(engine, target, want_id, cfg, err)) {
    std::string ignored;
    d->remove(&ignored);
    return nullptr;
  }
  return d;
}

bool UblkDevice::add(Engine& engine, BlockTarget* target, int want_id, const UblkConfig& cfg, std::string* err) {
  const uint64_t want_flags = ublk::kFCmdIoctlEncode |
                              (cfg.recovery ? ublk::kFUserRecovery | ublk::kFUserRecoveryReissue : 0);
  if ((ctl_.features() & want_flags) != want_flags) {
    *err = "this kernel's ublk lacks user recovery (features 0x" + std::to_string(ctl_.features()) + ")";
    return false;
  }
  ublk::DevInfo info{};
  if (want_id >= 0) {
    int r = ctl_.get_dev_info(uint32_t(want_id), &info);
    if (r == 0) {
      // The device exists: reattach when its server is gone.
      id_ = uint32_t(want_id);
      added_ = true;  // ours to delete if the reattach fails half way
      flags_ = info.flags;
      if (!(info.flags & ublk::kFUserRecovery)) {
        added_ = false;
        *err = "ublk device " + std::to_string(want_id) + " exists without user recovery: cannot reattach";
        return false;
      }
      ublk::Params p;
      if ((r = ctl_.get_params(id_, &p)) != 0) return *err = fail("GET_PARAMS", r), false;
      if (p.basic.dev_sectors << 9 != target->size_bytes()) {
        added_ = false;
        *err = "ublk device " + std::to_string(want_id) + " has another size than this virtual drive";
        return false;
      }
      // The driver quiesces the device once the dead daemon's ring and file
      // are gone; until then START_USER_RECOVERY answers -EBUSY.
      for (int i = 0;; i++) {
        r = ctl_.simple(ublk::kCmdStartUserRecovery, id_);
        if (r != -EBUSY || i >= 300) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      if (r != 0) {
        added_ = false;  // a live device of someone else's: leave it alone
        *err = fail("START_USER_RECOVERY", r) + " (is ublk device " + std::to_string(want_id) +
               " still served by a running process?)";
        return false;
      }
      if ((cdev_fd_ = open_cdev(id_, err)) < 0) return false;
      if (!open_queues(engine, target, info.nr_hw_queues, info.queue_depth, info.max_io_buf_bytes, err)) return false;
      // END_USER_RECOVERY blocks until every queue has fetched, like START_DEV.
      r = ctl_.simple(ublk::kCmdEndUserRecovery, id_, uint64_t(getpid()));
      if (r != 0) return *err = fail("END_USER_RECOVERY", r), false;
      started_ = true;
      recovered_ = true;
      return true;
    }
    if (r != -ENODEV) return *err = fail("GET_DEV_INFO", r), false;
  }

  const uint32_t nq = cfg.queues ? cfg.queues : engine.reactor_count();
  info = ublk::DevInfo{};
  info.nr_hw_queues = uint16_t(nq);
  info.queue_depth = uint16_t(cfg.depth);
  info.max_io_buf_bytes = cfg.max_io_bytes;
  info.dev_id = want_id >= 0 ? uint32_t(want_id) : UINT32_MAX;
  info.ublksrv_pid = getpid();
  info.flags = want_flags;
  ublk::CtrlCmd cmd{};
  cmd.dev_id = info.dev_id;
  cmd.queue_id = UINT16_MAX;
  cmd.addr = reinterpret_cast<uint64_t>(&info);
  cmd.len = sizeof info;
  int r = ctl_.run(ublk::kCmdAddDev, cmd);
  if (r < 0) return *err = fail("ADD_DEV", r), false;
  id_ = info.dev_id;
  added_ = true;
  flags_ = info.flags;  // what the kernel granted
  if ((flags_ & want_flags) != want_flags) return *err = "ublk ADD_DEV dropped the recovery flags", false;
  if (!set_params(target, cfg, err)) return false;
  if ((cdev_fd_ = open_cdev(id_, err)) < 0) return false;
  // The kernel may clamp the queue count (nr_cpu_ids) and round the buffer size.
  if (!open_queues(engine, target, info.nr_hw_queues, info.queue_depth, info.max_io_buf_bytes, err)) return false;
  r = ctl_.simple(ublk::kCmdStartDev, id_, uint64_t(getpid()));
  if (r != 0) return *err = fail("START_DEV", r), false;
  started_ = true;
  return true;
}

bool UblkDevice::set_params(BlockTarget* target, const UblkConfig& cfg, std::string* err) {
  ublk::Params p{};
  p.len = sizeof p;
  p.types = ublk::kParamBasic | ublk::kParamDiscard;
  p.basic.attrs = ublk::kAttrVolatileCache | ublk::kAttrFua;  // non-rotational: no ROTATIONAL bit
  p.basic.logical_bs_shift = 12;
  p.basic.physical_bs_shift = 12;
  p.basic.io_min_shift = log2_floor(std::max<uint32_t>(4096, target->min_io_bytes()));
  p.basic.io_opt_shift = log2_floor(std::max<uint32_t>(4096, target->optimal_io_bytes()));
  p.basic.max_sectors = cfg.max_io_bytes >> 9;
  p.basic.dev_sectors = target->size_bytes() >> 9;
  p.discard.discard_granularity = std::max<uint32_t>(4096, target->min_io_bytes());
  p.discard.max_discard_sectors = cfg.max_io_bytes >> 9;
  p.discard.max_write_zeroes_sectors = cfg.max_io_bytes >> 9;
  p.discard.max_discard_segments = 1;
  ublk::CtrlCmd cmd{};
  cmd.dev_id = id_;
  cmd.queue_id = UINT16_MAX;
  cmd.addr = reinterpret_cast<uint64_t>(&p);
  cmd.len = sizeof p;
  int r = ctl_.run(ublk::kCmdSetParams, cmd);
  if (r < 0) return *err = fail("SET_PARAMS", r), false;
  return true;
}

bool UblkDevice::open_queues(Engine& engine, BlockTarget* target, uint32_t nq, uint32_t depth, uint32_t buf,
                             std::string* err) {
  for (uint32_t q = 0; q < nq; q++) {
    auto uq = std::make_unique<UblkQueue>(cdev_fd_, uint16_t(q), depth, buf, engine.reactor(q % engine.reactor_count()),
                                          target);
    if (!uq->mapped(err)) return false;
    queues_.push_back(std::move(uq));
  }
  for (auto& q : queues_) q->start();
  return true;
}

bool UblkDevice::wait_queues(bool (UblkQueue::*pred)() const, int timeout_ms) {
  for (int waited = 0;; waited += 5) {
    bool all = true;
    for (auto& q : queues_) all = all && (q.get()->*pred)();
    if (all) return true;
    if (waited >= timeout_ms) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void UblkDevice::release_queues() {
  queues_.clear();
  if (cdev_fd_ >= 0) close(cdev_fd_);
  cdev_fd_ = -1;
}

bool UblkDevice::remove(std::string* err) {
  bool ok = true;
  if (added_) {
    // STOP_DEV deletes the disk and aborts every fetched tag (-ENODEV);
    // requests still in the engine finish, their COMMITs fail and end the tags.
    int r = ctl_.simple(ublk::kCmdStopDev, id_);
    if (r != 0 && r != -ENODEV) {
      *err = fail("STOP_DEV", r);
      ok = false;
    }
  }
  if (!queues_.empty() && !wait_queues(&UblkQueue::finished, 30000)) {
    // Unmapping buffers the kernel may still use would be worse than a leak.
    *err = "ublk device " + std::to_string(id_) + ": queues did not drain after STOP_DEV";
    return false;
  }
  release_queues();
  if (added_) {
    int r = ctl_.simple(ublk::kCmdDelDev, id_);
    if (r != 0 && r != -ENODEV) {
      *err = fail("DEL_DEV", r);
      ok = false;
    }
    added_ = false;
  }
  started_ = false;
  return ok;
}

int UblkDevice::detach_for_restart(int timeout_ms) {
  for (auto& q : queues_) q->hold();
  if (!wait_queues(&UblkQueue::quiet, timeout_ms)) return -1;
  uint32_t held = 0;
  for (auto& q : queues_) held += q->held();
  return int(held);
}

UblkDevice::~UblkDevice() {
  std::string ignored;
  if (added_ || !queues_.empty()) remove(&ignored);
}

}  // namespace gpuraid
