#include "bench/rebuild_mode.h"

#include <cstdio>
#include <cstring>

#include "bench/io_bound.h"
#include "engine/group/group.h"
#include "engine/units.h"

namespace gpuraid::bench {

namespace {

using json = nlohmann::json;

// The replacement drive's own sequential write rate: 1 MiB writes, 8 in
// flight, over the whole drive, through the same reactor and io_uring.
double raw_write_mbps(Engine& e, Drive& d) {
  std::string err;
  const int slot = e.attach(&d, &err);
  if (slot < 0) return 0;
  Reactor& r = e.reactor(0);
  r.claim();
  constexpr uint32_t kChunk = 1u << 20, kDepth = 8;
  uint8_t* buf = r.pool().reserve(kChunk);
  memset(buf, 0x5a, kChunk);
  struct Ctx {
    uint32_t in_flight = 0;
    bool failed = false;
  } ctx;
  uint64_t next = 0;
  const uint64_t t0 = now_ns();
  while (next < d.size_bytes() || ctx.in_flight) {
    while (ctx.in_flight < kDepth && next + kChunk <= d.size_bytes()) {
      MemberIo* io = r.alloc_io();
      io->kind = MemberIo::Write;
      io->drive = &d;
      io->slot = uint32_t(slot);
      io->offset = next;
      io->len = kChunk;
      io->buf = buf;
      io->ctx = &ctx;
      io->done = [](MemberIo* x) {
        auto* c = static_cast<Ctx*>(x->ctx);
        c->in_flight--;
        c->failed |= x->res < 0;
        // The reactor that owns the io frees it: reactor 0 here.
        Reactor::current()->free_io(x);
      };
      r.submit(io);
      ctx.in_flight++;
      next += kChunk;
    }
    if (next + kChunk > d.size_bytes()) next = d.size_bytes();
    r.poll(true, 1);  // blocks until a completion, as the load generator does
  }
  const double secs = double(now_ns() - t0) / 1e9;
  e.detach(slot);
  return ctx.failed ? 0 : double(d.size_bytes() / kChunk * kChunk) / secs / 1e6;
}

bool wait_rebuild(Engine& e, Group& g, double* secs) {
  const uint64_t t0 = now_ns();
  while (g.rebuild_progress().running) e.reactor(0).poll(true, 1);
  *secs = double(now_ns() - t0) / 1e9;
  return g.state() == GroupState::Optimal;
}

std::unique_ptr<Drive> twin_of(const Drive& d, std::string* err) {
  DriveSpec s{d.type(), "", d.size_bytes(), true};
  return Drive::open(s, err);
}

}  // namespace

int run_rebuild_mode(Engine& e, std::vector<std::unique_ptr<Drive>> drives, const RebuildSetup& rs, const Workload& w,
                     const Options& o, const std::string& backend) {
  std::string err;
  std::unique_ptr<Drive> spare = std::move(drives.back());
  drives.pop_back();
  const double raw_mbps = raw_write_mbps(e, *spare);
  GroupConfig cfg;
  cfg.level = rs.level;
  cfg.parity = rs.parity;
  cfg.strip_bytes = rs.strip;
  cfg.assume_zeroed = true;
  cfg.force = true;  // the bench's own fresh drives
  cfg.write_hole_guard = o.write_hole_guard;  // as in the other states (bench_main.cpp)
  auto g = Group::create(e, std::move(drives), cfg, &err);
  if (!g) {
    fprintf(stderr, "gpuraid-bench: %s\n", err.c_str());
    return 2;
  }
  g->start_background(e.reactor(0));
  if (!o.no_fill) fill(e, g->volume());
  RawTarget rawt(g->volume(), w.bs);
  RaidTarget raid(g->volume());
  // Foreground baseline on the healthy drives, then the same load during a rebuild.
  RunResult raw_fg = run_once(e, rawt, w, o, o.seed);
  if (!g->fail_member(0, &err) || (g->set_rebuild_rate(rs.rate_bytes_s), !g->replace_member(0, std::move(spare), true, &err))) {
    fprintf(stderr, "gpuraid-bench: %s\n", err.c_str());
    return 2;
  }
  // Rebuild progress over exactly the measured window. A rebuild that ends
  // inside the window is followed at once by another (the next member fails
  // and is replaced by a fresh twin), so the group rebuilds all through the
  // window and the foreground figure is one of a rebuilding group.
  const Geometry& geo = g->volume().geometry();
  const uint64_t member_bytes = geo.stripes() * uint64_t(geo.strip_bytes);
  uint64_t base = 0, rebuilt = 0;  // rebuilt: finished rebuilds' bytes inside the window
  uint32_t next_member = 1, rebuilds = 1;
  bool running_at_start = false, restart_failed = false;
  auto start_next = [&] {  // the next member fails and a fresh twin replaces it
    auto twin = twin_of(*g->volume().member(next_member), &err);
    if (!twin || !g->fail_member(next_member, &err) || !g->replace_member(next_member, std::move(twin), true, &err))
      return false;
    next_member = (next_member + 1) % geo.members;
    return true;
  };
  auto keep_rebuilding = [&] {
    if (g->rebuild_progress().running) return false;
    rebuilt += member_bytes - base;
    base = 0;
    if (!start_next()) {
      restart_failed = true;
      return true;  // ends the window: said below
    }
    rebuilds++;
    return false;
  };
  uint64_t after = 0;
  RunResult loaded_fg = run_once(
      e, raid, w, o, o.seed + 1,
      [&] {  // a rebuild that ended in the warm-up is followed by the next one here too
        if (!g->rebuild_progress().running && !start_next()) restart_failed = true;
        base = g->rebuild_progress().done_bytes;
        running_at_start = g->rebuild_progress().running;
      },
      [&] { after = rebuilt + g->rebuild_progress().done_bytes - base; }, keep_rebuilding);
  if (restart_failed) {
    fprintf(stderr, "gpuraid-bench: could not start the next rebuild inside the window: %s\n", err.c_str());
    return 2;
  }
  if (!running_at_start) {
    fprintf(stderr, "gpuraid-bench: no rebuild was running when the measured window began\n");
    return 2;
  }
  const double loaded_mbps = double(after) / loaded_fg.seconds / 1e6;
  g->set_rebuild_rate(0);  // the cap is for the loaded window; the idle rebuild runs free
  double secs = 0;
  const bool ok1 = wait_rebuild(e, *g, &secs);
  // Another rebuild with the foreground idle, timed from start to end.
  auto twin = twin_of(*g->volume().member(next_member), &err);
  if (!twin || !g->fail_member(next_member, &err) || !g->replace_member(next_member, std::move(twin), true, &err)) {
    fprintf(stderr, "gpuraid-bench: %s\n", err.c_str());
    return 2;
  }
  const bool ok2 = wait_rebuild(e, *g, &secs);
  const double idle_mbps = double(geo.member_data_bytes) / secs / 1e6;
  json out;
  out["config"] = {{"level", level_name(geo.level)}, {"members", geo.members}, {"data_strips", geo.data_strips()},
                   {"strip", geo.strip_bytes}, {"drive_type", o.drive_type}, {"rw", rw_name(w.rw)}, {"bs", w.bs},
                   {"iodepth", w.iodepth}, {"threads", o.threads}, {"rate_iops", o.rate_iops},
                   {"rebuild_rate_limit", rs.rate_bytes_s}, {"rebuild_run_bytes", e.rebuild_run_bytes()},
                   {"parity_backend", backend}, {"write_hole_guard", o.write_hole_guard}};
  out["replacement_raw_write_mbps"] = raw_mbps;
  out["rebuild_idle"] = {{"mbps", idle_mbps}, {"seconds", secs}, {"ratio_to_raw_write", raw_mbps > 0 ? idle_mbps / raw_mbps : 0}};
  out["rebuild_under_load"] = {{"mbps", loaded_mbps},
                               {"ratio_to_raw_write", raw_mbps > 0 ? loaded_mbps / raw_mbps : 0},
                               {"seconds", loaded_fg.seconds},
                               {"rebuilds_in_window", rebuilds}};
  // No bound of its own: the one-failed bound is the reference for the foreground.
  out["io_count_bound_one_failed"] = io_count_bound(geo, w.rw, w.bs, w.rwmixread, 1);
  out["foreground_raw"] = to_json(raw_fg);
  out["foreground_during_rebuild"] = to_json(loaded_fg);
  out["foreground_ratio"] = raw_fg.iops > 0 ? loaded_fg.iops / raw_fg.iops : 0;
  if (o.as_json) {
    printf("%s\n", out.dump(2).c_str());
  } else {
    printf("gpuraid-bench --state rebuilding: %s, %s x %s, parity %s%s\n", geo.describe().c_str(),
           o.drive_type.c_str(), format_size(geo.member_data_bytes).c_str(), backend.c_str(),
           o.write_hole_guard ? ", write-hole guard on" : "");
    printf("replacement drive raw sequential write: %.0f MB/s\n", raw_mbps);
    printf("rebuild, foreground idle:  %.0f MB/s (%.2f of raw write), %.2f s\n", idle_mbps, idle_mbps / raw_mbps, secs);
    printf("rebuild, foreground %s %s: %.0f MB/s (%.2f of raw write) over %.2f s (%u rebuild%s)\n", rw_name(w.rw),
           format_size(w.bs).c_str(), loaded_mbps, loaded_mbps / raw_mbps, loaded_fg.seconds, rebuilds,
           rebuilds > 1 ? "s, one after another" : "");
    print_header();
    print_row(raw_fg);
    RunResult l = loaded_fg;
    l.target = "rebld";
    print_row(l);
    printf("foreground during rebuild / raw: IOPS %.3f\n", raw_fg.iops > 0 ? loaded_fg.iops / raw_fg.iops : 0);
  }
  const bool errors = raw_fg.errors || loaded_fg.errors || !ok1 || !ok2;
  std::string e2;
  g->stop(&e2);
  if (errors) fprintf(stderr, "gpuraid-bench: errors during the rebuild run\n");
  return errors ? 1 : 0;
}

}  // namespace gpuraid::bench
