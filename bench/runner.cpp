#include "bench/runner.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <memory>
#include <thread>

#include "engine/units.h"

namespace gpuraid::bench {

using json = nlohmann::json;


RunResult run_once(Engine& e, Target& t, const Workload& w, const Options& o, uint64_t seed,
                   const std::function<void()>& at_start, const std::function<void()>& at_end,
                   const std::function<bool()>& stop_early) {
  std::vector<std::unique_ptr<LoadGenerator>> gens;
  for (uint32_t i = 0; i < o.threads; i++)
    gens.push_back(std::make_unique<LoadGenerator>(t, e.reactor(i), w, i, o.threads, seed));
  RunClock clock;
  clock.running = uint32_t(gens.size());
  std::vector<std::thread> th;
  for (auto& g : gens) th.emplace_back([&g, &clock] { g->run(clock); });
  const double warmup = o.warmup >= 0 ? o.warmup : std::min(2.0, o.runtime * 0.2);
  std::this_thread::sleep_for(std::chrono::duration<double>(warmup));
  if (at_start) at_start();
  CpuSample c0 = CpuSample::now();
  const uint64_t t0 = now_ns();
  clock.start_ns = t0;
  const uint64_t until = t0 + uint64_t(o.runtime * 1e9);
  for (uint64_t t = t0; t < until; t = now_ns()) {
    if (stop_early && stop_early()) break;
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<uint64_t>(until - t, 10'000'000)));
  }
  const uint64_t t1 = now_ns();
  CpuSample c1 = CpuSample::now();
  clock.end_ns = t1;
  if (at_end) at_end();
  for (auto& x : th) x.join();
  RunResult r;
  r.target = t.name();
  r.seconds = double(t1 - t0) / 1e9;
  LatencyHistogram lat;
  uint64_t ops = 0, bytes = 0;
  for (auto& g : gens) {
    ops += g->result().ops;
    bytes += g->result().bytes;
    r.errors += g->result().errors;
    lat.merge(g->result().lat);
  }
  r.iops = double(ops) / r.seconds;
  r.mbps = double(bytes) / r.seconds / 1e6;
  r.p50_us = double(lat.percentile_ns(50)) / 1e3;
  r.p99_us = double(lat.percentile_ns(99)) / 1e3;
  r.p999_us = double(lat.percentile_ns(99.9)) / 1e3;
  r.mean_us = lat.mean_ns() / 1e3;
  r.cpu = CpuUsage::between(c0, c1, r.seconds);
  return r;
}

void warm_up(Engine& e, Target& t, const Workload& w, const Options& o, uint64_t seed) {
  Options q = o;
  q.runtime = std::max(0.5, o.warmup >= 0 ? o.warmup : std::min(2.0, o.runtime * 0.2));
  q.warmup = 0;
  run_once(e, t, w, q, seed);
}

// Writes the whole volume once (full stripes), so reads see real data and
// parity is consistent before anything is measured.
void fill(Engine& e, Volume& v) {
  Reactor& r = e.reactor(0);
  const uint64_t sdb = v.geometry().stripe_data_bytes();
  const uint64_t chunk = std::max<uint64_t>(sdb, (4u << 20) / sdb * sdb);
  constexpr int kDepth = 4;
  struct Slot {
    IoRequest req;
    std::unique_ptr<uint8_t, decltype(&free)> mem{nullptr, &free};  // O_DIRECT wants 4 KiB alignment
    bool busy = false;
    bool failed = false;
  } slots[kDepth];
  for (int i = 0; i < kDepth; i++) {
    slots[i].mem.reset(static_cast<uint8_t*>(aligned_alloc(4096, chunk)));
    for (uint64_t j = 0; j < chunk; j++) slots[i].mem.get()[j] = uint8_t(j * 131 + uint64_t(i));
  }
  uint64_t next = 0;
  int busy = 0;
  while (next < v.size_bytes() || busy) {
    for (auto& s : slots) {
      if (s.busy || next >= v.size_bytes()) continue;
      s.req = IoRequest{};
      s.req.op = IoRequest::Write;
      s.req.offset = next;
      s.req.length = std::min(chunk, v.size_bytes() - next);
      s.req.buf = s.mem.get();
      s.req.ctx = &s;
      s.req.done = [](IoRequest* q) {
        auto* sl = static_cast<Slot*>(q->ctx);
        sl->busy = false;
        sl->failed |= q->result != 0;
      };
      if (v.submit(r, &s.req) != 0) throw std::runtime_error("fill refused");
      s.busy = true;
      next += s.req.length;
    }
    r.poll(true, 1);  // blocks until a completion: io-wq workers need the core
    busy = 0;
    for (auto& s : slots) {
      busy += s.busy;
      if (s.failed) throw std::runtime_error("filling the drives failed");
    }
  }
}

json to_json(const RunResult& r) {
  return {{"target", r.target},       {"seconds", r.seconds},   {"iops", r.iops},
          {"mbps", r.mbps},           {"lat_p50_us", r.p50_us}, {"lat_p99_us", r.p99_us},
          {"lat_p999_us", r.p999_us}, {"lat_mean_us", r.mean_us}, {"errors", r.errors},
          {"cpu_usr_s", r.cpu.usr_s}, {"cpu_sys_s", r.cpu.sys_s}, {"cpu_pct", r.cpu.proc_pct},
          {"machine_cpu_pct", r.cpu.machine_pct}, {"iops_per_cpu_pct", r.iops_per_cpu()}};
}

const RunResult& median(std::vector<RunResult>& v) {
  std::sort(v.begin(), v.end(), [](const RunResult& a, const RunResult& b) { return a.iops < b.iops; });
  return v[v.size() / 2];
}

namespace {
bool parse_iops(const std::string& s, uint64_t* out) {
  if (s.empty() || !isdigit(static_cast<unsigned char>(s[0]))) return false;
  size_t used = 0;
  const double v = std::stod(s, &used);
  const std::string unit = s.substr(used);
  const double mult = unit.empty() ? 1 : unit == "k" || unit == "K" ? 1e3 : unit == "m" || unit == "M" ? 1e6 : 0;
  if (mult == 0 || v * mult < 1 || v * mult > 1e12) return false;
  *out = uint64_t(v * mult);
  return true;
}
}  // namespace

bool parse_drive_limits(Options* o, std::string* why) {
  struct Cap {
    const char* flag;
    const std::string* text;
    bool iops;
    uint64_t* dst[2];
  };
  DriveLimits& l = o->limits;
  l = DriveLimits{};
  // Both directions first, then the one-direction flags over them.
  const Cap caps[] = {{"--drive-bw", &o->drive_bw, false, {&l.read_bytes_s, &l.write_bytes_s}},
                      {"--drive-iops", &o->drive_iops, true, {&l.read_iops, &l.write_iops}},
                      {"--drive-read-bw", &o->drive_read_bw, false, {&l.read_bytes_s, nullptr}},
                      {"--drive-write-bw", &o->drive_write_bw, false, {&l.write_bytes_s, nullptr}},
                      {"--drive-read-iops", &o->drive_read_iops, true, {&l.read_iops, nullptr}},
                      {"--drive-write-iops", &o->drive_write_iops, true, {&l.write_iops, nullptr}}};
  for (const Cap& c : caps) {
    if (c.text->empty()) continue;
    uint64_t v = 0;
    const bool ok = c.iops ? parse_iops(*c.text, &v) : parse_size(*c.text, &v) && v >= 4096;
    if (!ok)
      return *why = std::string(c.flag) + " '" + *c.text + "': " +
                    (c.iops ? "a count such as 500k" : "bytes per second, at least 4K, such as 2G"),
             false;
    for (uint64_t* d : c.dst)
      if (d) *d = v;
  }
  return true;
}

nlohmann::json limits_json(const DriveLimits& l) {
  if (!l.any()) return nullptr;
  return {{"read_bytes_s", l.read_bytes_s}, {"write_bytes_s", l.write_bytes_s}, {"read_iops", l.read_iops},
          {"write_iops", l.write_iops}};
}

double cov(const std::vector<RunResult>& v) {
  if (v.size() < 2) return 0;
  double m = 0, s = 0;
  for (auto& r : v) m += r.iops;
  m /= double(v.size());
  for (auto& r : v) s += (r.iops - m) * (r.iops - m);
  return m > 0 ? std::sqrt(s / double(v.size() - 1)) / m : 0;
}

void print_row(const RunResult& r) {
  printf("%-6s %12.0f %10.1f %8.1f %8.1f %9.1f %7.2f %7.2f %7.1f %11.0f\n", r.target.c_str(), r.iops, r.mbps, r.p50_us,
         r.p99_us, r.p999_us, r.cpu.usr_s, r.cpu.sys_s, r.cpu.proc_pct, r.iops_per_cpu());
}


void print_header() {
  printf("%-6s %12s %10s %8s %8s %9s %7s %7s %7s %11s\n", "target", "IOPS", "MB/s", "p50us", "p99us", "p99.9us",
         "usr_s", "sys_s", "CPU%", "IOPS/CPU%");
}

}  // namespace gpuraid::bench
