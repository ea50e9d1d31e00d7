// The crash test: a child process runs rounds of concurrent writes, each
// round followed by a flush, and tells the parent through a pipe which
// rounds' flushes completed. The parent kills it with SIGKILL at a random
// moment (also while it is assembling or resyncing after the previous
// kill), reassembles the group itself, waits for the resync of dirty
// regions, and checks: every block written before a completed flush reads
// back exactly; a block written in the unfinished round reads back as
// either its old or its new content; a scrub finds no parity mismatch.
// Every block starts with a pattern of its own (round 0), so a block never
// written since reads back that.
//
// With --degraded N the last N members (of each sub-group, raid50/60: 2
// sub-groups) are gone from the first start on (failed), and every kill
// is an unclean stop while degraded: the group
// must start without force (the write-hole guard replays its log) and the
// same checks hold, the missing members' blocks included (reconstructed
// from parity that a torn stripe would have left wrong without the guard).
// No scrub then (it needs every member). draid5/6: from the second start on,
// the first missing member (failed while the group ran) is rebuilt into the
// distributed spare room by itself, so kills also land during that rebuild
// and with it in the room and another member missing. With --copy-back
// (draid5/6, --degraded >= 1), once that member is in the room a child
// copies it back onto a replacement drive (an extra drive file), so kills
// land during the copy-back too, and later starts find it on that drive.
//
//   crash_test [--kills N] [--seed S] [--level raid5|raid6|raid50|raid60|draid5|draid6] [--degraded N]
//              [--copy-back]
//
// A failure prints the command line that reruns it: the same write patterns
// and kill delays, but the kills land at wall-clock moments, so not exactly.
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <thread>

#include "engine/group/group.h"
#include "engine/group/metadata_io.h"
#include "tests/support/group_rig.h"
#include "tests/support/replay_line.h"

using namespace gpuraid;
using namespace gpuraid::test;

namespace {

// raid5/6: 6 members; raid50: 2 sub-groups of 3; raid60: 2 of 4;
// draid5/6: 11 members, two stripes of 4+1 / 3+2 and one spare strip a row.
constexpr uint32_t kSubgroups = 2;
uint32_t drives_for(Level l) {
  if (level_description(l).declustered) return 11;
  return l == Level::R60 ? 8 : 6;
}
DeclusteredShape shape_for(Level l) {
  if (!level_description(l).declustered) return {};
  return {5 - level_description(l).parity, 1};  // 2 stripes of D + P = 5, and 1 spare: 11
}
constexpr uint32_t kWritesPerRound = 12;

// What block `b` holds after write j of round r: a pattern nobody else writes.
void pattern(uint8_t* p, uint64_t seed, uint64_t round, uint32_t j, uint64_t block) {
  uint64_t h = seed * 0x9e3779b97f4a7c15ull ^ round * 0xbf58476d1ce4e5b9ull ^ j * 0x94d049bb133111ebull ^ block;
  for (int i = 0; i < 512; i++) {
    uint64_t v = h + uint64_t(i) * 0x2545f4914f6cdd1dull;
    memcpy(p + i * 8, &v, 8);
  }
}

struct RoundPlan {
  std::vector<uint64_t> blocks;  // distinct, so writes of a round never overlap
};

RoundPlan plan(uint64_t seed, uint64_t round, uint64_t nblocks) {
  std::mt19937_64 rng(seed ^ (round * 7919));
  RoundPlan p;
  while (p.blocks.size() < kWritesPerRound) {
    uint64_t b = rng() % nblocks;
    if (std::find(p.blocks.begin(), p.blocks.end(), b) == p.blocks.end()) p.blocks.push_back(b);
  }
  return p;
}

// What the child sends before its first round (then the numbers of the
// rounds whose flush completed).
constexpr uint64_t kReady = ~0ull;

// The child builds its own engine (an io_uring must not cross a fork) on
// the same drive files; the `present` drives only.
// copy_back_onto: a drive (index) to copy the room's member back onto once
// it is in the room and no copy-back ran yet, or -1.
[[noreturn]] void child(const GroupRig& rig, uint64_t seed, uint64_t first_round, int fd,
                        const std::vector<uint32_t>& present, int copy_back_onto) {
  std::string err, note;
  auto engine = Engine::create(EngineConfig{}, &err);
  if (!engine) _exit(3);
  Reactor& r0 = engine->reactor(0);
  std::vector<std::unique_ptr<Drive>> d;
  for (uint32_t i : present) {
    auto drv = Drive::open(DriveSpec{DriveType::File, rig.path(i), 0, false}, &err);
    if (!drv) _exit(3);
    d.push_back(std::move(drv));
  }
  auto g = Group::assemble(*engine, std::move(d), &note, &err);
  if (!g) {
    fprintf(stderr, "child: assemble failed: %s\n", err.c_str());
    _exit(3);
  }
  g->start_background(r0);
  if (write(fd, &kReady, sizeof kReady) != sizeof kReady) _exit(7);
  Volume& v = g->volume();
  const DistributedSpare* room = v.room();
  if (copy_back_onto >= 0 && v.room_mask() && !room->rebuilding() && !room->leaving()) {
    auto drv = Drive::open(DriveSpec{DriveType::File, rig.path(uint32_t(copy_back_onto)), 0, false}, &err);
    if (!drv || !g->replace_member(room->order().back(), std::move(drv), true, &err)) {
      fprintf(stderr, "child: copy-back refused: %s\n", err.c_str());
      _exit(8);
    }
    // Slow, so that the kill lands in the middle of it, writes in flight
    // (the parent's start resumes it at full speed).
    g->set_rebuild_rate(4u << 20);
  }
  const uint64_t nblocks = v.size_bytes() / 4096;
  std::vector<AlignedBuf> bufs;
  for (uint32_t j = 0; j < kWritesPerRound; j++) bufs.emplace_back(4096);
  int pending = 0;
  auto done = [](IoRequest* q) {
    if (q->result) _exit(4);
    --*static_cast<int*>(q->ctx);
  };
  for (uint64_t r = first_round;; r++) {
    RoundPlan p = plan(seed, r, nblocks);
    std::vector<IoRequest> reqs(kWritesPerRound + 1);
    for (uint32_t j = 0; j < kWritesPerRound; j++) {
      pattern(bufs[j].data(), seed, r, j, p.blocks[j]);
      reqs[j].op = IoRequest::Write;
      reqs[j].offset = p.blocks[j] * 4096;
      reqs[j].length = 4096;
      reqs[j].buf = bufs[j].data();
      reqs[j].ctx = &pending;
      reqs[j].done = done;
      if (v.submit(r0, &reqs[j]) != 0) _exit(5);
      pending++;
    }
    while (pending) r0.poll(true, 5);
    IoRequest& fl = reqs[kWritesPerRound];
    fl.op = IoRequest::Flush;
    fl.ctx = &pending;
    fl.done = done;
    if (v.submit(r0, &fl) != 0) _exit(6);
    pending++;
    while (pending) r0.poll(true, 5);
    if (write(fd, &r, sizeof r) != sizeof r) _exit(7);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int kills = 60;
  uint64_t seed = 1;
  uint32_t degraded = 0;
  bool copy_back = false;
  Level level = Level::R6;
  static option opts[] = {{"kills", required_argument, nullptr, 'k'}, {"seed", required_argument, nullptr, 's'},
                          {"level", required_argument, nullptr, 'l'}, {"degraded", required_argument, nullptr, 'd'},
                          {"copy-back", no_argument, nullptr, 'c'},
                          {nullptr, 0, nullptr, 0}};
  for (int c; (c = getopt_long(argc, argv, "", opts, nullptr)) != -1;) {
    if (c == 'k') kills = atoi(optarg);
    else if (c == 's') seed = strtoull(optarg, nullptr, 10);
    else if (c == 'd') degraded = uint32_t(atoi(optarg));
    else if (c == 'c') copy_back = true;
    else if (c == 'l' && parse_level(optarg, &level) && level != Level::EC && level_description(level).parity) continue;
    else return 2;
  }
  const bool grouped = level == Level::R50 || level == Level::R60;
  const uint32_t drives = drives_for(level), subgroups = grouped ? kSubgroups : 1;
  if (degraded > level_description(level).parity) {
    fprintf(stderr, "--degraded %u: more members than the level can lose (per sub-group)\n", degraded);
    return 2;
  }
  if (copy_back && (!level_description(level).declustered || !degraded)) {
    fprintf(stderr, "--copy-back: a declustered level (draid5/6) with a member missing (--degraded 1 or more)\n");
    return 2;
  }
  // The last `degraded` members of each sub-group are gone.
  std::vector<uint32_t> present;
  for (uint32_t i = 0; i < drives; i++)
    if (i % (drives / subgroups) < drives / subgroups - degraded) present.push_back(i);
  GroupRig rig(drives + (copy_back ? 1 : 0), 12u << 20);  // drive `drives`: the copy-back's
  // The copy-back's drive, once it holds a member (its superblock of this group).
  Uuid group_uuid{};
  auto replacement_is_member = [&] {
    if (!copy_back) return false;
    auto drv = rig.open(drives);
    const SuperblockRead r = read_superblock(*drv);
    return r.ok && r.sb.group_uuid == group_uuid;
  };
  std::string err;
  {
    GroupConfig cfg;
    cfg.level = level;
    cfg.subgroups = grouped ? subgroups : 0;
    cfg.declustered = shape_for(level);
    cfg.strip_bytes = 16384;
    cfg.bitmap_region_bytes = 1u << 20;
    cfg.assume_zeroed = true;
    auto g = rig.create(cfg, 0, drives, &err);
    if (!g) {
      fprintf(stderr, "create: %s\n", err.c_str());
      return 1;
    }
    // Round 0: every block its own pattern.
    Volume& v = g->volume();
    AlignedBuf chunk(1u << 20);
    for (uint64_t off = 0; off < v.size_bytes(); off += chunk.size()) {
      const uint64_t n = std::min<uint64_t>(chunk.size(), v.size_bytes() - off);
      for (uint64_t b = 0; b < n / 4096; b++) pattern(chunk.data() + b * 4096, seed, 0, 0, off / 4096 + b);
      if (rig.io(v, IoRequest::Write, off, n, chunk.data()) != 0) {
        fprintf(stderr, "initial fill failed\n");
        return 1;
      }
    }
    group_uuid = read_superblock(*rig.open(0)).sb.group_uuid;
    if (!g->stop(&err)) {
      fprintf(stderr, "stop: %s\n", err.c_str());
      return 1;
    }
  }
  uint64_t copy_backs_seen = 0;  // starts that found the member on the replacement drive
  uint64_t nblocks = 0;
  std::map<uint64_t, std::pair<uint64_t, uint32_t>> model;  // block -> (round, write) of its last flushed write
  std::mt19937_64 rng(seed);
  uint64_t next_round = 1, total_confirmed = 0;
  int failures = 0;
  for (int k = 0; k < kills && !failures; k++) {
    int p[2];
    if (pipe(p) != 0) return 1;
    std::vector<uint32_t> now = present;
    const bool replaced = replacement_is_member();
    if (replaced) now.push_back(drives);
    pid_t pid = fork();
    if (pid == 0) {
      close(p[0]);
      child(rig, seed, next_round, p[1], now, copy_back && !replaced ? int(drives) : -1);
    }
    close(p[1]);
    // Half the kills count their delay from the child's start, so that some
    // land while it assembles, replays the log or resyncs; half from its
    // first round, so that rounds get flushed even where assembly is slow
    // (a loaded machine) and flushed writes are checked.
    const uint64_t delay_us = rng() % 300000;
    bool ready = false;
    if (rng() & 1) {
      pollfd pf{p[0], POLLIN, 0};
      uint64_t first = 0;
      ready = poll(&pf, 1, 60000) == 1 && read(p[0], &first, sizeof first) == sizeof first && first == kReady;
      if (!ready) fprintf(stderr, "kill %d: the child did not start its rounds within 60 s\n", k);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
      fprintf(stderr, "kill %d: the child ended on its own before the kill (status 0x%x)\n", k, status);
      failures++;
      break;
    }
    // Rounds whose flush completed.
    uint64_t r, last = next_round - 1;
    while (read(p[0], &r, sizeof r) == sizeof r)
      if (r != kReady) last = r;
    close(p[0]);
    std::string note;
    std::vector<std::unique_ptr<Drive>> d;
    for (uint32_t i : present) d.push_back(rig.open(i));
    if (replacement_is_member()) {
      d.push_back(rig.open(drives));
      copy_backs_seen++;
    }
    auto g = rig.assemble(std::move(d), &note, &err);
    if (!g) {
      fprintf(stderr, "kill %d: reassembly failed: %s\n", k, err.c_str());
      failures++;
      break;
    }
    Volume& v = g->volume();
    nblocks = v.size_bytes() / 4096;
    for (uint64_t round = next_round; round <= last; round++) {
      RoundPlan pl = plan(seed, round, nblocks);
      for (uint32_t j = 0; j < kWritesPerRound; j++) model[pl.blocks[j]] = {round, j};
    }
    total_confirmed += last + 1 - next_round;
    // The round after the last confirmed one may have landed in part.
    RoundPlan maybe = plan(seed, last + 1, nblocks);
    // Degraded: nothing to resync (the guard's replay made the stripes consistent).
    if (!degraded && !rig.wait([&] { return g->redundancy_claimed(); }, 120)) {
      fprintf(stderr, "kill %d: resync did not finish\n", k);
      failures++;
      break;
    }
    AlignedBuf all(v.size_bytes()), want(4096), alt(4096);
    if (rig.io(v, IoRequest::Read, 0, v.size_bytes(), all.data()) != 0) {
      fprintf(stderr, "kill %d: read failed\n", k);
      failures++;
      break;
    }
    for (uint64_t b = 0; b < nblocks && !failures; b++) {
      auto it = model.find(b);
      if (it == model.end()) pattern(want.data(), seed, 0, 0, b);
      else pattern(want.data(), seed, it->second.first, it->second.second, b);
      if (memcmp(all.data() + b * 4096, want.data(), 4096) == 0) continue;
      auto m = std::find(maybe.blocks.begin(), maybe.blocks.end(), b);
      if (m != maybe.blocks.end()) {
        pattern(alt.data(), seed, last + 1, uint32_t(m - maybe.blocks.begin()), b);
        if (memcmp(all.data() + b * 4096, alt.data(), 4096) == 0) continue;
      }
      const uint64_t st = b * 4096 / v.geometry().stripe_data_bytes();
      const uint32_t role = uint32_t(b * 4096 % v.geometry().stripe_data_bytes() / v.geometry().strip_bytes);
      fprintf(stderr,
              "kill %d: block %llu (stripe %llu, data role %u on member %u) holds neither its flushed content nor "
              "the unfinished round's\n",
              k, (unsigned long long)b, (unsigned long long)st, role, v.geometry().data_member(st, role));
      failures++;
      // What it holds instead: an older write read back (a stale copy), or
      // bytes no round wrote.
      const auto exp = it == model.end() ? std::make_pair(uint64_t(0), 0u) : it->second;
      fprintf(stderr, "  expected: round %llu write %u (the last confirmed round: %llu)\n",
              (unsigned long long)exp.first, exp.second, (unsigned long long)last);
      bool known = false;
      for (uint64_t rr = 0; rr <= last + 1; rr++)
        for (uint32_t j = 0; j < kWritesPerRound; j++) {
          pattern(alt.data(), seed, rr, j, b);
          if (memcmp(all.data() + b * 4096, alt.data(), 4096) == 0)
            known = true, fprintf(stderr, "  holds: round %llu write %u\n", (unsigned long long)rr, j);
        }
      if (!known) fprintf(stderr, "  holds: bytes no round wrote\n");
    }
    // Take the unfinished round's outcome into the model as it landed.
    for (uint32_t j = 0; j < kWritesPerRound; j++) {
      uint64_t b = maybe.blocks[j];
      pattern(alt.data(), seed, last + 1, j, b);
      if (memcmp(all.data() + b * 4096, alt.data(), 4096) == 0) model[b] = {last + 1, j};
    }
    next_round = last + 2;
    if (!failures && !degraded) {
      rig.clear_events();
      g->start_scrub(false, &err);
      rig.wait([&] { return rig.find_event(GroupEvent::ScrubFinished); });
      if (g->last_scrub().mismatched_stripes) {
        fprintf(stderr, "kill %d: scrub found %llu mismatched stripes after resync\n", k,
                (unsigned long long)g->last_scrub().mismatched_stripes);
        failures++;
      }
    }
    // Every other time leave it "crashed" (no clean stop) for the next child.
    if (k % 2 == 0) g->stop(&err);
    g.reset();
    printf("kill %2d: rounds confirmed so far %llu%s%s\n", k, (unsigned long long)total_confirmed,
           note.empty() ? "" : " | ", note.c_str());
  }
  printf("crash test: %d kills, seed %llu, %s, %u members missing%s, %llu rounds flushed\n", kills,
         (unsigned long long)seed, level_name(level), degraded, grouped ? " in each sub-group" : "",
         (unsigned long long)total_confirmed);
  if (copy_back) printf("copy-back: %llu of %d starts found the member on the replacement drive\n",
                        (unsigned long long)copy_backs_seen, kills);
  if (!failures && copy_back && copy_backs_seen == 0) {
    fprintf(stderr, "--copy-back: the member never reached the replacement drive in %d kills\n", kills);
    failures++;
  }
  if (!failures && kills >= 4 && total_confirmed == 0) {
    fprintf(stderr, "no round's flush completed in %d kills: flushed writes were never checked\n", kills);
    failures++;
  }
  if (failures)
    fprintf(stderr,
            "  replay: %s%s\n  (not exactly replayable: the same seed gives the same write patterns and kill delays, but\n"
            "   how far the child got when a delay ends depends on timing, so the replay may kill it elsewhere)\n",
            replay_command(argv[0], {"--kills", std::to_string(kills), "--seed", std::to_string(seed), "--level",
                                     level_name(level), "--degraded", std::to_string(degraded)}).c_str(),
            copy_back ? " --copy-back" : "");
  printf("%d passed, %d failed\n", failures ? 0 : 1, failures ? 1 : 0);
  return failures ? 1 : 0;
}
