// One ublk hardware queue, served by one reactor: every FETCH_REQ and
// COMMIT_AND_FETCH_REQ of the queue is issued on that reactor's io_uring by
// its owning thread (the driver binds the queue to the task that fetched
// it), next to the member I/O the requests turn into.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "daemon/frontends/ublk_abi.h"
#include "daemon/frontends/zero_fill.h"
#include "engine/block_target.h"
#include "engine/reactor.h"

namespace gpuraid {

class UblkQueue {
 public:
  // The descriptor array and request buffers are mapped here (control
  // thread); nothing is issued until start().
  UblkQueue(int cdev_fd, uint16_t qid, uint32_t depth, uint32_t buf_bytes, Reactor& r, BlockTarget* t);
  ~UblkQueue();
  bool mapped(std::string* err) const;

  // Posts the FETCH of every tag to the reactor (any thread).
  void start();
  // Every tag has issued its FETCH_REQ.
  bool fetched() const { return fetched_.load(std::memory_order_acquire); }
  // Every tag has ended (aborted by STOP_DEV or a failed command) and no
  // request is in the server: the queue may be unmapped.
  bool finished() const { return !started_ || live_tags_.load(std::memory_order_acquire) == 0; }
  uint64_t requests() const { return requests_.load(std::memory_order_relaxed); }

  // Detach for a restart: requests that arrive from now on stay in the
  // server untouched (the driver re-issues them to the next daemon, which
  // USER_RECOVERY|REISSUE guarantees); quiet() once none is in the target.
  void hold() { holding_.store(true); }
  bool quiet() const { return in_target_.load() == 0; }
  uint32_t held() const { return held_.load(std::memory_order_relaxed); }

 private:
  struct Tag {
    Completion c;           // first member: the CQE callback gets a Tag*
    UblkQueue* q = nullptr;
    uint16_t tag = 0;
    uint8_t op = 0;
    uint8_t* buf = nullptr;
    int32_t result = 0;     // for the next COMMIT
    bool committing = false;
    Tag* next_retry = nullptr;
    IoRequest req;
    ZeroFill zero;
  };
  static void on_start(Task* t);
  static void on_cqe(Completion* c, const io_uring_cqe* cqe);
  static void on_io_done(IoRequest* req);
  static void on_zero_done(void* ctx, int result);
  static void on_retry(Task* t);
  void issue(Tag* t, bool commit);
  void handle(Tag* t);
  void finish(Tag* t, int result);
  void tag_ended();

  int fd_;
  uint16_t qid_;
  uint32_t depth_, buf_bytes_;
  Reactor& r_;
  BlockTarget* target_;
  const ublk::IoDesc* descs_ = nullptr;
  size_t descs_len_ = 0;
  uint8_t* bufs_ = nullptr;
  size_t bufs_len_ = 0;
  bool bufs_mapped_ = false;  // registered with the reactor's parity backend
  std::vector<Tag> tags_;
  Task start_task_, retry_task_;
  Tag* retry_head_ = nullptr;   // tags whose SQE could not be had: retried next turn
  bool retry_queued_ = false;
  bool started_ = false;
  std::atomic<bool> fetched_{false};
  std::atomic<uint32_t> live_tags_{0};
  std::atomic<uint64_t> requests_{0};
  std::atomic<bool> holding_{false};
  std::atomic<uint32_t> in_target_{0};   // requests handed to the target, not yet finished
  std::atomic<uint32_t> held_{0};
};

}  // namespace gpuraid
