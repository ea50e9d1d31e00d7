// gpuraid status: one overview (the daemon, every group, volume and drive),
// taken under one lock so that the parts agree.
#include "daemon/control_plane.h"

namespace gpuraid::daemon {

grpc::Status ControlPlane::get_status(v1::StatusOverview* out) {
  if (auto s = get_info(out->mutable_daemon()); !s.ok()) return s;
  std::lock_guard<std::mutex> g(mu_);
  for (auto& [name, gr] : groups_) group_to_api(gr, out->add_groups());
  for (auto& [id, v] : volumes_) volume_to_api(v, out->add_volumes());
  for (auto& [id, d] : drives_) drive_to_api(d, out->add_drives());
  return grpc::Status::OK;
}

}  // namespace gpuraid::daemon
