#include "bench/rebuild_mode.h"

#include "bench/parity_report.h"

#include <algorithm>
#include <cstdio>

#include "bench/io_bound.h"
#include "engine/group/group.h"
#include "engine/ops/rebuild_run.h"
#include "engine/units.h"

namespace gpuraid::bench {

namespace {

using json = nlohmann::json;

// The rebuild's I/O bound: the member I/O a rebuild of one member issues
// (per run: `k` survivor reads of run_bytes at one offset, then one write
// of as much to the replacement), over the whole replacement, with no
// parity, locks or checkpoints, `depth` runs in flight, through the same
// reactor and io_uring. On drives that share one resource (mem drives: the
// same cores' copies) this is well below the replacement's raw write rate,
// and the rebuild is judged against it. With no survivors it is the
// replacement's own sequential write rate (raw_write_mbps).
double raw_rebuild_io_mbps(Engine& e, const std::vector<Drive*>& survivors, Drive& spare, uint32_t run_bytes,
                           uint32_t depth) {
  struct Ctx;
  struct Run {
    Ctx* ctx = nullptr;
    uint64_t off = 0;
    uint32_t reads_left = 0;
    bool busy = false;
    uint8_t* buf = nullptr;  // survivors * run_bytes: one piece per survivor
  };
  struct Ctx {
    Reactor* r;
    uint32_t run_bytes;
    std::vector<Drive*> drives;  // the survivors, then the replacement
    std::vector<int> slots;
    std::vector<Run> runs;
    uint32_t in_flight = 0;  // runs
    bool failed = false;
    void issue(Run& run, MemberIo::Kind kind, uint32_t d, uint8_t* buf, void (*done)(MemberIo*)) {
      MemberIo* io = r->alloc_io();
      io->kind = kind;
      io->drive = drives[d];
      io->slot = uint32_t(slots[d]);
      io->offset = run.off;
      io->len = run_bytes;
      io->buf = buf;
      io->ctx = &run;
      io->done = done;
      r->submit(io);
    }
    static void write_done(MemberIo* x) {
      auto* run = static_cast<Run*>(x->ctx);
      run->ctx->failed |= x->res < 0;
      run->busy = false;
      run->ctx->in_flight--;
      Reactor::current()->free_io(x);
    }
    static void read_done(MemberIo* x) {  // the run's write goes once its reads are in
      auto* run = static_cast<Run*>(x->ctx);
      Ctx* c = run->ctx;
      c->failed |= x->res < 0;
      Reactor::current()->free_io(x);
      if (--run->reads_left == 0) c->issue(*run, MemberIo::Write, uint32_t(c->drives.size() - 1), run->buf, write_done);
    }
  };
  Reactor& r = e.reactor(0);
  r.claim();
  const uint32_t k = uint32_t(survivors.size());
  Ctx ctx{&r, run_bytes, survivors, {}, {}};
  ctx.drives.push_back(&spare);
  std::string err;
  uint64_t end = UINT64_MAX;
  for (Drive* d : ctx.drives) {
    ctx.slots.push_back(e.attach(d, &err));
    end = std::min(end, d->size_bytes() / run_bytes * run_bytes);
  }
  const bool attached = std::count(ctx.slots.begin(), ctx.slots.end(), -1) == 0;
  const size_t mark = r.pool().reserved_mark();
  ctx.runs.resize(attached ? depth : 0);
  for (Run& run : ctx.runs) {
    run.ctx = &ctx;
    run.buf = r.pool().reserve(size_t(std::max(k, 1u)) * run_bytes);  // the write's bytes at least
  }
  uint64_t next = 0;
  const uint64_t t0 = now_ns();
  while (attached && (next < end || ctx.in_flight)) {
    for (Run& run : ctx.runs) {
      if (run.busy || next >= end) continue;
      run.busy = true;
      run.off = next;
      run.reads_left = k;
      next += run_bytes;
      ctx.in_flight++;
      for (uint32_t i = 0; i < k; i++)
        ctx.issue(run, MemberIo::Read, i, run.buf + size_t(i) * run_bytes, Ctx::read_done);
      if (k == 0) ctx.issue(run, MemberIo::Write, k, run.buf, Ctx::write_done);  // drives[k]: the replacement
    }
    r.poll(true, 1);
  }
  const double secs = double(now_ns() - t0) / 1e9;
  r.pool().release_reserved(mark);
  for (int s : ctx.slots)
    if (s >= 0) e.detach(s);
  return !attached || ctx.failed ? 0 : double(end) / secs / 1e6;
}


}  // namespace

bool wait_rebuild(Engine& e, Group& g, double* secs) {
  const uint64_t t0 = now_ns();
  while (g.rebuild_progress().running) e.reactor(0).poll(true, 1);
  *secs = double(now_ns() - t0) / 1e9;
  return g.state() == GroupState::Optimal;
}

namespace {

std::unique_ptr<Drive> twin_of(const Drive& d, std::string* err) {
  DriveSpec s{d.type(), "", d.size_bytes(), true};
  auto t = Drive::open(s, err);
  if (t && d.throttle()) t->set_limits(d.throttle()->limits());  // as fast as the drive it stands in for
  return t;
}

}  // namespace

double raw_write_mbps(Engine& e, Drive& d) { return raw_rebuild_io_mbps(e, {}, d, 1u << 20, 8); }

int run_rebuild_mode(Engine& e, std::vector<std::unique_ptr<Drive>> drives, const RebuildSetup& rs, const Workload& w,
                     const Options& o, const std::string& backend) {
  std::string err;
  const ParityCounters parity_before = e.parity_counters();
  std::unique_ptr<Drive> spare = std::move(drives.back());
  drives.pop_back();
  // The better of two passes: the first writes a fresh mem drive's pages
  // (allocating them), the second writes them again.
  const double raw_mbps = std::max(raw_write_mbps(e, *spare), raw_write_mbps(e, *spare));
  auto g = bench_group(e, std::move(drives), rs, o);
  if (!g) return 2;
  // The rebuild's I/O bound, on the filled members (a hole reads faster):
  // k survivors (one copy for a mirror) and the replacement.
  const Geometry& geo = g->volume().geometry();
  std::vector<Drive*> survivors;
  for (uint32_t i = 1; i <= (geo.is_mirror() ? 1 : geo.data_strips()) && i < geo.members; i++)
    survivors.push_back(g->volume().member(i));
  // Two passes, the second counted: the first read of freshly filled mem
  // drives ran at half speed (1.1 vs 2.2 GB/s, 1G drives), as the raw
  // baseline's first run after the fill did.
  const uint32_t window_runs = std::max<uint32_t>(2, kRebuildInFlightBytes / e.rebuild_run_bytes());
  raw_rebuild_io_mbps(e, survivors, *spare, e.rebuild_run_bytes(), window_runs);
  const double bound_mbps = raw_rebuild_io_mbps(e, survivors, *spare, e.rebuild_run_bytes(), window_runs);
  RawTarget rawt(g->volume(), w.bs);
  RaidTarget raid(g->volume());
  // Foreground baseline on the healthy drives, then the same load during a rebuild.
  RunResult raw_fg = run_once(e, rawt, w, o, o.seed);
  g->set_rebuild_rate(rs.rate_bytes_s);
  g->set_rebuild_min_rate(rs.min_rate_bytes_s);
  if (!g->fail_member(0, &err) || !g->replace_member(0, std::move(spare), true, &err)) {
    fprintf(stderr, "gpuraid-bench: %s\n", err.c_str());
    return 2;
  }
  // Rebuild progress over exactly the measured window. A rebuild that ends
  // inside the window is followed at once by another (the next member fails
  // and is replaced by a fresh twin), so the group rebuilds all through the
  // window and the foreground figure is one of a rebuilding group.
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
  g->set_rebuild_rate(0);  // the caps are for the loaded window; the idle rebuild runs free
  g->set_rebuild_min_rate(0);
  double secs = 0;
  const bool ok1 = wait_rebuild(e, *g, &secs);
  // Another rebuild with the foreground idle, timed from start to end. Its
  // replacement is written through once first, as the first one was (its
  // raw write rate): a fresh mem drive's first writes allocate its pages,
  // which no real drive does and which varied 2x run to run here.
  auto twin = twin_of(*g->volume().member(next_member), &err);
  if (twin) raw_write_mbps(e, *twin);
  if (!twin || !g->fail_member(next_member, &err) || !g->replace_member(next_member, std::move(twin), true, &err)) {
    fprintf(stderr, "gpuraid-bench: %s\n", err.c_str());
    return 2;
  }
  const bool ok2 = wait_rebuild(e, *g, &secs);
  const double idle_mbps = double(geo.member_data_bytes) / secs / 1e6;
  const ParityCounters parity = parity_delta(e.parity_counters(), parity_before);
  json out;
  out["parity"] = parity_json(backend, parity);
  out["config"] = {{"level", level_name(geo.level)}, {"members", geo.members}, {"data_strips", geo.data_strips()},
                   {"strip", geo.strip_bytes}, {"drive_type", o.drive_type}, {"drive_limits", limits_json(o.limits)}, {"rw", rw_name(w.rw)}, {"bs", w.bs},
                   {"iodepth", w.iodepth}, {"threads", o.threads}, {"rate_iops", o.rate_iops},
                   {"rebuild_rate_limit", rs.rate_bytes_s}, {"rebuild_min_rate", rs.min_rate_bytes_s},
                   {"rebuild_run_bytes", e.rebuild_run_bytes()}, {"parity_backend", parity_ran(backend, parity)},
                   {"write_hole_guard", o.write_hole_guard}};
  out["replacement_raw_write_mbps"] = raw_mbps;
  out["rebuild_io_bound_mbps"] = bound_mbps;
  out["rebuild_idle"] = {{"mbps", idle_mbps},
                         {"seconds", secs},
                         {"ratio_to_raw_write", raw_mbps > 0 ? idle_mbps / raw_mbps : 0},
                         {"ratio_to_bound", bound_mbps > 0 ? idle_mbps / bound_mbps : 0}};
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
           o.drive_type.c_str(), format_size(geo.member_data_bytes).c_str(), parity_ran(backend, parity).c_str(),
           o.write_hole_guard ? ", write-hole guard on" : "");
    printf("replacement drive raw sequential write: %.0f MB/s\n", raw_mbps);
    printf("rebuild I/O bound (the rebuild's member reads and writes, raw, no parity): %.0f MB/s\n", bound_mbps);
    printf("rebuild, foreground idle:  %.0f MB/s (%.2f of raw write, %.0f%% of the I/O bound), %.2f s\n", idle_mbps,
           idle_mbps / raw_mbps, bound_mbps > 0 ? 100 * idle_mbps / bound_mbps : 0, secs);
    printf("rebuild, foreground %s %s: %.0f MB/s (%.2f of raw write) over %.2f s (%u rebuild%s)\n", rw_name(w.rw),
           format_size(w.bs).c_str(), loaded_mbps, loaded_mbps / raw_mbps, loaded_fg.seconds, rebuilds,
           rebuilds > 1 ? "s, one after another" : "");
  }
  return end_rebuild_run(*g, raw_fg, loaded_fg, ok1 && ok2, !o.as_json);
}

std::unique_ptr<Group> bench_group(Engine& e, std::vector<std::unique_ptr<Drive>> drives, const RebuildSetup& rs,
                                   const Options& o) {
  GroupConfig cfg;
  cfg.level = rs.level;
  cfg.parity = rs.parity;
  cfg.declustered = rs.declustered;
  cfg.strip_bytes = rs.strip;
  cfg.assume_zeroed = true;
  cfg.force = true;  // the bench's own fresh drives
  cfg.write_hole_guard = o.write_hole_guard;  // as in the other states (bench_main.cpp)
  std::string err;
  auto g = Group::create(e, std::move(drives), cfg, &err);
  if (!g) {
    fprintf(stderr, "gpuraid-bench: %s\n", err.c_str());
    return nullptr;
  }
  g->start_background(e.reactor(0));
  if (!o.no_fill) fill(e, g->volume());
  return g;
}

int end_rebuild_run(Group& g, const RunResult& raw_fg, const RunResult& loaded_fg, bool rebuilds_ok, bool print) {
  if (print) {
    print_header();
    print_row(raw_fg);
    RunResult l = loaded_fg;
    l.target = "rebld";
    print_row(l);
    printf("foreground during rebuild / raw: IOPS %.3f\n", raw_fg.iops > 0 ? loaded_fg.iops / raw_fg.iops : 0);
  }
  const bool errors = raw_fg.errors || loaded_fg.errors || !rebuilds_ok;
  std::string e2;
  g.stop(&e2);
  if (errors) fprintf(stderr, "gpuraid-bench: errors during the rebuild run\n");
  return errors ? 1 : 0;
}

}  // namespace gpuraid::bench
