// The seam to the frontends (daemon/frontends: ublk and NBD export). The
// control plane records exports in the registry and restores them at
// start; this interface does the exporting. make_exporter() returns
// nullptr when the daemon is built without the frontends.
#pragma once
#include <memory>
#include <string>

#include "engine/block_target.h"
#include "engine/engine.h"

namespace gpuraid::daemon {

class Exporter {
 public:
  virtual ~Exporter() = default;
  // listen: "unix:PATH" | "tcp:HOST:PORT"; *uri: how clients connect.
  virtual bool export_nbd(const std::string& vd, BlockTarget* t, const std::string& listen, std::string* uri,
                          std::string* err) = 0;
  // want_dev_id: -1 for a new device, >= 0 to recover that one after a restart.
  virtual bool export_ublk(const std::string& vd, BlockTarget* t, int want_dev_id, std::string* dev_path,
                           int* dev_id, std::string* err) = 0;
  virtual bool unexport(const std::string& vd, std::string* err) = 0;
  virtual void stop_all() = 0;
};

std::unique_ptr<Exporter> make_exporter(Engine& engine);

}  // namespace gpuraid::daemon
