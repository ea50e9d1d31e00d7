// The ublk control channel: /dev/ublk-control driven by io_uring
// URING_CMDs on a dedicated thread and SQE128 ring. START_DEV and
// END_USER_RECOVERY block in the kernel until every queue has fetched, so
// commands never run on a reactor thread; callers block on their result
// while other commands (other devices) proceed on the same ring.
#pragma once
#include <liburing.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "daemon/frontends/ublk_abi.h"

namespace gpuraid {

class UblkControl {
 public:
  // Opens /dev/ublk-control (loading nothing: ublk_drv must be present),
  // negotiates features. nullptr with a reason when ublk is unavailable.
  static std::unique_ptr<UblkControl> open(std::string* err);
  ~UblkControl();

  // Features the kernel offers (GET_FEATURES).
  uint64_t features() const { return features_; }
  // Runs one control command and returns the CQE result (>= 0, or -errno).
  int run(uint32_t op, const ublk::CtrlCmd& cmd);

  // Helpers over run(); each returns 0 or -errno.
  int get_dev_info(uint32_t dev_id, ublk::DevInfo* info);
  int get_params(uint32_t dev_id, ublk::Params* p);
  int simple(uint32_t op, uint32_t dev_id, uint64_t data0 = 0);

 private:
  struct Pending {
    uint32_t op;
    ublk::CtrlCmd cmd;
    int result = 0;
    bool done = false;
  };
  UblkControl() = default;
  void loop();
  void submit_queued();

  int fd_ = -1;
  io_uring ring_{};
  bool ring_ok_ = false;
  uint64_t features_ = 0;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending*> queued_;
  int wake_fd_ = -1;   // eventfd: new commands or stop
};

const char* ublk_errname(int neg_errno);

}  // namespace gpuraid
