#include "engine/engine.h"

namespace gpuraid {

std::unique_ptr<Engine> Engine::create(const EngineConfig& cfg, std::string* err) {
  if (cfg.reactors == 0 || cfg.reactors > 256) {
    *err = "reactor count must be 1..256";
    return nullptr;
  }
  if (cfg.ops_per_reactor < 32) {
    *err = "ops per reactor must be at least 32";
    return nullptr;
  }
  auto e = std::make_unique<Engine>();
  try {
    for (uint32_t i = 0; i < cfg.reactors; i++) {
      auto parity = cfg.parity_factory ? cfg.parity_factory() : make_cpu_backend();
      if (!parity) {
        *err = "the parity backend could not be created";
        return nullptr;
      }
      e->reactors_.push_back(std::make_unique<Reactor>(i, cfg.arena_bytes, std::move(parity),
                                                       cfg.ring_entries, cfg.max_drives, cfg.nvme_passthru));
      e->reactors_.back()->set_lockstep(cfg.lockstep);
    }
    // Every ring registers every arena, so a buffer from any reactor's pool
    // is a fixed buffer wherever its I/O is issued.
    std::vector<iovec> arenas;
    for (auto& r : e->reactors_) arenas.push_back({r->pool().base(), r->pool().size()});
    for (auto& r : e->reactors_) r->register_arenas(arenas);
  } catch (const std::exception& ex) {
    *err = ex.what();
    return nullptr;
  }
  e->slots_.assign(cfg.max_drives, nullptr);
  e->nvme_passthru_ = cfg.nvme_passthru;
  e->ops_per_reactor_ = cfg.ops_per_reactor;
  e->write_gather_ns_ = uint64_t(cfg.write_gather_us) * 1000;
  e->rebuild_run_bytes_ = std::max<uint32_t>(cfg.rebuild_run_bytes, 4096);
  return e;
}

int Engine::attach(Drive* d, std::string* err) {
  std::lock_guard<std::mutex> g(mu_);
  if (d->type() == DriveType::NvmeChar && !nvme_passthru_) {
    *err = d->path() + " is an NVMe passthrough device: the engine must be started with NVMe passthrough";
    return -1;
  }
  for (size_t s = 0; s < slots_.size(); s++) {
    if (slots_[s]) continue;
    if (d->fd() >= 0)
      for (auto& r : reactors_)
        if (!r->set_file(uint32_t(s), d->fd())) {
          *err = "cannot register " + d->path() + " with io_uring";
          return -1;
        }
    for (auto& r : reactors_) r->reset_drive_counters(uint32_t(s));
    slots_[s] = d;
    return int(s);
  }
  *err = "no free drive slot";
  return -1;
}

ParityCounters Engine::parity_counters() {
  ParityCounters c;
  for (auto& r : reactors_) c += r->parity().counters();
  return c;
}

DriveTotals Engine::drive_totals(const Drive* d) {
  DriveTotals t;
  std::lock_guard<std::mutex> g(mu_);
  for (size_t s = 0; s < slots_.size(); s++) {
    if (slots_[s] != d) continue;
    for (auto& r : reactors_) {
      const DriveCounters& c = r->drive_counters(uint32_t(s));
      t.reads += c.reads.load(std::memory_order_relaxed);
      t.writes += c.writes.load(std::memory_order_relaxed);
      t.bytes_read += c.bytes_read.load(std::memory_order_relaxed);
      t.bytes_written += c.bytes_written.load(std::memory_order_relaxed);
      t.errors += c.errors.load(std::memory_order_relaxed);
      for (size_t op = 0; op < kMemberOps; op++) {
        for (size_t b = 0; b < kLatencyBuckets; b++)
          t.latency[op].buckets[b] += c.latency[op].buckets[b].load(std::memory_order_relaxed);
        t.latency[op].sum_ns += c.latency[op].sum_ns.load(std::memory_order_relaxed);
      }
    }
  }
  return t;
}

void Engine::detach(int slot) {
  std::lock_guard<std::mutex> g(mu_);
  if (slot < 0 || size_t(slot) >= slots_.size()) return;
  int none = -1;
  for (auto& r : reactors_) r->set_file(uint32_t(slot), none);
  slots_[size_t(slot)] = nullptr;
}

}  // namespace gpuraid
