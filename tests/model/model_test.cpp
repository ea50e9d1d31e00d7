// The model test: seeded, randomized reads, writes and flushes of random
// sizes and offsets against an in-memory model of the volume, on real
// io_uring over mem and file drives, with member faults injected at random
// moments (EIO on read/write, short transfers, vanishing, faults armed to
// strike inside a request, latency), up to what each level survives. Every
// read is compared with the model; a failure prints the op it failed at and
// one command line that replays the failing episode.
//
//   model_test [--ops N] [--seconds S] [--seed X] [--episode E] [--parity cpu|reference|kernel-cpu]
//              [--deterministic] [--trace FILE] [--canary-read OP]
//
// Two ways to run:
// - threaded (default): one thread per reactor, as the daemon runs. Thread
//   interleaving, the order in which io_uring completes member I/O (file
//   drives above all), wall-clock latency faults and fault arming racing
//   the other reactor all vary from run to run, so a failure's replay line
//   runs the same ops generator and fault plan but may not fail the same way.
// - --deterministic: one thread drives every reactor in turn (issue, then
//   one lockstep poll: EngineConfig::lockstep), faults are armed from that
//   thread, member I/O completes in issue order and injected latency runs
//   on a logical clock. The same arguments give the same ops, faults and
//   outcomes, so a failure replays exactly (same episode, same op); each
//   episode prints a digest of its whole record (model_trace.h), --trace
//   writes the record. Not covered by it: kernel-cpu parity (batches on a
//   timer; refused), wall-clock time itself (--seconds decides how many
//   rounds run, not what one does). The model test runs no background work
//   (no groups, so no rebuild, resync or idle timers).
//
// --canary-read OP flips one byte of the first read numbered OP or later
// before it is checked, as a broken engine would return it: the run must
// fail there (tests/model/model_replay_test.cpp checks that it does and that
// the printed line reproduces it).
//
// In-flight requests never overlap each other, so the model is exact:
// a write's bytes enter the model when it is acknowledged.
#include <getopt.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/model/model_trace.h"
#include "tests/support/replay_line.h"
#include "tests/support/test_array.h"
#ifdef GPURAID_HAVE_KERNEL_CPU
#include "kernels/kernel_cpu_backend.h"
#endif

using namespace gpuraid;
using namespace gpuraid::test;

namespace {

constexpr uint64_t kNoCanary = std::numeric_limits<uint64_t>::max();

struct Options {
  uint64_t total_ops = 200000, seed = 1;
  double seconds = 0;
  int only = -1;
  std::string parity = "cpu";
  bool deterministic = false;
  std::string trace_path;
  uint64_t canary_read = kNoCanary;
};

struct Episode {
  Level level;
  uint32_t members, parity, strip;
  DriveType drive;
  uint32_t reactors;
  uint32_t subgroups = 0;  // raid50/60
  DeclusteredShape declustered = {};  // draid5/6
};

std::vector<Episode> episodes() {
  std::vector<Episode> e;
  const DriveType mem = DriveType::Mem, file = DriveType::File;
  e.push_back({Level::R0, 3, 0, 16384, mem, 2});
  e.push_back({Level::R1, 3, 0, 4096, mem, 2});
  e.push_back({Level::R10, 4, 0, 16384, file, 1});
  e.push_back({Level::R10, 6, 0, 8192, mem, 2});
  e.push_back({Level::R5, 3, 0, 4096, mem, 1});
  e.push_back({Level::R5, 4, 0, 16384, file, 2});
  e.push_back({Level::R5, 8, 0, 4096, mem, 2});
  e.push_back({Level::R5, 5, 0, 65536, mem, 2});
  e.push_back({Level::R6, 4, 0, 8192, mem, 1});
  e.push_back({Level::R6, 6, 0, 16384, mem, 2});
  e.push_back({Level::R6, 10, 0, 4096, file, 2});
  e.push_back({Level::EC, 4, 1, 8192, mem, 2});
  e.push_back({Level::EC, 7, 3, 4096, mem, 2});
  e.push_back({Level::EC, 8, 4, 16384, file, 1});
  e.push_back({Level::EC, 12, 2, 4096, mem, 2});
  // Faults up to one member per sub-group (raid50), two (raid60).
  e.push_back({Level::R50, 6, 0, 8192, mem, 2, 2});
  e.push_back({Level::R50, 9, 0, 4096, file, 1, 3});
  e.push_back({Level::R60, 8, 0, 16384, mem, 2, 2});
  // Declustered: stripes of D + P over more members, spare room in every row.
  e.push_back({Level::DR5, 7, 0, 8192, mem, 2, 0, {4, 1}});
  e.push_back({Level::DR6, 12, 0, 4096, mem, 2, 0, {3, 2}});
  e.push_back({Level::DR6, 9, 0, 16384, file, 1, 0, {4, 1}});
  return e;
}

std::string describe(const Episode& e) {
  return std::string(level_name(e.level)) + " n=" + std::to_string(e.members) + " m=" +
         std::to_string(e.parity) + " strip=" + std::to_string(e.strip / 1024) + "K drive=" +
         drive_type_name(e.drive) + " reactors=" + std::to_string(e.reactors) +
         (e.subgroups ? " subgroups=" + std::to_string(e.subgroups) : "") +
         (e.declustered.data ? " data=" + std::to_string(e.declustered.data) + " spares=" +
                                   std::to_string(e.declustered.spares) : "");
}

struct Shared {
  std::mutex mu;
  std::vector<uint8_t> model;
  std::set<std::pair<uint64_t, uint64_t>> in_flight;  // [off, end)
  std::atomic<uint64_t> ops_done{0};
  std::atomic<uint64_t> next_op{0};  // requests are numbered in issue order
  std::atomic<bool> failed{false};
  std::string failure;
  uint64_t faults_armed_mask = 0;
  uint32_t faults_armed = 0;
  RunTrace* trace = nullptr;
  uint64_t canary_read = kNoCanary;
  std::atomic<bool> canary_fired{false};

  bool reserve(uint64_t off, uint64_t len) {
    std::lock_guard<std::mutex> g(mu);
    auto it = in_flight.lower_bound({off, 0});
    if (it != in_flight.end() && it->first < off + len) return false;
    if (it != in_flight.begin() && std::prev(it)->second > off) return false;
    in_flight.insert({off, off + len});
    return true;
  }
  void release(uint64_t off, uint64_t len) {
    std::lock_guard<std::mutex> g(mu);
    in_flight.erase({off, off + len});
  }
  void fail(const std::string& why) {
    std::lock_guard<std::mutex> g(mu);
    if (!failed.exchange(true)) failure = why;
  }
  // The canary strikes once: the first read numbered canary_read or later.
  bool canary_strikes(uint64_t op) { return op >= canary_read && !canary_fired.exchange(true); }
};

struct Slot {
  IoRequest req;
  uint8_t* buf = nullptr;
  bool busy = false;
  uint64_t op = 0;  // this request's number
  uint32_t reactor = 0;
  Shared* sh = nullptr;
  uint64_t* completed = nullptr;
};

constexpr uint32_t kMaxBlocks = 64;  // 256 KiB per request at most
constexpr uint32_t kDepth = 8;

const char* op_name(IoRequest::Op op) {
  return op == IoRequest::Read ? "read" : op == IoRequest::Write ? "write" : "flush";
}

// "op #N (read offset O length L, reactor R)": where a failure happened.
std::string request_text(const Slot& s) {
  const IoRequest& r = s.req;
  return "op #" + std::to_string(s.op) + " (" + op_name(r.op) + " offset " + std::to_string(r.offset) + " length " +
         std::to_string(r.length) + ", reactor " + std::to_string(s.reactor) + ")";
}

void on_done(IoRequest* r) {
  Slot* s = static_cast<Slot*>(r->ctx);
  Shared* sh = s->sh;
  bool matched = true;
  if (r->op == IoRequest::Read && r->result == 0 && sh->canary_strikes(s->op)) {
    s->buf[r->length / 2] ^= 0x5a;
    sh->trace->record('K', {s->op, r->offset + r->length / 2});
  }
  if (r->op != IoRequest::Flush) {
    if (r->result != 0) {
      sh->fail("request failed with " + std::to_string(r->result) + " at " + request_text(*s) +
               " (within redundancy: must succeed)");
    } else {
      std::lock_guard<std::mutex> g(sh->mu);
      if (r->op == IoRequest::Write) {
        memcpy(sh->model.data() + r->offset, s->buf, r->length);
      } else if (memcmp(sh->model.data() + r->offset, s->buf, r->length) != 0) {
        matched = false;
        size_t i = 0;
        while (sh->model[r->offset + i] == s->buf[i]) i++;
        if (!sh->failed.exchange(true))
          sh->failure = "read mismatch at byte " + std::to_string(r->offset + i) + " in " + request_text(*s);
      }
    }
    sh->release(r->offset, r->length);
  } else if (r->result != 0) {
    sh->fail("flush failed with " + std::to_string(r->result) + " at " + request_text(*s));
  }
  sh->trace->record('C', {s->op, uint64_t(r->result < 0 ? -r->result : r->result), matched});
  s->busy = false;
  ++*s->completed;
  sh->ops_done++;
}

// Arms one random fault on a random healthy member, within what the level
// survives, after request `op` was issued.
void maybe_inject(TestArray& a, Shared& sh, std::mt19937_64& rng, uint32_t budget, uint64_t op) {
  const Geometry& g = a.vol().geometry();
  std::lock_guard<std::mutex> lk(sh.mu);
  if (sh.faults_armed >= budget) return;
  uint32_t m = uint32_t(rng() % g.members);
  if (sh.faults_armed_mask >> m & 1) return;
  if (!g.survives(sh.faults_armed_mask | 1ull << m)) return;
  FaultInjector& f = a.drive(m).faults();
  const uint32_t kind = uint32_t(rng() % 7);
  uint32_t countdown = 0;
  switch (kind) {
    case 6: {  // unreadable blocks (a medium error): read around and written back, or the member fails
      const uint64_t blocks = g.member_data_bytes / 4096;
      countdown = uint32_t(rng() % blocks);  // (the trace's last field: the first block)
      f.set_unreadable(a.vol().data_offset() + uint64_t(countdown) * 4096, 4096 * (1 + rng() % 4));
      break;
    }
    case 0: f.arm(FaultInjector::kFailReads); break;
    case 1: f.arm(FaultInjector::kFailWrites); break;
    case 2: f.arm(FaultInjector::kFailReads | FaultInjector::kFailWrites); break;
    case 3: f.arm(FaultInjector::kVanished); break;
    case 4: f.arm(FaultInjector::kShortTransfer); break;
    default:
      countdown = uint32_t(rng() % 6);
      f.arm_after(countdown, FaultInjector::kVanished);
      break;
  }
  sh.faults_armed_mask |= 1ull << m;
  sh.faults_armed++;
  sh.trace->record('F', {op, m, kind, countdown});
}

// The requests of one reactor: kDepth slots kept busy with random requests
// until `ops` have completed. Whoever drives it calls issue() and polls
// the reactor: its own thread (threaded runs) or the one thread of a
// deterministic run, in turn with the other reactors.
class Worker {
 public:
  Worker(TestArray& a, Shared& sh, uint32_t rid, uint64_t seed, uint64_t ops, uint32_t budget, uint64_t fault_every)
      : a_(a), sh_(sh), r_(a.reactor(rid)), rid_(rid), rng_(seed * 7919 + rid), ops_(ops), budget_(budget),
        fault_every_(fault_every), slots_(kDepth) {
    blocks_ = a.vol().size_bytes() / 4096;
    stripe_blocks_ = a.vol().geometry().stripe_data_bytes() / 4096;
    seq_ = rng_() % blocks_;
    for (uint32_t i = 0; i < kDepth; i++) {
      slots_[i].sh = &sh;
      slots_[i].completed = &completed_;
      slots_[i].reactor = rid;
      if (i % 2 == 0) {
        slots_[i].buf = r_.pool().reserve(kMaxBlocks * 4096);
      } else {  // half the slots use buffers outside the arena
        heap_.push_back(std::make_unique<AlignedBuf>(kMaxBlocks * 4096));
        slots_[i].buf = heap_.back()->data();
      }
    }
  }
  Reactor& reactor() { return r_; }
  // No more requests to issue: enough completed, or the episode failed.
  bool finished() const { return completed_ >= ops_ || sh_.failed; }
  bool idle() const {
    return std::none_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.busy; });
  }

  // Fills the free slots with new requests (and now and then arms a fault
  // or changes a member's latency).
  void issue() {
    for (Slot& s : slots_) {
      if (s.busy || issued_ >= ops_ || sh_.failed) continue;
      IoRequest& q = s.req;
      q = IoRequest{};
      q.ctx = &s;
      q.done = on_done;
      uint32_t kind = uint32_t(rng_() % 100);
      if (kind < 3) {
        q.op = IoRequest::Flush;
      } else {
        q.op = kind < 50 ? IoRequest::Write : IoRequest::Read;
        uint64_t nb;
        switch (rng_() % 4) {
          case 0: nb = 1; break;
          case 1: nb = 1 + rng_() % 8; break;
          case 2: nb = std::min<uint64_t>(kMaxBlocks, stripe_blocks_ * (1 + rng_() % 2)); break;
          default: nb = 1 + rng_() % kMaxBlocks; break;
        }
        nb = std::min(nb, blocks_);
        uint64_t start;
        if (rng_() % 3 == 0) {  // sequential streams: the write merge path
          start = seq_ % blocks_;
          if (start + nb > blocks_) start = 0;
          seq_ = start + nb;
        } else {
          start = rng_() % (blocks_ - nb + 1);
        }
        q.offset = start * 4096;
        q.length = nb * 4096;
        q.fua = rng_() % 16 == 0;
        if (!sh_.reserve(q.offset, q.length)) continue;
        q.buf = s.buf;
        if (q.op == IoRequest::Write) fill_random(s.buf, q.length, rng_());
      }
      s.busy = true;
      s.op = sh_.next_op++;
      issued_++;
      sh_.trace->record('I', {s.op, rid_, uint64_t(q.op), q.offset, q.length, q.fua});
      std::string why;
      if (int rc = a_.vol().submit(r_, &q, &why); rc != 0) {
        s.busy = false;
        sh_.fail("submit refused a valid request, " + request_text(s) + ": " + why);
        return;
      }
      if (fault_every_ && rng_() % fault_every_ == 0) maybe_inject(a_, sh_, rng_, budget_, s.op);
      if (rng_() % 64 == 0) {
        const uint32_t m = uint32_t(rng_() % a_.vol().geometry().members), us = uint32_t(rng_() % 200);
        a_.drive(m).faults().set_latency_us(us);
        sh_.trace->record('L', {s.op, m, us});
      }
    }
  }

 private:
  TestArray& a_;
  Shared& sh_;
  Reactor& r_;
  uint32_t rid_;
  std::mt19937_64 rng_;
  uint64_t ops_;
  uint32_t budget_;
  uint64_t fault_every_;
  std::vector<Slot> slots_;
  std::vector<std::unique_ptr<AlignedBuf>> heap_;
  uint64_t blocks_ = 0, stripe_blocks_ = 0, seq_ = 0;
  uint64_t issued_ = 0, completed_ = 0;
};

// Threaded: one thread per reactor, each polling its own.
void drive_threaded(std::vector<std::unique_ptr<Worker>>& ws) {
  std::vector<std::thread> th;
  for (auto& w : ws)
    th.emplace_back([&w = *w] {
      while (!w.finished()) {
        w.issue();
        w.reactor().poll(true, 5);
      }
      while (!w.idle()) w.reactor().poll(true, 5);
    });
  for (auto& t : th) t.join();
}

// Deterministic: this thread gives every reactor a turn, in order, until
// all are done; each turn issues, then polls once (in lockstep).
void drive_lockstep(std::vector<std::unique_ptr<Worker>>& ws) {
  for (bool busy = true; busy;) {
    busy = false;
    for (auto& w : ws) {
      if (!w->finished()) w->issue();
      w->reactor().poll(false);
      busy |= !w->finished() || !w->idle();
    }
  }
}

struct EpisodeRun {
  const Episode& ep;
  uint32_t index;
  uint64_t seed, ops;
  const Options& opt;
  FILE* trace_out;
  std::string replay;  // the command line that replays this episode
};

bool run_episode(const EpisodeRun& run, uint64_t* digest) {
  const Episode& e = run.ep;
  const uint64_t seed = run.seed, ops = run.ops;
  ArrayOptions o;
  o.level = e.level;
  o.members = e.members;
  o.parity = e.parity;
  o.subgroups = e.subgroups;
  o.declustered = e.declustered;
  o.strip = e.strip;
  o.member_bytes = std::max<uint64_t>(48 * e.strip, 1u << 20);
  o.drive_type = e.drive;
  o.reactors = e.reactors;
  o.arena_bytes = 16u << 20;
  o.lockstep = run.opt.deterministic;
  if (run.opt.parity == "reference") o.parity_factory = [] { return make_reference_backend(); };
#ifdef GPURAID_HAVE_KERNEL_CPU
  if (run.opt.parity == "kernel-cpu") o.parity_factory = [] { return make_kernel_cpu_backend(); };
#endif
  TestArray a(o);
  RunTrace trace(run.index, run.trace_out);
  Shared sh;
  sh.trace = &trace;
  sh.canary_read = run.opt.canary_read;
  sh.model.assign(a.vol().size_bytes(), 0);
  // Start from known contents so that reads of never-written blocks are checked too.
  {
    AlignedBuf init(a.vol().size_bytes());
    fill_random(init.data(), init.size(), seed ^ 0x5eed);
    if (a.write(0, init.size(), init.data()) != 0) {
      fprintf(stderr, "initial fill failed\n");
      return false;
    }
    memcpy(sh.model.data(), init.data(), init.size());
  }
  // raid50/60: what each sub-group survives, in every sub-group.
  const uint32_t budget = a.vol().geometry().guaranteed_redundancy() * a.vol().geometry().subgroups;
  // About four chances per tolerated failure over the episode: faults strike
  // at random moments, usually early, sometimes late.
  const uint64_t fault_every = budget ? std::max<uint64_t>(1, ops / (4 * budget)) : 0;
  std::vector<std::unique_ptr<Worker>> ws;
  for (uint32_t r = 0; r < e.reactors; r++)
    ws.push_back(std::make_unique<Worker>(a, sh, r, seed, ops / e.reactors, budget, fault_every));
  if (run.opt.deterministic) drive_lockstep(ws);
  else drive_threaded(ws);
  ws.clear();
  // Final sweep: every block in one read, degraded where members failed.
  if (!sh.failed) {
    for (uint32_t m = 0; m < e.members; m++) a.drive(m).faults().set_latency_us(0);
    AlignedBuf got(a.vol().size_bytes());
    if (a.read(0, got.size(), got.data()) != 0) {
      sh.fail("final read failed");
    } else if (memcmp(got.data(), sh.model.data(), got.size()) != 0) {
      size_t i = 0;
      while (got.data()[i] == sh.model[i]) i++;
      sh.fail("final read differs from the model at byte " + std::to_string(i) + " (after op #" +
              std::to_string(sh.next_op.load() - 1) + ")");
    }
  }
  const uint64_t unexpected = a.vol().failed_mask() & ~sh.faults_armed_mask;
  if (!sh.failed && unexpected) sh.fail("members failed without a fault: mask " + std::to_string(unexpected));
  const auto& st = a.vol().stats();
  trace.record('E', {a.vol().failed_mask(), st.rmw_writes, st.rcw_writes, st.full_stripe_writes,
                     st.degraded_writes, st.degraded_reads, st.merged_writes});
  for (uint32_t m = 0; m < e.members; m++) {
    DriveTotals t = a.engine().drive_totals(&a.drive(m));
    trace.record('D', {m, t.reads, t.writes, t.errors});
  }
  *digest = trace.digest();
  if (sh.failed) {
    fprintf(stderr, "MODEL FAILURE: %s\n  episode %u: %s\n  replay: %s\n", sh.failure.c_str(), run.index,
            describe(e).c_str(), run.replay.c_str());
    if (run.opt.deterministic)
      fprintf(stderr, "  (deterministic run: the replay fails the same way, at the same op)\n");
    else
      fprintf(stderr,
              "  (threaded run: this may not reproduce exactly; thread interleaving, io_uring completion order\n"
              "   and wall-clock latency faults differ from run to run, so the replay may fail at another op or\n"
              "   not at all. Add --deterministic for an exactly replayable run of this seed: a different schedule\n"
              "   of the same ops generator, not this run's)\n");
    return false;
  }
  printf("  %-48s ops=%-7llu faults=%u failed_mask=0x%llx rmw=%llu rcw=%llu full=%llu degraded_w=%llu degraded_r=%llu merged=%llu corrected=%llu",
         describe(e).c_str(), (unsigned long long)sh.ops_done.load(), sh.faults_armed,
         (unsigned long long)a.vol().failed_mask(), (unsigned long long)st.rmw_writes,
         (unsigned long long)st.rcw_writes, (unsigned long long)st.full_stripe_writes,
         (unsigned long long)st.degraded_writes, (unsigned long long)st.degraded_reads,
         (unsigned long long)st.merged_writes, (unsigned long long)st.corrected_reads);
  if (run.opt.deterministic) printf(" digest=%016llx", (unsigned long long)*digest);
  printf("\n");
  return true;
}

// The arguments that rerun episode i alone with per-episode seed s: main()
// gives episode i of round r the seed --seed + 1000 r + i, so --seed s - i.
std::vector<std::string> replay_args(const Options& opt, uint32_t i, uint64_t s) {
  std::vector<std::string> v = {"--seed", std::to_string(s - i), "--episode", std::to_string(i), "--ops",
                                std::to_string(opt.total_ops), "--parity", opt.parity};
  if (opt.deterministic) v.push_back("--deterministic");
  if (opt.canary_read != kNoCanary) v.insert(v.end(), {"--canary-read", std::to_string(opt.canary_read)});
  return v;
}

const char* kUsage =
    "usage: model_test [--ops N] [--seconds S] [--seed X] [--episode E] [--parity cpu|reference|kernel-cpu]\n"
    "                  [--deterministic] [--trace FILE] [--canary-read OP]\n"
    "  --ops N            requests over all episodes (each runs N/18, at least 2000)\n"
    "  --seconds S        repeat rounds of the episodes (new seeds) until S seconds have passed\n"
    "  --episode E        run episode E alone (0..20)\n"
    "  --deterministic    one thread drives every reactor in lockstep: exactly replayable\n"
    "  --trace FILE       write every request, completion and fault (see tests/model/model_trace.h)\n"
    "  --canary-read OP   corrupt one byte of the first read numbered OP or later (the run must fail)\n";

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  static option opts[] = {{"ops", required_argument, nullptr, 'o'},         {"seconds", required_argument, nullptr, 's'},
                          {"seed", required_argument, nullptr, 'r'},        {"episode", required_argument, nullptr, 'e'},
                          {"parity", required_argument, nullptr, 'p'},      {"deterministic", no_argument, nullptr, 'd'},
                          {"trace", required_argument, nullptr, 't'},       {"canary-read", required_argument, nullptr, 'c'},
                          {nullptr, 0, nullptr, 0}};
  for (int c; (c = getopt_long(argc, argv, "", opts, nullptr)) != -1;) {
    switch (c) {
      case 'o': opt.total_ops = strtoull(optarg, nullptr, 10); break;
      case 's': opt.seconds = atof(optarg); break;
      case 'r': opt.seed = strtoull(optarg, nullptr, 10); break;
      case 'e': opt.only = atoi(optarg); break;
      case 'p': opt.parity = optarg; break;
      case 'd': opt.deterministic = true; break;
      case 't': opt.trace_path = optarg; break;
      case 'c': opt.canary_read = strtoull(optarg, nullptr, 10); break;
      default: fprintf(stderr, "%s", kUsage); return 2;
    }
  }
  const auto eps = episodes();
  if (optind < argc || opt.only >= int(eps.size()) || opt.parity.empty() ||
      (opt.parity != "cpu" && opt.parity != "reference" && opt.parity != "kernel-cpu")) {
    fprintf(stderr, "%s", kUsage);
    return 2;
  }
#ifndef GPURAID_HAVE_KERNEL_CPU
  if (opt.parity == "kernel-cpu") {
    fprintf(stderr, "this build has no kernel-cpu backend\n");
    return 2;
  }
#endif
  if (opt.deterministic && opt.parity == "kernel-cpu") {
    fprintf(stderr, "--deterministic needs a parity backend that completes inside submit (cpu or reference): "
                    "kernel-cpu batches jobs on a timer\n");
    return 2;
  }
  FILE* trace_out = nullptr;
  if (!opt.trace_path.empty() && !(trace_out = fopen(opt.trace_path.c_str(), "w"))) {
    fprintf(stderr, "cannot write %s: %s\n", opt.trace_path.c_str(), strerror(errno));
    return 2;
  }
  const uint64_t per_episode = std::max<uint64_t>(2000, opt.total_ops / eps.size());
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t done = 0, passed = 0, failed = 0, run_digest = 0;
  printf("model test: seed %llu, %llu ops per episode, parity backend %s%s\n", (unsigned long long)opt.seed,
         (unsigned long long)per_episode, opt.parity.c_str(), opt.seconds > 0 ? ", time-bounded" : "");
  if (opt.deterministic)
    printf("  deterministic: one thread drives every reactor in lockstep, member I/O completes in issue order,\n"
           "  latency faults run on a logical clock: same arguments, same ops, faults and outcomes (digest)\n");
  else
    printf("  threaded: one thread per reactor; thread interleaving, io_uring completion order and latency\n"
           "  faults follow real time, so a run is not exactly replayable (--deterministic is)\n");
  if (opt.canary_read != kNoCanary)
    printf("  CANARY: the first read numbered %llu or later gets one byte flipped: this run must fail\n",
           (unsigned long long)opt.canary_read);
  for (uint64_t round = 0;; round++) {
    for (uint32_t i = 0; i < eps.size(); i++) {
      if (opt.only >= 0 && uint32_t(opt.only) != i) continue;
      const uint64_t s = opt.seed + round * 1000 + i;
      EpisodeRun run{eps[i], i, s, per_episode, opt, trace_out, replay_command(argv[0], replay_args(opt, i, s))};
      uint64_t digest = 0;
      if (run_episode(run, &digest)) passed++;
      else failed++;
      run_digest = run_digest * 0x100000001b3ull ^ digest;
      done += per_episode;
    }
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (failed || opt.seconds <= 0 || el >= opt.seconds) break;
  }
  if (trace_out) fclose(trace_out);
  double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printf("model test: %llu ops in %.1f s\n", (unsigned long long)done, el);
  if (opt.deterministic) printf("run digest %016llx\n", (unsigned long long)run_digest);
  printf("%llu passed, %llu failed\n", (unsigned long long)passed, (unsigned long long)failed);
  return failed ? 1 : 0;
}
