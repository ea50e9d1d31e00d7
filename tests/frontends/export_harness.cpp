// gpuraid-export-harness: a volume over file/mem/block drives, exported
// through the frontends (NBD and/or ublk) by ExportManager, served by
// reactor threads the way the daemon serves them, until SIGTERM/SIGINT.
// Lets the frontend tests and the VM lane run without the gRPC daemon.
//
//   gpuraid-export-harness --level 5 --strip 64K --drive-type file --drives a,b,c,d [--drive-size 256M]
//       [--nbd unix:PATH|tcp:[HOST:]PORT] [--ublk [--ublk-id N]] [--reactors 2] [--state FILE]
//
// --group create|assemble: the drives form an engine/group Group instead
// (superblocks, write-intent bitmap, rebuild; --rebuild-rate BYTES/s caps
// the rebuild). --control FIFO takes lines "fail IDX" (either kind of
// volume) and, with --group, "replace IDX PATH" (the replacement is rebuilt
// in the background; group events are logged to stderr).
//
// The state file (written once every export is up) has lines key=value:
// nbd_uri, ublk_dev, ublk_id, pid, size. SIGKILL it and start it again with
// --ublk-id N to reattach the same /dev/ublkbN (user recovery).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "daemon/frontends/export_manager.h"
#include "engine/block_target.h"
#include "engine/engine.h"
#include "engine/group/group.h"
#include "engine/units.h"
#include "engine/volume.h"

using namespace gpuraid;

namespace {

struct Options {
  std::string level = "5", strip = "64K", drive_type = "file", drive_size, name = "vd0", nbd, state;
  std::string group, control, rebuild_rate;
  std::vector<std::string> drives;
  uint32_t members = 4, reactors = 2, ublk_queues = 0, ublk_depth = 128;
  uint64_t data_offset = 1 << 20;
  bool ublk = false;
  int ublk_id = -1;
  uint32_t ublk_cycles = 0;
};

int usage(const std::string& why) {
  fprintf(stderr, "gpuraid-export-harness: %s\n", why.c_str());
  return 2;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string p; std::getline(ss, p, ',');) out.push_back(p);
  return out;
}

bool parse(int argc, char** argv, Options* o, std::string* err) {
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto val = [&](std::string* v) {
      if (i + 1 >= argc) return *err = a + " needs a value", false;
      *v = argv[++i];
      return true;
    };
    std::string v;
    auto num = [&](uint32_t* n) {
      if (!val(&v)) return false;
      char* end = nullptr;
      unsigned long x = strtoul(v.c_str(), &end, 10);
      if (v.empty() || *end) return *err = a + ": not a number: " + v, false;
      *n = uint32_t(x);
      return true;
    };
    if (a == "--level") { if (!val(&o->level)) return false; }
    else if (a == "--strip") { if (!val(&o->strip)) return false; }
    else if (a == "--drive-type") { if (!val(&o->drive_type)) return false; }
    else if (a == "--drive-size") { if (!val(&o->drive_size)) return false; }
    else if (a == "--drives") { if (!val(&v)) return false; o->drives = split(v); }
    else if (a == "--members") { if (!num(&o->members)) return false; }
    else if (a == "--reactors") { if (!num(&o->reactors)) return false; }
    else if (a == "--name") { if (!val(&o->name)) return false; }
    else if (a == "--nbd") { if (!val(&o->nbd)) return false; }
    else if (a == "--ublk") o->ublk = true;
    else if (a == "--ublk-id") { uint32_t n; if (!num(&n)) return false; o->ublk = true; o->ublk_id = int(n); }
    else if (a == "--ublk-queues") { if (!num(&o->ublk_queues)) return false; }
    else if (a == "--ublk-depth") { if (!num(&o->ublk_depth)) return false; }
    else if (a == "--state") { if (!val(&o->state)) return false; }
    else if (a == "--ublk-cycles") { if (!num(&o->ublk_cycles)) return false; }
    else if (a == "--group") { if (!val(&o->group)) return false; }
    else if (a == "--control") { if (!val(&o->control)) return false; }
    else if (a == "--rebuild-rate") { if (!val(&o->rebuild_rate)) return false; }
    else return *err = "unknown argument " + a, false;
  }
  return true;
}

size_t count_entries(const char* dir) {
  size_t n = 0;
  if (DIR* d = opendir(dir)) {
    while (readdir(d)) n++;
    closedir(d);
  }
  return n;
}

// The process's threads but io_uring's own workers (iou-wrk-N, iou-sqp-N):
// the kernel starts and ends those on demand (an io-wq worker lives on for
// a while after its last punted request), so they are no leak of ours
// (the lane's cycles step once saw 7 -> 8 threads from one).
size_t count_own_threads() {
  size_t n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream f(std::string("/proc/self/task/") + e->d_name + "/comm");
      std::string comm;
      std::getline(f, comm);
      n += comm.rfind("iou-", 0) != 0;
    }
    closedir(d);
  }
  return n;
}

// Operator commands, one per line from a FIFO: "fail IDX" (a group, or a
// plain volume: Volume::fail_member is safe from any thread) and, for a
// group, "replace IDX PATH". Runs until the FIFO says "quit" or the process ends.
void control_loop(const std::string& fifo, Volume* vol, Group* g) {
  int fd = open(fifo.c_str(), O_RDWR);  // RDWR: no EOF when writers come and go
  if (fd < 0) {
    fprintf(stderr, "harness: cannot open %s: %s\n", fifo.c_str(), strerror(errno));
    return;
  }
  std::string line;
  char c;
  while (read(fd, &c, 1) == 1) {
    if (c != '\n') {
      line += c;
      continue;
    }
    std::istringstream in(line);
    line.clear();
    std::string cmd, path, err;
    uint32_t idx = 0;
    in >> cmd >> idx >> path;
    bool ok = false;
    if (cmd == "quit") break;
    if (cmd == "fail" && g) ok = g->fail_member(idx, &err);
    else if (cmd == "fail") ok = vol->fail_member(idx, -EIO) || (err = "not a member, or failed already", false);
    else if (cmd == "replace" && !g) err = "replace needs --group";
    else if (cmd == "replace") {
      DriveSpec s;
      struct stat st;
      s.type = stat(path.c_str(), &st) == 0 && S_ISBLK(st.st_mode) ? DriveType::Block : DriveType::File;
      s.path = path;
      auto d = Drive::open(s, &err);
      ok = d && g->replace_member(idx, std::move(d), true, &err);
    } else err = "unknown command";
    fprintf(stderr, "harness: control '%s %u %s': %s\n", cmd.c_str(), idx, path.c_str(), ok ? "ok" : err.c_str());
  }
  close(fd);
}

// Mappings of ublk char devices, and the process's mapped bytes.
size_t count_ublk_maps() {
  std::ifstream f("/proc/self/maps");
  size_t n = 0;
  for (std::string l; std::getline(f, l);) n += l.find("/dev/ublkc") != std::string::npos;
  return n;
}

// Readable+writable mapped MiB: leaked queue buffers count here, while the
// allocator's reserved (PROT_NONE) arena space does not.
size_t mapped_mib() {
  std::ifstream f("/proc/self/maps");
  size_t bytes = 0;
  for (std::string l; std::getline(f, l);) {
    unsigned long a = 0, b = 0;
    char perms[5] = {};
    if (sscanf(l.c_str(), "%lx-%lx %4s", &a, &b, perms) == 3 && perms[0] == 'r' && perms[1] == 'w') bytes += b - a;
  }
  return bytes >> 20;
}

// Adds, serves, stops and deletes a ublk device n times; the process must
// hold as many fds, mapped bytes and threads at the end as after the first
// few cycles (by then the allocator's per-thread arenas exist).
int ublk_cycles(ExportManager& em, const std::string& name, BlockTarget* t, uint32_t n) {
  size_t fds0 = 0, maps0 = 0, threads0 = 0;
  std::vector<uint8_t> expect;
  for (uint32_t i = 0; i < n; i++) {
    std::string dev, err;
    int id = -1;
    if (!em.export_ublk(name, t, -1, &dev, &id, &err)) {
      fprintf(stderr, "cycle %u: export failed: %s\n", i, err.c_str());
      return 1;
    }
    // The device serves: read its first block through the kernel.
    int fd = open(dev.c_str(), O_RDONLY | O_DIRECT);
    void* buf = nullptr;
    if (fd < 0 || posix_memalign(&buf, 4096, 4096) || pread(fd, buf, 4096, 0) != 4096) {
      fprintf(stderr, "cycle %u: cannot read %s: %s\n", i, dev.c_str(), strerror(errno));
      return 1;
    }
    std::vector<uint8_t> got(static_cast<uint8_t*>(buf), static_cast<uint8_t*>(buf) + 4096);
    free(buf);
    close(fd);
    if (i == 0) expect = got;
    else if (got != expect) {
      fprintf(stderr, "cycle %u: %s reads other data than before\n", i, dev.c_str());
      return 1;
    }
    if (!em.unexport(name, &err)) {
      fprintf(stderr, "cycle %u: unexport failed: %s\n", i, err.c_str());
      return 1;
    }
    // devtmpfs removes the nodes asynchronously after DEL_DEV: allow it a moment.
    struct stat st;
    auto gone = [&] {
      return stat(dev.c_str(), &st) != 0 && stat(("/dev/ublkc" + std::to_string(id)).c_str(), &st) != 0;
    };
    for (int k = 0; k < 200 && !gone(); k++) usleep(5000);
    if (!gone()) {
      fprintf(stderr, "cycle %u: %s still exists after delete\n", i, dev.c_str());
      return 1;
    }
    if (i == std::min<uint32_t>(n - 1, 4)) {
      fds0 = count_entries("/proc/self/fd");
      maps0 = mapped_mib();
      threads0 = count_own_threads();
    }
  }
  const size_t fds = count_entries("/proc/self/fd"), maps = mapped_mib(),
               threads = count_own_threads(), ublk_maps = count_ublk_maps();
  printf("ublk cycles=%u fds %zu->%zu mapped %zu->%zu MiB threads %zu->%zu ublkc mappings %zu\n", n, fds0, fds,
         maps0, maps, threads0, threads, ublk_maps);
  // A leaked queue would keep its descriptor mapping and tens of MiB of
  // buffers; allocator noise is far below 8 MiB.
  if (fds > fds0 || maps > maps0 + 8 || threads > threads0 || ublk_maps) {
    fprintf(stderr, "ublk add/delete cycles leak resources\n");
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string err;
  if (!parse(argc, argv, &o, &err)) return usage(err);
  Level level;
  if (!parse_level(o.level, &level)) return usage("bad --level " + o.level);
  uint64_t strip = 0, dsize = 0;
  if (!parse_size(o.strip, &strip)) return usage("bad --strip " + o.strip);
  if (!o.drive_size.empty() && !parse_size(o.drive_size, &dsize)) return usage("bad --drive-size " + o.drive_size);
  DriveType dt;
  if (!parse_drive_type(o.drive_type, &dt)) return usage("bad --drive-type " + o.drive_type);
  if (!o.drives.empty()) o.members = uint32_t(o.drives.size());
  if (o.drives.empty() && dt != DriveType::Mem && dt != DriveType::Null) return usage("--drives is needed for file and block drives");
  if (o.nbd.empty() && !o.ublk && !o.ublk_cycles) return usage("nothing to export: give --nbd and/or --ublk");
  if (!o.rebuild_rate.empty() && o.group.empty()) return usage("--rebuild-rate needs --group");

  // Signals go to the main thread only (sigwait); reactor threads never see them.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  signal(SIGPIPE, SIG_IGN);

  EngineConfig ec;
  ec.reactors = o.reactors;
  ec.nvme_passthru = dt == DriveType::NvmeChar;
  ec.arena_bytes = 128u << 20;
  auto engine = Engine::create(ec, &err);
  if (!engine) return usage(err);
  std::vector<std::unique_ptr<Drive>> drives;
  std::vector<Drive*> members;
  for (uint32_t i = 0; i < o.members; i++) {
    DriveSpec s;
    s.type = dt;
    s.size_bytes = dsize;
    s.create = dt == DriveType::File && dsize > 0;
    if (!o.drives.empty()) s.path = o.drives[i];
    auto d = Drive::open(s, &err);
    if (!d) return usage(err);
    members.push_back(d.get());
    drives.push_back(std::move(d));
  }
  std::unique_ptr<Volume> plain;
  std::unique_ptr<Group> group;
  Volume* vol = nullptr;
  if (o.group.empty()) {
    Geometry g;
    if (!Volume::fit_geometry(level, level == Level::EC ? 2 : 0, uint32_t(strip), members, o.data_offset, &g, nullptr, &err))
      return usage(err);
    plain = Volume::create(*engine, g, members, o.data_offset, &err);
    if (!plain) return usage(err);
    Volume::Events ev;
    ev.member_failed = [](uint32_t m, int e) { fprintf(stderr, "harness: member %u failed: %s\n", m, strerror(-e)); };
    ev.group_failed = [] { fprintf(stderr, "harness: the group failed (too many members lost)\n"); };
    plain->set_events(ev);
    vol = plain.get();
  } else {
    std::string note;
    if (o.group == "create") {
      GroupConfig gc;
      gc.name = o.name;
      gc.level = level;
      gc.parity = level == Level::EC ? 2 : 0;
      gc.strip_bytes = uint32_t(strip);
      gc.force = true;          // the lane reuses its drives between steps
      gc.assume_zeroed = false; // drives may hold earlier steps' data: initialize
      group = Group::create(*engine, std::move(drives), gc, &err);
    } else if (o.group == "assemble") {
      group = Group::assemble(*engine, std::move(drives), &note, &err);
    } else {
      return usage("--group must be create or assemble");
    }
    if (!group) return usage("group: " + err);
    if (!note.empty()) fprintf(stderr, "harness: assemble: %s\n", note.c_str());
    group->set_event_handler([](const GroupEvent& e) {
      if (e.kind == GroupEvent::MemberFailed) fprintf(stderr, "harness: member %d failed: %s\n", e.member, e.message.c_str());
      fprintf(stderr, "harness: group event %s member %d %s\n", group_event_name(e.kind), e.member, e.message.c_str());
    });
    if (!o.rebuild_rate.empty()) {
      uint64_t rate = 0;
      if (!parse_size(o.rebuild_rate, &rate)) return usage("bad --rebuild-rate " + o.rebuild_rate);
      group->set_rebuild_rate(rate);
    }
    group->start_background(engine->reactor(0));
    vol = &group->volume();
  }
  VolumeExtent vd(*vol, 0, vol->size_bytes());
  std::thread control;
  if (!o.control.empty()) {
    control = std::thread(control_loop, o.control, vol, group.get());
    control.detach();  // blocked in read() until the process ends
  }

  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (uint32_t i = 0; i < engine->reactor_count(); i++)
    threads.emplace_back([&, i] {
      Reactor& r = engine->reactor(i);
      while (!stop.load(std::memory_order_relaxed)) r.poll(true, 50);
      // Drain what is still in flight so that teardown finds nothing pending.
      for (int k = 0; k < 200 && r.in_flight(); k++) r.poll(true, 10);
    });

  int rc = 0;
  {
    ExportManager em(*engine);
    UblkConfig uc;
    uc.queues = o.ublk_queues;
    uc.depth = o.ublk_depth;
    em.set_ublk_config(uc);
    if (o.ublk_cycles) {
      rc = ublk_cycles(em, o.name, &vd, o.ublk_cycles);
      stop = true;
      for (auto& t : threads) t.join();
      return rc;
    }
    std::ostringstream state;
    state << "pid=" << getpid() << "\nsize=" << vd.size_bytes() << "\n";
    bool ok = true;
    if (!o.nbd.empty()) {
      std::string uri;
      if (em.export_nbd(o.name, &vd, o.nbd, NbdTlsConfig{}, &uri, &err)) {
        state << "nbd_uri=" << uri << "\n";
        printf("nbd %s\n", uri.c_str());
      } else {
        fprintf(stderr, "harness: NBD export failed: %s\n", err.c_str());
        ok = false;
      }
    }
    if (ok && o.ublk) {
      std::string dev;
      int id = -1;
      if (em.export_ublk(o.name, &vd, o.ublk_id, &dev, &id, &err)) {
        state << "ublk_dev=" << dev << "\nublk_id=" << id << "\n";
        printf("ublk %s%s\n", dev.c_str(), o.ublk_id >= 0 ? " (reattached or re-created)" : "");
      } else {
        fprintf(stderr, "harness: ublk export failed: %s\n", err.c_str());
        ok = false;
      }
    }
    fflush(stdout);
    if (ok && !o.state.empty()) {
      // Written whole and renamed, so that a watcher never reads half of it.
      std::string tmp = o.state + ".tmp";
      std::ofstream(tmp) << state.str();
      rename(tmp.c_str(), o.state.c_str());
    }
    if (ok) {
      int sig = 0;
      sigwait(&sigs, &sig);
      fprintf(stderr, "harness: signal %d: unexporting\n", sig);
    } else {
      rc = 1;
    }
    em.stop_all();
  }
  if (group && !group->stop(&err)) {
    fprintf(stderr, "harness: group stop: %s\n", err.c_str());
    rc = 1;
  }
  stop = true;
  for (auto& t : threads) t.join();
  return rc;
}
