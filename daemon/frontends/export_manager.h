// The daemon's frontends: which virtual drive is exported how. NBD exports
// (Unix socket or TCP) and ublk block devices (/dev/ublkbN, reattached
// after a daemon restart when given the device id the last run had).
// Control-path calls (any one thread at a time; internally locked); the
// data path runs on the engine's reactors, which the caller keeps polling.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "daemon/frontends/nbd_server.h"
#include "daemon/frontends/ublk_device.h"
#include "engine/block_target.h"
#include "engine/engine.h"

namespace gpuraid {

class ExportManager {
 public:
  explicit ExportManager(Engine& engine);
  ~ExportManager();

  // listen: "unix:PATH" | "tcp:HOST:PORT" | "tcp:PORT" (loopback) | "" (a
  // Unix socket in the runtime directory). *uri: nbd+unix:///VD?socket=PATH
  // or nbd://HOST:PORT/VD.
  // tls: STARTTLS off/allowed/required, with its certificates or PSK file.
  bool export_nbd(const std::string& vd, BlockTarget* target, const std::string& listen, const NbdTlsConfig& tls,
                  std::string* uri, std::string* err);
  // want_dev_id: -1 for a new device; >= 0 to reattach to the device a
  // killed daemon left behind (USER_RECOVERY), or to re-create that id.
  bool export_ublk(const std::string& vd, BlockTarget* target, int want_dev_id, std::string* dev_path, int* dev_id,
                   std::string* err);
  bool unexport(const std::string& vd, std::string* err);
  // Ends every export. keep_ublk: ublk devices are detached for a daemon
  // restart (see UblkDevice::detach_for_restart) instead of deleted; the
  // caller must exit the process soon after.
  void stop_all(bool keep_ublk = false);

  void set_ublk_config(const UblkConfig& c) { ublk_cfg_ = c; }
  void set_nbd_limits(const NbdLimits& l) { nbd_limits_ = l; }
  // Where default Unix sockets go ($GPURAID_RUN_DIR, else /run/gpuraid).
  static std::string default_socket_path(const std::string& vd);

 private:
  struct Export {
    std::unique_ptr<NbdServer> nbd;
    std::unique_ptr<UblkDevice> ublk;
  };
  bool ensure_ublk_control(std::string* err);

  Engine& engine_;
  std::mutex mu_;
  std::unique_ptr<UblkControl> ublk_ctl_;
  UblkConfig ublk_cfg_;
  NbdLimits nbd_limits_;
  std::map<std::string, Export> exports_;  // one export per VD and kind
};

}  // namespace gpuraid
