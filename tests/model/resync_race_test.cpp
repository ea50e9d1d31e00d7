// Re-issued writes meeting a resync, many rounds over. After an unclean
// stop the restarted daemon resyncs the dirty regions on its background
// reactor while the kernel re-issues the writes and flushes that were in
// flight (ublk USER_RECOVERY with REISSUE) on every queue's reactor at
// once; the housekeeping thread keeps kicking the background work. This
// test drives exactly that interleaving (seen in the VM lane as a reactor
// calling a null function pointer: a task queued twice):
//   round: assemble after an unclean stop (resync starts) | writer threads on
//   reactors 1..R-1 write 4 KiB blocks into the dirty regions, with flushes
//   | a kicker thread kicks the background work without pause | reactor 0
//   (this thread) runs the resync and writes too | wait for both | check
//   every block against the model | drop the group without a clean stop.
// At the end a clean assembly, resync and scrub must find no mismatch.
//
//   resync_race_test [--rounds N] [--seed S]
#include <getopt.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "engine/group/group.h"
#include "engine/sync_io.h"
#include "tests/support/group_rig.h"

using namespace gpuraid;
using namespace gpuraid::test;

namespace {

constexpr uint32_t kDrives = 5;
constexpr uint32_t kReactors = 3;  // 0: background + this thread; 1, 2: writer threads
constexpr uint32_t kDepth = 16;    // writes in flight per thread
constexpr uint32_t kWritesPerThread = 300;
constexpr uint32_t kFlushEvery = 24;

// Thread t owns the 4 KiB blocks b with b % kReactors == t: threads never
// write the same block, but constantly share stripes (and their locks).
struct Writer {
  Reactor* r = nullptr;
  Volume* v = nullptr;
  uint32_t t = 0;
  uint64_t nblocks = 0;
  std::vector<uint8_t>* model = nullptr;
  std::mt19937_64 rng;
  int error = 0;

  struct Slot {
    IoRequest req;
    AlignedBuf buf{4096};
    uint64_t block = 0;
    bool busy = false;
    Writer* w = nullptr;
  };
  std::vector<Slot> slots = std::vector<Slot>(kDepth);
  IoRequest flush;
  bool flushing = false;
  uint32_t issued = 0, done = 0;

  static void on_write(IoRequest* q) {
    Slot* s = static_cast<Slot*>(q->ctx);
    Writer* w = s->w;
    if (q->result) w->error = q->result;
    else memcpy(w->model->data() + s->block * 4096, s->buf.data(), 4096);  // acknowledged: now the model's
    s->busy = false;
    w->done++;
  }
  static void on_flush(IoRequest* q) {
    Writer* w = static_cast<Writer*>(q->ctx);
    if (q->result) w->error = q->result;
    w->flushing = false;
  }

  bool finished() const { return issued == kWritesPerThread && done == issued && !flushing; }

  // Issues what the window allows; true when something was issued.
  bool pump() {
    bool any = false;
    for (Slot& s : slots) {
      if (s.busy || issued == kWritesPerThread || flushing) continue;
      s.w = this;
      s.block = (rng() % (nblocks / kReactors)) * kReactors + t;
      fill_random(s.buf.data(), 4096, rng());
      s.req = IoRequest{};
      s.req.op = IoRequest::Write;
      s.req.offset = s.block * 4096;
      s.req.length = 4096;
      s.req.buf = s.buf.data();
      s.req.done = on_write;
      s.req.ctx = &s;
      s.busy = true;
      if (int e = v->submit(*r, &s.req)) {
        error = e;
        return false;
      }
      issued++;
      any = true;
      if (issued % kFlushEvery == 0) {
        flush = IoRequest{};
        flush.op = IoRequest::Flush;
        flush.done = on_flush;
        flush.ctx = this;
        flushing = true;
        if (int e = v->submit(*r, &flush)) error = e;
      }
    }
    return any;
  }
};

// Its writes, then it keeps polling its reactor until the round ends: as in
// gpuraidd, a reactor is polled while its volume has work anywhere (the
// write-hole guard's flush round on this reactor may be what another
// reactor's waiting writes need; before, a round hung now and then with a
// flush issued here and never reaped).
void writer_thread(Writer* w, const std::atomic<bool>* round_over) {
  Reactor::set_current(w->r);
  while (!w->finished() && !w->error) {
    w->pump();
    w->r->poll(true, 5);
  }
  while (!round_over->load()) w->r->poll(true, 5);
  // Let its completions run before the reactor changes hands.
  for (int i = 0; i < 20; i++) w->r->poll(false);
}

bool check_all(GroupRig& rig, Volume& v, const std::vector<uint8_t>& model, const char* when) {
  AlignedBuf b(1u << 20);
  for (uint64_t off = 0; off < v.size_bytes(); off += b.size()) {
    const uint64_t len = std::min<uint64_t>(b.size(), v.size_bytes() - off);
    if (int e = rig.io(v, IoRequest::Read, off, len, b.data())) {
      fprintf(stderr, "%s: read at %llu failed: %s\n", when, (unsigned long long)off, strerror(-e));
      return false;
    }
    if (memcmp(b.data(), model.data() + off, len) != 0) {
      for (uint64_t i = 0; i < len; i += 4096)
        if (memcmp(b.data() + i, model.data() + off + i, 4096) != 0) {
          fprintf(stderr, "%s: block %llu differs from the last acknowledged write\n", when,
                  (unsigned long long)((off + i) / 4096));
          break;
        }
      return false;
    }
  }
  return true;
}

std::vector<std::unique_ptr<Drive>> all_drives(GroupRig& rig) { return rig.open_range(0, kDrives); }

}  // namespace

int main(int argc, char** argv) {
  int rounds = 20;
  uint64_t seed = 1;
  static option opts[] = {{"rounds", required_argument, nullptr, 'r'},
                          {"seed", required_argument, nullptr, 's'},
                          {nullptr, 0, nullptr, 0}};
  for (int c; (c = getopt_long(argc, argv, "", opts, nullptr)) != -1;) {
    if (c == 'r') rounds = atoi(optarg);
    else if (c == 's') seed = strtoull(optarg, nullptr, 10);
    else return 2;
  }
  GroupRig rig(kDrives, 10u << 20, kReactors);
  std::string err, note;
  std::vector<uint8_t> model;
  {
    GroupConfig cfg;
    cfg.level = Level::R5;
    cfg.strip_bytes = 16384;
    cfg.bitmap_region_bytes = 256u << 10;  // many small regions: many resync steps
    cfg.assume_zeroed = true;
    auto g = rig.create(cfg, 0, kDrives, &err);
    if (!g) {
      fprintf(stderr, "create: %s\n", err.c_str());
      return 1;
    }
    model.assign(g->volume().size_bytes(), 0);
    // Dirty every region, then stop uncleanly (drop without stop()).
    AlignedBuf b(256u << 10);
    std::mt19937_64 rng(seed);
    for (uint64_t off = 0; off < model.size(); off += b.size()) {
      fill_random(b.data(), b.size(), rng());
      if (rig.io(g->volume(), IoRequest::Write, off, b.size(), b.data()) != 0) return 1;
      memcpy(model.data() + off, b.data(), b.size());
    }
  }
  for (int round = 0; round < rounds; round++) {
    auto g = rig.assemble(all_drives(rig), &note, &err);
    if (!g) {
      fprintf(stderr, "round %d: assemble: %s\n", round, err.c_str());
      return 1;
    }
    Volume& v = g->volume();
    std::atomic<bool> stop_kicks{false}, round_over{false};
    std::thread kicker([&] {
      while (!stop_kicks.load()) g->pause_scrub(false);  // each call kicks the background work
    });
    std::vector<Writer> writers(kReactors);
    std::vector<std::thread> threads;
    for (uint32_t t = 0; t < kReactors; t++) {
      Writer& w = writers[t];
      w.r = &rig.reactor(t);
      w.v = &v;
      w.t = t;
      w.nblocks = v.size_bytes() / 4096;
      w.model = &model;
      w.rng.seed(seed * 1000003 + uint64_t(round) * 31 + t);
      if (t) threads.emplace_back(writer_thread, &w, &round_over);
    }
    // This thread owns reactor 0: it runs the resync and writes beside it.
    Writer& w0 = writers[0];
    Reactor::set_current(w0.r);
    const bool resynced = rig.wait(
        [&] {
          w0.pump();
          return w0.finished() && !g->resync_progress().running;
        },
        120);
    round_over = true;
    for (auto& th : threads) th.join();
    stop_kicks = true;
    kicker.join();
    for (const Writer& w : writers)
      if (w.error) {
        fprintf(stderr, "round %d: a write or flush failed: %s\n", round, strerror(-w.error));
        return 1;
      }
    if (!resynced) {
      fprintf(stderr, "round %d: resync or writes did not finish\n", round);
      return 1;
    }
    if (!check_all(rig, v, model, ("round " + std::to_string(round)).c_str())) return 1;
    // Dropped without stop(): the regions written this round stay dirty.
  }
  auto g = rig.assemble(all_drives(rig), &note, &err);
  if (!g || !rig.wait([&] { return !g->resync_progress().running; }) || !check_all(rig, g->volume(), model, "end"))
    return 1;
  if (!g->start_scrub(false, &err) || !rig.wait([&] { return !g->scrub_progress().running; })) {
    fprintf(stderr, "scrub: %s\n", err.c_str());
    return 1;
  }
  if (g->last_scrub().mismatched_stripes) {
    fprintf(stderr, "scrub found %llu mismatched stripes\n", (unsigned long long)g->last_scrub().mismatched_stripes);
    return 1;
  }
  printf("resync_race_test: %d rounds of re-issued writes and flushes during resync on %u reactors: data and parity hold\n",
         rounds, kReactors);
  return 0;
}
