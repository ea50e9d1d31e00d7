// What gpuraid-bench's modes share: options, one measured run of a
// workload against a target on every reactor thread, filling a volume
// once, and reporting.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/cpu_usage.h"
#include "bench/load_generator.h"
#include "engine/engine.h"
#include "engine/io/drive_throttle.h"
#include "engine/parity/accelerator_options.h"
#include "engine/volume.h"

namespace gpuraid::bench {

struct Options {
  std::string level = "5", strip = "64K", drive_type = "mem", drive_size = "256M", rw = "randread", bs = "4K";
  std::string parity_backend = "cpu", state = "normal", rebuild_rate = "0", rebuild_min = "0";
  std::vector<std::string> drives;
  // Throttled drives (engine/io/drive_throttle.h): "" = no cap. --drive-bw
  // and --drive-iops set both directions; --drive-read-*/--drive-write-* one.
  std::string drive_bw, drive_read_bw, drive_write_bw, drive_iops, drive_read_iops, drive_write_iops;
  DriveLimits limits;  // parsed from those
  uint32_t data = 0, spares = 0;  // draid5/6: --data, --spares
  uint32_t members = 4, parity = 0, rwmixread = 70, iodepth = 32, threads = 1, fail = 0, runs = 1;
  uint64_t rate_iops = 0;
  uint32_t write_gather_us = EngineConfig{}.write_gather_us;
  std::string rebuild_run = "1M";
  double runtime = 10, warmup = -1;
  bool raw = false, compare = false, as_json = false, force = false, no_fill = false;
  bool guard_compare = false;  // RAID as a group writes, and with neither guard nor bitmap, alternating
  // What a drive group does, by default: the write-hole guard (parity
  // levels) and the write-intent bitmap (bench_write_intent.h) on;
  // --no-write-hole-guard / --no-write-intent measure without them.
  bool write_hole_guard = true;
  bool write_intent = true;
  AcceleratorWords gpu;       // --gpu-*: settings of the cuda and kernel-cpu backends
  uint64_t seed = 1;
};

struct RunResult {
  std::string target;
  double seconds = 0, iops = 0, mbps = 0, p50_us = 0, p99_us = 0, p999_us = 0, mean_us = 0;
  uint64_t errors = 0;
  CpuUsage cpu;
  double iops_per_cpu() const { return cpu.proc_pct > 0 ? iops / cpu.proc_pct : 0; }
};

// at_start/at_end run on the calling thread at the measured window's edges;
// stop_early, asked every 10 ms on the calling thread, ends the window before
// its runtime (the rebuilding mode ends it when the rebuild ends).
RunResult run_once(Engine& e, Target& t, const Workload& w, const Options& o, uint64_t seed,
                   const std::function<void()>& at_start = {}, const std::function<void()>& at_end = {},
                   const std::function<bool()>& stop_early = {});
// One unmeasured run of the workload, so that no side's first measured run
// pays alone for first touches (right after the fill the raw baseline ran at
// 310k IOPS on its first run and 375k later): every target is warmed alike.
void warm_up(Engine& e, Target& t, const Workload& w, const Options& o, uint64_t seed);
// Writes the whole volume once (full stripes) on reactor 0 from this thread.
void fill(Engine& e, Volume& v);
nlohmann::json to_json(const RunResult& r);
// Fills o->limits from --drive-bw and friends; false with *why on bad input.
// Bandwidth in bytes/s with binary units (2G = 2 GiB/s); IOPS decimal (500k).
bool parse_drive_limits(Options* o, std::string* why);
// {"read_bytes_s": ..., ...}, or null when no drive is throttled.
nlohmann::json limits_json(const DriveLimits& l);
const RunResult& median(std::vector<RunResult>& v);
double cov(const std::vector<RunResult>& v);
void print_header();
void print_row(const RunResult& r);

}  // namespace gpuraid::bench
