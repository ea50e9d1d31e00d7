// Statistics: per-VD counters (MeteredTarget), per-group sums plus the
// engine's volume counters, engine-wide member I/O (Reactor::stats), the
// reactor threads' CPU time; rates over the last second from the worker's
// samples. Rendered as Prometheus text in control_metrics.cpp.
#include "engine/ppl/ppl_log.h"
#include "daemon/control_plane.h"
#include "daemon/convert.h"
#include "daemon/validate.h"

namespace gpuraid::daemon {

void ControlPlane::sample_rates() {
  std::map<std::string, std::shared_ptr<MeteredTarget>> targets;
  {
    std::lock_guard<std::mutex> g(mu_);
    for (auto& [id, v] : volumes_)
      if (v.target) targets[id] = v.target;
  }
  auto now = std::chrono::steady_clock::now();
  double dt = std::chrono::duration<double>(now - last_sample_time_).count();
  double cpu = host_.reactor_cpu_seconds();
  std::lock_guard<std::mutex> g(rates_mu_);
  uint64_t total_ios = 0, delta_ios = 0;
  std::map<std::string, Sample> next;
  for (auto& [id, t] : targets) {
    IoCounters c;
    t->totals(&c);
    Sample s{c.reads.load(), c.writes.load(), c.read_bytes.load(), c.write_bytes.load(), c.all_latency()};
    total_ios += s.reads + s.writes;
    auto prev = last_sample_.find(id);
    Rates r;
    if (prev != last_sample_.end() && dt > 0 && s.reads >= prev->second.reads && s.writes >= prev->second.writes) {
      const Sample& p = prev->second;
      r.read_iops = double(s.reads - p.reads) / dt;
      r.write_iops = double(s.writes - p.writes) / dt;
      r.read_bps = double(s.read_bytes - p.read_bytes) / dt;
      r.write_bps = double(s.write_bytes - p.write_bytes) / dt;
      std::vector<uint64_t> d(s.hist.size());
      for (size_t i = 0; i < d.size(); i++) d[i] = s.hist[i] - std::min(s.hist[i], p.hist[i]);
      r.p50 = LatencyHist::percentile(d, 50);
      r.p99 = LatencyHist::percentile(d, 99);
      r.p999 = LatencyHist::percentile(d, 99.9);
      delta_ios += (s.reads - p.reads) + (s.writes - p.writes);
    }
    rates_[id] = r;
    next[id] = std::move(s);
  }
  for (auto it = rates_.begin(); it != rates_.end();) it = targets.count(it->first) ? std::next(it) : rates_.erase(it);
  last_sample_ = std::move(next);
  double dcpu = cpu - last_cpu_s_;
  cpu_ns_per_io_ = delta_ios ? dcpu * 1e9 / double(delta_ios) : 0;
  utilisation_ = dt > 0 ? dcpu / dt : 0;
  last_cpu_s_ = cpu;
  last_total_ios_ = total_ios;
  last_sample_time_ = now;
}

void ControlPlane::io_to_api(const std::string& vd, const IoCounters& c, v1::IoStats* o) const {
  o->set_reads(c.reads.load());
  o->set_writes(c.writes.load());
  o->set_flushes(c.flushes.load());
  o->set_read_bytes(c.read_bytes.load());
  o->set_write_bytes(c.write_bytes.load());
  o->set_errors(c.errors.load());
  auto hist = c.all_latency();
  for (size_t i = 0; i < hist.size(); i++)
    if (hist[i]) {
      auto* b = o->add_latency();
      b->set_le_ns(LatencyHist::upper_ns(int(i)));
      b->set_count(hist[i]);
    }
  std::lock_guard<std::mutex> g(rates_mu_);
  auto r = rates_.find(vd);
  if (r == rates_.end()) return;
  o->set_read_iops(r->second.read_iops);
  o->set_write_iops(r->second.write_iops);
  o->set_read_bytes_s(r->second.read_bps);
  o->set_write_bytes_s(r->second.write_bps);
  o->set_latency_p50_ns(r->second.p50);
  o->set_latency_p99_ns(r->second.p99);
  o->set_latency_p999_ns(r->second.p999);
}

namespace {
// Adds b into a (group totals: counters and rates add, latency buckets merge).
void add_io(v1::IoStats* a, const v1::IoStats& b) {
  a->set_reads(a->reads() + b.reads());
  a->set_writes(a->writes() + b.writes());
  a->set_flushes(a->flushes() + b.flushes());
  a->set_read_bytes(a->read_bytes() + b.read_bytes());
  a->set_write_bytes(a->write_bytes() + b.write_bytes());
  a->set_errors(a->errors() + b.errors());
  a->set_read_iops(a->read_iops() + b.read_iops());
  a->set_write_iops(a->write_iops() + b.write_iops());
  a->set_read_bytes_s(a->read_bytes_s() + b.read_bytes_s());
  a->set_write_bytes_s(a->write_bytes_s() + b.write_bytes_s());
  a->set_latency_p50_ns(std::max(a->latency_p50_ns(), b.latency_p50_ns()));  // worst VD
  a->set_latency_p99_ns(std::max(a->latency_p99_ns(), b.latency_p99_ns()));
  a->set_latency_p999_ns(std::max(a->latency_p999_ns(), b.latency_p999_ns()));
  std::map<uint64_t, uint64_t> m;
  for (auto& x : a->latency()) m[x.le_ns()] += x.count();
  for (auto& x : b.latency()) m[x.le_ns()] += x.count();
  a->clear_latency();
  for (auto& [le, n] : m) {
    auto* x = a->add_latency();
    x->set_le_ns(le);
    x->set_count(n);
  }
}
}  // namespace

grpc::Status ControlPlane::get_stats(const v1::GetStatsRequest& q, v1::Stats* out) {
  std::lock_guard<std::mutex> g(mu_);
  if (!q.volume().empty() && !volumes_.count(q.volume())) return not_found("no virtual drive " + quote(q.volume()));
  if (!q.group().empty() && !groups_.count(q.group())) return not_found("no drive group " + quote(q.group()));
  if (!q.drive().empty() && !drives_.count(q.drive())) return not_found("no drive " + quote(q.drive()));
  bool all = q.volume().empty() && q.group().empty() && q.drive().empty();
  auto* e = out->mutable_engine();
  e->set_parity_backend(host_.engine().reactor(0).parity().name());
  parity_paths_to_api(host_.engine(), e->mutable_parity());
  // Each reactor's counters as its thread left them (a snapshot: they may
  // lag by a turn; monitoring only).
  for (uint32_t i = 0; i < host_.reactors(); i++) {
    const ReactorStats rs = host_.engine().reactor(i).stats();
    e->set_member_reads(e->member_reads() + rs.member_reads);
    e->set_member_writes(e->member_writes() + rs.member_writes);
    e->set_member_flushes(e->member_flushes() + rs.member_flushes);
    e->set_member_bytes_read(e->member_bytes_read() + rs.member_bytes_read);
    e->set_member_bytes_written(e->member_bytes_written() + rs.member_bytes_written);
    e->set_member_errors(e->member_errors() + rs.member_errors);
    e->set_member_ios_merged(e->member_ios_merged() + rs.member_ios_merged);
  }
  e->set_reactor_cpu_s(host_.reactor_cpu_seconds());
  {
    std::lock_guard<std::mutex> r(rates_mu_);
    e->set_cpu_ns_per_io(cpu_ns_per_io_);
    e->set_reactor_utilisation(utilisation_);
  }
  std::map<std::string, v1::IoStats> by_group;
  for (auto& [id, v] : volumes_) {
    v1::IoStats io;
    if (v.target) {
      IoCounters c;
      v.target->totals(&c);
      io_to_api(id, c, &io);
    }
    add_io(&by_group[v.r.group()], io);
    if (all || q.volume() == id) {
      auto* vs = out->add_volumes();
      vs->set_id(id);
      *vs->mutable_io() = io;
    }
  }
  for (auto& [name, gr] : groups_) {
    if (!all && q.group() != name) continue;
    auto* gs = out->add_groups();
    gs->set_name(name);
    *gs->mutable_io() = by_group[name];
    if (!gr.g) continue;
    const VolumeStats& s = gr.g->volume().stats();
    gs->set_full_stripe_writes(s.full_stripe_writes);
    gs->set_rmw_writes(s.rmw_writes);
    gs->set_rcw_writes(s.rcw_writes);
    gs->set_degraded_writes(s.degraded_writes);
    gs->set_degraded_reads(s.degraded_reads);
    gs->set_merged_writes(s.merged_writes);
    gs->set_retried_reads(s.retried_reads);
    gs->set_degraded_flushes(s.degraded_flushes);
    gs->set_corrected_reads(s.corrected_reads);
    gs->set_uncorrectable_reads(s.uncorrectable_reads);
    gs->set_failed_members(uint32_t(__builtin_popcountll(gr.g->volume().failed_mask())));
    if (const PplLog* log = gr.g->volume().ppl) {
      gs->set_guard_logged_writes(log->logged_writes());
      gs->set_guard_batches(log->batches());
      gs->set_guard_flush_rounds(log->flush_rounds());
      gs->set_guard_log_waits(log->waits());
      gs->set_guard_tail_writes(log->tail_writes());
    }
  }
  for (auto& [id, d] : drives_) {
    if (!all && q.drive() != id) continue;
    v1::Drive api;
    drive_to_api(d, &api);
    auto* ds = out->add_drives();
    ds->set_id(id);
    ds->set_state(api.state());
    ds->set_group(d.r.group());
    if (const Drive* drv = counted_drive(d)) {
      DriveTotals t = host_.engine().drive_totals(drv);
      ds->set_reads(t.reads);
      ds->set_writes(t.writes);
      ds->set_bytes_read(t.bytes_read);
      ds->set_bytes_written(t.bytes_written);
      ds->set_errors(t.errors);
    }
  }
  return grpc::Status::OK;
}

// The engine counts per drive object: the daemon's own, or the group's member.
const Drive* ControlPlane::counted_drive(const DriveRec& d) {
  if (d.drive) return d.drive.get();
  if (d.r.group().empty() || d.r.member_index() < 0) return nullptr;
  auto git = groups_.find(d.r.group());
  if (git == groups_.end() || !git->second.g ||
      uint32_t(d.r.member_index()) >= git->second.g->volume().geometry().members)
    return nullptr;
  return git->second.g->volume().member(uint32_t(d.r.member_index()));
}

}  // namespace gpuraid::daemon
