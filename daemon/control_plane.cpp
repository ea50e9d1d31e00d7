#include "daemon/control_plane.h"

#include <unistd.h>

#include <algorithm>

#include "daemon/convert.h"
#include "daemon/logging.h"
#include "daemon/sysinfo.h"
#include "daemon/validate.h"
#include "engine/thread_name.h"

#ifndef GPURAID_VERSION
#define GPURAID_VERSION "0.0.0"
#endif

namespace gpuraid::daemon {

bool NaturalLess::operator()(const std::string& a, const std::string& b) const {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (isdigit(static_cast<unsigned char>(a[i])) && isdigit(static_cast<unsigned char>(b[j]))) {
      size_t i2 = i, j2 = j;
      while (i2 < a.size() && isdigit(static_cast<unsigned char>(a[i2]))) i2++;
      while (j2 < b.size() && isdigit(static_cast<unsigned char>(b[j2]))) j2++;
      // Compare the numbers by length (no leading zeros assumed), then digits.
      std::string na = a.substr(i, i2 - i), nb = b.substr(j, j2 - j);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = i2;
      j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      i++;
      j++;
    }
  }
  if ((a.size() - i) != (b.size() - j)) return (a.size() - i) < (b.size() - j);
  return a < b;  // equal under the natural order ("pd01" vs "pd1"): keep them apart
}

ControlPlane::ControlPlane(EngineHost& host, Exporter* exporter, EventBus& bus, RegistryStore& store,
                           ControlOptions o)
    : host_(host), exporter_(exporter), bus_(bus), store_(store), opt_(std::move(o)) {
  started_ = last_sample_time_ = std::chrono::steady_clock::now();
}

ControlPlane::~ControlPlane() { shutdown(); }

bool ControlPlane::start(std::string* err) {
  st::Registry reg;
  if (!store_.load(&reg, err)) return false;
  std::lock_guard<std::mutex> g(mu_);
  next_drive_ = reg.next_drive();
  next_group_ = reg.next_group();
  next_volume_ = reg.next_volume();
  restore_drives(reg);
  for (const auto& r : reg.groups()) {
    GroupRec& gr = groups_[r.name()];
    gr.r = r;
    restore_group(gr);
  }
  for (const auto& r : reg.volumes()) {
    VolRec& vr = volumes_[r.id()];
    vr.r = r;
    restore_volume(vr);
  }
  // Groups of a gpuraid before the volume table get theirs (dg import).
  for (auto& [n, gr] : groups_) write_volume_table(gr);
  std::string perr;
  if (!persist(&perr)) spdlog::error("cannot save the registry: {}", perr);
  worker_ = std::thread([this] { worker(); });
  spdlog::info("control plane up: {} drives, {} groups, {} volumes", drives_.size(), groups_.size(),
               volumes_.size());
  return true;
}

void ControlPlane::shutdown() {
  {
    std::lock_guard<std::mutex> g(wmu_);
    if (stopping_) return;
    stopping_ = true;
  }
  wcv_.notify_all();
  if (worker_.joinable()) worker_.join();
  std::unique_lock<std::shared_mutex> td(teardown_mu_);
  std::lock_guard<std::mutex> g(mu_);
  // NVMe-oF: unless the ublk devices are kept, the target lets go of them
  // first (the record stays: the next start configures it again).
  if (!opt_.keep_exports_on_exit)
    for (auto& [id, v] : volumes_)
      if (v.r.export_kind() == v1::EXPORT_KIND_NVMF && v.export_active)
        if (auto s = stop_nvmf(v); !s.ok()) spdlog::error("volume {}: {}", id, s.error_message());
  if (exporter_) exporter_->stop_all();
  for (auto& [id, v] : volumes_) v.target.reset();
  for (auto& [name, gr] : groups_) {
    if (!gr.g) continue;
    std::string err;
    const bool resyncing = gr.g->state() == GroupState::Resyncing;
    if (gr.g->stop(&err))
      spdlog::info("group {} stopped cleanly{}", name, resyncing ? " (its resync goes on at the next start)" : "");
    else spdlog::error("group {} did not stop cleanly: {}", name, err);
    gr.g.reset();
  }
  std::string err;
  if (!persist(&err)) spdlog::error("cannot save the registry: {}", err);
}

bool ControlPlane::persist(std::string* err) {
  st::Registry reg;
  reg.set_format(1);
  reg.set_next_drive(next_drive_);
  reg.set_next_group(next_group_);
  reg.set_next_volume(next_volume_);
  for (auto& [id, d] : drives_) *reg.add_drives() = d.r;
  for (auto& [id, g] : groups_) *reg.add_groups() = g.r;
  for (auto& [id, v] : volumes_) *reg.add_volumes() = v.r;
  return store_.save(reg, err);
}

// After a change that already happened (in memory and on the members):
// a failed save is reported, not undone.
grpc::Status ControlPlane::persist_status() {
  std::string err;
  if (persist(&err)) return grpc::Status::OK;
  spdlog::error("cannot save the registry: {}", err);
  return {grpc::StatusCode::INTERNAL, "the change was made but the registry could not be saved: " + err};
}

void ControlPlane::publish(v1::EventKind kind, const std::string& msg, const std::string& group,
                           const std::string& vol, const std::string& drive, int member) {
  bus_.publish(make_event(kind, msg, group, vol, drive, member));
}

std::string ControlPlane::next_id(const char* prefix, uint64_t* counter,
                                  bool (ControlPlane::*taken)(const std::string&) const) {
  for (;;) {
    std::string id = prefix + std::to_string((*counter)++);
    if (!(this->*taken)(id)) return id;
  }
}

// Runs on a reactor thread: queue it for the worker (which may take mu_).
void ControlPlane::on_group_event(const std::string& group, const GroupEvent& ev) {
  {
    std::lock_guard<std::mutex> g(wmu_);
    pending_.push_back({group, ev});
  }
  wcv_.notify_one();
}

void ControlPlane::worker() {
  set_thread_name("gpuraid-ctl");
  std::unique_lock<std::mutex> g(wmu_);
  while (!stopping_) {
    wcv_.wait_for(g, std::chrono::milliseconds(250), [&] { return stopping_ || !pending_.empty(); });
    while (!pending_.empty() && !stopping_) {
      PendingEvent pe = std::move(pending_.front());
      pending_.pop_front();
      g.unlock();
      handle_group_event(pe);
      zero_queued_free_space();
      g.lock();
    }
    if (std::chrono::steady_clock::now() - last_sample_time_ >= std::chrono::seconds(1)) {
      g.unlock();
      sample_rates();
      check_parity_backends();
      bus_.tick();
      g.lock();
    }
    if (std::chrono::steady_clock::now() - last_path_watch_ >= std::chrono::seconds(1)) {
      last_path_watch_ = std::chrono::steady_clock::now();
      g.unlock();
      watch_paths();
      g.lock();
    }
  }
}

// Once a second: a reactor whose accelerator went to the CPU (a device
// error or a hang) or came back since the last look is an event.
void ControlPlane::check_parity_backends() {
  Engine& e = host_.engine();
  backend_fell_back_.resize(e.reactor_count(), false);
  for (uint32_t i = 0; i < e.reactor_count(); i++) {
    ParityBackend& pb = e.reactor(i).parity();
    std::string why;
    const bool on_cpu = pb.fell_back(&why);
    if (on_cpu == backend_fell_back_[i]) continue;
    backend_fell_back_[i] = on_cpu;
    const std::string who = "reactor " + std::to_string(i) + ": parity backend " + pb.name();
    if (on_cpu) {
      const std::string msg = who + " runs its jobs on the CPU (ISA-L): " + why;
      spdlog::error("{}", msg);
      publish(v1::EVENT_KIND_BACKEND_SWITCHED, msg);
    } else {
      const std::string msg = who + " is back on its device";
      spdlog::info("{}", msg);
      publish(v1::EVENT_KIND_BACKEND_RESUMED, msg);
    }
  }
}

void ControlPlane::publish_queued(v1::EventKind kind, const std::string& msg, const std::string& group) {
  {
    std::lock_guard<std::mutex> g(wmu_);
    pending_.push_back({group, GroupEvent{GroupEvent::Kind(0), -1, msg}, kind});
  }
  wcv_.notify_one();
}

void ControlPlane::handle_group_event(const PendingEvent& pe) {
  std::lock_guard<std::mutex> g(mu_);
  if (pe.queued_kind != v1::EVENT_KIND_UNSPECIFIED) return publish(pe.queued_kind, pe.ev.message, pe.group);
  auto it = groups_.find(pe.group);
  std::string drive;
  if (it != groups_.end() && pe.ev.member >= 0 && size_t(pe.ev.member) < size_t(it->second.r.members_size()))
    drive = it->second.r.members(pe.ev.member);
  std::string where, vd;  // the VDs' bytes the event names (for its message and the group's note)
  if (pe.ev.data_bytes) where = volumes_over(pe.group, pe.ev.data_offset, pe.ev.data_bytes, &vd);
  // A rebuild stopped at bytes no VD holds: the daemon zeros them (below).
  const bool stopped = pe.ev.kind == GroupEvent::RebuildFinished && pe.ev.data_bytes;
  std::string zeroing;
  if (stopped && it != groups_.end() && it->second.g) zeroing = plan_free_space_zeroing(it->second, pe.ev);
  publish(group_event_to_api(pe.ev.kind), pe.ev.message + where + zeroing, pe.group, vd, drive, pe.ev.member);
  if (it == groups_.end() || !it->second.g) return;
  GroupRec& gr = it->second;
  bool progress = pe.ev.kind == GroupEvent::RebuildProgress || pe.ev.kind == GroupEvent::ScrubProgress;
  if (progress) return;
  sync_members(gr);
  // What the start said ("starting degraded", a resync to come) is history
  // once the group is whole again: the event log keeps it.
  if (!gr.note.empty() && gr.g->state() == GroupState::Optimal) gr.note.clear();
  // A rebuild stopped at a block nothing rebuilds leaves its member
  // rebuilding with nothing running: `gpuraid status` and `dg show` say why
  // and what goes on with it, until it starts again.
  if (stopped) {
    gr.note = "the rebuild of member " + std::to_string(pe.ev.member) + " stopped at a block it cannot rebuild" +
              where + zeroing;
    // What only the operator can write: the VDs' bytes.
    if (where.rfind("; on virtual drives", 0) == 0)
      gr.note += std::string(zeroing.empty() ? ": write those bytes" : ": write the virtual drives' bytes") +
                 " whole, then gpuraid dg rebuild " + pe.group +
                 " start (its rebuild_finished event says how)";
  } else if (pe.ev.kind == GroupEvent::RebuildStarted && gr.note.rfind("the rebuild of member ", 0) == 0) {
    gr.note.clear();
  }
  if (pe.ev.kind == GroupEvent::MemberFailed && pe.ev.member >= 0) take_pool_spare(gr, uint32_t(pe.ev.member));
  if (pe.ev.kind == GroupEvent::ReplaceFinished) hot_replace_ended(gr);
  // A drive that joined (a spare taken, a replacement, a drive back, a hot
  // replace) gets the volume table once it is a member: every way in ends
  // with a rebuild, full or of the regions it missed.
  if (pe.ev.kind == GroupEvent::RebuildFinished) {
    if (!stopped) gr.zeroed.clear();  // rebuilt whole: a later stop may be zeroed again
    write_volume_table(gr);
    take_pool_spare_for_failed(gr);  // a member that failed during the rebuild waited for it
  }
  std::string err;
  if (!persist(&err)) spdlog::error("cannot save the registry: {}", err);
}

std::string ControlPlane::volumes_over(const std::string& group, uint64_t off, uint64_t len, std::string* only) const {
  std::string said;
  int n = 0;
  for (const auto& [id, v] : volumes_) {
    const uint64_t a = std::max(off, v.r.offset_bytes()), b = std::min(off + len, v.r.offset_bytes() + v.r.size_bytes());
    if (v.r.group() != group || a >= b) continue;
    said += std::string(n++ ? ", " : "") + id + " bytes " + std::to_string(a - v.r.offset_bytes()) + "-" +
            std::to_string(b - v.r.offset_bytes() - 1);
    *only = id;
  }
  if (n != 1) only->clear();
  return n ? "; on virtual drives: " + said : "; no virtual drive holds those bytes";
}

// A member failed and the group has no dedicated spare: take one from the
// global pool (the smallest that fits).
void ControlPlane::take_pool_spare(GroupRec& gr, uint32_t member) {
  if (!DriveGroup::resilient() || gr.g->spare_count() > 0 || gr.g->volume().failed()) return;
  // One rebuild at a time: a member that failed during another's waits for
  // its end (RebuildFinished takes a spare for it then), as the group's own
  // spares do.
  if (gr.g->rebuild_progress().running) return;
  uint64_t need = gr.g->volume().data_offset() + gr.g->volume().geometry().member_data_bytes;
  DriveRec* best = nullptr;
  for (auto& [id, d] : drives_)
    if (d.r.role() == v1::DRIVE_ROLE_SPARE && d.r.group().empty() && d.drive && !d.r.failed() &&
        d.r.size_bytes() >= need && (!best || d.r.size_bytes() < best->r.size_bytes()))
      best = &d;
  if (!best) return;
  std::string id = best->r.id(), err;
  auto drive = std::move(best->drive);
  if (!gr.g->replace_member(member, std::move(drive), false, &err)) {
    std::string e2;
    best->drive = reopen(*best, &e2);
    // Said where an operator looks: the event (and its hook), the drive's
    // note in `gpuraid status` and `pd list`, the log.
    best->note = "cannot take over member " + std::to_string(member) + " of " + gr.r.name() + ": " + err;
    spdlog::warn("group {}: could not take pool spare {} for member {}: {}", gr.r.name(), id, member, err);
    publish(v1::EVENT_KIND_SPARE_FAILED, "pool spare " + id + " " + best->note, gr.r.name(), "", id, int(member));
    return;
  }
  best->note.clear();
  best->r.set_role(v1::DRIVE_ROLE_MEMBER);
  best->r.set_group(gr.r.name());
  sync_members(gr);
  publish(v1::EVENT_KIND_SPARE_TAKEN, "pool spare " + id + " replaces member " + std::to_string(member),
          gr.r.name(), "", id, int(member));
}

grpc::Status ControlPlane::get_info(v1::DaemonInfo* out) {
  out->set_version(GPURAID_VERSION);
  out->set_parity_backend(host_.engine().reactor(0).parity().name());
  parity_paths_to_api(host_.engine(), out->mutable_parity());
  out->set_reactors(host_.reactors());
  gpu_info(out);
  kernel_features(out->mutable_kernel());
  out->set_state_dir(store_.dir());
  out->set_uptime_s(uint64_t(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started_).count()));
  out->set_pid(getpid());
  out->set_exports_available(exporter_ != nullptr);
  out->set_groups_resilient(DriveGroup::resilient());
  for (auto& l : opt_.listeners) out->add_listeners(l);
  return grpc::Status::OK;
}

}  // namespace gpuraid::daemon
