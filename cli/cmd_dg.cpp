// gpuraid dg create|list|show|delete|replace|rebuild|scrub|rates (start|readd: cmd_back.cpp)
#include <unistd.h>

#include <chrono>
#include <memory>
#include <thread>

#include "cli/lookalike.h"
#include "cli/cli.h"
#include "cli/errors.h"
#include "cli/describe.h"
#include "cli/output.h"
#include "cli/progress.h"

namespace gpuraid::cli {

namespace {
std::string gstate(v1::GroupState s) { return group_state_word(s); }

std::string rate_or(uint64_t r, const char* none) { return r ? rate_str(double(r)) : none; }

// "rebuild unlimited (20 MB/s under I/O), scrub 50 MB/s"
std::string rates_str(const v1::Group& g) {
  std::string s = "rebuild " + rate_or(g.rebuild_rate_bytes_s(), "unlimited");
  if (g.rebuild_min_rate_bytes_s()) s += " (" + rate_or(g.rebuild_min_rate_bytes_s(), "") + " under I/O)";
  return s + ", scrub " + rate_or(g.scrub_rate_bytes_s(), "unlimited");
}

std::string failures(uint32_t n) {
  return n == 0 ? "no further member failure" : std::to_string(n) + " more member failure" + (n > 1 ? "s" : "");
}

// Further failures survived, where the redundancy word counts them ("-" otherwise).
std::string survives(const v1::Group& g) {
  const bool counted = g.redundancy() == v1::REDUNDANCY_FULL || g.redundancy() == v1::REDUNDANCY_REDUCED;
  return counted ? std::to_string(g.failures_tolerated()) : "-";
}

// The redundancy word with what it means now (docs/STATES.md).
std::string redundancy_str(const v1::Group& g) {
  const std::string w = v1::api_word(g.redundancy()) + ": ";
  switch (g.redundancy()) {
    case v1::REDUNDANCY_FULL: return w + "survives " + failures(g.failures_tolerated());
    case v1::REDUNDANCY_REDUCED:
      return w + "survives " + failures(g.failures_tolerated()) + " (members failed, missing or rebuilding)";
    case v1::REDUNDANCY_NONE: return w + "raid0 has no redundancy: any member failure fails the group";
    case v1::REDUNDANCY_PENDING:
      return w + (g.resync().running() ? "resync" : "init") +
             " is making parity/mirrors consistent; until it completes a member failure may lose data";
    case v1::REDUNDANCY_LOST: return w + "the group failed: more members lost than the level survives";
    case v1::REDUNDANCY_UNKNOWN: return w + "the group is offline (see note)";
    default: return w + "-";
  }
}

bool sizes_differ(const v1::Group& g) {
  for (const auto& m : g.members())
    if (m.size_bytes() != g.members(0).size_bytes()) return true;
  return false;
}

// The write-hole guard's state; only parity levels can have one.
static std::string guard_str(const v1::Group& g) {
  if (g.parity() == 0) return "- (no parity)";
  if (g.state() == v1::GROUP_STATE_OFFLINE) return "- (group offline)";
  if (g.write_hole_guard()) return "on (partial parity log: an unclean stop while degraded starts by itself)";
  return "off (an unclean stop while degraded needs force)";
}

void print_group(const v1::Group& g) {
  std::string vols;
  for (auto& v : g.volumes()) vols += (vols.empty() ? "" : ", ") + v;
  std::string spares;
  for (auto& s : g.spares()) spares += (spares.empty() ? "" : ", ") + s;
  print_fields({{"name", g.name()},
                {"uuid", g.uuid()},
                {"level", level_str(g)},
                {"geometry", g.geometry().empty() ? "-" : g.geometry()},
                {"strip", size_str(g.strip_bytes())},
                {"capacity", size_str(g.capacity_bytes())},
                {"free", size_str(g.free_bytes())},
                {"state", gstate(g.state())},
                {"redundancy", redundancy_str(g)},
                {"member data", g.member_data_bytes() ? size_str(g.member_data_bytes()) + " on each member (as the smallest gives)" : "-"},
                {"unused", g.unused_bytes() ? size_str(g.unused_bytes()) + (sizes_differ(g) ? " (members differ in size: see UNUSED)" : "") : "-"},
                {"write-hole guard", guard_str(g)},
                {"rebuilds", g.rebuild_held() ? "held (gpuraid dg rebuild " + g.name() + " start)" : "run"},
                {"spares", spares.empty() ? "-" : spares},
                {"distributed spare room", room_str(g).empty() ? "-" : room_str(g)},
                {"volumes", vols.empty() ? "-" : vols},
                {"rates", rates_str(g)},
                {"note", g.note().empty() ? "-" : g.note()}});
  printf("\n");
  Table t({"IDX", "DRIVE", "PATH", "SIZE", "UNUSED", "STATE", "REBUILT"});
  for (const auto& m : g.members())
    t.add({std::to_string(m.index()), m.drive().empty() ? "-" : m.drive(), m.path().empty() ? "-" : m.path(),
           m.size_bytes() ? size_str(m.size_bytes()) : "-", m.unused_bytes() ? size_str(m.unused_bytes()) : "-",
           v1::api_word(m.state()),
           m.state() == v1::DRIVE_STATE_REBUILDING ? size_str(m.rebuild_checkpoint_bytes()) : "-"});
  t.print();
  std::string tasks = group_tasks(g);
  if (!tasks.empty()) printf("\n%s", tasks.c_str());
  const auto& s = g.last_scrub();
  if (s.stripes_checked())
    printf("\nlast scrub: %s\n", scrub_summary(s).c_str());
}

// dg show --watch: redraw (terminal) or print progress lines (logs) until
// no background task runs.
int watch(Client& cl, const Globals& gl, const std::string& name, double interval) {
  bool tty = isatty(1);
  for (bool first = true;; first = false) {
    v1::GroupRef q;
    q.set_name(name);
    v1::Group g;
    if (int rc = cl.call(&v1::Gpuraid::Stub::GetGroup, q, &g)) return rc;
    bool running = any_task_running(g);
    if (gl.json) {
      print_json(g);
    } else if (tty) {
      printf("\033[H\033[2J");
      print_group(g);
    } else if (first || running) {
      std::string t = group_tasks(g);
      printf("%s", t.empty() ? (name + ": no background task running (" + gstate(g.state()) + ")\n").c_str() : t.c_str());
    }
    fflush(stdout);
    if (!running) {
      if (!gl.json && !first) printf("%s: done, state %s\n", name.c_str(), gstate(g.state()).c_str());
      return kOk;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(int64_t(interval * 1000)));
  }
}

// dg rebuild|scrub DG ACTION
void add_task(Cli& c, CLI::App* dg, const char* name, v1::Task task, std::vector<std::string> actions,
              const char* footer) {
  struct A {
    std::string group, action;
    bool repair = false;
  };
  auto a = std::make_shared<A>();
  auto* s = dg->add_subcommand(name, std::string("control the ") + name + " of a group");
  s->footer(footer);
  s->add_option("group", a->group, "group name")->required();
  s->add_option("action", a->action, "what to do")->required()->check(CLI::IsMember(actions));
  if (task == v1::TASK_SCRUB) s->add_flag("--repair", a->repair, "start: rewrite parity where it mismatches");
  s->callback([&c, a, task] {
    c.action = [&c, a, task](Client& cl) {
      v1::ControlTaskRequest q;
      q.set_group(a->group);
      q.set_task(task);
      v1::TaskAction act = v1::TASK_ACTION_UNSPECIFIED;
      v1::TaskAction_Parse("TASK_ACTION_" + upper(a->action), &act);
      q.set_action(act);
      q.set_repair(a->repair);
      v1::Group r;
      if (int rc = cl.call(&v1::Gpuraid::Stub::ControlTask, q, &r)) return rc;
      if (c.g.json) print_json(r);
      else printf("%s: %s %s\n", r.name().c_str(), v1::Task_Name(task) == "TASK_SCRUB" ? "scrub" : "rebuild", a->action.c_str());
      return int(kOk);
    };
  });
}
}  // namespace

void add_dg_commands(Cli& c) {
  auto* dg = c.app.add_subcommand("dg", "drive groups");
  dg->require_subcommand(1);
  {
    struct A {
      std::vector<std::string> drives, spares;
      std::string level, strip = "64K", name, rebuild_rate;
      uint32_t parity = 0, subgroups = 0, data = 0, dspares = 0;
      bool force = false, zeroed = false;
      std::string guard = "on";
    };
    auto a = std::make_shared<A>();
    auto* s = dg->add_subcommand("create", "create a drive group over free drives");
    s->add_option("drives", a->drives, "member drives (PD ids), in member order")->required();
    s->add_option("--level", a->level, "RAID level: 0, 1, 10, 5, 6, ec, 50, 60, draid5, draid6")->required()
        ->check(CLI::IsMember({"0", "1", "10", "5", "6", "ec", "50", "60", "draid5", "draid6"}));
    s->add_option("--parity", a->parity, "ec only: parity strips per stripe (1..4)");
    s->add_option("--subgroups", a->subgroups,
                  "50 and 60 only: RAID 5 / RAID 6 sub-groups striped over (members divide into them)");
    s->add_option("--data", a->data, "draid5 and draid6 only: data strips per stripe (D of D+P, at least 2)");
    s->add_option("--distributed-spares", a->dspares,
                  "draid5 and draid6 only: spare strips every row keeps, spread over all members (at least 1)");
    s->add_option("--strip", a->strip, "strip size (4K..1M, power of two)")->capture_default_str()->check(kSize);
    s->add_option("--name", a->name, "group name (default dgN)");
    s->add_option("--spare", a->spares, "dedicated spare drive (repeatable)");
    s->add_flag("--force", a->force, "overwrite drives that hold data");
    s->add_flag("--assume-zeroed", a->zeroed, "drives read zeroes: skip the background init");
    s->add_option("--rebuild-rate", a->rebuild_rate,
                  "rebuild, resync and init rate at most from the start, e.g. 200M (as dg rates --rebuild)")
        ->check(kSize);
    s->add_option("--write-hole-guard", a->guard,
                  "RAID 5/6/ec: log partial parity so that a crash while degraded damages nothing not being "
                  "written (off: faster writes; such a crash then needs dg start --force)")
        ->capture_default_str()->check(CLI::IsMember({"on", "off"}));
    s->callback([&c, a] {
      c.action = [&c, a](Client& cl) {
        v1::CreateGroupRequest q;
        v1::RaidLevel l = v1::RAID_LEVEL_UNSPECIFIED;
        v1::RaidLevel_Parse("RAID_LEVEL_" + upper(a->level), &l);
        q.set_level(l);
        q.set_parity(a->parity);
        q.set_subgroups(a->subgroups);
        q.set_declustered_data(a->data);
        q.set_declustered_spares(a->dspares);
        // One rule for every bad strip size, checked here (usage: exit 2):
        // 0 is no "default", and 2M is as wrong as 1T.
        const uint64_t strip = size_arg(a->strip);
        if (strip < 4096 || strip > (1u << 20) || (strip & (strip - 1)))
          return usage_error("--strip " + a->strip + ": a power of two from 4K to 1M");
        q.set_strip_bytes(uint32_t(strip));
        q.set_name(a->name);
        for (auto& d : a->drives) q.add_drives(d);
        for (auto& d : a->spares) q.add_spares(d);
        q.set_force(a->force);
        q.set_assume_zeroed(a->zeroed);
        if (!a->rebuild_rate.empty()) q.set_rebuild_rate_bytes_s(size_arg(a->rebuild_rate));
        q.set_write_hole_guard_off(a->guard == "off");
        v1::Group r;
        if (int rc = cl.call(&v1::Gpuraid::Stub::CreateGroup, q, &r)) return rc;
        warn_if_lookalike(cl, NameKind::Group, r.name());
        if (c.g.json) return print_json(r), int(kOk);
        printf("created %s: %s, %s usable\n", r.name().c_str(), r.geometry().c_str(), size_str(r.capacity_bytes()).c_str());
        if (sizes_differ(r)) {
          std::string larger;
          for (const auto& m : r.members())
            if (m.unused_bytes() >= r.strip_bytes())
              larger += (larger.empty() ? "" : ", ") + m.drive() + " " + size_str(m.unused_bytes());
          printf("note: members differ in size: each gives %s of data, as the smallest; %s unused (%s)\n",
                 size_str(r.member_data_bytes()).c_str(), size_str(r.unused_bytes()).c_str(), larger.c_str());
        }
        if (r.redundancy() == v1::REDUNDANCY_PENDING) printf("redundancy pending: %s runs in the background (gpuraid dg show %s --watch)\n", r.resync().running() ? "resync" : "init", r.name().c_str());
        return int(kOk);
      };
    });
  }
  {
    auto* s = dg->add_subcommand("list", "list drive groups");
    s->callback([&c] {
      c.action = [&c](Client& cl) {
        v1::ListGroupsResponse r;
        if (int rc = cl.call(&v1::Gpuraid::Stub::ListGroups, v1::ListGroupsRequest(), &r)) return rc;
        if (c.g.json) return print_json(r), int(kOk);
        Table t({"NAME", "LEVEL", "STRIP", "MEMBERS", "CAPACITY", "FREE", "STATE", "REDUNDANCY", "SURVIVES", "TASK"});
        for (const auto& g : r.groups()) {
          std::string task = g.rebuild().running() ? "rebuild" : g.resync().running() ? "resync"
                           : g.init().running()    ? "init"    : g.scrub().running()  ? "scrub"
                           : g.replace().running()  ? "replace" : "-";
          t.add({g.name(), level_str(g), size_str(g.strip_bytes()), std::to_string(g.members_size()),
                 size_str(g.capacity_bytes()), size_str(g.free_bytes()), gstate(g.state()),
                 v1::api_word(g.redundancy()), survives(g), task});
        }
        t.print();
        return int(kOk);
      };
    });
  }
  {
    struct A {
      std::string name;
      bool watch = false;
      double interval = 1;
    };
    auto a = std::make_shared<A>();
    auto* s = dg->add_subcommand("show", "show a group: members, states, progress");
    s->add_option("group", a->name, "group name")->required();
    s->add_flag("--watch", a->watch, "follow init/resync/rebuild/scrub progress until it ends");
    s->add_option("--interval", a->interval, "seconds between updates with --watch")->check(CLI::Range(0.1, 3600.0));
    s->callback([&c, a] {
      c.action = [&c, a](Client& cl) {
        if (a->watch) return watch(cl, c.g, a->name, a->interval);
        v1::GroupRef q;
        q.set_name(a->name);
        v1::Group r;
        if (int rc = cl.call(&v1::Gpuraid::Stub::GetGroup, q, &r)) return rc;
        if (c.g.json) print_json(r);
        else print_group(r);
        return int(kOk);
      };
    });
  }
  {
    struct A {
      std::string name;
      bool force = false, unexport = false;
    };
    auto a = std::make_shared<A>();
    auto* s = dg->add_subcommand("delete", "delete a group (its drives become free, their metadata wiped; the "
                                           "drives that could not be wiped are named)");
    s->add_option("group", a->name, "group name")->required();
    s->add_flag("--force", a->force, "also delete the group's virtual drives");
    s->add_flag("--unexport", a->unexport,
                "stop their exports first (refused while any is exported otherwise): NBD clients get their "
                "requests in flight answered, then a clean disconnect; ublk devices go once their I/O completes");
    s->callback([&c, a] {
      c.action = [&c, a](Client& cl) {
        v1::DeleteGroupRequest q;
        q.set_name(a->name);
        q.set_force(a->force);
        q.set_unexport(a->unexport);
        v1::DeleteGroupResponse r;
        if (int rc = cl.call(&v1::Gpuraid::Stub::DeleteGroup, q, &r)) return rc;
        if (c.g.json) return print_json(r), int(kOk);
        printf("deleted %s\n", a->name.c_str());
        for (const auto& w : r.not_wiped()) fprintf(stderr, "gpuraid: not wiped: %s\n", w.c_str());
        if (r.not_wiped_size()) fprintf(stderr, "gpuraid: wipe them with gpuraid pd wipe PD once they can be reached\n");
        return int(kOk);
      };
    });
  }
  {
    struct A {
      std::string group, old, with;
      int member = -1;
      bool force = false;
    };
    auto a = std::make_shared<A>();
    auto* s = dg->add_subcommand("replace", "replace a member by a free drive: a working member is copied onto it "
                                            "while it serves and moves there when done (hot replace, as mdadm "
                                            "--replace); a failed one is rebuilt onto it; --with the member's own "
                                            "drive puts it back (as dg readd)");
    s->add_option("group", a->group, "group name")->required();
    auto* m = s->add_option("--member", a->member, "index of the member to replace")->check(CLI::Range(0, 63));
    auto* o = s->add_option("--old", a->old, "drive id of the member to replace");
    m->excludes(o);
    s->add_option("--with", a->with, "the free drive that takes its place")->required();
    s->add_flag("--force", a->force, "accept a new drive that holds data");
    s->callback([&c, a] {
      c.action = [&c, a](Client& cl) {
        if (a->member < 0 && a->old.empty()) {
          return usage_error("say which member to replace: --member N or --old PD");
        }
        v1::ReplaceMemberRequest q;
        q.set_group(a->group);
        if (a->member >= 0) q.set_index(uint32_t(a->member));
        else q.set_drive(a->old);
        q.set_new_drive(a->with);
        q.set_force(a->force);
        v1::Group r;
        if (int rc = cl.call(&v1::Gpuraid::Stub::ReplaceMember, q, &r)) return rc;
        if (c.g.json) print_json(r);
        else if (r.replace().running())
          printf("%s: copying member %s onto %s while it serves; it moves there when the copy is done "
                 "(gpuraid dg show %s --watch)\n", r.name().c_str(),
                 a->member >= 0 ? std::to_string(a->member).c_str() : a->old.c_str(), a->with.c_str(), r.name().c_str());
        else printf("%s: %s replaces member %s; rebuild %s\n", r.name().c_str(), a->with.c_str(),
                    a->member >= 0 ? std::to_string(a->member).c_str() : a->old.c_str(),
                    r.rebuild().running() ? "running (gpuraid dg show --watch)" : "not running");
        return int(kOk);
      };
    });
  }
  add_task(c, dg, "rebuild", v1::TASK_REBUILD, {"start", "stop", "pause", "resume"},
           "stop|pause: hold the running rebuild at its checkpoint (it stays held across a daemon restart, and "
           "a rebuild that begins meanwhile starts held). resume|start: go on. start also begins a rebuild onto "
           "a spare (the group's, else the pool's) when a member is failed and none runs, or goes on with a rebuild "
           "that stopped (at a block nothing rebuilds: written over since) from where it stopped.");
  add_task(c, dg, "scrub", v1::TASK_SCRUB, {"start", "stop", "pause", "resume"},
           "start [--repair]: check every stripe (and rewrite what mismatches); stop; pause|resume.");
  add_dg_back_commands(c, dg);
  {
    struct A {
      std::string group, rebuild, rebuild_min, scrub;
    };
    auto a = std::make_shared<A>();
    auto* s = dg->add_subcommand("rates", "limit rebuild and scrub bandwidth (per second; 0 = unlimited)");
    s->add_option("group", a->group, "group name")->required();
    s->add_option("--rebuild", a->rebuild, "rebuild (and resync, init) rate at most, e.g. 200M (md's speed_limit_max)")
        ->check(kSize);
    s->add_option("--rebuild-min", a->rebuild_min,
                  "rate the rebuild is held to while volumes serve I/O, e.g. 20M (md's speed_limit_min; 0 = not held)")
        ->check(kSize);
    s->add_option("--scrub", a->scrub, "scrub rate, e.g. 50M")->check(kSize);
    s->callback([&c, a] {
      c.action = [&c, a](Client& cl) {
        if (a->rebuild.empty() && a->rebuild_min.empty() && a->scrub.empty())
          return usage_error("dg rates: give --rebuild, --rebuild-min or --scrub (gpuraid dg show " + a->group +
                             " shows the rates now)");
        v1::SetRatesRequest q;
        q.set_group(a->group);
        if (!a->rebuild.empty()) q.set_rebuild_bytes_s(size_arg(a->rebuild));
        if (!a->rebuild_min.empty()) q.set_rebuild_min_bytes_s(size_arg(a->rebuild_min));
        if (!a->scrub.empty()) q.set_scrub_bytes_s(size_arg(a->scrub));
        v1::Group r;
        if (int rc = cl.call(&v1::Gpuraid::Stub::SetRates, q, &r)) return rc;
        if (c.g.json) print_json(r);
        else printf("%s: %s\n", r.name().c_str(), rates_str(r).c_str());
        return int(kOk);
      };
    });
  }
}

}  // namespace gpuraid::cli
