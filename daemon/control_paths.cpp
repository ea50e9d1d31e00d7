// Lost paths of NVMe-oF members. A member whose controller is reconnecting
// is missing (the group serves degraded and tracks what it misses); when
// the controller is live again the member returns (only the missed regions
// are rebuilt); when the controller is gone (ctrl-loss-tmo expired, or its
// device node vanished) the member is failed and a spare takes over.
// Decided from sysfs: on a member's I/O error (the group's path policy, on
// a reactor thread: it reads only the path table, never the registry) and
// once a second here.
#include <sys/stat.h>

#include "daemon/control_plane.h"
#include "daemon/logging.h"

namespace gpuraid::daemon {

namespace {
bool node_exists(const std::string& path) {
  struct stat sb;
  return stat(path.c_str(), &sb) == 0;
}

PathState state_of(const FabricsPath& p, const std::string& dev) {
  const PathState s = path_state(p);
  return s != PathState::Gone && !node_exists(dev) ? PathState::Gone : s;
}

FabricsPath path_of(const st::FabricsRecord& f) { return FabricsPath{f.transport(), f.traddr(), f.trsvcid(), f.nqn()}; }
}  // namespace

void ControlPlane::install_path_policy(GroupRec& gr) {
  std::shared_ptr<PathTable> table = paths_;
  const std::string name = gr.r.name();
  gr.g->set_path_policy([table, name](uint32_t member, int) {
    FabricsPath p;
    {
      std::lock_guard<std::mutex> l(table->mu);
      auto g = table->by_group.find(name);
      if (g == table->by_group.end()) return false;
      auto m = g->second.find(member);
      if (m == g->second.end()) return false;
      p = m->second;
    }
    return path_state(p) == PathState::Reconnecting;
  });
  refresh_path_table();
}

// Caller holds mu_.
void ControlPlane::refresh_path_table() {
  std::map<std::string, std::map<uint32_t, FabricsPath>> t;
  for (auto& [name, gr] : groups_) {
    uint32_t max_loss_s = 0;
    for (int i = 0; i < gr.r.members_size(); i++) {
      auto d = drives_.find(gr.r.members(i));
      if (d == drives_.end() || !d->second.r.has_fabrics()) continue;
      t[name][uint32_t(i)] = path_of(d->second.r.fabrics());
      max_loss_s = std::max(max_loss_s, d->second.r.fabrics().ctrl_loss_tmo_s());
    }
    // The engine's own deadline is a backstop behind the kernel's: the
    // controller is deleted at ctrl-loss-tmo, and watch_paths fails the member then.
    if (gr.g && max_loss_s) gr.g->set_missing_timeout_ms((uint64_t(max_loss_s) + 30) * 1000);
  }
  std::lock_guard<std::mutex> l(paths_->mu);
  paths_->by_group = std::move(t);
}

void ControlPlane::watch_paths() {
  std::lock_guard<std::mutex> g(mu_);
  refresh_path_table();
  for (auto& [name, gr] : groups_) {
    if (!gr.g) continue;
    for (const MemberInfo& m : gr.g->members()) {
      if (int(m.index) >= gr.r.members_size()) continue;
      auto d = drives_.find(gr.r.members(int(m.index)));
      if (d == drives_.end() || !d->second.r.has_fabrics()) continue;
      const PathState ps = state_of(path_of(d->second.r.fabrics()), d->second.r.path());
      const bool serving = m.state == MemberState::Active || m.state == MemberState::Rebuilding;
      std::string err;
      if (serving && ps == PathState::Reconnecting) {
        if (gr.g->mark_member_missing(m.index, &err))
          spdlog::warn("group {}: member {} ({}) is missing: its controller is reconnecting", name, m.index, d->first);
      } else if (m.state == MemberState::Missing && ps == PathState::Live) {
        if (gr.g->reinstate_member(m.index, &err))
          spdlog::info("group {}: member {} ({}) is back: rebuilding what it missed", name, m.index, d->first);
        else
          log_limited(spdlog::level::info, "reinstate:" + name, "group {}: member {} cannot return yet: {}", name,
                      m.index, err);
      } else if ((serving || m.state == MemberState::Missing) && ps == PathState::Gone) {
        if (gr.g->fail_member(m.index, &err, -ENODEV))
          spdlog::warn("group {}: member {} ({}) failed: its controller is gone", name, m.index, d->first);
      }
    }
  }
}

}  // namespace gpuraid::daemon
