// dg start: an offline group assembled again (mdadm --assemble), e.g. once
// a missing drive is back; with force, one that stopped uncleanly while
// degraded (mdadm --assemble --force): the parity of its dirty regions may
// be stale, and the response says what that risks. Its volumes and their
// exports come back, and a failed member takes a pool spare as after a failure.
#include "proto/api_words.h"
#include "daemon/control_plane.h"
#include "daemon/convert.h"
#include "daemon/logging.h"
#include "daemon/validate.h"

namespace gpuraid::daemon {

grpc::Status ControlPlane::start_group(const v1::StartGroupRequest& q, v1::StartGroupResponse* out) {
  std::lock_guard<std::mutex> g(mu_);
  GroupRec* gr;
  if (auto s = find_group(q.name(), &gr); !s.ok()) return s;
  if (gr->g)
    return precondition(q.name() + " is running (" + v1::api_word(group_state_to_api(gr->g->state())) + "): nothing to start");
  restore_group(*gr, q.force());
  if (!gr->g) return precondition(q.name() + " is still offline: " + gr->note);
  for (auto& [id, v] : volumes_)
    if (v.r.group() == q.name()) restore_volume(v);
  const StaleParity sp = gr->g->forced_stale();
  std::string msg = "assembled (" + std::string(v1::api_word(group_state_to_api(gr->g->state()))) + ")";
  if (sp.regions) {
    out->set_risk(sp.describe());
    out->set_stale_regions(sp.regions);
    out->set_stale_stripes(sp.stripes);
    out->set_stale_bytes(sp.bytes);
    msg += " with force: " + sp.describe();
    spdlog::warn("group {} started with force: {}", q.name(), sp.describe());
  }
  publish(v1::EVENT_KIND_GROUP_STARTED, msg, q.name());
  group_to_api(*gr, out->mutable_group());
  return persist_status();
}

}  // namespace gpuraid::daemon
