// One ublk block device (/dev/ublkbN) serving a BlockTarget: added (or
// recovered after a daemon crash), parameterised from the target's
// geometry, its queues spread over the engine's reactors, started; and
// stopped and deleted in the order the driver needs.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "daemon/frontends/ublk_control.h"
#include "daemon/frontends/ublk_queue.h"
#include "engine/block_target.h"
#include "engine/engine.h"

namespace gpuraid {

struct UblkConfig {
  uint32_t queues = 0;              // 0: one per reactor
  uint32_t depth = 128;             // tags per queue (1..4096)
  uint32_t max_io_bytes = 512 << 10;
  bool recovery = true;             // USER_RECOVERY|REISSUE: survive a daemon crash
};

class UblkDevice {
 public:
  // want_id < 0: a new device (the kernel picks the id). want_id >= 0: if
  // that device exists and is waiting for its server (a previous daemon was
  // killed), reattach to it (USER_RECOVERY); if it does not exist, add it
  // with that id; if it is served by a live process, refuse.
  static std::unique_ptr<UblkDevice> create(UblkControl& ctl, Engine& engine, BlockTarget* target, int want_id,
                                            const UblkConfig& cfg, std::string* err);
  ~UblkDevice();

  uint32_t id() const { return id_; }
  std::string block_path() const { return "/dev/ublkb" + std::to_string(id_); }
  bool recovered() const { return recovered_; }
  uint64_t flags() const { return flags_; }
  // STOP_DEV, wait for every queue to drain, unmap, close, DEL_DEV.
  bool remove(std::string* err);
  // For a daemon restart that keeps the device: new requests are held in
  // the server, those in the target finish. The device is left as it is
  // (not stopped, not deleted, its queues still mapped): when this process
  // exits the driver quiesces it and the next daemon reattaches (USER_RECOVERY)
  // and receives the held requests again (REISSUE). Only for a process that
  // is about to exit. Returns the number of held requests, or -1 when
  // requests did not finish within timeout_ms.
  int detach_for_restart(int timeout_ms);

 private:
  UblkDevice(UblkControl& ctl) : ctl_(ctl) {}
  bool add(Engine& engine, BlockTarget* target, int want_id, const UblkConfig& cfg, std::string* err);
  bool set_params(BlockTarget* target, const UblkConfig& cfg, std::string* err);
  bool open_queues(Engine& engine, BlockTarget* target, uint32_t nq, uint32_t depth, uint32_t buf, std::string* err);
  bool wait_queues(bool (UblkQueue::*pred)() const, int timeout_ms);
  void release_queues();

  UblkControl& ctl_;
  uint32_t id_ = 0;
  uint64_t flags_ = 0;
  bool added_ = false, started_ = false, recovered_ = false;
  int cdev_fd_ = -1;
  std::vector<std::unique_ptr<UblkQueue>> queues_;
};

}  // namespace gpuraid
