// Prometheus metrics (GET /metrics): I/O counters and latency histograms
// per VD and PD, every group's health (state, redundancy, failures tolerated, members per
// state, background task progress and rate, scrub findings), the parity
// backend per reactor. Names follow Prometheus conventions: units in the
// name, _total on counters, states as labelled gauges (one series per
// state, 1 for the current one) with the words of proto/api_words.h
// (docs/STATES.md).
#include "daemon/control_plane.h"
#include "daemon/convert.h"
#include "daemon/nvmf_metrics.h"
#include "daemon/prom_text.h"
#include "engine/levels/level.h"
#include "proto/api_words.h"

namespace gpuraid::daemon {

namespace {

std::string level_word(const v1::Group& g) {
  Level level;
  if (!level_from_api(g.level(), &level)) return "unknown";
  const LevelDescription& d = level_description(level);
  if (d.chosen_parity)
    return d.name + std::to_string(g.members_size() - int(g.parity())) + "+" + std::to_string(g.parity());
  return d.name;
}

std::string role_word(v1::DriveRole r) {
  std::string w = v1::DriveRole_Name(r).substr(sizeof("DRIVE_ROLE_") - 1);
  for (auto& c : w) c = char(tolower(static_cast<unsigned char>(c)));
  return w;
}

std::string export_word(const v1::Volume& v) {
  if (!v.has_export_()) return "none";
  switch (v.export_().kind()) {
    case v1::EXPORT_KIND_UBLK: return "ublk";
    case v1::EXPORT_KIND_NBD: return "nbd";
    case v1::EXPORT_KIND_NVMF: return "nvmf";
    default: return "none";
  }
}

// The engine's I/O counters and the daemon's VD and PD figures.
void io_metrics(PromText& p, const v1::Stats& s, const std::map<std::string, std::string>& vd_group,
                const std::map<std::string, std::string>& pd_group) {
  const auto& e = s.engine();
  p.family("member_ios_total", "counter", "Member I/Os issued by the engine.");
  p.sample("member_ios_total", {{"op", "read"}}, e.member_reads());
  p.sample("member_ios_total", {{"op", "write"}}, e.member_writes());
  p.sample("member_ios_total", {{"op", "flush"}}, e.member_flushes());
  p.family("member_ios_merged_total", "counter",
           "Member I/Os that rode on a neighbour's request to the same drive (plug merging).");
  p.sample("member_ios_merged_total", {}, e.member_ios_merged());
  p.family("member_bytes_total", "counter", "Member bytes moved by the engine.");
  p.sample("member_bytes_total", {{"op", "read"}}, e.member_bytes_read());
  p.sample("member_bytes_total", {{"op", "write"}}, e.member_bytes_written());
  p.family("member_errors_total", "counter", "Member I/O errors.");
  p.sample("member_errors_total", {}, e.member_errors());
  p.family("reactor_cpu_seconds_total", "counter", "CPU time of the reactor threads.");
  p.sample("reactor_cpu_seconds_total", {}, e.reactor_cpu_s());
  // Was gpuraid_cpu_ns_per_io: Prometheus names carry base units (seconds).
  p.family("reactor_cpu_seconds_per_io", "gauge", "Reactor CPU per VD I/O over the last second.");
  p.sample("reactor_cpu_seconds_per_io", {{"backend", e.parity_backend()}}, e.cpu_ns_per_io() * 1e-9);

  auto vd = [&](const v1::VolumeStats& v) -> Labels {
    auto g = vd_group.find(v.id());
    return {{"vd", v.id()}, {"dg", g == vd_group.end() ? "" : g->second}};
  };
  auto with = [](Labels l, const char* k, const char* v) {
    l.push_back({k, v});
    return l;
  };
  p.family("vd_ios_total", "counter", "I/Os served per virtual drive.");
  for (auto& v : s.volumes()) {
    p.sample("vd_ios_total", with(vd(v), "op", "read"), v.io().reads());
    p.sample("vd_ios_total", with(vd(v), "op", "write"), v.io().writes());
    p.sample("vd_ios_total", with(vd(v), "op", "flush"), v.io().flushes());
  }
  p.family("vd_bytes_total", "counter", "Bytes served per virtual drive.");
  for (auto& v : s.volumes()) {
    p.sample("vd_bytes_total", with(vd(v), "op", "read"), v.io().read_bytes());
    p.sample("vd_bytes_total", with(vd(v), "op", "write"), v.io().write_bytes());
  }
  p.family("vd_errors_total", "counter", "Failed I/Os per virtual drive.");
  for (auto& v : s.volumes()) p.sample("vd_errors_total", vd(v), v.io().errors());
  p.family("vd_latency_p99_seconds", "gauge", "99th percentile latency over the last second.");
  for (auto& v : s.volumes()) p.sample("vd_latency_p99_seconds", vd(v), v.io().latency_p99_ns() * 1e-9);

  auto pd = [&](const v1::DriveStats& d) -> Labels {
    auto g = pd_group.find(d.id());
    return {{"pd", d.id()}, {"dg", g == pd_group.end() ? "" : g->second}};
  };
  p.family("pd_ios_total", "counter", "Member I/Os per physical drive (completed without error).");
  for (auto& d : s.drives()) {
    p.sample("pd_ios_total", with(pd(d), "op", "read"), d.reads());
    p.sample("pd_ios_total", with(pd(d), "op", "write"), d.writes());
  }
  p.family("pd_bytes_total", "counter", "Member bytes per physical drive.");
  for (auto& d : s.drives()) {
    p.sample("pd_bytes_total", with(pd(d), "op", "read"), d.bytes_read());
    p.sample("pd_bytes_total", with(pd(d), "op", "write"), d.bytes_written());
  }
  p.family("pd_errors_total", "counter", "Member I/O errors per physical drive.");
  for (auto& d : s.drives()) p.sample("pd_errors_total", pd(d), d.errors());
}

const char* const kOps[kMemberOps] = {"read", "write", "flush"};

// State as a labelled gauge: one series per state, 1 for the current one.
template <typename State>
void state_gauge(PromText& p, const std::string& name, Labels base, State now, const std::vector<State>& all,
                 std::string (*word)(State), const char* key = "state") {
  for (State s : all) {
    Labels l = base;
    l.push_back({key, word(s)});
    p.sample(name, l, uint64_t(s == now));
  }
}

void group_metrics(PromText& p, const std::vector<v1::Group>& groups, const v1::Stats& s) {
  const auto states = all_group_states();
  const auto member_states = all_drive_states();
  p.family("dg_info", "gauge", "Drive group identity (always 1).");
  for (auto& g : groups)
    p.sample("dg_info", {{"dg", g.name()}, {"uuid", g.uuid()}, {"level", level_word(g)}, {"geometry", g.geometry()}},
             uint64_t(1));
  p.family("dg_state", "gauge", "Drive group state: 1 for the current state, 0 for the others.");
  for (auto& g : groups) state_gauge(p, "dg_state", {{"dg", g.name()}}, g.state(), states, group_state_word);
  p.family("dg_redundancy", "gauge", "Drive group redundancy: 1 for the word that applies now (docs/STATES.md).");
  for (auto& g : groups)
    state_gauge(p, "dg_redundancy", {{"dg", g.name()}}, g.redundancy(), all_redundancies(), redundancy_word,
                "redundancy");
  p.family("dg_failures_tolerated", "gauge",
           "Further member failures the group survives now (0 while init or resync runs, or failed).");
  for (auto& g : groups) p.sample("dg_failures_tolerated", {{"dg", g.name()}}, uint64_t(g.failures_tolerated()));
  p.family("dg_distributed_spares", "gauge",
           "Declustered groups (draid5/6): the distributed spare room, in members, used and free.");
  for (auto& g : groups) {
    if (!g.declustered_spares()) continue;
    const uint32_t used = std::min(g.distributed_spares_used(), g.declustered_spares());
    p.sample("dg_distributed_spares", {{"dg", g.name()}, {"state", "used"}}, uint64_t(used));
    p.sample("dg_distributed_spares", {{"dg", g.name()}, {"state", "free"}}, uint64_t(g.declustered_spares() - used));
  }
  p.family("dg_members", "gauge", "Members per member state.");
  for (auto& g : groups)
    for (auto st : member_states) {
      uint64_t n = 0;
      for (auto& m : g.members()) n += m.state() == st;
      p.sample("dg_members", {{"dg", g.name()}, {"state", drive_state_word(st)}}, n);
    }
  p.family("dg_failed_members", "gauge", "Failed members per drive group.");
  for (auto& gs : s.groups()) p.sample("dg_failed_members", {{"dg", gs.name()}}, uint64_t(gs.failed_members()));
  p.family("dg_spares", "gauge", "Spares dedicated to the group.");
  for (auto& g : groups) p.sample("dg_spares", {{"dg", g.name()}}, uint64_t(g.spares_size()));
  p.family("dg_capacity_bytes", "gauge", "Usable bytes of the group.");
  for (auto& g : groups) p.sample("dg_capacity_bytes", {{"dg", g.name()}}, g.capacity_bytes());
  p.family("dg_free_bytes", "gauge", "Bytes of the group not given to virtual drives.");
  for (auto& g : groups) p.sample("dg_free_bytes", {{"dg", g.name()}}, g.free_bytes());

  struct Task {
    const char* name;
    const v1::Progress& (v1::Group::*get)() const;
  };
  const Task tasks[] = {{"rebuild", &v1::Group::rebuild}, {"resync", &v1::Group::resync},
                        {"init", &v1::Group::init}, {"scrub", &v1::Group::scrub},
                        {"replace", &v1::Group::replace}};
  auto each_task = [&](const char* name, const char* type, const char* help, auto value) {
    p.family(name, type, help);
    for (auto& g : groups)
      for (const Task& t : tasks) p.sample(name, {{"dg", g.name()}, {"task", t.name}}, value((g.*t.get)()));
  };
  each_task("dg_task_running", "gauge", "1 while the background task runs (paused included).",
            [](const v1::Progress& x) { return uint64_t(x.running()); });
  each_task("dg_task_paused", "gauge", "1 while the background task is paused.",
            [](const v1::Progress& x) { return uint64_t(x.paused()); });
  each_task("dg_task_progress_ratio", "gauge", "Done fraction (0..1) of the running or last background task.",
            [](const v1::Progress& x) { return x.fraction(); });
  each_task("dg_task_done_bytes", "gauge", "Member bytes the running or last task has done.",
            [](const v1::Progress& x) { return x.done_bytes(); });
  each_task("dg_task_total_bytes", "gauge", "Member bytes the running or last task covers.",
            [](const v1::Progress& x) { return x.total_bytes(); });
  each_task("dg_task_rate_bytes_per_second", "gauge", "Recent rate of the background task.",
            [](const v1::Progress& x) { return x.running() ? x.rate_bytes_s() : 0.0; });
  each_task("dg_task_eta_seconds", "gauge", "Estimated time left of the running task (0: unknown or none).",
            [](const v1::Progress& x) { return x.running() && !x.paused() ? x.eta_s() : 0.0; });
  p.family("dg_task_rate_limit_bytes_per_second", "gauge", "Rate limit set for the task (0: unlimited).");
  for (auto& g : groups) {
    p.sample("dg_task_rate_limit_bytes_per_second", {{"dg", g.name()}, {"task", "rebuild"}}, g.rebuild_rate_bytes_s());
    p.sample("dg_task_rate_limit_bytes_per_second", {{"dg", g.name()}, {"task", "scrub"}}, g.scrub_rate_bytes_s());
  }
  p.family("dg_scrub_checked_stripes", "gauge", "Stripes checked by the running or last scrub.");
  for (auto& g : groups) p.sample("dg_scrub_checked_stripes", {{"dg", g.name()}}, g.last_scrub().stripes_checked());
  p.family("dg_scrub_mismatched_stripes", "gauge", "Stripes whose parity mismatched in the running or last scrub.");
  for (auto& g : groups)
    p.sample("dg_scrub_mismatched_stripes", {{"dg", g.name()}}, g.last_scrub().mismatched_stripes());
  p.family("dg_scrub_repaired_stripes", "gauge", "Stripes repaired by the running or last scrub.");
  for (auto& g : groups) p.sample("dg_scrub_repaired_stripes", {{"dg", g.name()}}, g.last_scrub().repaired_stripes());
  p.family("dg_scrub_made_consistent_stripes", "gauge",
           "Stripes the running or last scrub made consistent without knowing which side was right.");
  for (auto& g : groups)
    p.sample("dg_scrub_made_consistent_stripes", {{"dg", g.name()}}, g.last_scrub().made_consistent_stripes());

  p.family("dg_writes_total", "counter", "Stripe writes per group by kind.");
  for (auto& gs : s.groups()) {
    const std::pair<const char*, uint64_t> kinds[] = {{"full_stripe", gs.full_stripe_writes()},
                                                      {"rmw", gs.rmw_writes()},
                                                      {"rcw", gs.rcw_writes()},
                                                      {"degraded", gs.degraded_writes()},
                                                      {"merged", gs.merged_writes()}};
    for (auto& [k, n] : kinds) p.sample("dg_writes_total", {{"dg", gs.name()}, {"kind", k}}, n);
  }
  struct GuardCounter {
    const char* name;
    const char* help;
    uint64_t (v1::GroupStats::*get)() const;
  };
  const GuardCounter guard[] = {
      {"dg_guard_logged_writes_total", "Stripe writes the write-hole guard logged.", &v1::GroupStats::guard_logged_writes},
      {"dg_guard_batches_total", "Batches of the guard's log (one FUA write per parity member each).",
       &v1::GroupStats::guard_batches},
      {"dg_guard_flush_rounds_total", "Flushes that made logged writes durable before their log room was reused.",
       &v1::GroupStats::guard_flush_rounds},
      {"dg_guard_log_waits_total", "Guard log batches that waited for room.", &v1::GroupStats::guard_log_waits},
      {"dg_guard_tail_writes_total", "Ring tail writes of the guard's log (before reclaimed room is reused).",
       &v1::GroupStats::guard_tail_writes}};
  for (const GuardCounter& c : guard) {
    p.family(c.name, "counter", c.help);
    for (auto& gs : s.groups()) p.sample(c.name, {{"dg", gs.name()}}, (gs.*c.get)());
  }
  p.family("dg_degraded_reads_total", "counter", "Reads served by reconstruction.");
  for (auto& gs : s.groups()) p.sample("dg_degraded_reads_total", {{"dg", gs.name()}}, gs.degraded_reads());
  p.family("dg_degraded_flushes_total", "counter",
           "Degraded partial stripe writes that first flushed members holding writes a volatile cache may still have.");
  for (auto& gs : s.groups()) p.sample("dg_degraded_flushes_total", {{"dg", gs.name()}}, gs.degraded_flushes());
  p.family("dg_corrected_reads_total", "counter",
           "Member blocks that could not be read, rebuilt from the other members and written back.");
  for (auto& gs : s.groups()) p.sample("dg_corrected_reads_total", {{"dg", gs.name()}}, gs.corrected_reads());
  p.family("dg_uncorrectable_reads_total", "counter",
           "Member blocks that could not be read nor rebuilt (the group needed the member): the I/O failed.");
  for (auto& gs : s.groups()) p.sample("dg_uncorrectable_reads_total", {{"dg", gs.name()}}, gs.uncorrectable_reads());
  p.family("dg_retried_reads_total", "counter", "Reads redone because a member failed under them.");
  for (auto& gs : s.groups()) p.sample("dg_retried_reads_total", {{"dg", gs.name()}}, gs.retried_reads());
}

}  // namespace

std::string ControlPlane::metrics_text() {
  v1::Stats s;
  get_stats(v1::GetStatsRequest(), &s);
  std::vector<v1::Group> groups;
  std::vector<v1::Volume> vols;
  std::vector<v1::Drive> drives;
  std::map<std::string, std::string> vd_group, pd_group;
  std::map<std::string, LatencyTotals[kMemberOps]> vd_lat, pd_lat;
  {
    std::lock_guard<std::mutex> g(mu_);
    for (auto& [name, gr] : groups_) group_to_api(gr, &groups.emplace_back());
    for (auto& [id, v] : volumes_) {
      volume_to_api(v, &vols.emplace_back());
      vd_group[id] = v.r.group();
      if (v.target) {
        IoCounters c;
        v.target->totals(&c);
        for (size_t op = 0; op < kMemberOps; op++) vd_lat[id][op] = c.latency[op].on_edges();
      }
    }
    for (auto& [id, d] : drives_) {
      drive_to_api(d, &drives.emplace_back());
      pd_group[id] = d.r.group();
      if (const Drive* drv = counted_drive(d)) {
        DriveTotals t = host_.engine().drive_totals(drv);
        for (size_t op = 0; op < kMemberOps; op++) pd_lat[id][op] = t.latency[op];
      }
    }
  }
  PromText p;
  io_metrics(p, s, vd_group, pd_group);
  p.family("vd_latency_seconds", "histogram", "Latency of virtual drive I/O, from submission to completion.");
  for (auto& [id, lat] : vd_lat)
    for (size_t op = 0; op < kMemberOps; op++)
      p.histogram("vd_latency_seconds", {{"vd", id}, {"dg", vd_group[id]}, {"op", kOps[op]}}, lat[op]);
  p.family("pd_latency_seconds", "histogram",
           "Latency of member I/O per physical drive, from the reactor turn that issued it to the one that reaped it.");
  for (auto& [id, lat] : pd_lat)
    for (size_t op = 0; op < kMemberOps; op++)
      p.histogram("pd_latency_seconds", {{"pd", id}, {"dg", pd_group[id]}, {"op", kOps[op]}}, lat[op]);
  p.family("vd_info", "gauge", "Virtual drive identity and export (always 1).");
  for (auto& v : vols)
    p.sample("vd_info",
             {{"vd", v.id()}, {"dg", v.group()}, {"export", export_word(v)},
              {"device", v.has_export_() ? (v.export_().dev_path().empty() ? v.export_().uri() : v.export_().dev_path()) : ""}},
             uint64_t(1));
  p.family("vd_nbd_insecure_listen", "gauge",
           "NBD exports: 1 when plain clients are served on a non-loopback address (--insecure-listen); tls: the "
           "export's TLS mode (off, allow, require).");
  for (auto& v : vols)
    if (v.has_export_() && v.export_().kind() == v1::EXPORT_KIND_NBD) {
      const auto& sec = v.export_().nbd_security();
      const v1::NbdTls tls = sec.tls() == v1::NBD_TLS_UNSPECIFIED ? v1::NBD_TLS_OFF : sec.tls();
      p.sample("vd_nbd_insecure_listen", {{"vd", v.id()}, {"dg", v.group()}, {"tls", gpuraid::v1::api_word(tls)}},
               uint64_t(sec.insecure_listen() ? 1 : 0));
    }
  nvmf_metrics(p, vols);
  p.family("vd_size_bytes", "gauge", "Size of the virtual drive.");
  for (auto& v : vols) p.sample("vd_size_bytes", {{"vd", v.id()}, {"dg", v.group()}}, v.size_bytes());
  p.family("pd_info", "gauge", "Physical drive identity and role (always 1).");
  for (auto& d : drives)
    p.sample("pd_info",
             {{"pd", d.id()}, {"dg", d.group()}, {"path", d.path()},
              {"role", role_word(d.role())},
              {"member", d.member_index() >= 0 ? std::to_string(d.member_index()) : ""}},
             uint64_t(1));
  p.family("pd_state", "gauge", "Physical drive state: 1 for the current state, 0 for the others.");
  const auto dstates = all_drive_states();
  for (auto& d : drives) state_gauge(p, "pd_state", {{"pd", d.id()}, {"dg", d.group()}}, d.state(), dstates, drive_state_word);
  group_metrics(p, groups, s);
  Engine& e = host_.engine();
  auto backend = [&](uint32_t i) -> Labels {
    return {{"reactor", std::to_string(i)}, {"backend", e.reactor(i).parity().name()}};
  };
  p.family("parity_backend_info", "gauge", "Parity backend in use per reactor (always 1).");
  for (uint32_t i = 0; i < e.reactor_count(); i++) p.sample("parity_backend_info", backend(i), uint64_t(1));
  p.family("parity_backend_fallback", "gauge",
           "1 while a reactor's accelerator backend runs its jobs on the CPU (ISA-L) instead of its device "
           "(after a device error or a hang, until the device is tried again).");
  std::vector<ParityCounters> pc;
  for (uint32_t i = 0; i < e.reactor_count(); i++) pc.push_back(e.reactor(i).parity().counters());
  for (uint32_t i = 0; i < e.reactor_count(); i++) p.sample("parity_backend_fallback", backend(i), uint64_t(pc[i].on_cpu));
  auto with = [&](uint32_t i, const char* key, const char* value) {
    Labels l = backend(i);
    l.push_back({key, value});
    return l;
  };
  p.family("parity_batches_total", "counter",
           "Accelerator parity batches by data path: zero_copy (buffers read in place), staged (some buffer bounced "
           "because it was not registered with the device; 0 in steady state), cpu (run on the CPU instead).");
  for (uint32_t i = 0; i < e.reactor_count(); i++) {
    p.sample("parity_batches_total", with(i, "path", "zero_copy"), pc[i].zero_copy_batches);
    p.sample("parity_batches_total", with(i, "path", "staged"), pc[i].staged_batches);
    p.sample("parity_batches_total", with(i, "path", "cpu"), pc[i].cpu_batches);
  }
  p.family("parity_jobs_total", "counter",
           "Parity jobs by where they ran: device, cpu (a CPU backend), routed (small: cheaper on the CPU), capped "
           "(beyond --gpu-max-gbps), unsupported (shapes the kernels do not take), fallback (device failed or paused).");
  for (uint32_t i = 0; i < e.reactor_count(); i++) {
    const ParityCounters& c = pc[i];
    const std::pair<const char*, uint64_t> where[] = {{"device", c.device_jobs},     {"cpu", c.cpu_jobs},
                                                      {"routed", c.routed_jobs},     {"capped", c.capped_jobs},
                                                      {"unsupported", c.unsupported_jobs}, {"fallback", c.fallback_jobs}};
    for (auto [w, n] : where) p.sample("parity_jobs_total", with(i, "where", w), n);
  }
  p.family("parity_device_errors_total", "counter", "Parity batches that failed on the device.");
  for (uint32_t i = 0; i < e.reactor_count(); i++) p.sample("parity_device_errors_total", backend(i), pc[i].device_errors);
  p.family("parity_device_timeouts_total", "counter",
           "Parity batches not finished within --gpu-timeout-ms (given up: their jobs ran on the CPU).");
  for (uint32_t i = 0; i < e.reactor_count(); i++)
    p.sample("parity_device_timeouts_total", backend(i), pc[i].device_timeouts);
  p.family("parity_device_resumes_total", "counter", "Times a paused parity device was taken back.");
  for (uint32_t i = 0; i < e.reactor_count(); i++)
    p.sample("parity_device_resumes_total", backend(i), pc[i].device_resumes);
  return p.str();
}

}  // namespace gpuraid::daemon
