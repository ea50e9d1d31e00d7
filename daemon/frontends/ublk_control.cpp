#include "daemon/frontends/ublk_control.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/eventfd_signal.h"
#include "engine/thread_name.h"

namespace gpuraid {

namespace {
constexpr uint64_t kWakeTag = 0;  // user_data of the eventfd read; commands use their Pending*
}

const char* ublk_errname(int e) {
  static thread_local char buf[64];
  if (e == -524) return "ENOTSUPP (command unknown to this kernel)";
  snprintf(buf, sizeof buf, "%s", strerror(-e));
  return buf;
}

std::unique_ptr<UblkControl> UblkControl::open(std::string* err) {
  std::unique_ptr<UblkControl> c(new UblkControl());
  c->fd_ = ::open("/dev/ublk-control", O_RDWR | O_CLOEXEC);
  if (c->fd_ < 0) {
    *err = std::string("cannot open /dev/ublk-control: ") + strerror(errno) +
           (errno == ENOENT ? " (this kernel has no ublk_drv loaded: modprobe ublk_drv)" : "");
    return nullptr;
  }
  io_uring_params p{};
  p.flags = IORING_SETUP_SQE128;  // the driver refuses control commands without it
  int r = io_uring_queue_init_params(32, &c->ring_, &p);
  if (r < 0) {
    *err = std::string("io_uring for ublk control: ") + strerror(-r);
    return nullptr;
  }
  c->ring_ok_ = true;
  c->wake_fd_ = eventfd(0, EFD_CLOEXEC);
  c->thread_ = std::thread([p = c.get()] {
    set_thread_name("gpuraid-ublkctl");
    p->loop();
  });

  ublk::CtrlCmd cmd{};
  cmd.dev_id = UINT32_MAX;
  cmd.queue_id = UINT16_MAX;
  uint64_t feat = 0;
  cmd.addr = reinterpret_cast<uint64_t>(&feat);
  cmd.len = sizeof feat;
  r = c->run(ublk::kCmdGetFeatures, cmd);
  if (r < 0) {
    *err = std::string("ublk GET_FEATURES failed: ") + ublk_errname(r) + " (kernel older than 6.5?)";
    return nullptr;
  }
  c->features_ = feat;
  return c;
}

UblkControl::~UblkControl() {
  if (thread_.joinable()) {
    stop_ = true;
    signal_eventfd(wake_fd_);
    thread_.join();
  }
  if (ring_ok_) io_uring_queue_exit(&ring_);
  if (wake_fd_ >= 0) close(wake_fd_);
  if (fd_ >= 0) close(fd_);
}

int UblkControl::run(uint32_t op, const ublk::CtrlCmd& cmd) {
  Pending p{op, cmd};
  {
    std::lock_guard<std::mutex> g(mu_);
    queued_.push_back(&p);
  }
  signal_eventfd(wake_fd_);
  std::unique_lock<std::mutex> g(mu_);
  cv_.wait(g, [&] { return p.done; });
  return p.result;
}

void UblkControl::submit_queued() {
  std::lock_guard<std::mutex> g(mu_);
  while (!queued_.empty()) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (!sqe) break;
    Pending* p = queued_.front();
    queued_.pop_front();
    memset(sqe, 0, 128);
    sqe->opcode = IORING_OP_URING_CMD;
    sqe->fd = fd_;
    sqe->cmd_op = p->op;
    memcpy(sqe->cmd, &p->cmd, sizeof p->cmd);
    io_uring_sqe_set_data64(sqe, reinterpret_cast<uint64_t>(p));
  }
}

void UblkControl::loop() {
  uint64_t wake_buf = 0;
  bool wake_armed = false;
  while (!stop_) {
    if (!wake_armed) {
      io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
      if (sqe) {
        io_uring_prep_read(sqe, wake_fd_, &wake_buf, sizeof wake_buf, 0);
        io_uring_sqe_set_data64(sqe, kWakeTag);
        wake_armed = true;
      }
    }
    submit_queued();
    io_uring_cqe* cqe = nullptr;
    io_uring_submit_and_wait(&ring_, 1);
    unsigned head, seen = 0;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      seen++;
      if (cqe->user_data == kWakeTag) {
        wake_armed = false;
        continue;
      }
      auto* p = reinterpret_cast<Pending*>(cqe->user_data);
      std::lock_guard<std::mutex> g(mu_);
      p->result = cqe->res;
      p->done = true;
      cv_.notify_all();
    }
    io_uring_cq_advance(&ring_, seen);
  }
  // Commands still queued at shutdown fail rather than hang their callers.
  std::lock_guard<std::mutex> g(mu_);
  for (Pending* p : queued_) {
    p->result = -ESHUTDOWN;
    p->done = true;
  }
  queued_.clear();
  cv_.notify_all();
}

int UblkControl::get_dev_info(uint32_t dev_id, ublk::DevInfo* info) {
  ublk::CtrlCmd cmd{};
  cmd.dev_id = dev_id;
  cmd.queue_id = UINT16_MAX;
  cmd.addr = reinterpret_cast<uint64_t>(info);
  cmd.len = sizeof *info;
  int r = run(ublk::kCmdGetDevInfo, cmd);
  return r < 0 ? r : 0;
}

int UblkControl::get_params(uint32_t dev_id, ublk::Params* p) {
  memset(p, 0, sizeof *p);
  p->len = sizeof *p;
  ublk::CtrlCmd cmd{};
  cmd.dev_id = dev_id;
  cmd.queue_id = UINT16_MAX;
  cmd.addr = reinterpret_cast<uint64_t>(p);
  cmd.len = sizeof *p;
  int r = run(ublk::kCmdGetParams, cmd);
  return r < 0 ? r : 0;
}

int UblkControl::simple(uint32_t op, uint32_t dev_id, uint64_t data0) {
  ublk::CtrlCmd cmd{};
  cmd.dev_id = dev_id;
  cmd.queue_id = UINT16_MAX;
  cmd.data[0] = data0;
  int r = run(op, cmd);
  return r < 0 ? r : 0;
}

}  // namespace gpuraid
