// gpuraid-bench --state rebuilding on a declustered level (draid5/6): a
// failed member is rebuilt into the distributed spare room by the group
// itself, reading from and writing to every survivor. Timed twice: under a
// (rate-capped) foreground load, and idle; the figure to compare is the
// idle time against one replacement drive's (the RAID 6 run of the same
// drives: its member data over that drive's raw write rate). Then the
// copy-back of the room's last member onto that replacement drive, idle:
// every strip it moves lands on that one drive, so its bound is that
// drive's write time for a member's data.
#include <chrono>
#include <cstdio>
#include <thread>

#include "bench/parity_report.h"
#include "bench/rebuild_mode.h"
#include "bench/targets.h"
#include "engine/group/group.h"
#include "engine/units.h"

namespace gpuraid::bench {

namespace {

using json = nlohmann::json;

// Fails `member` and waits until its rebuild into the room has started, at
// most 5 s, polling reactor 0 (the group's background) unless the load
// generators poll it (`polled`).
bool fail_into_room(Engine& e, Group& g, uint32_t member, bool polled, std::string* err) {
  if (!g.fail_member(member, err)) return false;
  const uint64_t t0 = now_ns();
  while (!g.rebuild_progress().running && now_ns() - t0 < 5'000'000'000ull) {
    if (polled) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    else e.reactor(0).poll(true, 1);
  }
  if (!g.rebuild_progress().running) return *err = "the group did not rebuild member " + std::to_string(member) + " into its spare room", false;
  return true;
}

}  // namespace

int run_room_rebuild_mode(Engine& e, std::vector<std::unique_ptr<Drive>> drives, const RebuildSetup& rs,
                          const Workload& w, const Options& o, const std::string& backend) {
  std::string err;
  const ParityCounters parity_before = e.parity_counters();
  std::unique_ptr<Drive> spare = std::move(drives.back());
  drives.pop_back();
  const double one_drive_mbps = std::max(raw_write_mbps(e, *spare), raw_write_mbps(e, *spare));
  auto g = bench_group(e, std::move(drives), rs, o);
  if (!g) return 2;
  const Geometry& geo = g->volume().geometry();
  RawTarget rawt(g->volume(), w.bs);
  RaidTarget raid(g->volume());
  RunResult raw_fg = run_once(e, rawt, w, o, o.seed);
  // Under load: member 0 fails as the window opens; what its rebuild did by the end.
  g->set_rebuild_rate(rs.rate_bytes_s);
  g->set_rebuild_min_rate(rs.min_rate_bytes_s);
  // Progress counts stripe space (k stripes a row): the share of the
  // rebuild done in the window is what says how long all of it would take.
  double loaded_share = 0;
  bool started = false;
  RunResult loaded_fg = run_once(
      e, raid, w, o, o.seed + 1, [&] { started = fail_into_room(e, *g, 0, true, &err); },
      [&] {
        const Progress p = g->rebuild_progress();
        loaded_share = !p.running ? 1.0 : p.total_bytes ? double(p.done_bytes) / double(p.total_bytes) : 0;
      });
  if (!started) {
    fprintf(stderr, "gpuraid-bench: %s\n", err.c_str());
    return 2;
  }
  g->set_rebuild_rate(0);
  g->set_rebuild_min_rate(0);
  double secs = 0;
  const bool ok1 = wait_rebuild(e, *g, &secs);
  // Idle: member 1 fails, timed from its failure to the group optimal again.
  const uint64_t t0 = now_ns();
  if (!fail_into_room(e, *g, 1, false, &err)) {
    fprintf(stderr, "gpuraid-bench: %s\n", err.c_str());
    return 2;
  }
  const bool ok2 = wait_rebuild(e, *g, &secs);
  secs = double(now_ns() - t0) / 1e9;
  // Copy-back of member 1 (the room's last) onto the replacement drive
  // (which the raw rate test wrote: forced).
  double copy_s = 0;
  if (!g->replace_member(1, std::move(spare), true, &err)) {
    fprintf(stderr, "gpuraid-bench: copy-back: %s\n", err.c_str());
    return 2;
  }
  const bool ok3 = wait_rebuild(e, *g, &copy_s) && g->volume().room_mask() == 1u;
  // One replacement drive would write the member's whole data area at its raw rate.
  const double one_drive_s = double(geo.member_data_bytes) / (one_drive_mbps * 1e6);
  const double r = o.limits.read_bytes_s ? double(o.limits.read_bytes_s) : 0, wr = o.limits.write_bytes_s ? double(o.limits.write_bytes_s) : 0;
  // The ideal speedup (issue 34): N - 1 survivors share the writes, and
  // each rebuilt strip reads D of them: min(N - 1, (N - 1) / D x R / W).
  const double n1 = geo.members - 1;
  const double ideal = r > 0 && wr > 0 ? std::min(n1, n1 / geo.data_strips() * r / wr) : n1;
  const ParityCounters parity = parity_delta(e.parity_counters(), parity_before);
  json out;
  out["parity"] = parity_json(backend, parity);
  out["config"] = {{"level", level_name(geo.level)}, {"members", geo.members}, {"data_strips", geo.data_strips()},
                   {"distributed_spares", geo.declustered.spares}, {"spare_strips_per_row", geo.map().spares_per_row()},
                   {"strip", geo.strip_bytes}, {"drive_type", o.drive_type}, {"drive_limits", limits_json(o.limits)},
                   {"rw", rw_name(w.rw)}, {"bs", w.bs}, {"iodepth", w.iodepth}, {"threads", o.threads},
                   {"rate_iops", o.rate_iops}, {"rebuild_rate_limit", rs.rate_bytes_s},
                   {"rebuild_min_rate", rs.min_rate_bytes_s}, {"write_hole_guard", o.write_hole_guard}};
  out["one_drive_raw_write_mbps"] = one_drive_mbps;
  out["one_drive_rebuild_seconds"] = one_drive_s;
  out["rebuild_idle"] = {{"seconds", secs},
                         {"member_data_bytes", geo.member_data_bytes},
                         {"speedup_vs_one_drive", secs > 0 ? one_drive_s / secs : 0},
                         {"ideal_speedup", ideal},
                         {"of_ideal", secs > 0 ? one_drive_s / secs / ideal : 0}};
  out["copy_back_idle"] = {{"seconds", copy_s},
                           {"of_one_drive", copy_s > 0 ? one_drive_s / copy_s : 0}};
  // Under load: the whole rebuild at the window's pace.
  const double loaded_s = loaded_share > 0 ? loaded_fg.seconds / loaded_share : 0;
  out["rebuild_under_load"] = {{"share_done", loaded_share},
                               {"window_seconds", loaded_fg.seconds},
                               {"seconds_at_this_pace", loaded_s},
                               {"speedup_vs_one_drive", loaded_s > 0 ? one_drive_s / loaded_s : 0},
                               {"of_ideal", loaded_s > 0 ? one_drive_s / loaded_s / ideal : 0}};
  out["foreground_raw"] = to_json(raw_fg);
  out["foreground_during_rebuild"] = to_json(loaded_fg);
  out["foreground_ratio"] = raw_fg.iops > 0 ? loaded_fg.iops / raw_fg.iops : 0;
  if (o.as_json) {
    printf("%s\n", out.dump(2).c_str());
  } else {
    printf("gpuraid-bench --state rebuilding: %s, %s x %s, into the distributed spare room%s\n", geo.describe().c_str(),
           o.drive_type.c_str(), format_size(geo.member_data_bytes).c_str(),
           o.write_hole_guard ? ", write-hole guard on" : "");
    printf("one replacement drive: %.0f MB/s raw write, %.2f s for a member's data\n", one_drive_mbps, one_drive_s);
    printf("rebuild into the room, foreground idle: %.2f s, %.2fx one drive (ideal %.2fx: %.0f%%)\n", secs,
           one_drive_s / secs, ideal, 100 * one_drive_s / secs / ideal);
    printf("rebuild into the room, foreground %s %s: %.0f%% in %.1f s, %.2fx one drive at that pace\n", rw_name(w.rw),
           format_size(w.bs).c_str(), 100 * loaded_share, loaded_fg.seconds, loaded_s > 0 ? one_drive_s / loaded_s : 0);
    printf("copy-back of the room's last member onto the replacement drive, idle: %.2f s, %.2fx its raw write time\n",
           copy_s, copy_s > 0 ? one_drive_s / copy_s : 0);
  }
  return end_rebuild_run(*g, raw_fg, loaded_fg, ok1 && ok2 && ok3, !o.as_json);
}

}  // namespace gpuraid::bench
