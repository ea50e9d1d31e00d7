// gpuraid status [--json]: one overview in the spirit of /proc/mdstat —
// every group with its level, state, redundancy and members (failed,
// missing, rebuilding marked), progress bars of its background tasks with
// rate and ETA, its volumes and their exports; then spares and drives that
// need attention.
#include <cstdio>

#include "cli/cli.h"
#include "cli/describe.h"
#include "cli/output.h"
#include "cli/progress.h"

namespace gpuraid::cli {

namespace {

// mdstat's [UU_U]: U online, R rebuilding, M missing, _ failed.
char member_mark(v1::DriveState s) {
  switch (s) {
    case v1::DRIVE_STATE_ONLINE: return 'U';
    case v1::DRIVE_STATE_REBUILDING: return 'R';
    case v1::DRIVE_STATE_MISSING: return 'M';
    default: return '_';
  }
}

std::string member_list(const v1::Group& g) {
  std::string s;
  for (const auto& m : g.members()) {
    s += (s.empty() ? "" : " ") + (m.drive().empty() ? "?" : m.drive()) + "[" + std::to_string(m.index()) + "]";
    if (m.state() != v1::DRIVE_STATE_ONLINE) s += "(" + drive_state_word(m.state()) + ")";
  }
  return s;
}

void print_group(const v1::Group& g, const v1::StatusOverview& st) {
  int online = 0;
  std::string marks;
  for (const auto& m : g.members()) {
    online += m.state() == v1::DRIVE_STATE_ONLINE;
    marks += member_mark(m.state());
  }
  printf("%s : %s %s %s\n", g.name().c_str(), group_state_word(g.state()).c_str(), level_str(g).c_str(),
         member_list(g).c_str());
  if (g.state() == v1::GROUP_STATE_OFFLINE) {
    printf("      offline: %s\n", g.note().empty() ? "-" : g.note().c_str());
    return;
  }
  std::string spares;
  for (const auto& s : g.spares()) spares += (spares.empty() ? "" : ", ") + s;
  // The redundancy word of docs/STATES.md, and the further failures survived where that word counts them.
  const bool counted = g.redundancy() == v1::REDUNDANCY_FULL || g.redundancy() == v1::REDUNDANCY_REDUCED;
  const std::string redundancy =
      v1::api_word(g.redundancy()) + (counted ? " (survives " + std::to_string(g.failures_tolerated()) + " more)" : "");
  printf("      %s, %s strip, %s free, [%d/%d] [%s], redundancy %s%s%s\n", size_str(g.capacity_bytes()).c_str(),
         size_str(g.strip_bytes()).c_str(), size_str(g.free_bytes()).c_str(), online, g.members_size(),
         marks.c_str(), redundancy.c_str(), spares.empty() ? "" : ", spares: ", spares.c_str());
  if (const std::string room = room_str(g); !room.empty()) printf("      distributed spare room: %s\n", room.c_str());
  std::string tasks = group_tasks(g);
  for (size_t at = 0; at < tasks.size();) {
    size_t nl = tasks.find('\n', at);
    printf("      %s\n", tasks.substr(at, nl - at).c_str());
    at = nl == std::string::npos ? tasks.size() : nl + 1;
  }
  const auto& sc = g.last_scrub();
  if (!g.scrub().running() && sc.stripes_checked())
    printf("      last scrub: %s\n", scrub_summary(sc).c_str());
  if (!g.note().empty()) printf("      note: %s\n", g.note().c_str());
  for (const auto& v : st.volumes())
    if (v.group() == g.name())
      printf("      vd %s  %s  %s%s\n", v.id().c_str(), size_str(v.size_bytes()).c_str(), export_str(v).c_str(),
             v.online() ? "" : "  (offline)");
}

// Drives outside groups that an operator should know of: pool spares, free
// ones, and any failed or missing (in a group or not).
void print_drives(const v1::StatusOverview& st) {
  std::string spares, free, trouble;
  for (const auto& d : st.drives()) {
    if (d.state() == v1::DRIVE_STATE_FAILED || d.state() == v1::DRIVE_STATE_MISSING) {
      std::string say = d.note();
      // A failed member still in its group: the ways on (OPERATIONS.md).
      if (say.empty() && d.state() == v1::DRIVE_STATE_FAILED && d.role() == v1::DRIVE_ROLE_MEMBER)
        say = "replace it (gpuraid dg replace " + d.group() + " --old " + d.id() +
              " --with PD) or put it back (gpuraid dg readd " + d.group() + " " + d.id() + ")";
      trouble += "      " + d.id() + " " + drive_state_word(d.state()) + " " + d.path() +
                 (d.group().empty() ? "" : " (" + d.group() + ")") + (say.empty() ? "" : ": " + say) + "\n";
    }
    else if (d.role() == v1::DRIVE_ROLE_SPARE && d.group().empty() && !d.note().empty())
      trouble += "      " + d.id() + " pool spare " + d.path() + ": " + d.note() + "\n";
    else if (d.role() == v1::DRIVE_ROLE_SPARE && d.group().empty())
      spares += (spares.empty() ? "" : " ") + d.id();
    else if (d.role() == v1::DRIVE_ROLE_FREE)
      free += (free.empty() ? "" : " ") + d.id();
  }
  if (!spares.empty()) printf("pool spares: %s\n", spares.c_str());
  if (!free.empty()) printf("free drives: %s\n", free.c_str());
  if (!trouble.empty()) printf("drives needing attention:\n%s", trouble.c_str());
}

}  // namespace

void add_status_command(Cli& c) {
  auto* s = c.app.add_subcommand("status", "overview: groups, their state and background tasks, volumes, drives");
  s->callback([&c] {
    c.action = [&c](Client& cl) {
      v1::StatusOverview st;
      if (int rc = cl.call(&v1::Gpuraid::Stub::GetStatus, v1::GetStatusRequest(), &st)) return rc;
      if (c.g.json) return print_json(st), int(kOk);
      const auto& d = st.daemon();
      printf("gpuraidd %s, pid %d, up %s, parity %s, %u reactors\n", d.version().c_str(), d.pid(),
             duration_str(double(d.uptime_s())).c_str(), d.parity_backend().c_str(), d.reactors());
      if (const std::string pp = parity_paths_str(d.parity()); !pp.empty()) printf("parity: %s\n", pp.c_str());
      if (st.groups().empty()) printf("no drive groups\n");
      for (const auto& g : st.groups()) {
        printf("\n");
        print_group(g, st);
      }
      if (!st.drives().empty()) printf("\n");
      print_drives(st);
      return int(kOk);
    };
  });
}

}  // namespace gpuraid::cli
