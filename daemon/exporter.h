// The seam to the frontends (daemon/frontends: ublk and NBD export). The
// control plane records exports in the registry and restores them at
// start; this interface does the exporting. make_exporter() returns
// nullptr when the daemon is built without the frontends.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "daemon/nbd_tls_config.h"
#include "engine/block_target.h"
#include "engine/engine.h"

namespace gpuraid::daemon {

class Exporter {
 public:
  virtual ~Exporter() = default;
  // listen: "unix:PATH" | "tcp:HOST:PORT"; *uri: how clients connect.
  virtual bool export_nbd(const std::string& vd, BlockTarget* t, const std::string& listen, const NbdTlsConfig& tls,
                          std::string* uri, std::string* err) = 0;
  // want_dev_id: -1 for a new device, >= 0 to recover that one after a restart.
  virtual bool export_ublk(const std::string& vd, BlockTarget* t, int want_dev_id, std::string* dev_path,
                           int* dev_id, std::string* err) = 0;
  virtual bool unexport(const std::string& vd, std::string* err) = 0;
  // Ends every export (at a clean stop; ExportSettings say what ublk devices do).
  virtual void stop_all() = 0;
};

// How exports are made (gpuraidd's --ublk-queues/--ublk-depth).
struct ExportSettings {
  uint32_t ublk_queues = 0;   // 0: one per reactor (a queue is owned by the reactor that fetches it)
  uint32_t ublk_depth = 128;  // tags per ublk queue
  // At a clean stop: keep ublk devices for the next daemon (USER_RECOVERY)
  // instead of deleting them (--ublk-on-exit keep).
  bool keep_ublk_on_exit = false;
  // NBD limits per export (--nbd-max-connections, --nbd-handshake-timeout),
  // per connection (--nbd-max-inflight).
  uint32_t nbd_max_connections = 64;
  uint32_t nbd_handshake_timeout_ms = 10000;
  uint64_t nbd_max_inflight_bytes = 16ull << 20;
};

std::unique_ptr<Exporter> make_exporter(Engine& engine, const ExportSettings& settings);

}  // namespace gpuraid::daemon
