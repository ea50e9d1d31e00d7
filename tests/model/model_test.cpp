// The model test: seeded, randomized reads, writes and flushes of random
// sizes and offsets against an in-memory model of the volume, on real
// io_uring over mem and file drives, with member faults injected at random
// moments (EIO on read/write, short transfers, vanishing, faults armed to
// strike inside a request, latency), up to what each level survives. Every
// read is compared with the model; a failure prints the seed and the
// episode so that it can be replayed.
//
//   model_test [--ops N] [--seconds S] [--seed X] [--episode E] [--parity cpu|reference|kernel-cpu]
//
// In-flight requests never overlap each other, so the model is exact:
// a write's bytes enter the model when it is acknowledged.
#include <getopt.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/test_array.h"
#ifdef GPURAID_HAVE_KERNEL_CPU
#include "kernels/kernel_cpu_backend.h"
#endif

using namespace gpuraid;
using namespace gpuraid::test;

namespace {

struct Episode {
  Level level;
  uint32_t members, parity, strip;
  DriveType drive;
  uint32_t reactors;
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
  return e;
}

std::string describe(const Episode& e) {
  return std::string(level_name(e.level)) + " n=" + std::to_string(e.members) + " m=" +
         std::to_string(e.parity) + " strip=" + std::to_string(e.strip / 1024) + "K drive=" +
         drive_type_name(e.drive) + " reactors=" + std::to_string(e.reactors);
}

struct Shared {
  std::mutex mu;
  std::vector<uint8_t> model;
  std::set<std::pair<uint64_t, uint64_t>> in_flight;  // [off, end)
  std::atomic<uint64_t> ops_done{0};
  std::atomic<bool> failed{false};
  std::string failure;
  uint64_t faults_armed_mask = 0;
  uint32_t faults_armed = 0;

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
};

struct Slot {
  IoRequest req;
  uint8_t* buf = nullptr;
  bool busy = false;
  Shared* sh = nullptr;
  uint64_t* completed = nullptr;
};

constexpr uint32_t kMaxBlocks = 64;  // 256 KiB per request at most
constexpr uint32_t kDepth = 8;

void on_done(IoRequest* r) {
  Slot* s = static_cast<Slot*>(r->ctx);
  Shared* sh = s->sh;
  if (r->op != IoRequest::Flush) {
    if (r->result != 0) {
      sh->fail("request failed with " + std::to_string(r->result) + " at offset " + std::to_string(r->offset) +
               " length " + std::to_string(r->length) + " (within redundancy: must succeed)");
    } else {
      std::lock_guard<std::mutex> g(sh->mu);
      if (r->op == IoRequest::Write) {
        memcpy(sh->model.data() + r->offset, s->buf, r->length);
      } else if (memcmp(sh->model.data() + r->offset, s->buf, r->length) != 0) {
        size_t i = 0;
        while (sh->model[r->offset + i] == s->buf[i]) i++;
        if (!sh->failed.exchange(true))
          sh->failure = "read mismatch at byte " + std::to_string(r->offset + i) + " (request offset " +
                        std::to_string(r->offset) + " length " + std::to_string(r->length) + ")";
      }
    }
    sh->release(r->offset, r->length);
  } else if (r->result != 0) {
    sh->fail("flush failed with " + std::to_string(r->result));
  }
  s->busy = false;
  ++*s->completed;
  sh->ops_done++;
}

// Arms one random fault on a random healthy member, within what the level survives.
void maybe_inject(TestArray& a, Shared& sh, std::mt19937_64& rng, uint32_t budget) {
  const Geometry& g = a.vol().geometry();
  std::lock_guard<std::mutex> lk(sh.mu);
  if (sh.faults_armed >= budget) return;
  uint32_t m = uint32_t(rng() % g.members);
  if (sh.faults_armed_mask >> m & 1) return;
  if (!g.survives(sh.faults_armed_mask | 1ull << m)) return;
  FaultInjector& f = a.drive(m).faults();
  switch (rng() % 6) {
    case 0: f.arm(FaultInjector::kFailReads); break;
    case 1: f.arm(FaultInjector::kFailWrites); break;
    case 2: f.arm(FaultInjector::kFailReads | FaultInjector::kFailWrites); break;
    case 3: f.arm(FaultInjector::kVanished); break;
    case 4: f.arm(FaultInjector::kShortTransfer); break;
    default: f.arm_after(uint32_t(rng() % 6), FaultInjector::kVanished); break;
  }
  sh.faults_armed_mask |= 1ull << m;
  sh.faults_armed++;
}

void worker(TestArray& a, Shared& sh, uint32_t rid, uint64_t seed, uint64_t ops, uint32_t budget,
            uint64_t fault_every) {
  Reactor& r = a.reactor(rid);
  std::mt19937_64 rng(seed * 7919 + rid);
  const uint64_t blocks = a.vol().size_bytes() / 4096;
  const uint64_t stripe_blocks = a.vol().geometry().stripe_data_bytes() / 4096;
  std::vector<Slot> slots(kDepth);
  std::vector<std::unique_ptr<AlignedBuf>> heap;  // half the slots use buffers outside the arena
  uint64_t issued = 0, completed = 0, seq = rng() % blocks;
  for (uint32_t i = 0; i < kDepth; i++) {
    slots[i].sh = &sh;
    slots[i].completed = &completed;
    if (i % 2 == 0) {
      slots[i].buf = r.pool().reserve(kMaxBlocks * 4096);
    } else {
      heap.push_back(std::make_unique<AlignedBuf>(kMaxBlocks * 4096));
      slots[i].buf = heap.back()->data();
    }
  }
  while (completed < ops && !sh.failed) {
    for (auto& s : slots) {
      if (s.busy || issued >= ops) continue;
      IoRequest& q = s.req;
      q = IoRequest{};
      q.ctx = &s;
      q.done = on_done;
      uint32_t kind = uint32_t(rng() % 100);
      if (kind < 3) {
        q.op = IoRequest::Flush;
      } else {
        q.op = kind < 50 ? IoRequest::Write : IoRequest::Read;
        uint64_t nb;
        switch (rng() % 4) {
          case 0: nb = 1; break;
          case 1: nb = 1 + rng() % 8; break;
          case 2: nb = std::min<uint64_t>(kMaxBlocks, stripe_blocks * (1 + rng() % 2)); break;
          default: nb = 1 + rng() % kMaxBlocks; break;
        }
        nb = std::min(nb, blocks);
        uint64_t start;
        if (rng() % 3 == 0) {  // sequential streams: the write merge path
          start = seq % blocks;
          if (start + nb > blocks) start = 0;
          seq = start + nb;
        } else {
          start = rng() % (blocks - nb + 1);
        }
        q.offset = start * 4096;
        q.length = nb * 4096;
        q.fua = rng() % 16 == 0;
        if (!sh.reserve(q.offset, q.length)) continue;
        q.buf = s.buf;
        if (q.op == IoRequest::Write) fill_random(s.buf, q.length, rng());
      }
      s.busy = true;
      issued++;
      std::string why;
      if (int rc = a.vol().submit(r, &q, &why); rc != 0) {
        sh.fail("submit refused a valid request: " + why);
        return;
      }
      if (fault_every && rng() % fault_every == 0) maybe_inject(a, sh, rng, budget);
      if (rng() % 64 == 0) a.drive(uint32_t(rng() % a.vol().geometry().members)).faults().set_latency_us(uint32_t(rng() % 200));
    }
    r.poll(true, 5);
  }
  while (std::any_of(slots.begin(), slots.end(), [](const Slot& s) { return s.busy; })) r.poll(true, 5);
}

bool run_episode(const Episode& e, uint64_t seed, uint64_t ops, const std::string& parity) {
  ArrayOptions o;
  o.level = e.level;
  o.members = e.members;
  o.parity = e.parity;
  o.strip = e.strip;
  o.member_bytes = std::max<uint64_t>(48 * e.strip, 1u << 20);
  o.drive_type = e.drive;
  o.reactors = e.reactors;
  o.arena_bytes = 16u << 20;
  if (parity == "reference") o.parity_factory = [] { return make_reference_backend(); };
#ifdef GPURAID_HAVE_KERNEL_CPU
  if (parity == "kernel-cpu") o.parity_factory = [] { return make_kernel_cpu_backend(); };
#endif
  TestArray a(o);
  Shared sh;
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
  const uint32_t budget = a.vol().geometry().guaranteed_redundancy();
  // About four chances per tolerated failure over the episode: faults strike
  // at random moments, usually early, sometimes late.
  const uint64_t fault_every = budget ? std::max<uint64_t>(1, ops / (4 * budget)) : 0;
  std::vector<std::thread> th;
  for (uint32_t r = 0; r < e.reactors; r++)
    th.emplace_back(worker, std::ref(a), std::ref(sh), r, seed, ops / e.reactors, budget, fault_every);
  for (auto& t : th) t.join();
  // Final sweep: every block, in large and small reads, degraded where members failed.
  if (!sh.failed) {
    for (uint32_t r = 0; r < a.engine().reactor_count(); r++) a.drive(0).faults().set_latency_us(0);
    AlignedBuf got(a.vol().size_bytes());
    if (a.read(0, got.size(), got.data()) != 0) sh.fail("final read failed");
    else if (memcmp(got.data(), sh.model.data(), got.size()) != 0) sh.fail("final read differs from the model");
  }
  const uint64_t unexpected = a.vol().failed_mask() & ~sh.faults_armed_mask;
  if (!sh.failed && unexpected) sh.fail("members failed without a fault: mask " + std::to_string(unexpected));
  if (sh.failed) {
    fprintf(stderr, "MODEL FAILURE: %s\n  episode: %s\n  replay: model_test --seed %llu --episode ...\n",
            sh.failure.c_str(), describe(e).c_str(), (unsigned long long)seed);
    return false;
  }
  printf("  %-48s ops=%-7llu faults=%u failed_mask=0x%llx rmw=%llu rcw=%llu full=%llu degraded_w=%llu degraded_r=%llu merged=%llu\n",
         describe(e).c_str(), (unsigned long long)sh.ops_done.load(), sh.faults_armed,
         (unsigned long long)a.vol().failed_mask(), (unsigned long long)a.vol().stats().rmw_writes.load(),
         (unsigned long long)a.vol().stats().rcw_writes.load(), (unsigned long long)a.vol().stats().full_stripe_writes.load(),
         (unsigned long long)a.vol().stats().degraded_writes.load(), (unsigned long long)a.vol().stats().degraded_reads.load(),
         (unsigned long long)a.vol().stats().merged_writes.load());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t total_ops = 200000, seed = 1;
  double seconds = 0;
  int only = -1;
  std::string parity = "cpu";
  static option opts[] = {{"ops", required_argument, nullptr, 'o'},     {"seconds", required_argument, nullptr, 's'},
                          {"seed", required_argument, nullptr, 'r'},    {"episode", required_argument, nullptr, 'e'},
                          {"parity", required_argument, nullptr, 'p'},  {nullptr, 0, nullptr, 0}};
  for (int c; (c = getopt_long(argc, argv, "", opts, nullptr)) != -1;) {
    switch (c) {
      case 'o': total_ops = strtoull(optarg, nullptr, 10); break;
      case 's': seconds = atof(optarg); break;
      case 'r': seed = strtoull(optarg, nullptr, 10); break;
      case 'e': only = atoi(optarg); break;
      case 'p': parity = optarg; break;
      default:
        fprintf(stderr, "usage: model_test [--ops N] [--seconds S] [--seed X] [--episode E] [--parity cpu|reference|kernel-cpu]\n");
        return 2;
    }
  }
#ifndef GPURAID_HAVE_KERNEL_CPU
  if (parity == "kernel-cpu") {
    fprintf(stderr, "this build has no kernel-cpu backend\n");
    return 2;
  }
#endif
  const auto eps = episodes();
  const uint64_t per_episode = std::max<uint64_t>(2000, total_ops / eps.size());
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t done = 0, passed = 0, failed = 0;
  printf("model test: seed %llu, %llu ops per episode, parity backend %s%s\n", (unsigned long long)seed,
         (unsigned long long)per_episode, parity.c_str(), seconds > 0 ? ", time-bounded" : "");
  for (uint64_t round = 0;; round++) {
    for (size_t i = 0; i < eps.size(); i++) {
      if (only >= 0 && size_t(only) != i) continue;
      const uint64_t s = seed + round * 1000 + i;
      if (run_episode(eps[i], s, per_episode, parity)) passed++;
      else failed++;
      done += per_episode;
    }
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (failed || seconds <= 0 || el >= seconds) break;
  }
  double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printf("model test: %llu ops in %.1f s\n", (unsigned long long)done, el);
  printf("%llu passed, %llu failed\n", (unsigned long long)passed, (unsigned long long)failed);
  return failed ? 1 : 0;
}
