// gpuraid info | stats [--watch] | events [--follow]
#include <time.h>

#include <chrono>
#include <memory>
#include <thread>

#include "cli/cli.h"
#include "cli/describe.h"
#include "engine/units.h"
#include "cli/output.h"

namespace gpuraid::cli {

namespace {
std::string ns_str(double ns) {
  char b[32];
  if (ns <= 0) return "-";
  if (ns < 1e3) snprintf(b, sizeof b, "%.0fns", ns);
  else if (ns < 1e6) snprintf(b, sizeof b, "%.1fus", ns / 1e3);
  else snprintf(b, sizeof b, "%.2fms", ns / 1e6);
  return b;
}
std::string num(double v) {
  char b[32];
  snprintf(b, sizeof b, "%.0f", v);
  return b;
}

void print_stats(const v1::Stats& s) {
  const auto& e = s.engine();
  printf("engine: parity %s, reactor CPU %.2fs (%.0f%% of a core now), %s CPU per I/O; member I/O %lu reads, %lu writes, "
         "%lu errors\n\n",
         e.parity_backend().c_str(), e.reactor_cpu_s(), e.reactor_utilisation() * 100, ns_str(e.cpu_ns_per_io()).c_str(),
         (unsigned long)e.member_reads(), (unsigned long)e.member_writes(), (unsigned long)e.member_errors());
  if (const std::string pp = parity_paths_str(e.parity()); !pp.empty()) printf("parity: %s\n\n", pp.c_str());
  Table t({"OBJECT", "R-IOPS", "W-IOPS", "R-BW", "W-BW", "P50", "P99", "P99.9", "READS", "WRITES", "ERRORS"});
  auto row = [&](const std::string& name, const v1::IoStats& io) {
    t.add({name, num(io.read_iops()), num(io.write_iops()), rate_str(io.read_bytes_s()), rate_str(io.write_bytes_s()),
           ns_str(io.latency_p50_ns()), ns_str(io.latency_p99_ns()), ns_str(io.latency_p999_ns()),
           std::to_string(io.reads()), std::to_string(io.writes()), std::to_string(io.errors())});
  };
  for (const auto& v : s.volumes()) row("vd " + v.id(), v.io());
  for (const auto& g : s.groups()) row("dg " + g.name(), g.io());
  t.print();
  if (s.groups_size()) {
    printf("\n");
    Table d({"GROUP", "FULL-STRIPE", "RMW", "RCW", "DEGRADED-W", "DEGRADED-R", "MERGED", "FAILED", "CORRECTED", "UNCORRECTABLE", "GUARD-LOGGED",
             "GUARD-BATCHES", "GUARD-FLUSHES", "GUARD-TAILS"});
    for (const auto& g : s.groups())
      d.add({g.name(), std::to_string(g.full_stripe_writes()), std::to_string(g.rmw_writes()),
             std::to_string(g.rcw_writes()), std::to_string(g.degraded_writes()), std::to_string(g.degraded_reads()),
             std::to_string(g.merged_writes()), std::to_string(g.failed_members()), std::to_string(g.corrected_reads()),
             std::to_string(g.uncorrectable_reads()), std::to_string(g.guard_logged_writes()),
             std::to_string(g.guard_batches()),
             std::to_string(g.guard_flush_rounds()), std::to_string(g.guard_tail_writes())});
    d.print();
  }
  if (s.drives_size()) {
    printf("\n");
    Table d({"DRIVE", "STATE", "GROUP", "READS", "WRITES", "READ", "WRITTEN", "ERRORS"});
    for (const auto& x : s.drives())
      d.add({x.id(), v1::api_word(x.state()), x.group().empty() ? "-" : x.group(),
             std::to_string(x.reads()), std::to_string(x.writes()), format_size(x.bytes_read()),
             format_size(x.bytes_written()), std::to_string(x.errors())});
    d.print();
  }
}

void print_event(const v1::Event& e) {
  time_t t = time_t(e.time_unix_ms() / 1000);
  char ts[32];
  strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", localtime(&t));
  std::string subject;
  for (const auto* s : {&e.group(), &e.volume(), &e.drive()})
    if (!s->empty()) subject += (subject.empty() ? "" : "/") + *s;
  if (e.member() >= 0) subject += " member " + std::to_string(e.member());
  printf("%6lu %s %-18s %s%s%s\n", (unsigned long)e.seq(), ts,
         v1::api_word(e.kind()).c_str(), subject.c_str(), subject.empty() ? "" : ": ",
         e.message().c_str());
  fflush(stdout);
}
}  // namespace

void add_info_commands(Cli& c) {
  {
    auto* s = c.app.add_subcommand("info", "the daemon: version, parity backend, GPUs, kernel features");
    s->callback([&c] {
      c.action = [&c](Client& cl) {
        v1::DaemonInfo r;
        if (int rc = cl.call(&v1::Gpuraid::Stub::GetInfo, v1::GetInfoRequest(), &r)) return rc;
        if (c.g.json) return print_json(r), int(kOk);
        std::string gpus;
        for (const auto& g : r.gpus())
          gpus += (gpus.empty() ? "" : ", ") + g.model() + (g.memory_bytes() ? " (" + size_str(g.memory_bytes()) + ")" : "");
        std::string listen;
        for (const auto& l : r.listeners()) listen += (listen.empty() ? "" : ", ") + l;
        const auto& k = r.kernel();
        print_fields({{"version", r.version()},
                      {"pid", std::to_string(r.pid())},
                      {"uptime", std::to_string(r.uptime_s()) + "s"},
                      {"state dir", r.state_dir()},
                      {"listening", listen},
                      {"parity backend", r.parity_backend()},
                      {"parity paths", parity_paths_str(r.parity()).empty() ? "-" : parity_paths_str(r.parity())},
                      {"reactors", std::to_string(r.reactors())},
                      {"gpus", gpus.empty() ? "none" : gpus},
                      {"kernel", k.kernel_release()},
                      {"io_uring", k.io_uring() ? "yes" : "no"},
                      {"ublk", k.ublk() ? "yes" : "no (modprobe ublk_drv)"},
                      {"nbd client", k.nbd_client() ? "yes" : "no"},
                      {"exports", r.exports_available() ? "ublk, nbd" : "not built"},
                      {"resilient groups", r.groups_resilient() ? "yes" : "no (plain volumes)"}});
        return int(kOk);
      };
    });
  }
  {
    struct A {
      std::string vd, dg, pd;
      bool watch = false;
      double interval = 1;
      int count = 0;
    };
    auto a = std::make_shared<A>();
    auto* s = c.app.add_subcommand("stats", "I/O statistics per VD, DG and PD");
    s->add_option("--vd", a->vd, "only this virtual drive");
    s->add_option("--dg", a->dg, "only this group");
    s->add_option("--pd", a->pd, "only this drive");
    s->add_flag("--watch", a->watch, "refresh every interval until interrupted");
    s->add_option("--interval", a->interval, "seconds between refreshes")->check(CLI::Range(0.1, 3600.0));
    s->add_option("--count", a->count, "with --watch: stop after this many refreshes")->check(CLI::NonNegativeNumber);
    s->callback([&c, a] {
      c.action = [&c, a](Client& cl) {
        for (int i = 0;; i++) {
          v1::GetStatsRequest q;
          q.set_volume(a->vd);
          q.set_group(a->dg);
          q.set_drive(a->pd);
          v1::Stats r;
          if (int rc = cl.call(&v1::Gpuraid::Stub::GetStats, q, &r)) return rc;
          if (c.g.json) print_json(r);
          else {
            if (a->watch && i) printf("\n");
            print_stats(r);
          }
          fflush(stdout);
          if (!a->watch || (a->count && i + 1 >= a->count)) return int(kOk);
          std::this_thread::sleep_for(std::chrono::milliseconds(int64_t(a->interval * 1000)));
        }
      };
    });
  }
  {
    struct A {
      bool follow = false;
      uint64_t since = 0;
    };
    auto a = std::make_shared<A>();
    auto* s = c.app.add_subcommand(
        "events", "recent events; with --follow, new ones as they happen (--json: JSON Lines, one event object a line)");
    s->add_flag("--follow", a->follow, "keep printing new events until interrupted");
    s->add_option("--since", a->since, "only events after this sequence number");
    s->callback([&c, a] {
      c.action = [&c, a](Client& cl) {
        v1::WatchEventsRequest q;
        q.set_after_seq(a->since);
        q.set_follow(a->follow);
        auto ctx = cl.context(a->follow);
        auto reader = cl.stub().WatchEvents(ctx.get(), q);
        v1::Event e;
        while (reader->Read(&e)) {
          if (c.g.json) print_json(e, true);
          else print_event(e);
          fflush(stdout);
        }
        grpc::Status st = reader->Finish();
        return st.ok() ? int(kOk) : cl.fail(st);
      };
    });
  }
}

}  // namespace gpuraid::cli
